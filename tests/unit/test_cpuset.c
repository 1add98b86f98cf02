/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * test_cpuset -- CPU lists, NF CPU sets and NF lcore ids (common/onvm_cpuset.c)
 * on synthetic topologies: 96 CPUs, holes in the online set, one NUMA node of
 * an interleaved two-socket box, a manager with lcores above 32, and DPDK
 * builds with few lcore ids.
 */
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "onvm_cpuset.h"

#define NF_SLOTS 64 /* ONVM_MAX_NFS */

static cpu_set_t
set_of(const char *list)
{
	cpu_set_t s;

	assert_int_equal(onvm_cpulist_parse(list, &s), 0);
	return s;
}

static void
assert_set(const cpu_set_t *s, const char *want)
{
	char buf[ONVM_CPULIST_MAX];

	assert_true(onvm_cpulist_format(s, buf, sizeof(buf)) >= 0);
	assert_string_equal(buf, want);
}

static void
test_cpu_lists_round_trip(void **state)
{
	static const char *const good[][2] = {
	    {"", ""}, {"0", "0"}, {"1,0", "0-1"}, {"0-1,3", "0-1,3"}, {"5-7,6", "5-7"},
	    {"2,3,4,9", "2-4,9"}, {"1023", "1023"},
	};
	static const char *const bad[] = {"x", "1,", ",1", "1-", "-1", "3-1", "1024", "0-1024",
					  "1 ,2", "1--2", "1,,2"};
	cpu_set_t set;

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		set = set_of(good[i][0]);
		assert_set(&set, good[i][1]);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (onvm_cpulist_parse(bad[i], &set) != -EINVAL)
			fail_msg("\"%s\" was accepted as a CPU list", bad[i]);
}

/* NUMA node 1 of an interleaved 96-CPU two-socket box: 48 single CPUs, 138
 * characters -- more than the 64 the launcher once had room for. */
static void
test_interleaved_numa_node_list_is_formatted_whole(void **state)
{
	char want[512] = "", buf[ONVM_CPULIST_MAX], small[64];
	cpu_set_t node1;
	int len;

	(void)state;
	CPU_ZERO(&node1);
	for (int c = 1; c < 96; c += 2) {
		CPU_SET(c, &node1);
		snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s%d", c > 1 ? "," : "",
			 c);
	}
	len = onvm_cpulist_format(&node1, buf, sizeof(buf));
	assert_int_equal(len, (int)strlen(want));
	assert_int_equal(len, 138);
	assert_string_equal(buf, want);
	assert_int_equal(onvm_cpulist_format(&node1, small, sizeof(small)), -ENOSPC);
	{
		cpu_set_t back = set_of(buf);

		assert_true(CPU_EQUAL(&back, &node1));
	}
}

/* The bound holds for the worst patterns: every other CPU, and runs of two
 * (CPUs c with c % 3 != 2: "0-1,3-4,...", the longest of all). */
static void
test_cpulist_max_fits_the_worst_lists(void **state)
{
	char buf[ONVM_CPULIST_MAX];
	cpu_set_t set;

	(void)state;
	for (int period = 2; period <= 4; period++) {
		CPU_ZERO(&set);
		for (int c = 0; c < CPU_SETSIZE; c++) /* runs of period - 1 CPUs */
			if (c % period != period - 1)
				CPU_SET(c, &set);
		assert_true(onvm_cpulist_format(&set, buf, sizeof(buf)) > 0);
	}
}

/* Online CPUs with holes (0-3 and 8-11 online): nothing assumes 0..N-1. */
static void
test_nf_cpus_follow_online_cpus_with_holes(void **state)
{
	cpu_set_t online = set_of("0-3,8-11"), none = set_of(""), active, standby;

	(void)state;
	onvm_nf_cpus(&online, &none, &none, &active, &standby);
	assert_set(&active, "0-3,8-11"); /* unset: every online CPU */
	assert_set(&standby, "0-3,8-11"); /* no CPU left: the actives' */
	{
		cpu_set_t cfg = set_of("2-9");

		onvm_nf_cpus(&online, &cfg, &none, &active, &standby);
		assert_set(&active, "2-3,8-9"); /* offline 4-7 dropped */
		assert_set(&standby, "0-1,10-11");
	}
	{
		cpu_set_t cfg = set_of("4-7"); /* all offline: as if unset */

		onvm_nf_cpus(&online, &cfg, &cfg, &active, &standby);
		assert_set(&active, "0-3,8-11");
		assert_set(&standby, "0-3,8-11");
	}
}

/* Two sockets, 96 CPUs: actives on node 1 (odd), standbys on the rest. */
static void
test_nf_cpus_on_two_sockets(void **state)
{
	cpu_set_t online = set_of("0-95"), node1, none = set_of(""), active, standby;
	char buf[ONVM_CPULIST_MAX];

	(void)state;
	CPU_ZERO(&node1);
	for (int c = 1; c < 96; c += 2)
		CPU_SET(c, &node1);
	onvm_nf_cpus(&online, &node1, &none, &active, &standby);
	assert_true(CPU_EQUAL(&active, &node1));
	assert_int_equal(CPU_COUNT(&standby), 48);
	for (int c = 0; c < 96; c += 2)
		assert_true(CPU_ISSET(c, &standby));
	assert_true(onvm_cpulist_format(&standby, buf, sizeof(buf)) > 64);
}

static void
test_lcore_table_skips_manager_lcores_and_hand_range(void **state)
{
	bool mgr[128] = {false};
	uint32_t ids[NF_SLOTS];
	int hand = onvm_nf_hand_lcore_base(128, NF_SLOTS);

	(void)state;
	assert_int_equal(hand, 48);
	mgr[0] = true;
	mgr[40] = true;	 /* manager lcores >= 32 used to clash with 32 + slot */
	mgr[100] = true;
	mgr[127] = true;
	assert_int_equal(onvm_nf_lcore_table(mgr, 128, ids, NF_SLOTS), NF_SLOTS);
	for (int i = 0; i < NF_SLOTS; i++) {
		assert_true(ids[i] < 128);
		assert_false(mgr[ids[i]]);
		assert_false(ids[i] >= (uint32_t)hand && ids[i] < (uint32_t)hand + ONVM_NF_HAND_LCORES);
		for (int k = 0; k < i; k++)
			assert_int_not_equal(ids[i], ids[k]);
	}
	assert_int_equal(ids[0], 126); /* from the top down */
}

/* A manager on 96 lcores of a DPDK with 128 ids: 32 slots get an id, the
 * others none (launching there fails with a message, not a clash). */
static void
test_lcore_table_runs_out_honestly(void **state)
{
	bool mgr[128] = {false};
	uint32_t ids[NF_SLOTS];

	(void)state;
	for (int i = 0; i < 96; i++)
		mgr[i] = true;
	assert_int_equal(onvm_nf_lcore_table(mgr, 128, ids, NF_SLOTS), 32);
	for (int i = 0; i < 32; i++)
		assert_true(ids[i] >= 96);
	for (int i = 32; i < NF_SLOTS; i++)
		assert_int_equal(ids[i], UINT32_MAX);
}

/* A DPDK built with 64 lcore ids has no room for a hand-started range. */
static void
test_small_max_lcore_has_no_hand_range(void **state)
{
	bool mgr[64] = {false};
	uint32_t ids[NF_SLOTS];

	(void)state;
	mgr[0] = true;
	assert_int_equal(onvm_nf_hand_lcore_base(64, NF_SLOTS), -1);
	assert_int_equal(onvm_nf_lcore_table(mgr, 64, ids, NF_SLOTS), 63);
	assert_int_equal(ids[62], 1);
	assert_int_equal(ids[63], UINT32_MAX);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cpu_lists_round_trip),
	    cmocka_unit_test(test_interleaved_numa_node_list_is_formatted_whole),
	    cmocka_unit_test(test_cpulist_max_fits_the_worst_lists),
	    cmocka_unit_test(test_nf_cpus_follow_online_cpus_with_holes),
	    cmocka_unit_test(test_nf_cpus_on_two_sockets),
	    cmocka_unit_test(test_lcore_table_skips_manager_lcores_and_hand_range),
	    cmocka_unit_test(test_lcore_table_runs_out_honestly),
	    cmocka_unit_test(test_small_max_lcore_has_no_hand_range),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
