/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * nf_ipc.c -- the manager's side of libnf's requests, as rte_mp actions run
 * by EAL's IPC thread: register (an active or a standby), unregister, and
 * state allocation.  Each is answered synchronously, so an NF is routed to
 * the moment its nf_init() returns.  Every handler takes mgr.ctl_lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_string_fns.h>

#include "onvm_cpuset.h"
#include "onvm_cut.h"
#include "onvm_state.h"

#include "nf_ctl.h"
#include "ftc/ftc.h"
#include "onvm_ftc_ring.h"
#include "stateless/stateless.h"

static void
reply(const struct rte_mp_msg *req, const void *peer, const void *param, size_t len)
{
	struct rte_mp_msg msg = {0};

	rte_strscpy(msg.name, req->name, sizeof(msg.name));
	memcpy(msg.param, param, len);
	msg.len_param = len;
	if (rte_mp_reply(&msg, peer) < 0)
		NFCTL_LOG(ERR, "cannot reply to %s: %s", req->name, rte_strerror(rte_errno));
}

static int
refuse(struct onvm_mp_register_rep *rep, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int
refuse(struct onvm_mp_register_rep *rep, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rep->reason, sizeof(rep->reason), fmt, ap);
	va_end(ap);
	rep->result = -err;
	return -err;
}

/*
 * May process `pid` run as lcore id `lc` in slot `id` (as its active or its
 * standby)?  DPDK keeps per-lcore data in shared memory (mempool caches), so
 * two live processes must never share an id -- except an active and its
 * standby, which never run together.  Refused: the manager's own lcores, an
 * id a live NF or standby of another slot has, and the id reserved for the
 * NFs the manager launches into another slot (onvm_cpuset.h).  ctl_lock held.
 */
static int
check_lcore(uint32_t lc, uint16_t id, int32_t pid, struct onvm_mp_register_rep *rep)
{
	int hand = onvm_nf_hand_lcore_base(RTE_MAX_LCORE, ONVM_MAX_NFS);

	MGR_ASSERT_CTL_LOCKED();
	if (lc >= RTE_MAX_LCORE)
		return refuse(rep, EINVAL, "lcore id %u is not below RTE_MAX_LCORE (%d)", lc,
			      RTE_MAX_LCORE);
	if (rte_lcore_is_enabled(lc))
		return refuse(rep, EBUSY,
			      "lcore id %u is one of the manager's; start the NF with "
			      "--lcores=ID@CPUS and an ID of its own",
			      lc);
	for (uint16_t k = 0; k < ONVM_MAX_NFS; k++) {
		const struct onvm_nf_slot *o = &mgr.shm->nfs[k];

		if (k == id)
			continue;
		if (__atomic_load_n(&o->status, __ATOMIC_RELAXED) != ONVM_NF_FREE &&
		    o->lcore_id == lc && o->pid != pid)
			return refuse(rep, EBUSY,
				      "lcore id %u is used by NF '%s' (instance %u); give each NF "
				      "its own --lcores id",
				      lc, o->name, k);
		if (o->standby_pid != 0 && o->standby_lcore == lc && o->standby_pid != pid)
			return refuse(rep, EBUSY, "lcore id %u is used by the standby of NF '%s' "
						  "(instance %u)",
				      lc, o->name, k);
		if (mgr.nf_lcore[k] == lc) {
			if (hand < 0)
				return refuse(rep, EBUSY,
					      "lcore id %u is reserved for NFs the manager launches "
					      "(slot %u)",
					      lc, k);
			return refuse(rep, EBUSY,
				      "lcore id %u is reserved for NFs the manager launches (slot "
				      "%u); NFs started by hand may use %d-%d",
				      lc, k, hand, hand + ONVM_NF_HAND_LCORES - 1);
		}
	}
	return 0;
}

/*
 * A container NF registers into the place (slot `id`'s active, or its
 * standby) where the manager has watched its runtime CLI since the launch.
 * It must be that container's NF -- the pid the manager gave it in its
 * namespace -- and the CLI must still be there: a CLI gone (killed at the
 * start time-out, or by anyone) is the start's failure, and its exit event
 * may be waiting for the control thread.  Then the NF's own pidfd (taken
 * from *pidfd) becomes the watch, set up first so that a failure leaves the
 * CLI watched, and the CLI's is only reaped from now on.  ctl_lock held.
 */
static int
take_container_watch(uint16_t id, bool standby, pid_t host_pid, pid_t ns_pid, int *pidfd,
		     struct onvm_mp_register_rep *rep)
{
	struct mgr_nf_priv *p = &mgr.nf_priv[id];
	int *watch = standby ? &p->sb_pidfd : &p->pidfd;
	pid_t want = standby ? p->sb_ctr_ns_pid : p->ctr_ns_pid;
	const char *name = standby ? p->sb_ctr_name : p->ctr_name;
	int cli = *watch, fd = *pidfd, ret;

	MGR_ASSERT_CTL_LOCKED();
	if (ns_pid != want)
		return refuse(rep, EPERM, "container %s's NF is pid %d in its namespace, not %d",
			      name, want, ns_pid);
	if (cli < 0 || (standby ? p->sb_killed : p->killed) || mgr_nf_fd_fired(cli))
		return refuse(rep, ESRCH, "the runtime of container %s is gone: its start failed",
			      name);
	*watch = -1;
	*pidfd = -1;
	ret = standby ? mgr_nf_watch_standby(id, host_pid, fd) : mgr_nf_watch_pid(id, host_pid, fd);
	if (ret < 0) {
		*watch = cli;
		return refuse(rep, ESRCH, "the manager cannot watch pid %d", host_pid);
	}
	mgr_nf_launcher_move(&cli, standby ? &p->sb_launcher_pidfd : &p->launcher_pidfd,
			     id | LAUNCHER_TAG | (standby ? STANDBY_TAG : 0));
	if (standby)
		p->sb_launcher_watched = false;
	else
		p->launcher_watched = false;
	return 0;
}

/*
 * A standby attaches to a live instance: nothing about the slot changes but
 * the record of its standby, whose lcore id is reserved from now on (it may
 * be its active's, or one of its own).  ctl_lock held.
 */
static int
register_standby(const struct onvm_mp_register_req *req, pid_t ns_pid, int *pidfd,
		 struct onvm_mp_register_rep *rep)
{
	struct onvm_nf_slot *s;
	struct mgr_nf_priv *p;
	uint32_t status;

	MGR_ASSERT_CTL_LOCKED();
	if (req->instance_id < 0 || req->instance_id >= ONVM_MAX_NFS)
		return refuse(rep, EINVAL, "a standby needs the instance id of its active (-n)");
	s = &mgr.shm->nfs[req->instance_id];
	p = &mgr.nf_priv[req->instance_id];
	status = __atomic_load_n(&s->status, __ATOMIC_RELAXED);
	if (status != ONVM_NF_READY && status != ONVM_NF_RUNNING)
		return refuse(rep, ESRCH, "instance %d has no running NF to stand by for (%s)",
			      req->instance_id, mgr_nf_status_str(status));
	if (s->service_id != req->service_id)
		return refuse(rep, EINVAL, "instance %d serves service %u, not %u",
			      req->instance_id, s->service_id, req->service_id);
	if (p->awaiting_promotion && p->launcher_watched) {
		/* Handed over while its container was starting: it promotes
		 * (on the slot's lcore id, which it was launched with). */
		if (req->lcore_id != s->lcore_id)
			return refuse(rep, EINVAL, "instance %d's lcore is %u, not %u", req->instance_id,
				      s->lcore_id, req->lcore_id);
		if (take_container_watch((uint16_t)req->instance_id, false, req->pid, ns_pid, pidfd,
					 rep) < 0)
			return rep->result;
		/* The slot names it now (libnf's park() promotes on a free lock
		 * only when the slot names it), and its promotion gets the
		 * whole time-out from here. */
		__atomic_store_n(&s->pid, req->pid, __ATOMIC_RELEASE);
		p->handed_ns = mgr_now_ns();
		rep->instance_id = req->instance_id;
		NFCTL_LOG(WARNING, "standby pid %d of NF '%s' (instance %d, container %s) "
			  "registered after its active died: it takes over now", req->pid, s->name,
			  req->instance_id, p->ctr_name);
		return 0;
	}
	if (p->awaiting_promotion && req->pid == p->pid) {
		/* The active died while this standby was starting; the slot is
		 * already handed to it.  It finds the liveness lock orphaned and
		 * promotes at once. */
		rep->instance_id = req->instance_id;
		NFCTL_LOG(WARNING, "standby pid %d of NF '%s' (instance %d) registered after its "
			  "active died: it takes over now", req->pid, s->name, req->instance_id);
		return 0;
	}
	if (s->standby_pid != 0 && s->standby_pid != req->pid)
		return refuse(rep, EBUSY, "instance %d already has standby pid %d",
			      req->instance_id, s->standby_pid);
	if (req->lcore_id != s->lcore_id &&
	    check_lcore(req->lcore_id, (uint16_t)req->instance_id, req->pid, rep) < 0)
		return rep->result;
	if (p->sb_launcher_watched) { /* the container standby the manager launched */
		if (take_container_watch((uint16_t)req->instance_id, true, req->pid, ns_pid, pidfd,
					 rep) < 0)
			return rep->result;
	} else if (p->sb_pid != req->pid) { /* started by hand */
		int fd = *pidfd;

		*pidfd = -1;
		if (mgr_nf_watch_standby((uint16_t)req->instance_id, req->pid, fd) < 0)
			return refuse(rep, ESRCH, "the manager cannot watch pid %d", req->pid);
	}
	s->standby_lcore = req->lcore_id;
	__atomic_store_n(&s->standby_pid, req->pid, __ATOMIC_RELEASE);
	rep->instance_id = req->instance_id;
	NFCTL_LOG(INFO, "standby pid %d of NF '%s' (instance %d) registered, lcore %u", req->pid,
		  s->name, req->instance_id, req->lcore_id);
	return 0;
}

/* Pick and fill a slot for a registration request from the process `*pidfd`
 * refers to (req->pid is its pid as the manager sees it); the pidfd is taken
 * (set to -1) if it becomes the NF's watch.  ctl_lock held. */
static int
do_register(const struct onvm_mp_register_req *req, pid_t ns_pid, int *pidfd,
	    struct onvm_mp_register_rep *rep)
{
	struct onvm_nf_slot *slot = NULL;
	uint16_t id;

	MGR_ASSERT_CTL_LOCKED();
	if (req->shm_version != ONVM_SHM_VERSION || req->shm_layout != ONVM_SHM_LAYOUT)
		return refuse(rep, EPROTO, "table layout v%u (%#x), manager has v%u (%#x)",
			      req->shm_version, req->shm_layout, ONVM_SHM_VERSION, ONVM_SHM_LAYOUT);
	if (req->service_id == 0 || req->service_id >= ONVM_MAX_SERVICES)
		return refuse(rep, EINVAL, "service id %u out of range 1..%d", req->service_id,
			      ONVM_MAX_SERVICES - 1);
	if (__atomic_load_n(&mgr.shm->shutting_down, __ATOMIC_RELAXED))
		return refuse(rep, ESHUTDOWN, "the manager is shutting down");
	/* Exited already (a zombie still has its pid): its slot would be routed
	 * to until the control thread saw the death. */
	if (poll(&(struct pollfd){.fd = *pidfd, .events = POLLIN}, 1, 0) > 0)
		return refuse(rep, ESRCH, "pid %d has exited", req->pid);
	if (req->standby)
		return register_standby(req, ns_pid, pidfd, rep);
	if (req->instance_id >= 0) {
		if (req->instance_id >= ONVM_MAX_NFS)
			return refuse(rep, EINVAL, "instance id %d out of range",
				      req->instance_id);
		slot = &mgr.shm->nfs[req->instance_id];
		/* Launched: its pid -- or, in a container, the instance id
		 * the manager gave it (its pid was the runtime CLI's). */
		if (!(slot->status == ONVM_NF_FREE ||
		      (slot->status == ONVM_NF_STARTING &&
		       (slot->pid == req->pid ||
			mgr.nf_priv[req->instance_id].launcher_watched))))
			return refuse(rep, EBUSY, "instance %d is taken (%s)", req->instance_id,
				      mgr_nf_status_str(slot->status));
	} else {
		for (id = 0; id < ONVM_MAX_NFS; id++)
			if (mgr.shm->nfs[id].status == ONVM_NF_FREE) {
				slot = &mgr.shm->nfs[id];
				break;
			}
		if (slot == NULL)
			return refuse(rep, ENOSPC, "all %d NF slots are in use", ONVM_MAX_NFS);
	}
	id = slot->instance_id;
	/* Killed while it started (mgr_nf_kill): it leaves now, by itself. */
	if (slot->status == ONVM_NF_STARTING && mgr.nf_priv[id].kill_at_register)
		return refuse(rep, ECANCELED, "stopped before it ran (%s)",
			      "its chain restarts with NFs launched anew");
	/* A stateless chain's NFs are the manager's: a recovery kills and
	 * launches them all again, which it cannot do for one started by hand
	 * (it would never let the chain restart). */
	if (slot->status == ONVM_NF_FREE && mgr_sl_service[req->service_id] != 0)
		return refuse(rep, EPERM,
			      "service %u is stateless chain '%s''s: its NFs are launched by the "
			      "manager (a recovery restarts them all)",
			      req->service_id, mgr.shm->chains[mgr_sl_service[req->service_id] - 1].name);
	if (check_lcore(req->lcore_id, id, req->pid, rep) < 0)
		return rep->result;
	if (mgr.nf_priv[id].launcher_watched && slot->status == ONVM_NF_STARTING) {
		if (take_container_watch(id, false, req->pid, ns_pid, pidfd, rep) < 0)
			return rep->result;
	} else if (mgr.nf_priv[id].pidfd < 0) {
		/* Started by hand: its death must be seen before it may be
		 * routed to. */
		int fd = *pidfd;

		*pidfd = -1;
		if (mgr_nf_watch_pid(id, req->pid, fd) < 0)
			return refuse(rep, ESRCH, "the manager cannot watch pid %d", req->pid);
	}
	if (slot->status == ONVM_NF_FREE) {
		mgr.nf_priv[id].cfg_index = -1;
		slot->launched = 0;
	}
	mgr_nf_slot_reset(slot);
	slot->service_id = req->service_id;
	slot->pid = req->pid;
	slot->lcore_id = req->lcore_id;
	rte_strscpy(slot->name, req->name, sizeof(slot->name));
	slot->register_ns = mgr_now_ns();
	/* In a protected chain: the markers already sent do not cover what
	 * this NF decides (libnf counts from here). */
	slot->nd_cut_floor = mgr_rsync_marker_floor(req->service_id);
	/* A protected chain's NF on its standby node waits for the takeover,
	 * stateless or not (libnf parks it: woken by the takeover, it runs at
	 * once).  Checked again once it is READY: the takeover may come in
	 * between (mgr_rsync_state_parked_check()). */
	if (mgr_rsync_parks(req->service_id) || mgr_ftc_parks(req->service_id))
		__atomic_store_n(&slot->remote_parked, 1, __ATOMIC_SEQ_CST);
	else /* the chain's clock, if it took over here: read after its
	      * state, which the takeover stores after the clock (a parked
	      * NF gets it from whoever wakes it, before the wake-up) */
		__atomic_store_n(&slot->clock_offset, mgr_rsync_clock_offset(req->service_id),
				 __ATOMIC_SEQ_CST);
	{
		/* One store, never 0 (0: nothing written, to the remote units):
		 * other threads read it. */
		uint32_t gen = slot->generation + 1;

		__atomic_store_n(&slot->generation, gen != 0 ? gen : 1, __ATOMIC_RELAXED);
	}
	mgr_nf_slot_note_used(id);
	__atomic_store_n(&slot->status, ONVM_NF_READY, __ATOMIC_RELEASE);
	/* After READY: whoever lists the service's slots again sees it. */
	__atomic_fetch_add(&mgr.nf_registrations, 1, __ATOMIC_RELEASE);
	if (__atomic_load_n(&slot->remote_parked, __ATOMIC_SEQ_CST))
		mgr_rsync_state_parked_check(slot);
	/* (an instance for other nodes' flows holds no rank: nothing of this
	 * node's reaches it) */
	if (!mgr_nf_peer_only(&mgr.nf_priv[id]) && mgr_service_add(req->service_id, id) < 0) {
		uint16_t fixed = mgr.shm->services[req->service_id].fixed;

		__atomic_store_n(&slot->status, ONVM_NF_DEAD, __ATOMIC_RELEASE);
		return refuse(rep, ENOSPC, "service %u already has %d instances%s",
			      req->service_id, fixed ? fixed : ONVM_MAX_INSTANCES,
			      fixed ? " (as configured for its protected chain)" : "");
	}
	rep->instance_id = id;
	NFCTL_LOG(INFO, "NF '%s' pid %d registered: service %u instance %u lcore %u", slot->name,
		  slot->pid, slot->service_id, id, slot->lcore_id);
	return 0;
}

/*
 * Who is asking: libnf sends a pidfd of itself with the request.  Its pid as
 * the manager sees it comes from the kernel, not from the message -- an NF in
 * another pid namespace (a container) knows itself by another number -- and
 * the same pidfd is what the manager watches for its death, so the process
 * watched is the process that registered even if its pid has been reused.
 * The pid, or -errno with the reason in `rep`.
 */
static pid_t
sender_pid(const struct rte_mp_msg *msg, const struct onvm_mp_register_req *req,
	   struct onvm_mp_register_rep *rep)
{
	pid_t pid, own_ns;

	if (msg->num_fds != 1)
		return refuse(rep, EPROTO, "the request carries %d file descriptors, not libnf's "
					   "pidfd",
			      msg->num_fds);
	pid = mgr_nf_pidfd_pid(msg->fds[0], &own_ns);
	if (pid == -ENOTSUP)
		return refuse(rep, EPROTO, "the descriptor sent is not a pidfd");
	if (pid == -ESRCH)
		return refuse(rep, ESRCH, "pid %d has exited or is not visible from the "
					  "manager's pid namespace",
			      req->pid);
	if (pid < 0)
		return refuse(rep, -pid, "cannot read the pidfd's fdinfo: %s", strerror(-pid));
	/* Not proof of identity (any process may open a pidfd of another), but
	 * a pidfd of someone else is a bug worth naming. */
	if (own_ns != 0 && own_ns != req->pid)
		return refuse(rep, EPERM, "the pidfd sent is of pid %d, not of the sender (pid %d "
					  "in its namespace)",
			      own_ns, req->pid);
	return pid;
}

static int
mp_register(const struct rte_mp_msg *msg, const void *peer)
{
	struct onvm_mp_register_rep rep = {0};
	struct onvm_mp_register_req req;
	int pidfd = msg->num_fds > 0 ? msg->fds[0] : -1;
	uint64_t one = 1;
	pid_t pid, ns_pid;

	/* DPDK receives descriptors without close-on-exec: an NF launched
	 * meanwhile would inherit them. */
	for (int i = 0; i < msg->num_fds; i++)
		fcntl(msg->fds[i], F_SETFD, FD_CLOEXEC);
	for (int i = 1; i < msg->num_fds; i++)
		close(msg->fds[i]);
	if (msg->len_param != sizeof(req)) {
		refuse(&rep, EPROTO, "bad registration message size %d", msg->len_param);
		NFCTL_LOG(ERR, "refused a registration: %s", rep.reason);
	} else {
		memcpy(&req, msg->param, sizeof(req));
		req.name[sizeof(req.name) - 1] = '\0';
		pid = sender_pid(msg, &req, &rep);
		ns_pid = req.pid; /* checked against the pidfd's NSpid */
		if (pid > 0) {
			if (pid != req.pid)
				NFCTL_LOG(INFO, "NF '%s' is pid %d in its pid namespace, %d here",
					  req.name, req.pid, pid);
			req.pid = pid;
			rep.pid = pid;
			mgr_ctl_lock();
			do_register(&req, ns_pid, &pidfd, &rep);
			mgr_ctl_unlock();
		}
		if (rep.result < 0)
			NFCTL_LOG(ERR, "refused NF '%s' pid %d: %s", req.name, req.pid,
				  rep.reason);
	}
	if (rep.result < 0)
		__atomic_fetch_add(&mgr.nf_registrations_refused, 1, __ATOMIC_RELAXED);
	if (pidfd >= 0)
		close(pidfd);
	reply(msg, peer, &rep, sizeof(rep));
	if (write(mgr.ctl_evfd, &one, sizeof(one)) < 0)
		NFCTL_LOG(DEBUG, "eventfd write: %s", strerror(errno));
	return 0;
}

static int
mp_unregister(const struct rte_mp_msg *msg, const void *peer)
{
	struct onvm_mp_unregister_req req;
	int32_t result = -EINVAL;

	if (msg->len_param == sizeof(req)) {
		memcpy(&req, msg->param, sizeof(req));
		mgr_ctl_lock();
		if (req.instance_id < ONVM_MAX_NFS) {
			struct onvm_nf_slot *s = &mgr.shm->nfs[req.instance_id];

			if (mgr_nf_slot_live(s) && s->generation == req.generation) {
				if (s->status != ONVM_NF_STOPPING) {
					__atomic_store_n(&s->status, ONVM_NF_STOPPING,
							 __ATOMIC_RELEASE);
					mgr_service_remove(s->service_id, req.instance_id);
				}
				result = 0;
				NFCTL_LOG(INFO, "NF '%s' instance %u unregistered", s->name,
					  req.instance_id);
			}
		}
		mgr_ctl_unlock();
	}
	reply(msg, peer, &result, sizeof(result));
	return 0;
}

/*
 * State allocation: the NF wrote its region requests into its slot; lay them
 * out (onvm_state.c), carve a block for canonical regions, replicas and dirty
 * tracking from the state pool (state_pool.h), and format it.  Owning the
 * memory here means it outlives the NF, which is what a standby needs; it is
 * freed with the slot.
 */
static int __attribute__((format(printf, 3, 4)))
state_fail(struct onvm_mp_state_rep *rep, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rep->reason, sizeof(rep->reason), fmt, ap);
	va_end(ap);
	return -err;
}

static int
do_state_alloc(const struct onvm_mp_state_req *req, struct onvm_mp_state_rep *rep)
{
	struct nf_state_layout layout;
	struct mgr_rsync_placement pl;
	struct onvm_nf_slot *s;
	uint64_t span, ftc_ring, alloc;
	bool remote;
	int64_t off;
	uint32_t n;
	int ret;

	if (req->instance_id >= ONVM_MAX_NFS)
		return state_fail(rep, EINVAL, "bad instance id");
	s = &mgr.shm->nfs[req->instance_id];
	if (!mgr_nf_slot_live(s) || s->generation != req->generation)
		return state_fail(rep, ESRCH, "not a registered NF");
	if (s->state_mz[0] != '\0')
		return state_fail(rep, EEXIST, "state already allocated");
	ret = mgr_nf_state_layout(s, &layout, rep->reason, sizeof(rep->reason));
	if (ret < 0)
		return ret;
	ret = mgr_ftc_state_check(s->service_id, &layout, rep->reason, sizeof(rep->reason));
	if (ret < 0)
		return ret;
	n = layout.n_regions;
	if (mgr.state_seg.base == NULL)
		return state_fail(rep, ENOMEM, "the node has no state pool (state.pool_mb is 0)");
	/* A protected chain's NF: its window, the same on both nodes. */
	ret = mgr_rsync_state_place(s, &layout, &pl, rep->reason, sizeof(rep->reason));
	if (ret < 0)
		return ret; /* the reason is written */
	remote = ret > 0;
	/* An FTC chain's NF: the ring of its updates after the block. */
	ftc_ring = remote ? 0 : mgr_ftc_ring_bytes(s->service_id);
	alloc = ftc_ring > 0 ? RTE_ALIGN_CEIL(layout.total_size, 64) + ftc_ring : layout.total_size;
	off = remote ? (int64_t)pl.off : mgr_state_pool_alloc(&mgr.state_pool, alloc);
	if (off < 0)
		return state_fail(rep, ENOMEM,
				  "%" PRIu64 " bytes of state do not fit the pool (%" PRIu64
				  " of %" PRIu64 " in use; raise state.pool_mb)",
				  alloc, mgr_state_pool_in_use(&mgr.state_pool),
				  mgr.state_pool.size);
	span = pl.cut_size > 0 ? pl.cut_off + pl.cut_size - pl.off : alloc;
	/* The huge pages now, so that running out is this answer, not a SIGBUS
	 * in whoever touches the block first. */
	ret = onvm_seg_reserve(&mgr.state_seg, (uint64_t)off, span);
	if (ret < 0) {
		if (!remote)
			mgr_state_pool_free(&mgr.state_pool, off);
		return state_fail(rep, ENOMEM, "no huge pages for %" PRIu64 " bytes of state: %s",
				  span, strerror(-ret));
	}
	ret = nf_state_format(mgr.state_seg.base + off, layout.total_size, &layout,
			      rep->reason, sizeof(rep->reason));
	if (ret == 0 && pl.cut_size > 0 &&
	    onvm_cut_format(mgr.state_seg.base + pl.cut_off, pl.cut_size, &layout, pl.cut_log) <
		    0) {
		snprintf(rep->reason, sizeof(rep->reason), "cannot format the cut area");
		ret = -EINVAL;
	}
	if (ret == 0 && ftc_ring > 0 &&
	    onvm_ftc_ring_format(mgr.state_seg.base + off + RTE_ALIGN_CEIL(layout.total_size, 64),
				 ftc_ring) < 0) {
		snprintf(rep->reason, sizeof(rep->reason), "cannot format the FTC ring");
		ret = -EINVAL;
	}
	if (ret < 0) {
		onvm_seg_release(&mgr.state_seg, (uint64_t)off, span);
		if (!remote)
			mgr_state_pool_free(&mgr.state_pool, off);
		return ret;
	}
	s->cut_off = pl.cut_off;
	s->cut_size = pl.cut_size;
	s->ftc_off = ftc_ring > 0 ? (uint64_t)off + RTE_ALIGN_CEIL(layout.total_size, 64) : 0;
	s->ftc_size = ftc_ring;
	s->ftc_seq = 0; /* (a fresh NF's first update is 1) */
	/* On the standby node the NF waits (no packets, no ticks) while the
	 * primary's state is written into its block, until the takeover. */
	/* (an FTC node that took a failed one's place: until the NF's state
	 * is fetched, ftc_recover.c) */
	__atomic_store_n(&s->remote_parked, pl.parked || mgr_ftc_parks(s->service_id) ? 1 : 0,
			 __ATOMIC_SEQ_CST);
	if (pl.parked)
		mgr_rsync_state_parked_check(s);
	/* A standby may be waiting for the block (nf_state_map()): offset and
	 * size first, the name's first byte last -- that byte publishes it. */
	s->state_off = off;
	s->state_size = layout.total_size;
	{
		char name[ONVM_NAME_LEN];

		rte_strscpy(name, MGR_STATE_POOL_NAME, sizeof(name));
		memcpy(s->state_mz + 1, name + 1, sizeof(name) - 1);
		__atomic_store_n(&s->state_mz[0], name[0], __ATOMIC_RELEASE);
	}
	NFCTL_LOG(INFO, "NF '%s' instance %u: %u state regions, %" PRIu64 " bytes at %" PRIu64
			" of the state pool",
		  s->name, req->instance_id, n, layout.total_size, (uint64_t)off);
	return 0;
}

static int
mp_state(const struct rte_mp_msg *msg, const void *peer)
{
	struct onvm_mp_state_rep rep = {0};
	struct onvm_mp_state_req req;

	if (msg->len_param != sizeof(req)) {
		rep.result = state_fail(&rep, EPROTO, "bad message size %d", msg->len_param);
	} else {
		memcpy(&req, msg->param, sizeof(req));
		mgr_ctl_lock();
		rep.result = do_state_alloc(&req, &rep);
		mgr_ctl_unlock();
		if (rep.result < 0)
			NFCTL_LOG(ERR, "state for instance %u refused: %s", req.instance_id,
				  rep.reason);
	}
	reply(msg, peer, &rep, sizeof(rep));
	return 0;
}

/*
 * Packet generation: the first nf_pkt_alloc() of an NF asks for a reserve.
 * Once the data lcores run, this thread only enables it: the TX unit fills
 * the alloc ring on its next poll (and keeps it filled), so every operation
 * on the pool stays on a data lcore, and the NF waits for that first fill
 * like for any refill.  The NF takes
 * mbufs only from that ring, never from the mempool, so a death at any
 * instruction leaves every mbuf accounted for (struct onvm_nf_batch).
 */
/* Before the data lcores run (start-up: an NF's tick may generate while the
 * node waits for its standbys), this thread fills the ring itself -- the TX
 * unit is not there to, and nobody else uses the pool yet.  ctl_lock held
 * (units_running changes under it). */
static void
gen_start(struct onvm_nf_slot *s, uint16_t id)
{
	unsigned int n = 0;

	MGR_ASSERT_CTL_LOCKED();
	if (!__atomic_load_n(&mgr.units_running, __ATOMIC_ACQUIRE)) {
		struct rte_mbuf *m[ONVM_NF_ALLOC_FILL];

		if (rte_pktmbuf_alloc_bulk(mgr.pool, m, ONVM_NF_ALLOC_FILL) == 0) {
			n = rte_ring_sp_enqueue_burst(s->alloc_ring, (void **)m,
						      ONVM_NF_ALLOC_FILL, NULL);
			if (n < ONVM_NF_ALLOC_FILL)
				rte_pktmbuf_free_bulk(&m[n], ONVM_NF_ALLOC_FILL - n);
		}
	}
	__atomic_store_n(&s->gen_enabled, 1, __ATOMIC_RELEASE);
	NFCTL_LOG(INFO, "NF '%s' instance %u generates packets (%u mbufs reserved now, the TX "
			"unit keeps the reserve filled)",
		  s->name, id, n);
}

static int
mp_gen(const struct rte_mp_msg *msg, const void *peer)
{
	struct onvm_mp_gen_rep rep = {.result = -EINVAL};
	struct onvm_mp_gen_req req;

	if (msg->len_param == sizeof(req)) {
		memcpy(&req, msg->param, sizeof(req));
		mgr_ctl_lock();
		if (__atomic_load_n(&mgr.shm->shutting_down, __ATOMIC_RELAXED)) {
			rep.result = -ESHUTDOWN;
		} else if (req.instance_id < ONVM_MAX_NFS) {
			struct onvm_nf_slot *s = &mgr.shm->nfs[req.instance_id];

			rep.result = -ESRCH;
			if (mgr_nf_slot_live(s) && s->generation == req.generation) {
				rep.result = 0;
				if (!__atomic_load_n(&s->gen_enabled, __ATOMIC_RELAXED))
					gen_start(s, req.instance_id);
			}
		}
		mgr_ctl_unlock();
	}
	reply(msg, peer, &rep, sizeof(rep));
	return 0;
}

int
mgr_nf_ipc_init(void)
{
	if (rte_mp_action_register(ONVM_MP_NF_REGISTER, mp_register) < 0 ||
	    rte_mp_action_register(ONVM_MP_NF_UNREGISTER, mp_unregister) < 0 ||
	    rte_mp_action_register(ONVM_MP_NF_STATE, mp_state) < 0 ||
	    rte_mp_action_register(ONVM_MP_NF_GEN, mp_gen) < 0) {
		MGR_LOG(ERR, "cannot register IPC actions: %s", rte_strerror(rte_errno));
		return -rte_errno;
	}
	return 0;
}
