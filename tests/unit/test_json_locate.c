/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * test_json_locate.c -- unit tests for json_locate(), the JSON path to
 * line/column mapper used to point configuration errors at their source.
 *
 * Every test asserts exact line and column numbers; the column comments on
 * the sample texts are there so a reader can check them by eye.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "json_locate.h"

/* A configuration-shaped document.  Line numbers on the right. */
static const char cfg[] =
	"{\n"					/* 1 */
	"  \"ports\": [0, 1],\n"		/* 2: '[' at col 12 */
	"  \"nfs\": [\n"			/* 3 */
	"    {\"binary\": \"fw\", \"id\": 1},\n"	/* 4: '{' 5, "fw" 16, 1 at 28 */
	"    {\"binary\": \"nat\", \"id\": 2}\n"	/* 5: '{' 5, "nat" 16 */
	"  ],\n"				/* 6 */
	"  \"log\": {\"level\": {\"min\": 3}},\n"	/* 7: '{' 10, '{' 20, 3 at 28 */
	"  \"chains\": [\n"			/* 8: '[' at col 13 */
	"    {\"services\": [1, 2, 3]},\n"	/* 9: '[' 18, elements 19 22 25 */
	"    {\"services\": [4, 5, 6]}\n"	/* 10: same columns */
	"  ]\n"					/* 11 */
	"}\n";					/* 12 */

/* Locate `path` in a NUL-terminated text and check rc, line and column. */
static void check(const char *text, const char *path, int want_rc, int want_line, int want_col)
{
	int line = -7, col = -7;
	int rc = json_locate(text, strlen(text), path, &line, &col);

	assert_int_equal(rc, want_rc);
	if (want_rc >= 0) {
		assert_int_equal(line, want_line);
		assert_int_equal(col, want_col);
	} else {
		/* outputs are left alone on failure */
		assert_int_equal(line, -7);
		assert_int_equal(col, -7);
	}
}

static void check_fails(const char *text, const char *path)
{
	check(text, path, -1, 0, 0);
}

/* Build `depth` nested arrays around a 1: "[[...[1]...]]". Caller frees. */
static char *nested_arrays(size_t depth)
{
	char *s = malloc(2 * depth + 2);
	size_t i;

	assert_non_null(s);
	for (i = 0; i < depth; i++) {
		s[i] = '[';
		s[depth + 1 + i] = ']';
	}
	s[depth] = '1';
	s[2 * depth + 1] = '\0';
	return s;
}

/* "[0]" repeated `n` times. Caller frees. */
static char *index_path(size_t n)
{
	char *p = malloc(3 * n + 1);
	size_t i;

	assert_non_null(p);
	for (i = 0; i < n; i++)
		memcpy(p + 3 * i, "[0]", 3);
	p[3 * n] = '\0';
	return p;
}

static void test_locate_root_empty_path(void **state)
{
	(void)state;
	check(cfg, "", 0, 1, 1);
}

static void test_locate_root_after_leading_whitespace(void **state)
{
	(void)state;
	check("\n\n   [1, 2]", "", 0, 3, 4);
	check("  42  ", "", 0, 1, 3);
}

static void test_locate_top_level_key(void **state)
{
	(void)state;
	check(cfg, "ports", 0, 2, 12);
	check(cfg, "chains", 0, 8, 13);
}

static void test_locate_nested_object_key(void **state)
{
	(void)state;
	check(cfg, "log", 0, 7, 10);
	check(cfg, "log.level", 0, 7, 20);
	check(cfg, "log.level.min", 0, 7, 28);
}

static void test_locate_array_index(void **state)
{
	(void)state;
	check(cfg, "nfs[0]", 0, 4, 5);
	check(cfg, "nfs[1]", 0, 5, 5);
	check(cfg, "ports[1]", 0, 2, 16);
}

static void test_locate_key_inside_array_element(void **state)
{
	(void)state;
	check(cfg, "nfs[0].binary", 0, 4, 16);
	check(cfg, "nfs[0].id", 0, 4, 28);
	check(cfg, "nfs[1].binary", 0, 5, 16);
}

static void test_locate_nested_array_element(void **state)
{
	(void)state;
	check(cfg, "chains[0].services[0]", 0, 9, 19);
	check(cfg, "chains[1].services[2]", 0, 10, 25);
}

static void test_locate_root_array_index(void **state)
{
	(void)state;
	check("[10, [20, 30]]", "[1][1]", 0, 1, 11);
}

static void test_locate_crlf_and_tabs(void **state)
{
	static const char text[] =
		"{\r\n"			/* 1 */
		"\t\"a\": {\r\n"		/* 2: '{' at col 7 */
		"\t\t\"b\":\t[\r\n"	/* 3: '[' at col 8 */
		"\t\t\t7\r\n"		/* 4: 7 at col 4 */
		"\t\t]\r\n"
		"\t}\r\n"
		"}\r\n";

	(void)state;
	check(text, "a", 0, 2, 7);
	check(text, "a.b", 0, 3, 8);
	check(text, "a.b[0]", 0, 4, 4);
}

static void test_locate_lone_cr_is_line_break(void **state)
{
	(void)state;
	check("{\"a\":\r 1}", "a", 0, 2, 2);
	check("{\"a\":\r\r\n\n1}", "a", 0, 4, 1);
}

static void test_locate_absent_key_reports_parent(void **state)
{
	(void)state;
	check(cfg, "nosuch", 1, 1, 1);
	check(cfg, "nfs[0].missing", 1, 4, 5);
	check(cfg, "log.level.max", 1, 7, 20);
	check(cfg, "log.level.min.deeper", 1, 7, 28);
}

static void test_locate_key_in_empty_object_reports_object(void **state)
{
	(void)state;
	check("{\"a\": {}}", "a.b", 1, 1, 7);
}

static void test_locate_index_out_of_range_reports_array(void **state)
{
	(void)state;
	check(cfg, "chains[2]", 1, 8, 13);
	check(cfg, "chains[0].services[3]", 1, 9, 18);
	check("{\"a\": []}", "a[0]", 1, 1, 7);
}

static void test_locate_huge_index_reports_array(void **state)
{
	(void)state;
	check(cfg, "ports[4294967296]", 1, 2, 12);
}

static void test_locate_type_mismatch_reports_value(void **state)
{
	(void)state;
	check(cfg, "ports.x", 1, 2, 12);   /* key into an array */
	check(cfg, "log[0]", 1, 7, 10);    /* index into an object */
	check(cfg, "nfs[0].id[0]", 1, 4, 28); /* index into a number */
	check(cfg, "nfs[1].binary.x", 1, 5, 16); /* key into a string */
}

static void test_locate_escaped_keys(void **state)
{
	static const char text[] =
		"{\n"
		"\"a\\\"b\": 1,\n"				/* 2: "a\"b": value at 9 */
		"\"c\\\\d\": 2,\n"				/* 3: "c\\d" */
		"\"e\\/f\": 3,\n"				/* 4: "e\/f" */
		"\"\\u0067h\": 4,\n"				/* 5: "\u0067h" -> "gh", 12 */
		"\"t\\tb\\n\": 5,\n"				/* 6: "t\tb\n", value at 11 */
		"\"\\b\\f\\r\": 6,\n"				/* 7: "\b\f\r", value at 11 */
		"\"\\u00e9\\ud83d\\ude00\": 7\n"		/* 8: U+00E9 U+1F600, at 23 */
		"}";

	(void)state;
	check(text, "a\"b", 0, 2, 9);
	check(text, "c\\d", 0, 3, 9);
	check(text, "e/f", 0, 4, 9);
	check(text, "gh", 0, 5, 12);
	check(text, "t\tb\n", 0, 6, 11);
	check(text, "\b\f\r", 0, 7, 11);
	check(text, "\xc3\xa9\xf0\x9f\x98\x80", 0, 8, 23);
}

static void test_locate_escaped_key_not_matched_by_raw_spelling(void **state)
{
	(void)state;
	check("{\"a\\\"b\": 1}", "a\\\"b", 1, 1, 1);
	check("{\"\\u0067h\": 1}", "\\u0067h", 1, 1, 1);
}

static void test_locate_key_prefix_does_not_match(void **state)
{
	(void)state;
	check("{\"ab\": 1, \"a\": 2, \"abc\": 3}", "a", 0, 1, 16);
	check("{\"ab\": 1}", "abc", 1, 1, 1);
}

static void test_locate_dotted_key_not_addressable(void **state)
{
	(void)state;
	/* "a.b" always means key b inside key a, never the key "a.b". */
	check("{\"a.b\": 1, \"a\": {\"b\": 2}}", "a.b", 0, 1, 23);
	check("{\"a.b\": 1}", "a.b", 1, 1, 1);
}

static void test_locate_duplicate_keys_first_wins(void **state)
{
	(void)state;
	check("{\"a\": 1, \"a\": 2}", "a", 0, 1, 7);
}

static void test_locate_duplicate_keys_no_fallthrough_to_later(void **state)
{
	(void)state;
	/* The first "a" lacks "b"; the second one is not consulted. */
	check("{\"a\": {}, \"a\": {\"b\": 1}}", "a.b", 1, 1, 7);
}

static void test_locate_malformed_json_fails(void **state)
{
	static const char *const bad[] = {
		"{\"a\" 1}",		/* missing colon */
		"{\"x\": 1,}",		/* trailing comma */
		"{\"x\": 1 \"a\": 2}",	/* missing comma */
		"{a: 1}",		/* unquoted key */
		"{\"x\": tru, \"a\": 1}",	/* bad literal */
		"{\"x\": nul}",		/* bad literal */
		"{\"x\": 01, \"a\": 1}",	/* leading zero */
		"{\"x\": 1., \"a\": 1}",	/* no fraction digits */
		"{\"x\": 1e, \"a\": 1}",	/* no exponent digits */
		"{\"x\": -, \"a\": 1}",	/* bare minus */
		"{\"x\": +1, \"a\": 1}",	/* plus sign */
		"{\"x\": \"\\q\", \"a\": 1}",	/* bad escape */
		"{\"x\": \"\\u12G4\", \"a\": 1}",	/* bad hex */
		"{\"x\": \"\\ud83d\", \"a\": 1}",	/* lone high surrogate */
		"{\"x\": \"\\ude00\", \"a\": 1}",	/* lone low surrogate */
		"{\"x\": \"\\ud83d\\u0041\", \"a\": 1}",	/* high surrogate + non-low */
		"{\"x\": \"a\tb\", \"a\": 1}",	/* raw control character */
		"{\"x\": [1 2], \"a\": 1}",	/* missing comma in array */
		"{\"x\": [1,], \"a\": 1}",	/* trailing comma in array */
		"{\"x\": }",		/* missing value */
		"{\"x\": 1]",		/* wrong closer */
		"",			/* empty */
		"   \n\t ",		/* whitespace only */
		"}",			/* stray closer */
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		check_fails(bad[i], "a");
}

static void test_locate_truncated_json_fails(void **state)
{
	/* The target, chains[1].services[2], is the "6" at line 10; the root closes at the end. */
	size_t target_end = (size_t)(strstr(cfg, "6]") - cfg) + 1;
	size_t root_end = sizeof(cfg) - 2; /* the final '}' is the last byte before "\n" */
	size_t n;

	(void)state;
	for (n = 0; n < root_end; n++) {
		/* exact-size copies, so ASan would catch a read past len */
		char *copy = malloc(n ? n : 1);
		int line = 0, col = 0;

		assert_non_null(copy);
		memcpy(copy, cfg, n);
		if (n < target_end)
			assert_int_equal(json_locate(copy, n, "chains[1].services[2]", &line, &col),
					 -1);
		assert_int_equal(json_locate(copy, n, "", &line, &col), -1);
		free(copy);
	}
}

static void test_locate_stops_at_len(void **state)
{
	/* Exact-size heap buffer without a terminator: ASan catches any over-read. */
	char *buf = malloc(4);
	int line = 0, col = 0;

	(void)state;
	assert_non_null(buf);
	memcpy(buf, "[1,2", 4);
	assert_int_equal(json_locate(buf, 4, "[0]", &line, &col), 0);
	assert_int_equal(line, 1);
	assert_int_equal(col, 2);
	assert_int_equal(json_locate(buf, 4, "[1]", &line, &col), 0);
	assert_int_equal(col, 4);
	assert_int_equal(json_locate(buf, 4, "[2]", &line, &col), -1);
	assert_int_equal(json_locate(buf, 3, "[1]", &line, &col), -1);
	/* An array cut short by len is unfinished. */
	assert_int_equal(json_locate(buf, 2, "", &line, &col), -1);
	free(buf);
}

static void test_locate_text_after_match_not_checked(void **state)
{
	(void)state;
	check("{\"a\": 1, garbage", "a", 0, 1, 7);
	check("[1] trailing", "", 0, 1, 1);
}

static void test_locate_nesting_at_limit_succeeds(void **state)
{
	char *text = nested_arrays(JSON_LOCATE_MAX_DEPTH);
	char *path = index_path(JSON_LOCATE_MAX_DEPTH);

	(void)state;
	check(text, "", 0, 1, 1);
	check(text, path, 0, 1, JSON_LOCATE_MAX_DEPTH + 1);
	free(text);
	free(path);
}

static void test_locate_nesting_beyond_limit_fails(void **state)
{
	char *text = nested_arrays(JSON_LOCATE_MAX_DEPTH + 1);
	char *path = index_path(JSON_LOCATE_MAX_DEPTH + 1);

	(void)state;
	check_fails(text, "");
	check_fails(text, path);
	check_fails(text, "[0]");
	free(text);
	free(path);
}

static void test_locate_hostile_nesting_no_crash(void **state)
{
	size_t n = 1000000;
	char *text = malloc(n);
	int line = 0, col = 0;

	(void)state;
	assert_non_null(text);
	memset(text, '[', n);
	assert_int_equal(json_locate(text, n, "", &line, &col), -1);
	memset(text, '{', n);
	assert_int_equal(json_locate(text, n, "", &line, &col), -1);
	free(text);
}

static void test_locate_invalid_path_fails(void **state)
{
	static const char *const bad[] = {
		".a", "a.", "a..b", "a.[0]", "[", "[]", "[x]", "[1", "[-1]", "[0]x",
		"ports[0]]", "[99999999999999999999999999]",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		check_fails(cfg, bad[i]);
}

static void test_locate_null_args_fail(void **state)
{
	int line = -7, col = -7;

	(void)state;
	assert_int_equal(json_locate(NULL, 0, "", &line, &col), -1);
	assert_int_equal(json_locate(cfg, strlen(cfg), NULL, &line, &col), -1);
	assert_int_equal(json_locate(cfg, strlen(cfg), "", NULL, &col), -1);
	assert_int_equal(json_locate(cfg, strlen(cfg), "", &line, NULL), -1);
	assert_int_equal(line, -7);
	assert_int_equal(col, -7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_locate_root_empty_path),
		cmocka_unit_test(test_locate_root_after_leading_whitespace),
		cmocka_unit_test(test_locate_top_level_key),
		cmocka_unit_test(test_locate_nested_object_key),
		cmocka_unit_test(test_locate_array_index),
		cmocka_unit_test(test_locate_key_inside_array_element),
		cmocka_unit_test(test_locate_nested_array_element),
		cmocka_unit_test(test_locate_root_array_index),
		cmocka_unit_test(test_locate_crlf_and_tabs),
		cmocka_unit_test(test_locate_lone_cr_is_line_break),
		cmocka_unit_test(test_locate_absent_key_reports_parent),
		cmocka_unit_test(test_locate_key_in_empty_object_reports_object),
		cmocka_unit_test(test_locate_index_out_of_range_reports_array),
		cmocka_unit_test(test_locate_huge_index_reports_array),
		cmocka_unit_test(test_locate_type_mismatch_reports_value),
		cmocka_unit_test(test_locate_escaped_keys),
		cmocka_unit_test(test_locate_escaped_key_not_matched_by_raw_spelling),
		cmocka_unit_test(test_locate_key_prefix_does_not_match),
		cmocka_unit_test(test_locate_dotted_key_not_addressable),
		cmocka_unit_test(test_locate_duplicate_keys_first_wins),
		cmocka_unit_test(test_locate_duplicate_keys_no_fallthrough_to_later),
		cmocka_unit_test(test_locate_malformed_json_fails),
		cmocka_unit_test(test_locate_truncated_json_fails),
		cmocka_unit_test(test_locate_stops_at_len),
		cmocka_unit_test(test_locate_text_after_match_not_checked),
		cmocka_unit_test(test_locate_nesting_at_limit_succeeds),
		cmocka_unit_test(test_locate_nesting_beyond_limit_fails),
		cmocka_unit_test(test_locate_hostile_nesting_no_crash),
		cmocka_unit_test(test_locate_invalid_path_fails),
		cmocka_unit_test(test_locate_null_args_fail),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
