/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * mgr.h -- onvm_mgr, the node manager (the DPDK primary process): its
 * node-wide state and the node skeleton's interfaces.  The manager is eight
 * components, a folder each with a header that maps its files:
 *
 *   config/     the JSON configuration, parsed and validated  (config.h)
 *   nf/         the NF life cycle: launch, registration, liveness,
 *               reclamation, failover to standbys, state blocks   (nf.h)
 *   dataplane/  the RX/TX units, routing, BFD on the ports  (dataplane.h)
 *   remote/     remote resiliency: predecessor, primary and standby
 *               roles on the ports                           (remote.h)
 *   stateless/  stateless resiliency: a chain's root and exit, whose
 *               NFs keep their state in a store          (stateless.h)
 *   ftc/        FTC: this node's part of a chain whose NFs' updates ride
 *               on its packets to the next f nodes             (ftc.h)
 *   elastic/    flow migration between a service's instances,
 *               state and all                                  (move.h)
 *   this folder, the node skeleton:
 *     main.c         start-up order, housekeeping, shutdown
 *     init.c         EAL arguments, shared tables, pools, rings, NF
 *                    placement, chains; runtime files at exit
 *     units.c        the per-lcore unit scheduler (adaptive polling, RCU)
 *     mgr_state.c    the one global `mgr` object, log types, the clock,
 *                    the telemetry commands' gate
 *     args.c         command line
 *     ports.c        DPDK port set-up and stats
 *     stats.c        console statistics
 *     telemetry.c    /onvm/ telemetry commands
 *     vdev_guard.c   which virtual devices secondaries may probe
 *     mgr.h          this header
 *
 * Threads: the data lcores run the RX, TX and BFD units and never block;
 * the control thread and EAL's IPC thread change the NF and service tables
 * under mgr.ctl_lock; the telemetry thread reads, and takes the lock for
 * the few commands that change something (/onvm/move).
 */
#ifndef MGR_H
#define MGR_H

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <rte_debug.h>
#include <rte_log.h>
#include <rte_mempool.h>
#include <rte_memzone.h>
#include <rte_rcu_qsbr.h>
#include <rte_telemetry.h>
#include <rte_version.h>

#include "bfd_auth.h"
#include "bfd_node.h"
#include "config/config.h"
#include "dataplane/dataplane.h"
#include "nf/nf.h"
#include "nf/state_pool.h"
#include "onvm_common.h"
#include "onvm_pkt_parse.h"
#include "onvm_seg.h"
#include "remote/remote.h"

/* The config's limits are the tables' (config.h cannot include DPDK). */
_Static_assert(MGR_CFG_MAX_NF_SLOTS == ONVM_MAX_NFS, "config NF slots == table slots");
_Static_assert(MGR_CFG_MAX_BFD == BFD_NODE_MAX_SESSIONS, "config BFD sessions == node's");
_Static_assert(MGR_CFG_BFD_KEY_MAX == BFD_AUTH_KEY_MAX, "config BFD key == codec's");
_Static_assert(MGR_CFG_MAX_PORTS <= ONVM_MAX_PORTS && MGR_CFG_MAX_CHAINS <= ONVM_MAX_CHAINS &&
		       MGR_CFG_MAX_CHAIN_LEN <= ONVM_MAX_CHAIN_LEN &&
		       MGR_CFG_MAX_RULES <= ONVM_MAX_FLOW_RULES &&
		       MGR_CFG_MAX_INSTANCES <= ONVM_MAX_INSTANCES &&
		       MGR_CFG_MAX_SERVICE < ONVM_MAX_SERVICES,
	       "what the config accepts fits the shared tables");

/* DPDK 23.03 renamed telemetry's 64-bit adders rte_tel_data_add_{dict,array}_u64
 * to _uint (24.11 marks the old names deprecated); the tree calls the new names,
 * mapped back for older DPDK. */
#if RTE_VERSION < RTE_VERSION_NUM(23, 3, 0, 0)
#define rte_tel_data_add_dict_uint  rte_tel_data_add_dict_u64
#define rte_tel_data_add_array_uint rte_tel_data_add_array_u64
#endif

/*
 * Ownership contracts.  Which thread may call a function, and which lock it
 * must hold, used to be comments ("ctl_lock held", "TX unit only"); these
 * macros check them in builds with MGR_ENABLE_ASSERT (meson -Dasserts, on
 * by default in a sanitizer build: RTE_VERIFY panics with the file and
 * line) and compile to nothing otherwise -- the expression is still
 * type-checked.
 *
 *   MGR_ASSERT_CTL_LOCKED()   the caller holds mgr.ctl_lock (taken only
 *                             through mgr_ctl_lock(), which records its
 *                             owner)
 *   MGR_ASSERT_UNIT(u)        running as data unit u (enum mgr_unit_id):
 *                             each unit's poll marks its thread on entry
 *                             (MGR_UNIT_ENTER)
 *   MGR_ASSERT_NOT_DATA_UNIT() not on a data unit (may block)
 */
#ifdef MGR_ENABLE_ASSERT
#define MGR_ASSERT(cond) RTE_VERIFY(cond)
#define MGR_UNIT_ENTER(u) (mgr_self_unit = (u))
#define MGR_UNIT_LEAVE() (mgr_self_unit = -1)
#else
#define MGR_ASSERT(cond) ((void)sizeof(!(cond)))
#define MGR_UNIT_ENTER(u) ((void)(u))
#define MGR_UNIT_LEAVE() ((void)0)
#endif
#define MGR_ASSERT_CTL_LOCKED() MGR_ASSERT(mgr_ctl_lock_held())
#define MGR_ASSERT_UNIT(u) MGR_ASSERT(mgr_self_unit == (int)(u))
#define MGR_ASSERT_NOT_DATA_UNIT() MGR_ASSERT(mgr_self_unit < 0)
/* The data unit this thread last ran (-1: none, or not tracked). */
extern __thread int mgr_self_unit;

/* mgr.ctl_lock, with its owner recorded (mgr_state.c). */
void mgr_ctl_lock(void);
void mgr_ctl_unlock(void);
bool mgr_ctl_lock_held(void); /* by the calling thread */

extern int mgr_logtype;
extern int mgr_nf_logtype;
extern int mgr_dp_logtype;
#define MGR_LOG(level, fmt, ...) rte_log(RTE_LOG_##level, mgr_logtype, "onvm_mgr: " fmt "\n", ##__VA_ARGS__)

/* Per lcore: the longest pass over its units (a loop iteration, naps
 * excluded, housekeeping included), in TSC cycles, since the last reset. */
struct mgr_lcore_stats {
	uint64_t pass_max;
	uint32_t gap_reset; /* atomic: set by telemetry, cleared by the lcore */
} __rte_cache_aligned;

struct mgr_unit {
	const char *name;
	int (*poll)(void);
	int lcore;
};

struct mgr {
	struct mgr_config cfg;
	char file_prefix[64];
	char runtime_dir[256];
	char exe_dir[PATH_MAX];
	char nf_path[PATH_MAX]; /* --nf-path */
	bool quiet;		/* no console stats */
	bool check_only;	/* --check */
	long stats_ms_override; /* -1: use the config */

	struct onvm_shm *shm;
	struct rte_mempool *pool;
	int dyn_off;
	uint16_t nb_ports;
	struct mgr_port_stats port_stats[ONVM_MAX_PORTS];
	bool bfd_port[ONVM_MAX_PORTS]; /* has BFD sessions (set before ports start) */
	/* NF registrations so far (atomic; the control thread bumps it): whoever
	 * caches slots of a service lists them again when it moves. */
	uint32_t nf_registrations;
	struct mgr_remote remote; /* remote/remote.h */

	struct mgr_dp_ctx dp[MGR_UNIT_MAX];
	struct mgr_nf_priv nf_priv[ONVM_MAX_NFS];
	/* 1 + the highest NF slot ever used: the data path scans slots below it.
	 * Only grows, and is raised (atomic, release) before a slot leaves FREE. */
	uint16_t nf_slots_used;
	/* EAL lcore id of each slot's NF (onvm_nf_lcore_table), UINT32_MAX: none;
	 * and the CPUs launched actives and standbys run on. */
	uint32_t nf_lcore[ONVM_MAX_NFS];
	cpu_set_t nf_active_cpus;
	cpu_set_t nf_standby_cpus;
	struct mgr_unit units[MGR_UNIT_MAX];
	struct mgr_lcore_stats lcore_stats[RTE_MAX_LCORE];

	/* mbufs the control thread hands back to the pool (a dead NF's): the
	 * TX unit frees them, so every operation on the pool's MP/MC ring
	 * happens on a pinned data lcore, never in a preemptible thread. */
	struct rte_ring *ctl_free_ring; /* room for the whole pool: never full */
	/* atomic: the data lcores run (set under ctl_lock before they start):
	 * until then the control and IPC threads may use the pool directly. */
	bool units_running;
	struct rte_rcu_qsbr *qsbr;
	struct onvm_seg state_seg;	    /* the state pool (base NULL: none) */
	struct mgr_state_pool state_pool;
	pthread_mutex_t ctl_lock; /* NF/service table writers; never taken by a data lcore */
	pid_t ctl_lock_owner;	  /* thread id holding it, 0: none (atomic) */
	int epfd;	/* the control thread's: pidfds of NFs + ctl_evfd */
	int ctl_evfd;	/* eventfd: a registration happened, or a request */
	volatile sig_atomic_t force_quit; /* set by the signal handler */
	bool rx_stopped;  /* atomic: the RX unit stops reading ports */
	bool stop_loops;  /* atomic: the lcore loops return */
	uint64_t nf_deaths;
	uint64_t nf_instances_lost; /* NF instances that died and nobody took over */
	uint64_t nf_failovers;	/* deaths a standby took over */
	uint64_t nf_hung;	/* NFs killed for making no progress */
	uint64_t nf_start_failures; /* launched NFs that exited before registering */
	/* launched NFs that exited before registering during the start-up and
	 * were launched again (nf_start_retries; not in nf_start_failures), in
	 * all and per config entry */
	uint64_t nf_start_relaunches;
	uint8_t nf_start_relaunched[MGR_CFG_MAX_NFS];
	/* Container NFs that did not start (runtime missing or failing, no
	 * image, no binary in it): each with its reason in the log; the node
	 * goes on serving its other chains. */
	uint64_t nf_container_failures;
	uint64_t nf_standby_failures; /* standbys that failed before parking */
	uint64_t nf_registrations_refused; /* each with its reason in the log and reply */
	uint64_t nf_reclaimed_mbufs;
	uint64_t start_ns;
	unsigned int idle_pool_in_use; /* measured after start-up */
};

extern struct mgr mgr;

/* Whether the NF of a slot was launched in a container (its config says;
 * -1: started by hand, a process).  cfg_index read once: the control
 * thread resets a freed slot's while telemetry reads. */
static inline bool
mgr_nf_in_container(const struct mgr_nf_priv *p)
{
	int ci = __atomic_load_n(&p->cfg_index, __ATOMIC_RELAXED);

	return ci >= 0 && ci < mgr.cfg.nnfs && mgr.cfg.nfs[ci].ctr.enabled;
}

/* An instance of an NF entry marked "peer_only": it serves flows another
 * node moved to it (move_peer.h) and holds no rank here, so no flow of
 * this node's own reaches it, nor a move or scaling here.  Read as
 * mgr_nf_in_container(). */
static inline bool
mgr_nf_peer_only(const struct mgr_nf_priv *p)
{
	int ci = __atomic_load_n(&p->cfg_index, __ATOMIC_RELAXED);

	return ci >= 0 && ci < mgr.cfg.nnfs && mgr.cfg.nfs[ci].peer_only;
}

/* A per-unit data path counter (struct mgr_dp_ctx field) summed over the units. */
#define UNITS_SUM(field)                                                                     \
	({                                                                                   \
		uint64_t t_ = 0;                                                             \
		for (int u_ = 0; u_ < MGR_UNIT_MAX; u_++)                                    \
			t_ += mgr.dp[u_].field;                                              \
		t_;                                                                          \
	})

/* init.c -- main thread, before the lcores run.  Each returns 0 or -errno
 * (mgr_init_eal_argv: the argument count, -E2BIG) and logs what failed. */
int mgr_init_eal_argv(int cli_argc, char **cli_argv, char *prog, char **out, int max);
int mgr_init_shared(void);
int mgr_init_nf_placement(void);
int mgr_init_chains(void);
void mgr_remove_runtime_files(void);

/* units.c: place the units on lcores (0 or -EINVAL/-ENOMEM); the loop every
 * lcore runs until mgr.stop_loops (rte_eal_remote_launch's signature). */
int mgr_units_init(void);
int mgr_units_loop(void *arg);
/* main.c: console stats and the shutdown state machine; the main lcore. */
void mgr_housekeeping(uint64_t now_ns);

/* args.c: returns 0, 1 (help/version printed: exit 0) or -1 (exit 2). */
int mgr_args_parse(int argc, char **argv, char **config_path);
void mgr_args_usage(const char *prog);

/* ports.c */
int mgr_ports_init(void);
int mgr_ports_start(void);
/* The kernel interface a port sits on (`iface=` in its dev: af_packet,
 * af_xdp), or "" when it has none; that interface's MTU, 0 if none. */
void mgr_port_iface(uint16_t port, char *name, size_t len);
uint32_t mgr_port_iface_mtu(uint16_t port);
void mgr_ports_stop(void);
void mgr_ports_wait_link(uint32_t timeout_ms);

/* vdev_guard.c: what secondaries probe */
int mgr_vdev_guard_init(void);

/* stats.c / telemetry.c */
void mgr_stats_print(double interval_s);
int mgr_telemetry_init(void);
/* Every /onvm/ command goes through here: the telemetry thread may run one
 * while the manager exits, and mgr_telemetry_close() waits for it, then
 * refuses the rest (their callbacks read what the exit frees). */
int mgr_tel_register(const char *cmd, telemetry_cb fn, const char *help);
void mgr_telemetry_close(void);

uint64_t mgr_now_ns(void);
int mgr_qsbr_thread_id(void); /* this lcore's QSBR id, or -1 */

#endif /* MGR_H */
