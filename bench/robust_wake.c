/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * robust_wake -- the kernel's floor for local failover on this host: how soon
 * after SIGKILL a process blocked on a robust mutex held by the killed one
 * gets EOWNERDEAD, and how soon a pidfd of the killed one becomes readable.
 * No DPDK: a plain holder (optionally with hugetlbfs memory mapped) and a
 * plain waiter, each on its own CPU.
 *
 *   robust_wake ITERATIONS HUGE_MB [HOLDER_CPU WAITER_CPU]
 *
 * Prints one CSV line per kill: iteration,mutex_wake_us,pidfd_us
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
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

struct shared {
	pthread_mutex_t lock;
	volatile int held;
	volatile int waiting;
	volatile unsigned long long woke_ns;
};

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

static void
holder(struct shared *s, long huge_mb, int cpu)
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
	for (;;)
		pause();
}

static void
waiter(struct shared *s, int cpu)
{
	int r;

	pin(cpu);
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
	long huge_mb;

	if (argc != 3 && argc != 5) {
		fprintf(stderr, "usage: robust_wake ITERATIONS HUGE_MB [HOLDER_CPU WAITER_CPU]\n");
		return 2;
	}
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
		s->woke_ns = 0;
		h = fork();
		if (h == 0)
			holder(s, huge_mb, hcpu);
		while (!s->held)
			usleep(100);
		w = fork();
		if (w == 0)
			waiter(s, wcpu);
		while (!s->waiting)
			usleep(100);
		usleep(20000); /* the waiter is asleep in the kernel by now */
		p.fd = (int)syscall(SYS_pidfd_open, h, 0);
		t0 = now_ns();
		kill(h, SIGKILL);
		poll(&p, 1, -1);
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
