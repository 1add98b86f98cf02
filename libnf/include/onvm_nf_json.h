/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * onvm_nf_json.h -- JSON configuration files for NFs (rules, backends,
 * policies), with errors an operator can act on.
 *
 * Like the manager's config, every error names the place and the field:
 * "rules.json:12:9: rules[3].dst: \"10.0.0.1/8\" has host bits set (the
 * network is 10.0.0.0/8)".  Syntax errors come from Jansson's own position;
 * semantic errors are placed with json_locate() on the original text.
 * Unknown fields are errors (a typo must not silently become a default).
 * Only used at start-up: nothing here is on a data path.
 *
 * Paths follow json_locate's syntax: "rules[3].dst", "" for the root.
 */
#ifndef ONVM_NF_JSON_H
#define ONVM_NF_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "onvm_rule.h"

#ifdef __cplusplus
extern "C" {
#endif

struct nf_json {
	json_t *root;
	char *text;
	size_t len;
	char name[256]; /* file name used in messages */
};

/* Load and parse a file / a string (name is used in messages).  Returns 0 or
 * -EINVAL / -ENOENT with "NAME:LINE:COL: reason" in err. */
int nf_json_load_file(struct nf_json *j, const char *file, char *err, size_t errlen);
int nf_json_load_text(struct nf_json *j, const char *name, const char *text, size_t len,
		      char *err, size_t errlen);
void nf_json_free(struct nf_json *j);

/* Write "NAME:LINE:COL: PATH: <message>" to err and return -EINVAL. */
int nf_json_fail(const struct nf_json *j, char *err, size_t errlen, const char *path,
		 const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* -EINVAL (naming the first offender) if `obj` is not an object or has a key
 * outside the NULL-terminated `allowed` list. */
int nf_json_only_keys(const struct nf_json *j, const json_t *obj, const char *path,
		      const char *const *allowed, char *err, size_t errlen);

/*
 * Typed members of object `obj` (found at `path`).  A missing key is an
 * error when `required`, otherwise *out keeps its value (the default).
 * Integers must be whole numbers in [min, max]; strings non-empty.
 */
int nf_json_uint(const struct nf_json *j, const json_t *obj, const char *path, const char *key,
		 uint64_t min, uint64_t max, bool required, uint64_t *out, char *err,
		 size_t errlen);
int nf_json_string(const struct nf_json *j, const json_t *obj, const char *path, const char *key,
		   bool required, const char **out, char *err, size_t errlen);
int nf_json_bool(const struct nf_json *j, const json_t *obj, const char *path, const char *key,
		 bool *out, char *err, size_t errlen);

/*
 * Rule values -- addresses, prefixes, ports, protocols and 5-tuple match
 * objects -- are read by common/onvm_rule.h, the one parser the manager's
 * flow rules use too.  nf_json_rule_fail() reports what it refused in this
 * file's form: "NAME:LINE:COL: PATH.WHERE: WHY", placed at the bad part
 * (path "rules[3]" and where "dport[1]": the rule's second port), and
 * returns -EINVAL.
 */
int nf_json_rule_fail(const struct nf_json *j, char *err, size_t errlen, const char *path,
		      const struct onvm_rule_err *e);

/* The IPv4 address member `key` of `obj` ("a.b.c.d", onvm_rule_ipv4()) into
 * *out, host byte order; as nf_json_uint() for `required`.  0 or -EINVAL. */
int nf_json_ipv4(const struct nf_json *j, const json_t *obj, const char *path, const char *key,
		 bool required, uint32_t *out, char *err, size_t errlen);

/* MAC "aa:bb:cc:dd:ee:ff", strictly.  Returns 0 or -EINVAL. */
int nf_parse_mac(const char *s, uint8_t mac[6]);

/*
 * FNV-1a, 64 bits, for the fingerprint of a parsed config that an NF keeps
 * in its state, so that a standby refuses state another config made.  Start
 * from NF_FNV1A_INIT; nf_fnv1a() adds `len` bytes, nf_fnv1a_u64() the eight
 * bytes of `v`, least significant first (the same digest on any byte
 * order).  Not a cryptographic hash.  O(len); any thread.
 */
#define NF_FNV1A_INIT UINT64_C(0xcbf29ce484222325)
uint64_t nf_fnv1a(uint64_t h, const void *data, size_t len);
uint64_t nf_fnv1a_u64(uint64_t h, uint64_t v);

#ifdef __cplusplus
}
#endif
#endif /* ONVM_NF_JSON_H */
