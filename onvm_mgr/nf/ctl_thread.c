/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * ctl_thread.c -- the control thread: every slow or blocking step of the NF
 * life cycle, off the data lcores.
 *
 * The data lcores (RX, TX, BFD units) only ever do non-blocking work.  What
 * used to run between their polls -- epoll on the NFs' pidfds, fork/exec of
 * standbys, reclamation, hung-NF checks -- runs here, in one thread that
 * sleeps in epoll_wait until an NF exits, an NF registers, the main lcore asks
 * for something (shutdown), or a timer is due.  It also writes what the data
 * lcores must not: console statistics and the BFD unit's session events.  So a standby relaunch (a fork
 * of a process with gigabytes of hugepages mapped, then exec) never stalls
 * forwarding, and the thread may take mgr.ctl_lock and wait for it.
 *
 * Placement: by default an EAL control thread (on the CPUs EAL gives control
 * threads: those the lcores leave free, else all of the process's).  With
 * `units.ctrl` set to an lcore, that lcore runs this loop and nothing else.
 *
 * Timers: while a slot is in a transition (starting, ready but not running,
 * dead and draining, handed over but not yet promoted) the thread looks every
 * CTL_BUSY_MS; otherwise every CTL_IDLE_MS, or a quarter of the heartbeat
 * period if that is shorter, so a hung NF is found within 1.25 periods.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_version.h>
#if RTE_VERSION >= RTE_VERSION_NUM(23, 11, 0, 0)
#include <rte_thread.h>
#endif

#include "nf_ctl.h"
#include "elastic/move.h"
#include "stateless/stateless.h"

#define CTL_BUSY_MS 1
#define CTL_IDLE_MS 100

/* Requests from the main lcore (it must not take ctl_lock: see nf_ctl.h). */
#define CTL_REQ_STOP_ALL 0x1u
#define CTL_REQ_KILL	 0x2u

static uint32_t ctl_requests;
static bool ctl_quit;
static bool ctl_on_lcore;
#if RTE_VERSION >= RTE_VERSION_NUM(23, 11, 0, 0)
static rte_thread_t ctl_thread;
#else
static pthread_t ctl_thread;
#endif

/*
 * Hung NFs: a running NF that is not asleep waiting for work bumps its
 * heartbeat on every loop iteration; one that has not for heartbeat_ms is
 * stuck (an endless handler, a deadlock, a blocking call) and gets SIGKILL,
 * through its pidfd, after which the ordinary death path runs: its standby
 * takes over, or its packets are reclaimed.
 */
static void
check_heartbeat(uint16_t id, uint64_t now)
{
	struct onvm_nf_slot *s = &mgr.shm->nfs[id];
	struct mgr_nf_priv *p = &mgr.nf_priv[id];
	uint64_t hb = s->heartbeat;

	if (s->status != ONVM_NF_RUNNING || p->exited || p->killed || s->sleeping ||
	    hb != p->hb_seen || p->hb_moved_ns == 0) {
		p->hb_seen = hb;
		p->hb_moved_ns = now;
		return;
	}
	if (now - p->hb_moved_ns < mgr.cfg.nf_heartbeat_ms * 1000000ULL)
		return;
	NFCTL_LOG(ERR, "NF '%s' (pid %d, instance %u) made no progress for %u ms: killing it",
		  s->name, p->pid, id, mgr.cfg.nf_heartbeat_ms);
	if (p->pidfd < 0 || syscall(SYS_pidfd_send_signal, p->pidfd, SIGKILL, NULL, 0) < 0) {
		NFCTL_LOG(ERR, "cannot kill NF pid %d: %s", p->pid,
			  p->pidfd < 0 ? "no pidfd" : strerror(errno));
		p->hb_moved_ns = now; /* say it again after another period */
		return;
	}
	p->killed = true;
	s->hung_kills++;
	mgr.nf_hung++;
}

static void
stop_all(void)
{
	mgr.shm->shutting_down = 1;
	for (uint16_t id = 0; id < ONVM_MAX_NFS; id++) {
		struct onvm_nf_slot *s = &mgr.shm->nfs[id];

		if (s->status == ONVM_NF_FREE)
			continue;
		s->stop = 1;
		rte_smp_mb();
		mgr_nf_wake(s);
	}
}

/* SIGKILL the process watch `pidfd` names -- through the pidfd: a container
 * NF is not our child, no zombie holds its pid -- and, if that is a runtime
 * CLI still starting a container (`ctr_name` non-NULL), the container too
 * (the CLI's death would leave it).  0, or -errno. */
static int
kill_watched(int pidfd, const char *ctr_name)
{
	int ret = pidfd < 0 ? -EBADF
		  : syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0) == 0 ? 0 : -errno;

	if (ctr_name != NULL)
		mgr_ctr_remove(ctr_name);
	return ret;
}

int
mgr_nf_kill(uint16_t id, const char *why)
{
	struct onvm_nf_slot *s = &mgr.shm->nfs[id];
	struct mgr_nf_priv *p = &mgr.nf_priv[id];
	int err;

	MGR_ASSERT_CTL_LOCKED();
	if (s->status == ONVM_NF_FREE || !s->launched || p->exited || p->killed)
		return 0;
	/* Not registered yet: it is in DPDK's start, maybe holding the lock
	 * on the node's memory map that every process's start takes (a heap
	 * growing waits for the primary with it held).  Killed there, it
	 * leaves that lock held for good, and no NF of the node starts again
	 * (they spin in rte_mcfg_mem_read_lock()).  So it is refused when it
	 * registers, and leaves by itself; one that never registers is the
	 * start time-out's.  (A container's runtime is killed as before: it
	 * stops the NF's process from outside.) */
	if (s->status == ONVM_NF_STARTING && !p->launcher_watched) {
		if (!p->kill_at_register)
			NFCTL_LOG(WARNING, "NF '%s' pid %d (instance %u): to stop when it registers: %s",
				  s->name, s->pid, id, why);
		p->kill_at_register = p->recovery_kill = true;
		return 0;
	}
	NFCTL_LOG(WARNING, "NF '%s' pid %d (instance %u): SIGKILL: %s", s->name, s->pid, id, why);
	err = kill_watched(p->pidfd, p->launcher_watched ? p->ctr_name : NULL);
	if (err == 0)
		p->killed = p->recovery_kill = true;
	return err;
}

/* Shutdown back-stop: SIGKILL every NF we launched that is still there. */
static void
kill_launched(void)
{
	for (uint16_t id = 0; id < ONVM_MAX_NFS; id++) {
		struct onvm_nf_slot *s = &mgr.shm->nfs[id];

		struct mgr_nf_priv *p = &mgr.nf_priv[id];

		if (s->status != ONVM_NF_FREE && s->launched && !p->exited && s->pid > 0) {
			NFCTL_LOG(WARNING, "NF '%s' pid %d did not stop: SIGKILL", s->name, s->pid);
			kill_watched(p->pidfd, p->launcher_watched ? p->ctr_name : NULL);
			p->killed = true;
		}
		if (p->sb_pid > 0 && !p->sb_exited)
			kill_watched(p->sb_pidfd, p->sb_launcher_watched ? p->sb_ctr_name : NULL);
	}
}

/* One pass over the slots; returns the milliseconds until the next is due.
 * ctl_lock held. */
static int
scan_slots(void)
{
	uint64_t now_ns = mgr_now_ns();
	int next_ms = CTL_IDLE_MS;

	MGR_ASSERT_CTL_LOCKED();
	if (mgr.cfg.nf_heartbeat_ms != 0)
		next_ms = RTE_MIN(next_ms, (int)RTE_MAX(mgr.cfg.nf_heartbeat_ms / 4, 1u));
	for (uint16_t id = 0; id < ONVM_MAX_NFS; id++) {
		struct onvm_nf_slot *s = &mgr.shm->nfs[id];
		struct mgr_nf_priv *p = &mgr.nf_priv[id];

		if (s->status == ONVM_NF_FREE)
			continue;
		if (p->awaiting_promotion && s->failovers != p->sb_failovers) {
			p->awaiting_promotion = false;
			mgr.nf_failovers++;
		} else if (p->awaiting_promotion && !p->killed &&
			   now_ns - p->handed_ns > mgr.cfg.nf_start_timeout_ms * 1000000ULL) {
			/* A standby that never takes over (stuck before it parked)
			 * would leave the slot with nobody consuming it, and the
			 * hung check off: the ordinary death path instead. */
			NFCTL_LOG(ERR, "standby pid %d of NF '%s' (instance %u) did not take over "
				       "within %u ms of its active's death: killing it",
				  p->pid, s->name, id, mgr.cfg.nf_start_timeout_ms);
			int err = kill_watched(p->pidfd, p->launcher_watched ? p->ctr_name : NULL);

			if (err == 0) {
				p->killed = true;
			} else {
				NFCTL_LOG(ERR, "cannot kill standby pid %d: %s", p->pid, strerror(-err));
				p->handed_ns = now_ns; /* again after another period */
			}
		}
		if (mgr.cfg.nf_heartbeat_ms != 0 && !p->awaiting_promotion)
			check_heartbeat(id, now_ns);
		/* Running -- or parked for a remote takeover: settled too (its
		 * start-up is over; a local standby may start for it, and the
		 * node's start-up need not wait for the takeover). */
		if (s->status == ONVM_NF_READY &&
		    (s->nf_running || __atomic_load_n(&s->remote_park_ack, __ATOMIC_ACQUIRE)))
			s->status = ONVM_NF_RUNNING;
		/* (launch_ns may be after now_ns: an NF launched again in
		 * this very scan, by mgr_nf_handle_exit) */
		if (s->status == ONVM_NF_STARTING && !p->exited && !p->killed &&
		    now_ns > s->launch_ns &&
		    now_ns - s->launch_ns > mgr.cfg.nf_start_timeout_ms * 1000000ULL) {
			NFCTL_LOG(ERR, "NF '%s' pid %d did not register in %u ms: killing it",
				  s->name, s->pid, mgr.cfg.nf_start_timeout_ms);
			kill_watched(p->pidfd, p->launcher_watched ? p->ctr_name : NULL);
			p->killed = true;
		}
		/* A container standby gets the NFs' start time-out to register
		 * (a process standby is watched from its fork, and stopped by
		 * its own failures): then its runtime is killed, the container
		 * removed, and the exit counts as a failure (back-off). */
		if (p->sb_launcher_watched && p->sb_pid != 0 && !p->sb_exited && !p->sb_killed &&
		    now_ns - p->sb_launch_ns > mgr.cfg.nf_start_timeout_ms * 1000000ULL) {
			NFCTL_LOG(ERR, "standby of NF '%s' (instance %u): container %s did not "
				       "register in %u ms: killing it",
				  s->name, id, p->sb_ctr_name, mgr.cfg.nf_start_timeout_ms);
			kill_watched(p->sb_pidfd, p->sb_ctr_name);
			p->sb_killed = true;
		}
		if (p->sb_exited && p->sb_pid != 0)
			mgr_nf_standby_exited(id, now_ns); /* without being promoted */
		else if (p->sb_pid != 0 && !p->sb_has_parked &&
			 __atomic_load_n(&s->standby_parked, __ATOMIC_ACQUIRE))
			mgr_nf_standby_parked(id);
		/* (a container standby still starting is not published: its
		 * runtime CLI is what the manager watches until it registers) */
		if (p->exited && (s->status == ONVM_NF_READY || s->status == ONVM_NF_RUNNING) &&
		    ((s->standby_pid != 0 && p->sb_pid == s->standby_pid) ||
		     (p->sb_launcher_watched && p->sb_pid != 0 && !mgr.shm->shutting_down)) &&
		    !p->sb_exited)
			mgr_nf_hand_over(id);
		else
			while (p->exited && s->status != ONVM_NF_FREE && mgr_nf_handle_exit(id))
				;
		if (mgr_nf_standby_due(id, now_ns))
			mgr_nf_launch_standby(id);
		if (s->status == ONVM_NF_STARTING || s->status == ONVM_NF_READY ||
		    s->status == ONVM_NF_DEAD || p->awaiting_promotion ||
		    (p->sb_pid != 0 && !p->sb_has_parked))
			next_ms = CTL_BUSY_MS;
		else if (p->sb_retry_ns > now_ns && mgr_nf_standby_due(id, p->sb_retry_ns))
			next_ms = RTE_MIN(next_ms, (int)((p->sb_retry_ns - now_ns) / 1000000) + 1);
	}
	return next_ms;
}

/* Console statistics every stats.interval_ms (written here, not on a data
 * lcore: stdout may be a slow pipe).  Returns ms until the next, or
 * CTL_IDLE_MS if there are none. */
static int
console_stats(uint64_t now_ns)
{
	static uint64_t last;
	long ms = mgr.stats_ms_override >= 0 ? mgr.stats_ms_override : mgr.cfg.stats_interval_ms;
	uint64_t period;

	if (mgr.quiet || ms <= 0)
		return CTL_IDLE_MS;
	period = (uint64_t)ms * 1000000ULL;
	if (last == 0)
		last = now_ns;
	if (now_ns - last >= period) {
		mgr_stats_print((double)(now_ns - last) / 1e9);
		last = now_ns;
	}
	return (int)((last + period - now_ns) / 1000000) + 1;
}

static void
ctl_loop(void)
{
	const char *fault = getenv("ONVM_MGR_FAULT");
	unsigned int event_delay_ms = 0;
	int timeout_ms = 0;

	/* ONVM_MGR_FAULT=ctl_event_delay:MS -- a test widens the window between
	 * epoll_wait() returning and the events being handled under ctl_lock
	 * (registrations on the IPC thread may come in between). */
	if (fault != NULL && sscanf(fault, "ctl_event_delay:%u", &event_delay_ms) == 1)
		MGR_LOG(WARNING, "fault injection: NF events handled %u ms late", event_delay_ms);
	while (!__atomic_load_n(&ctl_quit, __ATOMIC_ACQUIRE)) {
		struct epoll_event evs[16];
		int n = epoll_wait(mgr.epfd, evs, RTE_DIM(evs), timeout_ms);
		uint32_t req = __atomic_exchange_n(&ctl_requests, 0, __ATOMIC_ACQ_REL);

		for (int i = 0; i < n && event_delay_ms != 0; i++)
			if ((evs[i].data.u32 & ~STANDBY_TAG) < ONVM_MAX_NFS) { /* a pidfd's */
				usleep(event_delay_ms * 1000);
				break;
			}
		mgr_ctl_lock();
		if (n > 0)
			mgr_nf_handle_events(evs, n);
		if (req & CTL_REQ_STOP_ALL)
			stop_all();
		if (req & CTL_REQ_KILL)
			kill_launched();
		timeout_ms = scan_slots();
		if (mgr_sl_any)
			timeout_ms = RTE_MIN(timeout_ms, mgr_sl_ctl());
		if (__atomic_load_n(&mgr_moves_any, __ATOMIC_ACQUIRE)) {
			timeout_ms = RTE_MIN(timeout_ms, mgr_move_ctl());
			timeout_ms = RTE_MIN(timeout_ms, mgr_scale_ctl());
		}
		mgr_ctl_unlock();
		mgr_bfd_log_flush();
		timeout_ms = RTE_MIN(timeout_ms, console_stats(mgr_now_ns()));
		timeout_ms = RTE_MIN(timeout_ms, mgr_link_watch_poll());
	}
}


#if RTE_VERSION >= RTE_VERSION_NUM(23, 11, 0, 0)
static uint32_t
ctl_thread_main(void *arg)
{
	(void)arg;
	ctl_loop();
	return 0;
}
#else
static void *
ctl_thread_main(void *arg)
{
	(void)arg;
	ctl_loop();
	return NULL;
}
#endif

static int
ctl_lcore_main(void *arg)
{
	(void)arg;
	ctl_loop();
	return 0;
}

int
mgr_nf_ctl_init(void)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = CTL_EV_REGISTRATION};
	pthread_mutexattr_t attr;

	pthread_mutexattr_init(&attr);
	pthread_mutex_init(&mgr.ctl_lock, &attr);
	for (int i = 0; i < ONVM_MAX_NFS; i++)
		mgr.nf_priv[i] = MGR_NF_PRIV_INIT;
	mgr.epfd = epoll_create1(EPOLL_CLOEXEC);
	mgr.ctl_evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (mgr.epfd < 0 || mgr.ctl_evfd < 0 ||
	    epoll_ctl(mgr.epfd, EPOLL_CTL_ADD, mgr.ctl_evfd, &ev) < 0) {
		MGR_LOG(ERR, "epoll/eventfd: %s", strerror(errno));
		return -errno;
	}
	if (mgr_nf_reaper_start() < 0)
		return -1;
	return mgr_nf_ipc_init();
}

int
mgr_ctl_start(void)
{
	int lc = mgr.cfg.unit_lcore[MGR_UNIT_CTRL];
	int ret;

	if (lc >= 0) {
		ctl_on_lcore = true;
		ret = rte_eal_remote_launch(ctl_lcore_main, NULL, lc);
		if (ret != 0)
			MGR_LOG(ERR, "units.ctrl: cannot start the control loop on lcore %d: %s",
				lc, strerror(-ret));
		return ret;
	}
#if RTE_VERSION >= RTE_VERSION_NUM(23, 11, 0, 0)
	ret = rte_thread_create_control(&ctl_thread, "onvm-ctl", ctl_thread_main, NULL);
#else
	ret = rte_ctrl_thread_create(&ctl_thread, "onvm-ctl", NULL, ctl_thread_main, NULL);
#endif
	if (ret != 0)
		MGR_LOG(ERR, "cannot start the control thread: %s", strerror(ret < 0 ? -ret : ret));
	return ret != 0 ? -1 : 0;
}

static void
ctl_request(uint32_t req)
{
	__atomic_fetch_or(&ctl_requests, req, __ATOMIC_RELEASE);
	mgr_ctl_wake();
}

void
mgr_ctl_stop(void)
{
	__atomic_store_n(&ctl_quit, true, __ATOMIC_RELEASE);
	ctl_request(0);
	if (ctl_on_lcore)
		rte_eal_wait_lcore(mgr.cfg.unit_lcore[MGR_UNIT_CTRL]);
	else
#if RTE_VERSION >= RTE_VERSION_NUM(23, 11, 0, 0)
		rte_thread_join(ctl_thread, NULL);
#else
		pthread_join(ctl_thread, NULL);
#endif
	mgr_nf_reaper_stop();
}

void
mgr_nf_stop_all(void)
{
	ctl_request(CTL_REQ_STOP_ALL);
}

void
mgr_nf_kill_launched(void)
{
	ctl_request(CTL_REQ_KILL);
}

/*
 * Start-up: every launched NF registered, and the chains are protected: the
 * "local" NFs' standbys (started by the control thread once their active
 * runs) are parked.  Until then the ports stay stopped.  Polled by the main
 * thread before the data lcores start.
 */
int
mgr_nf_wait_ready(uint32_t timeout_ms)
{
	uint64_t deadline = mgr_now_ns() + (uint64_t)timeout_ms * 1000000ULL;

	for (;;) {
		int pending = 0, failed = 0;
		uint64_t newest = 0; /* launch of the newest NF still starting */

		mgr_ctl_lock();
		/* The control thread reaps an NF that exits before it registers
		 * (and says so in the log); start-up fails on it. */
		failed = (int)mgr.nf_start_failures;
		for (uint16_t id = 0; id < ONVM_MAX_NFS; id++) {
			const struct onvm_nf_slot *s = &mgr.shm->nfs[id];
			const struct mgr_nf_priv *p = &mgr.nf_priv[id];

			if (!s->launched || s->status == ONVM_NF_FREE)
				continue;
			/* A container that has not registered in its time is
			 * killed and counted by the control thread; the node
			 * starts without it (a process NF's failure fails it). */
			if (s->status == ONVM_NF_STARTING && p->launcher_watched &&
			    (p->killed || mgr_now_ns() - s->launch_ns >
						  (uint64_t)mgr.cfg.nf_start_timeout_ms * 1000000ULL))
				continue;
			if (s->status == ONVM_NF_STARTING) {
				pending++;
				newest = RTE_MAX(newest, s->launch_ns);
			} else if (p->cfg_index >= 0 && mgr.cfg.nfs[p->cfg_index].local &&
				   !p->exited &&
				   (s->status != ONVM_NF_RUNNING || !s->standby_parked) &&
				   /* a container standby that has not parked in
				    * the time-out: the node starts unprotected
				    * there, the standby retried with back-off */
				   !(mgr_nf_in_container(p) &&
				     mgr_now_ns() - s->launch_ns >
					     2 * (uint64_t)mgr.cfg.nf_start_timeout_ms * 1000000ULL)) {
				pending++;
			}
		}
		mgr_ctl_unlock();
		if (failed > 0)
			return -ECHILD;
		if (pending == 0)
			return 0;
		/* (an NF launched again gets its whole time-out too) */
		if ((mgr_now_ns() > deadline &&
		     mgr_now_ns() - newest > (uint64_t)timeout_ms * 1000000ULL) ||
		    mgr.force_quit) {
			MGR_LOG(ERR, "%d NF(s) did not register within %u ms", pending,
				timeout_ms);
			return -ETIMEDOUT;
		}
		usleep(2000);
	}
}
