/* SPDX-License-Identifier: MIT */
/*
 * rk1828-smi's output: the card table, the JSON document and the event
 * lines, from struct smi_card / struct smi_event (smi.h). Pure functions
 * of their input (no kernel, no clock), so the host unit tests check them
 * on made-up cards.
 *
 * The JSON keys and the Prometheus metrics of smi_metrics() (which the
 * server's /metrics includes) are made from the same names in this file:
 * JSON "resets" is rk1828_card_resets_total, "memory_used_bytes"
 * rk1828_card_memory_used_bytes, a queue's "jobs_completed"
 * rk1828_card_queue_jobs_completed_total{queue="compute"}, and so on
 * (counters gain "_total"; README.md, "Monitoring").
 */
#ifndef RK1828_SMI_FORMAT_H
#define RK1828_SMI_FORMAT_H

#include <stdio.h>

#include <jansson.h>

#include "smi.h"

/* The queue whose busy time is the card's busy % (EXEC jobs). */
#define SMI_BUSY_QUEUE	1

/**
 * smi_busy_percent() - the card's compute busy share between two samples
 * @prev: the earlier sample of the same card, or NULL
 * @cur: the later one
 *
 * 100 * (compute busy_ns delta) / (uptime_ns delta), clamped to 0..100.
 *
 * Return: the percentage, or -1 when it cannot be known: no earlier
 * sample, no telemetry in either, a different card (serial) or a card
 * that restarted (its uptime went back), or no time between them.
 */
double smi_busy_percent(const struct smi_card *prev, const struct smi_card *cur);

/* smi_link_name() - "usb", "pcie" or "unknown" (the spec's link-type). */
const char *smi_link_name(uint32_t link_type);

/* smi_queue_name() - "mgmt", "compute", "copy" or "unknown". */
const char *smi_queue_name(uint32_t queue);

/* smi_reason_name() - the spec's reset-reason: "timeout" .. "admin", or "unknown". */
const char *smi_reason_name(uint32_t reason);

/* smi_event_name() - the spec's command name: "card-add" .. "thermal-limit". */
const char *smi_event_name(enum smi_event_kind kind);

/**
 * smi_print_table() - the card table, one row per card
 * @f: where to
 * @cards: the cards, @n of them
 * @busy: per card its smi_busy_percent() (-1: unknown, shown "N/A")
 * @n: number of cards
 *
 * Columns: CARD (index), NODE (/dev/accel/accelN), LINK, MEMORY (used /
 * total), BUSY (%), TEMP (Celsius), POWER (W), CTX (open contexts),
 * RESETS, STATE ("ok", "dead" or "throttled"). Values a card does not
 * report are "N/A".
 */
void smi_print_table(FILE *f, const struct smi_card *cards, const double *busy, int n);

/**
 * smi_card_json() - one card as a JSON object
 * @c: the card
 * @busy: its smi_busy_percent(), -1 for unknown (null)
 *
 * Keys: index, node, accel_minor, dev_name, serial, fw_version,
 * protocol_version ("major.minor"), link, link_speed_mbps, state,
 * memory_total_bytes, memory_free_bytes, memory_used_bytes, contexts,
 * resets, busy_percent, temperature_celsius, temperature_limit_celsius,
 * throttled, power_watts, energy_joules, uptime_seconds (null when the
 * card reports no telemetry), and queues: one object per queue with id,
 * commands, command_errors, jobs_submitted, jobs_completed, jobs_failed,
 * jobs_timedout, depth (null on mgmt), busy_seconds (null without
 * telemetry).
 *
 * Return: a new reference, or NULL when memory ran out.
 */
json_t *smi_card_json(const struct smi_card *c, double busy);

/**
 * smi_event_line() - one event as a line of text (no newline)
 * @buf: output
 * @size: its size (160 bytes suffice)
 * @ev: the event
 *
 * "2026-12-01T11:50:02.123Z card 0 reset reason=debugfs ctx=- result=0
 * resets=1": the UTC time of arrival, the card, the event's spec name,
 * then its attributes as key=value.
 */
void smi_event_line(char *buf, size_t size, const struct smi_event *ev);

/**
 * smi_event_json() - one event as a JSON object: time (as in the line),
 * card, event, and the attributes of smi_event_line()
 *
 * Return: a new reference, or NULL.
 */
json_t *smi_event_json(const struct smi_event *ev);

/**
 * smi_metrics() - the cards in the Prometheus text format 0.0.4
 * @f: where to
 * @cards: the cards, @n of them
 * @n: number of cards (0: only the rk1828_cards gauge)
 *
 * One family per JSON key of smi_card_json() (numbers only), named
 * rk1828_card_<key> (gauges) or rk1828_card_<key>_total (counters:
 * resets, energy_joules), and rk1828_card_queue_<key>[_total] with a
 * queue label for the queues' keys; every sample is labelled
 * card="<index>" and node="/dev/accel/accelN". Values a card does not
 * report are left out, as in the JSON they are null.
 */
void smi_metrics(FILE *f, const struct smi_card *cards, int n);

#endif
