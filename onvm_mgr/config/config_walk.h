/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * config_walk.h -- private to the config loader (config*.c): the walker that
 * every section parser reads JSON with, and the section parsers themselves.
 *
 * A walker carries the text being loaded and the caller's error buffer.  Each
 * helper below is handed the JSON path of the value it looks at
 * ("chains[1].services[2]"); when it rejects the value, cfg_fail() writes the
 * one message config.h promises, "NAME:LINE:COL: PATH: reason", with the line
 * and column found by json_locate() (Jansson keeps no positions).  So a
 * section parser never formats a position itself, and the first error ends
 * the load: every int function here returns 0, or -1 with the message
 * written.
 *
 * Callers: config*.c only, inside mgr_config_load_string(), on the thread
 * that called it.  There is no global state, so loads on different threads
 * do not interfere.  Only cfg_get_string_list() allocates (the strings
 * mgr_config_free() releases).
 */
#ifndef MGR_CONFIG_WALK_H
#define MGR_CONFIG_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "config.h"
#include "onvm_rule.h"

/* Room for a JSON path; a longer one is cut (paths only label messages). */
#define CFG_PATH_LEN 256

/* What cfg_valid_name() accepts, as the messages say it. */
#define CFG_NAME_RULE "use letters, digits, '_', '-' or '.'"

/* One load in progress. */
struct cfg_walk {
	const char *name; /* file name for messages */
	const char *text; /* the JSON text, for json_locate() */
	size_t len;
	char *err; /* the caller's buffer for the one message */
	size_t errlen;
	const struct mgr_config *cfg; /* the config being filled */
	const char *dir;	      /* value of ${CONFIG_DIR} */
};

/* ---- Errors ----------------------------------------------------------- */

/**
 * Write the load's error message and fail.
 *
 * Formats "NAME:LINE:COL: PATH: MSG" into w->err (cut at w->errlen), where
 * LINE:COL is where `path` starts in the text, or 0:0 when json_locate()
 * cannot place it; an empty `path` is printed as "(top level)".  Control
 * characters are replaced by '?' so the message stays on one line.
 *
 * @return
 *   -1, always, so that a caller can `return cfg_fail(...)`.
 */
int cfg_fail(struct cfg_walk *w, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/**
 * Replace every control character (< 0x20, 0x7f) in `msg` with '?'.
 * Messages quote keys and values from the file; this keeps them on one line.
 */
void cfg_one_line(char *msg);

/* ---- Paths ------------------------------------------------------------ */

/**
 * `base` + "." + `key` into `out` (CFG_PATH_LEN bytes); just `key` when
 * `base` is "".  `out` may be `base` itself, to extend a path in place.
 */
void cfg_join_key(char *out, const char *base, const char *key);

/**
 * `base` + "[i]" into `out` (CFG_PATH_LEN bytes); `out` may be `base`.
 */
void cfg_join_index(char *out, const char *base, size_t i);

/**
 * The member `key` of object `obj`, and its path `base`.`key` in `out`
 * (CFG_PATH_LEN bytes), ready for a message about it.
 *
 * @return
 *   The member, or NULL if `obj` has none (`out` is written either way).
 */
json_t *cfg_member(const json_t *obj, const char *base, const char *key, char *out);

/* ---- Shape ------------------------------------------------------------ */

/**
 * Reject a member of `obj` whose key is not in `allowed`.
 *
 * Unknown fields are errors, not warnings: a misspelt "exit_prot" silently
 * ignored is a chain that drops everything.  O(members x allowed).
 *
 * @param allowed
 *   NULL-terminated list of the keys `obj` may have.
 * @return
 *   0, or -1 ("PATH.KEY: unknown field" for the first unknown key).
 */
int cfg_check_keys(struct cfg_walk *w, const json_t *obj, const char *path,
		   const char *const *allowed);

/**
 * Fail unless `v` is of JSON type `type`.
 *
 * @param what
 *   The expected value as the message names it ("a port object").
 * @return
 *   0, or -1 ("expected WHAT, got TYPE").
 */
int cfg_expect_type(struct cfg_walk *w, const json_t *v, const char *path, json_type type,
		    const char *what);

/**
 * Fail unless `v` is an object whose keys are all in `keys`: cfg_expect_type()
 * then cfg_check_keys().  Every object of the schema (a section, an array
 * entry such as a port, a BFD session's "auth") is opened with it.
 *
 * @return
 *   0, or -1 as cfg_expect_type() or cfg_check_keys().
 */
int cfg_check_object(struct cfg_walk *w, const json_t *v, const char *path, const char *what,
		     const char *const *keys);

/* ---- Fields ----------------------------------------------------------- */

/**
 * Copy `in` to `out`, expanding ${CONFIG_DIR} (w->dir) and ${NAME} (the
 * environment variable NAME).  Reads the environment with getenv(): not
 * safe against a concurrent setenv().
 *
 * @return
 *   0, or -1 if a ${ is unterminated, a name is empty or 128 bytes or longer,
 *   a variable is not set, or the result does not fit in `outlen` bytes.
 */
int cfg_expand_vars(struct cfg_walk *w, const char *path, const char *in, char *out, size_t outlen);

/**
 * The string member `key` of `obj` (at path `base`) into `out`.
 *
 * @param required
 *   Whether a missing member is an error; if not, `out` is left as it is.
 * @param expand
 *   Whether to expand variables (cfg_expand_vars()), for file and device names.
 * @return
 *   0, or -1 if the member is missing and required, not a string, empty, or
 *   does not fit in `outlen` bytes (after expansion).
 */
int cfg_get_string(struct cfg_walk *w, const json_t *obj, const char *base, const char *key,
		   char *out, size_t outlen, bool required, bool expand);

/**
 * The integer `v` (at `path`), which must lie in `min`..`max`, into `*out`.
 *
 * @return
 *   0, or -1 if `v` is not an integer or out of range (`*out` untouched).
 */
int cfg_check_uint(struct cfg_walk *w, const json_t *v, const char *path, uint64_t min,
		   uint64_t max, uint64_t *out);

/**
 * The optional integer member `key` of `obj` into `*out`, as cfg_check_uint().
 *
 * @return
 *   0 (`*out` untouched if there is no such member), or -1.
 */
int cfg_get_uint(struct cfg_walk *w, const json_t *obj, const char *base, const char *key,
		 uint64_t min, uint64_t max, uint64_t *out);

/*
 * cfg_get_uint() straight into `field`, an lvalue of any unsigned type wide
 * enough for `max`; the field keeps its value (the default) when the member
 * is absent.  Evaluates to cfg_get_uint()'s result, and `field` twice.
 */
#define CFG_UINT_FIELD(w, obj, base, key, min, max, field)                                         \
	({                                                                                         \
		uint64_t v_ = (field);                                                             \
		int r_ = cfg_get_uint(w, obj, base, key, min, max, &v_);                           \
		(field) = v_;                                                                      \
		r_;                                                                                \
	})

/**
 * The optional boolean member `key` of `obj` into `*out`.
 *
 * @return
 *   0 (`*out` untouched if there is no such member), or -1 if it is not
 *   true or false.
 */
int cfg_get_bool(struct cfg_walk *w, const json_t *obj, const char *base, const char *key,
		 bool *out);

/**
 * The optional section `key` of the root object into `*out` (NULL if absent):
 * an object whose keys are all in `keys` (cfg_check_object()).  `key` is
 * also the section's path, so this is for top-level sections only.
 *
 * @return
 *   0, or -1 if the member is not an object or has a key not in `keys`.
 */
int cfg_get_section(struct cfg_walk *w, const json_t *root, const char *key,
		    const char *const *keys, json_t **out);

/**
 * The optional array member `key` of `obj` into `*out` (NULL if absent).
 *
 * @return
 *   0, or -1 if the member is not an array or has more than `max` entries.
 */
int cfg_get_array(struct cfg_walk *w, const json_t *obj, const char *base, const char *key,
		  size_t max, json_t **out);

/**
 * The optional array of strings `key` of `obj`, each expanded
 * (cfg_expand_vars()) and strdup()ed, appended to the argv-style `out` from
 * index `*n` on; `*n` counts each string stored, so on error the caller still
 * frees every string already stored (mgr_config_free() does).
 *
 * @return
 *   0, or -1 if the member is not an array of at most MGR_CFG_MAX_ARGS
 *   strings, an entry fails cfg_expand_vars() (into MGR_CFG_DEV_LEN bytes),
 *   or strdup() fails ("out of memory").  The caller's `out` must have room for
 *   MGR_CFG_MAX_ARGS entries past `*n`.
 */
int cfg_get_string_list(struct cfg_walk *w, const json_t *obj, const char *base, const char *key,
			char **out, int *n);

/**
 * Write the error of a value common/onvm_rule.h refused, as cfg_fail():
 * "NAME:LINE:COL: PATH.WHERE: WHY", placed at the bad part of the value
 * (`path` is the value's, e->where the part's, e.g. "dport[1]").
 *
 * @return
 *   -1, always.
 */
int cfg_rule_fail(struct cfg_walk *w, const char *path, const struct onvm_rule_err *e);

/**
 * The IPv4 address string `v` (at `path`) into `*ip`, host byte order, as
 * onvm_rule_ipv4() reads it ("a.b.c.d", strictly).
 *
 * @return
 *   0, or -1 if `v` is not a string or not an address (`*ip` untouched).
 */
int cfg_ipv4(struct cfg_walk *w, const json_t *v, const char *path, uint32_t *ip);

/**
 * Whether `s` is a name the manager accepts (ports, nodes, file prefixes):
 * only letters, digits, '_', '-' and '.' (CFG_NAME_RULE).  "" is valid.
 */
bool cfg_valid_name(const char *s);

/* ---- Sections (one file each, see config.h) ----------------------------- */

/*
 * Each parses its part of the root object `root` into `cfg` and returns 0, or
 * -1 with the message written.  config.c calls them in this order, and the
 * order matters: a section may refer only to what an earlier one defined
 * (chains name ports, flow rules name chains).  An absent section leaves
 * `cfg`'s defaults.
 */
int cfg_parse_node(struct cfg_walk *w, const json_t *root, struct mgr_config *cfg);
int cfg_parse_tunables(struct cfg_walk *w, const json_t *root, struct mgr_config *cfg);
int cfg_parse_units(struct cfg_walk *w, const json_t *root, struct mgr_config *cfg);
int cfg_parse_ports(struct cfg_walk *w, const json_t *root, struct mgr_config *cfg);
int cfg_parse_nfs(struct cfg_walk *w, const json_t *root, struct mgr_config *cfg);
int cfg_parse_containers(struct cfg_walk *w, const json_t *root, struct mgr_config *cfg);
int cfg_parse_chains(struct cfg_walk *w, const json_t *root, struct mgr_config *cfg);
int cfg_parse_rules(struct cfg_walk *w, const json_t *root, struct mgr_config *cfg);
int cfg_parse_bfd(struct cfg_walk *w, const json_t *root, struct mgr_config *cfg);
int cfg_parse_remote(struct cfg_walk *w, const json_t *root, struct mgr_config *cfg);
/* A chain's "ftc" object (config_ftc.c), once its ports and services are read. */
int cfg_parse_ftc(struct cfg_walk *w, const json_t *chain, const char *base,
		  struct mgr_config *cfg, struct mgr_chain_cfg *cc);

/**
 * A reference to a port of `cfg` (parsed already): its name, or its index.
 *
 * @return
 *   0 with the index in `*out`, or -1 if `v` is neither a string nor an
 *   integer, names no port, or is an index past the last port.
 */
int cfg_port_ref(struct cfg_walk *w, const json_t *v, const char *path,
		 const struct mgr_config *cfg, int *out);

#endif /* MGR_CONFIG_WALK_H */
