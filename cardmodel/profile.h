/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * Card profiles: the parameters of the RK1828 cost model (cost.h) in a
 * documented, versioned text file, emulator/profiles/rk1828.conf (built
 * into the programs as their default, card_profile_builtin()). Read by the
 * emulator's timing mode (rk1828-emu --timing PROFILE), the planner's
 * prediction (rk1828-llm plan --predict [--profile PROFILE]) and the fit
 * that produces the file (tools/fit_profile.c).
 *
 * File format (profile format version 1): UTF-8 text, one "key = value"
 * per line; '#' starts a comment (whole line or after the value);
 * blank lines are ignored. Every key below must appear exactly once;
 * unknown keys, repeated keys and malformed values are errors naming the
 * file and line. Numbers are decimal (strtod syntax, an exponent allowed),
 * finite and not negative; rates and bandwidths are positive.
 *
 *   profile.version            1 (this format; a reader refuses others)
 *   profile.name               free text, e.g. "rk1828"
 *   profile.revision           free text: which fit produced the numbers
 *   card.mem_bytes             card memory (RK1828: 5 GiB)
 *   card.mem_usable_bytes      what a runtime may allocate (about 4.9 GB)
 *   card.dram_bytes_per_s      DRAM bandwidth
 *   npu.w4a16_flops_per_s      matmul rate, 4-bit weights, A16
 *   npu.w8a16_flops_per_s      matmul rate, 8-bit weights, A16
 *   npu.f16_flops_per_s        matmul rate, F16 weights, and A16 x A16
 *   npu.f32_flops_per_s        matmul rate, F32 weights
 *   npu.vector_ops_per_s       vector-unit element operations per second
 *   npu.job_ns                 fixed cost of one EXEC job
 *   npu.op_ns                  fixed cost of one operator launch
 *   npu.op_row_ns              cost of one operator on one token row
 *   npu.deltanet_ns            optional (default 0): extra cost of one Gated
 *                              DeltaNet layer in a job
 *   npu.deltanet_row_ns        optional (default 0): extra cost of one Gated
 *                              DeltaNet layer on one token row
 *   link.usb.bytes_per_s       USB 3.0 bulk payload bandwidth, each way
 *   link.usb.latency_ns        USB per-transfer latency
 *   link.pcie.bytes_per_s      PCIe 2.1 x2 DMA payload bandwidth, each way
 *   link.pcie.latency_ns       PCIe per-transfer latency (doorbell to MSI-X)
 *   power.idle_w               card power with the NPU idle, watts
 *   power.busy_w               card power with the NPU busy, watts
 */
#ifndef RK1828_CARDMODEL_PROFILE_H
#define RK1828_CARDMODEL_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "cost.h"

/* The profile format version this code reads and writes. */
#define CARD_PROFILE_VERSION	1

/**
 * struct card_link_params - one host link
 * @bytes_per_s: payload bandwidth, each direction
 * @latency_ns: fixed cost of one transfer
 */
struct card_link_params {
	double bytes_per_s;
	double latency_ns;
};

/**
 * struct card_profile - a parsed profile (see the key list above)
 * @version: profile.version
 * @name: profile.name
 * @revision: profile.revision
 * @mem_bytes: card.mem_bytes
 * @mem_usable_bytes: card.mem_usable_bytes
 * @dram_bw: card.dram_bytes_per_s
 * @mm_rate: npu.{w4a16,w8a16,f16,f32}_flops_per_s by &enum cost_prec
 * @vec_rate: npu.vector_ops_per_s
 * @job_ns: npu.job_ns
 * @op_ns: npu.op_ns
 * @op_row_ns: npu.op_row_ns
 * @dn_ns: npu.deltanet_ns (0 when the file does not give it)
 * @dn_row_ns: npu.deltanet_row_ns (0 when the file does not give it)
 * @link: link.{usb,pcie}.* by &enum cost_link
 * @power_idle_w: power.idle_w
 * @power_busy_w: power.busy_w
 */
struct card_profile {
	uint32_t version;
	char name[64];
	char revision[128];
	uint64_t mem_bytes;
	uint64_t mem_usable_bytes;
	double dram_bw;
	double mm_rate[COST_PREC_N];
	double vec_rate;
	double job_ns;
	double op_ns;
	double op_row_ns;
	double dn_ns;
	double dn_row_ns;
	struct card_link_params link[COST_LINK_N];
	double power_idle_w;
	double power_busy_w;
};

/**
 * card_profile_parse() - parse profile text
 * @p: out (fully written on success, untouched on failure)
 * @text: the file's contents, NUL-terminated
 * @name: file name for messages
 * @err, @errlen: on failure "NAME:LINE: reason" (or "NAME: missing key K")
 *
 * Return: 0, or -1 with @err set.
 */
int card_profile_parse(struct card_profile *p, const char *text, const char *name,
		       char *err, size_t errlen);

/**
 * card_profile_load() - read and parse the profile file @path
 * Return: 0, or -1 with @err "PATH: reason" (unreadable, not a regular
 * file, too big, or
 * any card_profile_parse() error).
 */
int card_profile_load(struct card_profile *p, const char *path, char *err, size_t errlen);

/**
 * card_profile_builtin_text() - the text of emulator/profiles/rk1828.conf
 * as it was when this program was built
 * Return: NUL-terminated text.
 */
const char *card_profile_builtin_text(void);

/**
 * card_profile_builtin() - parse card_profile_builtin_text() into @p
 * Return: 0, or -1 with @err set (only if the built-in file is broken,
 * which tests/unit/test_cardmodel.c rules out).
 */
int card_profile_builtin(struct card_profile *p, char *err, size_t errlen);

/**
 * card_profile_power_w() - modelled average power over a window in which
 * the NPU was busy for @busy_ns of @window_ns
 * Return: watts, between power.idle_w and power.busy_w.
 */
double card_profile_power_w(const struct card_profile *p, double busy_ns, double window_ns);

#endif /* RK1828_CARDMODEL_PROFILE_H */
