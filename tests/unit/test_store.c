/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * test_store -- stateless resiliency's store protocol without a store
 * (common/onvm_store.c): addresses, keys, index members, and what a WRITE's
 * reply may say.  The scripts themselves run against a real redis-server in
 * tests/integration/test_store_scripts.py.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "onvm_store.h"

static void
test_addresses(void **state)
{
	struct onvm_store_addr a;
	char err[160];

	(void)state;
	assert_int_equal(onvm_store_addr_parse("unix:/run/r.sock", &a, err, sizeof(err)), 0);
	assert_true(a.unix_socket);
	assert_string_equal(a.path, "/run/r.sock");
	assert_int_equal(onvm_store_addr_parse("/tmp/x", &a, err, sizeof(err)), 0);
	assert_true(a.unix_socket);
	assert_int_equal(onvm_store_addr_parse("198.18.0.9:7000", &a, err, sizeof(err)), 0);
	assert_false(a.unix_socket);
	assert_string_equal(a.host, "198.18.0.9");
	assert_int_equal(a.port, 7000);
	assert_int_equal(onvm_store_addr_parse("store-1", &a, err, sizeof(err)), 0);
	assert_int_equal(a.port, 6379);

	const char *bad[] = {"", "unix:rel/path", "host:", "host:0", "host:65536", "host:12x",
			     ":6379", "ho st:1", "a;b:1", "host:+80", "host: 80", "host:-1"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(onvm_store_addr_parse(bad[i], &a, err, sizeof(err)), -EINVAL);
		assert_true(strlen(err) > 0);
	}
	char longp[200];
	memset(longp, 'a', sizeof(longp));
	longp[0] = '/';
	longp[sizeof(longp) - 1] = '\0';
	assert_int_equal(onvm_store_addr_parse(longp, &a, err, sizeof(err)), -EINVAL);
}

static void
test_keys_share_the_chain_tag(void **state)
{
	char k[ONVM_STORE_KEY_LEN];

	(void)state;
	assert_true(onvm_store_key_run(k, sizeof(k), "c1") > 0);
	assert_string_equal(k, "onvm:{c1}:run");
	assert_true(onvm_store_key_meta(k, sizeof(k), "c1", 3) > 0);
	assert_string_equal(k, "onvm:{c1}:s3:m");
	assert_true(onvm_store_key_index(k, sizeof(k), "c1", 3) > 0);
	assert_string_equal(k, "onvm:{c1}:s3:i");
	assert_true(onvm_store_key_closes(k, sizeof(k), "c1", 3) > 0);
	assert_string_equal(k, "onvm:{c1}:s3:k");
	assert_true(onvm_store_key_chunk(k, sizeof(k), "c1", 3, 1, 4095) > 0);
	assert_string_equal(k, "onvm:{c1}:s3:c:1.4095");
	assert_int_equal(onvm_store_key_chunk(k, 12, "c1", 3, 1, 4095), -ENAMETOOLONG);
}

static void
test_u64_strict(void **state)
{
	uint64_t v = 1;

	(void)state;
	assert_int_equal(onvm_store_parse_u64("1795993393714265630", 19, &v), 0);
	assert_true(v == UINT64_C(1795993393714265630)); /* above 2^53: exact */
	assert_int_equal(onvm_store_parse_u64("18446744073709551615", 20, &v), 0);
	assert_true(v == UINT64_MAX);
	assert_int_equal(onvm_store_parse_u64("18446744073709551616", 20, &v), -EINVAL);
	assert_int_equal(onvm_store_parse_u64("1.7959933937142659e+18", 22, &v), -EINVAL);
	assert_int_equal(onvm_store_parse_u64("", 0, &v), -EINVAL);
	assert_int_equal(onvm_store_parse_u64("-1", 2, &v), -EINVAL);
	assert_int_equal(onvm_store_parse_u64("0", 1, &v), 0);
	assert_true(v == 0);
}

static void
test_members_round_trip(void **state)
{
	char m[24];
	uint32_t r, c;

	(void)state;
	assert_true(onvm_store_chunk_member(m, sizeof(m), 15, 4294967295u) > 0);
	assert_int_equal(onvm_store_chunk_member_parse(m, strlen(m), &r, &c), 0);
	assert_int_equal(r, 15);
	assert_int_equal(c, 4294967295u);
	const char *bad[] = {"", ".", "1.", ".1", "1.2.3", "-1.2", "1.4294967296", "a.1", "1 .2",
			     "12345678901.1"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(onvm_store_chunk_member_parse(bad[i], strlen(bad[i]), &r, &c),
				 -EINVAL);
}

static enum onvm_store_verdict
verdict(int n, int64_t a, int64_t b, int64_t c, uint64_t epoch, uint64_t seq)
{
	struct onvm_store_ints r = {.n = n, .v = {a, b, c}};

	return onvm_store_write_verdict(&r, epoch, seq);
}

static void
test_write_verdicts(void **state)
{
	(void)state;
	/* applied: the version sent, exactly */
	assert_int_equal(verdict(3, 1, 7, 3, 7, 3), ONVM_STORE_APPLIED);
	assert_int_equal(verdict(3, 1, 7, 4, 7, 3), ONVM_STORE_BAD);
	assert_int_equal(verdict(2, 1, 7, 0, 7, 3), ONVM_STORE_BAD);
	/* not newer: the store holds this update or a later one */
	assert_int_equal(verdict(3, 0, 7, 3, 7, 3), ONVM_STORE_NOT_NEWER);
	assert_int_equal(verdict(3, 0, 9, 1, 7, 3), ONVM_STORE_NOT_NEWER);
	assert_int_equal(verdict(3, 0, 7, 2, 7, 3), ONVM_STORE_BAD); /* older: impossible */
	assert_int_equal(verdict(3, 0, 6, 9, 7, 3), ONVM_STORE_BAD);
	assert_int_equal(verdict(3, 0, -1, 9, 7, 3), ONVM_STORE_BAD);
	/* fenced, lost */
	assert_int_equal(verdict(2, -1, 5, 0, 7, 3), ONVM_STORE_FENCED);
	assert_int_equal(verdict(1, -2, 0, 0, 7, 3), ONVM_STORE_LOST);
	assert_int_equal(verdict(3, -2, 0, 0, 7, 3), ONVM_STORE_BAD);
	/* anything else */
	assert_int_equal(verdict(-1, 0, 0, 0, 7, 3), ONVM_STORE_BAD);
	assert_int_equal(verdict(0, 0, 0, 0, 7, 3), ONVM_STORE_BAD);
	assert_int_equal(verdict(3, 2, 7, 3, 7, 3), ONVM_STORE_BAD);
}

static void
test_defaults_and_scripts(void **state)
{
	struct onvm_store_cfg c;

	(void)state;
	onvm_store_cfg_defaults(&c);
	assert_int_equal(c.mode, ONVM_STORE_ASYNC);
	assert_int_equal(c.cache, 1);
	assert_int_equal(c.flush_pkts, ONVM_STORE_FLUSH_PKTS_DEFAULT);
	assert_int_equal(c.pipeline, ONVM_STORE_PIPELINE_DEFAULT);
	for (int s = 0; s < ONVM_STORE_NSCRIPTS; s++) {
		assert_non_null(onvm_store_script_text(s));
		assert_non_null(onvm_store_script_text_unchecked(s));
	}
	assert_null(onvm_store_script_text(ONVM_STORE_NSCRIPTS));
	/* The unchecked WRITE differs from the real one by its check only. */
	assert_non_null(strstr(onvm_store_script_text(ONVM_STORE_WRITE), "us <= s"));
	assert_null(strstr(onvm_store_script_text_unchecked(ONVM_STORE_WRITE), "us <= s"));
	assert_string_equal(onvm_store_script_text(ONVM_STORE_LOAD),
			    onvm_store_script_text_unchecked(ONVM_STORE_LOAD));
	/* FNV-1a of "a" */
	assert_int_equal(onvm_store_layout_fp_add(ONVM_STORE_FP_INIT, "a", 1),
			 UINT64_C(0xaf63dc4c8601ec8c));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_addresses),
	    cmocka_unit_test(test_keys_share_the_chain_tag),
	    cmocka_unit_test(test_u64_strict),
	    cmocka_unit_test(test_members_round_trip),
	    cmocka_unit_test(test_write_verdicts),
	    cmocka_unit_test(test_defaults_and_scripts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
