// SPDX-License-Identifier: MIT
/*
 * Host unit tests of rk1828-smi's parsing and formatting (userspace/smi),
 * no kernel needed: card-get and event messages are built with libnl the
 * way the driver builds them (uint attributes as 4 or 8 bytes, queue
 * nests), then parsed and rendered; malformed messages (short attributes,
 * unterminated strings, no index, a bad queue id) must be refused and
 * newer attributes skipped. Also the busy % between two samples, the
 * table's cells, the JSON keys and the event lines, and the "no driver"
 * answer of smi_open() on a machine without the module, and the
 * controller's notifications of the family going and coming back (a
 * module reload, which rk1828-smi events follows). Prints TAP.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/genetlink.h>
#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include "drm/rk1828_netlink.h"
#include "smi.h"
#include "smi_format.h"

#include "tap.h"

#define FAMILY	0x1c	/* any id: the parser does not look at it */
#define GIB	(1ULL << 30)

static struct nl_msg *msg_new(uint8_t cmd)
{
	struct nl_msg *m = nlmsg_alloc();

	genlmsg_put(m, 0, 0, FAMILY, 0, 0, cmd, RK1828_FAMILY_VERSION);
	return m;
}

/* A "uint" attribute as the kernel's nla_put_uint() sends it. */
static void put_uint(struct nl_msg *m, int type, uint64_t v)
{
	if (v <= UINT32_MAX)
		nla_put_u32(m, type, (uint32_t)v);
	else
		nla_put_u64(m, type, v);
}

static void put_queue(struct nl_msg *m, uint32_t id, uint64_t base, bool jobs, bool busy)
{
	struct nlattr *n = nla_nest_start(m, RK1828_A_CARD_QUEUE);

	nla_put_u32(m, RK1828_A_QUEUE_ID, id);
	put_uint(m, RK1828_A_QUEUE_COMMANDS, base + 1);
	put_uint(m, RK1828_A_QUEUE_COMMAND_ERRORS, base + 2);
	if (jobs) {
		put_uint(m, RK1828_A_QUEUE_JOBS_SUBMITTED, base + 10);
		put_uint(m, RK1828_A_QUEUE_JOBS_COMPLETED, base + 7);
		put_uint(m, RK1828_A_QUEUE_JOBS_FAILED, base + 1);
		put_uint(m, RK1828_A_QUEUE_JOBS_TIMEDOUT, base + 0);
		nla_put_u32(m, RK1828_A_QUEUE_DEPTH, 2);
	}
	if (busy)
		put_uint(m, RK1828_A_QUEUE_BUSY, base * 1000000000ULL);
	nla_nest_end(m, n);
}

/* A full card-get reply: card 1 on accel3, 4 GiB with 1 GiB used. */
static struct nl_msg *card_msg(bool telemetry)
{
	struct nl_msg *m = msg_new(RK1828_CMD_CARD_GET);

	nla_put_u32(m, RK1828_A_CARD_INDEX, 1);
	nla_put_u32(m, RK1828_A_CARD_ACCEL_MINOR, 3);
	nla_put_string(m, RK1828_A_CARD_DEV_NAME, "2-1:1.0");
	put_uint(m, RK1828_A_CARD_SERIAL, 0x1828000000001ULL);	/* 8 bytes */
	nla_put_string(m, RK1828_A_CARD_FW_VERSION, "rk1828-emu 1.1");
	nla_put_u32(m, RK1828_A_CARD_PROTOCOL_VERSION, (1 << 16) | 1);
	nla_put_u32(m, RK1828_A_CARD_LINK_TYPE, RK1828_LINK_TYPE_USB);
	nla_put_u32(m, RK1828_A_CARD_LINK_SPEED, 5000);
	put_uint(m, RK1828_A_CARD_MEM_TOTAL, 4 * GIB);			/* 8 bytes */
	put_uint(m, RK1828_A_CARD_MEM_FREE, 3 * GIB);			/* 4 bytes */
	nla_put_u32(m, RK1828_A_CARD_CONTEXTS, 2);
	nla_put_u32(m, RK1828_A_CARD_STATE, RK1828_CARD_STATE_OK);
	put_uint(m, RK1828_A_CARD_RESETS, 4);
	put_uint(m, RK1828_A_CARD_P2P_WINDOW, 64ULL << 20);
	put_uint(m, RK1828_A_CARD_P2P_BYTES, 3ULL << 33);
	put_uint(m, RK1828_A_CARD_BOUNCE_BYTES, 12345);
	put_queue(m, RK1828_QUEUE_MGMT, 100, false, telemetry);
	put_queue(m, RK1828_QUEUE_COMPUTE, 200, true, telemetry);
	put_queue(m, RK1828_QUEUE_COPY, 300, true, telemetry);
	if (telemetry) {
		nla_put_s32(m, RK1828_A_CARD_TEMPERATURE, 45500);
		nla_put_s32(m, RK1828_A_CARD_TEMP_LIMIT, 95000);
		nla_put_u8(m, RK1828_A_CARD_THROTTLED, 0);
		nla_put_u32(m, RK1828_A_CARD_POWER, 2500);
		put_uint(m, RK1828_A_CARD_ENERGY, 7000000);
		put_uint(m, RK1828_A_CARD_UPTIME, 400ULL * 1000000000ULL);
	}
	return m;
}

static void test_parse_card(void)
{
	struct nl_msg *m = card_msg(true);
	struct smi_card c;
	int err = smi_parse_card(nlmsg_hdr(m), &c);
	const struct smi_queue *q = c.queue;

	tap_ok(err == 0, "full card-get message parses (%d)", err);
	tap_ok(c.index == 1 && c.accel_minor == 3 && !strcmp(c.dev_name, "2-1:1.0"),
	       "index 1, minor 3, dev 2-1:1.0 (got %u %u %s)", c.index, c.accel_minor,
	       c.dev_name);
	tap_ok(c.serial == 0x1828000000001ULL && c.mem_total == 4 * GIB && c.mem_free == 3 * GIB,
	       "uint attributes of 8 and 4 bytes: serial, mem-total 4 GiB, mem-free 3 GiB");
	tap_ok(!strcmp(c.fw_version, "rk1828-emu 1.1") && c.protocol_version == 0x10001 &&
	       c.link_type == 1 && c.link_speed_mbps == 5000 && c.contexts == 2 && !c.dead &&
	       c.resets == 4, "fw, protocol 1.1, usb 5000 Mbit/s, 2 contexts, ok, 4 resets");
	tap_ok(c.p2p_window == 64ULL << 20 && c.p2p_bytes == 3ULL << 33 &&
	       c.bounce_bytes == 12345,
	       "p2p window 64 MiB, p2p bytes 24 GiB (8-byte uint), bounce bytes 12345 (got %llu %llu %llu)",
	       (unsigned long long)c.p2p_window, (unsigned long long)c.p2p_bytes,
	       (unsigned long long)c.bounce_bytes);
	tap_ok(c.has == (SMI_HAS_STATE | SMI_HAS_THERMAL | SMI_HAS_UPTIME) && c.temp_mc == 45500 &&
	       c.temp_limit_mc == 95000 && !c.throttled && c.power_mw == 2500 &&
	       c.energy_uj == 7000000 && c.uptime_ns == 400000000000ULL,
	       "telemetry: 45.5 C of 95 C, 2.5 W, 7 J, 400 s (has 0x%x)", c.has);
	tap_ok(q[0].present && !q[0].has_jobs && q[0].commands == 101 && q[0].command_errors == 102 &&
	       q[0].busy_ns == 100000000000ULL,
	       "mgmt queue: commands, errors, busy; no job counters");
	tap_ok(q[1].present && q[1].has_jobs && q[1].jobs_submitted == 210 &&
	       q[1].jobs_completed == 207 && q[1].jobs_failed == 201 && q[1].jobs_timedout == 200 &&
	       q[1].depth == 2 && q[1].busy_ns == 200000000000ULL && q[2].commands == 301,
	       "compute and copy queues: job counters, depth, busy");
	nlmsg_free(m);

	m = card_msg(false);
	err = smi_parse_card(nlmsg_hdr(m), &c);
	tap_ok(err == 0 && c.has == SMI_HAS_STATE && !c.queue[1].has_busy && c.temp_mc == 0,
	       "a card without telemetry: no thermal or uptime bits, no busy (has 0x%x)", c.has);
	nlmsg_free(m);

	/* card-remove carries the identity only. */
	m = msg_new(RK1828_CMD_CARD_REMOVE);
	nla_put_u32(m, RK1828_A_CARD_INDEX, 0);
	nla_put_u32(m, RK1828_A_CARD_ACCEL_MINOR, 0);
	nla_put_string(m, RK1828_A_CARD_DEV_NAME, "1-1:1.0");
	put_uint(m, RK1828_A_CARD_SERIAL, 7);
	err = smi_parse_card(nlmsg_hdr(m), &c);
	tap_ok(err == 0 && c.has == 0 && c.serial == 7, "identity-only message: has 0, serial 7");
	nlmsg_free(m);
}

static void test_parse_bad(void)
{
	static const uint8_t two[2] = { 1, 2 }, three[3] = { 1, 2, 3 };
	static const char unterminated[3] = { 'a', 'b', 'c' };
	struct nl_msg *m;
	struct nlattr *n;
	struct smi_card c;
	int err;

	m = card_msg(true);
	nla_put(m, RK1828_A_CARD_CONTEXTS, sizeof(two), two);
	err = smi_parse_card(nlmsg_hdr(m), &c);
	tap_ok(err == -EBADMSG, "a u32 attribute of 2 bytes is refused (%d)", err);
	nlmsg_free(m);

	m = card_msg(true);
	nla_put(m, RK1828_A_CARD_MEM_FREE, sizeof(three), three);
	err = smi_parse_card(nlmsg_hdr(m), &c);
	tap_ok(err == -EBADMSG, "a uint attribute of 3 bytes is refused (%d)", err);
	nlmsg_free(m);

	m = card_msg(true);
	nla_put(m, RK1828_A_CARD_FW_VERSION, sizeof(unterminated), unterminated);
	err = smi_parse_card(nlmsg_hdr(m), &c);
	tap_ok(err == -EBADMSG, "an unterminated string is refused (%d)", err);
	nlmsg_free(m);

	m = msg_new(RK1828_CMD_CARD_GET);
	nla_put_u32(m, RK1828_A_CARD_ACCEL_MINOR, 0);
	err = smi_parse_card(nlmsg_hdr(m), &c);
	tap_ok(err == -EBADMSG, "a card message without index is refused (%d)", err);
	nlmsg_free(m);

	m = msg_new(RK1828_CMD_CARD_GET);
	nla_put_u32(m, RK1828_A_CARD_INDEX, 0);
	n = nla_nest_start(m, RK1828_A_CARD_QUEUE);
	nla_put_u32(m, RK1828_A_QUEUE_ID, 3);
	nla_nest_end(m, n);
	err = smi_parse_card(nlmsg_hdr(m), &c);
	tap_ok(err == -EBADMSG, "a queue nest with queue id 3 is refused (%d)", err);
	nlmsg_free(m);

	/* A newer driver's attributes (above RK1828_A_CARD_MAX) are skipped. */
	m = card_msg(true);
	nla_put_u64(m, RK1828_A_CARD_MAX + 1, 99);
	nla_put_string(m, RK1828_A_CARD_MAX + 7, "future");
	err = smi_parse_card(nlmsg_hdr(m), &c);
	tap_ok(err == 0 && c.index == 1 && c.contexts == 2,
	       "attributes newer than the header are skipped (%d)", err);
	nlmsg_free(m);
}

static void test_parse_events(void)
{
	struct smi_event ev = { .time_ns = 42 };
	struct nl_msg *m;
	int err;

	m = msg_new(RK1828_CMD_RESET);
	nla_put_u32(m, RK1828_A_EVENT_INDEX, 1);
	nla_put_u32(m, RK1828_A_EVENT_REASON, RK1828_RESET_REASON_DEBUGFS);
	nla_put_s32(m, RK1828_A_EVENT_RESULT, 0);
	put_uint(m, RK1828_A_EVENT_RESETS, 5);
	err = smi_parse_event(nlmsg_hdr(m), &ev);
	tap_ok(err == 0 && ev.kind == SMI_EV_RESET && ev.index == 1 && ev.reason == 4 &&
	       !ev.has_ctx && ev.result == 0 && ev.resets == 5 && ev.time_ns == 42,
	       "reset event: card 1, reason debugfs, no ctx, result 0, 5 resets, time kept");
	nlmsg_free(m);

	m = msg_new(RK1828_CMD_RESET);
	nla_put_u32(m, RK1828_A_EVENT_INDEX, 0);
	nla_put_u32(m, RK1828_A_EVENT_REASON, RK1828_RESET_REASON_TIMEOUT);
	nla_put_u32(m, RK1828_A_EVENT_CTX, 9);
	nla_put_s32(m, RK1828_A_EVENT_RESULT, -EIO);
	put_uint(m, RK1828_A_EVENT_RESETS, 0);
	err = smi_parse_event(nlmsg_hdr(m), &ev);
	tap_ok(err == 0 && ev.reason == 1 && ev.has_ctx && ev.ctx == 9 && ev.result == -EIO,
	       "failed reset after a timeout: guilty ctx 9, result -EIO");
	nlmsg_free(m);

	m = msg_new(RK1828_CMD_JOB_TIMEOUT);
	nla_put_u32(m, RK1828_A_EVENT_INDEX, 2);
	nla_put_u32(m, RK1828_A_EVENT_CTX, 3);
	nla_put_u32(m, RK1828_A_EVENT_QUEUE, RK1828_QUEUE_COMPUTE);
	nla_put_u32(m, RK1828_A_EVENT_TIMEOUT_MS, 3000);
	err = smi_parse_event(nlmsg_hdr(m), &ev);
	tap_ok(err == 0 && ev.kind == SMI_EV_JOB_TIMEOUT && ev.index == 2 && ev.ctx == 3 &&
	       ev.queue == 1 && ev.timeout_ms == 3000, "job-timeout: card 2, ctx 3, compute, 3000 ms");
	nlmsg_free(m);

	m = msg_new(RK1828_CMD_THERMAL_LIMIT);
	nla_put_u32(m, RK1828_A_EVENT_INDEX, 0);
	nla_put_s32(m, RK1828_A_EVENT_TEMPERATURE, 96250);
	nla_put_s32(m, RK1828_A_EVENT_TEMP_LIMIT, 95000);
	nla_put_u8(m, RK1828_A_EVENT_THROTTLED, 1);
	err = smi_parse_event(nlmsg_hdr(m), &ev);
	tap_ok(err == 0 && ev.kind == SMI_EV_THERMAL_LIMIT && ev.temp_mc == 96250 &&
	       ev.temp_limit_mc == 95000 && ev.throttled, "thermal-limit: 96.25 C over 95 C");
	nlmsg_free(m);

	m = msg_new(RK1828_CMD_CARD_ADD);
	nla_put_u32(m, RK1828_A_CARD_INDEX, 5);
	nla_put_u32(m, RK1828_A_CARD_ACCEL_MINOR, 6);
	nla_put_string(m, RK1828_A_CARD_DEV_NAME, "3-1:1.0");
	put_uint(m, RK1828_A_CARD_SERIAL, 11);
	err = smi_parse_event(nlmsg_hdr(m), &ev);
	tap_ok(err == 0 && ev.kind == SMI_EV_CARD_ADD && ev.index == 5 &&
	       ev.card.accel_minor == 6 && !strcmp(ev.card.dev_name, "3-1:1.0"),
	       "card-add: card 5 on accel6");
	nlmsg_free(m);

	m = msg_new(RK1828_CMD_MAX + 1);
	nla_put_u32(m, RK1828_A_EVENT_INDEX, 0);
	err = smi_parse_event(nlmsg_hdr(m), &ev);
	tap_ok(err == -ENOMSG, "an unknown command is -ENOMSG, to skip (%d)", err);
	nlmsg_free(m);

	m = msg_new(RK1828_CMD_RESET);
	nla_put_u32(m, RK1828_A_EVENT_REASON, 1);
	err = smi_parse_event(nlmsg_hdr(m), &ev);
	tap_ok(err == -EBADMSG, "an event without card index is refused (%d)", err);
	nlmsg_free(m);
}

/* A controller notification about family @name, as genl_ctrl_event() sends it. */
static struct nl_msg *ctrl_msg(uint8_t cmd, const char *name, bool groups)
{
	struct nl_msg *m = nlmsg_alloc();
	struct nlattr *gs, *g;

	genlmsg_put(m, 0, 0, GENL_ID_CTRL, 0, 0, cmd, 2);
	nla_put_string(m, CTRL_ATTR_FAMILY_NAME, name);
	nla_put_u16(m, CTRL_ATTR_FAMILY_ID, 0x23);
	nla_put_u32(m, CTRL_ATTR_VERSION, 1);
	if (groups) {
		gs = nla_nest_start(m, CTRL_ATTR_MCAST_GROUPS);
		g = nla_nest_start(m, 1);
		nla_put_string(m, CTRL_ATTR_MCAST_GRP_NAME, "other");
		nla_put_u32(m, CTRL_ATTR_MCAST_GRP_ID, 5);
		nla_nest_end(m, g);
		g = nla_nest_start(m, 2);
		nla_put_u32(m, CTRL_ATTR_MCAST_GRP_ID, 9);
		nla_put_string(m, CTRL_ATTR_MCAST_GRP_NAME, "events");
		nla_nest_end(m, g);
		nla_nest_end(m, gs);
	}
	return m;
}

/* nlctrl's notifications that rk1828-smi events follows a reload with. */
static void test_parse_ctrl(void)
{
	struct smi_ctrl c;
	struct nl_msg *m;
	int err;

	m = ctrl_msg(CTRL_CMD_NEWFAMILY, "rk1828", true);
	err = smi_parse_ctrl(nlmsg_hdr(m), &c);
	tap_ok(err == 0 && !c.gone && c.family == 0x23 && c.version == 1 && c.events_grp == 9,
	       "NEWFAMILY rk1828: family 0x%x, version %u, events group %u (not 'other' 5)",
	       c.family, c.version, c.events_grp);
	nlmsg_free(m);

	m = ctrl_msg(CTRL_CMD_DELFAMILY, "rk1828", false);
	err = smi_parse_ctrl(nlmsg_hdr(m), &c);
	tap_ok(err == 0 && c.gone && c.events_grp == 0, "DELFAMILY rk1828: gone");
	nlmsg_free(m);

	m = ctrl_msg(CTRL_CMD_NEWFAMILY, "nl80211", true);
	err = smi_parse_ctrl(nlmsg_hdr(m), &c);
	tap_ok(err == -ENOMSG, "NEWFAMILY of another family: -ENOMSG (%d)", err);
	nlmsg_free(m);

	m = ctrl_msg(CTRL_CMD_NEWOPS, "rk1828", false);
	err = smi_parse_ctrl(nlmsg_hdr(m), &c);
	tap_ok(err == -ENOMSG, "another controller command: -ENOMSG (%d)", err);
	nlmsg_free(m);

	m = nlmsg_alloc();
	genlmsg_put(m, 0, 0, GENL_ID_CTRL, 0, 0, CTRL_CMD_NEWFAMILY, 2);
	nla_put_string(m, CTRL_ATTR_FAMILY_NAME, "rk1828");
	nla_put_u32(m, CTRL_ATTR_FAMILY_ID, 0x23);
	err = smi_parse_ctrl(nlmsg_hdr(m), &c);
	tap_ok(err == -EBADMSG, "a family id of 4 bytes (u16 in the controller) is refused (%d)", err);
	nlmsg_free(m);
}

static struct smi_card sample_card(uint64_t uptime_s, uint64_t busy_s)
{
	struct smi_card c = { .has = SMI_HAS_STATE | SMI_HAS_UPTIME, .index = 0, .serial = 5 };

	c.uptime_ns = uptime_s * 1000000000ULL;
	c.queue[SMI_BUSY_QUEUE].present = c.queue[SMI_BUSY_QUEUE].has_busy = true;
	c.queue[SMI_BUSY_QUEUE].busy_ns = busy_s * 1000000000ULL;
	return c;
}

static void test_busy(void)
{
	struct smi_card a = sample_card(100, 10), b = sample_card(104, 13), c;
	double p;

	p = smi_busy_percent(&a, &b);
	tap_ok(fabs(p - 75.0) < 1e-9, "busy: 3 s of 4 s is 75 %% (got %g)", p);
	tap_ok(smi_busy_percent(NULL, &b) == -1, "busy: no earlier sample is unknown");
	c = sample_card(50, 1);
	tap_ok(smi_busy_percent(&b, &c) == -1, "busy: a card whose uptime went back is unknown");
	c = sample_card(104, 13);
	tap_ok(smi_busy_percent(&b, &c) == -1, "busy: no time between samples is unknown");
	c = sample_card(105, 13);
	c.serial = 6;
	tap_ok(smi_busy_percent(&b, &c) == -1, "busy: another card (serial) is unknown");
	c = sample_card(105, 13);
	c.has &= ~SMI_HAS_UPTIME;
	tap_ok(smi_busy_percent(&b, &c) == -1, "busy: no telemetry is unknown");
	c = sample_card(105, 15);
	p = smi_busy_percent(&b, &c);
	tap_ok(p == 100, "busy: clamped to 100 %% (got %g)", p);
}

/* The table of card_msg(true) and a dead card without telemetry. */
static void test_table_json(void)
{
	struct smi_card cards[2];
	double busy[2] = { 37.4, -1 };
	char *out = NULL, *row1;
	size_t len;
	struct nl_msg *m = card_msg(true);
	FILE *f;
	json_t *j, *qs;

	smi_parse_card(nlmsg_hdr(m), &cards[0]);
	nlmsg_free(m);
	m = card_msg(false);
	smi_parse_card(nlmsg_hdr(m), &cards[1]);
	nlmsg_free(m);
	cards[1].index = 2;
	cards[1].accel_minor = 4;
	cards[1].dead = true;

	f = open_memstream(&out, &len);
	smi_print_table(f, cards, busy, 2);
	fclose(f);
	row1 = strchr(out, '\n') + 1;
	tap_ok(!strncmp(out, "CARD  NODE", 10) && strstr(out, "MEMORY USED / TOTAL") &&
	       strstr(out, "RESETS  STATE"), "table header names the columns");
	tap_ok(!strcmp(row1, "   1  /dev/accel/accel3  usb 5 Gb/s     1.00 GiB / 4.00 GiB   37 %"
			     "    46 C   2.50 W    2       4  ok\n"
			     "   2  /dev/accel/accel4  usb 5 Gb/s     1.00 GiB / 4.00 GiB    N/A"
			     "     N/A      N/A    2       4  dead\n"),
	       "rows: index, node, link, memory used / total, busy, temp, power, contexts, "
	       "resets, state; N/A and dead for a dead card without telemetry");
	if (tap_failed())
		printf("# table:\n%s", out);
	free(out);

	j = smi_card_json(&cards[0], 37.4);
	qs = json_object_get(j, "queues");
	tap_ok(json_integer_value(json_object_get(j, "memory_used_bytes")) == (json_int_t)GIB &&
	       json_integer_value(json_object_get(j, "memory_total_bytes")) == (json_int_t)(4 * GIB) &&
	       json_integer_value(json_object_get(j, "resets")) == 4 &&
	       json_integer_value(json_object_get(j, "p2p_bytes")) == (json_int_t)(3ULL << 33) &&
	       json_integer_value(json_object_get(j, "bounce_bytes")) == 12345 &&
	       json_integer_value(json_object_get(j, "p2p_window_bytes")) == 64 << 20 &&
	       json_integer_value(json_object_get(j, "contexts")) == 2 &&
	       !strcmp(json_string_value(json_object_get(j, "node")), "/dev/accel/accel3") &&
	       !strcmp(json_string_value(json_object_get(j, "protocol_version")), "1.1") &&
	       !strcmp(json_string_value(json_object_get(j, "link")), "usb"),
	       "json: memory used 1 GiB of 4, resets 4, contexts 2, node, protocol 1.1, link usb");
	tap_ok(fabs(json_real_value(json_object_get(j, "temperature_celsius")) - 45.5) < 1e-9 &&
	       fabs(json_real_value(json_object_get(j, "power_watts")) - 2.5) < 1e-9 &&
	       fabs(json_real_value(json_object_get(j, "busy_percent")) - 37.4) < 1e-9 &&
	       fabs(json_real_value(json_object_get(j, "uptime_seconds")) - 400) < 1e-9,
	       "json: 45.5 C, 2.5 W, busy 37.4 %%, uptime 400 s");
	tap_ok(json_array_size(qs) == 3 &&
	       json_is_null(json_object_get(json_array_get(qs, 0), "depth")) &&
	       json_integer_value(json_object_get(json_array_get(qs, 1), "jobs_submitted")) == 210 &&
	       fabs(json_real_value(json_object_get(json_array_get(qs, 2), "busy_seconds")) - 300) <
	       1e-9 && !strcmp(json_string_value(json_object_get(json_array_get(qs, 1), "id")),
			       "compute"),
	       "json: 3 queues, mgmt without depth, compute's jobs, copy busy 300 s");
	json_decref(j);
	j = smi_card_json(&cards[1], -1);
	tap_ok(json_is_null(json_object_get(j, "temperature_celsius")) &&
	       json_is_null(json_object_get(j, "busy_percent")) &&
	       !strcmp(json_string_value(json_object_get(j, "state")), "dead"),
	       "json: no telemetry is null, state dead");
	json_decref(j);
}

static void test_event_lines(void)
{
	struct smi_event ev = {
		.kind = SMI_EV_RESET, .index = 1, .time_ns = 1764590402123456789LL,
		.reason = 4, .resets = 3,
	};
	char line[192];
	json_t *j;

	smi_event_line(line, sizeof(line), &ev);
	tap_ok(!strcmp(line, "2025-12-01T12:00:02.123Z card 1 reset reason=debugfs ctx=- result=0 resets=3"),
	       "reset line: %s", line);
	j = smi_event_json(&ev);
	tap_ok(!strcmp(json_string_value(json_object_get(j, "event")), "reset") &&
	       !strcmp(json_string_value(json_object_get(j, "reason")), "debugfs") &&
	       json_is_null(json_object_get(j, "ctx")) &&
	       json_integer_value(json_object_get(j, "card")) == 1 &&
	       !strcmp(json_string_value(json_object_get(j, "time")), "2025-12-01T12:00:02.123Z"),
	       "reset json: event, reason, ctx null, card, time");
	json_decref(j);
	ev = (struct smi_event){ .kind = SMI_EV_JOB_TIMEOUT, .index = 0, .has_ctx = true,
				 .ctx = 7, .queue = 2, .timeout_ms = 500 };
	smi_event_line(line, sizeof(line), &ev);
	tap_ok(!strcmp(line, "1970-01-01T00:00:00.000Z card 0 job-timeout ctx=7 queue=copy timeout_ms=500"),
	       "job-timeout line: %s", line);
	ev = (struct smi_event){ .kind = SMI_EV_CARD_REMOVE, .index = 3,
				 .card = { .accel_minor = 3, .dev_name = "4-1:1.0", .serial = 9 } };
	smi_event_line(line, sizeof(line), &ev);
	tap_ok(!strcmp(line, "1970-01-01T00:00:00.000Z card 3 card-remove node=/dev/accel/accel3 dev=4-1:1.0 serial=9"),
	       "card-remove line: %s", line);
	tap_ok(!strcmp(smi_reason_name(5), "admin") && !strcmp(smi_reason_name(3), "lost-completion") &&
	       !strcmp(smi_reason_name(0), "unknown") && !strcmp(smi_reason_name(99), "unknown"),
	       "reason names follow the spec, unknown outside it");
}

/* Whether @text has the sample line "NAME{LABELS} VALUE". */
static bool has_sample(const char *text, const char *name, const char *labels, double v)
{
	char want[256];
	const char *p;

	snprintf(want, sizeof(want), "\n%s{%s} ", name, labels);
	p = strstr(text, want);
	return p && fabs(strtod(p + strlen(want), NULL) - v) <= 1e-9 * (fabs(v) + 1);
}

static bool is_counter(const char *key)
{
	static const char *const counters[] = {
		"resets", "energy_joules", "commands", "command_errors", "jobs_submitted",
		"jobs_completed", "jobs_failed", "jobs_timedout", "busy_seconds",
		"p2p_bytes", "bounce_bytes",
	};
	size_t i;

	for (i = 0; i < sizeof(counters) / sizeof(counters[0]); i++)
		if (!strcmp(key, counters[i]))
			return true;
	return false;
}

/*
 * Every numeric (or boolean) key of the JSON is a metric of the same
 * name and value: rk1828_card_KEY[_total] and rk1828_card_queue_KEY[_total].
 */
static void test_metrics(void)
{
	static const char *const not_metrics[] = { "index", "accel_minor", "serial", "busy_percent" };
	struct nl_msg *m = card_msg(true);
	const char *key;
	struct smi_card c;
	char *out = NULL, name[96], labels[96];
	size_t len, i, q;
	int checked = 0, missing = 0;
	json_t *j, *v;
	FILE *f;

	smi_parse_card(nlmsg_hdr(m), &c);
	nlmsg_free(m);
	f = open_memstream(&out, &len);
	smi_metrics(f, &c, 1);
	fclose(f);
	j = smi_card_json(&c, -1);
	json_object_foreach(j, key, v) {
		double x;
		bool skip = false;

		for (i = 0; i < sizeof(not_metrics) / sizeof(not_metrics[0]); i++)
			skip |= !strcmp(key, not_metrics[i]);
		if (skip || !(json_is_number(v) || json_is_boolean(v)))
			continue;
		x = json_is_number(v) ? json_number_value(v) : json_is_true(v);
		snprintf(name, sizeof(name), "rk1828_card_%s%s", key, is_counter(key) ? "_total" : "");
		checked++;
		if (!has_sample(out, name, "card=\"1\",node=\"/dev/accel/accel3\"", x)) {
			printf("# missing: %s = %g\n", name, x);
			missing++;
		}
	}
	for (q = 0; q < json_array_size(json_object_get(j, "queues")); q++) {
		json_t *qo = json_array_get(json_object_get(j, "queues"), q);

		snprintf(labels, sizeof(labels), "card=\"1\",node=\"/dev/accel/accel3\",queue=\"%s\"",
			 json_string_value(json_object_get(qo, "id")));
		json_object_foreach(qo, key, v) {
			if (!json_is_number(v))
				continue;
			snprintf(name, sizeof(name), "rk1828_card_queue_%s%s", key,
				 is_counter(key) ? "_total" : "");
			checked++;
			if (!has_sample(out, name, labels, json_number_value(v))) {
				printf("# missing: %s{%s} = %g\n", name, labels, json_number_value(v));
				missing++;
			}
		}
	}
	tap_ok(checked >= 30 && !missing,
	       "metrics: each of %d numeric JSON values is the metric of its name (%d missing)",
	       checked, missing);
	tap_ok(strstr(out, "rk1828_cards 1\n") &&
	       strstr(out, "rk1828_card_info{card=\"1\",node=\"/dev/accel/accel3\",serial=\"0001828000000001\","
			   "dev_name=\"2-1:1.0\",fw_version=\"rk1828-emu 1.1\",protocol_version=\"1.1\","
			   "link=\"usb\",state=\"ok\"} 1\n") &&
	       strstr(out, "# TYPE rk1828_card_resets_total counter\n") &&
	       strstr(out, "# TYPE rk1828_card_queue_depth gauge\n"),
	       "metrics: card count, info labels, counter and gauge types");
	if (tap_failed())
		printf("# metrics:\n%s", out);
	json_decref(j);
	free(out);
}

/* The build machine has no rk1828 module: smi_open() says so. */
static void test_no_driver(void)
{
	struct smi *s = NULL;
	int err = smi_open(&s);

	if (err == 0) {
		tap_ok(true, "smi_open: the rk1828 family is registered here # SKIP driver loaded");
		smi_close(s);
		return;
	}
	tap_ok(err == -ENOENT && strstr(smi_error(), "'rk1828' not found") && !s,
	       "smi_open without the driver: -ENOENT, \"%s\"", smi_error());
}

int main(void)
{
	test_parse_card();
	test_parse_bad();
	test_parse_events();
	test_parse_ctrl();
	test_busy();
	test_table_json();
	test_event_lines();
	test_metrics();
	test_no_driver();
	return tap_done();
}
