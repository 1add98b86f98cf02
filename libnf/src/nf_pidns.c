/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * nf_pidns.c -- an NF started as the init of a container's pid namespace.
 *
 * DPDK names a secondary process's private copies of the memseg arrays after
 * its pid (RUNTIME_DIR/fbarray_memseg-..._PID, locked while it lives).  Two
 * NFs in containers of their own are both pid 1 in their namespaces and
 * share the node's runtime directory: the second could not start.  So the
 * manager gives each container NF a pid to take in its namespace
 * (ONVM_NF_NS_PID, distinct among the node's live NFs, nf_container.c).
 * libnf, started as pid 1, forks short-lived children until the kernel hands
 * out that pid (pids in a namespace are given in order), runs the NF there,
 * and stays as a minimal init: it passes the signals the runtime sends on to
 * the NF, reaps, and exits as the NF did (128 + signal if it was killed).
 *
 * The container's cpuset holds the CPUs of both roles (a standby moves to
 * its active's when it promotes), and the runtime puts the NF on all of
 * them: ONVM_NF_CPUS names its role's, set here before EAL starts (EAL puts
 * its control threads on the start-up CPUs its lcores leave free).
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "onvm_cpuset.h"

#include "nf_private.h"

#define NS_PID_MAX 32768 /* forks to get there: bounded */

static int
exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/* pid 1 from here on: pass signals on to `nf`, exit when it does. */
static void __attribute__((noreturn))
run_init(pid_t nf, const sigset_t *all)
{
	prctl(PR_SET_NAME, "onvm-nf-init");
	for (;;) {
		siginfo_t si;
		int sig = sigwaitinfo(all, &si), status;
		pid_t w;

		if (sig < 0)
			continue; /* EINTR */
		if (sig != SIGCHLD) {
			kill(nf, sig);
			continue;
		}
		while ((w = waitpid(-1, &status, WNOHANG)) > 0)
			if (w == nf)
				_exit(exit_code(status));
	}
}

/* The kernel's largest pid + 1 (pids of a namespace wrap below it). */
static long
pid_max(void)
{
	FILE *f = fopen("/proc/sys/kernel/pid_max", "r");
	long v = 32768;

	if (f != NULL) {
		if (fscanf(f, "%ld", &v) != 1)
			v = 32768;
		fclose(f);
	}
	return v;
}

static void
role_cpus(void)
{
	const char *list = getenv("ONVM_NF_CPUS");
	cpu_set_t set;

	if (list == NULL)
		return;
	if (onvm_cpulist_parse(list, &set) < 0)
		fprintf(stderr, "libnf: ONVM_NF_CPUS=%s is not a CPU list\n", list);
	else if (sched_setaffinity(0, sizeof(set), &set) < 0)
		fprintf(stderr, "libnf: ONVM_NF_CPUS=%s: cannot run there: %s\n", list,
			strerror(errno));
}

void
nfl_pidns_init(void)
{
	const char *want = getenv("ONVM_NF_NS_PID");
	sigset_t all, old;
	char *end;
	long target;

	role_cpus();
	if (want == NULL)
		return;
	if (getpid() != 1) {
		/* an init of the runtime's, or a shared namespace: the
		 * manager refuses a registration from another pid */
		fprintf(stderr, "libnf: ONVM_NF_NS_PID=%s, but this is pid %d, not 1 of its "
				"namespace\n",
			want, (int)getpid());
		return;
	}
	target = strtol(want, &end, 10);
	/* As pid 1 the NF would clash with other container NFs: it stops. */
	if (*want == '\0' || *end != '\0' || target < 2 || target > NS_PID_MAX ||
	    target >= pid_max()) {
		fprintf(stderr, "libnf: ONVM_NF_NS_PID=%s is not a pid in 2..%d below pid_max\n",
			want, NS_PID_MAX);
		exit(1);
	}
	/* Blocked before the first fork: no signal is lost between the NF's
	 * fork and the init's sigwaitinfo(); the NF restores its mask. */
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	for (;;) {
		pid_t child = fork();

		if (child < 0) {
			fprintf(stderr, "libnf: fork toward pid %ld: %s\n", target, strerror(errno));
			exit(1);
		}
		if (child == 0) {
			if (getpid() < target)
				_exit(0);
			sigprocmask(SIG_SETMASK, &old, NULL);
			/* Past it: another process took pids here; the manager
			 * refuses a registration from any other pid. */
			if (getpid() != target)
				fprintf(stderr, "libnf: pid %d in this namespace, not %ld\n",
					(int)getpid(), target);
			return;
		}
		if (child >= target)
			run_init(child, &all);
		while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
			;
	}
}
