/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * units.c -- the per-lcore unit scheduler.  The data units (RX, TX, BFD) are
 * plain poll functions placed on lcores by the config; any subset can share
 * an lcore.  An lcore whose units found no work for idle.spin_us sleeps with
 * exponential back-off up to idle.max_sleep_us (and never past the BFD
 * unit's next deadline).  Sleeping lcores are RCU-offline, so a
 * control-plane grace period never waits for them.  The main lcore also runs
 * the housekeeping (main.c) between polls.
 *
 * With idle.share_nf_cpus, an lcore on a CPU that NFs may run on
 * (nf_defaults.cpus) shares it with them: while it finds no work it yields
 * the CPU (sched_yield) instead of spinning, so an NF that has packets for it
 * runs at once, and it runs as soon as the NF waits (libnf yields too, for
 * room in its TX ring).  At full load the two then take turns a ring-full at
 * a time instead of a scheduler time slice at a time.  Off by default: on a
 * host where several managers' lcores share CPUs with busy NFs, lcores that
 * never nap (the NFs' time is not their idleness) took the CPU from the data
 * path (remote_chain_kill lost frames).
 */
#include <errno.h>
#include <sched.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_pause.h>
#include <rte_rcu_qsbr.h>

#include "mgr.h"

#define HOUSEKEEPING_MS 10

static bool lcore_in_qsbr[RTE_MAX_LCORE];

int
mgr_qsbr_thread_id(void)
{
	unsigned int id = rte_lcore_id();

	return (id < RTE_MAX_LCORE && lcore_in_qsbr[id]) ? (int)id : -1;
}

int
mgr_units_init(void)
{
	static const char *const names[MGR_UNIT_MAX] = {"rx", "tx", "ctrl", "bfd"};
	/* The control unit is a thread of its own (ctl_thread.c), or the only
	 * work of the lcore units.ctrl names: it blocks. */
	static int (*const polls[MGR_UNIT_MAX])(void) = {mgr_rx_poll, mgr_tx_poll, NULL,
							 mgr_bfd_poll};
	size_t sz = rte_rcu_qsbr_get_memsize(RTE_MAX_LCORE);

	mgr.qsbr = rte_zmalloc("onvm_qsbr", sz, RTE_CACHE_LINE_SIZE);
	if (mgr.qsbr == NULL || rte_rcu_qsbr_init(mgr.qsbr, RTE_MAX_LCORE) != 0)
		return -ENOMEM;
	for (int u = 0; u < MGR_UNIT_MAX; u++) {
		int lc = mgr.cfg.unit_lcore[u];

		if (u == MGR_UNIT_CTRL) {
			if (lc < 0)
				continue;
			if (lc == (int)rte_get_main_lcore() || !rte_lcore_is_enabled(lc)) {
				MGR_LOG(ERR, "units.ctrl: lcore %d must be an enabled worker lcore "
					     "of its own (null: a control thread)", lc);
				return -EINVAL;
			}
			for (int o = 0; o < MGR_UNIT_MAX; o++)
				if (o != u && mgr.cfg.unit_lcore[o] == lc) {
					MGR_LOG(ERR, "units.ctrl: lcore %d also hosts units.%s; "
						     "the control loop blocks, so it needs an "
						     "lcore of its own", lc, names[o]);
					return -EINVAL;
				}
			mgr.units[u] = (struct mgr_unit){.name = names[u], .poll = NULL, .lcore = lc};
			continue;
		}
		if (lc < 0)
			lc = rte_get_main_lcore();
		if (!rte_lcore_is_enabled(lc)) {
			MGR_LOG(ERR, "units.%s: lcore %d is not enabled (EAL -l/--lcores)",
				names[u], lc);
			return -EINVAL;
		}
		mgr.units[u] = (struct mgr_unit){.name = names[u], .poll = polls[u], .lcore = lc};
		/* The BFD unit reads no RCU-protected table. */
		if (u != MGR_UNIT_BFD && !lcore_in_qsbr[lc]) {
			rte_rcu_qsbr_thread_register(mgr.qsbr, lc);
			lcore_in_qsbr[lc] = true;
		}
	}
	return 0;
}

static uint32_t
nap_for_bfd(uint32_t us)
{
	uint64_t due = mgr_bfd_next_ns(), now = mgr_now_ns();

	if (due == UINT64_MAX)
		return us;
	if (due <= now)
		return 1;
	return (due - now) / 1000 < us ? (uint32_t)((due - now) / 1000) + 1 : us;
}

static void
idle_sleep(uint32_t us)
{
	struct timespec ts = {.tv_sec = us / 1000000, .tv_nsec = (us % 1000000) * 1000};

	nanosleep(&ts, NULL);
}

int
mgr_units_loop(void *arg)
{
	const unsigned int lcore = rte_lcore_id();
	const bool is_main = lcore == rte_get_main_lcore();
	const uint64_t hz = rte_get_tsc_hz();
	const uint64_t spin = (uint64_t)mgr.cfg.idle_spin_us * hz / 1000000;
	const uint64_t hk_period = HOUSEKEEPING_MS * hz / 1000;
	struct mgr_unit *mine[MGR_UNIT_MAX];
	bool hosts_bfd = false;
	int nunits = 0;
	struct mgr_lcore_stats *ls = &mgr.lcore_stats[lcore];
	uint64_t idle_since = 0, next_hk = 0, last = rte_get_tsc_cycles();
	uint32_t nap_us = 1;
	rte_cpuset_t cpus = rte_lcore_cpuset(lcore);
	/* A sched_yield() this long means another thread had the CPU. */
	const uint64_t yield_ran_other = 5 * hz / 1000000;
	bool shares_cpu;

	(void)arg;
	CPU_AND(&cpus, &cpus, &mgr.nf_active_cpus);
	shares_cpu = mgr.cfg.idle_share_nf_cpus && CPU_COUNT(&cpus) > 0;
	for (int u = 0; u < MGR_UNIT_MAX; u++)
		if (mgr.units[u].poll != NULL && mgr.units[u].lcore == (int)lcore) {
			mine[nunits++] = &mgr.units[u];
			hosts_bfd |= (u == MGR_UNIT_BFD);
		}
	if (nunits == 0 && !is_main)
		return 0;
	if (shares_cpu)
		MGR_LOG(INFO, "lcore %u shares its CPU with NFs: it yields while idle", lcore);
	if (lcore_in_qsbr[lcore])
		rte_rcu_qsbr_thread_online(mgr.qsbr, lcore);

	while (!__atomic_load_n(&mgr.stop_loops, __ATOMIC_ACQUIRE)) {
		uint64_t now;
		int work = 0;

		for (int i = 0; i < nunits; i++)
			work += mine[i]->poll();
		MGR_UNIT_LEAVE(); /* housekeeping and naps are no unit's */
		if (lcore_in_qsbr[lcore])
			rte_rcu_qsbr_quiescent(mgr.qsbr, lcore);
		now = rte_get_tsc_cycles();
		/* The longest pass over this lcore's units (naps excluded): any
		 * blocking call, or preemption, in the data path shows here. */
		if (unlikely(__atomic_load_n(&ls->gap_reset, __ATOMIC_ACQUIRE))) {
			ls->pass_max = 0;
			__atomic_store_n(&ls->gap_reset, 0, __ATOMIC_RELEASE);
		} else if (now - last > ls->pass_max) {
			ls->pass_max = now - last;
		}
		last = now;
		if (is_main && now >= next_hk) {
			mgr_housekeeping(mgr_now_ns());
			next_hk = now + hk_period;
		}
		if (work > 0) {
			idle_since = 0;
			nap_us = 1;
			continue;
		}
		if (idle_since == 0) {
			idle_since = now;
			continue;
		}
		if (now - idle_since < spin) {
			if (!shares_cpu) {
				rte_pause();
				continue;
			}
			/* An NF on this CPU may have work for us.  If it ran in
			 * the meantime, the time was its, not our idleness: a
			 * nap now would leave its output on its ring for up to
			 * idle.max_sleep_us (p99 of 600 us measured). */
			sched_yield();
			if (rte_get_tsc_cycles() - now > yield_ran_other)
				idle_since = rte_get_tsc_cycles();
			continue;
		}
		if (lcore_in_qsbr[lcore])
			rte_rcu_qsbr_thread_offline(mgr.qsbr, lcore);
		idle_sleep(hosts_bfd ? nap_for_bfd(nap_us) : nap_us);
		if (lcore_in_qsbr[lcore])
			rte_rcu_qsbr_thread_online(mgr.qsbr, lcore);
		last = rte_get_tsc_cycles();
		nap_us = RTE_MIN(nap_us * 2, mgr.cfg.idle_sleep_max_us);
	}
	if (lcore_in_qsbr[lcore])
		rte_rcu_qsbr_thread_offline(mgr.qsbr, lcore);
	return 0;
}

