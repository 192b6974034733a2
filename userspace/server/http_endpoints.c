// SPDX-License-Identifier: MIT
/*
 * The endpoints that answer at once (no engine request): health, models,
 * metrics, the web UI, llama-server's utility endpoints, the stored
 * responses.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "http_req.h"
#include "metrics.h"
#include "resp_store.h"
#include "ui.h"
#include "utility.h"

static json_t *error_obj_of(const struct api_error *e)
{
	size_t len;
	char *txt = api_error_json(e, &len);
	json_t *o = txt ? json_loads(txt, 0, NULL) : NULL;

	free(txt);
	return o ? o : json_object();
}

enum MHD_Result ep_health(struct srv *s, struct MHD_Connection *c, struct hreq *h)
{
	int st = atomic_load(&s->state);
	double prog = atomic_load(&s->load_permille) / 1000.0;
	struct api_error e;
	char what[64];
	json_t *o;

	if (st == SRV_READY) {
		struct engine_stats es;

		es.failed = false;
		if (s->e)
			engine_get_stats(s->e, &es);
		if (!es.failed)
			return http_reply_json(c, h, 200, json_pack("{s:s}", "status", "ok"));
		/* The cards are gone: a load balancer must stop sending here. */
		api_error_set(&e, 503, "server_error", "engine_failed", NULL,
			      "the engine stopped after a card failure: %s", es.failure);
		o = error_obj_of(&e);
		json_object_set_new(o, "status", json_string("error"));
		return http_reply_json(c, h, 503, o);
	}
	pthread_mutex_lock(&s->lock);
	snprintf(what, sizeof(what), "%s", s->load_what);
	pthread_mutex_unlock(&s->lock);
	if (st == SRV_LOADING)
		api_error_set(&e, 503, "unavailable_error", "model_loading", NULL,
			      "loading the model: %s (%.0f%%)", what, prog * 100);
	else if (st == SRV_DRAINING)
		api_error_set(&e, 503, "unavailable_error", "draining", NULL, "%s", DRAINING_MSG);
	else
		api_error_set(&e, 503, "unavailable_error", "shutting_down", NULL,
			      "the server is shutting down");
	o = error_obj_of(&e);
	json_object_set_new(o, "status", json_string(st == SRV_LOADING ? "loading" :
						     st == SRV_DRAINING ? "draining" : "stopping"));
	if (st == SRV_LOADING) {
		json_object_set_new(o, "progress", json_real(prog));
		json_object_set_new(o, "stage", json_string(what));
	}
	return http_reply_json(c, h, 503, o);
}

static json_t *model_json(struct srv *s, const char *id)
{
	json_t *cards = json_array();
	char *save = NULL, buf[sizeof(s->cards_desc)], *t;

	snprintf(buf, sizeof(buf), "%s", s->cards_desc);
	for (t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
		json_array_append_new(cards, json_string(t));
	return json_pack("{s:s, s:s, s:I, s:s, s:o, s:s, s:i, s:i, s:i, s:s}",
			 "id", id ? id : s->model_id,
			 "object", "model", "created", (json_int_t)s->t_start, "owned_by", "rk1828",
			 "cards", cards, "plan", s->plan, "ctx", (int)s->n_ctx, "queue", s->o.queue_max,
			 "parallel", s->n_slots, "kv_type", quant_kv_type_name(s->kv_type));
}

enum MHD_Result ep_models(struct srv *s, struct MHD_Connection *c, struct hreq *h)
{
	return http_reply_json(c, h, 200, json_pack("{s:s, s:[o]}", "object", "list", "data",
						    model_json(s, NULL)));
}

/* GET /v1/models/{id}: one model is loaded; any other id is OpenAI's 404 model_not_found. */
enum MHD_Result ep_model(struct srv *s, struct MHD_Connection *c, struct hreq *h)
{
	const char *id = h->url + h->rest;

	if (strcmp(id, s->model_id))
		return http_fail(c, h, 404, "invalid_request_error", "model_not_found",
				 "the model '%s' does not exist (this server has one model: "
				 "see GET /v1/models)", id);
	return http_reply_json(c, h, 200, model_json(s, id));
}

enum MHD_Result ep_metrics(struct srv *s, struct MHD_Connection *c, struct hreq *h)
{
	size_t len;
	char *txt = metrics_render(s, &len);
	enum MHD_Result ret;

	if (!txt)
		return MHD_NO;
	ret = http_reply(c, h, 200, "text/plain; version=0.0.4; charset=utf-8", txt, len);
	free(txt);
	return ret;
}

enum MHD_Result ep_ui(struct srv *s, struct MHD_Connection *c, struct hreq *h)
{
	const char *mime;
	size_t len = 0;
	const char *data = ui_find(h->url, &len, &mime);

	return http_reply(c, h, 200, mime, data, len);
}

/* llama-server's utility endpoints (utility.c): POST /tokenize. */
enum MHD_Result ep_tokenize(struct srv *s, struct MHD_Connection *c, struct hreq *h)
{
	struct api_error e;
	enum MHD_Result r;
	size_t len;
	char *text;

	if (util_tokenize(s, h->body ? h->body : "", h->len, &text, &len, &e))
		return http_reply_error(c, h, &e);
	r = http_reply(c, h, 200, "application/json", text, len);
	free(text);
	return r;
}

/* The answer of a utility endpoint that returned @ret with @out or @e. */
static enum MHD_Result util_reply(struct MHD_Connection *c, struct hreq *h, int ret, json_t *out,
				  struct api_error *e)
{
	if (ret)
		return http_reply_error(c, h, e);
	return http_reply_json(c, h, 200, out);
}

/* POST /detokenize. */
enum MHD_Result ep_detokenize(struct srv *s, struct MHD_Connection *c, struct hreq *h)
{
	struct api_error e;
	json_t *out = NULL;
	int ret = util_detokenize(s, h->body ? h->body : "", h->len, &out, &e);

	return util_reply(c, h, ret, out, &e);
}

/* POST /apply-template. */
enum MHD_Result ep_apply_template(struct srv *s, struct MHD_Connection *c, struct hreq *h)
{
	struct api_error e;
	json_t *out = NULL;
	int ret = util_apply_template(s, h->body ? h->body : "", h->len, &out, &e);

	return util_reply(c, h, ret, out, &e);
}

/* GET /props. */
enum MHD_Result ep_props(struct srv *s, struct MHD_Connection *c, struct hreq *h)
{
	json_t *out = util_props(s);
	struct api_error e;

	if (out)
		return http_reply_json(c, h, 200, out);
	api_error_set(&e, 500, "server_error", NULL, NULL, "out of memory");
	return http_reply_error(c, h, &e);
}

/* A response not in the store (store false, deleted, evicted, another API key's). */
static enum MHD_Result response_not_found(struct MHD_Connection *c, struct hreq *h,
					  const char *id)
{
	return http_fail(c, h, 404, "invalid_request_error", "not_found",
			 "Response with id '%s' not found: it was not stored (store false), was deleted, or was evicted from the server's store",
			 id);
}

/* GET /v1/responses/{id}: a stored response as the create call answered it. */
enum MHD_Result ep_response_get(struct srv *s, struct MHD_Connection *c, struct hreq *h)
{
	const char *id = h->url + h->rest;
	json_t *o = rstore_get(s->store, h->owner ? h->owner : "", id, time(NULL));

	if (o)
		return http_reply_json(c, h, 200, o);
	return response_not_found(c, h, id);
}

/* DELETE /v1/responses/{id}: drop it ({id, object: "response", deleted: true}). */
enum MHD_Result ep_response_delete(struct srv *s, struct MHD_Connection *c,
				   struct hreq *h)
{
	const char *id = h->url + h->rest;

	if (rstore_del(s->store, h->owner ? h->owner : "", id, time(NULL)))
		return http_reply_json(c, h, 200, json_pack("{s:s, s:s, s:b}", "id", id, "object",
							    "response", "deleted", true));
	return response_not_found(c, h, id);
}
