/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * shared.c -- shared state across instances, the manager's part (move.h;
 * struct onvm_shared in onvm_common.h).
 *
 * NFs add to running sums in their slots; the node's agent asks for a
 * batch (/onvm/shared/take): the growth of every slot's sums since the
 * last batch, summed per key, under a batch id that is this manager run's
 * (mgr.remote.run) and a sequence number.  The agent applies a batch to
 * etcd in one transaction that also records the batch id, so a batch is
 * applied once however often it is offered: the same batch is offered
 * again until the agent commits it (/onvm/shared/commit), which also
 * hands back the values etcd holds, for nf_shared_get().  A slot freed
 * (its NF gone) has its last adds carried into the next batch first.
 * Everything here runs under mgr.ctl_lock.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_telemetry.h>

#include "mgr.h"
#include "elastic/move.h"

static struct {
	int64_t taken_sum[ONVM_MAX_NFS][ONVM_SHARED_KEYS];
	uint64_t taken_ops[ONVM_MAX_NFS][ONVM_SHARED_KEYS];
	int64_t carry_sum[ONVM_SHARED_KEYS]; /* taken, not in a batch yet */
	uint64_t carry_ops[ONVM_SHARED_KEYS];
	/* the batch offered and not committed yet (seq 0: none) */
	uint64_t seq, next_seq;
	int64_t delta[ONVM_SHARED_KEYS];
	uint64_t ops[ONVM_SHARED_KEYS];
	/* counters */
	uint64_t batches, offers, commits, stale_commits, ops_committed;
	uint64_t commits_refused; /* malformed /onvm/shared/commit (relaxed atomic) */
} sh = {.next_seq = 1};

static void
collect_slot(uint16_t id)
{
	struct onvm_nf_slot *s = &mgr.shm->nfs[id];

	for (uint32_t k = 0; k < ONVM_SHARED_KEYS; k++) {
		/* (count first: every add counted has its delta in the sum) */
		uint64_t ops = __atomic_load_n(&s->shared_ops[k], __ATOMIC_ACQUIRE);
		int64_t sum = __atomic_load_n(&s->shared_added[k], __ATOMIC_ACQUIRE);

		/* (unsigned: the NF's sum wraps, signed overflow is undefined) */
		sh.carry_sum[k] = (int64_t)((uint64_t)sh.carry_sum[k] + (uint64_t)sum -
					    (uint64_t)sh.taken_sum[id][k]);
		sh.carry_ops[k] += ops - sh.taken_ops[id][k];
		sh.taken_sum[id][k] = sum;
		sh.taken_ops[id][k] = ops;
	}
}

void
mgr_shared_slot_reset(uint16_t id)
{
	struct onvm_nf_slot *s = &mgr.shm->nfs[id];

	MGR_ASSERT_CTL_LOCKED();
	collect_slot(id);
	memset(s->shared_added, 0, sizeof(s->shared_added));
	memset(s->shared_ops, 0, sizeof(s->shared_ops));
	memset(sh.taken_sum[id], 0, sizeof(sh.taken_sum[id]));
	memset(sh.taken_ops[id], 0, sizeof(sh.taken_ops[id]));
}

/* /onvm/shared/take: the batch in flight, or a new one ({} if nothing). */
static int
tel_take(const char *cmd, const char *params, struct rte_tel_data *d)
{
	char key[16], num[24];
	bool any = false;

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	mgr_ctl_lock();
	if (sh.seq == 0) {
		uint16_t used = __atomic_load_n(&mgr.nf_slots_used, __ATOMIC_ACQUIRE);

		for (uint16_t id = 0; id < used; id++)
			collect_slot(id);
		for (uint32_t k = 0; k < ONVM_SHARED_KEYS; k++)
			any |= sh.carry_ops[k] != 0 || sh.carry_sum[k] != 0;
		if (any) {
			sh.seq = sh.next_seq++;
			memcpy(sh.delta, sh.carry_sum, sizeof(sh.delta));
			memcpy(sh.ops, sh.carry_ops, sizeof(sh.ops));
			memset(sh.carry_sum, 0, sizeof(sh.carry_sum));
			memset(sh.carry_ops, 0, sizeof(sh.carry_ops));
			sh.batches++;
		}
	}
	if (sh.seq != 0) {
		sh.offers++;
		rte_tel_data_add_dict_uint(d, "run", mgr.remote.run);
		rte_tel_data_add_dict_uint(d, "batch", sh.seq);
		for (uint32_t k = 0; k < ONVM_SHARED_KEYS; k++) {
			if (sh.ops[k] == 0 && sh.delta[k] == 0)
				continue;
			/* (a string: 22.11's dict ints are 32-bit) */
			snprintf(key, sizeof(key), "d%u", k);
			snprintf(num, sizeof(num), "%" PRId64, sh.delta[k]);
			rte_tel_data_add_dict_string(d, key, num);
			snprintf(key, sizeof(key), "n%u", k);
			rte_tel_data_add_dict_uint(d, key, sh.ops[k]);
		}
	}
	mgr_ctl_unlock();
	return 0;
}

/* A whole decimal number, no sign, that fits 64 bits: 0, or -EINVAL. */
static int
parse_u64(const char *s, const char *stop, uint64_t *out)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno == 0 && end == stop ? 0 : -EINVAL;
}

/* "KEY=VALUE@REVISION": a key below ONVM_SHARED_KEYS, a signed 64-bit
 * value, a revision; 0, or -EINVAL. */
static int
parse_value(const char *tok, uint32_t *k, int64_t *v, uint64_t *rev)
{
	const char *eq = strchr(tok, '='), *at = strchr(tok, '@');
	uint64_t key;
	char *end;

	if (eq == NULL || at == NULL || at < eq || parse_u64(tok, eq, &key) < 0 ||
	    key >= ONVM_SHARED_KEYS || parse_u64(at + 1, tok + strlen(tok), rev) < 0)
		return -EINVAL;
	if (eq[1] != '-' && (eq[1] < '0' || eq[1] > '9'))
		return -EINVAL;
	errno = 0;
	*v = strtoll(eq + 1, &end, 10);
	if (errno != 0 || end != at)
		return -EINVAL;
	*k = (uint32_t)key;
	return 0;
}

/* /onvm/shared/commit,RUN,BATCH[,KEY=VALUE@REVISION]...: batch BATCH of
 * manager run RUN is in etcd (BATCH 0: none was, only values), and these
 * are etcd's values.  A commit of another run (a restarted manager's
 * predecessor) commits no batch of this one.  Anything malformed refuses
 * the whole command (nothing applied, counted): the agent's values are
 * outside input. */
static int
tel_commit(const char *cmd, const char *params, struct rte_tel_data *d)
{
	char buf[1024], *save = NULL, *tok;
	uint64_t run, batch, rev[ONVM_SHARED_KEYS];
	int64_t val[ONVM_SHARED_KEYS];
	bool has[ONVM_SHARED_KEYS] = {false};

	(void)cmd;
	if (params == NULL || strlen(params) >= sizeof(buf))
		goto refused;
	snprintf(buf, sizeof(buf), "%s", params);
	tok = strtok_r(buf, ",", &save);
	if (tok == NULL || parse_u64(tok, tok + strlen(tok), &run) < 0)
		goto refused;
	tok = strtok_r(NULL, ",", &save);
	if (tok == NULL || parse_u64(tok, tok + strlen(tok), &batch) < 0)
		goto refused;
	while ((tok = strtok_r(NULL, ",", &save)) != NULL) {
		uint32_t k;
		int64_t v;
		uint64_t r;

		if (parse_value(tok, &k, &v, &r) < 0 || has[k])
			goto refused;
		has[k] = true;
		val[k] = v;
		rev[k] = r;
	}
	rte_tel_data_start_dict(d);
	mgr_ctl_lock();
	if (run != mgr.remote.run)
		batch = batch != 0 ? UINT64_MAX : 0; /* (stale, if any) */
	if (batch != 0 && batch == sh.seq) {
		for (uint32_t k = 0; k < ONVM_SHARED_KEYS; k++)
			sh.ops_committed += sh.ops[k];
		sh.seq = 0;
		sh.commits++;
	} else if (batch != 0) {
		sh.stale_commits++;
	}
	for (uint32_t k = 0; k < ONVM_SHARED_KEYS; k++) {
		if (!has[k])
			continue;
		/* (etcd's, whatever the revision: an etcd restored from a
		 * backup counts revisions from lower) */
		mgr.shm->shared.revision[k] = rev[k];
		__atomic_store_n(&mgr.shm->shared.value[k], val[k], __ATOMIC_RELEASE);
	}
	rte_tel_data_add_dict_uint(d, "committed", sh.commits);
	mgr_ctl_unlock();
	return 0;
refused:
	__atomic_fetch_add(&sh.commits_refused, 1, __ATOMIC_RELAXED);
	return -EINVAL;
}

/* /onvm/shared: values, what is not in etcd yet, counters. */
static int
tel_shared(const char *cmd, const char *params, struct rte_tel_data *d)
{
	char key[16], num[24];

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	mgr_ctl_lock();
	for (uint32_t k = 0; k < ONVM_SHARED_KEYS; k++) {
		if (mgr.shm->shared.revision[k] == 0 && sh.carry_ops[k] == 0)
			continue;
		snprintf(key, sizeof(key), "v%u", k);
		snprintf(num, sizeof(num), "%" PRId64, mgr.shm->shared.value[k]);
		rte_tel_data_add_dict_string(d, key, num);
	}
	rte_tel_data_add_dict_uint(d, "in_flight", sh.seq);
	rte_tel_data_add_dict_uint(d, "batches", sh.batches);
	rte_tel_data_add_dict_uint(d, "offers", sh.offers);
	rte_tel_data_add_dict_uint(d, "commits", sh.commits);
	rte_tel_data_add_dict_uint(d, "stale_commits", sh.stale_commits);
	rte_tel_data_add_dict_uint(d, "commits_refused", sh.commits_refused);
	rte_tel_data_add_dict_uint(d, "ops_committed", sh.ops_committed);
	mgr_ctl_unlock();
	return 0;
}

int
mgr_shared_telemetry_init(void)
{
	if (mgr_tel_register("/onvm/shared", tel_shared,
				       "Shared state: committed values, batches. No parameters.") != 0 ||
	    mgr_tel_register("/onvm/shared/take", tel_take,
				       "The agent: the batch of shared-state adds to apply.") != 0 ||
	    mgr_tel_register("/onvm/shared/commit", tel_commit,
				       "The agent: RUN,BATCH[,KEY=VALUE@REVISION]... applied.") != 0)
		return -1;
	return 0;
}
