/* SPDX-License-Identifier: MIT */
/*
 * The rk1828 telemetry client: cards and events of the generic netlink
 * family "rk1828" (Documentation/netlink/specs/rk1828.yaml, the uapi
 * header drm/rk1828_netlink.h) on libnl-genl-3, in plain C types.
 *
 * smi_parse.c turns card-get replies and event messages into the
 * structs below (checking each attribute's length the way the spec types
 * it); smi_nl.c talks to the kernel: resolve the family, dump or get
 * cards, reset one, subscribe to the "events" group. rk1828-smi
 * (smi_main.c) and its formatting (smi_format.h) sit on top.
 *
 * Conventions: functions return 0 or a negative errno (-ENOENT when the
 * family is not registered, i.e. the driver is not loaded; -EPERM for a
 * command that needs CAP_NET_ADMIN; -ENODEV for an index that names no
 * card); smi_error() gives a message naming the operation, with the
 * kernel's extended-ack text when it sent one. Units are the spec's:
 * bytes, nanoseconds, millidegrees Celsius, milliwatts, microjoules,
 * Mbit/s.
 */
#ifndef RK1828_SMI_H
#define RK1828_SMI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct nlmsghdr;

/* Hardware queues a card reports (the spec's enum queue). */
#define SMI_NUM_QUEUES	3

/**
 * enum smi_has - which optional attributes a card message carried
 * @SMI_HAS_STATE: fw-version .. resets (card-get and card-add)
 * @SMI_HAS_THERMAL: temperature, temp-limit, throttled and power
 * @SMI_HAS_UPTIME: energy and uptime (the card answered a telemetry query)
 */
enum smi_has {
	SMI_HAS_STATE = 1 << 0,
	SMI_HAS_THERMAL = 1 << 1,
	SMI_HAS_UPTIME = 1 << 2,
};

/**
 * struct smi_queue - one hardware queue's counters (attribute set "queue")
 * @present: the card message had this queue's nest
 * @has_jobs: the jobs_* and depth counters are present (not on mgmt)
 * @has_busy: @busy_ns is present (the card reports telemetry)
 * @commands: card commands completed on the queue
 * @command_errors: of those, the ones that failed
 * @jobs_submitted: jobs submitted (compute and copy queues)
 * @jobs_completed: jobs completed without error
 * @jobs_failed: jobs completed with an error
 * @jobs_timedout: jobs whose command timed out
 * @depth: jobs submitted and not completed
 * @busy_ns: time the card reports the queue busy, ns since it started
 */
struct smi_queue {
	bool present, has_jobs, has_busy;
	uint64_t commands, command_errors;
	uint64_t jobs_submitted, jobs_completed, jobs_failed, jobs_timedout;
	uint32_t depth;
	uint64_t busy_ns;
};

/**
 * struct smi_card - one card (attribute set "card")
 * @has: &enum smi_has bits
 * @index: card index (the driver's numbering)
 * @accel_minor: N of /dev/accel/accelN
 * @dev_name: transport device name (USB interface, PCI function)
 * @serial: card serial number
 * @fw_version: firmware version string
 * @protocol_version: card protocol version, (major << 16) | minor
 * @link_type: 1 USB, 2 PCIe (the spec's enum link-type), 0 unknown
 * @link_speed_mbps: negotiated link speed, Mbit/s
 * @mem_total: card memory usable for buffers, bytes
 * @mem_free: card memory not allocated, bytes
 * @contexts: open contexts (files)
 * @dead: the card's state is dead (a queue reset failed)
 * @resets: successful queue resets since the card was probed
 * @p2p_window: bytes of the card's peer window (0: none)
 * @p2p_bytes: bytes the card's COPY jobs moved by peer-to-peer DMA
 * @bounce_bytes: bytes the card's COPY jobs moved through host memory
 * @temp_mc: temperature, millidegrees Celsius
 * @temp_limit_mc: throttle temperature, millidegrees Celsius
 * @throttled: the card is at or above @temp_limit_mc
 * @power_mw: power (mean over the last second), milliwatts
 * @energy_uj: energy since the card started, microjoules
 * @uptime_ns: time since the card started, ns
 * @queue: by queue id: 0 mgmt, 1 compute, 2 copy
 */
struct smi_card {
	unsigned int has;
	uint32_t index, accel_minor;
	char dev_name[64];
	uint64_t serial;
	char fw_version[64];
	uint32_t protocol_version, link_type, link_speed_mbps;
	uint64_t mem_total, mem_free;
	uint32_t contexts;
	bool dead;
	uint64_t resets;
	uint64_t p2p_window, p2p_bytes, bounce_bytes;
	int32_t temp_mc, temp_limit_mc;
	bool throttled;
	uint32_t power_mw;
	uint64_t energy_uj, uptime_ns;
	struct smi_queue queue[SMI_NUM_QUEUES];
};

/**
 * enum smi_event_kind - the events group's messages (spec commands)
 * @SMI_EV_CARD_ADD: a card was probed (@card: identity and state)
 * @SMI_EV_CARD_REMOVE: a card was unplugged (@card: identity only)
 * @SMI_EV_RESET: the card's queues were reset, or a reset failed
 * @SMI_EV_JOB_TIMEOUT: a job's command timed out (a reset follows)
 * @SMI_EV_THERMAL_LIMIT: the card reached its limit or cooled below it
 * @SMI_EV_DRIVER_GONE: not of the events group: the family was
 *	unregistered (the driver was unloaded); smi_next_event() waits for it
 *	to come back
 * @SMI_EV_DRIVER_BACK: not of the events group: the family was registered
 *	again and smi_next_event() joined its events group (@index is 0, the
 *	family's version is in @resets)
 */
enum smi_event_kind {
	SMI_EV_CARD_ADD = 1,
	SMI_EV_CARD_REMOVE,
	SMI_EV_RESET,
	SMI_EV_JOB_TIMEOUT,
	SMI_EV_THERMAL_LIMIT,
	SMI_EV_DRIVER_GONE,
	SMI_EV_DRIVER_BACK,
};

/**
 * struct smi_event - one event (attribute set "event", or "card" for
 *	card-add/card-remove)
 * @kind: &enum smi_event_kind
 * @index: card index
 * @time_ns: CLOCK_REALTIME when it was received (set by smi_nl.c)
 * @reason: reset: the spec's enum reset-reason (1 timeout .. 5 admin)
 * @has_ctx: @ctx is present
 * @ctx: reset: the guilty context; job-timeout: the job's context
 * @result: reset: 0 or the negative errno of a failed reset
 * @resets: reset: the card's successful resets so far
 * @queue: job-timeout: the queue
 * @timeout_ms: job-timeout: the timeout that passed
 * @temp_mc: thermal-limit: temperature, millidegrees Celsius
 * @temp_limit_mc: thermal-limit: the limit, millidegrees Celsius
 * @throttled: thermal-limit: 1 reached, 0 cooled below
 * @card: card-add and card-remove: the card message
 */
struct smi_event {
	enum smi_event_kind kind;
	uint32_t index;
	int64_t time_ns;
	uint32_t reason;
	bool has_ctx;
	uint32_t ctx;
	int32_t result;
	uint64_t resets;
	uint32_t queue, timeout_ms;
	int32_t temp_mc, temp_limit_mc;
	bool throttled;
	struct smi_card card;
};

/* ---- parsing (smi_parse.c; no kernel needed) ---------------------------- */

/**
 * smi_parse_card() - a card-get, card-add or card-remove message
 * @nlh: the netlink message (generic netlink header, then attributes)
 * @card: filled; attributes absent from the message stay zero and their
 *	&enum smi_has bit clear
 *
 * Return: 0; -EBADMSG when the message has no card index, an attribute has
 * the wrong length for its spec type, or a queue nest names no valid queue.
 * Attributes newer than this header are ignored.
 */
int smi_parse_card(const struct nlmsghdr *nlh, struct smi_card *card);

/**
 * smi_parse_event() - one message of the "events" group
 * @nlh: the netlink message
 * @ev: filled (@time_ns is left as it was)
 *
 * Return: 0; -EBADMSG as for smi_parse_card(); -ENOMSG for a command this
 * header does not know (a newer driver's event: skip it).
 */
int smi_parse_event(const struct nlmsghdr *nlh, struct smi_event *ev);

/**
 * struct smi_ctrl - a notification of the generic netlink controller
 *	(nlctrl, group "notify") about the family "rk1828"
 * @gone: CTRL_CMD_DELFAMILY: the family was unregistered (rmmod)
 * @family: CTRL_CMD_NEWFAMILY / NEWMCAST_GRP: the family's new id
 * @version: its version (0 when the message had none)
 * @events_grp: the id of its "events" group, 0 when the message had none
 */
struct smi_ctrl {
	bool gone;
	uint16_t family;
	uint32_t version;
	uint32_t events_grp;
};

/**
 * smi_parse_ctrl() - one message of nlctrl's "notify" group
 * @nlh: the netlink message (CTRL_CMD_* with CTRL_ATTR_* attributes,
 *	include/uapi/linux/genetlink.h)
 * @ctrl: filled
 *
 * Return: 0 for a NEWFAMILY, DELFAMILY or NEWMCAST_GRP of the family
 * "rk1828"; -ENOMSG for any other command or family; -EBADMSG for a
 * malformed message.
 */
int smi_parse_ctrl(const struct nlmsghdr *nlh, struct smi_ctrl *ctrl);

/* ---- the kernel (smi_nl.c) ---------------------------------------------- */

struct smi;

/**
 * smi_open() - open a generic netlink socket and resolve the family
 * @out: the handle, for smi_close()
 *
 * Return: 0; -ENOENT when the family "rk1828" is not registered (the
 * driver is not loaded); another negative errno for socket errors.
 */
int smi_open(struct smi **out);

/* smi_close() - close the handle (NULL is fine). */
void smi_close(struct smi *s);

/* smi_family_version() - the family's version as the kernel reports it. */
unsigned int smi_family_version(const struct smi *s);

/**
 * smi_dump() - card-get dump: every card, ordered by index
 * @s: the handle
 * @cards: out: a malloc()ed array (free() it), NULL when there are none
 * @n: out: number of cards
 *
 * Return: 0 (also with no cards) or a negative errno.
 */
int smi_dump(struct smi *s, struct smi_card **cards, int *n);

/**
 * smi_get() - card-get of one card
 * @s: the handle
 * @index: card index
 * @card: filled
 *
 * Return: 0; -ENODEV for an index that names no card; another errno.
 */
int smi_get(struct smi *s, uint32_t index, struct smi_card *card);

/**
 * smi_reset() - card-reset: reset the card's queues (CAP_NET_ADMIN)
 * @s: the handle
 * @index: card index
 *
 * Return: 0 once the reset worked; -EPERM without CAP_NET_ADMIN; -ENODEV
 * for no such card; the errno of a failed reset (the card is then dead).
 */
int smi_reset(struct smi *s, uint32_t index);

/**
 * smi_subscribe() - join the "events" multicast group
 * @s: the handle; from now on it receives events only (open another
 *	handle for commands)
 *
 * Also joins nlctrl's "notify" group, so that smi_next_event() follows a
 * reload of the driver: it reports %SMI_EV_DRIVER_GONE when the family
 * is unregistered and, once it is registered again, joins the new
 * "events" group and reports %SMI_EV_DRIVER_BACK (events the driver sends
 * before that are missed: only those of the microseconds in between).
 *
 * Return: 0 or a negative errno.
 */
int smi_subscribe(struct smi *s);

/**
 * smi_next_event() - wait for the next event
 * @s: a subscribed handle
 * @ev: filled, with @time_ns the CLOCK_REALTIME of its arrival
 * @timeout_ms: how long to wait, -1 for ever
 *
 * Messages this header does not know are skipped; the family's
 * unregistration and registration come as %SMI_EV_DRIVER_GONE and
 * %SMI_EV_DRIVER_BACK (see smi_subscribe()).
 *
 * Return: 1 with @ev filled, 0 when @timeout_ms passed, -EINTR when a
 * signal interrupted the wait, -ENOBUFS when the socket overflowed
 * (events were lost), another negative errno.
 */
int smi_next_event(struct smi *s, struct smi_event *ev, int timeout_ms);

/* smi_error() - the message of this thread's last failed call. */
const char *smi_error(void);

/* smi_set_error() - set that message (printf format); for smi_*.c only. */
void smi_set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
