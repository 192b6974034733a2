/* SPDX-License-Identifier: MIT */
/*
 * Provisional copy of the engine contract (ENGINE-CONTRACT.md) used only to
 * build the server against the scripted test engine (fake_engine.c) until
 * userspace/llm/engine.h lands; the real header replaces it.
 */
#ifndef RK_LLM_ENGINE_H
#define RK_LLM_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct llm_model;
struct rk_card;
struct engine;
struct engine_req;

struct engine_opts {
	int n_slots;
	uint32_t n_ctx;
	uint32_t bucket;
	int queue_max;
	int verbose;
};

struct engine_sampling {
	float temperature;
	float top_p;
	int top_k;
	uint64_t seed;
	bool have_seed;
	int n_probs;
	bool logprobs;
};

struct engine_event;
typedef void (*engine_event_fn)(const struct engine_event *ev, void *user);

struct engine_request {
	const int32_t *prompt;
	int n_prompt;
	int max_tokens;
	struct engine_sampling s;
	const char *const *stop;
	int n_stop;
	bool ignore_eos;
	engine_event_fn cb;
	void *user;
};

enum engine_finish { ENGINE_FINISH_STOP, ENGINE_FINISH_LENGTH, ENGINE_FINISH_CANCELLED,
		     ENGINE_FINISH_ERROR };

struct engine_usage { int prompt_tokens, completion_tokens, cached_tokens; };
struct engine_timing { double queued_ms, ttft_ms, total_ms; };

enum engine_event_kind { ENGINE_EV_TEXT, ENGINE_EV_DONE };

struct engine_event {
	enum engine_event_kind kind;
	const char *text;
	size_t len;
	const int32_t *ids;
	int n_ids;
	enum engine_finish finish;
	struct engine_usage usage;
	struct engine_timing timing;
	const char *error;
};

#define ENGINE_MAX_CARDS 8
struct engine_stats {
	int active, queued, n_slots;
	uint64_t prefix_hits, prefix_misses;
	uint64_t prompt_tokens, generated_tokens, cached_tokens;
	int n_cards;
	double card_busy[ENGINE_MAX_CARDS];
};

int engine_create(struct engine **e, const struct llm_model *m, struct rk_card *cards,
		  int n_cards, const struct engine_opts *o, char *err, size_t errlen);
void engine_destroy(struct engine *e);
int engine_submit(struct engine *e, const struct engine_request *r, struct engine_req **out);
void engine_cancel(struct engine_req *q);
void engine_req_put(struct engine_req *q);
void engine_get_stats(struct engine *e, struct engine_stats *st);

#endif
