/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * nf_launch.c -- starting NFs: find the binary, compute the CPUs and the EAL
 * lcore id, fork/exec it as an active or as the standby of a slot.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rte_string_fns.h>

#include "onvm_cpuset.h"

#include "nf_ctl.h"

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

/* Kill and reap a child of ours here: one we cannot watch (no pidfd: out of
 * file descriptors) must not run unseen, and one forked with a taken pid
 * must not start. */
static void
unwatched_child_kill(pid_t pid)
{
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

/*
 * fork/exec NF `cfg_index` for slot `id`, as its active or its standby; a
 * container NF through its runtime's CLI (nf_container.c), whose container
 * gets the name in `ctr_name`.
 *
 * CPUs (mgr.nf_active_cpus / nf_standby_cpus, from onvm_nf_cpus()): the whole
 * NF process runs on them, not only its lcore -- EAL puts its control threads
 * on the start-up CPUs its lcores leave free, and the last thread of a dying
 * NF tears its address space down (milliseconds without preemption) on its
 * own CPU, not on the manager's.  Standbys run apart from actives: on a
 * kernel without full preemption a standby woken on the CPU where its active
 * dies waits for that teardown (docs/design/local-resiliency.md, "Failover time").
 *
 * Lcore id: the slot's (mgr.nf_lcore), which a standby shares with its
 * active -- they never run together.  Control thread (or start-up), ctl_lock
 * held.  Returns the child's pid or -errno.
 */
static pid_t
spawn_nf(int cfg_index, uint16_t id, bool standby, char *ctr_name, size_t ctr_name_len,
	 pid_t *ns_pid)
{
	static char cpus[ONVM_CPULIST_MAX], lcores[ONVM_CPULIST_MAX + 32];
	static const char exec_failed[] = "onvm_mgr: exec of an NF binary failed\n";
	static struct mgr_ctr_argbuf ctr_buf;
	static char *argv[MGR_CTR_MAX_STRS + 2 * MGR_CFG_MAX_ARGS + 48];
	const struct mgr_nf_cfg *nc = &mgr.cfg.nfs[cfg_index];
	const cpu_set_t *cpu_set = standby ? &mgr.nf_standby_cpus : &mgr.nf_active_cpus;
	char path[PATH_MAX], prefix[96], svc[8], inst[8];
	const char *exe = path;
	int a = 0, max_fd, forks_for_pid = 0;
	pid_t pid;

	if (!nc->ctr.enabled && resolve_binary(nc->binary, path, sizeof(path)) < 0) {
		MGR_LOG(ERR, "NF '%s': binary '%s' not found or not executable", nc->name,
			nc->binary);
		return -ENOENT;
	}
	if (mgr.nf_lcore[id] == UINT32_MAX) {
		MGR_LOG(ERR, "NF '%s': slot %u has no lcore id (RTE_MAX_LCORE %d is too small for "
			     "the manager's lcores plus %d NF slots)",
			nc->name, id, RTE_MAX_LCORE, ONVM_MAX_NFS);
		return -ERANGE;
	}
	if (onvm_cpulist_format(cpu_set, cpus, sizeof(cpus)) < 0 ||
	    snprintf(lcores, sizeof(lcores), "--lcores=%u@(%s)", mgr.nf_lcore[id], cpus) >=
		    (int)sizeof(lcores)) {
		MGR_LOG(ERR, "NF '%s': its CPU list does not fit an EAL argument", nc->name);
		return -E2BIG;
	}
	snprintf(prefix, sizeof(prefix), "--file-prefix=%s", mgr.file_prefix);
	snprintf(svc, sizeof(svc), "%u", nc->service);
	snprintf(inst, sizeof(inst), "%u", id);
	if (nc->ctr.enabled) {
		/* The container may use the CPUs of either role: a standby
		 * moves to its active's when it promotes.  libnf puts the NF
		 * on its role's (ONVM_NF_CPUS: a runtime may put it on the
		 * whole cpuset), where the runtime's own processes (podman,
		 * conmon) run too, as the process NFs' do. */
		static char ctr_cpus[ONVM_CPULIST_MAX];
		cpu_set_t both;

		CPU_OR(&both, &mgr.nf_active_cpus, &mgr.nf_standby_cpus);
		if (onvm_cpulist_format(&both, ctr_cpus, sizeof(ctr_cpus)) < 0)
			return -E2BIG;
		a = mgr_ctr_run_argv(nc, id, standby, ctr_cpus, cpus, &ctr_buf, argv,
				     (int)RTE_DIM(argv) - 2 * MGR_CFG_MAX_ARGS, ctr_name,
				     ctr_name_len, ns_pid);
		if (a < 0)
			return a;
		exe = ctr_buf.command;
		snprintf(path, sizeof(path), "%s in %s", nc->ctr.path, ctr_name);
	} else {
		argv[a++] = path;
	}
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

	max_fd = (int)sysconf(_SC_OPEN_MAX); /* for kernels before close_range (5.9) */
again:
	pid = fork();
	if (pid < 0) {
		MGR_LOG(ERR, "fork for NF '%s': %s", nc->name, strerror(errno));
		return -errno;
	}
	if (pid == 0) {
		/* The child of a multi-threaded process: async-signal-safe calls
		 * only until exec.  Die with the manager; keep stdout/stderr for
		 * the operator; own process group, so a terminal's Ctrl-C reaches
		 * the manager, which drains and then stops its NFs in order. */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		setpgid(0, 0);
		/* Nothing of the manager's but stdin/out/err: some of its
		 * descriptors (received ones) are not close-on-exec. */
		mgr_child_close_fds(max_fd);
		sched_setaffinity(0, sizeof(*cpu_set), cpu_set);
		if (getppid() != mgr.shm->mgr_pid)
			_exit(127);
		/* (a copy of the table taken under ctl_lock: the parent forks
		 * again, this one must not start the NF) */
		if (!nc->ctr.enabled && mgr_ctr_ns_pid_taken(getpid()))
			_exit(127);
		execv(exe, argv);
		if (write(STDERR_FILENO, exec_failed, sizeof(exec_failed) - 1) < 0)
			_exit(127);
		_exit(127);
	}
	/* A process NF whose pid a container NF has in its namespace would
	 * collide with it in the runtime directory (nf_container.c): another. */
	if (!nc->ctr.enabled && mgr_ctr_ns_pid_taken(pid)) {
		unwatched_child_kill(pid);
		if (++forks_for_pid < 8)
			goto again;
		MGR_LOG(ERR, "NF '%s': every pid forked is one a container NF has", nc->name);
		return -EAGAIN;
	}
	MGR_LOG(INFO, "launched %s '%s' (%s) pid %d for instance %u of service %u",
		standby ? "standby of NF" : "NF", nc->name, path, pid, id, nc->service);
	return pid;
}

int
mgr_nf_launch_one(int cfg_index, uint16_t id)
{
	const struct mgr_nf_cfg *nc = &mgr.cfg.nfs[cfg_index];
	struct onvm_nf_slot *slot = &mgr.shm->nfs[id];
	pid_t pid;
	int ret;

	MGR_ASSERT_CTL_LOCKED();
	mgr_nf_slot_note_used(id);
	slot->status = ONVM_NF_STARTING;
	slot->launched = 1;
	slot->launch_ns = mgr_now_ns();
	rte_strscpy(slot->name, nc->name, sizeof(slot->name));
	slot->service_id = nc->service;
	slot->lcore_id = mgr.nf_lcore[id]; /* what it will register with */
	mgr.nf_priv[id].cfg_index = cfg_index;
	mgr.nf_priv[id].exited = false;
	mgr.nf_priv[id].held_reclaimed = false;
	mgr.nf_priv[id].killed = false;
	mgr.nf_priv[id].recovery_kill = false;
	mgr.nf_priv[id].kill_at_register = false;
	pid = spawn_nf(cfg_index, id, false, mgr.nf_priv[id].ctr_name,
		       sizeof(mgr.nf_priv[id].ctr_name), &mgr.nf_priv[id].ctr_ns_pid);
	if (pid < 0) {
		slot->status = ONVM_NF_FREE;
		mgr.nf_priv[id] = MGR_NF_PRIV_INIT;
		return pid;
	}
	/* Until it registers, the pid watched is its runtime CLI's. */
	mgr.nf_priv[id].launcher_watched = nc->ctr.enabled;
	ret = mgr_nf_watch_pid(id, pid, -1);
	if (ret < 0) {
		unwatched_child_kill(pid);
		if (nc->ctr.enabled) /* its container may have been created */
			mgr_ctr_remove(mgr.nf_priv[id].ctr_name);
		slot->status = ONVM_NF_FREE;
		mgr.nf_priv[id] = MGR_NF_PRIV_INIT;
		return ret;
	}
	slot->pid = pid;
	return 0;
}

/* Start a standby for a running, launched NF configured "local". */
void
mgr_nf_launch_standby(uint16_t id)
{
	struct mgr_nf_priv *p = &mgr.nf_priv[id];
	bool container = mgr.cfg.nfs[p->cfg_index].ctr.enabled;
	pid_t pid = spawn_nf(p->cfg_index, id, true, p->sb_ctr_name, sizeof(p->sb_ctr_name),
			     &p->sb_ctr_ns_pid);

	MGR_ASSERT_CTL_LOCKED();
	if (pid < 0) {
		p->sb_ctr_name[0] = '\0';
		p->sb_ctr_ns_pid = 0;
		mgr_nf_standby_failed(id, container ? "its container could not be started"
						    : "could not be started",
				      mgr_now_ns());
		return;
	}
	if (mgr_nf_watch_standby(id, pid, -1) < 0) {
		unwatched_child_kill(pid);
		if (container)
			mgr_ctr_remove(p->sb_ctr_name);
		p->sb_ctr_name[0] = '\0';
		p->sb_ctr_ns_pid = 0;
		mgr_nf_standby_failed(id, "could not be watched", mgr_now_ns());
		return;
	}
	/* A container standby is published when it registers, under the pid
	 * the manager sees it as (nf_ipc.c): until then a death of the active
	 * takes the ordinary path. */
	p->sb_launcher_watched = container;
	p->sb_launch_ns = mgr_now_ns();
	p->sb_killed = false;
	if (container)
		return;
	mgr.shm->nfs[id].standby_lcore = mgr.nf_lcore[id];
	__atomic_store_n(&mgr.shm->nfs[id].standby_pid, pid, __ATOMIC_RELEASE);
}

int
mgr_nf_launch_cfg(int cfg_index)
{
	uint16_t id = 0;

	MGR_ASSERT_CTL_LOCKED();
	while (id < ONVM_MAX_NFS && mgr.shm->nfs[id].status != ONVM_NF_FREE)
		id++;
	if (id >= ONVM_MAX_NFS) {
		MGR_LOG(ERR, "no free NF slot for '%s'", mgr.cfg.nfs[cfg_index].name);
		return -ENOSPC;
	}
	return mgr_nf_launch_one(cfg_index, id);
}

int
mgr_nf_launch_all(void)
{
	uint16_t next = 0;
	int ret = 0;

	mgr_ctl_lock();

	for (int i = 0; i < mgr.cfg.nnfs; i++) {
		for (uint16_t k = 0; k < mgr.cfg.nfs[i].instances; k++) {
			while (next < ONVM_MAX_NFS && mgr.shm->nfs[next].status != ONVM_NF_FREE)
				next++;
			if (next >= ONVM_MAX_NFS) {
				MGR_LOG(ERR, "no free NF slot for '%s'", mgr.cfg.nfs[i].name);
				ret = -ENOSPC;
				goto out;
			}
			ret = mgr_nf_launch_one(i, next);
			/* A container NF that cannot start is logged and counted;
			 * the node serves its other chains. */
			if (ret < 0 && mgr.cfg.nfs[i].ctr.enabled) {
				mgr.nf_container_failures++;
				ret = 0;
				continue;
			}
			if (ret < 0)
				goto out;
		}
	}
out:
	mgr_ctl_unlock();
	return ret;
}
