/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * nf_ctl.h -- what the files of the NF life cycle call of each other
 * (nf.h maps the files and holds what the rest of the manager calls).
 *
 * Locking: mgr.ctl_lock serialises every writer of the NF and service
 * tables -- the IPC thread and the control thread.  The IPC thread may hold
 * it across an RCU grace period (it waits for the data lcores), so nothing a
 * data lcore runs ever takes it.  Functions below marked "ctl_lock held"
 * expect the caller to hold it; none of them may be called from a data lcore.
 */
#ifndef NF_CTL_H
#define NF_CTL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "mgr.h"

#define NFCTL_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, mgr_nf_logtype, "nf_ctl: " fmt "\n", ##__VA_ARGS__)

/* In a child of the manager before exec: nothing of the manager's but
 * stdin/out/err (some of its descriptors, received ones, are not
 * close-on-exec); `max_fd` from sysconf(_SC_OPEN_MAX), taken before the
 * fork, for kernels before close_range (5.9).  Async-signal-safe. */
static inline void
mgr_child_close_fds(int max_fd)
{
	if (syscall(SYS_close_range, 3U, ~0U, 0U) < 0)
		for (int fd = 3; fd < max_fd; fd++)
			close(fd);
}

/* nf_services.c -- ctl_lock held. */
void mgr_nf_slot_note_used(uint16_t id);
void mgr_nf_slot_reset(struct onvm_nf_slot *s);

/* nf_ipc.c: registers the rte_mp actions.  Returns 0 or -rte_errno. */
int mgr_nf_ipc_init(void);

/* nf_launch.c -- ctl_lock held (or before the control thread starts). */
int mgr_nf_launch_one(int cfg_index, uint16_t id);
void mgr_nf_launch_standby(uint16_t id);

/* nf_reap.c -- ctl_lock held (mgr_nf_alloc_rings_drain, in mgr.h: at exit). */
/* Watch `pid` through `pidfd` (taken over, closed on failure) or, if it is
 * -1, a pidfd of its own.  0, or -errno (not watched: nothing recorded; the
 * caller refuses the NF). */
int mgr_nf_watch_pid(uint16_t id, pid_t pid, int pidfd);
int mgr_nf_watch_standby(uint16_t id, pid_t pid, int pidfd);
struct epoll_event;
int mgr_nf_pidfd_open(pid_t pid);
pid_t mgr_nf_pidfd_pid(int fd, pid_t *own_ns);
void mgr_nf_handle_events(const struct epoll_event *evs, int n);
/* (mgr_nf_give_back(): nf.h) */
void mgr_nf_cache_give_back(uint32_t lcore_id, const char *name, uint16_t id);
/* Advance one slot whose process is gone; returns 1 while it made progress. */
int mgr_nf_handle_exit(uint16_t id);
/* Whether pidfd `fd` (>= 0) says its process has exited. */
bool mgr_nf_fd_fired(int fd);
/* Reap the process of pidfd `fd` (taken; -1: nothing) once it has exited,
 * watching it until then if it still runs. */
void mgr_nf_reap_later(int fd);
/* Stop watching a container runtime CLI's pidfd `*fd` (if >= 0) as its NF's
 * and reap it when it exits (mgr_nf_reap_later); *fd = -1. */
void mgr_nf_launcher_retire(int *fd);
/* Move `*from` (a CLI's pidfd, or -1) to `*to`, retagged `tag`; a CLI pidfd
 * already in `*to` is retired. */
void mgr_nf_launcher_move(int *from, int *to, uint32_t tag);

/* nf_container.c -- the control thread, ctl_lock held. */
#define MGR_CTR_MAX_STRS (2 * MGR_CFG_MAX_ARGS + 16)
struct mgr_ctr_argbuf {
	char command[PATH_MAX];
	char telemetry[PATH_MAX];
	char s[MGR_CTR_MAX_STRS][PATH_MAX];
};
struct mgr_nf_cfg;
int mgr_ctr_resolve_command(const char *cmd, char *out, size_t len);
int mgr_ctr_run_argv(const struct mgr_nf_cfg *nc, uint16_t id, bool standby, const char *cpus,
		     const char *role_cpus, struct mgr_ctr_argbuf *buf, char **argv, int max,
		     char *name, size_t name_len, pid_t *ns_pid);
const char *mgr_ctr_exit_reason(int status);
bool mgr_ctr_ns_pid_taken(pid_t pid);
void mgr_ctr_remove(const char *name);

/* nf_reaper.c: reap and close the pidfd of an exited process, off the
 * control thread (the kernel may take long: see there).  Takes the fd. */
int mgr_nf_reaper_start(void);
void mgr_nf_reap(int pidfd);
void mgr_nf_reaper_stop(void);

/* nf_failover.c -- ctl_lock held. */
void mgr_nf_hand_over(uint16_t id);
void mgr_nf_standby_failed(uint16_t id, const char *why, uint64_t now_ns);
void mgr_nf_standby_exited(uint16_t id, uint64_t now_ns);
void mgr_nf_standby_parked(uint16_t id);
bool mgr_nf_standby_due(uint16_t id, uint64_t now_ns);

#endif /* NF_CTL_H */
