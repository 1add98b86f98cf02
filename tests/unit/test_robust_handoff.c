/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * onvm_robust.h: a live holder hands its robust mutex over "as dead" (libnf's
 * crash hand-over).  Real processes: a holder, a waiter blocked in
 * pthread_mutex_lock, the parent watching.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "onvm_robust.h"

struct shared {
	pthread_mutex_t m; /* the liveness lock */
	pthread_mutex_t x; /* another robust mutex the holder took first */
	volatile int holder_ready;
	volatile int waiter_parked;
	volatile int waiter_result;
	volatile int waiter_has_m;
	volatile int release_result;
};

static void
init_robust(pthread_mutex_t *m)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(m, &a);
	pthread_mutexattr_destroy(&a);
}

static struct shared *
new_shared(void)
{
	struct shared *s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	assert_true(s != MAP_FAILED);
	memset(s, 0, sizeof(*s));
	init_robust(&s->m);
	init_robust(&s->x);
	s->waiter_result = -1;
	return s;
}

/* Blocks on m; records what the lock returned; holds m for a while. */
static pid_t
start_waiter(struct shared *s)
{
	pid_t p = fork();

	if (p == 0) {
		int r;

		s->waiter_parked = 1;
		r = pthread_mutex_lock(&s->m);
		if (r == EOWNERDEAD)
			pthread_mutex_consistent(&s->m);
		s->waiter_result = r;
		s->waiter_has_m = 1;
		usleep(300 * 1000);
		_exit(0);
	}
	return p;
}

enum holder_mode {
	HAND_OVER,	   /* the whole hand-over, then wait for the waiter, exit */
	HAND_OVER_X,	   /* the same, holding x (taken before m) too */
	DIE_AFTER_DETACH,  /* detached m, killed before the owner-died store */
};

/* Holds x (if asked) then m; once the waiter sleeps on m, hands m over as
 * dead (or dies half-way) and exits still holding x. */
static pid_t
start_holder(struct shared *s, enum holder_mode mode)
{
	pid_t p = fork();

	if (p == 0) {
		uint32_t tid = (uint32_t)syscall(SYS_gettid);
		struct timespec t0, t;

		if (mode == HAND_OVER_X)
			pthread_mutex_lock(&s->x);
		pthread_mutex_lock(&s->m);
		s->holder_ready = 1;
		while (!s->waiter_parked)
			usleep(1000);
		usleep(50 * 1000); /* asleep in the kernel by now */
		if (mode == DIE_AFTER_DETACH) {
			onvm_robust_detach(&s->m);
			syscall(SYS_exit_group, 9); /* as a SIGKILL there would */
		}
		s->release_result = onvm_robust_release_dead(&s->m, tid);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		do {
			usleep(1000);
			clock_gettime(CLOCK_MONOTONIC, &t);
		} while (!s->waiter_has_m && t.tv_sec - t0.tv_sec < 5);
		_exit(0);
	}
	return p;
}

/* The holder hands m over (as `mode` says) to a waiter blocked on it and
 * exits once the waiter has m, or after 5 s; the waiter gets up to 2 s more,
 * then goes too (one never woken would sleep for ever).  What each saw is
 * in `s`. */
static void
hand_over(struct shared *s, enum holder_mode mode)
{
	pid_t h = start_holder(s, mode), w;
	int st;

	while (!s->holder_ready)
		usleep(1000);
	w = start_waiter(s);
	waitpid(h, &st, 0);
	for (int i = 0; i < 2000 && !s->waiter_has_m; i++)
		usleep(1000);
	kill(w, SIGKILL);
	waitpid(w, &st, 0);
}

static void
test_handoff_gives_the_waiter_eownerdead_at_once(void **state)
{
	struct shared *s = new_shared();

	(void)state;
	hand_over(s, HAND_OVER);
	assert_int_equal(s->release_result, ONVM_ROBUST_RELEASED_WOKE);
	/* Woken by the hand-over, while the holder still lived (it waits for
	 * waiter_has_m before it exits). */
	assert_int_equal(s->waiter_has_m, 1);
	assert_int_equal(s->waiter_result, EOWNERDEAD);
	munmap(s, sizeof(*s));
}

/* The holder's other robust mutexes are still released by the kernel when it
 * exits: the hand-over took m out of its robust list before the waiter linked
 * m into its own (without that, the kernel's walk followed m's links into the
 * waiter's list and never reached x: x stayed locked by a dead thread). */
static void
test_other_robust_mutexes_of_the_holder_still_die_with_it(void **state)
{
	struct shared *s = new_shared();
	struct timespec ts;
	int r;

	(void)state;
	hand_over(s, HAND_OVER_X);
	assert_int_equal(s->waiter_result, EOWNERDEAD);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 2;
	r = pthread_mutex_timedlock(&s->x, &ts);
	assert_int_equal(r, EOWNERDEAD);
	pthread_mutex_consistent(&s->x);
	pthread_mutex_unlock(&s->x);
	munmap(s, sizeof(*s));
}

/* Killed between the two steps (a sibling thread's crash, a SIGKILL): the
 * kernel still releases m through list_op_pending (without it, m was in no
 * list the kernel walks, and its word named a dead thread for ever). */
static void
test_a_holder_killed_half_way_still_releases_the_mutex(void **state)
{
	struct shared *s = new_shared();

	(void)state;
	hand_over(s, DIE_AFTER_DETACH);
	assert_int_equal(s->waiter_has_m, 1);
	assert_int_equal(s->waiter_result, EOWNERDEAD);
	munmap(s, sizeof(*s));
}

static void
test_a_mutex_not_held_is_left_alone(void **state)
{
	struct shared *s = new_shared();

	(void)state;
	assert_int_equal(onvm_robust_release_dead(&s->m, (uint32_t)syscall(SYS_gettid)),
			 ONVM_ROBUST_NOT_OURS);
	assert_int_equal(onvm_robust_owner(&s->m), 0);
	assert_int_equal(pthread_mutex_lock(&s->m), 0);
	/* Held, but by us and with nobody waiting: owner-died, no wake. */
	assert_int_equal(onvm_robust_release_dead(&s->m, (uint32_t)syscall(SYS_gettid)),
			 ONVM_ROBUST_RELEASED);
	assert_int_equal(onvm_robust_owner(&s->m), 0);
	assert_int_equal(pthread_mutex_lock(&s->m), EOWNERDEAD);
	pthread_mutex_consistent(&s->m);
	pthread_mutex_unlock(&s->m);
	munmap(s, sizeof(*s));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_handoff_gives_the_waiter_eownerdead_at_once),
		cmocka_unit_test(test_other_robust_mutexes_of_the_holder_still_die_with_it),
		cmocka_unit_test(test_a_holder_killed_half_way_still_releases_the_mutex),
		cmocka_unit_test(test_a_mutex_not_held_is_left_alone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
