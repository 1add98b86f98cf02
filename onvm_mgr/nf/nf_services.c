/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * nf_services.c -- service instance tables and NF slot bookkeeping.
 *
 * A service's instance list is double-buffered: the control side (IPC thread
 * or control thread, under mgr.ctl_lock) writes the inactive copy, flips
 * `active`, then waits for an RCU grace period (rte_rcu_qsbr: the data lcores
 * report quiescence once per loop and go offline while they sleep).  After
 * that no data unit can still be enqueueing to a removed NF, and the next
 * writer may reuse the old copy.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include <rte_common.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring.h>

#include "onvm_nf_batch.h"

#include "nf_ctl.h"
#include "elastic/move.h"
#include "elastic/move_peer.h"

static const char *const status_names[] = {
	[ONVM_NF_FREE] = "free",	 [ONVM_NF_STARTING] = "starting",
	[ONVM_NF_READY] = "ready",	 [ONVM_NF_RUNNING] = "running",
	[ONVM_NF_STOPPING] = "stopping", [ONVM_NF_DEAD] = "dead",
};

const char *
mgr_nf_status_str(uint32_t status)
{
	return status < RTE_DIM(status_names) ? status_names[status] : "unknown";
}

/*
 * Service tables: copy the active instance list, change the copy, publish it,
 * and wait until every data unit has passed a quiescent point, so that no
 * reader still looks at the old copy (the next writer reuses it) and no unit
 * still enqueues to an NF that was just removed.
 */
/* Services whose next instance gets no bucket when it registers (a
 * scale-out's newcomer: moves give it its share, state and all). */
static bool service_pinned[ONVM_MAX_SERVICES];

/* A moved table's buckets per rank, in copy b (entry backpressure reads
 * them: a rank without buckets takes nothing, so its room does not
 * count). */
static void
count_buckets(struct onvm_service *svc, uint32_t b)
{
	memset(svc->rank_buckets[b], 0, sizeof(svc->rank_buckets[b]));
	if (!svc->moved[b])
		return;
	for (uint32_t k = 0; k < ONVM_FLOW_BUCKETS; k++)
		if (svc->rank_of[b][k] < ONVM_MAX_INSTANCES)
			svc->rank_buckets[b][svc->rank_of[b][k]]++;
}

static int
service_update(uint16_t service, uint16_t instance, bool add)
{
	struct onvm_service *svc = &mgr.shm->services[service];
	uint32_t a = svc->active & 1, b = a ^ 1;
	uint16_t n = 0;

	if (svc->fixed > 0) {
		int free_rank = -1;

		/* Ranks stay put: a new instance takes the lowest free one. */
		for (uint16_t r = 0; r < svc->fixed; r++) {
			svc->inst[b][r] = svc->inst[a][r] == instance ? ONVM_INST_NONE
								      : svc->inst[a][r];
			if (svc->inst[b][r] == ONVM_INST_NONE && free_rank < 0)
				free_rank = r;
		}
		if (add) {
			if (free_rank < 0)
				return -ENOSPC;
			svc->inst[b][free_rank] = instance;
		}
		n = svc->fixed;
		goto publish;
	}
	/* Flows reach ranks by jump consistent hashing (router.c), which
	 * keeps every other flow in place only when the rank that changes is
	 * the last: a new instance is appended (not sorted in: a reused,
	 * lower slot id would shift every rank after it), and a leaving one's
	 * rank is taken by the last instance -- its flows and the last's move,
	 * no others.  (At start-up, instances register in slot order: the
	 * same list as sorted.) */
	int at = -1;

	n = svc->n[a];
	for (uint16_t i = 0; i < n; i++) {
		svc->inst[b][i] = svc->inst[a][i];
		if (svc->inst[a][i] == instance)
			at = i;
	}
	svc->moved[b] = svc->moved[a];
	if (svc->moved[a])
		memcpy(svc->rank_of[b], svc->rank_of[a], sizeof(svc->rank_of[b]));
	if (add && at < 0) {
		if (n >= ONVM_MAX_INSTANCES)
			return -ENOSPC;
		svc->inst[b][n++] = instance;
		/* With a moved table, the newcomer gets jump's share for it
		 * -- without their state, as before any move -- unless a
		 * scale-out pinned the table: then moves give it its share. */
		for (uint32_t k = 0; svc->moved[b] && !service_pinned[service] &&
				     k < ONVM_FLOW_BUCKETS; k++)
			if (mgr_bucket_rank(k, n) == n - 1 &&
			    svc->rank_of[b][k] != ONVM_RANK_PEER) /* (on another node) */
				svc->rank_of[b][k] = (uint8_t)(n - 1);
	} else if (!add && at >= 0) {
		svc->inst[b][at] = svc->inst[b][n - 1];
		n--;
		/* Moved buckets follow the same rule: the last rank's take
		 * the leaver's place, the leaver's go where jump puts them
		 * among the ranks left (moved without their state, as a dead
		 * instance's flows always are). */
		for (uint32_t k = 0; svc->moved[b] && k < ONVM_FLOW_BUCKETS; k++) {
			uint8_t r = svc->rank_of[b][k];

			if (r == at)
				svc->rank_of[b][k] = n > 0 ? (uint8_t)mgr_bucket_rank(k, n) : 0;
			else if (r == n)
				svc->rank_of[b][k] = (uint8_t)at;
		}
	}
publish:
	svc->n[b] = n;
	count_buckets(svc, b);
	__atomic_store_n(&svc->active, b, __ATOMIC_RELEASE);
	mgr_rcu_wait();
	return 0;
}

/* Until every data unit has passed a quiescent point (the end of a pass
 * over its units: what it routed before is flushed to the rings). */
void
mgr_rcu_wait(void)
{
	int self = mgr_qsbr_thread_id();

	rte_rcu_qsbr_synchronize(mgr.qsbr, self < 0 ? RTE_QSBR_THRID_INVALID : (unsigned int)self);
}

void
mgr_service_pin(uint16_t service, bool pin)
{
	MGR_ASSERT_CTL_LOCKED();
	service_pinned[service] = pin;
}

/*
 * Flow migration's flip (move_ctl.c): the buckets set in `buckets` go to
 * rank `to` (ONVM_RANK_PEER: to the service's instance on another node,
 * svc->peer_port and peer_inst set before), published like any change of
 * the list, and back from here no unit routes one of them by the old
 * table.
 */
int
mgr_service_move_buckets(uint16_t service, const uint64_t *buckets, uint16_t to)
{
	struct onvm_service *svc = &mgr.shm->services[service];
	uint32_t a = svc->active & 1, b = a ^ 1;
	uint16_t n = svc->n[a];

	MGR_ASSERT_CTL_LOCKED();
	if (to >= n && to != ONVM_RANK_PEER)
		return -ERANGE;
	memcpy(svc->inst[b], svc->inst[a], sizeof(svc->inst[b]));
	for (uint32_t k = 0; k < ONVM_FLOW_BUCKETS; k++) {
		uint8_t r = svc->moved[a] ? svc->rank_of[a][k] : (uint8_t)mgr_bucket_rank(k, n);

		svc->rank_of[b][k] = onvm_bucket_in(buckets, k) ? (uint8_t)to : r;
	}
	svc->moved[b] = 1;
	svc->n[b] = n;
	count_buckets(svc, b);
	__atomic_store_n(&svc->active, b, __ATOMIC_RELEASE);
	mgr_rcu_wait();
	return 0;
}

/*
 * The buckets of `service` routed to its instance on another node
 * (ONVM_RANK_PEER) come back here, each to the rank jump hashing gives it,
 * without their state (as a dead instance's flows): the instance there is
 * gone, or the operator says so.  Returns how many came back.
 */
int
mgr_service_unpeer(uint16_t service)
{
	struct onvm_service *svc = &mgr.shm->services[service];
	uint32_t a = svc->active & 1, b = a ^ 1;
	uint16_t n = svc->n[a];
	int back = 0;

	MGR_ASSERT_CTL_LOCKED();
	if (!svc->moved[a] || n == 0)
		return 0;
	memcpy(svc->inst[b], svc->inst[a], sizeof(svc->inst[b]));
	for (uint32_t k = 0; k < ONVM_FLOW_BUCKETS; k++) {
		svc->rank_of[b][k] = svc->rank_of[a][k];
		if (svc->rank_of[a][k] == ONVM_RANK_PEER) {
			svc->rank_of[b][k] = (uint8_t)mgr_bucket_rank(k, n);
			back++;
		}
	}
	if (back == 0)
		return 0;
	svc->moved[b] = 1;
	svc->n[b] = n;
	count_buckets(svc, b);
	__atomic_store_n(&svc->active, b, __ATOMIC_RELEASE);
	mgr_rcu_wait();
	return back;
}

int
mgr_service_add(uint16_t service, uint16_t instance)
{
	MGR_ASSERT_CTL_LOCKED();
	return service_update(service, instance, true);
}

int
mgr_service_remove(uint16_t service, uint16_t instance)
{
	MGR_ASSERT_CTL_LOCKED();
	return service_update(service, instance, false);
}

void
mgr_nf_slot_note_used(uint16_t id)
{
	MGR_ASSERT_CTL_LOCKED();
	if (id >= mgr.nf_slots_used)
		__atomic_store_n(&mgr.nf_slots_used, id + 1, __ATOMIC_RELEASE);
}

/* The active NF's liveness lock: process-shared and robust, so a waiter
 * learns of the owner's death from the kernel (EOWNERDEAD).  Re-initialised
 * whenever a slot is freed, so a dead owner's state never leaks into reuse. */
void
mgr_nf_alive_lock_init(struct onvm_nf_slot *s)
{
	pthread_mutexattr_t attr;

	pthread_mutexattr_init(&attr);
	pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&s->alive_lock, &attr);
	pthread_mutexattr_destroy(&attr);
}

void
mgr_nf_slot_reset(struct onvm_nf_slot *s)
{
	MGR_ASSERT_CTL_LOCKED();
	s->n_state_req = 0;
	s->state_seq = 0;
	s->state_chunks = 0;
	s->movable = 0;
	s->move_waiting = 0;
	mgr_shared_slot_reset((uint16_t)(s - mgr.shm->nfs));
	mgr_move_peer_forget((uint16_t)(s - mgr.shm->nfs));
	__atomic_store_n(&s->stop, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->sleeping, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->nf_running, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->leaving, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->remote_parked, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->remote_park_ack, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->clock_offset, 0, __ATOMIC_RELAXED);
	s->nd_cut = 0;
	s->marker_seen = 0;
	s->markers = 0;
	s->cut_chunks = 0;
	s->cut_failed = 0;
	s->bad_markers = 0;
	s->first_pkt_ns = 0;
	s->standby_lcore = UINT32_MAX;
	s->standby_failures = 0;
	s->failover_refused = 0;
	s->crash_handoffs = 0;
	s->crash_handoff_ns = 0;
	s->crash_signal = 0;
	s->crash_armed = 0;
	s->crash_wait = 0;
	CPU_ZERO(&s->active_cpus);
	memset(&s->batch, 0, sizeof(s->batch));
	/* The rings are empty (reclamation drained them); align the batch
	 * record with their positions. */
	s->batch.rx_seen = s->rx_ring->cons.tail;
	onvm_batch_set_base(&s->batch, s->tx_ring->prod.tail, 0);
	s->batch.alloc_seen = s->alloc_ring->cons.tail;
	memset(&s->stats, 0, sizeof(s->stats));
	memset(&s->app, 0, sizeof(s->app));
	/* A stateless chain's NF: nothing of the one before may look loaded. */
	__atomic_store_n(&s->store_token, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->store_closed, 0, __ATOMIC_RELAXED);
	memset(&s->store, 0, sizeof(s->store));
	s->reclaimed = 0;
	for (int u = 0; u < MGR_UNIT_MAX; u++) {
		mgr.dp[u].nf_enq[s->instance_id] = 0;
		mgr.dp[u].nf_enq_drop[s->instance_id] = 0;
		mgr.dp[u].nf_deq[s->instance_id] = 0;
	}
}
