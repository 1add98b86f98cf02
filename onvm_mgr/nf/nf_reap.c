/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * nf_reap.c -- NF deaths and what they leave behind.
 *
 * Death is an event, never a poll: every NF's process is watched through a
 * pidfd in the control thread's epoll set (pidfd_open works for NFs we did
 * not start, too); the reaper thread (nf_reaper.c) reaps it.  When it fires, the NF is taken out of its service, a
 * grace period makes sure no data unit still enqueues to it, and its mbufs
 * are returned:
 *   - the packets it held, found through the batch record in its slot
 *     (struct onvm_nf_batch explains why this is exact);
 *   - the backlog of its RX ring;
 *   - its mempool per-lcore cache;
 * while the TX unit forwards whatever it had already emitted.  Only then is
 * the slot free for reuse.  A slot whose active has a live standby is handed
 * over instead (nf_failover.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring.h>

#include "onvm_nf_batch.h"

#include "ftc/ftc.h"
#include "stateless/stateless.h"
#include "nf_ctl.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

int
mgr_nf_pidfd_open(pid_t pid)
{
	return syscall(SYS_pidfd_open, pid, 0);
}

/*
 * The pid, in the manager's pid namespace, of the process pidfd `fd` refers
 * to -- the kernel's "Pid:" line in the fd's fdinfo -- and in `*own_ns` its
 * pid in its own namespace (the last "NSpid:" field; 0 if the kernel does not
 * say).  -ENOTSUP: not a pidfd; -ESRCH: the process has exited, or is not
 * visible from here; another -errno: the fdinfo could not be read.
 */
pid_t
mgr_nf_pidfd_pid(int fd, pid_t *own_ns)
{
	char path[48], buf[512];
	pid_t pid = -ENOTSUP;
	const char *l;
	ssize_t n;
	int f;

	*own_ns = 0;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return -errno;
	n = read(f, buf, sizeof(buf) - 1); /* the kernel writes it in one go */
	if (n < 0)
		pid = -errno;
	close(f);
	if (n < 0)
		return pid;
	buf[n] = '\0';
	for (l = buf; l != NULL && *l != '\0'; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		int v;

		if (sscanf(l, "Pid: %d", &v) == 1) {
			pid = v > 0 ? v : -ESRCH; /* 0: another namespace, -1: gone */
		} else if (strncmp(l, "NSpid:", 6) == 0) {
			const char *end = strchr(l, '\n');
			const char *last = end ? end : l + strlen(l);

			while (last > l && (last[-1] == ' ' || last[-1] == '\t'))
				last--;
			while (last > l && last[-1] >= '0' && last[-1] <= '9')
				last--;
			*own_ns = (pid_t)atoi(last);
		}
	}
	return pid;
}

/* Put pidfd `fd` of `pid` (or, with fd < 0, a new one) in the control
 * thread's epoll set, tagged `tag`; the fd, or -errno (the fd closed). */
static int
watch(pid_t pid, int fd, uint32_t tag)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = tag};
	int err;

	if (fd < 0)
		fd = mgr_nf_pidfd_open(pid);
	if (fd >= 0 && epoll_ctl(mgr.epfd, EPOLL_CTL_ADD, fd, &ev) == 0)
		return fd;
	err = errno;
	NFCTL_LOG(ERR, "cannot watch pid %d: %s", pid, strerror(err));
	if (fd >= 0)
		close(fd);
	return -err;
}

/* Not watched means not known to be alive or dead: the callers refuse the
 * NF rather than guess (reclaiming a live NF's mbufs would free what it
 * still uses). */
int
mgr_nf_watch_pid(uint16_t id, pid_t pid, int pidfd)
{
	struct mgr_nf_priv *p = &mgr.nf_priv[id];
	int fd = watch(pid, pidfd, id);

	MGR_ASSERT_CTL_LOCKED();
	if (fd < 0)
		return fd;
	p->pid = pid;
	p->pidfd = fd;
	return 0;
}

static void
unwatch(uint16_t id)
{
	struct mgr_nf_priv *p = &mgr.nf_priv[id];

	if (p->pidfd >= 0) {
		epoll_ctl(mgr.epfd, EPOLL_CTL_DEL, p->pidfd, NULL);
		mgr_nf_reap(p->pidfd);
		p->pidfd = -1;
	}
}

/* The exit status of the process `pidfd` refers to, if it is our child and
 * has exited; it stays a zombie (WNOWAIT): the reaper thread reaps it. */
static bool
exit_status(int pidfd, siginfo_t *si)
{
	memset(si, 0, sizeof(*si));
	return syscall(SYS_waitid, P_PIDFD, pidfd, si, WEXITED | WNOHANG | WNOWAIT, NULL) == 0 &&
	       si->si_pid != 0;
}

/* Record `pid` as slot `id`'s standby and watch its pidfd. */
int
mgr_nf_watch_standby(uint16_t id, pid_t pid, int pidfd)
{
	struct mgr_nf_priv *p = &mgr.nf_priv[id];
	int fd = watch(pid, pidfd, id | STANDBY_TAG);

	MGR_ASSERT_CTL_LOCKED();
	if (fd < 0)
		return fd;
	p->sb_pid = pid;
	p->sb_pidfd = fd;
	p->sb_exited = false;
	p->sb_failovers = mgr.shm->nfs[id].failovers;
	return 0;
}

bool
mgr_nf_fd_fired(int fd)
{
	return fd >= 0 && poll(&(struct pollfd){.fd = fd, .events = POLLIN}, 1, 0) > 0;
}

/*
 * Processes let go while still running -- a container's runtime CLI, whose
 * NF has registered or died, cleaning up its container; a `podman rm` --
 * are watched here until they exit, then reaped: the reaper thread must only
 * ever wait for a process that has exited (one CLI that hangs would stop
 * every reap behind it).  Tagged ORPHAN_TAG | index.  ctl_lock held.
 */
#define ORPHAN_MAX 256
static int orphans[ORPHAN_MAX] = {[0 ... ORPHAN_MAX - 1] = -1};

void
mgr_nf_reap_later(int fd)
{
	struct epoll_event ev = {.events = EPOLLIN};

	MGR_ASSERT_CTL_LOCKED();
	if (fd < 0)
		return;
	if (!mgr_nf_fd_fired(fd)) {
		errno = 0;
		for (uint32_t i = 0; i < ORPHAN_MAX; i++) {
			if (orphans[i] >= 0)
				continue;
			ev.data.u32 = ORPHAN_TAG | i;
			if (epoll_ctl(mgr.epfd, EPOLL_CTL_MOD, fd, &ev) == 0 ||
			    (errno == ENOENT && epoll_ctl(mgr.epfd, EPOLL_CTL_ADD, fd, &ev) == 0)) {
				orphans[i] = fd;
				return;
			}
			break;
		}
		/* The reaper must not wait on a running process (one that
		 * hangs would hold every reap behind it): it goes now. */
		NFCTL_LOG(WARNING, "a process let go still runs and cannot be watched (%s): "
				   "killed",
			  errno != 0 ? strerror(errno) : "all watch places taken");
		syscall(SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0);
	}
	epoll_ctl(mgr.epfd, EPOLL_CTL_DEL, fd, NULL);
	mgr_nf_reap(fd);
}

void
mgr_nf_launcher_retire(int *fd)
{
	MGR_ASSERT_CTL_LOCKED();
	mgr_nf_reap_later(*fd);
	*fd = -1;
}

void
mgr_nf_launcher_move(int *from, int *to, uint32_t tag)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = tag};

	MGR_ASSERT_CTL_LOCKED();
	if (from == to)
		return;
	mgr_nf_launcher_retire(to);
	*to = *from;
	*from = -1;
	if (*to >= 0)
		epoll_ctl(mgr.epfd, EPOLL_CTL_MOD, *to, &ev);
}

/* A container runtime CLI whose NF had registered has exited (the container
 * is gone, or the CLI alone was killed: the NF's own pidfd tells). */
static void
launcher_exited(uint16_t id, bool standby)
{
	struct mgr_nf_priv *p = &mgr.nf_priv[id];
	int *fd = standby ? &p->sb_launcher_pidfd : &p->launcher_pidfd;
	siginfo_t si;

	if (*fd >= 0 && exit_status(*fd, &si) && (si.si_code != CLD_EXITED || si.si_status != 0))
		NFCTL_LOG(INFO, "container %s of NF '%s' (instance %u): runtime exited with %s %d",
			  standby ? p->sb_ctr_name : p->ctr_name, mgr.shm->nfs[id].name, id,
			  si.si_code == CLD_EXITED ? "status" : "signal", si.si_status);
	mgr_nf_launcher_retire(fd);
}

/* Events the control thread's epoll_wait returned: pidfds of exited NFs
 * and standbys, and the registration eventfd.  ctl_lock held. */
void
mgr_nf_handle_events(const struct epoll_event *evs, int n)
{
	MGR_ASSERT_CTL_LOCKED();
	for (int i = 0; i < n; i++) {
		uint32_t id = evs[i].data.u32;

		if (id != CTL_EV_LINK && id != CTL_EV_REGISTRATION && (id & ORPHAN_TAG)) {
			uint32_t k = id & 0xffffu;

			if (k < ORPHAN_MAX && orphans[k] >= 0) {
				epoll_ctl(mgr.epfd, EPOLL_CTL_DEL, orphans[k], NULL);
				mgr_nf_reap(orphans[k]); /* exited: the reaper does not wait */
				orphans[k] = -1;
			}
			continue;
		}
		if (id != CTL_EV_LINK && id != CTL_EV_REGISTRATION && (id & LAUNCHER_TAG) &&
		    (id & 0xffffu) < ONVM_MAX_NFS) {
			launcher_exited(id & 0xffffu, (id & STANDBY_TAG) != 0);
			continue;
		}
		if (id == CTL_EV_LINK) {
			mgr_link_watch_event();
			continue;
		}
		if (id == CTL_EV_REGISTRATION) {
			uint64_t v;

			if (read(mgr.ctl_evfd, &v, sizeof(v)) < 0)
				continue;
			continue;
		}
		/* An event epoll_wait() returned before ctl_lock was taken may be
		 * of a pidfd the IPC thread has moved since (a container NF's
		 * CLI, replaced by the NF's own at registration): only the
		 * descriptor watched now, fired, says a process is gone. */
		if ((id & STANDBY_TAG) && (id & ~STANDBY_TAG) < ONVM_MAX_NFS &&
		    !mgr_nf_fd_fired(mgr.nf_priv[id & ~STANDBY_TAG].sb_pidfd))
			continue;
		if (id < ONVM_MAX_NFS && !mgr_nf_fd_fired(mgr.nf_priv[id].pidfd))
			continue;
		if ((id & STANDBY_TAG) && (id & ~STANDBY_TAG) < ONVM_MAX_NFS) {
			struct mgr_nf_priv *p = &mgr.nf_priv[id & ~STANDBY_TAG];
			siginfo_t si = {0};

			if (p->sb_pidfd >= 0) {
				/* Our child (launched): its exit status says whether
				 * it failed.  Started by hand: not ours to wait for. */
				if (exit_status(p->sb_pidfd, &si)) {
					p->sb_exit_signal = si.si_code != CLD_EXITED;
					p->sb_exit_status = si.si_status;
					p->sb_exit_failed = p->sb_exit_signal || si.si_status != 0;
				} else if (mgr_nf_in_container(p) && !p->sb_has_parked &&
					   !__atomic_load_n(&mgr.shm->nfs[id & ~STANDBY_TAG]
								     .standby_parked,
							    __ATOMIC_ACQUIRE) &&
					   !__atomic_load_n(&mgr.shm->nfs[id & ~STANDBY_TAG].stop,
							    __ATOMIC_ACQUIRE)) {
					/* A registered container standby (not our
					 * child: no status) gone before it parked,
					 * its active still running: a failure. */
					p->sb_exit_signal = false;
					p->sb_exit_status = -1;
					p->sb_exit_failed = true;
				}
				epoll_ctl(mgr.epfd, EPOLL_CTL_DEL, p->sb_pidfd, NULL);
				mgr_nf_reap(p->sb_pidfd);
				p->sb_pidfd = -1;
			}
			p->sb_exited = true;
			continue;
		}
		if (id < ONVM_MAX_NFS) {
			struct mgr_nf_priv *p = &mgr.nf_priv[id];
			siginfo_t si = {0};

			p->exited = true;
			if (p->pidfd >= 0 && exit_status(p->pidfd, &si)) {
				p->exit_status = si.si_status;
				p->exit_signaled = si.si_code != CLD_EXITED;
			}
			unwatch(id);
		}
	}
}

/*
 * Hand mbufs back to the pool through the TX unit (mgr.ctl_free_ring): this
 * thread may be preempted anywhere, and one preempted inside an operation on
 * the pool's MP/MC ring would make every data lcore that touches the pool
 * spin until it runs again.  Before the data lcores run and after they have
 * stopped nobody can spin on it: directly then.  The ring holds the whole
 * pool, so the enqueue does not fail; never waits.
 */
void
mgr_nf_give_back(struct rte_mbuf **m, unsigned int n)
{
	unsigned int k = 0;

	MGR_ASSERT_NOT_DATA_UNIT();
	if (__atomic_load_n(&mgr.units_running, __ATOMIC_ACQUIRE) &&
	    !__atomic_load_n(&mgr.stop_loops, __ATOMIC_ACQUIRE))
		k = rte_ring_mp_enqueue_burst(mgr.ctl_free_ring, (void **)m, n, NULL);
	if (k < n)
		rte_pktmbuf_free_bulk(m + k, n - k);
}

void
mgr_ctl_free_drain(void)
{
	struct rte_mbuf *pkts[ONVM_BURST];
	unsigned int n;

	while ((n = rte_ring_sc_dequeue_burst(mgr.ctl_free_ring, (void **)pkts, ONVM_BURST,
					      NULL)) > 0)
		rte_pktmbuf_free_bulk(pkts, n);
}

/* A dead NF's mempool cache (an NF calling DPDK's mbuf functions itself,
 * which the NF developer's guide forbids): its objects go back through the
 * TX unit too, and the cache is emptied. */
void
mgr_nf_cache_give_back(uint32_t lcore_id, const char *name, uint16_t id)
{
	struct rte_mempool_cache *c;

	if (lcore_id >= RTE_MAX_LCORE ||
	    (c = rte_mempool_default_cache(mgr.pool, lcore_id)) == NULL || c->len == 0)
		return;
	if (c->len > RTE_DIM(c->objs)) { /* a stray write of the dying NF */
		NFCTL_LOG(ERR, "NF '%s' instance %u: its mempool cache's length %u is impossible; "
			       "its mbufs are lost",
			  name, id, c->len);
		c->len = 0;
		return;
	}
	NFCTL_LOG(WARNING, "NF '%s' instance %u left %u mbufs in its mempool cache (it called "
			   "DPDK's mbuf functions itself)",
		  name, id, c->len);
	mgr_nf_give_back((struct rte_mbuf **)c->objs, c->len);
	c->len = 0;
}

/* Return every mbuf a gone NF still owned; see the comment at the top. */
static void
reclaim_held(uint16_t id)
{
	struct onvm_nf_slot *s = &mgr.shm->nfs[id];
	struct onvm_nf_batch *b = &s->batch;
	struct rte_mbuf *pkts[ONVM_BURST];
	struct onvm_batch_owned own;
	uint32_t freed = 0, n;

	onvm_nf_rings_repair(s);
	if (onvm_batch_owned(s, &own) < 0)
		NFCTL_LOG(ERR, "NF instance %u: inconsistent batch record (held_n %u, rx_seen %u, "
			       "tx_base %u), not reclaiming held packets",
			  id, b->held_n, b->rx_seen, b->tx_base);
	for (uint32_t i = own.first; i < own.last; i++) {
		if (b->held[i] != NULL) {
			mgr_nf_give_back(&b->held[i], 1);
			freed++;
		}
	}
	b->held_n = 0;
	while ((n = rte_ring_sc_dequeue_burst(s->rx_ring, (void **)pkts, ONVM_BURST, NULL)) > 0) {
		mgr_nf_give_back(pkts, n);
		freed += n;
		mgr.dp[MGR_UNIT_CTRL].drops[MGR_DROP_NF_GONE] += n;
	}
	/* libnf never puts mbufs into a mempool cache (see onvm_nf_batch), so
	 * the dead NF's is empty -- unless its own code called DPDK's mbuf
	 * functions.  Return what is there anyway (a cache left mid-update by
	 * the death cannot be: one more reason for the guide's rule). */
	mgr_nf_cache_give_back(s->lcore_id, s->name, id);
	s->reclaimed += freed;
	mgr.nf_reclaimed_mbufs += freed;
	mgr.nf_priv[id].held_reclaimed = true;
	NFCTL_LOG(INFO, "NF '%s' instance %u: %u mbufs returned to the pool", s->name, id, freed);
}

/* The mbufs kept ready in a slot's alloc ring go back to the pool: the slot
 * is being freed (gen_enabled already cleared and a grace period passed, so
 * the TX unit no longer tops it up), or the node is stopping. */
static unsigned int
alloc_ring_drain(struct onvm_nf_slot *s)
{
	struct rte_mbuf *pkts[ONVM_BURST];
	unsigned int n, total = 0;

	while ((n = rte_ring_sc_dequeue_burst(s->alloc_ring, (void **)pkts, ONVM_BURST, NULL)) >
	       0) {
		mgr_nf_give_back(pkts, n);
		total += n;
	}
	return total;
}

void
mgr_nf_alloc_rings_drain(void)
{
	for (uint16_t id = 0; id < ONVM_MAX_NFS; id++) {
		struct onvm_nf_slot *s = &mgr.shm->nfs[id];

		/* An NF still there (started by hand, it outlived the stop)
		 * keeps its ring: it may be dequeuing from it. */
		if (__atomic_load_n(&s->status, __ATOMIC_ACQUIRE) != ONVM_NF_FREE &&
		    !mgr.nf_priv[id].exited)
			continue;
		__atomic_store_n(&s->gen_enabled, 0, __ATOMIC_RELEASE);
		alloc_ring_drain(s);
	}
}

/* Release a slot's state memory (no standby uses it: the slot is being freed). */
static void
free_state(struct onvm_nf_slot *s)
{
	uint64_t off = s->state_off;
	uint64_t len = s->cut_size > 0	 ? s->cut_off + s->cut_size - s->state_off
		       : s->ftc_size > 0 ? s->ftc_off + s->ftc_size - s->state_off
					 : s->state_size;

	if (s->state_mz[0] == '\0')
		return;
	/* Out of the data path's sight first: a remote chain's unit may be
	 * reading the block's cut log or writing committed state into it (it
	 * looks at state_mz before each use, rsync_unit_state.c nf_at).  Once
	 * every data lcore has passed a quiescent point, none still holds it;
	 * only then do the pages go (touching a punched hugetlbfs page
	 * allocates a new one, or raises SIGBUS when none is left). */
	__atomic_store_n(&s->state_mz[0], '\0', __ATOMIC_RELEASE);
	/* (an FTC chain's TX unit reads the NF's update ring in it too) */
	if (mgr_rsync_state_window(off) || s->ftc_size > 0) {
		int self = mgr_qsbr_thread_id();

		rte_rcu_qsbr_synchronize(mgr.qsbr,
					 self < 0 ? RTE_QSBR_THRID_INVALID : (unsigned int)self);
	}
	/* Give the huge pages back: a later block may be elsewhere. */
	onvm_seg_release(&mgr.state_seg, off, len);
	/* A protected chain's window stays reserved for the next NF there. */
	if (!mgr_rsync_state_window(off))
		mgr_state_pool_free(&mgr.state_pool, off);
	s->state_off = 0;
	s->state_size = 0;
	s->cut_off = 0;
	s->cut_size = 0;
	s->ftc_off = 0;
	s->ftc_size = 0;
	s->n_state_req = 0;
}

/*
 * A process NF that exited on its own before registering (ctl_lock held).
 * During the node's start-up it is launched again, up to
 * nf_defaults.start_retries times per config entry -- DPDK's secondary EAL
 * init fails now and then on a loaded machine ("Cannot initialize local
 * memory map") -- and then the start fails on it (mgr_nf_wait_ready), a
 * stateless chain's NF too: its chain's recovery runs only once the units
 * do.  After the start-up a stateless chain's NF is the chain's to start
 * again (sl_recover.c); another's is counted.  Returns the config entry to
 * launch again, or -1.
 */
static int
start_failed(const struct onvm_nf_slot *s, const struct mgr_nf_priv *p)
{
	bool starting = !__atomic_load_n(&mgr.units_running, __ATOMIC_ACQUIRE);
	int ci = p->cfg_index;

	if (mgr.shm->shutting_down) {
		NFCTL_LOG(INFO, "NF '%s' (pid %d) exited with status %d before it registered "
				"(the node is stopping)",
			  s->name, s->pid, p->exit_status);
		return -1;
	}
	if (starting && ci >= 0 && mgr.nf_start_relaunched[ci] < mgr.cfg.nf_start_retries) {
		NFCTL_LOG(ERR, "NF '%s' (pid %d) exited with status %d before it registered: "
			       "launching it again (%u of nf_defaults.start_retries %u)",
			  s->name, s->pid, p->exit_status, mgr.nf_start_relaunched[ci] + 1u,
			  mgr.cfg.nf_start_retries);
		return ci;
	}
	if (!starting && mgr_sl_service[s->service_id % ONVM_MAX_SERVICES] != 0) {
		NFCTL_LOG(ERR, "NF '%s' (pid %d) exited with status %d before it registered: "
			       "its stateless chain starts it again",
			  s->name, s->pid, p->exit_status);
		return -1;
	}
	NFCTL_LOG(ERR, "NF '%s' (pid %d) exited with status %d before it registered", s->name,
		  s->pid, p->exit_status);
	mgr.nf_start_failures++; /* start-up fails on it (mgr_nf_wait_ready) */
	return -1;
}

/* Advance one slot whose process is gone; ctl_lock held. */
int
mgr_nf_handle_exit(uint16_t id)
{
	struct onvm_nf_slot *s = &mgr.shm->nfs[id];
	struct mgr_nf_priv *p = &mgr.nf_priv[id];
	int again = -1;

	MGR_ASSERT_CTL_LOCKED();
	switch (s->status) {
	case ONVM_NF_STARTING:
		if (p->launcher_watched) {
			/* Not the node's failure: it serves its other chains. */
			if (mgr.shm->shutting_down)
				NFCTL_LOG(INFO, "NF '%s': container %s stopped before the NF registered "
						"(the node is stopping)",
					  s->name, p->ctr_name);
			else if (p->killed)
				NFCTL_LOG(ERR, "NF '%s': container %s: the NF did not register within "
					       "%u ms (nf_defaults.start_timeout_ms): its runtime "
					       "killed",
					  s->name, p->ctr_name, mgr.cfg.nf_start_timeout_ms);
			else if (p->exit_signaled)
				NFCTL_LOG(ERR, "NF '%s': container %s: its runtime was killed by "
					       "signal %d before the NF registered",
					  s->name, p->ctr_name, p->exit_status);
			else
				NFCTL_LOG(ERR, "NF '%s': container %s exited with status %d before "
					       "the NF registered: %s",
					  s->name, p->ctr_name, p->exit_status,
					  mgr_ctr_exit_reason(p->exit_status));
			if (!mgr.shm->shutting_down)
				mgr.nf_container_failures++;
			mgr_ctr_remove(p->ctr_name); /* if only its CLI died */
		} else if (p->recovery_kill) {
			/* We killed it: its stateless chain restarts -- not a
			 * failure of the node's start (a start time-out's kill
			 * still is). */
			NFCTL_LOG(INFO, "NF '%s' (pid %d) killed before it registered", s->name,
				  s->pid);
		} else if (p->killed) {
			/* (the start time-out's kill, said when it was sent) */
			mgr.nf_start_failures++;
		} else {
			again = start_failed(s, p);
		}
		s->status = ONVM_NF_DEAD;
		/* (into another slot: this one is reclaimed later) */
		if (again >= 0 && mgr_nf_launch_cfg(again) < 0) {
			NFCTL_LOG(ERR, "NF '%s' could not be launched again", s->name);
			mgr.nf_start_failures++;
		} else if (again >= 0) {
			mgr.nf_start_relaunched[again]++;
			mgr.nf_start_relaunches++;
		}
		return 1;
	case ONVM_NF_READY:
	case ONVM_NF_RUNNING:
		if (p->awaiting_promotion && p->launcher_watched) {
			/* Handed to a container standby that never registered:
			 * its runtime failed, was killed or timed out. */
			NFCTL_LOG(ERR, "NF '%s' (instance %u): its standby's container %s ended "
				       "before the standby registered; the instance is gone",
				  s->name, id, p->ctr_name);
			mgr_ctr_remove(p->ctr_name);
			if (!mgr.shm->shutting_down)
				mgr.nf_container_failures++;
		} else if (p->awaiting_promotion) { /* its standby died or refused to promote */
			NFCTL_LOG(ERR, "NF '%s' (instance %u): standby pid %d left without taking "
				       "over; the instance is gone",
				  s->name, id, s->pid);
		} else {
			mgr.nf_deaths++;
		}
		/* Whichever way: nobody takes the instance over. */
		if (!mgr.shm->shutting_down)
			mgr.nf_instances_lost++;
		NFCTL_LOG(WARNING, "NF '%s' (pid %d, instance %u) died without unregistering",
			  s->name, s->pid, id);
		/* An FTC chain's NF: its node fails with it (ftc.h) -- first,
		 * before anything routes its last outputs. */
		if (!mgr.shm->shutting_down)
			mgr_ftc_nf_died(s->service_id);
		s->status = ONVM_NF_DEAD;
		mgr_service_remove(s->service_id, id);
		return 1;
	case ONVM_NF_STOPPING:
		/* (an FTC node's NF leaving on its own fails the node as well) */
		if (!mgr.shm->shutting_down)
			mgr_ftc_nf_died(s->service_id);
		s->status = ONVM_NF_DEAD; /* already out of its service */
		return 1;
	case ONVM_NF_DEAD:
		/* A standby left in a dead slot will never be promoted: it sees
		 * `stop` within its 100 ms park and exits; wait for it. */
		if (p->sb_pid != 0 && !p->sb_exited) {
			__atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
			return 0;
		}
		if (!p->held_reclaimed)
			reclaim_held(id);
		/* Whatever it emitted is still forwarded by the TX unit. */
		if (!rte_ring_empty(s->tx_ring))
			return 0;
		rte_ring_reset(s->rx_ring);
		if (__atomic_load_n(&s->gen_enabled, __ATOMIC_RELAXED)) {
			__atomic_store_n(&s->gen_enabled, 0, __ATOMIC_RELEASE);
			rte_rcu_qsbr_synchronize(mgr.qsbr, RTE_QSBR_THRID_INVALID);
		}
		alloc_ring_drain(s);
		free_state(s);
		mgr_nf_alive_lock_init(s);
		s->status = ONVM_NF_FREE;
		s->pid = 0;
		s->launched = 0;
		mgr_nf_launcher_retire(&p->launcher_pidfd);
		mgr_nf_launcher_retire(&p->sb_launcher_pidfd);
		*p = MGR_NF_PRIV_INIT;
		return 1;
	default:
		return 0;
	}
}
