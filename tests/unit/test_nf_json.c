/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * test_nf_json.c -- libnf's config fingerprint hash (nf_fnv1a(),
 * nf_fnv1a_u64() in onvm_nf_json.h), which the firewall, load balancer,
 * NAT, VLAN tagger and nondet NFs store in their state: the reference
 * FNV-1a 64 values, so that a change of the function shows here rather
 * than as a standby refusing its active's state.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "onvm_nf_json.h"

static void
test_fnv1a_gives_the_reference_values(void **state)
{
	(void)state;
	/* FNV-1a 64 test vectors (Fowler, Noll, Vo). */
	assert_true(nf_fnv1a(NF_FNV1A_INIT, "", 0) == UINT64_C(0xcbf29ce484222325));
	assert_true(nf_fnv1a(NF_FNV1A_INIT, "a", 1) == UINT64_C(0xaf63dc4c8601ec8c));
	assert_true(nf_fnv1a(NF_FNV1A_INIT, "foobar", 6) == UINT64_C(0x85944171f73967e8));
	/* Bytes may be added in pieces. */
	assert_true(nf_fnv1a(nf_fnv1a(NF_FNV1A_INIT, "foo", 3), "bar", 3) ==
		    UINT64_C(0x85944171f73967e8));
}

static void
test_fnv1a_u64_adds_the_bytes_least_significant_first(void **state)
{
	static const uint8_t le[8] = {0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01};

	(void)state;
	assert_true(nf_fnv1a_u64(NF_FNV1A_INIT, UINT64_C(0x0102030405060708)) ==
		    nf_fnv1a(NF_FNV1A_INIT, le, sizeof(le)));
	assert_true(nf_fnv1a_u64(NF_FNV1A_INIT, 0) != nf_fnv1a_u64(NF_FNV1A_INIT, 1));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fnv1a_gives_the_reference_values),
	    cmocka_unit_test(test_fnv1a_u64_adds_the_bytes_least_significant_first),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
