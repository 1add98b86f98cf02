/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * main.c -- onvm_mgr start-up, the per-lcore unit loop, and shutdown.
 *
 * Shape (as DPDK's examples): parse options and the config -> EAL ->
 * tables, pool, rings, ports -> launch NFs and wait for them to register ->
 * start ports -> run the units on their lcores -> on SIGINT/SIGTERM drain,
 * stop NFs, stop ports, remove runtime files.
 *
 * The data units (RX, TX, BFD) are plain poll functions placed on lcores by
 * the config; any subset can share an lcore.  An lcore whose units found no
 * work for idle.spin_us sleeps with exponential back-off up to
 * idle.max_sleep_us.  Sleeping lcores are RCU-offline, so a control-plane
 * grace period never waits for them.  The NF life cycle (launch, death,
 * reclamation) runs in a control thread of its own (ctl_thread.c), so the
 * data lcores only ever do non-blocking work.
 */
#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_memzone.h>
#include <rte_pdump.h>
#include <rte_ring.h>
#include <rte_string_fns.h>

#include "onvm_cpuset.h"
#include "onvm_nf_batch.h"

#include "mgr.h"

#define HOUSEKEEPING_MS 10
#define DRAIN_TIMEOUT_MS 1000
#define NF_STOP_TIMEOUT_MS 3000
#define NF_KILL_TIMEOUT_MS 2000

static bool lcore_in_qsbr[RTE_MAX_LCORE];

int
mgr_qsbr_thread_id(void)
{
	unsigned int id = rte_lcore_id();

	return (id < RTE_MAX_LCORE && lcore_in_qsbr[id]) ? (int)id : -1;
}

static void
on_signal(int sig)
{
	(void)sig;
	mgr.force_quit = true;
}

/* ---- EAL arguments -------------------------------------------------------------- */

static bool
argv_has(int argc, char **argv, const char *const *opts)
{
	for (int i = 0; i < argc; i++)
		for (const char *const *o = opts; *o != NULL; o++)
			if (strncmp(argv[i], *o, strlen(*o)) == 0)
				return true;
	return false;
}

/* Config first, so config ports get the first port ids; the command line's
 * EAL options after it, so they win where the EAL takes the last value. */
static int
build_eal_argv(int cli_argc, char **cli_argv, char *prog, char **out, int max)
{
	static const char *const pci_opts[] = {"--no-pci", "-a", "--allow", "-b", "--block", NULL};
	static const char *const lcore_opts[] = {"-l", "--lcores", "-c", NULL};
	static const char *const prefix_opts[] = {"--file-prefix", NULL};
	static const char *const base_opts[] = {"--base-virtaddr", NULL};
	static char lcores[80], prefix[96];
	int n = 0;

	if (cli_argc + mgr.cfg.n_eal + 2 * mgr.cfg.nports + 9 > max)
		return -E2BIG;
	out[n++] = prog;
	for (int i = 0; i < mgr.cfg.n_eal; i++)
		out[n++] = mgr.cfg.eal_args[i];
	if (mgr.cfg.lcores[0] != '\0' && !argv_has(cli_argc, cli_argv, lcore_opts) &&
	    !argv_has(mgr.cfg.n_eal, mgr.cfg.eal_args, lcore_opts)) {
		snprintf(lcores, sizeof(lcores), "--lcores=%s", mgr.cfg.lcores);
		out[n++] = lcores;
	}
	if (mgr.cfg.file_prefix[0] != '\0' && !argv_has(cli_argc, cli_argv, prefix_opts) &&
	    !argv_has(mgr.cfg.n_eal, mgr.cfg.eal_args, prefix_opts)) {
		snprintf(prefix, sizeof(prefix), "--file-prefix=%s", mgr.cfg.file_prefix);
		out[n++] = prefix;
	}
	for (int i = 0; i < mgr.cfg.nports; i++) {
		out[n++] = "--vdev";
		out[n++] = mgr.cfg.ports[i].dev;
	}
	for (int i = 0; i < cli_argc; i++)
		out[n++] = cli_argv[i];
	/* The host's own NIC must never be probed: no PCI unless allow-listed. */
	if (!argv_has(n, out, pci_opts))
		out[n++] = "--no-pci";
	/* Map DPDK memory far above where libraries, heaps and sanitizer shadow
	 * memory go, so every secondary (NFs, dumpcap) finds the same addresses
	 * free; otherwise secondaries fail at random, always under ASan. */
	if (!argv_has(n, out, base_opts))
		out[n++] = "--base-virtaddr=0x200000000000";
	out[n] = NULL;
	return n;
}

/* ---- tables, pool, rings -------------------------------------------------------- */

static int
init_shared(void)
{
	static const struct rte_mbuf_dynfield meta_desc = {
		.name = ONVM_PKT_META_DYNFIELD,
		.size = sizeof(struct onvm_pkt_meta),
		.align = __alignof__(struct onvm_pkt_meta),
	};
	const struct rte_memzone *mz;

	mz = rte_memzone_reserve(ONVM_SHM_NAME, sizeof(struct onvm_shm), rte_socket_id(),
				 RTE_MEMZONE_SIZE_HINT_ONLY);
	if (mz == NULL) {
		MGR_LOG(ERR, "cannot reserve %s: %s", ONVM_SHM_NAME, rte_strerror(rte_errno));
		return -rte_errno;
	}
	mgr.shm = mz->addr;
	memset(mgr.shm, 0, sizeof(*mgr.shm));
	mgr.shm->magic = ONVM_SHM_MAGIC;
	mgr.shm->version = ONVM_SHM_VERSION;
	mgr.shm->mgr_pid = getpid();
	mgr.shm->mgr_max_nap_us = mgr.cfg.idle_sleep_max_us;
	rte_strscpy(mgr.shm->node_name, mgr.cfg.node_name, sizeof(mgr.shm->node_name));

	mgr.dyn_off = rte_mbuf_dynfield_register(&meta_desc);
	if (mgr.dyn_off < 0) {
		MGR_LOG(ERR, "cannot register the packet metadata field: %s",
			rte_strerror(rte_errno));
		return -rte_errno;
	}
	mgr.shm->dynfield_offset = mgr.dyn_off;

	mgr.pool = rte_pktmbuf_pool_create(ONVM_PKTMBUF_POOL_NAME, mgr.cfg.nb_mbufs,
					   mgr.cfg.mbuf_cache, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					   rte_socket_id());
	if (mgr.pool == NULL) {
		MGR_LOG(ERR, "cannot create a pool of %u mbufs: %s (reserve more hugepages?)",
			mgr.cfg.nb_mbufs, rte_strerror(rte_errno));
		return -rte_errno;
	}

	if (mgr.cfg.state_pool_mb > 0) {
		uint64_t bytes = (uint64_t)mgr.cfg.state_pool_mb << 20;

		mgr.state_mz = rte_memzone_reserve_aligned(MGR_STATE_POOL_NAME, bytes,
							   rte_socket_id(), 0,
							   MGR_STATE_POOL_ALIGN);
		if (mgr.state_mz == NULL) {
			MGR_LOG(ERR, "cannot reserve %u MB for NF state (state.pool_mb): %s",
				mgr.cfg.state_pool_mb, rte_strerror(rte_errno));
			return -rte_errno;
		}
		mgr_state_pool_init(&mgr.state_pool, mgr.state_mz->len);
	}

	for (uint16_t id = 0; id < ONVM_MAX_NFS; id++) {
		struct onvm_nf_slot *s = &mgr.shm->nfs[id];
		char name[RTE_RING_NAMESIZE];

		s->instance_id = id;
		s->standby_lcore = UINT32_MAX;
		mgr_nf_alive_lock_init(s);
		snprintf(name, sizeof(name), ONVM_NF_RX_RING_FMT, id);
		s->rx_ring = rte_ring_create(name, mgr.cfg.nf_ring_size, rte_socket_id(),
					     RING_F_SC_DEQ);
		snprintf(name, sizeof(name), ONVM_NF_TX_RING_FMT, id);
		s->tx_ring = rte_ring_create(name, mgr.cfg.nf_ring_size, rte_socket_id(),
					     RING_F_SP_ENQ | RING_F_SC_DEQ);
		snprintf(name, sizeof(name), ONVM_NF_ALLOC_RING_FMT, id);
		s->alloc_ring = rte_ring_create(name, ONVM_NF_ALLOC_RING_SIZE, rte_socket_id(),
						RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (s->rx_ring == NULL || s->tx_ring == NULL || s->alloc_ring == NULL) {
			MGR_LOG(ERR, "cannot create NF rings: %s", rte_strerror(rte_errno));
			return -rte_errno;
		}
		/* The crash arithmetic (onvm_nf_batch.h) reads these rings'
		 * head/tail pairs: make sure they have the shape it assumes. */
		if (onvm_nf_rings_check(s) < 0) {
			MGR_LOG(ERR, "NF rings of slot %u do not have the sync modes the crash "
				     "accounting relies on (SC RX, SP/SC TX and alloc)", id);
			return -EPROTO;
		}
	}
	return 0;
}

/*
 * Where NFs run: the online CPUs (holes and all, any number) and the
 * config's lists give the actives' and standbys' CPU sets; every slot gets an
 * lcore id the manager does not use; and the CPUs of the manager's own data
 * lcores are published, so a standby never waits at real-time priority there.
 */
static int
init_nf_placement(void)
{
	static bool mgr_lcore[RTE_MAX_LCORE];
	unsigned int lc, n;
	cpu_set_t online;

	if (onvm_cpus_online(&online) < 0) {
		MGR_LOG(ERR, "cannot read the online CPUs: %s", strerror(errno));
		return -errno;
	}
	onvm_nf_cpus(&online, &mgr.cfg.nf_cpu_set, &mgr.cfg.nf_standby_cpu_set,
		     &mgr.nf_active_cpus, &mgr.nf_standby_cpus);
	CPU_ZERO(&mgr.shm->mgr_cpus);
	RTE_LCORE_FOREACH(lc) {
		rte_cpuset_t cpus = rte_lcore_cpuset(lc);

		mgr_lcore[lc] = true;
		if (lc != (unsigned int)mgr.cfg.unit_lcore[MGR_UNIT_CTRL])
			CPU_OR(&mgr.shm->mgr_cpus, &mgr.shm->mgr_cpus, &cpus);
	}
	n = onvm_nf_lcore_table(mgr_lcore, RTE_MAX_LCORE, mgr.nf_lcore, ONVM_MAX_NFS);
	if (n < ONVM_MAX_NFS)
		MGR_LOG(WARNING, "only %u of %d NF slots have an lcore id (DPDK has %d lcore ids, "
				 "the manager uses %u): NFs beyond that cannot be launched",
			n, ONVM_MAX_NFS, RTE_MAX_LCORE, rte_lcore_count());
	return 0;
}

/* Copy chains, rules and default chains from the config into the tables. */
static int
init_chains(void)
{
	struct onvm_shm *shm = mgr.shm;

	for (int i = 0; i < mgr.cfg.nchains; i++) {
		const struct mgr_chain_cfg *cc = &mgr.cfg.chains[i];
		struct onvm_chain *c = &shm->chains[i];

		mgr_chain_set(c, cc->name, cc->services, cc->len, cc->exit_port);
		if (cc->exit_port >= mgr.nb_ports) {
			MGR_LOG(ERR, "chain '%s': exit port %d does not exist", cc->name,
				cc->exit_port);
			return -EINVAL;
		}
		if (cc->ingress_port >= 0) {
			if (cc->ingress_port >= mgr.nb_ports) {
				MGR_LOG(ERR, "chain '%s': ingress port %d does not exist",
					cc->name, cc->ingress_port);
				return -EINVAL;
			}
			shm->ports[cc->ingress_port].default_chain = i;
			shm->ports[cc->ingress_port].has_default_chain = 1;
		}
	}
	for (int i = 0; i < mgr.cfg.nrules; i++) {
		const struct mgr_rule_cfg *rc = &mgr.cfg.rules[i];
		struct onvm_flow_rule *r = &shm->rules[i];

		*r = (struct onvm_flow_rule){
			.src_ip = rc->src_ip, .src_mask = rc->src_mask,
			.dst_ip = rc->dst_ip, .dst_mask = rc->dst_mask,
			.sport_lo = rc->sport_lo, .sport_hi = rc->sport_hi,
			.dport_lo = rc->dport_lo, .dport_hi = rc->dport_hi,
			.proto = rc->proto,
			.in_port = rc->in_port < 0 ? 0xff : rc->in_port,
			.chain_id = rc->chain,
		};
	}
	shm->nb_rules = mgr.cfg.nrules;
	if (mgr.cfg.default_chain >= 0) {
		shm->default_chain = mgr.cfg.default_chain;
		shm->has_default_chain = 1;
	}
	return 0;
}

/* ---- unit scheduling ------------------------------------------------------------ */

static int
init_units(void)
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

static bool
all_queues_empty(void)
{
	for (uint16_t id = 0; id < ONVM_MAX_NFS; id++) {
		const struct onvm_nf_slot *s = &mgr.shm->nfs[id];

		if (s->status == ONVM_NF_FREE)
			continue;
		if (!rte_ring_empty(s->rx_ring) || !rte_ring_empty(s->tx_ring) ||
		    !onvm_batch_drained(s))
			return false;
	}
	for (uint16_t p = 0; p < mgr.nb_ports; p++)
		if (!rte_ring_empty(mgr.shm->ports[p].tx_ring))
			return false;
	return true;
}

static bool
all_nfs_gone(void)
{
	for (uint16_t id = 0; id < ONVM_MAX_NFS; id++)
		if (__atomic_load_n(&mgr.shm->nfs[id].status, __ATOMIC_ACQUIRE) != ONVM_NF_FREE)
			return false;
	return true;
}

/*
 * Shutdown, as a state machine stepped from the main lcore's housekeeping so
 * the units keep running (the TX unit forwards what NFs still emit, the
 * control unit reclaims NFs as they exit).
 */
static void
shutdown_step(uint64_t now)
{
	static enum { RUNNING, DRAINING, STOPPING_NFS, KILLING } phase = RUNNING;
	static uint64_t t0;

	switch (phase) {
	case RUNNING:
		if (!mgr.force_quit)
			return;
		MGR_LOG(INFO, "shutting down: draining");
		__atomic_store_n(&mgr.rx_stopped, true, __ATOMIC_RELAXED);
		phase = DRAINING;
		t0 = now;
		return;
	case DRAINING:
		if (!all_queues_empty() && now - t0 < DRAIN_TIMEOUT_MS * 1000000ULL)
			return;
		mgr_nf_stop_all();
		phase = STOPPING_NFS;
		t0 = now;
		return;
	case STOPPING_NFS:
		if (all_nfs_gone()) {
			__atomic_store_n(&mgr.stop_loops, true, __ATOMIC_RELEASE);
			return;
		}
		if (now - t0 > NF_STOP_TIMEOUT_MS * 1000000ULL) {
			mgr_nf_kill_launched();
			phase = KILLING;
			t0 = now;
		}
		return;
	case KILLING:
		if (all_nfs_gone() || now - t0 > NF_KILL_TIMEOUT_MS * 1000000ULL)
			__atomic_store_n(&mgr.stop_loops, true, __ATOMIC_RELEASE);
		return;
	}
}

static void
housekeeping(uint64_t now)
{
	static uint64_t last_stats;
	long ms = mgr.stats_ms_override >= 0 ? mgr.stats_ms_override : mgr.cfg.stats_interval_ms;

	if (last_stats == 0)
		last_stats = now;
	if (!mgr.quiet && ms > 0 && now - last_stats >= (uint64_t)ms * 1000000ULL) {
		mgr_stats_print((double)(now - last_stats) / 1e9);
		last_stats = now;
	}
	shutdown_step(now);
}

/* A nap must not oversleep the BFD unit's next deadline. */
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

static int
lcore_loop(void *arg)
{
	const unsigned int lcore = rte_lcore_id();
	const bool is_main = lcore == rte_get_main_lcore();
	const uint64_t hz = rte_get_tsc_hz();
	const uint64_t spin = (uint64_t)mgr.cfg.idle_spin_us * hz / 1000000;
	const uint64_t hk_period = HOUSEKEEPING_MS * hz / 1000;
	struct mgr_unit *mine[MGR_UNIT_MAX];
	bool hosts_bfd = false;
	int nunits = 0;
	uint64_t idle_since = 0, next_hk = 0;
	uint32_t nap_us = 1;

	(void)arg;
	for (int u = 0; u < MGR_UNIT_MAX; u++)
		if (mgr.units[u].poll != NULL && mgr.units[u].lcore == (int)lcore) {
			mine[nunits++] = &mgr.units[u];
			hosts_bfd |= (u == MGR_UNIT_BFD);
		}
	if (nunits == 0 && !is_main)
		return 0;
	if (lcore_in_qsbr[lcore])
		rte_rcu_qsbr_thread_online(mgr.qsbr, lcore);

	while (!__atomic_load_n(&mgr.stop_loops, __ATOMIC_ACQUIRE)) {
		uint64_t now;
		int work = 0;

		for (int i = 0; i < nunits; i++)
			work += mine[i]->poll();
		if (lcore_in_qsbr[lcore])
			rte_rcu_qsbr_quiescent(mgr.qsbr, lcore);
		now = rte_get_tsc_cycles();
		if (is_main && now >= next_hk) {
			housekeeping(mgr_now_ns());
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
			rte_pause();
			continue;
		}
		if (lcore_in_qsbr[lcore])
			rte_rcu_qsbr_thread_offline(mgr.qsbr, lcore);
		idle_sleep(hosts_bfd ? nap_for_bfd(nap_us) : nap_us);
		if (lcore_in_qsbr[lcore])
			rte_rcu_qsbr_thread_online(mgr.qsbr, lcore);
		nap_us = RTE_MIN(nap_us * 2, mgr.cfg.idle_sleep_max_us);
	}
	if (lcore_in_qsbr[lcore])
		rte_rcu_qsbr_thread_offline(mgr.qsbr, lcore);
	return 0;
}

/* ---- runtime files -------------------------------------------------------------- */

/* The EAL leaves its runtime directory and, for a primary, the hugepage files
 * behind; remove ours so a stopped node leaves nothing (and frees its pages). */
static void
remove_runtime_files(void)
{
	char path[PATH_MAX + 256], want[128];
	FILE *mounts;
	DIR *d;
	struct dirent *e;

	d = opendir(mgr.runtime_dir);
	if (d != NULL) {
		while ((e = readdir(d)) != NULL) {
			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", mgr.runtime_dir, e->d_name);
			unlink(path);
		}
		closedir(d);
		rmdir(mgr.runtime_dir);
	}
	snprintf(want, sizeof(want), "%smap_", mgr.file_prefix);
	mounts = fopen("/proc/mounts", "r");
	if (mounts == NULL)
		return;
	{
		char dev[256], dir[PATH_MAX], type[64], line[PATH_MAX + 512];

		while (fgets(line, sizeof(line), mounts) != NULL) {
			if (sscanf(line, "%255s %4095s %63s", dev, dir, type) != 3 ||
			    strcmp(type, "hugetlbfs") != 0)
				continue;
			d = opendir(dir);
			if (d == NULL)
				continue;
			while ((e = readdir(d)) != NULL) {
				if (strncmp(e->d_name, want, strlen(want)) != 0)
					continue;
				snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
				unlink(path);
			}
			closedir(d);
		}
	}
	fclose(mounts);
}

/* ---- main ----------------------------------------------------------------------- */

int
main(int argc, char **argv)
{
	char err[MGR_CFG_ERR_LEN], *config_path = NULL, *eal_argv[256];
	char exe[PATH_MAX];
	int sep = -1, eal_argc, ret;
	ssize_t n;

	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			sep = i;
			break;
		}
	/* With "--": EAL options before it, ours after.  Without: all ours. */
	{
		int app_argc = sep < 0 ? argc : argc - sep;
		char **app_argv = sep < 0 ? argv : argv + sep;
		char *saved = app_argv[0];

		app_argv[0] = argv[0];
		ret = mgr_args_parse(app_argc, app_argv, &config_path);
		app_argv[0] = saved;
		if (ret != 0)
			return ret > 0 ? 0 : 2;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		snprintf(mgr.exe_dir, sizeof(mgr.exe_dir), "%s", dirname(exe));
	}

	mgr_config_defaults(&mgr.cfg);
	if (mgr_config_load_file(config_path, &mgr.cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "onvm_mgr: config error: %s\n", err);
		return 1;
	}
	if (mgr.check_only) {
		printf("%s: OK (%d ports, %d NFs, %d chains, %d flow rules)\n", config_path,
		       mgr.cfg.nports, mgr.cfg.nnfs, mgr.cfg.nchains, mgr.cfg.nrules);
		mgr_config_free(&mgr.cfg);
		return 0;
	}

	eal_argc = build_eal_argv(sep < 0 ? 0 : sep - 1, argv + 1, argv[0], eal_argv,
				  RTE_DIM(eal_argv) - 1);
	if (eal_argc < 0) {
		fprintf(stderr, "onvm_mgr: too many EAL arguments\n");
		return 2;
	}
	ret = rte_eal_init(eal_argc, eal_argv);
	if (ret < 0)
		rte_exit(EXIT_FAILURE, "EAL init failed: %s\n", rte_strerror(rte_errno));
	if (rte_eal_process_type() != RTE_PROC_PRIMARY)
		rte_exit(EXIT_FAILURE, "onvm_mgr must be the primary process\n");
	mgr.start_ns = mgr_now_ns();
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	snprintf(mgr.runtime_dir, sizeof(mgr.runtime_dir), "%s", rte_eal_get_runtime_dir());
	{
		const char *base = strrchr(mgr.runtime_dir, '/');

		rte_strscpy(mgr.file_prefix, base ? base + 1 : mgr.runtime_dir,
			    sizeof(mgr.file_prefix));
	}

	mgr_dp_init();
	if (init_shared() < 0 || init_nf_placement() < 0 || mgr_ports_init() < 0 ||
	    init_chains() < 0 ||
	    init_units() < 0 || mgr_nf_ctl_init() < 0 || mgr_vdev_guard_init() < 0 ||
	    mgr_bfd_init() < 0 || mgr_telemetry_init() < 0 || mgr_bfd_telemetry_init() < 0 ||
	    mgr_ctl_start() < 0) {
		ret = EXIT_FAILURE;
		goto cleanup;
	}
	if (rte_pdump_init() < 0)
		MGR_LOG(WARNING, "pdump init failed: %s (dpdk-dumpcap will not attach)",
			rte_strerror(rte_errno));

	MGR_LOG(INFO, "node '%s' (file prefix %s): %u ports, %d NFs to launch",
		mgr.cfg.node_name, mgr.file_prefix, mgr.nb_ports, mgr.cfg.nnfs);
	if (mgr_nf_launch_all() < 0 || mgr_nf_wait_ready(mgr.cfg.nf_start_timeout_ms) < 0 ||
	    mgr_ports_start() < 0) {
		ret = EXIT_FAILURE;
		__atomic_store_n(&mgr.rx_stopped, true, __ATOMIC_RELAXED); /* ports may not be started */
		mgr.force_quit = true;
	} else {
		mgr_ports_wait_link(mgr.cfg.link_wait_ms);
		ret = EXIT_SUCCESS;
		mgr.idle_pool_in_use = rte_mempool_in_use_count(mgr.pool);
		MGR_LOG(INFO, "node '%s' running (pool in use at start: %u)", mgr.cfg.node_name,
			mgr.idle_pool_in_use);
		printf("ONVM_MGR_READY prefix=%s pid=%d\n", mgr.file_prefix, getpid());
		fflush(stdout);
	}

	/* Even a failed start runs the loop briefly: the shutdown state machine
	 * stops and reclaims whatever NFs did come up. */
	{
		unsigned int lc;

		RTE_LCORE_FOREACH_WORKER(lc)
			if ((int)lc != mgr.cfg.unit_lcore[MGR_UNIT_CTRL])
				rte_eal_remote_launch(lcore_loop, NULL, lc);
		lcore_loop(NULL);
		RTE_LCORE_FOREACH_WORKER(lc)
			if ((int)lc != mgr.cfg.unit_lcore[MGR_UNIT_CTRL])
				rte_eal_wait_lcore(lc);
		mgr_ctl_stop();
	}
	mgr_tx_poll(); /* last flush of anything the units left */
	mgr_nf_alloc_rings_drain();
	if (!mgr.quiet)
		mgr_stats_print(0);
	MGR_LOG(INFO, "pool in use at exit: %u (at start %u)", rte_mempool_in_use_count(mgr.pool),
		mgr.idle_pool_in_use);

cleanup:
	rte_pdump_uninit();
	if (mgr.nb_ports > 0)
		mgr_ports_stop();
	mgr_config_free(&mgr.cfg);
	rte_eal_cleanup();
	remove_runtime_files();
	return ret;
}
