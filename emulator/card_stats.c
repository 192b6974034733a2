// SPDX-License-Identifier: MIT
/*
 * Card emulator: the card's own telemetry, the STATS reply (protocol 1.1,
 * struct rk1828_hif_stats in kernel/rk1828_hif.h): uptime, busy time and
 * command count per queue as measured on the host, and a thermal model
 * driven by that load, so that power, energy and temperature move the way
 * a card's sensors would. In timing mode (timing.h) the busy time, jobs,
 * late jobs, power and energy are the timing model's instead; the
 * temperature stays this model's (the queues are busy for the modelled
 * time there too, so it follows the modelled load).
 *
 * The model (Documentation/accel/rk1828/protocol.rst, "STATS"): the power
 * drawn over an interval is EMU_P_IDLE_MW plus EMU_P_COMPUTE_MW times the
 * fraction of the interval the COMPUTE queue was busy plus EMU_P_COPY_MW
 * times COPY's; the reported power is that figure smoothed over about a
 * second (first-order, time constant EMU_POWER_TAU_S), the energy is its
 * integral; the die temperature follows a first-order thermal circuit,
 * ambient EMU_T_AMBIENT_MC plus EMU_R_TH_MC_PER_W per watt at steady
 * state, time constant EMU_THERMAL_TAU_S. The card flags itself throttled
 * once the temperature reaches the limit and clears the flag once it is
 * EMU_T_HYST_MC below it (the emulator only flags it; its speed does not
 * change). The model advances whenever a command completes and at every
 * STATS, by the time since its last step.
 */
#include <endian.h>
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "card_int.h"
#include "rk1828/util.h"
#include "timing.h"

_Static_assert(sizeof(struct rk1828_hif_stats) == 128, "HIF stats are 128 bytes");

static void model_step_locked(struct emu_card *card, int64_t now)
{
	struct emu_telemetry *t = &card->tel;
	double dt = (double)(now - t->last_ns) / 1e9;
	double util[RK1828_HIF_NUM_QUEUES], p_w, a;
	unsigned int i;

	if (dt <= 0)
		return;
	for (i = 0; i < RK1828_HIF_NUM_QUEUES; i++) {
		uint64_t cur = t->busy_ns[i];
		double u;

		if (t->busy_start_ns[i])
			cur += (uint64_t)(now - t->busy_start_ns[i]);
		u = (double)(cur - t->busy_seen_ns[i]) / 1e9 / dt;
		util[i] = u > 1.0 ? 1.0 : u;
		t->busy_seen_ns[i] = cur;
	}
	p_w = (EMU_P_IDLE_MW + EMU_P_COMPUTE_MW * util[RK1828_HIF_QUEUE_COMPUTE] +
	       EMU_P_COPY_MW * util[RK1828_HIF_QUEUE_COPY]) / 1000.0;
	t->energy_j += p_w * dt;
	a = 1.0 - exp(-dt / EMU_POWER_TAU_S);
	t->power_w += (p_w - t->power_w) * a;
	a = 1.0 - exp(-dt / EMU_THERMAL_TAU_S);
	t->temp_c += (EMU_T_AMBIENT_MC / 1000.0 + EMU_R_TH_MC_PER_W / 1000.0 * p_w -
		      t->temp_c) * a;
	if (t->temp_c * 1000.0 >= t->limit_mc)
		t->throttled = true;
	else if (t->temp_c * 1000.0 < t->limit_mc - EMU_T_HYST_MC)
		t->throttled = false;
	t->last_ns = now;
}

void card_stats_init(struct emu_card *card)
{
	struct emu_telemetry *t = &card->tel;
	int64_t now = util_now_ns();

	pthread_mutex_init(&t->lock, NULL);
	t->last_ns = now;
	t->limit_mc = card->cfg.temp_limit_mc ? card->cfg.temp_limit_mc :
		      EMU_T_LIMIT_MC;
	/* A card that has been on for a while: idle steady state. */
	t->power_w = EMU_P_IDLE_MW / 1000.0;
	t->temp_c = (EMU_T_AMBIENT_MC + EMU_R_TH_MC_PER_W * EMU_P_IDLE_MW / 1000.0) /
		    1000.0;
}

void card_stats_destroy(struct emu_card *card)
{
	pthread_mutex_destroy(&card->tel.lock);
}

void card_stats_busy(struct emu_queue *q, int64_t start_ns)
{
	struct emu_telemetry *t = &q->card->tel;

	pthread_mutex_lock(&t->lock);
	t->busy_start_ns[q->idx] = start_ns;
	pthread_mutex_unlock(&t->lock);
}

void card_stats_idle(struct emu_queue *q, int64_t end_ns)
{
	struct emu_telemetry *t = &q->card->tel;

	pthread_mutex_lock(&t->lock);
	if (t->busy_start_ns[q->idx]) {
		t->busy_ns[q->idx] += (uint64_t)(end_ns - t->busy_start_ns[q->idx]);
		t->busy_start_ns[q->idx] = 0;
	}
	t->commands[q->idx]++;
	model_step_locked(q->card, end_ns);
	pthread_mutex_unlock(&t->lock);
}

/* Timing mode: the modelled busy time, jobs, late jobs, power and energy. */
static void timing_stats(struct emu_card *card, struct rk1828_hif_stats *r)
{
	struct emu_timing_stats ts;
	uint64_t jobs = 0, late = 0;
	unsigned int i;

	emu_timing_get_stats(card->timing, &ts);
	r->flags |= htole32(RK1828_HIF_STATS_TIMING |
			    (emu_timing_no_math(card->timing) ? RK1828_HIF_STATS_TIMING_ONLY : 0));
	r->power_mw = htole32((uint32_t)(emu_timing_power_w(card->timing) * 1000.0 + 0.5));
	for (i = 0; i < RK1828_HIF_NUM_QUEUES && i < EMU_TIMING_QUEUES; i++) {
		r->busy_ns[i] = htole64((uint64_t)ts.busy_ns[i]);
		jobs += ts.jobs[i];
		late += ts.late[i];
	}
	r->energy_uj = htole64((uint64_t)(ts.energy_j * 1e6));
	r->late_jobs = htole64(late);
	r->jobs = htole64(jobs);
}

int emu_card_get_hif_stats(struct emu_card *card, struct rk1828_hif_stats *r)
{
	struct emu_telemetry *t = &card->tel;
	int64_t now = util_now_ns();
	uint64_t jobs = 0;
	unsigned int i;

	memset(r, 0, sizeof(*r));
	pthread_mutex_lock(&t->lock);
	model_step_locked(card, now);
	for (i = 0; i < RK1828_HIF_NUM_QUEUES; i++) {
		uint64_t busy = t->busy_ns[i];

		if (t->busy_start_ns[i])
			busy += (uint64_t)(now - t->busy_start_ns[i]);
		r->busy_ns[i] = htole64(busy);
		jobs += t->commands[i];
	}
	r->flags = htole32(RK1828_HIF_STATS_THERMAL |
			   (t->throttled ? RK1828_HIF_STATS_THROTTLED : 0));
	r->power_mw = htole32((uint32_t)lround(t->power_w * 1000.0));
	r->uptime_ns = htole64((uint64_t)(now - card->start_ns));
	r->energy_uj = htole64((uint64_t)llround(t->energy_j * 1e6));
	r->jobs = htole64(jobs);
	r->temp_mc = htole32((uint32_t)(int32_t)lround(t->temp_c * 1000.0));
	r->temp_limit_mc = htole32((uint32_t)t->limit_mc);
	pthread_mutex_unlock(&t->lock);
	if (card->timing)
		timing_stats(card, r);
	return 0;
}
