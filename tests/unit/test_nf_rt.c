/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * test_nf_rt -- libnf's real-time priority and the cap the kernel enforces
 * (libnf/src/nf_rt.c): a thread that spins at SCHED_FIFO is put back to its
 * own policy by the kernel after the cap, without anyone calling anything;
 * leaving restores the policy, the limit and SIGXCPU's action; entering is
 * refused, changing nothing, where the cap cannot be set.  Needs
 * CAP_SYS_NICE (skipped without: nothing to test then).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "nf_rt.h"

#define CAP_US 20000

static uint64_t
cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void
skip_without_rt(void)
{
	struct sched_param p = {.sched_priority = 1};

	if (sched_setscheduler(0, SCHED_FIFO, &p) != 0)
		skip();
	p.sched_priority = 0;
	sched_setscheduler(0, SCHED_OTHER, &p);
}

/* A hung handler: spin at real-time priority; the kernel must cut it. */
static void
test_spinning_thread_is_cut_back_by_the_kernel(void **state)
{
	struct nfl_rt rt = {0};
	uint64_t t0;

	(void)state;
	skip_without_rt();
	assert_true(nfl_rt_enter(&rt, CAP_US));
	assert_int_equal(sched_getscheduler(0), SCHED_FIFO);
	t0 = cpu_ns();
	while (sched_getscheduler(0) == SCHED_FIFO && cpu_ns() - t0 < 2000000000ull)
		;
	assert_int_equal(sched_getscheduler(0), SCHED_OTHER);
	assert_true(nfl_rt_revoked());
	/* about the cap, counted in scheduler ticks */
	assert_true(cpu_ns() - t0 < 10ull * CAP_US * 1000);
	nfl_rt_exit(&rt);
	assert_int_equal(sched_getscheduler(0), SCHED_OTHER);
}

/* Leaving in time: own policy, own limit, SIGXCPU's action as they were. */
static void
test_leave_restores_policy_limit_and_signal(void **state)
{
	struct sigaction before, after;
	struct rlimit lim_before, lim_after;
	struct nfl_rt rt = {0};

	(void)state;
	skip_without_rt();
	sigaction(SIGXCPU, NULL, &before);
	getrlimit(RLIMIT_RTTIME, &lim_before);
	assert_true(nfl_rt_enter(&rt, CAP_US));
	nfl_rt_exit(&rt);
	assert_int_equal(sched_getscheduler(0), SCHED_OTHER);
	assert_false(nfl_rt_revoked());
	sigaction(SIGXCPU, NULL, &after);
	getrlimit(RLIMIT_RTTIME, &lim_after);
	assert_ptr_equal(after.sa_handler, before.sa_handler);
	assert_int_equal(lim_after.rlim_cur, lim_before.rlim_cur);
	assert_int_equal(lim_after.rlim_max, lim_before.rlim_max);
}

/* Entered twice (a local standby that promoted, then parks for a remote
 * takeover): still on, and one exit restores everything -- the second enter
 * must not take the real-time policy for the thread's own. */
static void
test_entering_twice_is_one_entry(void **state)
{
	struct rlimit lim_before, lim_after;
	struct nfl_rt rt = {0};

	(void)state;
	skip_without_rt();
	getrlimit(RLIMIT_RTTIME, &lim_before);
	assert_true(nfl_rt_enter(&rt, CAP_US));
	assert_true(nfl_rt_enter(&rt, CAP_US));
	assert_true(rt.on);
	nfl_rt_exit(&rt);
	assert_false(rt.on);
	assert_int_equal(sched_getscheduler(0), SCHED_OTHER);
	getrlimit(RLIMIT_RTTIME, &lim_after);
	assert_int_equal(lim_after.rlim_cur, lim_before.rlim_cur);
}

/* A hard limit at or below the cap would make the kernel SIGKILL: refused,
 * nothing changed. */
static void
test_hard_limit_too_low_is_refused(void **state)
{
	struct rlimit low = {.rlim_cur = CAP_US, .rlim_max = CAP_US}, now;
	struct sigaction act;
	struct nfl_rt rt = {0};
	pid_t pid;
	int status;

	(void)state;
	skip_without_rt();
	/* Lowering a hard limit is for good: in a child. */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		bool ok = setrlimit(RLIMIT_RTTIME, &low) == 0 && !nfl_rt_enter(&rt, CAP_US) &&
			  sched_getscheduler(0) == SCHED_OTHER && getrlimit(RLIMIT_RTTIME, &now) == 0 &&
			  now.rlim_cur == CAP_US && sigaction(SIGXCPU, NULL, &act) == 0 &&
			  act.sa_handler == SIG_DFL;

		_exit(ok ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* A thread an operator runs at real-time priority is left as it is. */
static void
test_already_real_time_is_left_alone(void **state)
{
	struct sched_param rr = {.sched_priority = 2}, other = {.sched_priority = 0};
	struct nfl_rt rt = {0};

	(void)state;
	skip_without_rt();
	assert_int_equal(sched_setscheduler(0, SCHED_RR, &rr), 0);
	assert_false(nfl_rt_enter(&rt, CAP_US));
	assert_int_equal(sched_getscheduler(0), SCHED_RR);
	sched_setscheduler(0, SCHED_OTHER, &other);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_spinning_thread_is_cut_back_by_the_kernel),
	    cmocka_unit_test(test_leave_restores_policy_limit_and_signal),
	    cmocka_unit_test(test_hard_limit_too_low_is_refused),
	    cmocka_unit_test(test_already_real_time_is_left_alone),
	    cmocka_unit_test(test_entering_twice_is_one_entry),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
