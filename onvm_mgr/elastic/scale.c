/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * scale.c -- scale-out and scale-in of a service (move.h), one rank at a
 * time, under mgr.ctl_lock.
 *
 * Out (n -> n + 1): the bucket table is pinned first (the jump table for n,
 * as a moved table: the new instance gets no bucket when it registers),
 * an instance is launched as the configuration says, and once it runs,
 * every old rank moves to it the buckets jump hashing gives rank n for
 * n + 1 ranks -- about 1/(n + 1) of the flows, each with its state.
 * In (n -> n - 1): the last rank moves each of its buckets to the rank
 * jump gives it for n - 1, then its instance is stopped (stop flag: it
 * unregisters, a local standby goes with it).  A move that fails leaves
 * its buckets where they were: scale-in then keeps the instance.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_ring.h>
#include <rte_telemetry.h>

#include "mgr.h"
#include "elastic/move.h"

#define LAUNCH_TIMEOUT_NS (20000ull * 1000 * 1000)
#define STOP_TIMEOUT_NS (10000ull * 1000 * 1000)

enum scale_phase {
	SCALE_IDLE = 0,
	SCALE_PENDING,	 /* asked for: the first step begins at the next pass */
	SCALE_LAUNCHING, /* out: the new instance starting */
	SCALE_MOVING,	 /* moves under way */
	SCALE_STOPPING,	 /* in: the last instance leaving */
};

static const char *const phase_names[] = {
	[SCALE_IDLE] = "idle", [SCALE_PENDING] = "pending", [SCALE_LAUNCHING] = "launching",
	[SCALE_MOVING] = "moving", [SCALE_STOPPING] = "stopping",
};

static struct scale_op {
	uint8_t phase;	 /* enum scale_phase */
	uint8_t method;
	bool out;	 /* the step adds an instance */
	uint16_t target; /* instances asked for */
	uint16_t n;	 /* ranks when this step began */
	uint16_t other;	 /* the instance launched (out) or leaving (in) */
	uint32_t other_gen;
	uint64_t t_start, t_phase;
	int slots[ONVM_MAX_INSTANCES]; /* the step's moves */
	uint32_t n_slots;
	/* last step's figures */
	uint64_t last_ms, last_flows, last_held, last_buckets;
	uint64_t steps_done, steps_failed;
	char last_error[96];
} ops[ONVM_MAX_SERVICES];

static uint32_t scaling; /* services with an op under way */

_Static_assert(MGR_SCALE_REPROCESS == ONVM_MOVE_REPROCESS && MGR_SCALE_BUFFER == ONVM_MOVE_BUFFER,
	       "the configuration's methods are the moves'");

/*
 * The load policy ("scale" of an NF entry): every POLICY_PERIOD_NS the
 * fullest RX ring of the service's instances, in per cent of its size.
 * Above high_pct at every sample for up_ms: one instance more; every ring
 * below low_pct at every sample for down_ms: one less; nothing within
 * cooldown_ms of a change (hysteresis), or beyond min..max.
 */
#define POLICY_PERIOD_NS (100ull * 1000 * 1000)

static struct policy {
	const struct mgr_scale_cfg *cfg;
	uint64_t high_since, low_since; /* 0: the last sample was not */
	uint64_t last_change;
	uint64_t samples, outs, ins, held_cooldown, at_bound;
	uint32_t last_pct;
} policy[ONVM_MAX_SERVICES];
static uint64_t policy_next;
static bool policy_any;

static int
cfg_of(uint16_t service)
{
	for (uint16_t id = 0; id < ONVM_MAX_NFS; id++)
		if (mgr.shm->nfs[id].status == ONVM_NF_RUNNING &&
		    mgr.shm->nfs[id].service_id == service && mgr.nf_priv[id].cfg_index >= 0 &&
		    !mgr_nf_peer_only(&mgr.nf_priv[id])) /* (its instances hold no rank) */
			return mgr.nf_priv[id].cfg_index;
	return -1;
}

static uint16_t
ranks(uint16_t service)
{
	const struct onvm_service *svc = &mgr.shm->services[service];

	return svc->n[__atomic_load_n(&svc->active, __ATOMIC_ACQUIRE) & 1];
}

static int
instance_at(uint16_t service, uint16_t rank)
{
	const struct onvm_service *svc = &mgr.shm->services[service];
	uint32_t a = __atomic_load_n(&svc->active, __ATOMIC_ACQUIRE) & 1;

	return rank < svc->n[a] && svc->inst[a][rank] != ONVM_INST_NONE ? svc->inst[a][rank] : -1;
}

/* The rank bucket b has now (the moved table, or jump's). */
static int
rank_now(uint16_t service, uint32_t b)
{
	int id = mgr_service_pick(mgr.shm, service, b << (32 - ONVM_FLOW_BUCKET_BITS));

	return id < 0 ? -1 : mgr_service_rank(mgr.shm, service, (uint16_t)id);
}

static void
op_fail(struct scale_op *op, uint16_t service, const char *why)
{
	snprintf(op->last_error, sizeof(op->last_error), "%s", why);
	op->steps_failed++;
	op->phase = SCALE_IDLE;
	scaling--;
	MGR_LOG(WARNING, "scale of service %u stopped at %u instances: %s", service,
		ranks(service), why);
}

/* Start the moves of one step: for each pair (from, to) of ranks, the
 * buckets `want` says. */
static int
start_moves(struct scale_op *op, uint16_t service, bool out)
{
	uint16_t n = op->n;

	op->n_slots = 0;
	op->last_buckets = 0;
	for (uint16_t r = 0; r < (out ? n : n - 1); r++) {
		struct mgr_move_req req = {.service = service, .method = op->method};
		uint16_t from = out ? r : (uint16_t)(n - 1), to = out ? n : r;
		int src = instance_at(service, from), dst = instance_at(service, to);
		char err[160];
		uint32_t nb = 0;
		int slot;

		if (src < 0 || dst < 0)
			return -ENOENT;
		for (uint32_t b = 0; b < ONVM_FLOW_BUCKETS; b++) {
			int want = mgr_bucket_rank(b, out ? n + 1 : n - 1);

			if (rank_now(service, b) == from && want == to) {
				req.buckets[b / 64] |= UINT64_C(1) << (b % 64);
				nb++;
			}
		}
		if (nb == 0)
			continue;
		req.src = (uint16_t)src;
		req.dst = (uint16_t)dst;
		slot = mgr_move_start(&req, err, sizeof(err));
		if (slot < 0) {
			MGR_LOG(WARNING, "scale of service %u: move %u -> %u: %s", service, src,
				dst, err);
			return slot;
		}
		op->slots[op->n_slots++] = slot;
		op->last_buckets += nb;
	}
	return 0;
}

int
mgr_scale_start(uint16_t service, uint16_t target, uint8_t method, char *err, size_t errlen)
{
	struct scale_op *op;
	uint16_t n;

	MGR_ASSERT_CTL_LOCKED();
	if (service == 0 || service >= ONVM_MAX_SERVICES || target == 0 ||
	    target > ONVM_MAX_INSTANCES || method > ONVM_MOVE_BUFFER) {
		snprintf(err, errlen, "bad service, instance count (1..%d) or method",
			 ONVM_MAX_INSTANCES);
		return -EINVAL;
	}
	op = &ops[service];
	if (op->phase != SCALE_IDLE) {
		snprintf(err, errlen, "service %u is scaling already (%s)", service,
			 phase_names[op->phase]);
		return -EBUSY;
	}
	n = ranks(service);
	if (n == 0 || cfg_of(service) < 0) {
		snprintf(err, errlen, "service %u has no running instance the manager launched",
			 service);
		return -ENOENT;
	}
	if (mgr.shm->services[service].fixed != 0) {
		snprintf(err, errlen, "service %u is in a remote chain: its ranks are fixed",
			 service);
		return -EOPNOTSUPP;
	}
	op->target = target;
	op->method = method;
	op->last_error[0] = '\0';
	op->phase = SCALE_PENDING;
	op->n_slots = 0;
	op->n = n;
	op->t_start = mgr_now_ns();
	scaling++;
	__atomic_store_n(&mgr_moves_any, true, __ATOMIC_RELEASE);
	mgr_ctl_wake();
	return 0;
}

/* Begin the next step towards the target, or finish. */
static void
step_begin(struct scale_op *op, uint16_t service, uint64_t now)
{
	uint16_t n = ranks(service);
	int cfg = cfg_of(service), ret;

	op->n = n;
	op->t_phase = now;
	op->n_slots = 0;
	op->out = n < op->target;
	if (n == op->target) {
		op->phase = SCALE_IDLE;
		scaling--;
		MGR_LOG(INFO, "service %u: %u instances", service, n);
		return;
	}
	if (n < op->target) {
		static const uint64_t none[ONVM_FLOW_BUCKETS / 64];

		if (cfg < 0) {
			op_fail(op, service, "no launched instance to copy");
			return;
		}
		/* pinned: the newcomer gets buckets only by moves */
		mgr_service_pin(service, true);
		mgr_service_move_buckets(service, none, 0);
		ret = mgr_nf_launch_cfg(cfg);
		if (ret < 0) {
			mgr_service_pin(service, false);
			op_fail(op, service, "the instance could not be launched");
			return;
		}
		op->other = UINT16_MAX; /* known once it holds rank n */
		op->phase = SCALE_LAUNCHING;
		return;
	}
	op->other = (uint16_t)instance_at(service, n - 1);
	op->other_gen = mgr.shm->nfs[op->other].generation;
	if (start_moves(op, service, false) < 0) {
		op_fail(op, service, "a move could not start");
		return;
	}
	op->phase = SCALE_MOVING;
}

/* The step's moves are over: 1 all done, 0 some under way, -1 some failed. */
static int
moves_over(struct scale_op *op)
{
	int ret = 1;

	op->last_flows = op->last_held = 0;
	for (uint32_t i = 0; i < op->n_slots; i++) {
		const struct onvm_move *mv = &mgr.shm->moves[op->slots[i]];
		uint32_t st = __atomic_load_n(&mv->state, __ATOMIC_ACQUIRE);

		op->last_flows += mv->exported_flows;
		/* out: every old instance a src; in: the last one, n - 1 times */
		op->last_held = op->out ? op->last_held + mv->src_flows
					       : RTE_MAX(op->last_held, mv->src_flows);
		if (st == ONVM_MOVE_FAILED)
			ret = ret == 0 ? 0 : -1;
		else if (st != ONVM_MOVE_DONE)
			ret = 0;
	}
	return ret;
}

int
mgr_scale_init(void)
{
	for (int i = 0; i < mgr.cfg.nnfs; i++) {
		const struct mgr_nf_cfg *nc = &mgr.cfg.nfs[i];

		if (!nc->scale.on || policy[nc->service].cfg != NULL)
			continue;
		policy[nc->service].cfg = &nc->scale;
		policy_any = true;
		MGR_LOG(INFO,
			"service %u scales by load: %u..%u instances, up above %u %% for %u ms, "
			"down below %u %% for %u ms, %u ms apart",
			nc->service, nc->scale.min, nc->scale.max, nc->scale.high_pct,
			nc->scale.up_ms, nc->scale.low_pct, nc->scale.down_ms,
			nc->scale.cooldown_ms);
	}
	if (policy_any)
		__atomic_store_n(&mgr_moves_any, true, __ATOMIC_RELEASE);
	return 0;
}

/* One sample of a service's rings, and the decision it may lead to. */
static void
policy_sample(uint16_t s, struct policy *pl, uint64_t now)
{
	const struct mgr_scale_cfg *c = pl->cfg;
	uint16_t n = ranks(s);
	uint32_t worst = 0;
	char err[160];

	if (n == 0 || ops[s].phase != SCALE_IDLE || mgr.shm->shutting_down)
		return;
	for (uint16_t r = 0; r < n; r++) {
		int id = instance_at(s, r);
		const struct rte_ring *ring;

		if (id < 0)
			continue;
		ring = mgr.shm->nfs[id].rx_ring;
		worst = RTE_MAX(worst, rte_ring_count(ring) * 100 / rte_ring_get_size(ring));
	}
	pl->samples++;
	pl->last_pct = worst;
	pl->high_since = worst > c->high_pct ? (pl->high_since ? pl->high_since : now) : 0;
	pl->low_since = worst < c->low_pct ? (pl->low_since ? pl->low_since : now) : 0;
	if (pl->high_since && now - pl->high_since >= (uint64_t)c->up_ms * 1000000) {
		if (n >= c->max) {
			pl->at_bound++;
		} else if (pl->last_change && now - pl->last_change < (uint64_t)c->cooldown_ms * 1000000) {
			pl->held_cooldown++;
		} else if (mgr_scale_start(s, n + 1, c->method, err, sizeof(err)) == 0) {
			pl->outs++;
			pl->last_change = now;
			pl->high_since = 0;
			MGR_LOG(INFO, "service %u: ring %u %% over %u %% for %u ms: scaling out to %u",
				s, worst, c->high_pct, c->up_ms, n + 1);
		}
	} else if (pl->low_since && now - pl->low_since >= (uint64_t)c->down_ms * 1000000) {
		if (n <= c->min) {
			pl->at_bound++;
			pl->low_since = 0; /* (counted once per down_ms) */
		} else if (pl->last_change && now - pl->last_change < (uint64_t)c->cooldown_ms * 1000000) {
			pl->held_cooldown++;
		} else if (mgr_scale_start(s, n - 1, c->method, err, sizeof(err)) == 0) {
			pl->ins++;
			pl->last_change = now;
			pl->low_since = 0;
			MGR_LOG(INFO, "service %u: rings under %u %% for %u ms: scaling in to %u", s,
				c->low_pct, c->down_ms, n - 1);
		}
	}
}

int
mgr_scale_ctl(void)
{
	uint64_t now = mgr_now_ns();

	MGR_ASSERT_CTL_LOCKED();
	if (policy_any && now >= policy_next) {
		policy_next = now + POLICY_PERIOD_NS;
		for (uint16_t s = 1; s < ONVM_MAX_SERVICES; s++)
			if (policy[s].cfg != NULL)
				policy_sample(s, &policy[s], now);
	}
	if (scaling == 0)
		return policy_any ? (int)((policy_next - now) / 1000000) + 1 : 1000;
	for (uint16_t s = 1; s < ONVM_MAX_SERVICES; s++) {
		struct scale_op *op = &ops[s];
		int over;

		switch (op->phase) {
		case SCALE_IDLE:
			break;
		case SCALE_LAUNCHING: {
			/* the newcomer: rank n, running */
			int id = instance_at(s, op->n);

			if (id >= 0 && mgr.shm->nfs[id].status == ONVM_NF_RUNNING) {
				mgr_service_pin(s, false);
				op->other = (uint16_t)id;
				if (start_moves(op, s, true) < 0) {
					op_fail(op, s, "a move could not start");
					break;
				}
				op->phase = SCALE_MOVING;
			} else if (now - op->t_phase > LAUNCH_TIMEOUT_NS) {
				mgr_service_pin(s, false);
				op_fail(op, s, "the new instance did not come up in time");
			}
			break;
		}
		case SCALE_PENDING:
			step_begin(op, s, now);
			break;
		case SCALE_MOVING:
			over = moves_over(op);
			if (over == 0)
				break;
			if (over < 0) {
				op_fail(op, s, "a move failed: its buckets stayed");
				break;
			}
			op->last_ms = (now - op->t_phase) / 1000000;
			if (op->out) { /* the newcomer has its buckets: done */
				op->steps_done++;
				MGR_LOG(INFO,
					"service %u: instance %u added, %" PRIu64 " buckets and %" PRIu64
					" flows moved to it in %" PRIu64 " ms",
					s, op->other, op->last_buckets, op->last_flows, op->last_ms);
				step_begin(op, s, now);
				break;
			}
			/* in: the last instance has nothing left -- unless the list
			 * changed meanwhile (an instance died: buckets went by jump,
			 * maybe to it) -- and it goes */
			{
				int r = mgr_service_rank(mgr.shm, s, op->other);
				const struct onvm_service *sv = &mgr.shm->services[s];
				uint32_t a = __atomic_load_n(&sv->active, __ATOMIC_ACQUIRE) & 1;

				if (r < 0 || mgr.shm->nfs[op->other].generation != op->other_gen ||
				    !sv->moved[a] || sv->rank_buckets[a][r] != 0) {
					op_fail(op, s, "the leaving instance holds buckets again");
					break;
				}
			}
			__atomic_store_n(&mgr.shm->nfs[op->other].stop, 1, __ATOMIC_RELEASE);
			rte_smp_mb();
			mgr_nf_wake(&mgr.shm->nfs[op->other]);
			op->phase = SCALE_STOPPING;
			break;
		case SCALE_STOPPING:
			/* (the leaver by its slot: another instance's death
			 * would shrink the list too) */
			if (mgr_service_rank(mgr.shm, s, op->other) < 0 ||
			    mgr.shm->nfs[op->other].generation != op->other_gen) {
				op->steps_done++;
				op->last_ms = (now - op->t_phase) / 1000000;
				MGR_LOG(INFO,
					"service %u: instance %u removed, %" PRIu64 " buckets and %" PRIu64
					" flows moved from it in %" PRIu64 " ms",
					s, op->other, op->last_buckets, op->last_flows, op->last_ms);
				step_begin(op, s, now);
			} else if (now - op->t_phase > STOP_TIMEOUT_NS) {
				op_fail(op, s, "the last instance did not stop in time");
			}
			break;
		default:
			break;
		}
	}
	return scaling > 0 ? 5 : 1000;
}

/* /onvm/scale,SERVICE,N[,reprocess|buffer]: start; /onvm/scale,SERVICE: status. */
static int
tel_scale(const char *cmd, const char *params, struct rte_tel_data *d)
{
	char buf[64], method[16] = "reprocess", err[160];
	unsigned int svc, target = 0;
	uint8_t how;
	int n, ret = 0;

	(void)cmd;
	if (mgr_tel_words(params, buf, sizeof(buf)) < 0)
		return -EINVAL;
	n = sscanf(buf, "%u %u %15s", &svc, &target, method);
	if (n < 1 || svc == 0 || svc >= ONVM_MAX_SERVICES || mgr_move_method(method, &how) < 0 ||
	    (n >= 2 && (target == 0 || target > ONVM_MAX_INSTANCES))) /* (before a cast) */
		return -EINVAL;
	rte_tel_data_start_dict(d);
	mgr_ctl_lock();
	if (n >= 2) {
		ret = mgr_scale_start((uint16_t)svc, (uint16_t)target, how, err, sizeof(err));
		if (ret < 0)
			rte_tel_data_add_dict_string(d, "error", err);
	}
	{
		const struct scale_op *op = &ops[svc];

		rte_tel_data_add_dict_string(d, "phase", phase_names[op->phase]);
		rte_tel_data_add_dict_uint(d, "instances", ranks((uint16_t)svc));
		rte_tel_data_add_dict_uint(d, "target", op->target);
		rte_tel_data_add_dict_uint(d, "steps_done", op->steps_done);
		rte_tel_data_add_dict_uint(d, "steps_failed", op->steps_failed);
		rte_tel_data_add_dict_uint(d, "last_ms", op->last_ms);
		rte_tel_data_add_dict_uint(d, "last_buckets", op->last_buckets);
		rte_tel_data_add_dict_uint(d, "last_flows", op->last_flows);
		/* (out: what the old instances held; in: what the last held) */
		rte_tel_data_add_dict_uint(d, "last_held", op->last_held);
		rte_tel_data_add_dict_string(d, "last_error", op->last_error);
		if (policy[svc].cfg != NULL) {
			const struct policy *pl = &policy[svc];

			rte_tel_data_add_dict_uint(d, "policy_samples", pl->samples);
			rte_tel_data_add_dict_uint(d, "policy_last_pct", pl->last_pct);
			rte_tel_data_add_dict_uint(d, "policy_outs", pl->outs);
			rte_tel_data_add_dict_uint(d, "policy_ins", pl->ins);
			rte_tel_data_add_dict_uint(d, "policy_held_cooldown", pl->held_cooldown);
			rte_tel_data_add_dict_uint(d, "policy_at_bound", pl->at_bound);
		}
	}
	mgr_ctl_unlock();
	return 0;
}

int
mgr_scale_telemetry_init(void)
{
	return mgr_tel_register(
		       "/onvm/scale", tel_scale,
		       "Scale a service to N instances, flows moved with their state. "
		       "Parameters: SERVICE[,N[,reprocess|buffer]].") ==
			       0
		       ? 0
		       : -1;
}
