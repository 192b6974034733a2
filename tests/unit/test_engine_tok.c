// SPDX-License-Identifier: MIT
/*
 * The engine's use of the tokenizer (issue 8 part 7), on 2 mock cards
 * (tests/lib/mock_rk.c) with stories260K and copies of it whose
 * vocabulary we change (the weights stay, so the greedy ids stay):
 *  - generation stops at an end-of-generation token that is not EOS by id
 *    (a control token "<|im_end|>", as Qwen's turns end) and at EOS, and
 *    --ignore-eos (engine_request.ignore_eos) goes on past both;
 *  - a token whose piece is 600 bytes long reaches the text whole (the
 *    engine used to cut pieces at its fixed 512-byte buffer; run's 256).
 * Model: $RK1828_MODEL or ../shared/models/stories260K.gguf. Output: TAP.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "gguf.h"
#include "gguf_write.h"
#include "mock_rk.h"
#include "model.h"
#include "tap.h"
#include "tokenizer.h"

static struct rk_card cards[MOCK_CARDS];

struct out {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool done;
	char text[8192];
	size_t len;
	int32_t ids[64];
	int n_ids;
	struct engine_event last;
};

static void on_event(const struct engine_event *ev, void *user)
{
	struct out *o = user;
	int i;

	pthread_mutex_lock(&o->mu);
	if (o->len + ev->len < sizeof(o->text)) {
		memcpy(o->text + o->len, ev->text, ev->len);
		o->len += ev->len;
	}
	for (i = 0; i < ev->n_ids && o->n_ids < 64; i++)
		o->ids[o->n_ids++] = ev->ids[i];
	if (ev->kind == ENGINE_EV_DONE) {
		o->last = *ev;
		o->done = true;
		pthread_cond_signal(&o->cv);
	}
	pthread_mutex_unlock(&o->mu);
}

/* Greedy run of "Once upon a time" for @n tokens with the model at @path. */
static int run(const char *path, int n, bool ignore_eos, struct out *o)
{
	struct engine_opts eo = { .n_slots = 1, .n_ctx = 128, .bucket = 8, .queue_max = -1,
				  .strict_slots = true };
	struct engine_request rq = { 0 };
	struct engine_req *q = NULL;
	struct engine *e = NULL;
	struct llm_model m = { 0 };
	struct tokenizer *t = NULL;
	struct gguf_file *gf;
	int32_t toks[32];
	char err[512];
	int ret = -1;

	memset(o, 0, sizeof(*o));
	pthread_mutex_init(&o->mu, NULL);
	pthread_cond_init(&o->cv, NULL);
	gf = gguf_open(path, err, sizeof(err));
	if (!gf || llm_model_load(&m, gf, err, sizeof(err)) || !(t = tok_load(gf, err, sizeof(err))))
		goto out;
	mock_rk_reset();
	if (engine_create(&e, &m, t, cards, NULL, 2, &eo, err, sizeof(err)))
		goto out;
	rq.n_prompt = tok_encode(t, "Once upon a time", true, toks, 32);
	rq.prompt = toks;
	rq.max_tokens = n;
	rq.s.top_p = 1.0f;
	rq.ignore_eos = ignore_eos;
	rq.cb = on_event;
	rq.user = o;
	if (engine_submit(e, &rq, &q, err, sizeof(err)))
		goto out;
	pthread_mutex_lock(&o->mu);
	while (!o->done)
		pthread_cond_wait(&o->cv, &o->mu);
	pthread_mutex_unlock(&o->mu);
	ret = 0;
out:
	if (ret)
		printf("# %s: %s\n", path, err);
	engine_req_put(q);
	engine_destroy(e);
	tok_free(t);
	llm_model_free(&m);
	gguf_close(gf);
	return ret;
}

/*
 * Copy @src to @dst with token @id's text replaced by @text (type @type,
 * 0 = keep) and the EOS id set to @eos (-1 = keep).
 */
static int rewrite(const char *src, const char *dst, int32_t id, const char *text, int type,
		   int32_t eos)
{
	char err[512];
	struct gguf_file *f = gguf_open(src, err, sizeof(err));
	struct gguf_writer *w = gguf_writer_new();
	char **toks = NULL;
	int32_t *types = NULL;
	uint64_t i;
	int ret = -1;

	if (!f || !w)
		goto out;
	for (i = 0; i < f->n_kv; i++) {
		const struct gguf_kv *kv = &f->kv[i];
		char key[256];

		snprintf(key, sizeof(key), "%.*s", (int)kv->key.len, kv->key.s);
		if (!strcmp(key, "tokenizer.ggml.tokens")) {
			toks = calloc(kv->arr_n, sizeof(*toks));
			for (uint64_t k = 0; toks && k < kv->arr_n; k++) {
				struct gguf_str s;

				gguf_arr_str(kv, k, &s);
				toks[k] = (int64_t)k == id ? strdup(text) : strndup(s.s, s.len);
			}
			gguf_writer_add_str_arr(w, key, (const char *const *)toks, kv->arr_n);
		} else if (!strcmp(key, "tokenizer.ggml.token_type") && type) {
			types = calloc(kv->arr_n, sizeof(*types));
			for (uint64_t k = 0; types && k < kv->arr_n; k++) {
				int64_t v;

				gguf_arr_i64(kv, k, &v);
				types[k] = (int64_t)k == id ? type : (int32_t)v;
			}
			gguf_writer_add_i32_arr(w, key, types, kv->arr_n);
		} else if (!strcmp(key, "tokenizer.ggml.eos_token_id") && eos >= 0) {
			gguf_writer_add_u32(w, key, (uint32_t)eos);
		} else if (strcmp(key, "general.alignment")) {
			gguf_writer_copy_kv(w, kv);
		}
	}
	for (i = 0; i < f->n_tensors; i++) {
		const struct gguf_tensor *t = &f->tensors[i];
		char name[256];

		snprintf(name, sizeof(name), "%.*s", (int)t->name.len, t->name.s);
		gguf_writer_add_tensor(w, name, t->n_dims, t->ne, t->type, t->data, t->nbytes);
	}
	ret = gguf_writer_write_file(w, dst, err, sizeof(err));
	if (ret)
		printf("# %s: %s\n", dst, err);
out:
	if (toks) {
		const struct gguf_kv *kv = gguf_find_kv(f, "tokenizer.ggml.tokens");

		for (i = 0; i < kv->arr_n; i++)
			free(toks[i]);
	}
	free(toks);
	free(types);
	gguf_writer_free(w);
	gguf_close(f);
	return ret;
}

int main(void)
{
	const char *model = getenv("RK1828_MODEL");
	char path[] = "/tmp/rk1828-etok-XXXXXX", piece[601];
	struct out base, o;
	int fd, i;
	bool ok;

	if (!model)
		model = "../shared/models/stories260K.gguf";
	mock_rk_cards(cards);
	fd = mkstemp(path);
	if (fd >= 0)
		close(fd);
	ok = !run(model, 8, false, &base) && base.n_ids == 8 && base.len > 0;
	tap_ok(ok, "stories260K: 8 greedy tokens (%d)", base.n_ids);

	/* The third generated token becomes a control "<|im_end|>": the end of a turn. */
	ok = !rewrite(model, path, base.ids[2], "<|im_end|>", 3, -1) && !run(path, 8, false, &o);
	tap_ok(ok && o.last.finish == ENGINE_FINISH_STOP && o.n_ids == 2 &&
	       !memcmp(o.ids, base.ids, 2 * sizeof(*o.ids)),
	       "a control <|im_end|> ends generation before it (%d tokens, finish %d)", o.n_ids,
	       o.last.finish);
	ok = !run(path, 8, true, &o);
	tap_ok(ok && o.n_ids == 8 && o.ids[2] == base.ids[2] && o.last.finish == ENGINE_FINISH_LENGTH,
	       "ignore_eos goes past it: %d tokens, finish %d (length)", o.n_ids, o.last.finish);

	/* EOS itself is the first generated token. */
	ok = !rewrite(model, path, -1, "", 0, base.ids[0]) && !run(path, 8, false, &o);
	tap_ok(ok && o.n_ids == 0 && o.last.finish == ENGINE_FINISH_STOP && o.len == 0,
	       "EOS as the first token: %d generated, finish %d (stop)", o.n_ids, o.last.finish);
	ok = !run(path, 8, true, &o);
	tap_ok(ok && o.n_ids == 8 && o.ids[0] == base.ids[0], "ignore_eos past EOS: %d tokens",
	       o.n_ids);

	/* A 600-byte piece (longer than the engine's old 512-byte buffer). */
	for (i = 0; i < 600; i++)
		piece[i] = (char)('a' + i % 26);
	piece[600] = '\0';
	ok = !rewrite(model, path, base.ids[1], piece, 0, -1) && !run(path, 8, false, &o);
	tap_ok(ok && o.n_ids == 8 && memmem(o.text, o.len, piece, 600) != NULL,
	       "a 600-byte piece reaches the text whole (%zu bytes of text)", o.len);
	unlink(path);
	mock_rk_free();
	return tap_done();
}
