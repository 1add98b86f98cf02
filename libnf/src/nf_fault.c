/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * nf_fault.c -- failure injection: a hook called at every fault point of a
 * batch's end (tests kill the NF there), set by the NF or from the
 * environment (ONVM_NF_FAULT).
 */
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_ring.h>

#include "nf_private.h"

/* The end of a batch with the test fault hook called at every fault point. */
static void
fault_step(void *arg, enum nf_state_step step, uint32_t k)
{
	struct nf_ctx *nf = arg;

	/* Just past the commit point, before the replica holds the batch. */
	(void)k;
	if (step == NF_STATE_STEP_COMMIT_PUBLISHED)
		nf->fault(nf, NF_FAULT_MID_COMMIT);
}

uint32_t
nfl_fault_batch_end(struct nf_ctx *nf, uint32_t n)
{
	struct onvm_nf_batch *b = &nf->slot->batch;
	uint32_t half = b->held_n / 2;

	nf->fault(nf, NF_FAULT_PROCESSED);
	if (nf->has_state)
		nf_state_set_step_hook(&nf->state, fault_step, nf);
	nfl_batch_commit(nf);
	if (nf->has_state)
		nf_state_set_step_hook(&nf->state, NULL, NULL);
	nf->fault(nf, NF_FAULT_COMMITTED);
	/* Emit the first half, then the rest: a crash in between leaves part
	 * of the batch emitted. */
	while (onvm_batch_emitted(b, nf->tx) < half)
		if (rte_ring_sp_enqueue(nf->tx, b->held[onvm_batch_emitted(b, nf->tx)]) != 0) {
			if (__atomic_load_n(&nf->slot->stop, __ATOMIC_ACQUIRE))
				return n;
			nfl_rt_leave(nf);
			sched_yield();
		}
	nf->fault(nf, NF_FAULT_MID_EMIT);
	nfl_batch_emit(nf);
	return n;
}

void
nf_set_fault_hook(struct nf_ctx *nf, nf_fault_fn fn)
{
	nf->fault = fn;
}

/*
 * Failure injection for any NF, from the environment (NFs inherit the
 * manager's): ONVM_NF_FAULT=NAME:POINT:N makes the first incarnation of the
 * NF named NAME SIGKILL itself at fault POINT (processed, mid_commit,
 * committed, mid_emit, mid_alloc, fini) once it has received N or more
 * packets; POINT "registered" instead stalls it N milliseconds after it
 * registers, before it takes its liveness lock; POINT "promoting" kills every
 * standby of NAME inside its promotion, and "parking" stalls every standby
 * N milliseconds before it parks.  The integration tests use it
 * to fail an NF at a chosen point of a trace; a promoted standby runs clean.
 */
static const char *const fault_point_names[] = {
	[NF_FAULT_PROCESSED] = "processed", [NF_FAULT_MID_COMMIT] = "mid_commit",
	[NF_FAULT_COMMITTED] = "committed", [NF_FAULT_MID_EMIT] = "mid_emit",
	[NF_FAULT_MID_ALLOC] = "mid_alloc", [NF_FAULT_REGISTERED] = "registered",
	[NF_FAULT_FINI] = "fini", [NF_FAULT_PROMOTING] = "promoting",
	[NF_FAULT_PARKING] = "parking",
};
static int env_fault_point = -1;
static uint64_t env_fault_at;

static void
env_fault_hook(struct nf_ctx *nf, enum nf_fault_point point)
{
	if ((int)point != env_fault_point)
		return;
	if (point == NF_FAULT_REGISTERED || point == NF_FAULT_PARKING) {
		struct timespec ts = {.tv_sec = env_fault_at / 1000,
				      .tv_nsec = (env_fault_at % 1000) * 1000000};

		NF_LOG(WARNING, "ONVM_NF_FAULT: stalling %" PRIu64 " ms before %s", env_fault_at,
		       point == NF_FAULT_PARKING ? "parking" : "the liveness lock");
		nanosleep(&ts, NULL);
		return;
	}
	if (nf->slot->stats.rx >= env_fault_at) {
		NF_LOG(WARNING, "ONVM_NF_FAULT: dying at %s after %" PRIu64 " packets",
		       fault_point_names[point], nf->slot->stats.rx);
		kill(getpid(), SIGKILL);
	}
}

void
nfl_fault_env_setup(struct nf_ctx *nf)
{
	const char *v = getenv("ONVM_NF_FAULT");
	char name[ONVM_NAME_LEN], point[16];
	unsigned long long at;

	if (v == NULL || sscanf(v, "%31[^:]:%15[^:]:%llu", name, point, &at) != 3 ||
	    strcmp(name, nf->name) != 0)
		return;
	for (int i = 0; i < (int)RTE_DIM(fault_point_names); i++)
		if (strcmp(point, fault_point_names[i]) == 0)
			env_fault_point = i;
	if (env_fault_point < 0) {
		NF_LOG(ERR, "ONVM_NF_FAULT: unknown point '%s'", point);
		return;
	}
	/* "promoting" and "parking" fail standbys; every other point the first
	 * incarnation only, so a promoted standby runs clean. */
	if (nf->standby !=
	    (env_fault_point == NF_FAULT_PROMOTING || env_fault_point == NF_FAULT_PARKING)) {
		env_fault_point = -1;
		return;
	}
	env_fault_at = at;
	nf_set_fault_hook(nf, env_fault_hook);
	NF_LOG(WARNING, "ONVM_NF_FAULT: armed at %s (%llu)", point, at);
}
