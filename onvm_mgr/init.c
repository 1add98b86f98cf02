/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * init.c -- what onvm_mgr sets up before anything runs, in DPDK
 * client_server_mp's init.c manner: the EAL argument vector (the config's
 * ports as vdevs, never a PCI probe unless allow-listed), the shared tables,
 * packet pool, state pool and NF rings, where NFs run (CPU sets, lcore ids),
 * the chains and flow rules; and, at exit, the runtime files the EAL leaves.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_common.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_memzone.h>
#include <rte_random.h>
#include <rte_ring.h>
#include <rte_string_fns.h>

#include "onvm_cpuset.h"
#include "onvm_eal_args.h"
#include "onvm_nf_batch.h"

#include "mgr.h"

/* Config first, so config ports get the first port ids; the command line's
 * EAL options after it, so they win where the EAL takes the last value. */
int
mgr_init_eal_argv(int cli_argc, char **cli_argv, char *prog, char **out, int max)
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
	if (mgr.cfg.lcores[0] != '\0' && !onvm_eal_has_option(cli_argc, cli_argv, lcore_opts) &&
	    !onvm_eal_has_option(mgr.cfg.n_eal, mgr.cfg.eal_args, lcore_opts)) {
		snprintf(lcores, sizeof(lcores), "--lcores=%s", mgr.cfg.lcores);
		out[n++] = lcores;
	}
	if (mgr.cfg.file_prefix[0] != '\0' && !onvm_eal_has_option(cli_argc, cli_argv, prefix_opts) &&
	    !onvm_eal_has_option(mgr.cfg.n_eal, mgr.cfg.eal_args, prefix_opts)) {
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
	if (!onvm_eal_has_option(n, out, pci_opts))
		out[n++] = "--no-pci";
	/* Map DPDK memory far above where libraries, heaps and sanitizer shadow
	 * memory go, so every secondary (NFs, dumpcap) finds the same addresses
	 * free; otherwise secondaries fail at random, always under ASan. */
	if (!onvm_eal_has_option(n, out, base_opts))
		out[n++] = "--base-virtaddr=0x200000000000";
	out[n] = NULL;
	return n;
}

/* ---- tables, pool, rings -------------------------------------------------------- */

/*
 * The NF state pool: a hugetlbfs segment at a fixed address (onvm_seg.h),
 * so that state holding pointers means the same on every node.  Named after
 * the file prefix, so nodes on one machine do not collide, and removed like
 * the node's hugepage files if the manager dies.  Pages are taken per block
 * when it is allocated (nf_ipc.c).
 */
static int
mgr_init_state_seg(void)
{
	/* hugetlbfs sizes are whole huge pages (2 MB here). */
	uint64_t bytes = RTE_ALIGN_CEIL((uint64_t)mgr.cfg.state_pool_mb << 20, 2u << 20);
	char dir[PATH_MAX], path[PATH_MAX];
	int ret;

	/* "<prefix>map_": mgr_remove_runtime_files() removes it at exit. */
	ret = onvm_seg_hugedir(dir, sizeof(dir));
	if (ret == 0 && (size_t)snprintf(path, sizeof(path), "%s/%smap_onvm_state", dir,
					 mgr.file_prefix) >= sizeof(path))
		ret = -ENAMETOOLONG;
	if (ret == 0)
		ret = onvm_seg_create(&mgr.state_seg, path, ONVM_SEG_STATE_VA, bytes);
	if (ret < 0) {
		MGR_LOG(ERR, "cannot map %u MB for NF state (state.pool_mb) at 0x%llx: %s%s",
			mgr.cfg.state_pool_mb, ONVM_SEG_STATE_VA, strerror(-ret),
			ret == -ENOENT ? " (no hugetlbfs mount)" : "");
		return ret;
	}
	rte_strscpy(mgr.shm->state_seg_path, path, sizeof(mgr.shm->state_seg_path));
	mgr.shm->state_seg_va = ONVM_SEG_STATE_VA;
	mgr.shm->state_seg_size = bytes;
	mgr_state_pool_init(&mgr.state_pool, bytes);
	return 0;
}

int
mgr_init_shared(void)
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
	mgr.shm->layout = ONVM_SHM_LAYOUT;
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

	if (mgr.cfg.state_pool_mb > 0 && mgr_init_state_seg() < 0)
		return -ENOMEM;

	/* An mbuf is in this ring at most once: with room for the whole pool
	 * an enqueue never fails and the control thread never waits on it. */
	mgr.ctl_free_ring = rte_ring_create("onvm_ctl_free", rte_align32pow2(mgr.cfg.nb_mbufs + 1),
					    rte_socket_id(), RING_F_SC_DEQ);
	if (mgr.ctl_free_ring == NULL) {
		MGR_LOG(ERR, "cannot create the control thread's free ring: %s",
			rte_strerror(rte_errno));
		return -rte_errno;
	}
	for (uint16_t id = 0; id < ONVM_MAX_NFS; id++) {
		struct onvm_nf_slot *s = &mgr.shm->nfs[id];
		char name[RTE_RING_NAMESIZE];

		s->instance_id = id;
		/* A random start in [1, 2^32 - 1]: what an NF of an earlier run of this
		 * file prefix asks for its slot (still leaving when this run
		 * started) names a generation this run's slots do not have --
		 * from 1 in every run, a stale unregistration took this run's
		 * NF of the same instance down. */
		s->generation = (uint32_t)rte_rand_max(UINT32_MAX) + 1;
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
int
mgr_init_nf_placement(void)
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
int
mgr_init_chains(void)
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



/* The EAL leaves its runtime directory and, for a primary, the hugepage files
 * behind; remove ours so a stopped node leaves nothing (and frees its pages). */
void
mgr_remove_runtime_files(void)
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

