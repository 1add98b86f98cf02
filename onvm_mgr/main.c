/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * main.c -- onvm_mgr's start-up order, housekeeping and shutdown.
 *
 * Shape (as DPDK's examples): parse options and the config -> EAL ->
 * tables, pool, rings, ports (init.c) -> launch NFs and wait for them to
 * register -> start ports -> run the units on their lcores (units.c) -> on
 * SIGINT/SIGTERM drain, stop NFs, stop ports, remove runtime files.  The NF
 * life cycle (launch, death, reclamation) runs in a control thread of its own
 * (ctl_thread.c), so the data lcores only ever do non-blocking work.
 */
#include <libgen.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mempool.h>
#include <rte_pdump.h>
#include <rte_ring.h>
#include <rte_string_fns.h>

#include "onvm_nf_batch.h"

#include "mgr.h"
#include "elastic/move.h"
#include "elastic/move_peer.h"
#include "stateless/stateless.h"
#include "ftc/ftc.h"

#define DRAIN_TIMEOUT_MS 1000
#define NF_STOP_TIMEOUT_MS 3000
#define NF_KILL_TIMEOUT_MS 2000


static void
on_signal(int sig)
{
	(void)sig;
	mgr.force_quit = true;
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

/* The main lcore's housekeeping: the shutdown state machine (flags and
 * requests to the control thread only; console stats and logs are the
 * control thread's, ctl_thread.c). */
void
mgr_housekeeping(uint64_t now)
{
	shutdown_step(now);
}

/* A nap must not oversleep the BFD unit's next deadline. */

/* ---- main ----------------------------------------------------------------------- */

/* Every registration briefly holds two descriptors more (the pidfd received
 * and its fdinfo), and a DPDK message whose descriptor cannot be installed
 * is dropped whole: take the hard limit, not the usual 1024. */
static void
raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
			fprintf(stderr, "onvm_mgr: cannot raise the descriptor limit\n");
	}
}

/* Whether a DPDK primary of `prefix` runs (EAL will refuse to start then;
 * its containers are not a leftover): EAL's own test on its config file,
 * in the runtime directory EAL will use (root's, or XDG_RUNTIME_DIR/dpdk). */
static bool
mgr_primary_alive(const char *prefix)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	char path[PATH_MAX];

	if (getuid() == 0 || xdg == NULL)
		snprintf(path, sizeof(path), "%s/dpdk/%s/config", getuid() == 0 ? "/var/run"
											: "/tmp",
			 prefix);
	else
		snprintf(path, sizeof(path), "%s/dpdk/%s/config", xdg, prefix);
	return rte_eal_primary_proc_alive(path) != 0;
}

/* The file prefix EAL will use: its last --file-prefix (getopt_long takes
 * any unambiguous abbreviation, down to --file-p), else "rte". */
static void
eal_file_prefix(int argc, char **argv, char *out, size_t len)
{
	const char *prefix = "rte";

	for (int i = 0; i < argc; i++) {
		const char *a = argv[i], *eq = strchr(a, '=');
		size_t n = eq != NULL ? (size_t)(eq - a) : strlen(a);

		if (n < 8 || strncmp(a, "--file-prefix", n) != 0)
			continue;
		if (eq != NULL)
			prefix = eq + 1;
		else if (i + 1 < argc)
			prefix = argv[++i];
	}
	snprintf(out, len, "%s", prefix);
}

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

	eal_argc = mgr_init_eal_argv(sep < 0 ? 0 : sep - 1, argv + 1, argv[0], eal_argv,
				  RTE_DIM(eal_argv) - 1);
	if (eal_argc < 0) {
		fprintf(stderr, "onvm_mgr: too many EAL arguments\n");
		return 2;
	}
	raise_fd_limit();
	/* Container NFs a killed manager of this file prefix left: removed
	 * before EAL maps the node's memory and answers on its socket (they
	 * hold the old mappings and would register into its slots). */
	eal_file_prefix(eal_argc, eal_argv, mgr.file_prefix, sizeof(mgr.file_prefix));
	if (!mgr_primary_alive(mgr.file_prefix))
		mgr_ctr_remove_node(CTR_REMOVE_WAIT_MS, "start-up");
	ret = rte_eal_init(eal_argc, eal_argv);
	if (ret < 0)
		rte_exit(EXIT_FAILURE, "EAL init failed: %s\n", rte_strerror(rte_errno));
	if (rte_eal_process_type() != RTE_PROC_PRIMARY)
		rte_exit(EXIT_FAILURE, "onvm_mgr must be the primary process\n");
	mgr.start_ns = mgr_now_ns();
	mgr_remote_run_init();
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
	if (mgr_init_shared() < 0 || mgr_init_nf_placement() < 0 || mgr_ports_init() < 0 ||
	    mgr_init_chains() < 0 || mgr_sl_init() < 0 || mgr_ftc_init() < 0 ||
	    mgr_units_init() < 0 || mgr_nf_ctl_init() < 0 || mgr_vdev_guard_init() < 0 ||
	    mgr_bfd_init() < 0 || mgr_plog_init() < 0 || mgr_rsync_init() < 0 ||
	    mgr_link_watch_init() < 0 ||
	    mgr_telemetry_init() < 0 ||
	    mgr_bfd_telemetry_init() < 0 || mgr_plog_telemetry_init() < 0 ||
	    mgr_sl_telemetry_init() < 0 || mgr_ftc_telemetry_init() < 0 ||
	    mgr_move_telemetry_init() < 0 || mgr_move_peer_init() < 0 ||
	    mgr_move_peer_telemetry_init() < 0 || mgr_scale_init() < 0 ||
	    mgr_scale_telemetry_init() < 0 || mgr_shared_telemetry_init() < 0 ||
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

		/* From here the pool belongs to the data lcores: the control and
		 * IPC threads hand mbufs to the TX unit (mgr_nf_give_back). */
		mgr_ctl_lock();
		__atomic_store_n(&mgr.units_running, true, __ATOMIC_RELEASE);
		mgr_ctl_unlock();
		RTE_LCORE_FOREACH_WORKER(lc)
			if ((int)lc != mgr.cfg.unit_lcore[MGR_UNIT_CTRL])
				rte_eal_remote_launch(mgr_units_loop, NULL, lc);
		mgr_units_loop(NULL);
		RTE_LCORE_FOREACH_WORKER(lc)
			if ((int)lc != mgr.cfg.unit_lcore[MGR_UNIT_CTRL])
				rte_eal_wait_lcore(lc);
		mgr_ctl_stop();
		/* Stopping the node removes its containers (their NFs have
		 * stopped; a runtime CLI may still be cleaning up). */
		mgr_ctr_remove_node(CTR_REMOVE_WAIT_MS, "shutdown");
	}
	mgr_tx_poll(); /* last flush of anything the units left */
	mgr_dp_drop_leftovers();
	mgr_rsync_fini();
	mgr_link_watch_fini();
	mgr_nf_alloc_rings_drain();
	mgr_ctl_free_drain();
	if (!mgr.quiet)
		mgr_stats_print(0);
	MGR_LOG(INFO, "pool in use at exit: %u (at start %u)", rte_mempool_in_use_count(mgr.pool),
		mgr.idle_pool_in_use);

cleanup:
	/* (no /onvm/ command reads what follows frees) */
	mgr_telemetry_close();
	rte_pdump_uninit();
	if (mgr.nb_ports > 0)
		mgr_ports_stop();
	mgr_config_free(&mgr.cfg);
	rte_eal_cleanup();
	mgr_remove_runtime_files();
	return ret;
}

