// SPDX-License-Identifier: MIT
/*
 * rk1828-smi: the RK1828 cards at a glance, over the driver's generic
 * netlink family "rk1828" (smi.h), the way nvidia-smi and amd-smi show
 * GPUs.
 *
 *   rk1828-smi [-i N] [--json] [-l SECONDS]   the card table (or JSON)
 *   rk1828-smi events [--json] [-c COUNT] [-t SECONDS]
 *                                            events as they arrive
 *   rk1828-smi reset N                       reset card N's queues (admin)
 *
 * Exit status: 0 done; 1 an error; 2 bad usage; 3 the driver is not
 * loaded (no family "rk1828"); 4 no cards, or no card with that index;
 * 5 permission denied (card-reset needs CAP_NET_ADMIN). -t without an
 * event, and Ctrl-C in watch or events mode, exit 0.
 *
 * events follows a reload of the driver, the way `ip monitor` or
 * `udevadm monitor` outlive what they watch: when the module is unloaded
 * (its family unregistered) it says so on stderr and waits; when it is
 * loaded again it rejoins the events group and says so, and the new
 * cards' card-add events follow on stdout.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "smi.h"
#include "smi_format.h"

enum {
	EXIT_ERROR = 1,
	EXIT_USAGE = 2,
	EXIT_NO_DRIVER = 3,
	EXIT_NO_CARDS = 4,
	EXIT_PERM = 5,
};

/* The busy % of a one-shot table is measured over this window. */
#define DEFAULT_SAMPLE_MS	250

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static void usage(FILE *f)
{
	fputs("usage: rk1828-smi [-i N] [--json] [-l SECONDS] [--sample-ms MS]\n"
	      "       rk1828-smi events [--json] [-c COUNT] [-t SECONDS]\n"
	      "       rk1828-smi reset N\n"
	      "\n"
	      "Shows the RK1828 NPU cards through the rk1828 driver's generic netlink\n"
	      "family: one row per card with its index, accel node, link, card memory\n"
	      "used / total, compute busy %, temperature, power, open contexts, queue\n"
	      "resets and state (N/A where the card reports no telemetry).\n"
	      "\n"
	      "  -i, --id N         only card N (its index)\n"
	      "  -j, --json         one JSON object ({\"family_version\", \"cards\": [...]});\n"
	      "                     with -l one object per line; with events one per event\n"
	      "  -l, --loop SECONDS print again every SECONDS until Ctrl-C (busy % is over\n"
	      "                     the interval)\n"
	      "      --sample-ms MS the one-shot busy % is measured over MS milliseconds\n"
	      "                     (default 250; 0: not measured, N/A)\n"
	      "  -c, --count COUNT  events: exit after COUNT events\n"
	      "  -t, --timeout SECONDS  events: exit after SECONDS (0 when none came)\n"
	      "  -h, --help         this text\n"
	      "      --version      the version (of the packages, the module and the library)\n"
	      "\n"
	      "events prints one line per event as it arrives: time (UTC), card, event\n"
	      "(card-add, card-remove, reset, job-timeout, thermal-limit) and its\n"
	      "attributes (a reset's reason, guilty context, result and reset count).\n"
	      "It follows a reload of the driver: when rk1828.ko is unloaded it says so\n"
	      "on stderr and waits; once it is loaded again it listens again (and says\n"
	      "so), and the reloaded cards' card-add events follow.\n"
	      "reset N resets card N's queues as after a job timeout; it needs\n"
	      "CAP_NET_ADMIN (root).\n"
	      "\n"
	      "Exit status: 0 done, 1 error, 2 bad usage, 3 driver not loaded,\n"
	      "4 no cards (or no card N), 5 permission denied.\n", f);
}

/* Exit status and message for a failed smi_*() call. */
static int fail(int err, const char *what)
{
	switch (err) {
	case -ENOENT:
		fprintf(stderr, "rk1828-smi: the rk1828 driver is not loaded (%s; load rk1828.ko)\n",
			smi_error());
		return EXIT_NO_DRIVER;
	case -EPERM:
	case -EACCES:
		fprintf(stderr, "rk1828-smi: %s: permission denied (it needs CAP_NET_ADMIN: run it as root)\n",
			what);
		return EXIT_PERM;
	case -ENODEV:
		fprintf(stderr, "rk1828-smi: %s\n", smi_error());
		return EXIT_NO_CARDS;
	default:
		fprintf(stderr, "rk1828-smi: %s\n", smi_error());
		return EXIT_ERROR;
	}
}

/* A non-negative integer argument, or -1. */
static long parse_num(const char *s, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > max)
		return -1;
	return v;
}

struct opts {
	bool json;
	long id;		/* -1: all cards */
	long loop_s;		/* 0: once */
	long sample_ms;
	long count;		/* events: 0 = unlimited */
	long timeout_s;		/* events: 0 = none */
};

/* One sample: every card (or card @o->id). */
static int sample(struct smi *s, const struct opts *o, struct smi_card **cards, int *n)
{
	if (o->id < 0)
		return smi_dump(s, cards, n);
	*cards = malloc(sizeof(**cards));
	if (!*cards)
		return -ENOMEM;
	*n = 1;
	return smi_get(s, (uint32_t)o->id, *cards);
}

/* The earlier sample of card @c in @prev, or NULL. */
static const struct smi_card *find(const struct smi_card *prev, int n, const struct smi_card *c)
{
	int i;

	for (i = 0; prev && i < n; i++)
		if (prev[i].index == c->index && prev[i].serial == c->serial)
			return &prev[i];
	return NULL;
}

static void show(const struct opts *o, struct smi *s, const struct smi_card *cards, int n,
		 const struct smi_card *prev, int n_prev)
{
	double *busy = calloc(n ? n : 1, sizeof(*busy));
	int i;

	for (i = 0; busy && i < n; i++)
		busy[i] = smi_busy_percent(find(prev, n_prev, &cards[i]), &cards[i]);
	if (o->json) {
		json_t *doc = json_object(), *arr = json_array();

		for (i = 0; i < n; i++)
			json_array_append_new(arr, smi_card_json(&cards[i], busy ? busy[i] : -1));
		json_object_set_new(doc, "family_version", json_integer(smi_family_version(s)));
		json_object_set_new(doc, "cards", arr);
		json_dumpf(doc, stdout, o->loop_s ? JSON_COMPACT : JSON_INDENT(2));
		fputc('\n', stdout);
		json_decref(doc);
	} else {
		time_t now = time(NULL);
		char t[32];

		strftime(t, sizeof(t), "%Y-%m-%d %H:%M:%S", localtime(&now));
		printf("rk1828-smi  %s  driver family rk1828 v%u, %d card%s\n", t,
		       smi_family_version(s), n, n == 1 ? "" : "s");
		smi_print_table(stdout, cards, busy, n);
		if (o->loop_s)
			putchar('\n');
	}
	fflush(stdout);
	free(busy);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000L };

	while (!stop && nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int cmd_table(struct smi *s, const struct opts *o)
{
	struct smi_card *prev = NULL, *cards = NULL;
	int n_prev = 0, n = 0, err;

	if (!o->loop_s && o->sample_ms) {
		err = sample(s, o, &prev, &n_prev);
		if (err) {
			free(prev);
			return fail(err, "card-get");
		}
		sleep_ms(o->sample_ms);
	}
	for (;;) {
		err = sample(s, o, &cards, &n);
		if (err) {
			free(prev);
			free(cards);
			return fail(err, "card-get");
		}
		if (!n && !o->loop_s) {
			fprintf(stderr, "rk1828-smi: no rk1828 cards found (the driver is loaded)\n");
			free(prev);
			free(cards);
			return EXIT_NO_CARDS;
		}
		show(o, s, cards, n, prev, n_prev);
		free(prev);
		prev = cards;
		n_prev = n;
		cards = NULL;
		if (!o->loop_s)
			break;
		sleep_ms(o->loop_s * 1000);
		if (stop)
			break;
	}
	free(prev);
	return 0;
}

static int cmd_events(struct smi *s, const struct opts *o)
{
	struct timespec t0, now;
	struct smi_event ev;
	long seen = 0;
	int err, left;

	err = smi_subscribe(s);
	if (err)
		return fail(err, "events");
	/* On stderr, so that scripts can wait for it before they act. */
	fprintf(stderr, "rk1828-smi: listening for rk1828 events (Ctrl-C stops)\n");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!stop && (!o->count || seen < o->count)) {
		left = -1;
		if (o->timeout_s) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			left = (int)(o->timeout_s * 1000 - ((now.tv_sec - t0.tv_sec) * 1000 +
							   (now.tv_nsec - t0.tv_nsec) / 1000000));
			if (left <= 0)
				break;
		}
		err = smi_next_event(s, &ev, left);
		if (err == -EINTR)
			continue;
		if (err == -ENOBUFS) {
			fprintf(stderr, "rk1828-smi: events were lost (socket buffer overflow)\n");
			continue;
		}
		if (err < 0)
			return fail(err, "events");
		if (err == 0)
			break;
		if (ev.kind == SMI_EV_DRIVER_GONE) {
			fprintf(stderr, "rk1828-smi: the rk1828 driver was unloaded; waiting for it to be loaded again\n");
			continue;
		}
		if (ev.kind == SMI_EV_DRIVER_BACK) {
			fprintf(stderr, "rk1828-smi: the rk1828 driver is loaded again (family version %llu); listening for rk1828 events\n",
				(unsigned long long)ev.resets);
			continue;
		}
		seen++;
		if (o->json) {
			json_t *j = smi_event_json(&ev);

			json_dumpf(j, stdout, JSON_COMPACT);
			fputc('\n', stdout);
			json_decref(j);
		} else {
			char line[192];

			smi_event_line(line, sizeof(line), &ev);
			puts(line);
		}
		fflush(stdout);
	}
	return 0;
}

static int cmd_reset(struct smi *s, long index)
{
	int err = smi_reset(s, (uint32_t)index);
	char what[48];

	snprintf(what, sizeof(what), "reset of card %ld", index);
	if (err)
		return fail(err, what);
	printf("rk1828-smi: card %ld: queues reset\n", index);
	return 0;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "id", required_argument, NULL, 'i' },
		{ "json", no_argument, NULL, 'j' },
		{ "loop", required_argument, NULL, 'l' },
		{ "sample-ms", required_argument, NULL, 'S' },
		{ "count", required_argument, NULL, 'c' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	long *dst;
	int c;

	while ((c = getopt_long(argc, argv, "i:jl:c:t:h", lo, NULL)) != -1) {
		switch (c) {
		case 'j':
			o->json = true;
			continue;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("rk1828-smi %s\n", RK1828_VERSION);
			exit(0);
		case 'i': dst = &o->id; break;
		case 'l': dst = &o->loop_s; break;
		case 'S': dst = &o->sample_ms; break;
		case 'c': dst = &o->count; break;
		case 't': dst = &o->timeout_s; break;
		default:
			usage(stderr);
			return -1;
		}
		*dst = parse_num(optarg, c == 'i' ? INT32_MAX : 86400000);
		if (*dst < 0 || (c == 'l' && *dst == 0)) {
			fprintf(stderr, "rk1828-smi: %s: bad value '%s'\n",
				c == 'S' ? "--sample-ms" : (char[]){ '-', (char)c, 0 }, optarg);
			return -1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o = { .id = -1, .sample_ms = DEFAULT_SAMPLE_MS };
	/* Netlink reads restart; the sleeps of -l and the wait of events end. */
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };
	const char *cmd = "table";
	long reset_index = -1;
	struct smi *s;
	int err, rc;

	argv[0] = (char *)"rk1828-smi";	/* getopt's messages: the name, not the path */
	if (argc > 1 && (!strcmp(argv[1], "events") || !strcmp(argv[1], "reset"))) {
		cmd = argv[1];
		argv[1] = argv[0];	/* getopt's messages name the program */
		argv++;
		argc--;
	}
	if (parse_opts(argc, argv, &o))
		return EXIT_USAGE;
	if (!strcmp(cmd, "reset")) {
		if (optind != argc - 1 || (reset_index = parse_num(argv[optind], INT32_MAX)) < 0) {
			fprintf(stderr, "rk1828-smi: reset needs one card index (rk1828-smi reset N)\n");
			return EXIT_USAGE;
		}
	} else if (optind != argc) {
		fprintf(stderr, "rk1828-smi: unexpected argument '%s' (try --help)\n", argv[optind]);
		return EXIT_USAGE;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	err = smi_open(&s);
	if (err)
		return fail(err, "open");
	if (!strcmp(cmd, "events"))
		rc = cmd_events(s, &o);
	else if (!strcmp(cmd, "reset"))
		rc = cmd_reset(s, reset_index);
	else
		rc = cmd_table(s, &o);
	smi_close(s);
	return rc;
}
