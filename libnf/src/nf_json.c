/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/* JSON configuration files for NFs: see onvm_nf_json.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_locate.h"
#include "onvm_nf_json.h"

int
nf_json_load_text(struct nf_json *j, const char *name, const char *text, size_t len, char *err,
		  size_t errlen)
{
	json_error_t je;

	memset(j, 0, sizeof(*j));
	snprintf(j->name, sizeof(j->name), "%s", name);
	j->text = malloc(len + 1);
	if (j->text == NULL) {
		snprintf(err, errlen, "%s: out of memory", name);
		return -ENOMEM;
	}
	memcpy(j->text, text, len);
	j->text[len] = '\0';
	j->len = len;
	j->root = json_loadb(j->text, len, JSON_REJECT_DUPLICATES, &je);
	if (j->root == NULL) {
		snprintf(err, errlen, "%s:%d:%d: %s", name, je.line, je.column, je.text);
		nf_json_free(j);
		return -EINVAL;
	}
	return 0;
}

int
nf_json_load_file(struct nf_json *j, const char *file, char *err, size_t errlen)
{
	FILE *f = fopen(file, "r");
	char *buf = NULL;
	size_t cap = 0, len = 0;
	int ret;

	if (f == NULL) {
		snprintf(err, errlen, "%s: %s", file, strerror(errno));
		return -ENOENT;
	}
	for (;;) {
		if (len == cap) {
			char *nb = realloc(buf, cap = cap ? cap * 2 : 4096);

			if (nb == NULL || cap > (64u << 20)) {
				free(nb == NULL ? buf : nb);
				fclose(f);
				snprintf(err, errlen, "%s: too large", file);
				return -EINVAL;
			}
			buf = nb;
		}
		size_t n = fread(buf + len, 1, cap - len, f);

		len += n;
		if (n == 0)
			break;
	}
	ret = ferror(f) ? -EIO : 0;
	fclose(f);
	if (ret == 0)
		ret = nf_json_load_text(j, file, buf, len, err, errlen);
	else
		snprintf(err, errlen, "%s: read error", file);
	free(buf);
	return ret;
}

void
nf_json_free(struct nf_json *j)
{
	if (j->root != NULL)
		json_decref(j->root);
	free(j->text);
	j->root = NULL;
	j->text = NULL;
}

int
nf_json_fail(const struct nf_json *j, char *err, size_t errlen, const char *path, const char *fmt,
	     ...)
{
	int line = 0, col = 0, n;
	va_list ap;

	if (json_locate(j->text, j->len, path, &line, &col) < 0)
		line = col = 0;
	n = snprintf(err, errlen, "%s:%d:%d: %s: ", j->name, line, col,
		     path[0] != '\0' ? path : "(top level)");
	if (n < 0 || (size_t)n >= errlen)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* "path.key" for messages (or just "key" at the root). */
static const char *
member_path(char *buf, size_t len, const char *path, const char *key)
{
	snprintf(buf, len, "%s%s%s", path, path[0] != '\0' ? "." : "", key);
	return buf;
}

int
nf_json_only_keys(const struct nf_json *j, const json_t *obj, const char *path,
		  const char *const *allowed, char *err, size_t errlen)
{
	const char *key;
	json_t *v;

	if (!json_is_object(obj))
		return nf_json_fail(j, err, errlen, path, "expected an object");
	json_object_foreach((json_t *)obj, key, v) {
		const char *const *a = allowed;
		char p[256];

		while (*a != NULL && strcmp(*a, key) != 0)
			a++;
		if (*a == NULL)
			return nf_json_fail(j, err, errlen, member_path(p, sizeof(p), path, key),
					    "unknown field");
	}
	return 0;
}

static json_t *
member(const struct nf_json *j, const json_t *obj, const char *path, const char *key,
       bool required, char *err, size_t errlen, int *ret)
{
	json_t *v = json_object_get(obj, key);

	*ret = 0;
	if (v == NULL && required) {
		char p[256];

		*ret = nf_json_fail(j, err, errlen, member_path(p, sizeof(p), path, key),
				    "required field missing");
	}
	return v;
}

int
nf_json_uint(const struct nf_json *j, const json_t *obj, const char *path, const char *key,
	     uint64_t min, uint64_t max, bool required, uint64_t *out, char *err, size_t errlen)
{
	int ret;
	json_t *v = member(j, obj, path, key, required, err, errlen, &ret);
	char p[256];

	if (v == NULL)
		return ret;
	member_path(p, sizeof(p), path, key);
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    (uint64_t)json_integer_value(v) < min || (uint64_t)json_integer_value(v) > max)
		return nf_json_fail(j, err, errlen, p, "expected an integer in %llu..%llu",
				    (unsigned long long)min, (unsigned long long)max);
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

int
nf_json_string(const struct nf_json *j, const json_t *obj, const char *path, const char *key,
	       bool required, const char **out, char *err, size_t errlen)
{
	int ret;
	json_t *v = member(j, obj, path, key, required, err, errlen, &ret);
	char p[256];

	if (v == NULL)
		return ret;
	if (!json_is_string(v) || json_string_length(v) == 0 ||
	    strlen(json_string_value(v)) != json_string_length(v))
		return nf_json_fail(j, err, errlen, member_path(p, sizeof(p), path, key),
				    "expected a non-empty string");
	*out = json_string_value(v);
	return 0;
}

int
nf_json_bool(const struct nf_json *j, const json_t *obj, const char *path, const char *key,
	     bool *out, char *err, size_t errlen)
{
	int ret;
	json_t *v = member(j, obj, path, key, false, err, errlen, &ret);
	char p[256];

	if (v == NULL)
		return ret;
	if (!json_is_boolean(v))
		return nf_json_fail(j, err, errlen, member_path(p, sizeof(p), path, key),
				    "expected true or false");
	*out = json_is_true(v);
	return 0;
}

int
nf_json_rule_fail(const struct nf_json *j, char *err, size_t errlen, const char *path,
		  const struct onvm_rule_err *e)
{
	char p[256];

	return nf_json_fail(j, err, errlen, onvm_rule_err_path(p, sizeof(p), path, e), "%s",
			    e->why);
}

int
nf_json_ipv4(const struct nf_json *j, const json_t *obj, const char *path, const char *key,
	     bool required, uint32_t *out, char *err, size_t errlen)
{
	int ret;
	json_t *v = member(j, obj, path, key, required, err, errlen, &ret);
	struct onvm_rule_err e;
	char p[256];

	if (v == NULL)
		return ret;
	if (onvm_rule_ipv4(v, out, &e) < 0)
		return nf_json_rule_fail(j, err, errlen, member_path(p, sizeof(p), path, key), &e);
	return 0;
}

int
nf_parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int b[6];
	char tail;

	if (s == NULL || strlen(s) != 17 ||
	    sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
		   &tail) != 6)
		return -EINVAL;
	for (int i = 0; i < 6; i++) {
		if (s[i * 3] == ' ' || s[i * 3] == '+' || s[i * 3] == '-' || (i < 5 && s[i * 3 + 2] != ':'))
			return -EINVAL;
		mac[i] = (uint8_t)b[i];
	}
	return 0;
}

#define FNV1A_PRIME UINT64_C(0x100000001b3)

uint64_t
nf_fnv1a(uint64_t h, const void *data, size_t len)
{
	const uint8_t *b = data;

	for (size_t i = 0; i < len; i++) {
		h ^= b[i];
		h *= FNV1A_PRIME;
	}
	return h;
}

uint64_t
nf_fnv1a_u64(uint64_t h, uint64_t v)
{
	for (int i = 0; i < 8; i++) {
		h ^= (v >> (8 * i)) & 0xff;
		h *= FNV1A_PRIME;
	}
	return h;
}
