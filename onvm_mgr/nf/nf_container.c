/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * nf_container.c -- NFs in containers: the runtime's command line, and the
 * removal of a node's containers.
 *
 * A container NF is launched as `RUNTIME run --rm ... IMAGE PATH EAL-ARGS`:
 * the manager's child is the runtime's CLI, not the NF.  The NF itself is a
 * DPDK secondary like any other: it registers over the node's rte_mp socket
 * with a pidfd of itself, from which the manager learns its pid in the
 * manager's namespace (nf_ipc.c); from then on that pidfd is the NF's watch
 * and the CLI's is only reaped (nf_reap.c).  Until then the CLI's exit is the
 * NF's failure to start, with the runtime's exit status as the reason.
 *
 * What the container gets is what a DPDK secondary of this node needs and
 * nothing more: the node's runtime directory (config, memseg files, the
 * rte_mp socket), the directories of its hugepage files and of the state
 * pool, its CPUs, CAP_SYS_NICE (a standby parks at real-time priority), no
 * network; the operator's volumes and arguments on top.  What that does and
 * does not isolate: docs/operator-guide.md, "NFs in containers".
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rte_memory.h>
#include <rte_string_fns.h>

#include "nf_ctl.h"

#define CTR_MAX_HUGE_DIRS 4
#define CTR_LABEL	  "org.reinforce-nfv.node"

/* Container NFs' pids in their namespaces: from here, one per live NF. */
#define CTR_NS_PID_BASE 400

static char huge_dirs[CTR_MAX_HUGE_DIRS][PATH_MAX];
static int n_huge_dirs = -1; /* -1: not looked up yet */
static uint32_t ctr_seq;

static void
add_dir_of(const char *file)
{
	char dir[PATH_MAX];
	char *slash;

	if (rte_strscpy(dir, file, sizeof(dir)) < 0 || (slash = strrchr(dir, '/')) == NULL ||
	    slash == dir)
		return;
	*slash = '\0';
	for (int i = 0; i < n_huge_dirs; i++)
		if (strcmp(huge_dirs[i], dir) == 0)
			return;
	if (n_huge_dirs < CTR_MAX_HUGE_DIRS)
		rte_strscpy(huge_dirs[n_huge_dirs++], dir, PATH_MAX);
}

/* rte_memseg_walk(): the directory of each segment's hugepage file. */
static int
note_memseg_dir(const struct rte_memseg_list *msl, const struct rte_memseg *ms, void *arg)
{
	char link[64], file[PATH_MAX];
	ssize_t n;
	int fd;

	(void)msl;
	(void)arg;
	fd = rte_memseg_get_fd_thread_unsafe(ms);
	if (fd < 0)
		return 0;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, file, sizeof(file) - 1);
	if (n > 0) {
		file[n] = '\0';
		add_dir_of(file);
	}
	return n_huge_dirs >= CTR_MAX_HUGE_DIRS;
}

/* Where this node's hugepage files are: EAL's segments and the state pool. */
static void
find_huge_dirs(void)
{
	if (n_huge_dirs >= 0)
		return;
	n_huge_dirs = 0;
	rte_memseg_walk(note_memseg_dir, NULL);
	if (mgr.shm->state_seg_path[0] != '\0')
		add_dir_of(mgr.shm->state_seg_path);
}

/* Whether a container NF of the node has (or is to take) pid `pid` in its
 * namespace. */
bool
mgr_ctr_ns_pid_taken(pid_t pid)
{
	for (int i = 0; i < ONVM_MAX_NFS; i++)
		if (mgr.nf_priv[i].ctr_ns_pid == pid || mgr.nf_priv[i].sb_ctr_ns_pid == pid)
			return true;
	return false;
}

/* A pid for a new container NF to take in its namespace (nf_pidns.c).  DPDK
 * names a secondary's private memseg files after its pid, in the runtime
 * directory all the node's NFs share: none of them may have it -- neither
 * another container NF nor an NF process, whose pid is the host's (pids
 * wrap: pid_max is 32768 on many hosts).  The other way round, a process NF
 * forked with a taken pid is forked again (nf_launch.c). */
static pid_t
free_ns_pid(void)
{
	for (pid_t cand = CTR_NS_PID_BASE;; cand++) {
		bool used = mgr_ctr_ns_pid_taken(cand);

		for (int i = 0; i < ONVM_MAX_NFS && !used; i++)
			used = mgr.shm->nfs[i].pid == cand || mgr.shm->nfs[i].standby_pid == cand ||
			       mgr.nf_priv[i].sb_pid == cand;
		if (!used)
			return cand;
	}
}

/* The manager's telemetry socket in the runtime directory, if it has one. */
static bool
telemetry_socket(char *path, size_t len)
{
	struct stat st;

	return (size_t)snprintf(path, len, "%s/dpdk_telemetry.v2", mgr.runtime_dir) < len &&
	       stat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

/* `cmd` as execv() takes it: itself if it has a '/', else found in PATH. */
int
mgr_ctr_resolve_command(const char *cmd, char *out, size_t len)
{
	const char *path = getenv("PATH");

	if (strchr(cmd, '/') != NULL) {
		if (rte_strscpy(out, cmd, len) < 0)
			return -ENAMETOOLONG;
		return access(out, X_OK) == 0 ? 0 : -errno;
	}
	if (path == NULL || *path == '\0')
		path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
	while (*path != '\0') {
		const char *end = strchrnul(path, ':');
		int w = snprintf(out, len, "%.*s/%s", (int)(end - path), path, cmd);

		if (w > 0 && (size_t)w < len && end != path && access(out, X_OK) == 0)
			return 0;
		path = *end == ':' ? end + 1 : end;
	}
	return -ENOENT;
}

/*
 * The runtime's part of a container NF's command line, into argv[0..]: up to
 * and including the NF's path in the image (the caller appends the EAL and
 * NF arguments).  Strings live in `buf` (static in the caller: the control
 * thread, ctl_lock held).  The container's name goes to `name`, the pid the
 * NF is to take in it to `ns_pid`.  Returns the
 * number of arguments, or -errno (logged).
 */
int
mgr_ctr_run_argv(const struct mgr_nf_cfg *nc, uint16_t id, bool standby, const char *cpus,
		 const char *role_cpus, struct mgr_ctr_argbuf *buf, char **argv, int max,
		 char *name, size_t name_len, pid_t *ns_pid)
{
	const struct mgr_containers_cfg *cc = &mgr.cfg.containers;
	const struct mgr_nf_container_cfg *ctr = &nc->ctr;
	int a = 0, s = 0;

	MGR_ASSERT_CTL_LOCKED();
/* A string kept in buf for argv (printf-style). */
#define ARG_FMT(...)                                                                         \
	do {                                                                                 \
		if (a >= max || s >= MGR_CTR_MAX_STRS ||                                     \
		    snprintf(buf->s[s], sizeof(buf->s[s]), __VA_ARGS__) >=                   \
			    (int)sizeof(buf->s[s]))                                          \
			goto too_long;                                                       \
		argv[a++] = buf->s[s++];                                                     \
	} while (0)
#define ARG(str)                                                                             \
	do {                                                                                 \
		if (a >= max)                                                                \
			goto too_long;                                                       \
		argv[a++] = (char *)(str);                                                   \
	} while (0)

	find_huge_dirs();
	if (mgr_ctr_resolve_command(cc->command, buf->command, sizeof(buf->command)) < 0) {
		NFCTL_LOG(ERR, "NF '%s': container runtime '%s' not found (containers.command; "
			       "install podman, or name the runtime's CLI)",
			  nc->name, cc->command);
		return -ENOENT;
	}
	/* The manager's pid too: a leftover of an earlier run may still be
	 * being removed under the same prefix. */
	if ((size_t)snprintf(name, name_len, "onvm-%s-%u%c-%d.%u", mgr.file_prefix, id,
			     standby ? 's' : 'a', (int)getpid(), ++ctr_seq) >= name_len)
		goto too_long;
	ARG(buf->command);
	ARG("run");
	ARG("--rm");
	ARG_FMT("--name=%s", name);
	ARG_FMT("--label=" CTR_LABEL "=%s", mgr.file_prefix);
	/* No registry here or on many NFV hosts: a missing image is an error
	 * now, not a pull that hangs the start for minutes. */
	ARG("--pull=never");
	ARG("--network=none");
	/* What containers.conf may default otherwise: libnf must be pid 1 of
	 * a namespace of its own (nf_pidns.c). */
	ARG("--init=false");
	ARG("--pid=private");
	ARG_FMT("--cpuset-cpus=%s", cpus);
	*ns_pid = free_ns_pid();
	ARG_FMT("--env=ONVM_NF_NS_PID=%d", (int)*ns_pid);
	ARG_FMT("--env=ONVM_NF_CPUS=%s", role_cpus); /* its role's, within the cpuset */
	ARG("--cap-add=SYS_NICE");
	if (cc->runtime[0] != '\0')
		ARG_FMT("--runtime=%s", cc->runtime);
	for (int i = 0; i < cc->nulimits; i++)
		ARG_FMT("--ulimit=%s", cc->ulimits[i]);
	ARG_FMT("--volume=%s:%s", mgr.runtime_dir, mgr.runtime_dir);
	/* ... but not the manager's telemetry socket there: its commands
	 * control the node (a failover, a BFD session down). */
	if (telemetry_socket(buf->telemetry, sizeof(buf->telemetry)))
		ARG_FMT("--volume=/dev/null:%s:ro", buf->telemetry);
	for (int i = 0; i < n_huge_dirs; i++)
		ARG_FMT("--volume=%s:%s", huge_dirs[i], huge_dirs[i]);
	for (int i = 0; i < ctr->nvolumes; i++)
		ARG_FMT("--volume=%s", ctr->volumes[i]);
	for (int i = 0; i < cc->nargs; i++)
		ARG(cc->args[i]);
	for (int i = 0; i < ctr->nargs; i++)
		ARG(ctr->args[i]);
	ARG(ctr->image);
	ARG(ctr->path);
	return a;
too_long:
	NFCTL_LOG(ERR, "NF '%s': the container's command line does not fit (%d arguments)",
		  nc->name, max);
	return -E2BIG;
#undef ARG
#undef ARG_FMT
}

/* Why a container NF's runtime CLI exited before the NF registered. */
const char *
mgr_ctr_exit_reason(int status)
{
	switch (status) {
	case 125:
		return "the container runtime failed (image not present locally? see its "
		       "message above; scripts/nf-image.sh builds the NF image)";
	case 126:
		return "the NF binary in the image cannot be run (container.path)";
	case 127:
		return "no such binary in the image (container.path)";
	default:
		return "the NF exited";
	}
}

/* fork/exec `argv` with no descriptors of ours and stdout/err to ours; the
 * pid, or -errno. */
static pid_t
run_detached(char *const argv[])
{
	int max_fd = (int)sysconf(_SC_OPEN_MAX);
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);

		if (null >= 0)
			dup2(null, STDIN_FILENO);
		mgr_child_close_fds(max_fd);
		setpgid(0, 0);
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

/*
 * Remove container `name` (stopped at once), without waiting: for a launch
 * whose NF never registered (its CLI may be gone, the container not) and a
 * standby killed before it registered.  The child is reaped by the reaper
 * thread.  Control thread, ctl_lock held.
 */
void
mgr_ctr_remove(const char *name)
{
	char cmd[PATH_MAX], nm[96];
	char *argv[] = {cmd, "rm", "--force", "--ignore", "--time=0", nm, NULL};
	pid_t pid;
	int fd;

	MGR_ASSERT_CTL_LOCKED();
	if (name[0] == '\0' ||
	    mgr_ctr_resolve_command(mgr.cfg.containers.command, cmd, sizeof(cmd)) < 0)
		return;
	rte_strscpy(nm, name, sizeof(nm));
	pid = run_detached(argv);
	if (pid < 0) {
		NFCTL_LOG(ERR, "cannot remove container %s: %s", name, strerror(-pid));
		return;
	}
	fd = mgr_nf_pidfd_open(pid);
	if (fd >= 0)
		mgr_nf_reap_later(fd);
	else /* out of descriptors: a zombie until it is reaped at the manager's exit */
		NFCTL_LOG(WARNING, "cannot watch pid %d (removing container %s): %s", pid, name,
			  strerror(errno));
	NFCTL_LOG(INFO, "removing container %s (pid %d)", name, pid);
}

/*
 * Remove every container labelled as this node's and wait (at most
 * `timeout_ms`): at start-up (before EAL), what a manager of the same file
 * prefix left when it was killed; at shutdown, anything still there.  Only
 * when the configuration has container NFs.  Main thread.
 */
void
mgr_ctr_remove_node(unsigned int timeout_ms, const char *when)
{
	char cmd[PATH_MAX], filter[160];
	char *argv[] = {cmd, "rm", "--force", "--time=0", filter, NULL};
	struct timespec nap = {.tv_nsec = 10 * 1000 * 1000};
	uint64_t waited_ms = 0;
	bool any = false;
	int status = 0;
	pid_t pid, w;

	for (int i = 0; i < mgr.cfg.nnfs; i++)
		any |= mgr.cfg.nfs[i].ctr.enabled;
	if (!any || mgr_ctr_resolve_command(mgr.cfg.containers.command, cmd, sizeof(cmd)) < 0)
		return;
	snprintf(filter, sizeof(filter), "--filter=label=" CTR_LABEL "=%s", mgr.file_prefix);
	pid = run_detached(argv);
	if (pid < 0)
		return;
	while ((w = waitpid(pid, &status, WNOHANG)) == 0 || (w < 0 && errno == EINTR)) {
		if (waited_ms >= timeout_ms) {
			/* Stopped: left running it could remove this run's
			 * containers, labelled alike. */
			MGR_LOG(WARNING, "%s: '%s rm' of the node's containers still running after "
					 "%u ms: killed",
				when, cmd, timeout_ms);
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			return;
		}
		nanosleep(&nap, NULL);
		waited_ms += 10;
	}
	if (w < 0)
		MGR_LOG(WARNING, "%s: waiting for '%s rm': %s", when, cmd, strerror(errno));
	else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		MGR_LOG(WARNING, "%s: '%s rm --filter' of the node's containers failed (status "
				 "%d)",
			when, cmd, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}
