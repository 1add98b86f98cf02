/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * mgr.h -- onvm_mgr's private state and the interfaces between its modules.
 * What each file is for:
 *   main.c         start-up order, housekeeping, shutdown
 *   init.c         EAL arguments, shared tables, pools, rings, NF placement,
 *                  chains; runtime files at exit
 *   units.c        the per-lcore unit scheduler (adaptive polling, RCU)
 *   mgr_state.c    the one global `mgr` object, log types, the clock
 *   args.c         command line
 *   config*.c      JSON configuration             (config.h maps its files)
 *   ports.c        DPDK port set-up and stats
 *   router.c       routing decisions, pure                  (router.h)
 *   datapath.c     the RX and TX units, NF wake-up
 *   bfd_unit.c     BFD sessions on the ports (library in bfd/), /onvm/bfd
 *   plog_unit.c    remote resiliency's predecessor: stamping, the packet
 *                  log, failover and replay (library in pkt_logger/), /onvm/remote
 *   rsync_unit.c   remote resiliency's primary/standby: the protected
 *                  ingress so far (library in rsync/)
 *   ctl_thread.c   the control thread: NF events, timers, hung NFs  (nf_ctl.h)
 *   nf_ipc.c       rte_mp handlers: register, unregister, state     (nf_ctl.h)
 *   nf_launch.c    fork/exec of NFs and standbys                    (nf_ctl.h)
 *   nf_reap.c      NF deaths, reclamation of their mbufs            (nf_ctl.h)
 *   nf_reaper.c    reaping dead NFs off the control thread          (nf_ctl.h)
 *   nf_failover.c  hand-over of a slot to its standby               (nf_ctl.h)
 *   nf_services.c  service instance tables (RCU), slot bookkeeping  (nf_ctl.h)
 *   state_pool.c   first-fit allocator of NF state blocks      (state_pool.h)
 *   stats.c        console statistics
 *   telemetry.c    /onvm/ telemetry commands
 *   vdev_guard.c   which virtual devices secondaries may probe
 *
 * Threads: the data lcores run the RX, TX and BFD units and never block;
 * the control thread and EAL's IPC thread change the NF and service tables
 * under mgr.ctl_lock; the telemetry thread only reads.
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

#include <rte_log.h>
#include <rte_mempool.h>
#include <rte_memzone.h>

#include "onvm_seg.h"
#include <rte_rcu_qsbr.h>
#include <rte_version.h>

#include "bfd_auth.h"
#include "bfd_node.h"
#include "config.h"
#include "onvm_common.h"
#include "onvm_pkt_parse.h"
#include "router.h"
#include "state_pool.h"

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

extern int mgr_logtype;
extern int mgr_nf_logtype;
extern int mgr_dp_logtype;
#define MGR_LOG(level, fmt, ...) rte_log(RTE_LOG_##level, mgr_logtype, "onvm_mgr: " fmt "\n", ##__VA_ARGS__)

/* Per-port counters; RX fields written by the RX unit, TX fields by the TX unit. */
struct mgr_port_stats {
	uint64_t rx;
	uint64_t rx_bytes;
	uint64_t parse[ONVM_PARSE_REASON_MAX];
	uint64_t tx __rte_cache_aligned;
	uint64_t tx_bytes;
	uint64_t tx_drop;
	uint64_t tx_nd;	/* packets sent with the ND flag (from NFs) */
	uint64_t ctrl_tx; /* of tx: BFD and ARP frames the manager sent (TX unit) */
	/* Longest pause between two bursts the port took, since the last
	 * /onvm/ports/gap_reset: how long forwarding stalled (TSC cycles). */
	uint64_t tx_last_tsc;
	uint64_t tx_gap_max;
	uint32_t tx_gap_reset; /* atomic: set by telemetry, cleared by the TX unit */
	uint64_t ctrl_rx __rte_cache_aligned; /* of rx: frames taken by BFD (RX unit) */
} __rte_cache_aligned;

/* Per-unit data path context: output buffers and counters owned by one unit. */
struct mgr_dp_buf {
	uint16_t n;
	struct rte_mbuf *pkts[ONVM_BURST];
};

struct mgr_dp_ctx {
	int unit;		 /* enum mgr_unit_id */
	bool direct_port_tx;	 /* true: rte_eth_tx_burst; false: port TX ring */
	uint64_t drops[MGR_DROP_REASON_MAX];
	uint64_t nf_enq[ONVM_MAX_NFS];
	uint64_t nf_enq_drop[ONVM_MAX_NFS];
	uint64_t nf_deq[ONVM_MAX_NFS];
	uint64_t backpressure;		/* polls an NF's output was held back */
	uint64_t alloc_fail;		/* NF alloc ring top-ups the pool could not serve */
	uint64_t hold_expired;		/* holds released by the time bound */
	uint64_t hold_since[ONVM_MAX_NFS]; /* TSC a hold began, 0: not held */
	int16_t last_hop[ONVM_MAX_NFS]; /* NF each NF fed last, -1: none/port */
	int16_t last_port[ONVM_MAX_NFS]; /* port each NF fed last, -1: none */
	uint64_t port_hold_since[ONVM_MAX_PORTS]; /* TSC a port began refusing */
	uint64_t port_rx_hold_since[ONVM_MAX_PORTS]; /* TSC RX of a port was held */
	/* Markers aligned across a service's instances (marker_align.c): an
	 * NF's output held until its siblings' markers came (1 + chain step,
	 * 0: not held), the rest of the burst its marker was in, counters. */
	uint16_t align_held[ONVM_MAX_NFS];
	uint16_t align_n_held;
	uint16_t stash_pending; /* stashes holding packets */
	struct mgr_dp_buf stash[ONVM_MAX_NFS];
	uint32_t align_gen[ONVM_MAX_NFS]; /* the slot's generation the hold or stash is of */
	uint64_t markers_aligned;  /* passed on, every instance's in */
	uint64_t align_given_up;   /* cuts given up (a newer one, instances changed, time-out) */
	uint64_t markers_stale;	   /* of a cut passed on or given up already: dropped */
	uint64_t markers_refused;  /* not the NF's step, rolled back, unknown cut, no copy */
	uint64_t align_waits; /* polls an NF's output was held for an alignment */
	uint64_t bfd_peek_tsc[ONVM_MAX_PORTS]; /* last read of a held BFD port */
	struct mgr_dp_buf nf_buf[ONVM_MAX_NFS];
	struct mgr_dp_buf port_buf[ONVM_MAX_PORTS];
} __rte_cache_aligned;

/* Manager-private facts about one NF slot (not shared with NFs). */
struct mgr_nf_priv {
	int pidfd;		/* -1: none */
	pid_t pid;		/* the process pidfd watches */
	bool exited;		/* pidfd said the process is gone */
	bool held_reclaimed;	/* held[] and RX backlog already returned */
	bool killed;		/* we sent SIGKILL (start timeout, shutdown) */
	int cfg_index;		/* index in cfg.nfs if launched, else -1 */
	int exit_status;	/* from waitid, launched NFs only */
	bool exit_signaled;	/* ... a signal's number, not an exit status */
	/* The standby of this slot, if any (launched or hand-started). */
	pid_t sb_pid;
	int sb_pidfd;
	bool sb_exited;
	uint64_t sb_failovers;	/* the slot's failovers when this standby came */
	/* Handed over to a standby that has not promoted yet (it may still be
	 * starting up): until the slot's failovers pass sb_failovers. */
	bool awaiting_promotion;
	uint64_t handed_ns;	/* when (a standby has nf_start_timeout_ms to promote) */
	/* Standby launches: consecutive standbys that failed before parking
	 * (also slot->standby_failures), when the next may start (exponential
	 * back-off), and why the last one failed. */
	uint32_t sb_failures;
	uint64_t sb_retry_ns;
	char sb_last_failure[64];
	bool sb_has_parked;	/* the control thread saw this standby parked */
	bool sb_exit_failed;	/* it exited with an error or a signal ... */
	bool sb_exit_signal;	/* ... a signal: sb_exit_status is its number */
	int sb_exit_status;
	/* Hung-NF check: last heartbeat seen and when it last moved. */
	uint64_t hb_seen;
	uint64_t hb_moved_ns;
	/* A container NF (nf_container.c).  Until it registers, pidfd/pid
	 * above are the runtime CLI's (launcher_watched): its exit is the
	 * start's failure.  From then on they are the NF's, and the CLI's
	 * pidfd (launcher_pidfd, tagged LAUNCHER_TAG) is only reaped.  The
	 * same for the standby with the sb_ fields. */
	bool launcher_watched;
	int launcher_pidfd;
	char ctr_name[128];
	pid_t ctr_ns_pid; /* its pid in its container (nf_pidns.c), 0: none */
	bool sb_launcher_watched;
	bool sb_killed;		/* its container did not register in time */
	uint64_t sb_launch_ns;
	int sb_launcher_pidfd;
	char sb_ctr_name[128];
	pid_t sb_ctr_ns_pid;
};

/* epoll data of a standby's pidfd: slot id | STANDBY_TAG. */
#define STANDBY_TAG 0x10000u
/* ... of a container runtime CLI's pidfd once its NF registered: | LAUNCHER_TAG. */
#define LAUNCHER_TAG 0x20000u
/* ... of a process let go while still running (nf_reap.c): ORPHAN_TAG | index. */
#define ORPHAN_TAG 0x40000u
#define MGR_NF_PRIV_INIT                                                                     \
	((struct mgr_nf_priv){.pidfd = -1, .sb_pidfd = -1, .cfg_index = -1,                  \
			      .launcher_pidfd = -1, .sb_launcher_pidfd = -1})

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
	/* 1 + the predecessor chain (plog_unit.c) stamping what leaves the port, 0: none */
	uint8_t plog_port[ONVM_MAX_PORTS];
	/* ... whose standby link this port is (the standby's echoes arrive here) */
	uint8_t plog_sb_port[ONVM_MAX_PORTS];
	/* 1 + the primary/standby chain (rsync_unit.c) whose stamped input arrives here, 0: none */
	uint8_t rsync_in_port[ONVM_MAX_PORTS];
	/* ... whose sync link (primary <-> standby) this port is */
	uint8_t rsync_sync_port[ONVM_MAX_PORTS];
	/* ... whose protected chain leaves through this port */
	uint8_t rsync_out_port[ONVM_MAX_PORTS];
	/* Consistent-cut markers dropped on a full NF ring (RX or TX unit,
	 * atomic), per protected chain (rsync_in_port - 1 of the marker's
	 * ingress port): the TX unit asks for the next marker soon instead of
	 * waiting for the lost one's time-out (rsync_unit_state.c). */
	uint64_t markers_dropped[MGR_CFG_MAX_REMOTE];
	/* The newest marker sent into each chain of the table (RX unit writes,
	 * TX unit reads: a marker an NF passes on names no newer cut). */
	uint64_t marker_newest[ONVM_MAX_CHAINS];
	/* The instances (ranks) each marker was sent to, by chain, step and
	 * cut id % MGR_FANNED: (cut << 8) | mask, atomic.  Step 0's are the RX
	 * unit's, the others the TX unit's; the TX unit aligns on them. */
#define MGR_FANNED 16
	uint64_t marker_fanned[ONVM_MAX_CHAINS][ONVM_MAX_CHAIN_LEN][MGR_FANNED];
	bool rsync_standbys; /* this node is the standby of a protected chain */

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

/* A per-unit data path counter (struct mgr_dp_ctx field) summed over the units. */
#define UNITS_SUM(field)                                                                     \
	({                                                                                   \
		uint64_t t_ = 0;                                                             \
		for (int u_ = 0; u_ < MGR_UNIT_MAX; u_++)                                    \
			t_ += mgr.dp[u_].field;                                              \
		t_;                                                                          \
	})

/* nf_container.c -- main thread, before NFs launch and after the control
 * thread stopped: remove every container of this node (a no-op without
 * container NFs), waiting at most `timeout_ms`; `when` is for the log. */
#define CTR_REMOVE_WAIT_MS 15000
void mgr_ctr_remove_node(unsigned int timeout_ms, const char *when);

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
void mgr_ports_stop(void);
void mgr_ports_wait_link(uint32_t timeout_ms);

/* datapath.c */
/* Bursts of mgr.ctl_free_ring the TX unit frees per poll: a dead NF's
 * mbufs go back quickly without one poll taking long. */
#define MGR_TX_FREE_BURSTS 4
int mgr_rx_poll(void);
int mgr_tx_poll(void);
void mgr_dp_init(void);

/* The NF life cycle (nf_ctl.h lists its files).  Main thread at start-up:
 * mgr_nf_ctl_init() (epoll, IPC actions), mgr_nf_launch_all(),
 * mgr_ctl_start() (the control thread), mgr_nf_wait_ready(); at exit, once the
 * data lcores have stopped, mgr_ctl_stop().  Any lcore, never blocking:
 * mgr_nf_stop_all() and mgr_nf_kill_launched() only ask the control thread. */
int mgr_nf_ctl_init(void);
int mgr_nf_launch_all(void);
int mgr_ctl_start(void);
int mgr_nf_wait_ready(uint32_t timeout_ms);
void mgr_ctl_stop(void);
void mgr_ctl_wake(void); /* any thread, never blocks: the control thread looks now */
/* At exit, once the data lcores have stopped: the alloc rings of FREE slots
 * and what the control thread handed back return to the pool. */
void mgr_nf_alloc_rings_drain(void);
void mgr_ctl_free_drain(void);
void mgr_nf_stop_all(void);     /* ask every NF to leave its loop */
void mgr_nf_kill_launched(void); /* SIGKILL launched NFs still alive */
void mgr_nf_alive_lock_init(struct onvm_nf_slot *s);
void mgr_nf_wake(struct onvm_nf_slot *slot); /* datapath.c; any thread */
const char *mgr_nf_status_str(uint32_t status);
/* ctl_lock held; wait for an RCU grace period (never from a data lcore). */
int mgr_service_add(uint16_t service, uint16_t instance);
int mgr_service_remove(uint16_t service, uint16_t instance);

/* bfd_unit.c */
int mgr_bfd_init(void);		 /* after the ports are set up */
int mgr_bfd_telemetry_init(void);
int mgr_bfd_poll(void);		 /* the BFD unit */
bool mgr_bfd_intercept(uint16_t port, struct rte_mbuf *m); /* RX unit: true if taken */
bool mgr_bfd_peek_due(uint16_t port, uint64_t *last_peek_tsc);
void mgr_bfd_tx(void);		 /* TX unit: control frames first */
uint64_t mgr_bfd_next_ns(void);	 /* when the BFD unit must next run */
void mgr_bfd_stats_print(void);

/* plog_unit.c: the predecessor role of remote resiliency.  _init after the
 * ports and BFD are set up; the TX unit calls _on_send for every packet it
 * sends to a port plog_port[] marks (the packet is taken: stamped, logged,
 * and sent, or left to the log's cursor, or refused and counted) and _tx
 * each poll (failover frames, the replay; returns the frames sent). */
int mgr_plog_init(void);
int mgr_plog_telemetry_init(void);
void mgr_plog_on_send(struct mgr_dp_ctx *ctx, uint16_t port, struct rte_mbuf *m);
unsigned int mgr_plog_tx(struct mgr_dp_ctx *ctx);
/* RX unit, for frames of a port plog_port[] marks: true if it took `m` (an
 * RSync frame from the primary, for the TX unit to apply). */
bool mgr_plog_rx(uint16_t port, struct rte_mbuf *m);
/* Any thread: the link to the primary of mgr.cfg.remote[remote] went down. */
void mgr_plog_link_down(int remote);

/* link_watch.c: the link-down failover trigger, on the control thread.
 * _init after mgr_plog_init and the control thread's epoll set; _event when
 * its rtnetlink socket (CTL_EV_LINK) is readable; _poll every loop (returns
 * the ms until it must run again). */
int mgr_link_watch_init(void);
void mgr_link_watch_event(void);
int mgr_link_watch_poll(void);
void mgr_link_watch_fini(void);

/* rsync_unit.c: remote resiliency's primary and standby roles.  The RX unit
 * calls _ingress for every frame of a port rsync_in_port[] marks: true when
 * it took the frame (dropped, counted, or a control frame), false when the
 * frame goes on, its shim removed, with its timestamp and REPLAY flag in
 * *ts / *flags (for the packet's metadata once it is routed). */
struct rte_tel_data;
int mgr_rsync_init(void);
bool mgr_rsync_ingress(struct mgr_dp_ctx *ctx, uint16_t port, struct rte_mbuf *m, uint64_t *ts,
		       uint8_t *flags);
/* RX unit, for frames of a port rsync_sync_port[] marks: true if it took `m`
 * (an RSync frame from the peer). */
bool mgr_rsync_sync_rx(struct mgr_dp_ctx *ctx, uint16_t port, struct rte_mbuf *m);
/* RX unit, every poll on a node that is standby of a chain: the standby
 * sessions' timers (a HEARTBEAT asking for a full cut).  Returns work. */
int mgr_rsync_rx_timers(struct mgr_dp_ctx *ctx);
/* TX unit: every poll (control frames, timers), and for every stamped or
 * unstamped packet it sends to a port rsync_out_port[] marks (the packet is
 * taken: latched, sent, or dropped and counted). */
int mgr_rsync_tx(struct mgr_dp_ctx *ctx);
void mgr_rsync_on_exit(struct mgr_dp_ctx *ctx, uint16_t port, struct rte_mbuf *m);
void mgr_rsync_telemetry(struct rte_tel_data *d); /* adds its chains to /onvm/remote */
/* RX unit, after each burst of a port rsync_in_port[] marks: a consistent-cut
 * marker to send into the chain now (metadata: ts; the caller routes it), or
 * NULL. */
struct rte_mbuf *mgr_rsync_marker_due(uint16_t port);
/* marker_align.c: a protected chain's markers between its NFs.  _fanout
 * sends marker `m` (its metadata routed: chain_id) to every instance of
 * chain step `step`, or to the exit past the last; _from_nf takes a marker
 * NF `id` passed on and returns true when the NF's output is now held
 * (ctx->align_held) for its siblings'; _poll, each TX poll while an output
 * is held, passes on or gives up; _forget: NF `id` is gone, or its slot was
 * taken since it was held (its stash stays, to be routed on).  _poll and
 * _forget return work done (a marker passed on). */
void mgr_marker_fanout(struct mgr_dp_ctx *ctx, struct rte_mbuf *m, uint16_t step);
bool mgr_marker_from_nf(struct mgr_dp_ctx *ctx, uint16_t id, struct rte_mbuf *m);
int mgr_align_poll(struct mgr_dp_ctx *ctx);
int mgr_align_forget(struct mgr_dp_ctx *ctx, uint16_t id);
void mgr_align_reset(void); /* tests: no alignment open */
/* datapath.c: a copy of a marker for NF `id` was dropped on its full ring:
 * reported lost, and taken out of its step's record of the fan-out. */
void mgr_marker_copy_dropped(const struct rte_mbuf *m, uint16_t id);
/* The cut id a marker carries (0: too short to hold struct onvm_marker). */
uint64_t mgr_marker_cut(const struct rte_mbuf *m);
/* A marker of a protected chain was lost on the way: the primary asks for
 * the next one at once -- if it is the newest sent into the chain (an older
 * one's loss says nothing of the marker out now). */
void mgr_marker_lost(const struct rte_mbuf *m);
/* datapath.c: `m` to destination `d` (buffered; counted when dropped). */
void mgr_dp_dispatch(struct mgr_dp_ctx *ctx, struct rte_mbuf *m, const struct mgr_dest *d);
/* nf_ipc.c: where a protected chain's NF's state block goes (rsync_unit_state.c):
 * 1 placed (*pl filled), 0 not such an NF (first-fit), <0 refused (why). */
struct nf_state_layout;
struct mgr_rsync_placement {
	uint64_t off;	   /* the block, at the same offset on primary and standby */
	uint64_t cut_off;  /* primary: the cut area after it, cut_size bytes */
	uint64_t cut_size; /* 0: none (standby) */
	uint64_t cut_log;  /* the cut log's bytes in that area */
	bool parked;	   /* standby: the NF waits until the takeover */
};
int mgr_rsync_state_place(const struct onvm_nf_slot *s, const struct nf_state_layout *layout,
			  struct mgr_rsync_placement *pl, char *why, size_t whylen);
/* nf_ipc.c, after setting slot->remote_parked: unpark it if the takeover
 * came meanwhile. */
void mgr_rsync_state_parked_check(struct onvm_nf_slot *s);
/* Whether an NF of `service` registering now is a protected chain's NF on
 * its standby node, before the takeover: it starts parked. */
bool mgr_rsync_parks(uint16_t service);
/* Whether `off` lies in a protected chain's reserved state windows. */
bool mgr_rsync_state_window(uint64_t off);
/* The newest marker id sent into the protected chain of `service` (0: none),
 * an NF's nd_cut_floor at registration. */
uint64_t mgr_rsync_marker_floor(uint16_t service);
void mgr_rsync_fini(void); /* after the units stopped: held packets back to the pool */

/* mgr_state.c: the layout of slot `s`'s state block from the regions its NF
 * requested (copied first: the NF writes them).  0, or <0 with a sentence
 * in err (may be NULL). */
struct nf_state_layout;
int mgr_nf_state_layout(const struct onvm_nf_slot *s, struct nf_state_layout *layout, char *err,
			size_t errlen);

/* datapath.c: buffer `m` for `port` on unit `ctx` (flushed at the end of the
 * poll), for the units' own frames and released packets. */
void mgr_dp_to_port(struct mgr_dp_ctx *ctx, struct rte_mbuf *m, uint16_t port);
/* At exit, after the units stopped: what any unit still buffers (a marker
 * kept for a full ring, a held port's packets) back to the pool, counted. */
void mgr_dp_drop_leftovers(void);
/* The same, but false (and `m` still the caller's) when the port's buffer is
 * full and it takes nothing now; _room: how many packets it takes now. */
bool mgr_dp_port_try(struct mgr_dp_ctx *ctx, struct rte_mbuf *m, uint16_t port);
unsigned int mgr_dp_port_room(struct mgr_dp_ctx *ctx, uint16_t port);
void mgr_bfd_log_flush(void);	 /* the control thread: log queued session events */
/* Session state changes (up/down with diagnostic) for other modules, e.g.
 * remote failover.  Called on the BFD unit's lcore: must not block. */
int mgr_bfd_subscribe(bfd_event_fn fn, void *arg);

/* vdev_guard.c: what secondaries probe */
int mgr_vdev_guard_init(void);

/* stats.c / telemetry.c */
void mgr_stats_print(double interval_s);
int mgr_telemetry_init(void);

uint64_t mgr_now_ns(void);
int mgr_qsbr_thread_id(void); /* this lcore's QSBR id, or -1 */

#endif /* MGR_H */
