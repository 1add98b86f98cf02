/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/* Fixed-address hugetlbfs segments (onvm_seg.h): shared at the same address
 * across processes, never taken from a live owner, never mapped over
 * something else, pages taken and returned explicitly. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "onvm_seg.h"

#define SEG_SIZE (8u << 20)
/* Test addresses of their own, away from the manager's. */
#define VA_A (ONVM_SEG_STATE_VA + (64ull << 30))
#define VA_B (ONVM_SEG_STATE_VA + (128ull << 30))

static char path[512];

static int
setup(void **state)
{
	char dir[256];

	(void)state;
	if (onvm_seg_hugedir(dir, sizeof(dir)) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/test_seg_%dmap_onvm_state", dir, (int)getpid());
	return 0;
}

static void
test_other_process_sees_the_same_bytes_at_the_same_address(void **state)
{
	(void)state;
	struct onvm_seg a;
	int status;
	pid_t pid;

	if (onvm_seg_create(&a, path, VA_A, SEG_SIZE) < 0)
		skip(); /* no huge pages on this machine */
	assert_ptr_equal(a.base, (void *)(uintptr_t)VA_A);
	assert_int_equal(onvm_seg_reserve(&a, 0, 2u << 20), 0);
	/* a pointer into the segment, stored in the segment */
	*(uint64_t *)(a.base + 8) = (uint64_t)(uintptr_t)(a.base + 64);
	strcpy((char *)a.base + 64, "state");
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct onvm_seg b;

		/* a fresh process (as an NF): unmap what fork gave us first */
		munmap(a.base, SEG_SIZE);
		if (onvm_seg_map(&b, path, VA_A, SEG_SIZE) != 0)
			_exit(1);
		const char *p = (const char *)(uintptr_t) * (uint64_t *)(b.base + 8);
		_exit(strcmp(p, "state") == 0 ? 0 : 2);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	onvm_seg_close(&a, 1);
	assert_int_equal(access(path, F_OK), -1);
}

static void
test_live_segment_is_not_taken_and_a_used_address_is_not_overwritten(void **state)
{
	(void)state;
	struct onvm_seg a, b;
	void *other;

	if (onvm_seg_create(&a, path, VA_A, SEG_SIZE) < 0)
		skip();
	/* another node with the same name while this one lives */
	assert_int_equal(onvm_seg_create(&b, path, VA_B, SEG_SIZE), -EBUSY);
	/* DPDK's start-up check: an exclusive lock must fail while we live */
	int fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), -1);
	close(fd);
	onvm_seg_close(&a, 1);
	/* an address something else holds */
	other = mmap((void *)(uintptr_t)VA_B, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
		     -1, 0);
	assert_ptr_equal(other, (void *)(uintptr_t)VA_B);
	assert_int_equal(onvm_seg_create(&b, path, VA_B, SEG_SIZE), -EEXIST);
	assert_int_equal(access(path, F_OK), -1); /* nothing left behind */
	munmap(other, 4096);
}

static void
test_stale_file_of_a_dead_node_is_replaced(void **state)
{
	(void)state;
	struct onvm_seg a;
	int fd = open(path, O_RDWR | O_CREAT, 0600);

	uint8_t *p;

	assert_true(fd >= 0);
	/* hugetlbfs takes no write(): leave junk through a mapping */
	assert_int_equal(ftruncate(fd, 2u << 20), 0);
	p = mmap(NULL, 2u << 20, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(p != MAP_FAILED);
	memset(p, 0xee, 64);
	munmap(p, 2u << 20);
	close(fd); /* nobody holds it: a dead node's leftover */
	if (onvm_seg_create(&a, path, VA_A, SEG_SIZE) < 0) {
		unlink(path);
		skip();
	}
	assert_int_equal(onvm_seg_reserve(&a, 0, 2u << 20), 0);
	assert_int_equal(a.base[0], 0); /* started afresh */
	onvm_seg_close(&a, 1);
}

static void
test_pages_are_taken_and_given_back_explicitly(void **state)
{
	(void)state;
	struct onvm_seg a;
	struct stat st;

	if (onvm_seg_create(&a, path, VA_A, SEG_SIZE) < 0)
		skip();
	assert_int_equal(fstat(a.fd, &st), 0);
	assert_int_equal(st.st_blocks, 0); /* nothing taken by mapping it */
	assert_int_equal(onvm_seg_reserve(&a, 2u << 20, 4u << 20), 0);
	assert_int_equal(fstat(a.fd, &st), 0);
	assert_int_equal((uint64_t)st.st_blocks * 512, 4u << 20);
	assert_int_equal(onvm_seg_release(&a, 2u << 20, 2u << 20), 0);
	assert_int_equal(fstat(a.fd, &st), 0);
	assert_int_equal((uint64_t)st.st_blocks * 512, 2u << 20);
	assert_int_equal(onvm_seg_reserve(&a, 0, SEG_SIZE + 1), -ERANGE);
	assert_int_equal(onvm_seg_release(&a, SEG_SIZE, 1), -ERANGE);
	onvm_seg_close(&a, 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_other_process_sees_the_same_bytes_at_the_same_address),
		cmocka_unit_test(test_live_segment_is_not_taken_and_a_used_address_is_not_overwritten),
		cmocka_unit_test(test_stale_file_of_a_dead_node_is_replaced),
		cmocka_unit_test(test_pages_are_taken_and_given_back_explicitly),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
