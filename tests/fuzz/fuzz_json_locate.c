/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * fuzz_json_locate.c -- libFuzzer target for json_locate() on its own.
 *
 * fuzz_config only reaches json_locate() with text Jansson has accepted and
 * paths the loader builds, so most of json_locate()'s defences (truncated
 * escapes, bad numbers, deep nesting, malformed paths) are never exercised
 * there.  Here both are arbitrary: the input up to the first '\n' is the path
 * (at most 255 bytes, NUL-terminated copy) and the rest is the JSON text, in
 * an exact-size heap buffer without a NUL, so ASan sees any read at or past
 * `len` -- which json_locate.h promises never happens.
 *
 * Checked (abort() on violation): the result is -1, 0 or 1; on -1 *line and
 * *column are untouched; otherwise both are >= 1, the line is at most one
 * more than the number of line breaks in the text and the column at most one
 * more than the text's length; and a path json_locate.h calls malformed
 * ("a..b", "a.", "[x]", "a[1]b", empty key) gives -1.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_locate.h"

#include "fuzz_check.h"


/* The path grammar of json_locate.h, written independently of json_locate.c:
 * steps are a non-empty key (no '.', '[' ) or "[digits]"; a key is followed by
 * the end, '[' or '.'+key, and so is an index. */
static int
path_well_formed(const char *p)
{
	if (*p == '\0')
		return 1;
	for (;;) {
		if (*p == '[') {
			p++;
			if (*p < '0' || *p > '9')
				return 0;
			while (*p >= '0' && *p <= '9')
				p++;
			if (*p != ']')
				return 0;
			p++;
		} else {
			const char *start = p;

			while (*p != '\0' && *p != '.' && *p != '[')
				p++;
			if (p == start)
				return 0;
		}
		if (*p == '\0')
			return 1;
		if (*p == '.') {
			p++;
			if (*p == '\0' || *p == '.' || *p == '[')
				return 0;
		} else if (*p != '[') {
			return 0; /* "[0]x" */
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size);
	size_t plen = nl != NULL ? (size_t)(nl - data) : 0;
	size_t tlen, breaks = 0;
	char path[256];
	char *text;
	int line = -7, col = -7, rc;

	if (nl == NULL || plen >= sizeof(path) || memchr(data, '\0', plen) != NULL)
		return -1; /* not a "PATH\nTEXT" input */
	memcpy(path, data, plen);
	path[plen] = '\0';
	tlen = size - plen - 1;
	text = malloc(tlen > 0 ? tlen : 1);
	if (text == NULL)
		abort();
	if (tlen > 0)
		memcpy(text, nl + 1, tlen);

	rc = json_locate(text, tlen, path, &line, &col);
	CHECK(rc >= -1 && rc <= 1);
	if (!path_well_formed(path))
		CHECK(rc == -1);
	if (rc < 0) {
		CHECK(line == -7 && col == -7);
	} else {
		for (size_t i = 0; i < tlen; i++)
			if (text[i] == '\n' || text[i] == '\r')
				breaks++;
		CHECK(line >= 1 && col >= 1);
		CHECK((size_t)line <= breaks + 1);
		CHECK((size_t)col <= tlen + 1);
	}
	free(text);
	return 0;
}
