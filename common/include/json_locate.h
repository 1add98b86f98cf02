/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * json_locate.h -- map a JSON path to a line/column in the JSON source text.
 *
 * Jansson, which parses the manager's configuration, does not remember where
 * a value came from, so a semantic error found after parsing ("service id out
 * of range") could otherwise only name the field, not the place.  This module
 * rescans the original text and reports where the value addressed by a path
 * starts, so errors can read "file:line:col: chains[1].services[2]: ...".
 *
 * It is self-contained: no allocation, no dependencies, bounded recursion.
 */
#ifndef JSON_LOCATE_H
#define JSON_LOCATE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Deepest nesting of objects/arrays json_locate() accepts; deeper text is rejected. */
#define JSON_LOCATE_MAX_DEPTH 64

/*
 * Find the value addressed by `path` in the JSON text and report its 1-based line and column
 * (column counts bytes, tabs count as 1). Path syntax: object keys separated by '.', array
 * indexes in brackets: "chains[1].services[2]", "nfs[0].binary", "ports". An empty path ""
 * means the root value. If the full path does not exist, report the position of the deepest
 * existing prefix (e.g. the object that lacks the key) and return 1; return 0 on an exact
 * match; return -1 if the text is not parseable up to that point or args are invalid.
 * Keys containing '.' or '[' are not addressable (documented limitation). Key comparison is on
 * the raw JSON string contents with standard escapes decoded (\" \\ \/ \b \f \n \r \t \uXXXX for
 * ASCII at least).
 *
 * Further details:
 *  - `text` need not be NUL-terminated; no byte at or past `len` is read.
 *  - Line breaks are "\n", "\r\n" and a lone "\r".
 *  - \uXXXX escapes (including surrogate pairs) are decoded to UTF-8 before comparing, so a key
 *    may be given in the path as UTF-8.  A lone surrogate makes the text unparseable.
 *  - With duplicate keys in one object the first occurrence wins.
 *  - Only the text up to the end of the located value (or of the container reported on a
 *    return of 1) is checked; anything after it is not looked at.
 *  - Nesting deeper than JSON_LOCATE_MAX_DEPTH is treated as unparseable.
 *  - A malformed path ("a..b", "a.", "[x]", "a[1]b", empty key) is an invalid argument.
 *  - On -1, *line and *column are left untouched.
 */
int json_locate(const char *text, size_t len, const char *path, int *line, int *column);

#ifdef __cplusplus
}
#endif

#endif /* JSON_LOCATE_H */
