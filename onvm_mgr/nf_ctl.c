/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * nf_ctl.c -- NF life cycle on the manager side.
 *
 * Registration and unregistration arrive as synchronous rte_mp requests on
 * EAL's IPC thread; everything else (exits, start time-outs, reclamation)
 * happens in the control unit.  Both take mgr.ctl_lock; the control unit
 * only ever try-locks it, because it may share an lcore with the data units
 * and the IPC thread may hold the lock while it waits for those units to pass
 * a quiescent point (rte_rcu_qsbr) after a service-table change.
 *
 * Death is an event, never a poll: every NF's process is watched through a
 * pidfd in an epoll set (pidfd_open works for NFs we did not start, too).
 * When it fires, the NF is taken out of its service, a grace period makes
 * sure no data unit still enqueues to it, and its mbufs are returned:
 *   - the packets it held, found through the batch record in its slot
 *     (struct onvm_nf_batch explains why this is exact);
 *   - the backlog of its RX ring;
 *   - its mempool per-lcore cache;
 * while the TX unit forwards whatever it had already emitted.  Only then is
 * the slot free for reuse.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>
#include <rte_string_fns.h>
#include <rte_memzone.h>

#include "onvm_state.h"

#include "mgr.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

static const char *const status_names[] = {
	[ONVM_NF_FREE] = "free",	 [ONVM_NF_STARTING] = "starting",
	[ONVM_NF_READY] = "ready",	 [ONVM_NF_RUNNING] = "running",
	[ONVM_NF_STOPPING] = "stopping", [ONVM_NF_DEAD] = "dead",
};

const char *
mgr_nf_status_str(uint32_t status)
{
	return status < RTE_DIM(status_names) ? status_names[status] : "unknown";
}

static int
pidfd_open(pid_t pid)
{
	return syscall(SYS_pidfd_open, pid, 0);
}

static void
watch_pid(uint16_t id, pid_t pid)
{
	struct mgr_nf_priv *p = &mgr.nf_priv[id];
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = id};

	p->pid = pid;
	p->pidfd = pidfd_open(pid);
	if (p->pidfd < 0) {
		/* Already gone (ESRCH) or not ours to see: treat as exited. */
		NFCTL_LOG(WARNING, "cannot watch pid %d: %s", pid, strerror(errno));
		p->exited = true;
		return;
	}
	if (epoll_ctl(mgr.epfd, EPOLL_CTL_ADD, p->pidfd, &ev) < 0) {
		NFCTL_LOG(ERR, "epoll_ctl(pidfd %d): %s", p->pidfd, strerror(errno));
		close(p->pidfd);
		p->pidfd = -1;
		p->exited = true;
	}
}

static void
unwatch(uint16_t id)
{
	struct mgr_nf_priv *p = &mgr.nf_priv[id];

	if (p->pidfd >= 0) {
		epoll_ctl(mgr.epfd, EPOLL_CTL_DEL, p->pidfd, NULL);
		close(p->pidfd);
		p->pidfd = -1;
	}
}

/*
 * Service tables: copy the active instance list, change the copy, publish it,
 * and wait until every data unit has passed a quiescent point, so that no
 * reader still looks at the old copy (the next writer reuses it) and no unit
 * still enqueues to an NF that was just removed.
 */
static int
service_update(uint16_t service, uint16_t instance, bool add)
{
	struct onvm_service *svc = &mgr.shm->services[service];
	uint32_t a = svc->active & 1, b = a ^ 1;
	uint16_t n = 0;

	for (uint16_t i = 0; i < svc->n[a]; i++)
		if (svc->inst[a][i] != instance)
			svc->inst[b][n++] = svc->inst[a][i];
	if (add) {
		if (n >= ONVM_MAX_INSTANCES)
			return -ENOSPC;
		/* Keep instances sorted so flow->instance mapping is stable
		 * across managers and restarts. */
		uint16_t pos = n;

		while (pos > 0 && svc->inst[b][pos - 1] > instance) {
			svc->inst[b][pos] = svc->inst[b][pos - 1];
			pos--;
		}
		svc->inst[b][pos] = instance;
		n++;
	}
	svc->n[b] = n;
	__atomic_store_n(&svc->active, b, __ATOMIC_RELEASE);
	int self = mgr_qsbr_thread_id();

	rte_rcu_qsbr_synchronize(mgr.qsbr, self < 0 ? RTE_QSBR_THRID_INVALID : (unsigned int)self);
	return 0;
}

int
mgr_service_add(uint16_t service, uint16_t instance)
{
	return service_update(service, instance, true);
}

int
mgr_service_remove(uint16_t service, uint16_t instance)
{
	return service_update(service, instance, false);
}

static void
note_slot_used(uint16_t id)
{
	if (id >= mgr.nf_slots_used)
		__atomic_store_n(&mgr.nf_slots_used, id + 1, __ATOMIC_RELEASE);
}

/* The active NF's liveness lock: process-shared and robust, so a waiter
 * learns of the owner's death from the kernel (EOWNERDEAD).  Re-initialised
 * whenever a slot is freed, so a dead owner's state never leaks into reuse. */
void
mgr_nf_alive_lock_init(struct onvm_nf_slot *s)
{
	pthread_mutexattr_t attr;

	pthread_mutexattr_init(&attr);
	pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&s->alive_lock, &attr);
	pthread_mutexattr_destroy(&attr);
}

static bool
slot_live(const struct onvm_nf_slot *s)
{
	return s->status != ONVM_NF_FREE && s->status != ONVM_NF_DEAD;
}

static void
reset_slot_for_use(struct onvm_nf_slot *s)
{
	s->n_state_req = 0;
	s->state_seq = 0;
	s->state_chunks = 0;
	s->stop = 0;
	s->sleeping = 0;
	s->nf_running = 0;
	s->first_pkt_ns = 0;
	memset(&s->batch, 0, sizeof(s->batch));
	/* The rings are empty (reclamation drained them); align the batch
	 * record with their positions. */
	s->batch.rx_seen = s->rx_ring->cons.tail;
	s->batch.tx_base = s->tx_ring->prod.tail;
	memset(&s->stats, 0, sizeof(s->stats));
	memset(&s->app, 0, sizeof(s->app));
	s->reclaimed = 0;
	for (int u = 0; u < MGR_UNIT_MAX; u++) {
		mgr.dp[u].nf_enq[s->instance_id] = 0;
		mgr.dp[u].nf_enq_drop[s->instance_id] = 0;
		mgr.dp[u].nf_deq[s->instance_id] = 0;
	}
}

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

/* Record `pid` as slot `id`'s standby and watch its pidfd. */
static void
watch_standby(uint16_t id, pid_t pid)
{
	struct mgr_nf_priv *p = &mgr.nf_priv[id];
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = id | STANDBY_TAG};

	p->sb_pid = pid;
	p->sb_exited = false;
	p->sb_failovers = mgr.shm->nfs[id].failovers;
	p->sb_pidfd = pidfd_open(pid);
	if (p->sb_pidfd < 0 || epoll_ctl(mgr.epfd, EPOLL_CTL_ADD, p->sb_pidfd, &ev) < 0) {
		NFCTL_LOG(ERR, "cannot watch standby pid %d: %s", pid, strerror(errno));
		p->sb_exited = true;
	}
}

/*
 * A standby attaches to a live instance: nothing about the slot changes but
 * the record of its standby.  It shares the active's lcore id (or brings its
 * own, unused one).  ctl_lock held.
 */
static int
register_standby(const struct onvm_mp_register_req *req, struct onvm_mp_register_rep *rep)
{
	struct onvm_nf_slot *s;
	struct mgr_nf_priv *p;

	if (req->instance_id < 0 || req->instance_id >= ONVM_MAX_NFS)
		return refuse(rep, EINVAL, "a standby needs the instance id of its active (-n)");
	s = &mgr.shm->nfs[req->instance_id];
	p = &mgr.nf_priv[req->instance_id];
	if (s->status != ONVM_NF_READY && s->status != ONVM_NF_RUNNING)
		return refuse(rep, ESRCH, "instance %d has no running NF to stand by for (%s)",
			      req->instance_id, mgr_nf_status_str(s->status));
	if (s->service_id != req->service_id)
		return refuse(rep, EINVAL, "instance %d serves service %u, not %u",
			      req->instance_id, s->service_id, req->service_id);
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
	for (uint16_t id = 0; id < ONVM_MAX_NFS; id++) {
		const struct onvm_nf_slot *o = &mgr.shm->nfs[id];

		if (id != req->instance_id && o->status != ONVM_NF_FREE &&
		    o->lcore_id == req->lcore_id)
			return refuse(rep, EBUSY, "lcore id %u is used by NF '%s' (instance %u)",
				      req->lcore_id, o->name, id);
	}
	if (p->sb_pid != req->pid)
		watch_standby((uint16_t)req->instance_id, req->pid); /* started by hand */
	s->standby_pid = req->pid;
	rep->instance_id = req->instance_id;
	NFCTL_LOG(INFO, "standby pid %d of NF '%s' (instance %d) registered", req->pid, s->name,
		  req->instance_id);
	return 0;
}

/* Pick and fill a slot for a registration request; ctl_lock held. */
static int
do_register(const struct onvm_mp_register_req *req, struct onvm_mp_register_rep *rep)
{
	struct onvm_nf_slot *slot = NULL;
	uint16_t id;

	if (req->shm_version != ONVM_SHM_VERSION)
		return refuse(rep, EPROTO, "table layout v%u, manager has v%u", req->shm_version,
			      ONVM_SHM_VERSION);
	if (req->service_id == 0 || req->service_id >= ONVM_MAX_SERVICES)
		return refuse(rep, EINVAL, "service id %u out of range 1..%d", req->service_id,
			      ONVM_MAX_SERVICES - 1);
	if (mgr.shm->shutting_down)
		return refuse(rep, ESHUTDOWN, "the manager is shutting down");
	if (req->standby)
		return register_standby(req, rep);
	if (req->lcore_id < RTE_MAX_LCORE && rte_lcore_is_enabled(req->lcore_id))
		return refuse(rep, EBUSY,
			      "lcore id %u is one of the manager's; start the NF with "
			      "--lcores=ID@CPUS and an ID of its own",
			      req->lcore_id);
	for (id = 0; id < ONVM_MAX_NFS; id++) {
		const struct onvm_nf_slot *s = &mgr.shm->nfs[id];

		if (s->status != ONVM_NF_FREE && s->lcore_id == req->lcore_id &&
		    s->pid != req->pid)
			return refuse(rep, EBUSY,
				      "lcore id %u is used by NF '%s' (instance %u); give each NF "
				      "its own --lcores id",
				      req->lcore_id, s->name, id);
	}
	if (req->instance_id >= 0) {
		if (req->instance_id >= ONVM_MAX_NFS)
			return refuse(rep, EINVAL, "instance id %d out of range",
				      req->instance_id);
		slot = &mgr.shm->nfs[req->instance_id];
		if (!(slot->status == ONVM_NF_FREE ||
		      (slot->status == ONVM_NF_STARTING && slot->pid == req->pid)))
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
	if (slot->status == ONVM_NF_FREE) {
		mgr.nf_priv[id].cfg_index = -1;
		slot->launched = 0;
	}
	reset_slot_for_use(slot);
	slot->service_id = req->service_id;
	slot->pid = req->pid;
	slot->lcore_id = req->lcore_id;
	rte_strscpy(slot->name, req->name, sizeof(slot->name));
	slot->register_ns = mgr_now_ns();
	slot->generation++;
	if (mgr.nf_priv[id].pidfd < 0 && !mgr.nf_priv[id].exited)
		watch_pid(id, req->pid);
	note_slot_used(id);
	__atomic_store_n(&slot->status, ONVM_NF_READY, __ATOMIC_RELEASE);
	if (mgr_service_add(req->service_id, id) < 0) {
		slot->status = ONVM_NF_DEAD; /* reclaimed when the process exits */
		return refuse(rep, ENOSPC, "service %u already has %d instances",
			      req->service_id, ONVM_MAX_INSTANCES);
	}
	rep->instance_id = id;
	NFCTL_LOG(INFO, "NF '%s' pid %d registered: service %u instance %u lcore %u", slot->name,
		  slot->pid, slot->service_id, id, slot->lcore_id);
	return 0;
}

static int
mp_register(const struct rte_mp_msg *msg, const void *peer)
{
	struct onvm_mp_register_rep rep = {0};
	struct onvm_mp_register_req req;
	uint64_t one = 1;

	if (msg->len_param != sizeof(req)) {
		refuse(&rep, EPROTO, "bad registration message size %d", msg->len_param);
	} else {
		memcpy(&req, msg->param, sizeof(req));
		req.name[sizeof(req.name) - 1] = '\0';
		pthread_mutex_lock(&mgr.ctl_lock);
		if (do_register(&req, &rep) < 0)
			NFCTL_LOG(ERR, "refused NF '%s' pid %d: %s", req.name, req.pid,
				  rep.reason);
		pthread_mutex_unlock(&mgr.ctl_lock);
	}
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
		pthread_mutex_lock(&mgr.ctl_lock);
		if (req.instance_id < ONVM_MAX_NFS) {
			struct onvm_nf_slot *s = &mgr.shm->nfs[req.instance_id];

			if (slot_live(s) && s->generation == req.generation) {
				if (s->status != ONVM_NF_STOPPING) {
					s->status = ONVM_NF_STOPPING;
					mgr_service_remove(s->service_id, req.instance_id);
				}
				result = 0;
				NFCTL_LOG(INFO, "NF '%s' instance %u unregistered", s->name,
					  req.instance_id);
			}
		}
		pthread_mutex_unlock(&mgr.ctl_lock);
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
	struct nf_state_request reqs[ONVM_STATE_MAX_REGIONS];
	struct onvm_nf_state_req copy[ONVM_STATE_MAX_REGIONS];
	struct nf_state_layout layout;
	struct onvm_nf_slot *s;
	int64_t off;
	uint32_t n;
	int ret;

	if (req->instance_id >= ONVM_MAX_NFS)
		return state_fail(rep, EINVAL, "bad instance id");
	s = &mgr.shm->nfs[req->instance_id];
	if (!slot_live(s) || s->generation != req->generation)
		return state_fail(rep, ESRCH, "not a registered NF");
	if (s->state_mz[0] != '\0')
		return state_fail(rep, EEXIST, "state already allocated");
	/* The NF wrote the requests; copy them before trusting anything. */
	n = s->n_state_req;
	if (n == 0 || n > ONVM_STATE_MAX_REGIONS)
		return state_fail(rep, EINVAL, "%u regions requested (1..%d)", n,
				  ONVM_STATE_MAX_REGIONS);
	memcpy(copy, s->state_req, n * sizeof(copy[0]));
	for (uint32_t i = 0; i < n; i++) {
		copy[i].name[ONVM_NAME_LEN - 1] = '\0';
		reqs[i] = (struct nf_state_request){.name = copy[i].name,
						    .size = copy[i].size,
						    .chunk_size = copy[i].chunk_size};
	}
	ret = nf_state_layout_compute(&layout, reqs, n, rep->reason, sizeof(rep->reason));
	if (ret < 0)
		return ret;
	if (mgr.state_mz == NULL)
		return state_fail(rep, ENOMEM, "the node has no state pool (state.pool_mb is 0)");
	off = mgr_state_pool_alloc(&mgr.state_pool, layout.total_size);
	if (off < 0)
		return state_fail(rep, ENOMEM,
				  "%" PRIu64 " bytes of state do not fit the pool (%" PRIu64
				  " of %" PRIu64 " in use; raise state.pool_mb)",
				  layout.total_size, mgr_state_pool_in_use(&mgr.state_pool),
				  mgr.state_pool.size);
	ret = nf_state_format((uint8_t *)mgr.state_mz->addr + off, layout.total_size, &layout,
			      rep->reason, sizeof(rep->reason));
	if (ret < 0) {
		mgr_state_pool_free(&mgr.state_pool, off);
		return ret;
	}
	rte_strscpy(s->state_mz, MGR_STATE_POOL_NAME, sizeof(s->state_mz));
	s->state_off = off;
	s->state_size = layout.total_size;
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
		pthread_mutex_lock(&mgr.ctl_lock);
		rep.result = do_state_alloc(&req, &rep);
		pthread_mutex_unlock(&mgr.ctl_lock);
		if (rep.result < 0)
			NFCTL_LOG(ERR, "state for instance %u refused: %s", req.instance_id,
				  rep.reason);
	}
	reply(msg, peer, &rep, sizeof(rep));
	return 0;
}

/* Release a slot's state memory (no standby uses it: the slot is being freed). */
static void
free_state(struct onvm_nf_slot *s)
{
	if (s->state_mz[0] == '\0')
		return;
	mgr_state_pool_free(&mgr.state_pool, s->state_off);
	s->state_mz[0] = '\0';
	s->state_off = 0;
	s->state_size = 0;
	s->n_state_req = 0;
}

int
mgr_nf_ctl_init(void)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = UINT32_MAX};
	pthread_mutexattr_t attr;

	pthread_mutexattr_init(&attr);
	pthread_mutex_init(&mgr.ctl_lock, &attr);
	for (int i = 0; i < ONVM_MAX_NFS; i++) {
		mgr.nf_priv[i].pidfd = -1;
		mgr.nf_priv[i].sb_pidfd = -1;
		mgr.nf_priv[i].cfg_index = -1;
	}
	mgr.epfd = epoll_create1(EPOLL_CLOEXEC);
	mgr.ctl_evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (mgr.epfd < 0 || mgr.ctl_evfd < 0 ||
	    epoll_ctl(mgr.epfd, EPOLL_CTL_ADD, mgr.ctl_evfd, &ev) < 0) {
		MGR_LOG(ERR, "epoll/eventfd: %s", strerror(errno));
		return -errno;
	}
	if (rte_mp_action_register(ONVM_MP_NF_REGISTER, mp_register) < 0 ||
	    rte_mp_action_register(ONVM_MP_NF_UNREGISTER, mp_unregister) < 0 ||
	    rte_mp_action_register(ONVM_MP_NF_STATE, mp_state) < 0) {
		MGR_LOG(ERR, "cannot register IPC actions: %s", rte_strerror(rte_errno));
		return -rte_errno;
	}
	return 0;
}

/* Find the NF binary: a path (relative to the config file), else a name looked
 * up in --nf-path, the build tree next to onvm_mgr, then onvm_mgr's directory. */
static int
resolve_binary(const char *bin, char *out, size_t len)
{
	char cand[3][PATH_MAX];
	int n = 0;

	if (strchr(bin, '/') != NULL) {
		int w = bin[0] == '/' ? snprintf(out, len, "%s", bin)
				      : snprintf(out, len, "%s/%s", mgr.cfg.dir, bin);

		if (w < 0 || (size_t)w >= len)
			return -ENAMETOOLONG;
		return access(out, X_OK) == 0 ? 0 : -errno;
	}
	if (mgr.nf_path[0] != '\0' &&
	    snprintf(cand[n], PATH_MAX, "%s/%s", mgr.nf_path, bin) < PATH_MAX)
		n++;
	if (snprintf(cand[n], PATH_MAX, "%s/../nfs/%s/%s", mgr.exe_dir, bin, bin) < PATH_MAX)
		n++;
	if (snprintf(cand[n], PATH_MAX, "%s/%s", mgr.exe_dir, bin) < PATH_MAX)
		n++;
	for (int i = 0; i < n; i++) {
		if (access(cand[i], X_OK) != 0)
			continue;
		if (len < PATH_MAX || realpath(cand[i], out) == NULL)
			return -ENAMETOOLONG;
		return 0;
	}
	return -ENOENT;
}

/*
 * CPUs a launched NF may run on: nf_defaults.cpus for actives (all online CPUs
 * if unset).  Standbys: nf_defaults.standby_cpus, else the online CPUs the
 * actives do not use, else the actives' CPUs.  Why apart: on a kernel without
 * full preemption (PREEMPT_NONE, Debian's default) a standby woken on the CPU
 * where its active dies waits until the dead process's address space is torn
 * down -- about as long as pidfd readiness (docs/design.md, "Failover time").
 */
static void
nf_cpu_set(bool standby, cpu_set_t *out)
{
	cpu_set_t online, active, sb;
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	CPU_ZERO(&online);
	for (long c = 0; c < n && c < CPU_SETSIZE; c++)
		CPU_SET(c, &online);
	/* Both lists were validated when the config was loaded. */
	mgr_cpulist_parse(mgr.cfg.nf_cpus, &active);
	if (CPU_COUNT(&active) == 0)
		active = online;
	mgr_cpulist_parse(mgr.cfg.nf_standby_cpus, &sb);
	if (CPU_COUNT(&sb) == 0) {
		CPU_XOR(&sb, &online, &active);
		CPU_AND(&sb, &sb, &online);
		if (CPU_COUNT(&sb) == 0)
			sb = active;
	}
	*out = standby ? sb : active;
}

/* fork/exec NF `cfg_index` for slot `id`, as its active or its standby. */
static pid_t
spawn_nf(int cfg_index, uint16_t id, bool standby)
{
	const struct mgr_nf_cfg *nc = &mgr.cfg.nfs[cfg_index];
	char path[PATH_MAX], prefix[96], cpus[64], lcores[96], svc[8], inst[8];
	char *argv[MGR_CFG_MAX_ARGS + 24];
	cpu_set_t cpu_set;
	int a = 0;
	pid_t pid;

	if (resolve_binary(nc->binary, path, sizeof(path)) < 0) {
		MGR_LOG(ERR, "NF '%s': binary '%s' not found or not executable", nc->name,
			nc->binary);
		return -ENOENT;
	}
	snprintf(prefix, sizeof(prefix), "--file-prefix=%s", mgr.file_prefix);
	/* A standby shares its active's lcore id: they never run together, and
	 * the one promoted flushes the dead one's mempool cache first. */
	nf_cpu_set(standby, &cpu_set);
	if (mgr_cpulist_format(&cpu_set, cpus, sizeof(cpus)) < 0)
		return -E2BIG;
	snprintf(lcores, sizeof(lcores), "--lcores=%u@(%s)", ONVM_NF_LCORE_BASE + id, cpus);
	snprintf(svc, sizeof(svc), "%u", nc->service);
	snprintf(inst, sizeof(inst), "%u", id);
	argv[a++] = path;
	argv[a++] = "--proc-type=secondary";
	argv[a++] = prefix;
	argv[a++] = lcores;
	argv[a++] = "--no-pci";
	argv[a++] = "--";
	argv[a++] = "-r";
	argv[a++] = svc;
	argv[a++] = "-n";
	argv[a++] = inst;
	argv[a++] = "-N";
	argv[a++] = (char *)nc->name;
	if (standby)
		argv[a++] = "--standby";
	argv[a++] = "--";
	for (int i = 0; i < nc->nargs; i++)
		argv[a++] = nc->args[i];
	argv[a] = NULL;

	pid = fork();
	if (pid < 0) {
		MGR_LOG(ERR, "fork for NF '%s': %s", nc->name, strerror(errno));
		return -errno;
	}
	if (pid == 0) {
		/* Die with the manager; keep stdout/stderr for the operator. */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		/* Own process group: a terminal's Ctrl-C reaches the manager,
		 * which drains and then stops its NFs in order. */
		setpgid(0, 0);
		/* The whole NF process on its CPUs, not only its lcore: EAL puts
		 * its control threads on the start-up CPUs its lcores leave free,
		 * and the last thread of a dying NF tears its address space down
		 * (milliseconds without preemption) -- not on the manager's CPU. */
		sched_setaffinity(0, sizeof(cpu_set), &cpu_set);
		if (getppid() != mgr.shm->mgr_pid)
			_exit(127);
		execv(path, argv);
		fprintf(stderr, "onvm_mgr: exec %s: %s\n", path, strerror(errno));
		_exit(127);
	}
	MGR_LOG(INFO, "launched %s '%s' (%s) pid %d for instance %u of service %u",
		standby ? "standby of NF" : "NF", nc->name, path, pid, id, nc->service);
	return pid;
}

static int
launch_one(int cfg_index, uint16_t id)
{
	const struct mgr_nf_cfg *nc = &mgr.cfg.nfs[cfg_index];
	struct onvm_nf_slot *slot = &mgr.shm->nfs[id];
	pid_t pid;

	note_slot_used(id);
	slot->status = ONVM_NF_STARTING;
	slot->launched = 1;
	slot->launch_ns = mgr_now_ns();
	rte_strscpy(slot->name, nc->name, sizeof(slot->name));
	slot->service_id = nc->service;
	mgr.nf_priv[id].cfg_index = cfg_index;
	mgr.nf_priv[id].exited = false;
	mgr.nf_priv[id].held_reclaimed = false;
	mgr.nf_priv[id].killed = false;
	pid = spawn_nf(cfg_index, id, false);
	if (pid < 0) {
		slot->status = ONVM_NF_FREE;
		return pid;
	}
	slot->pid = pid;
	watch_pid(id, pid);
	return 0;
}

/* Start a standby for a running, launched NF configured "local". */
static void
launch_standby(uint16_t id)
{
	pid_t pid = spawn_nf(mgr.nf_priv[id].cfg_index, id, true);

	if (pid < 0)
		return;
	mgr.shm->nfs[id].standby_pid = pid;
	watch_standby(id, pid);
}

int
mgr_nf_launch_all(void)
{
	uint16_t next = 0;

	for (int i = 0; i < mgr.cfg.nnfs; i++) {
		for (uint16_t k = 0; k < mgr.cfg.nfs[i].instances; k++) {
			int ret;

			while (next < ONVM_MAX_NFS && mgr.shm->nfs[next].status != ONVM_NF_FREE)
				next++;
			if (next >= ONVM_MAX_NFS) {
				MGR_LOG(ERR, "no free NF slot for '%s'", mgr.cfg.nfs[i].name);
				return -ENOSPC;
			}
			ret = launch_one(i, next);
			if (ret < 0)
				return ret;
		}
	}
	return 0;
}

/* Read what epoll has: pidfds of exited NFs and the registration eventfd. */
static int
collect_events(int timeout_ms)
{
	struct epoll_event evs[16];
	int n = epoll_wait(mgr.epfd, evs, RTE_DIM(evs), timeout_ms);

	for (int i = 0; i < n; i++) {
		uint32_t id = evs[i].data.u32;

		if (id == UINT32_MAX) {
			uint64_t v;

			if (read(mgr.ctl_evfd, &v, sizeof(v)) < 0)
				continue;
			continue;
		}
		if ((id & STANDBY_TAG) && (id & ~STANDBY_TAG) < ONVM_MAX_NFS) {
			struct mgr_nf_priv *p = &mgr.nf_priv[id & ~STANDBY_TAG];
			siginfo_t si = {0};

			if (p->sb_pidfd >= 0) {
				syscall(SYS_waitid, P_PIDFD, p->sb_pidfd, &si, WEXITED | WNOHANG, NULL);
				epoll_ctl(mgr.epfd, EPOLL_CTL_DEL, p->sb_pidfd, NULL);
				close(p->sb_pidfd);
				p->sb_pidfd = -1;
			}
			p->sb_exited = true;
			continue;
		}
		if (id < ONVM_MAX_NFS) {
			struct mgr_nf_priv *p = &mgr.nf_priv[id];
			siginfo_t si = {0};

			p->exited = true;
			if (mgr.shm->nfs[id].launched &&
			    syscall(SYS_waitid, P_PIDFD, p->pidfd, &si, WEXITED | WNOHANG, NULL) ==
				    0)
				p->exit_status = si.si_status;
			unwatch(id);
		}
	}
	return n > 0 ? n : 0;
}

/*
 * Start-up: a chain is ready when its "local" NFs are protected, i.e. their
 * standbys are parked; until then the ports stay stopped.  Returns how many
 * NFs are still on their way there.
 */
static int
protect_started_nfs(void)
{
	int pending = 0;

	pthread_mutex_lock(&mgr.ctl_lock);
	for (uint16_t id = 0; id < ONVM_MAX_NFS; id++) {
		struct onvm_nf_slot *s = &mgr.shm->nfs[id];
		struct mgr_nf_priv *p = &mgr.nf_priv[id];

		if (!s->launched || p->cfg_index < 0 || !mgr.cfg.nfs[p->cfg_index].local ||
		    s->status == ONVM_NF_STARTING || p->exited)
			continue;
		if (s->status == ONVM_NF_READY && s->nf_running)
			s->status = ONVM_NF_RUNNING;
		if (s->status == ONVM_NF_RUNNING && s->standby_pid == 0)
			launch_standby(id);
		if (s->status != ONVM_NF_RUNNING || !s->standby_parked)
			pending++;
	}
	pthread_mutex_unlock(&mgr.ctl_lock);
	return pending;
}

int
mgr_nf_wait_ready(uint32_t timeout_ms)
{
	uint64_t deadline = mgr_now_ns() + (uint64_t)timeout_ms * 1000000ULL;

	for (;;) {
		int pending = 0, failed = 0;

		collect_events(0);
		pending += protect_started_nfs();
		for (uint16_t id = 0; id < ONVM_MAX_NFS; id++) {
			const struct onvm_nf_slot *s = &mgr.shm->nfs[id];

			if (!s->launched || s->status == ONVM_NF_FREE)
				continue;
			if (mgr.nf_priv[id].exited && s->status == ONVM_NF_STARTING) {
				MGR_LOG(ERR, "NF '%s' (pid %d) exited with status %d before it "
					     "registered",
					s->name, s->pid, mgr.nf_priv[id].exit_status);
				failed++;
			} else if (s->status == ONVM_NF_STARTING) {
				pending++;
			}
		}
		if (failed > 0)
			return -ECHILD;
		if (pending == 0)
			return 0;
		if (mgr_now_ns() > deadline || mgr.force_quit) {
			MGR_LOG(ERR, "%d NF(s) did not register within %u ms", pending,
				timeout_ms);
			return -ETIMEDOUT;
		}
		{
			struct epoll_event ev;
			int n = epoll_wait(mgr.epfd, &ev, 1, 50);

			(void)n; /* level-triggered: collect_events() reads it next */
		}
	}
}

/* Return every mbuf a gone NF still owned; see the comment at the top. */
static void
reclaim_held(uint16_t id)
{
	struct onvm_nf_slot *s = &mgr.shm->nfs[id];
	struct onvm_nf_batch *b = &s->batch;
	struct rte_ring *rx = s->rx_ring, *tx = s->tx_ring;
	struct rte_mbuf *pkts[ONVM_BURST];
	uint32_t first = 0, last, freed = 0, n;

	/* Undo half-done ring operations of the dead process: a dequeue that
	 * moved cons.head but not cons.tail leaves its packets in the ring; an
	 * enqueue that moved prod.head but not prod.tail was never visible. */
	rx->cons.head = rx->cons.tail;
	tx->prod.head = tx->prod.tail;

	if (rx->cons.tail != b->rx_seen) {
		last = rx->cons.tail - b->rx_seen; /* dequeued, not yet recorded */
	} else {
		first = tx->prod.tail - b->tx_base;
		last = b->held_n;
	}
	if (last > ONVM_NF_HELD_MAX || first > last) {
		NFCTL_LOG(ERR, "NF instance %u: inconsistent batch record (%u..%u), not reclaiming "
			       "held packets",
			  id, first, last);
		first = last = 0;
	}
	for (uint32_t i = first; i < last; i++) {
		if (b->held[i] != NULL) {
			rte_pktmbuf_free(b->held[i]);
			freed++;
		}
	}
	b->held_n = 0;
	while ((n = rte_ring_sc_dequeue_burst(rx, (void **)pkts, ONVM_BURST, NULL)) > 0) {
		rte_pktmbuf_free_bulk(pkts, n);
		freed += n;
		mgr.dp[MGR_UNIT_CTRL].drops[MGR_DROP_NF_GONE] += n;
	}
	if (s->lcore_id < RTE_MAX_LCORE) {
		struct rte_mempool_cache *c = rte_mempool_default_cache(mgr.pool, s->lcore_id);

		if (c != NULL && c->len > 0)
			rte_mempool_cache_flush(c, mgr.pool);
	}
	s->reclaimed += freed;
	mgr.nf_reclaimed_mbufs += freed;
	mgr.nf_priv[id].held_reclaimed = true;
	NFCTL_LOG(INFO, "NF '%s' instance %u: %u mbufs returned to the pool", s->name, id, freed);
}

/*
 * The active of slot `id` died and its standby lives: the standby promotes
 * itself (it woke on the robust mutex long before this pidfd event), so the
 * manager reclaims nothing -- rings, held packets and state now belong to the
 * standby -- and only moves its watch to the standby's pid.  A fresh standby
 * is launched once the slot runs again.  ctl_lock held.
 */
static void
hand_over(uint16_t id)
{
	struct onvm_nf_slot *s = &mgr.shm->nfs[id];
	struct mgr_nf_priv *p = &mgr.nf_priv[id];
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = id};

	mgr.nf_deaths++;
	mgr.nf_failovers++;
	NFCTL_LOG(WARNING, "NF '%s' (pid %d, instance %u) died: standby pid %d takes over",
		  s->name, p->pid, id, p->sb_pid);
	p->pid = p->sb_pid;
	p->pidfd = p->sb_pidfd;
	p->sb_pidfd = -1;
	if (p->pidfd >= 0)
		epoll_ctl(mgr.epfd, EPOLL_CTL_MOD, p->pidfd, &ev);
	s->pid = p->sb_pid;
	s->standby_pid = 0;
	s->standby_parked = 0;
	p->sb_pid = 0;
	p->exited = false;
	p->killed = false;
	p->hb_moved_ns = 0;
	/* It may have promoted already (EOWNERDEAD comes before the pidfd):
	 * the slot's failovers against sb_failovers tells. */
	p->awaiting_promotion = true;
}

/* Advance one slot whose process is gone; ctl_lock held. */
static int
handle_exit(uint16_t id)
{
	struct onvm_nf_slot *s = &mgr.shm->nfs[id];
	struct mgr_nf_priv *p = &mgr.nf_priv[id];

	switch (s->status) {
	case ONVM_NF_STARTING:
		NFCTL_LOG(ERR, "NF '%s' pid %d exited (status %d) before registering", s->name,
			  s->pid, p->exit_status);
		s->status = ONVM_NF_DEAD;
		return 1;
	case ONVM_NF_READY:
	case ONVM_NF_RUNNING:
		mgr.nf_deaths++;
		NFCTL_LOG(WARNING, "NF '%s' (pid %d, instance %u) died without unregistering",
			  s->name, s->pid, id);
		s->status = ONVM_NF_DEAD;
		mgr_service_remove(s->service_id, id);
		return 1;
	case ONVM_NF_STOPPING:
		s->status = ONVM_NF_DEAD; /* already out of its service */
		return 1;
	case ONVM_NF_DEAD:
		/* A parked standby sees the slot stop and exits; wait for it. */
		if (p->sb_pid != 0 && !p->sb_exited)
			return 0;
		if (!p->held_reclaimed)
			reclaim_held(id);
		/* Whatever it emitted is still forwarded by the TX unit. */
		if (!rte_ring_empty(s->tx_ring))
			return 0;
		rte_ring_reset(s->rx_ring);
		free_state(s);
		mgr_nf_alive_lock_init(s);
		s->status = ONVM_NF_FREE;
		s->pid = 0;
		s->launched = 0;
		*p = (struct mgr_nf_priv){.pidfd = -1, .sb_pidfd = -1, .cfg_index = -1};
		return 1;
	default:
		return 0;
	}
}

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

/* The control unit runs at most every CTL_PERIOD_US while the lcore is busy
 * (an epoll_wait and a table scan per data-path iteration would cost more
 * than the packets); an idle lcore hosting it sleeps in epoll instead, so
 * events are never late by more than this period. */
#define CTL_PERIOD_US 50

int
mgr_ctl_poll(void)
{
	static uint64_t next_tsc;
	uint64_t now = rte_get_tsc_cycles(), now_ns;
	int work;

	if (now < next_tsc)
		return 0;
	next_tsc = now + CTL_PERIOD_US * (rte_get_tsc_hz() / 1000000);
	work = collect_events(0);

	if (pthread_mutex_trylock(&mgr.ctl_lock) != 0)
		return work;
	now_ns = mgr_now_ns();
	for (uint16_t id = 0; id < ONVM_MAX_NFS; id++) {
		struct onvm_nf_slot *s = &mgr.shm->nfs[id];
		struct mgr_nf_priv *p = &mgr.nf_priv[id];

		if (s->status == ONVM_NF_FREE)
			continue;
		if (p->awaiting_promotion && s->failovers != p->sb_failovers)
			p->awaiting_promotion = false;
		if (mgr.cfg.nf_heartbeat_ms != 0 && !p->awaiting_promotion)
			check_heartbeat(id, now_ns);
		if (s->status == ONVM_NF_READY && s->nf_running) {
			s->status = ONVM_NF_RUNNING;
			work++;
		}
		if (s->status == ONVM_NF_STARTING && !p->exited && !p->killed &&
		    now_ns - s->launch_ns > mgr.cfg.nf_start_timeout_ms * 1000000ULL) {
			NFCTL_LOG(ERR, "NF '%s' pid %d did not register in %u ms: killing it",
				  s->name, s->pid, mgr.cfg.nf_start_timeout_ms);
			kill(s->pid, SIGKILL);
			p->killed = true;
		}
		if (p->sb_exited && p->sb_pid != 0) {
			/* A standby that exited without being promoted. */
			if (s->standby_pid == p->sb_pid) {
				s->standby_pid = 0;
				s->standby_parked = 0;
			}
			p->sb_pid = 0;
			p->sb_exited = false;
			work++;
		}
		if (p->exited && (s->status == ONVM_NF_READY || s->status == ONVM_NF_RUNNING) &&
		    s->standby_pid != 0 && p->sb_pid == s->standby_pid && !p->sb_exited) {
			hand_over(id);
			work++;
			continue;
		}
		while (p->exited && s->status != ONVM_NF_FREE && handle_exit(id))
			work++;
		if (s->status == ONVM_NF_RUNNING && s->launched && p->cfg_index >= 0 &&
		    mgr.cfg.nfs[p->cfg_index].local && s->standby_pid == 0 &&
		    !p->awaiting_promotion && !mgr.shm->shutting_down) {
			launch_standby(id);
			work++;
		}
	}
	pthread_mutex_unlock(&mgr.ctl_lock);
	return work;
}

void
mgr_nf_stop_all(void)
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

/* Shutdown back-stop: SIGKILL every NF we launched that is still there. */
void
mgr_nf_kill_launched(void)
{
	for (uint16_t id = 0; id < ONVM_MAX_NFS; id++) {
		struct onvm_nf_slot *s = &mgr.shm->nfs[id];

		if (s->status != ONVM_NF_FREE && s->launched && !mgr.nf_priv[id].exited &&
		    s->pid > 0) {
			NFCTL_LOG(WARNING, "NF '%s' pid %d did not stop: SIGKILL", s->name, s->pid);
			kill(s->pid, SIGKILL);
			mgr.nf_priv[id].killed = true;
		}
		if (mgr.nf_priv[id].sb_pid > 0 && !mgr.nf_priv[id].sb_exited)
			kill(mgr.nf_priv[id].sb_pid, SIGKILL);
	}
}
