/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * config_walk.c -- the field helpers every config section parser reads JSON
 * with; the contracts are in config_walk.h.
 *
 * Why a walker at all: Jansson keeps no positions for values, so an error can
 * only be placed by re-scanning the text for the value's JSON path
 * (json_locate()).  Every helper therefore takes the path of what it reads,
 * and cfg_fail() is the one place that turns a path and a reason into the
 * "NAME:LINE:COL: PATH: reason" message config.h promises.  Paths are built
 * in fixed CFG_PATH_LEN buffers on the stack and cut rather than allocated,
 * as they only label messages (a cut path may not be found in the text; the
 * message then says 0:0).
 *
 * Strings that name files or devices may use ${CONFIG_DIR} (the directory of
 * the config file) and ${NAME} for environment variables; an undefined
 * variable is an error, not an empty string.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "config_walk.h"
#include "json_locate.h"
#include "onvm_rule.h"

void
cfg_one_line(char *msg)
{
	for (; *msg != '\0'; msg++)
		if ((unsigned char)*msg < 0x20 || *msg == 0x7f)
			*msg = '?';
}

int
cfg_fail(struct cfg_walk *w, const char *path, const char *fmt, ...)
{
	char msg[MGR_CFG_ERR_LEN];
	int line = 0, col = 0;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (json_locate(w->text, w->len, path, &line, &col) < 0)
		line = col = 0;
	snprintf(w->err, w->errlen, "%s:%d:%d: %s: %s", w->name, line, col,
		 path[0] ? path : "(top level)", msg);
	cfg_one_line(w->err);
	return -1;
}

/* Append `s` to the path in `out` (cut at CFG_PATH_LEN: paths only label errors). */
static void
path_append(char *out, const char *s)
{
	size_t n = strlen(out), k = strlen(s);

	if (n + k >= CFG_PATH_LEN)
		k = CFG_PATH_LEN - 1 - n;
	memcpy(out + n, s, k);
	out[n + k] = '\0';
}

void
cfg_join_key(char *out, const char *base, const char *key)
{
	if (out != base) {
		out[0] = '\0';
		path_append(out, base);
	}
	if (out[0] != '\0')
		path_append(out, ".");
	path_append(out, key);
}

void
cfg_join_index(char *out, const char *base, size_t i)
{
	char idx[24];

	if (out != base) {
		out[0] = '\0';
		path_append(out, base);
	}
	sprintf(idx, "[%zu]", i);
	path_append(out, idx);
}

json_t *
cfg_member(const json_t *obj, const char *base, const char *key, char *out)
{
	cfg_join_key(out, base, key);
	return json_object_get(obj, key);
}

/* Reject fields we do not know; `allowed` is NULL-terminated. */
int
cfg_check_keys(struct cfg_walk *w, const json_t *obj, const char *path, const char *const *allowed)
{
	const char *key;
	json_t *val;

	json_object_foreach((json_t *)obj, key, val) {
		const char *const *a;
		char p[CFG_PATH_LEN];

		for (a = allowed; *a != NULL; a++)
			if (strcmp(*a, key) == 0)
				break;
		if (*a == NULL) {
			cfg_join_key(p, path, key);
			return cfg_fail(w, p, "unknown field");
		}
	}
	return 0;
}

int
cfg_check_object(struct cfg_walk *w, const json_t *v, const char *path, const char *what,
		 const char *const *keys)
{
	if (cfg_expect_type(w, v, path, JSON_OBJECT, what) < 0)
		return -1;
	return cfg_check_keys(w, v, path, keys);
}

int
cfg_expect_type(struct cfg_walk *w, const json_t *v, const char *path, json_type type,
		const char *what)
{
	if (json_typeof(v) != type)
		return cfg_fail(w, path, "expected %s, got %s", what, onvm_rule_json_type(v));
	return 0;
}

/* Expand ${CONFIG_DIR} and ${ENV} references into `out`. */
int
cfg_expand_vars(struct cfg_walk *w, const char *path, const char *in, char *out, size_t outlen)
{
	size_t o = 0;

	while (*in != '\0') {
		const char *val;
		char var[128];

		if (in[0] == '$' && in[1] == '{') {
			const char *end = strchr(in + 2, '}');
			size_t n;

			if (end == NULL)
				return cfg_fail(w, path, "unterminated ${ in \"%s\"", in);
			n = end - (in + 2);
			if (n == 0 || n >= sizeof(var))
				return cfg_fail(w, path, "bad variable name");
			memcpy(var, in + 2, n);
			var[n] = '\0';
			val = strcmp(var, "CONFIG_DIR") == 0 ? w->dir : getenv(var);
			if (val == NULL)
				return cfg_fail(w, path, "variable ${%s} is not set", var);
			for (; *val != '\0'; val++) {
				if (o + 1 >= outlen)
					return cfg_fail(w, path, "too long after expansion");
				out[o++] = *val;
			}
			in = end + 1;
			continue;
		}
		if (o + 1 >= outlen)
			return cfg_fail(w, path, "too long (max %zu bytes)", outlen - 1);
		out[o++] = *in++;
	}
	out[o] = '\0';
	return 0;
}

/* A string field; `required` says whether absence is an error. */
int
cfg_get_string(struct cfg_walk *w, const json_t *obj, const char *base, const char *key, char *out,
	       size_t outlen, bool required, bool expand)
{
	char p[CFG_PATH_LEN];
	json_t *v = cfg_member(obj, base, key, p);

	if (v == NULL) {
		if (required)
			return cfg_fail(w, base, "missing required field \"%s\"", key);
		return 0;
	}
	if (cfg_expect_type(w, v, p, JSON_STRING, "a string") < 0)
		return -1;
	if (json_string_length(v) == 0)
		return cfg_fail(w, p, "must not be empty");
	if (expand)
		return cfg_expand_vars(w, p, json_string_value(v), out, outlen);
	if (json_string_length(v) >= outlen)
		return cfg_fail(w, p, "too long (max %zu bytes)", outlen - 1);
	memcpy(out, json_string_value(v), json_string_length(v) + 1);
	return 0;
}

int
cfg_check_uint(struct cfg_walk *w, const json_t *v, const char *path, uint64_t min, uint64_t max,
	       uint64_t *out)
{
	json_int_t x;

	if (!json_is_integer(v))
		return cfg_fail(w, path, "expected an integer %" PRIu64 "..%" PRIu64 ", got %s",
				min, max, onvm_rule_json_type(v));
	x = json_integer_value(v);
	if (x < 0 || (uint64_t)x < min || (uint64_t)x > max)
		return cfg_fail(w, path, "%lld is out of range %" PRIu64 "..%" PRIu64, (long long)x,
				min, max);
	*out = (uint64_t)x;
	return 0;
}

int
cfg_get_uint(struct cfg_walk *w, const json_t *obj, const char *base, const char *key, uint64_t min,
	     uint64_t max, uint64_t *out)
{
	char p[CFG_PATH_LEN];
	json_t *v = cfg_member(obj, base, key, p);

	if (v == NULL)
		return 0; /* keep the default */
	return cfg_check_uint(w, v, p, min, max, out);
}

int
cfg_get_bool(struct cfg_walk *w, const json_t *obj, const char *base, const char *key, bool *out)
{
	char p[CFG_PATH_LEN];
	json_t *v = cfg_member(obj, base, key, p);

	if (v == NULL)
		return 0;
	if (!json_is_boolean(v))
		return cfg_fail(w, p, "expected a boolean, got %s", onvm_rule_json_type(v));
	*out = json_is_true(v);
	return 0;
}

int
cfg_get_section(struct cfg_walk *w, const json_t *root, const char *key, const char *const *keys,
		json_t **out)
{
	json_t *v = json_object_get(root, key);

	*out = NULL;
	if (v == NULL)
		return 0;
	if (cfg_check_object(w, v, key, "an object", keys) < 0)
		return -1;
	*out = v;
	return 0;
}

int
cfg_get_array(struct cfg_walk *w, const json_t *obj, const char *base, const char *key, size_t max,
	      json_t **out)
{
	char p[CFG_PATH_LEN];
	json_t *v = cfg_member(obj, base, key, p);

	*out = NULL;
	if (v == NULL)
		return 0;
	if (cfg_expect_type(w, v, p, JSON_ARRAY, "an array") < 0)
		return -1;
	if (json_array_size(v) > max)
		return cfg_fail(w, p, "at most %zu entries allowed, got %zu", max,
				json_array_size(v));
	*out = v;
	return 0;
}

/* An array of strings into freshly allocated argv-style entries. */
int
cfg_get_string_list(struct cfg_walk *w, const json_t *obj, const char *base, const char *key,
		    char **out, int *n)
{
	char p[CFG_PATH_LEN], ep[CFG_PATH_LEN], buf[MGR_CFG_DEV_LEN];
	json_t *arr, *v;
	size_t i;

	if (cfg_get_array(w, obj, base, key, MGR_CFG_MAX_ARGS, &arr) < 0)
		return -1;
	if (arr == NULL)
		return 0;
	cfg_join_key(p, base, key);
	json_array_foreach(arr, i, v) {
		cfg_join_index(ep, p, i);
		if (cfg_expect_type(w, v, ep, JSON_STRING, "a string") < 0)
			return -1;
		if (cfg_expand_vars(w, ep, json_string_value(v), buf, sizeof(buf)) < 0)
			return -1;
		out[*n] = strdup(buf);
		if (out[*n] == NULL)
			return cfg_fail(w, ep, "out of memory");
		(*n)++;
	}
	return 0;
}

int
cfg_rule_fail(struct cfg_walk *w, const char *path, const struct onvm_rule_err *e)
{
	char p[CFG_PATH_LEN];

	return cfg_fail(w, onvm_rule_err_path(p, sizeof(p), path, e), "%s", e->why);
}

int
cfg_ipv4(struct cfg_walk *w, const json_t *v, const char *path, uint32_t *ip)
{
	struct onvm_rule_err e;

	if (onvm_rule_ipv4(v, ip, &e) < 0)
		return cfg_rule_fail(w, path, &e);
	return 0;
}

bool
cfg_valid_name(const char *s)
{
	for (; *s != '\0'; s++)
		if (!(isalnum((unsigned char)*s) || *s == '_' || *s == '-' || *s == '.'))
			return false;
	return true;
}
