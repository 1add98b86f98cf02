/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * robust_wake -- the kernel's floor for local failover on this host: how soon
 * after SIGKILL a process blocked on a robust mutex held by the killed one
 * gets EOWNERDEAD, and how soon a pidfd of the killed one becomes readable.
 * No DPDK: a plain holder (optionally with hugetlbfs memory mapped) and a
 * plain waiter.
 *
 *   robust_wake ITERATIONS HUGE_MB [HOLDER_CPU WAITER_CPU [MODE]]
 *
 * MODE "kill" (default): the holder sleeps, this process SIGKILLs it.
 * The other two are libnf's two failover paths, the holder busy-polling for
 * 20 ms before (as an NF does: the kernel's paths are cold then, which on
 * this host costs ~25 us more per signal delivery than a warm one) and the
 * waiter blocked at SCHED_FIFO (as a standby parks):
 *   "self-kill": the holder stores the time and SIGKILLs itself;
 *   "crash":     the holder stores the time and writes through NULL; its
 *                SIGSEGV handler marks the mutex owner-died and wakes the
 *                waiter, as libnf's nf_crash.c does, then dies of it.
 * The times count from the kill (kill) or from the holder's stored time.
 *
 * Prints one CSV line per kill: iteration,mutex_wake_us,pidfd_us
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <poll.h>
#include <stdbool.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "onvm_robust.h"

struct shared {
	pthread_mutex_t lock;
	volatile int held;
	volatile int waiting;
	volatile unsigned long long woke_ns;
	volatile unsigned long long death_ns; /* self-kill, crash: the holder's time */
};

enum mode { MODE_KILL, MODE_SELF_KILL, MODE_CRASH };

static struct shared *crash_shared;

static unsigned long long
now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (unsigned long long)t.tv_sec * 1000000000ULL + (unsigned long long)t.tv_nsec;
}

static void
pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* The owner-died transition the kernel makes at exit, made by the owner in
 * its SIGSEGV handler (the floor of libnf's crash hand-over). */
static void
crash_handler(int sig)
{
	onvm_robust_release_dead(&crash_shared->lock, (uint32_t)syscall(SYS_gettid));
	signal(sig, SIG_DFL);
	raise(sig);
}

static void
holder(struct shared *s, long huge_mb, int cpu, enum mode mode)
{
	pin(cpu);
	if (huge_mb > 0) {
		char path[64];
		int fd;

		snprintf(path, sizeof(path), "/dev/hugepages/robust_wake.%d", getpid());
		fd = open(path, O_CREAT | O_RDWR, 0600);
		unlink(path);
		if (fd < 0 || ftruncate(fd, huge_mb << 20) < 0 ||
		    mmap(NULL, huge_mb << 20, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
			 0) == MAP_FAILED) {
			perror("robust_wake: hugetlbfs");
			_exit(1);
		}
	}
	pthread_mutex_lock(&s->lock);
	s->held = 1;
	if (mode == MODE_KILL)
		for (;;)
			pause();
	while (!s->waiting)
		;
	{
		/* Busy, like an NF, while the waiter goes to sleep. */
		unsigned long long until = now_ns() + 20000000ULL;
		static volatile int *volatile null_ptr;
		stack_t st = {.ss_size = 65536};

		st.ss_sp = mmap(NULL, st.ss_size, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		sigaltstack(&st, NULL);
		crash_shared = s;
		sigaction(SIGSEGV,
			  &(struct sigaction){.sa_handler = crash_handler, .sa_flags = SA_ONSTACK},
			  NULL);
		while (now_ns() < until)
			;
		s->death_ns = now_ns();
		if (mode == MODE_CRASH)
			*null_ptr = 1;
		kill(getpid(), SIGKILL);
	}
	for (;;)
		pause();
}

static void
waiter(struct shared *s, int cpu, enum mode mode)
{
	struct sched_param sp = {.sched_priority = 1};
	int r;

	pin(cpu);
	if (mode != MODE_KILL && sched_setscheduler(0, SCHED_FIFO, &sp) != 0)
		perror("robust_wake: SCHED_FIFO (the waiter stays at normal priority)");
	s->waiting = 1;
	r = pthread_mutex_lock(&s->lock);
	s->woke_ns = now_ns();
	_exit(r == EOWNERDEAD ? 0 : 1);
}

int
main(int argc, char **argv)
{
	struct shared *s;
	int iters, hcpu = -1, wcpu = -1;
	enum mode mode = MODE_KILL;
	long huge_mb;

	if (argc < 3 || argc == 4 || argc > 6) {
		fprintf(stderr, "usage: robust_wake ITERATIONS HUGE_MB [HOLDER_CPU WAITER_CPU "
				"[kill|self-kill|crash]]\n");
		return 2;
	}
	if (argc == 6)
		mode = strcmp(argv[5], "crash") == 0	   ? MODE_CRASH
		       : strcmp(argv[5], "self-kill") == 0 ? MODE_SELF_KILL
							   : MODE_KILL;
	iters = atoi(argv[1]);
	huge_mb = atol(argv[2]);
	if (argc == 5) {
		hcpu = atoi(argv[3]);
		wcpu = atoi(argv[4]);
	}
	s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (s == MAP_FAILED)
		return 1;
	printf("iteration,mutex_wake_us,pidfd_us\n");
	for (int i = 0; i < iters; i++) {
		pthread_mutexattr_t a;
		struct pollfd p = {.events = POLLIN};
		unsigned long long t0, t_pidfd;
		pid_t h, w;
		int st;

		pthread_mutexattr_init(&a);
		pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
		pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
		pthread_mutex_init(&s->lock, &a);
		s->held = s->waiting = 0;
		s->woke_ns = s->death_ns = 0;
		h = fork();
		if (h == 0)
			holder(s, huge_mb, hcpu, mode);
		while (!s->held)
			usleep(100);
		w = fork();
		if (w == 0)
			waiter(s, wcpu, mode);
		while (!s->waiting)
			usleep(100);
		p.fd = (int)syscall(SYS_pidfd_open, h, 0);
		if (mode == MODE_KILL) {
			usleep(20000); /* the waiter is asleep in the kernel by now */
			t0 = now_ns();
			kill(h, SIGKILL);
		}
		poll(&p, 1, -1);
		if (mode != MODE_KILL)
			t0 = s->death_ns;
		t_pidfd = now_ns();
		waitpid(h, NULL, 0);
		waitpid(w, &st, 0);
		close(p.fd);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "robust_wake: the waiter did not get EOWNERDEAD\n");
			return 1;
		}
		printf("%d,%.1f,%.1f\n", i, (double)(s->woke_ns - t0) / 1000.0,
		       (double)(t_pidfd - t0) / 1000.0);
	}
	return 0;
}
