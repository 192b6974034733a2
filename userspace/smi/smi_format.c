// SPDX-License-Identifier: MIT
/*
 * rk1828-smi's table, JSON and event lines (smi_format.h).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rk1828/util.h"
#include "smi_format.h"

double smi_busy_percent(const struct smi_card *prev, const struct smi_card *cur)
{
	const struct smi_queue *qp, *qc;
	double pct;

	if (!prev || !(prev->has & cur->has & SMI_HAS_UPTIME) || prev->serial != cur->serial ||
	    prev->index != cur->index)
		return -1;
	qp = &prev->queue[SMI_BUSY_QUEUE];
	qc = &cur->queue[SMI_BUSY_QUEUE];
	if (!qp->has_busy || !qc->has_busy || cur->uptime_ns <= prev->uptime_ns ||
	    qc->busy_ns < qp->busy_ns)
		return -1;
	pct = 100.0 * (double)(qc->busy_ns - qp->busy_ns) /
	      (double)(cur->uptime_ns - prev->uptime_ns);
	return pct > 100 ? 100 : pct;
}

const char *smi_link_name(uint32_t link_type)
{
	static const char *const names[] = { [1] = "usb", [2] = "pcie" };

	return link_type < 3 && names[link_type] ? names[link_type] : "unknown";
}

const char *smi_queue_name(uint32_t queue)
{
	static const char *const names[] = { "mgmt", "compute", "copy" };

	return queue < 3 ? names[queue] : "unknown";
}

const char *smi_reason_name(uint32_t reason)
{
	static const char *const names[] = {
		[1] = "timeout", [2] = "transport", [3] = "lost-completion",
		[4] = "debugfs", [5] = "admin",
	};

	return reason < 6 && names[reason] ? names[reason] : "unknown";
}

const char *smi_event_name(enum smi_event_kind kind)
{
	static const char *const names[] = {
		[SMI_EV_CARD_ADD] = "card-add", [SMI_EV_CARD_REMOVE] = "card-remove",
		[SMI_EV_RESET] = "reset", [SMI_EV_JOB_TIMEOUT] = "job-timeout",
		[SMI_EV_THERMAL_LIMIT] = "thermal-limit",
	};

	return kind >= SMI_EV_CARD_ADD && kind <= SMI_EV_THERMAL_LIMIT ? names[kind] : "unknown";
}

/* "usb 5 Gb/s", "pcie 10 Gb/s", "usb 480 Mb/s". */
static void fmt_link(char *buf, size_t n, const struct smi_card *c)
{
	if (!c->link_speed_mbps)
		snprintf(buf, n, "%s", smi_link_name(c->link_type));
	else if (c->link_speed_mbps % 1000 == 0)
		snprintf(buf, n, "%s %u Gb/s", smi_link_name(c->link_type),
			 c->link_speed_mbps / 1000);
	else if (c->link_speed_mbps > 1000)
		snprintf(buf, n, "%s %.1f Gb/s", smi_link_name(c->link_type),
			 c->link_speed_mbps / 1000.0);
	else
		snprintf(buf, n, "%s %u Mb/s", smi_link_name(c->link_type), c->link_speed_mbps);
}

static uint64_t mem_used(const struct smi_card *c)
{
	return c->mem_total > c->mem_free ? c->mem_total - c->mem_free : 0;
}

static const char *state_name(const struct smi_card *c)
{
	if (c->dead)
		return "dead";
	if ((c->has & SMI_HAS_THERMAL) && c->throttled)
		return "throttled";
	return "ok";
}

void smi_print_table(FILE *f, const struct smi_card *cards, const double *busy, int n)
{
	char node[32], link[32], used[16], total[16], mem[40], pct[16], temp[16], pwr[16];
	int i;

	fprintf(f, "%-4s  %-17s  %-11s  %21s  %5s  %6s  %7s  %3s  %6s  %s\n", "CARD", "NODE",
		"LINK", "MEMORY USED / TOTAL", "BUSY", "TEMP", "POWER", "CTX", "RESETS", "STATE");
	for (i = 0; i < n; i++) {
		const struct smi_card *c = &cards[i];
		bool thermal = c->has & SMI_HAS_THERMAL;

		snprintf(node, sizeof(node), "/dev/accel/accel%u", c->accel_minor);
		fmt_link(link, sizeof(link), c);
		util_fmt_bytes(used, sizeof(used), mem_used(c));
		util_fmt_bytes(total, sizeof(total), c->mem_total);
		snprintf(mem, sizeof(mem), "%s / %s", used, total);
		if (busy && busy[i] >= 0)
			snprintf(pct, sizeof(pct), "%.0f %%", busy[i]);
		else
			snprintf(pct, sizeof(pct), "N/A");
		if (thermal) {
			snprintf(temp, sizeof(temp), "%.0f C", c->temp_mc / 1000.0);
			snprintf(pwr, sizeof(pwr), "%.2f W", c->power_mw / 1000.0);
		} else {
			snprintf(temp, sizeof(temp), "N/A");
			snprintf(pwr, sizeof(pwr), "N/A");
		}
		fprintf(f, "%4u  %-17s  %-11s  %21s  %5s  %6s  %7s  %3u  %6llu  %s\n", c->index,
			node, link, mem, pct, temp, pwr, c->contexts,
			(unsigned long long)c->resets, state_name(c));
	}
}

/* A number, or null when @have is false. */
static json_t *num_or_null(bool have, double v)
{
	return have ? json_real(v) : json_null();
}

static json_t *queue_json(uint32_t id, const struct smi_queue *q)
{
	json_t *o = json_object();

	json_object_set_new(o, "id", json_string(smi_queue_name(id)));
	json_object_set_new(o, "commands", json_integer((json_int_t)q->commands));
	json_object_set_new(o, "command_errors", json_integer((json_int_t)q->command_errors));
	if (q->has_jobs) {
		json_object_set_new(o, "jobs_submitted", json_integer((json_int_t)q->jobs_submitted));
		json_object_set_new(o, "jobs_completed", json_integer((json_int_t)q->jobs_completed));
		json_object_set_new(o, "jobs_failed", json_integer((json_int_t)q->jobs_failed));
		json_object_set_new(o, "jobs_timedout", json_integer((json_int_t)q->jobs_timedout));
		json_object_set_new(o, "depth", json_integer(q->depth));
	} else {
		json_object_set_new(o, "jobs_submitted", json_null());
		json_object_set_new(o, "jobs_completed", json_null());
		json_object_set_new(o, "jobs_failed", json_null());
		json_object_set_new(o, "jobs_timedout", json_null());
		json_object_set_new(o, "depth", json_null());
	}
	json_object_set_new(o, "busy_seconds", num_or_null(q->has_busy, q->busy_ns / 1e9));
	return o;
}

json_t *smi_card_json(const struct smi_card *c, double busy)
{
	bool thermal = c->has & SMI_HAS_THERMAL, up = c->has & SMI_HAS_UPTIME;
	json_t *o = json_object(), *qs = json_array();
	char buf[32];
	uint32_t q;

	if (!o || !qs) {
		json_decref(o);
		json_decref(qs);
		return NULL;
	}
	json_object_set_new(o, "index", json_integer(c->index));
	snprintf(buf, sizeof(buf), "/dev/accel/accel%u", c->accel_minor);
	json_object_set_new(o, "node", json_string(buf));
	json_object_set_new(o, "accel_minor", json_integer(c->accel_minor));
	json_object_set_new(o, "dev_name", json_string(c->dev_name));
	json_object_set_new(o, "serial", json_integer((json_int_t)c->serial));
	json_object_set_new(o, "fw_version", json_string(c->fw_version));
	snprintf(buf, sizeof(buf), "%u.%u", c->protocol_version >> 16,
		 c->protocol_version & 0xffff);
	json_object_set_new(o, "protocol_version", json_string(buf));
	json_object_set_new(o, "link", json_string(smi_link_name(c->link_type)));
	json_object_set_new(o, "link_speed_mbps", json_integer(c->link_speed_mbps));
	json_object_set_new(o, "state", json_string(state_name(c)));
	json_object_set_new(o, "memory_total_bytes", json_integer((json_int_t)c->mem_total));
	json_object_set_new(o, "memory_free_bytes", json_integer((json_int_t)c->mem_free));
	json_object_set_new(o, "memory_used_bytes", json_integer((json_int_t)mem_used(c)));
	json_object_set_new(o, "contexts", json_integer(c->contexts));
	json_object_set_new(o, "resets", json_integer((json_int_t)c->resets));
	json_object_set_new(o, "p2p_window_bytes", json_integer((json_int_t)c->p2p_window));
	json_object_set_new(o, "p2p_bytes", json_integer((json_int_t)c->p2p_bytes));
	json_object_set_new(o, "bounce_bytes", json_integer((json_int_t)c->bounce_bytes));
	json_object_set_new(o, "busy_percent", num_or_null(busy >= 0, busy));
	json_object_set_new(o, "temperature_celsius", num_or_null(thermal, c->temp_mc / 1000.0));
	json_object_set_new(o, "temperature_limit_celsius",
			    num_or_null(thermal, c->temp_limit_mc / 1000.0));
	json_object_set_new(o, "throttled", thermal ? json_boolean(c->throttled) : json_null());
	json_object_set_new(o, "power_watts", num_or_null(thermal, c->power_mw / 1000.0));
	json_object_set_new(o, "energy_joules", num_or_null(up, c->energy_uj / 1e6));
	json_object_set_new(o, "uptime_seconds", num_or_null(up, c->uptime_ns / 1e9));
	for (q = 0; q < SMI_NUM_QUEUES; q++)
		if (c->queue[q].present)
			json_array_append_new(qs, queue_json(q, &c->queue[q]));
	json_object_set_new(o, "queues", qs);
	return o;
}

/* "2026-12-01T11:50:02.123Z" */
static void fmt_time(char *buf, size_t n, int64_t ns)
{
	time_t t = (time_t)(ns / 1000000000);
	struct tm tm;
	char s[24];

	gmtime_r(&t, &tm);
	strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, n, "%s.%03dZ", s, (int)(ns % 1000000000 / 1000000));
}

/* The attributes of @ev as "key=value ..." */
static void fmt_attrs(char *buf, size_t n, const struct smi_event *ev)
{
	char ctx[16] = "-";

	if (ev->has_ctx)
		snprintf(ctx, sizeof(ctx), "%u", ev->ctx);
	switch (ev->kind) {
	case SMI_EV_CARD_ADD:
	case SMI_EV_CARD_REMOVE:
		snprintf(buf, n, "node=/dev/accel/accel%u dev=%s serial=%llu",
			 ev->card.accel_minor, ev->card.dev_name,
			 (unsigned long long)ev->card.serial);
		break;
	case SMI_EV_RESET:
		snprintf(buf, n, "reason=%s ctx=%s result=%d resets=%llu",
			 smi_reason_name(ev->reason), ctx, ev->result,
			 (unsigned long long)ev->resets);
		break;
	case SMI_EV_JOB_TIMEOUT:
		snprintf(buf, n, "ctx=%s queue=%s timeout_ms=%u", ctx, smi_queue_name(ev->queue),
			 ev->timeout_ms);
		break;
	case SMI_EV_THERMAL_LIMIT:
		snprintf(buf, n, "throttled=%d temperature=%.1fC limit=%.1fC", ev->throttled,
			 ev->temp_mc / 1000.0, ev->temp_limit_mc / 1000.0);
		break;
	default:
		buf[0] = '\0';
	}
}

void smi_event_line(char *buf, size_t size, const struct smi_event *ev)
{
	char t[32], attrs[112];

	fmt_time(t, sizeof(t), ev->time_ns);
	fmt_attrs(attrs, sizeof(attrs), ev);
	snprintf(buf, size, "%s card %u %s %s", t, ev->index, smi_event_name(ev->kind), attrs);
}

json_t *smi_event_json(const struct smi_event *ev)
{
	json_t *o = json_object();
	char t[32];

	if (!o)
		return NULL;
	fmt_time(t, sizeof(t), ev->time_ns);
	json_object_set_new(o, "time", json_string(t));
	json_object_set_new(o, "card", json_integer(ev->index));
	json_object_set_new(o, "event", json_string(smi_event_name(ev->kind)));
	switch (ev->kind) {
	case SMI_EV_CARD_ADD:
	case SMI_EV_CARD_REMOVE: {
		char node[32];

		snprintf(node, sizeof(node), "/dev/accel/accel%u", ev->card.accel_minor);
		json_object_set_new(o, "node", json_string(node));
		json_object_set_new(o, "dev_name", json_string(ev->card.dev_name));
		json_object_set_new(o, "serial", json_integer((json_int_t)ev->card.serial));
		break;
	}
	case SMI_EV_RESET:
		json_object_set_new(o, "reason", json_string(smi_reason_name(ev->reason)));
		json_object_set_new(o, "ctx", ev->has_ctx ? json_integer(ev->ctx) : json_null());
		json_object_set_new(o, "result", json_integer(ev->result));
		json_object_set_new(o, "resets", json_integer((json_int_t)ev->resets));
		break;
	case SMI_EV_JOB_TIMEOUT:
		json_object_set_new(o, "ctx", ev->has_ctx ? json_integer(ev->ctx) : json_null());
		json_object_set_new(o, "queue", json_string(smi_queue_name(ev->queue)));
		json_object_set_new(o, "timeout_ms", json_integer(ev->timeout_ms));
		break;
	case SMI_EV_THERMAL_LIMIT:
		json_object_set_new(o, "throttled", json_boolean(ev->throttled));
		json_object_set_new(o, "temperature_celsius", json_real(ev->temp_mc / 1000.0));
		json_object_set_new(o, "temperature_limit_celsius",
				    json_real(ev->temp_limit_mc / 1000.0));
		break;
	default:	/* the driver's unload and reload: no attributes */
		break;
	}
	return o;
}

/* ---- Prometheus (the server's /metrics) ---------------------------------- */

/*
 * The numeric JSON keys of a card and of a queue, as metric families:
 * the JSON objects are rendered first and these keys read back from
 * them, so /metrics and --json cannot disagree. index, accel_minor and
 * serial are labels or rk1828_card_info's; busy_percent is a windowed
 * rate, which Prometheus computes itself from busy_seconds.
 */
static const struct mkey {
	const char *key, *help;
	bool counter;
} card_keys[] = {
	{ "memory_total_bytes", "card memory usable for buffers, bytes", false },
	{ "memory_free_bytes", "card memory not allocated to any buffer, bytes", false },
	{ "memory_used_bytes", "card memory allocated to buffers, bytes", false },
	{ "contexts", "open contexts (files) on the card", false },
	{ "resets", "queue resets that succeeded since the card was probed", true },
	{ "p2p_window_bytes", "card memory exposed to peer cards (PCIe BAR), bytes", false },
	{ "p2p_bytes", "bytes the card's copies moved card to card by peer-to-peer DMA", true },
	{ "bounce_bytes", "bytes the card's copies moved through host memory", true },
	{ "link_speed_mbps", "negotiated link speed, Mbit/s", false },
	{ "temperature_celsius", "temperature the card reports", false },
	{ "temperature_limit_celsius", "temperature at which the card throttles", false },
	{ "throttled", "1 while the card is at or above its temperature limit", false },
	{ "power_watts", "power the card reports (mean over the last second)", false },
	{ "energy_joules", "energy the card used since it started", true },
	{ "uptime_seconds", "time since the card started", false },
}, queue_keys[] = {
	{ "commands", "card commands completed on the queue", true },
	{ "command_errors", "card commands that failed", true },
	{ "jobs_submitted", "jobs submitted to the queue (all processes)", true },
	{ "jobs_completed", "jobs that completed without error", true },
	{ "jobs_failed", "jobs that completed with an error", true },
	{ "jobs_timedout", "jobs whose command timed out on the card", true },
	{ "depth", "jobs submitted and not yet completed", false },
	{ "busy_seconds", "time the card reports the queue busy", true },
};

/* A JSON number or boolean as a sample value; false for null/absent. */
static bool sample_value(json_t *v, double *out)
{
	if (json_is_number(v))
		*out = json_number_value(v);
	else if (json_is_boolean(v))
		*out = json_is_true(v);
	else
		return false;
	return true;
}

static void metric_head(FILE *f, const char *prefix, const struct mkey *k)
{
	const char *suffix = k->counter ? "_total" : "";

	fprintf(f, "# HELP %s%s%s %s\n# TYPE %s%s%s %s\n", prefix, k->key, suffix, k->help,
		prefix, k->key, suffix, k->counter ? "counter" : "gauge");
}

/* Prometheus label value escaping (backslash, quote, newline). */
static void label_value(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fputc('\\', f);
		if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

static void card_labels(FILE *f, json_t *c)
{
	fprintf(f, "card=\"%lld\",node=\"", (long long)json_integer_value(json_object_get(c, "index")));
	label_value(f, json_string_value(json_object_get(c, "node")));
	fputc('"', f);
}

void smi_metrics(FILE *f, const struct smi_card *cards, int n)
{
	static const char *const info[] = { "dev_name", "fw_version", "protocol_version", "link",
					     "state" };
	json_t **js = calloc(n ? n : 1, sizeof(*js));
	size_t k, j, q;
	double v;
	int i;

	fprintf(f, "# HELP rk1828_cards cards the rk1828 driver reports\n"
		   "# TYPE rk1828_cards gauge\nrk1828_cards %d\n", n);
	if (!js)
		return;
	for (i = 0; i < n; i++)
		js[i] = smi_card_json(&cards[i], -1);
	fprintf(f, "# HELP rk1828_card_info the card's identity and state (value 1)\n"
		   "# TYPE rk1828_card_info gauge\n");
	for (i = 0; i < n; i++) {
		if (!js[i])
			continue;
		fputs("rk1828_card_info{", f);
		card_labels(f, js[i]);
		fprintf(f, ",serial=\"%016llx\"", (unsigned long long)cards[i].serial);
		for (j = 0; j < sizeof(info) / sizeof(info[0]); j++) {
			fprintf(f, ",%s=\"", info[j]);
			label_value(f, json_string_value(json_object_get(js[i], info[j])));
			fputc('"', f);
		}
		fputs("} 1\n", f);
	}
	for (k = 0; k < sizeof(card_keys) / sizeof(card_keys[0]); k++) {
		metric_head(f, "rk1828_card_", &card_keys[k]);
		for (i = 0; i < n; i++) {
			if (!js[i] || !sample_value(json_object_get(js[i], card_keys[k].key), &v))
				continue;
			fprintf(f, "rk1828_card_%s%s{", card_keys[k].key,
				card_keys[k].counter ? "_total" : "");
			card_labels(f, js[i]);
			fprintf(f, "} %.15g\n", v);
		}
	}
	for (k = 0; k < sizeof(queue_keys) / sizeof(queue_keys[0]); k++) {
		metric_head(f, "rk1828_card_queue_", &queue_keys[k]);
		for (i = 0; i < n; i++) {
			json_t *qs = js[i] ? json_object_get(js[i], "queues") : NULL;

			for (q = 0; q < json_array_size(qs); q++) {
				json_t *qo = json_array_get(qs, q);

				if (!sample_value(json_object_get(qo, queue_keys[k].key), &v))
					continue;
				fprintf(f, "rk1828_card_queue_%s%s{", queue_keys[k].key,
					queue_keys[k].counter ? "_total" : "");
				card_labels(f, js[i]);
				fprintf(f, ",queue=\"%s\"} %.15g\n",
					json_string_value(json_object_get(qo, "id")), v);
			}
		}
	}
	for (i = 0; i < n; i++)
		json_decref(js[i]);
	free(js);
}
