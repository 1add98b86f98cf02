/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * mp_register_probe -- sends the manager registration requests libnf never
 * would, to check that each is refused with its reason and costs the manager
 * nothing (no slot, no descriptor kept).  A DPDK secondary of the node:
 *
 *   mp_register_probe EAL-ARGS -- CASE...
 *
 * CASE is one of
 *   nofd      a well-formed request without a pidfd
 *   notpidfd  a descriptor that is not a pidfd (/dev/null)
 *   twofds    a pidfd of this process and a second descriptor
 *   badsize   a request one byte short, with a pidfd
 *   exited    a pidfd of a child that has exited and been reaped
 *   zombie    a pidfd of a child that has exited, not yet reaped (the
 *             kernel still reports its pid), claiming the child's pid
 *   other     a pidfd of a live child, claiming this process's pid
 * and prints "CASE RESULT REASON" per case.  Exit status 0 if every case got
 * an answer, whatever it said (the test judges the answers), 1 otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_lcore.h>
#include <rte_string_fns.h>

#include "onvm_common.h"

static int
pidfd_of(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

/* A pidfd whose process has exited; reaped, or left a zombie.  `*pid`: the
 * child's pid. */
static int
exited_pidfd(bool reap, pid_t *pid)
{
	pid_t child = fork();
	siginfo_t si;
	int fd;

	if (child < 0)
		return -1;
	if (child == 0)
		_exit(0);
	fd = pidfd_of(child);
	waitid(P_PID, child, &si, WEXITED | (reap ? 0 : WNOWAIT));
	*pid = child;
	return fd;
}

static int
probe(const char *what)
{
	struct onvm_mp_register_req req = {
		.shm_version = ONVM_SHM_VERSION,
		.shm_layout = ONVM_SHM_LAYOUT,
		.pid = getpid(),
		.service_id = 5,
		.instance_id = -1,
		.lcore_id = rte_lcore_id(),
	};
	struct onvm_mp_register_rep rep = {0};
	struct timespec ts = {.tv_sec = 5};
	struct rte_mp_reply reply = {0};
	struct rte_mp_msg msg = {0};
	pid_t other = 0, child = 0;
	int ret = 0;

	if (strcmp(what, "zombie") == 0) {
		msg.fds[msg.num_fds++] = exited_pidfd(false, &child);
		req.pid = child;
	} else if (strcmp(what, "other") == 0) {
		other = fork();
		if (other == 0) {
			pause();
			_exit(0);
		}
		msg.fds[msg.num_fds++] = other > 0 ? pidfd_of(other) : -1;
	}
	strlcpy(req.name, "probe", sizeof(req.name));
	strlcpy(msg.name, ONVM_MP_NF_REGISTER, sizeof(msg.name));
	memcpy(msg.param, &req, sizeof(req));
	msg.len_param = sizeof(req);
	if (strcmp(what, "notpidfd") == 0) {
		msg.fds[msg.num_fds++] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	} else if (strcmp(what, "twofds") == 0) {
		msg.fds[msg.num_fds++] = pidfd_of(getpid());
		msg.fds[msg.num_fds++] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	} else if (strcmp(what, "badsize") == 0) {
		msg.fds[msg.num_fds++] = pidfd_of(getpid());
		msg.len_param = sizeof(req) - 1;
	} else if (strcmp(what, "exited") == 0) {
		msg.fds[msg.num_fds++] = exited_pidfd(true, &child);
	} else if (strcmp(what, "nofd") != 0 && strcmp(what, "zombie") != 0 &&
		   strcmp(what, "other") != 0) {
		fprintf(stderr, "unknown case %s\n", what);
		return -1;
	}
	for (int i = 0; i < msg.num_fds; i++)
		if (msg.fds[i] < 0) {
			fprintf(stderr, "%s: cannot open a descriptor: %s\n", what, strerror(errno));
			return -1;
		}
	if (rte_mp_request_sync(&msg, &reply, &ts) != 0 || reply.nb_received != 1) {
		fprintf(stderr, "%s: no answer\n", what);
		ret = -1;
	} else {
		memcpy(&rep, reply.msgs[0].param,
		       RTE_MIN(sizeof(rep), (size_t)reply.msgs[0].len_param));
		rep.reason[sizeof(rep.reason) - 1] = '\0';
		printf("%s %d %s\n", what, rep.result, rep.reason);
		fflush(stdout);
	}
	for (int i = 0; i < msg.num_fds; i++)
		close(msg.fds[i]);
	free(reply.msgs);
	if (other > 0) {
		kill(other, SIGKILL);
		waitpid(other, NULL, 0);
	}
	if (strcmp(what, "zombie") == 0)
		waitpid(child, NULL, 0);
	return ret;
}

int
main(int argc, char **argv)
{
	int n = rte_eal_init(argc, argv), ret = 0;

	if (n < 0) {
		fprintf(stderr, "EAL init failed\n");
		return 1;
	}
	for (int i = n + 1; i < argc; i++)
		if (probe(argv[i]) < 0)
			ret = 1;
	rte_eal_cleanup();
	return ret;
}
