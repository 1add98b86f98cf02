/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * nf_reaper.c -- reaping exited NFs off the control thread.
 *
 * Reaping a child (waitid() without WNOWAIT) runs the kernel's
 * release_task() in the caller, which invalidates the child's /proc
 * dentries; on Linux 6.18 a chaos run measured that busy-looping in
 * shrink_dcache_parent() for over a minute.  Done by the control thread
 * under ctl_lock, it held NF registration, hand-over and standby launches
 * for as long.  So the control thread only reads an exit status (WNOWAIT:
 * no release) and passes the pidfd to this thread, which reaps and closes
 * it.  Meanwhile the zombie keeps its pid from being reused.
 *
 * A pidfd of a process that is not our child (started by hand) comes here
 * too: waitid() says ECHILD at once.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rte_lcore.h>
#include <rte_version.h>

#include "nf_ctl.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

static int reap_pipe[2] = {-1, -1};
static bool reaper_running;
/* ONVM_MGR_FAULT=reap_delay:MS -- a test makes every reap that slow. */
static unsigned int reap_delay_ms;

static void
reap_and_close(int pidfd)
{
	siginfo_t si;

	if (reap_delay_ms != 0) {
		struct timespec ts = {.tv_sec = reap_delay_ms / 1000,
				      .tv_nsec = (long)(reap_delay_ms % 1000) * 1000000};

		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
	/* It has exited (its pidfd fired): this does not wait for long. */
	while (syscall(SYS_waitid, P_PIDFD, pidfd, &si, WEXITED, NULL) < 0 && errno == EINTR)
		;
	close(pidfd);
}

static void *
reaper_main(void *arg)
{
	int fd;

	(void)arg;
	while (read(reap_pipe[0], &fd, sizeof(fd)) == (ssize_t)sizeof(fd) && fd >= 0)
		reap_and_close(fd);
	return NULL;
}

#if RTE_VERSION >= RTE_VERSION_NUM(23, 11, 0, 0)
static uint32_t
reaper_thread_main(void *arg)
{
	reaper_main(arg);
	return 0;
}
#endif

int
mgr_nf_reaper_start(void)
{
	const char *fault = getenv("ONVM_MGR_FAULT");
	int ret;

	if (fault != NULL && sscanf(fault, "reap_delay:%u", &reap_delay_ms) == 1)
		MGR_LOG(WARNING, "fault injection: every reap of an NF takes %u ms",
			reap_delay_ms);
	if (pipe2(reap_pipe, O_CLOEXEC) < 0) {
		MGR_LOG(ERR, "reaper pipe: %s", strerror(errno));
		return -errno;
	}
	/* A control thread (off the data lcores' CPUs), detached: nobody
	 * waits for a reap stuck in the kernel. */
#if RTE_VERSION >= RTE_VERSION_NUM(23, 11, 0, 0)
	rte_thread_t reaper;

	ret = rte_thread_create_control(&reaper, "onvm-reap", reaper_thread_main, NULL);
	if (ret == 0)
		rte_thread_detach(reaper);
#else
	pthread_t reaper;

	ret = rte_ctrl_thread_create(&reaper, "onvm-reap", NULL, reaper_main, NULL);
	if (ret == 0)
		pthread_detach(reaper);
#endif
	if (ret != 0) {
		MGR_LOG(ERR, "cannot start the reaper thread: %s", strerror(ret < 0 ? -ret : ret));
		return -1;
	}
	reaper_running = true;
	return 0;
}

void
mgr_nf_reap(int pidfd)
{
	/* The pipe holds thousands of fds; should it be full, reap here. */
	if (!reaper_running || write(reap_pipe[1], &pidfd, sizeof(pidfd)) != (ssize_t)sizeof(pidfd))
		reap_and_close(pidfd);
}

/* After the control thread has stopped: the thread ends once the reaps
 * queued before it are done (or with the process). */
void
mgr_nf_reaper_stop(void)
{
	const int stop = -1;

	if (!reaper_running)
		return;
	reaper_running = false;
	if (write(reap_pipe[1], &stop, sizeof(stop)) != (ssize_t)sizeof(stop))
		MGR_LOG(DEBUG, "reaper stop: %s", strerror(errno));
}
