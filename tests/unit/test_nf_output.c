/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/* libnf's results-file helpers (libnf/src/nf_output.c): "%i" expansion and
 * write-then-rename. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "onvm_nf_output.h"

static void
test_expand_instance_replaces_every_marker(void **state)
{
	char out[16];

	(void)state;
	assert_int_equal(nf_expand_instance("a%i.json", 12, out, sizeof(out)), 0);
	assert_string_equal(out, "a12.json");
	assert_int_equal(nf_expand_instance("%i-%i", 3, out, sizeof(out)), 0);
	assert_string_equal(out, "3-3");
	assert_int_equal(nf_expand_instance("100%", 3, out, sizeof(out)), 0);
	assert_string_equal(out, "100%");
}

static void
test_expand_instance_refuses_what_does_not_fit(void **state)
{
	char out[16];

	(void)state;
	assert_int_equal(nf_expand_instance("0123456789abcdef", 3, out, sizeof(out)), -1);
	assert_int_equal(nf_expand_instance("0123456789abc%i", 1234, out, sizeof(out)), -1);
	assert_int_equal(nf_expand_instance("x", 3, out, 0), -1);
}

static int
write_text(FILE *f, const void *arg)
{
	return fputs(arg, f) < 0 ? -1 : 0;
}

static int
write_fails(FILE *f, const void *arg)
{
	(void)arg;
	fputs("half", f);
	return -1;
}

static char *
slurp(const char *path)
{
	static char buf[256];
	FILE *f = fopen(path, "r");
	size_t n;

	if (f == NULL)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void
test_write_file_replaces_atomically_and_keeps_old_on_failure(void **state)
{
	char dir[] = "/tmp/nf_output_XXXXXX", path[64], tmp[80];

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out.json", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	assert_int_equal(nf_write_file(path, write_text, "{\"a\": 1}\n"), 0);
	assert_string_equal(slurp(path), "{\"a\": 1}\n");
	/* A writer that fails leaves the previous file and no temporary. */
	assert_int_equal(nf_write_file(path, write_fails, NULL), -EIO);
	assert_string_equal(slurp(path), "{\"a\": 1}\n");
	assert_int_equal(access(tmp, F_OK), -1);
	assert_int_equal(nf_write_file("/nonexistent/dir/x.json", write_text, "x"), -ENOENT);
	unlink(path);
	rmdir(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_expand_instance_replaces_every_marker),
		cmocka_unit_test(test_expand_instance_refuses_what_does_not_fit),
		cmocka_unit_test(test_write_file_replaces_atomically_and_keeps_old_on_failure),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
