/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * The manager's ownership contracts (onvm_mgr/mgr.h, MGR_ASSERT_*) are
 * checks, not comments: built here with MGR_ENABLE_ASSERT, a call without
 * the lock or from the wrong unit must stop the process, and a call that
 * keeps the contract must not.  Each violation runs in a child process.
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "mgr.h"

#ifndef MGR_ENABLE_ASSERT
#error "test_contracts is built with MGR_ENABLE_ASSERT"
#endif

/* Stand-ins with the contracts real functions declare. */
static void
needs_ctl_lock(void)
{
	MGR_ASSERT_CTL_LOCKED();
}

static void
tx_unit_only(void)
{
	MGR_ASSERT_UNIT(MGR_UNIT_TX);
}

/* Runs fn in a child; returns the signal that ended it, 0 if it exited 0. */
static int
child_signal(void (*fn)(void))
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		/* rte_panic dumps a stack and aborts: keep its output short. */
		fclose(stderr);
		fn();
		_exit(0);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status))
		return WTERMSIG(status);
	assert_int_equal(WEXITSTATUS(status), 0);
	return 0;
}

static void
unlocked_call(void)
{
	needs_ctl_lock();
}

static void
locked_call(void)
{
	mgr_ctl_lock();
	needs_ctl_lock();
	mgr_ctl_unlock();
}

static void
test_ctl_lock_contract_stops_a_caller_without_the_lock(void **state)
{
	(void)state;
	assert_int_equal(child_signal(unlocked_call), SIGABRT);
	assert_int_equal(child_signal(locked_call), 0);
}

static void *
other_thread_sees_lock(void *arg)
{
	*(bool *)arg = mgr_ctl_lock_held();
	return NULL;
}

static void
test_ctl_lock_held_only_by_its_owner(void **state)
{
	pthread_t t;
	bool other = true;

	(void)state;
	assert_false(mgr_ctl_lock_held());
	mgr_ctl_lock();
	assert_true(mgr_ctl_lock_held());
	assert_int_equal(pthread_create(&t, NULL, other_thread_sees_lock, &other), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_false(other); /* another thread does not hold it */
	mgr_ctl_unlock();
	assert_false(mgr_ctl_lock_held());
}

static void
rx_calls_tx_only(void)
{
	MGR_UNIT_ENTER(MGR_UNIT_RX);
	tx_unit_only();
}

static void
tx_calls_tx_only(void)
{
	MGR_UNIT_ENTER(MGR_UNIT_TX);
	tx_unit_only();
}

static void
outside_units_calls_tx_only(void)
{
	MGR_UNIT_ENTER(MGR_UNIT_TX);
	MGR_UNIT_LEAVE(); /* as units.c does after each pass */
	tx_unit_only();
}

static void
data_unit_takes_ctl_lock(void)
{
	MGR_UNIT_ENTER(MGR_UNIT_RX);
	mgr_ctl_lock(); /* could wait on an RCU grace period that waits for us */
}

static void
test_unit_contract_stops_the_wrong_unit(void **state)
{
	(void)state;
	assert_int_equal(child_signal(tx_calls_tx_only), 0);
	assert_int_equal(child_signal(rx_calls_tx_only), SIGABRT);
	assert_int_equal(child_signal(outside_units_calls_tx_only), SIGABRT);
	assert_int_equal(child_signal(data_unit_takes_ctl_lock), SIGABRT);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ctl_lock_contract_stops_a_caller_without_the_lock),
		cmocka_unit_test(test_ctl_lock_held_only_by_its_owner),
		cmocka_unit_test(test_unit_contract_stops_the_wrong_unit),
	};

	pthread_mutex_init(&mgr.ctl_lock, NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
