/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * config.c -- JSON node configuration (Jansson).
 *
 * The walker carries the JSON path of the value it is looking at
 * ("chains[1].services[2]"); any rejection turns that path into a line and
 * column through json_locate(), because Jansson keeps no positions for
 * values.  Unknown fields are errors, not warnings: a misspelt "exit_prot"
 * silently ignored is a chain that drops everything.
 *
 * Strings that name files or devices may use ${CONFIG_DIR} (the directory of
 * the config file) and ${NAME} for environment variables; an undefined
 * variable is an error.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bfd_net.h"
#include "config.h"
#include "json_locate.h"

#define PATH_BUF 256

struct cfg_walk {
	const char *name; /* file name for messages */
	const char *text;
	size_t len;
	char *err;
	size_t errlen;
	const struct mgr_config *cfg;
	const char *dir; /* value of ${CONFIG_DIR} */
};

/* Messages quote keys and values from the file: keep them on one line. */
static void
one_line(char *msg)
{
	for (; *msg != '\0'; msg++)
		if ((unsigned char)*msg < 0x20 || *msg == 0x7f)
			*msg = '?';
}

static int __attribute__((format(printf, 3, 4)))
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
	one_line(w->err);
	return -1;
}

static const char *
json_type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a real number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	default:
		return "null";
	}
}

/* Append `s` to the path in `out` (cut at PATH_BUF: paths only label errors). */
static void
path_append(char *out, const char *s)
{
	size_t n = strlen(out), k = strlen(s);

	if (n + k >= PATH_BUF)
		k = PATH_BUF - 1 - n;
	memcpy(out + n, s, k);
	out[n + k] = '\0';
}

static void
join_key(char *out, const char *base, const char *key)
{
	if (out != base) {
		out[0] = '\0';
		path_append(out, base);
	}
	if (out[0] != '\0')
		path_append(out, ".");
	path_append(out, key);
}

static void
join_index(char *out, const char *base, size_t i)
{
	char idx[24];

	if (out != base) {
		out[0] = '\0';
		path_append(out, base);
	}
	sprintf(idx, "[%zu]", i);
	path_append(out, idx);
}

/* Reject fields we do not know; `allowed` is NULL-terminated. */
static int
check_keys(struct cfg_walk *w, const json_t *obj, const char *path, const char *const *allowed)
{
	const char *key;
	json_t *val;

	json_object_foreach((json_t *)obj, key, val) {
		const char *const *a;
		char p[PATH_BUF];

		for (a = allowed; *a != NULL; a++)
			if (strcmp(*a, key) == 0)
				break;
		if (*a == NULL) {
			join_key(p, path, key);
			return cfg_fail(w, p, "unknown field");
		}
	}
	return 0;
}

static int
expect_type(struct cfg_walk *w, const json_t *v, const char *path, json_type type,
	    const char *what)
{
	if (json_typeof(v) != type)
		return cfg_fail(w, path, "expected %s, got %s", what, json_type_name(v));
	return 0;
}

/* Expand ${CONFIG_DIR} and ${ENV} references into `out`. */
static int
expand_vars(struct cfg_walk *w, const char *path, const char *in, char *out, size_t outlen)
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
static int
get_string(struct cfg_walk *w, const json_t *obj, const char *base, const char *key, char *out,
	   size_t outlen, bool required, bool expand)
{
	json_t *v = json_object_get(obj, key);
	char p[PATH_BUF];

	join_key(p, base, key);
	if (v == NULL) {
		if (required)
			return cfg_fail(w, base, "missing required field \"%s\"", key);
		return 0;
	}
	if (expect_type(w, v, p, JSON_STRING, "a string") < 0)
		return -1;
	if (json_string_length(v) == 0)
		return cfg_fail(w, p, "must not be empty");
	if (expand)
		return expand_vars(w, p, json_string_value(v), out, outlen);
	if (json_string_length(v) >= outlen)
		return cfg_fail(w, p, "too long (max %zu bytes)", outlen - 1);
	memcpy(out, json_string_value(v), json_string_length(v) + 1);
	return 0;
}

static int
check_uint(struct cfg_walk *w, const json_t *v, const char *path, uint64_t min, uint64_t max,
	   uint64_t *out)
{
	json_int_t x;

	if (!json_is_integer(v))
		return cfg_fail(w, path, "expected an integer %" PRIu64 "..%" PRIu64 ", got %s",
				min, max, json_type_name(v));
	x = json_integer_value(v);
	if (x < 0 || (uint64_t)x < min || (uint64_t)x > max)
		return cfg_fail(w, path, "%lld is out of range %" PRIu64 "..%" PRIu64,
				(long long)x, min, max);
	*out = (uint64_t)x;
	return 0;
}

static int
get_uint(struct cfg_walk *w, const json_t *obj, const char *base, const char *key, uint64_t min,
	 uint64_t max, uint64_t *out)
{
	json_t *v = json_object_get(obj, key);
	char p[PATH_BUF];

	if (v == NULL)
		return 0; /* keep the default */
	join_key(p, base, key);
	return check_uint(w, v, p, min, max, out);
}

#define GET_UINT_FIELD(w, obj, base, key, min, max, field)                                  \
	({                                                                                   \
		uint64_t v_ = (field);                                                       \
		int r_ = get_uint(w, obj, base, key, min, max, &v_);                         \
		(field) = v_;                                                                \
		r_;                                                                          \
	})

static int
get_object(struct cfg_walk *w, const json_t *root, const char *key, json_t **out)
{
	json_t *v = json_object_get(root, key);

	*out = NULL;
	if (v == NULL)
		return 0;
	if (expect_type(w, v, key, JSON_OBJECT, "an object") < 0)
		return -1;
	*out = v;
	return 0;
}

static int
get_array(struct cfg_walk *w, const json_t *obj, const char *base, const char *key, size_t max,
	  json_t **out)
{
	json_t *v = json_object_get(obj, key);
	char p[PATH_BUF];

	*out = NULL;
	if (v == NULL)
		return 0;
	join_key(p, base, key);
	if (expect_type(w, v, p, JSON_ARRAY, "an array") < 0)
		return -1;
	if (json_array_size(v) > max)
		return cfg_fail(w, p, "at most %zu entries allowed, got %zu", max,
				json_array_size(v));
	*out = v;
	return 0;
}

/* An array of strings into freshly allocated argv-style entries. */
static int
get_string_list(struct cfg_walk *w, const json_t *obj, const char *base, const char *key,
		char **out, int *n)
{
	char p[PATH_BUF], ep[PATH_BUF], buf[MGR_CFG_DEV_LEN];
	json_t *arr, *v;
	size_t i;

	if (get_array(w, obj, base, key, MGR_CFG_MAX_ARGS, &arr) < 0)
		return -1;
	if (arr == NULL)
		return 0;
	join_key(p, base, key);
	json_array_foreach(arr, i, v) {
		join_index(ep, p, i);
		if (expect_type(w, v, ep, JSON_STRING, "a string") < 0)
			return -1;
		if (expand_vars(w, ep, json_string_value(v), buf, sizeof(buf)) < 0)
			return -1;
		out[*n] = strdup(buf);
		if (out[*n] == NULL)
			return cfg_fail(w, ep, "out of memory");
		(*n)++;
	}
	return 0;
}

static bool
valid_name(const char *s)
{
	for (; *s != '\0'; s++)
		if (!(isalnum((unsigned char)*s) || *s == '_' || *s == '-' || *s == '.'))
			return false;
	return true;
}

static int
parse_node(struct cfg_walk *w, const json_t *root, struct mgr_config *cfg)
{
	static const char *const keys[] = {"name", "file_prefix", "lcores", "eal_args", NULL};
	json_t *node;

	if (get_object(w, root, "node", &node) < 0)
		return -1;
	if (node == NULL)
		return 0;
	if (check_keys(w, node, "node", keys) < 0 ||
	    get_string(w, node, "node", "name", cfg->node_name, sizeof(cfg->node_name), false,
		       false) < 0 ||
	    get_string(w, node, "node", "file_prefix", cfg->file_prefix,
		       sizeof(cfg->file_prefix), false, true) < 0 ||
	    get_string(w, node, "node", "lcores", cfg->lcores, sizeof(cfg->lcores), false,
		       false) < 0 ||
	    get_string_list(w, node, "node", "eal_args", cfg->eal_args, &cfg->n_eal) < 0)
		return -1;
	if (!valid_name(cfg->node_name))
		return cfg_fail(w, "node.name", "use letters, digits, '_', '-' or '.'");
	if (!valid_name(cfg->file_prefix))
		return cfg_fail(w, "node.file_prefix", "use letters, digits, '_', '-' or '.'");
	return 0;
}

static bool
is_pow2(uint64_t x)
{
	return x != 0 && (x & (x - 1)) == 0;
}

static int
parse_tunables(struct cfg_walk *w, const json_t *root, struct mgr_config *cfg)
{
	static const char *const pool_keys[] = {"mbufs", "cache", NULL};
	static const char *const ring_keys[] = {"nf_size", "port_size", "rx_desc", "tx_desc",
						NULL};
	static const char *const stats_keys[] = {"interval_ms", NULL};
	static const char *const idle_keys[] = {"spin_us", "max_sleep_us", NULL};
	static const char *const nfs_keys[] = {"start_timeout_ms", "heartbeat_ms", "cpus",
					       "standby_cpus", NULL};
	static const char *const startup_keys[] = {"link_wait_ms", NULL};
	static const char *const state_keys[] = {"pool_mb", NULL};
	json_t *o;

	if (get_object(w, root, "pool", &o) < 0)
		return -1;
	if (o != NULL &&
	    (check_keys(w, o, "pool", pool_keys) < 0 ||
	     GET_UINT_FIELD(w, o, "pool", "mbufs", 1024, 1u << 24, cfg->nb_mbufs) < 0 ||
	     GET_UINT_FIELD(w, o, "pool", "cache", 0, 512, cfg->mbuf_cache) < 0))
		return -1;
	if (get_object(w, root, "rings", &o) < 0)
		return -1;
	if (o != NULL &&
	    (check_keys(w, o, "rings", ring_keys) < 0 ||
	     GET_UINT_FIELD(w, o, "rings", "nf_size", 64, 1u << 20, cfg->nf_ring_size) < 0 ||
	     GET_UINT_FIELD(w, o, "rings", "port_size", 64, 1u << 20, cfg->port_ring_size) < 0 ||
	     GET_UINT_FIELD(w, o, "rings", "rx_desc", 64, 16384, cfg->rx_desc) < 0 ||
	     GET_UINT_FIELD(w, o, "rings", "tx_desc", 64, 16384, cfg->tx_desc) < 0))
		return -1;
	if (!is_pow2(cfg->nf_ring_size))
		return cfg_fail(w, "rings.nf_size", "must be a power of two");
	if (!is_pow2(cfg->port_ring_size))
		return cfg_fail(w, "rings.port_size", "must be a power of two");
	if (get_object(w, root, "stats", &o) < 0)
		return -1;
	if (o != NULL && (check_keys(w, o, "stats", stats_keys) < 0 ||
			  GET_UINT_FIELD(w, o, "stats", "interval_ms", 0, 3600000,
					 cfg->stats_interval_ms) < 0))
		return -1;
	if (get_object(w, root, "idle", &o) < 0)
		return -1;
	if (o != NULL &&
	    (check_keys(w, o, "idle", idle_keys) < 0 ||
	     GET_UINT_FIELD(w, o, "idle", "spin_us", 0, 1000000, cfg->idle_spin_us) < 0 ||
	     GET_UINT_FIELD(w, o, "idle", "max_sleep_us", 1, 100000, cfg->idle_sleep_max_us) < 0))
		return -1;
	if (get_object(w, root, "nf_defaults", &o) < 0)
		return -1;
	if (o != NULL && (check_keys(w, o, "nf_defaults", nfs_keys) < 0 ||
			  GET_UINT_FIELD(w, o, "nf_defaults", "start_timeout_ms", 10, 600000,
					 cfg->nf_start_timeout_ms) < 0 ||
			  GET_UINT_FIELD(w, o, "nf_defaults", "heartbeat_ms", 0, 600000,
					 cfg->nf_heartbeat_ms) < 0 ||
			  get_string(w, o, "nf_defaults", "cpus", cfg->nf_cpus,
				     sizeof(cfg->nf_cpus), false, false) < 0 ||
			  get_string(w, o, "nf_defaults", "standby_cpus", cfg->nf_standby_cpus,
				     sizeof(cfg->nf_standby_cpus), false, false) < 0))
		return -1;
	if (cfg->nf_heartbeat_ms != 0 && cfg->nf_heartbeat_ms < 10)
		return cfg_fail(w, "nf_defaults.heartbeat_ms", "must be 0 (off) or at least 10");
	if (mgr_cpulist_parse(cfg->nf_cpus, NULL) < 0)
		return cfg_fail(w, "nf_defaults.cpus",
				"a CPU list like \"1\" or \"0-1,3\" is expected");
	if (mgr_cpulist_parse(cfg->nf_standby_cpus, NULL) < 0)
		return cfg_fail(w, "nf_defaults.standby_cpus",
				"a CPU list like \"1\" or \"0-1,3\" is expected");
	if (get_object(w, root, "startup", &o) < 0)
		return -1;
	if (o != NULL && (check_keys(w, o, "startup", startup_keys) < 0 ||
			  GET_UINT_FIELD(w, o, "startup", "link_wait_ms", 0, 600000,
					 cfg->link_wait_ms) < 0))
		return -1;
	if (get_object(w, root, "state", &o) < 0)
		return -1;
	if (o != NULL && (check_keys(w, o, "state", state_keys) < 0 ||
			  GET_UINT_FIELD(w, o, "state", "pool_mb", 0, 65536, cfg->state_pool_mb) < 0))
		return -1;
	return 0;
}

static int
parse_units(struct cfg_walk *w, const json_t *root, struct mgr_config *cfg)
{
	static const char *const names[MGR_UNIT_MAX] = {"rx", "tx", "ctrl", "bfd"};
	static const char *const keys[] = {"rx", "tx", "ctrl", "bfd", NULL};
	json_t *o;

	if (get_object(w, root, "units", &o) < 0)
		return -1;
	if (o == NULL)
		return 0;
	if (check_keys(w, o, "units", keys) < 0)
		return -1;
	for (int u = 0; u < MGR_UNIT_MAX; u++) {
		json_t *v = json_object_get(o, names[u]);
		char p[PATH_BUF];
		uint64_t lc;

		if (v == NULL || json_is_null(v))
			continue;
		join_key(p, "units", names[u]);
		if (check_uint(w, v, p, 0, 127, &lc) < 0)
			return -1;
		cfg->unit_lcore[u] = (int)lc;
	}
	return 0;
}

static int
parse_ports(struct cfg_walk *w, const json_t *root, struct mgr_config *cfg)
{
	static const char *const keys[] = {"name", "dev", "rx", NULL};
	char p[PATH_BUF];
	json_t *arr, *v;
	size_t i;

	if (get_array(w, root, "", "ports", MGR_CFG_MAX_PORTS, &arr) < 0)
		return -1;
	if (arr == NULL)
		return 0;
	json_array_foreach(arr, i, v) {
		struct mgr_port_cfg *pc = &cfg->ports[i];

		join_index(p, "ports", i);
		if (expect_type(w, v, p, JSON_OBJECT, "a port object") < 0 ||
		    check_keys(w, v, p, keys) < 0 ||
		    get_string(w, v, p, "dev", pc->dev, sizeof(pc->dev), true, true) < 0 ||
		    get_string(w, v, p, "name", pc->name, sizeof(pc->name), false, false) < 0)
			return -1;
		if (json_object_get(v, "rx") != NULL) {
			char rp[PATH_BUF];

			join_key(rp, p, "rx");
			if (!json_is_boolean(json_object_get(v, "rx")))
				return cfg_fail(w, rp, "expected a boolean, got %s",
						json_type_name(json_object_get(v, "rx")));
			pc->no_rx = !json_is_true(json_object_get(v, "rx"));
		}
		if (pc->name[0] == '\0')
			snprintf(pc->name, sizeof(pc->name), "port%zu", i);
		if (!valid_name(pc->name))
			return cfg_fail(w, p, "name: use letters, digits, '_', '-' or '.'");
		for (size_t j = 0; j < i; j++)
			if (strcmp(cfg->ports[j].name, pc->name) == 0)
				return cfg_fail(w, p, "duplicate port name \"%s\"", pc->name);
		cfg->nports++;
	}
	return 0;
}

static int
parse_nfs(struct cfg_walk *w, const json_t *root, struct mgr_config *cfg)
{
	static const char *const keys[] = {"name", "binary", "service", "instances", "args",
					   "resiliency", NULL};
	char p[PATH_BUF];
	json_t *arr, *v;
	size_t i;

	if (get_array(w, root, "", "nfs", MGR_CFG_MAX_NFS, &arr) < 0)
		return -1;
	if (arr == NULL)
		return 0;
	json_array_foreach(arr, i, v) {
		struct mgr_nf_cfg *nc = &cfg->nfs[i];
		uint64_t svc = 0, inst = 1;

		join_index(p, "nfs", i);
		if (expect_type(w, v, p, JSON_OBJECT, "an NF object") < 0 ||
		    check_keys(w, v, p, keys) < 0 ||
		    get_string(w, v, p, "binary", nc->binary, sizeof(nc->binary), true, true) < 0)
			return -1;
		if (json_object_get(v, "service") == NULL)
			return cfg_fail(w, p, "missing required field \"service\"");
		if (get_uint(w, v, p, "service", 1, MGR_CFG_MAX_SERVICE, &svc) < 0 ||
		    get_uint(w, v, p, "instances", 1, MGR_CFG_MAX_INSTANCES, &inst) < 0 ||
		    get_string(w, v, p, "name", nc->name, sizeof(nc->name), false, false) < 0)
			return -1;
		nc->service = svc;
		nc->instances = inst;
		{
			char mode[16] = "none";

			if (get_string(w, v, p, "resiliency", mode, sizeof(mode), false, false) < 0)
				return -1;
			if (strcmp(mode, "local") == 0) {
				nc->local = true;
			} else if (strcmp(mode, "none") != 0) {
				char rp[PATH_BUF];

				join_key(rp, p, "resiliency");
				return cfg_fail(w, rp, "\"%s\" is not a resiliency mode (none, local)",
						mode);
			}
		}
		if (nc->name[0] == '\0') {
			const char *base = strrchr(nc->binary, '/');

			snprintf(nc->name, sizeof(nc->name), "%s", base ? base + 1 : nc->binary);
		}
		cfg->nnfs++; /* count first so mgr_config_free() sees its args */
		if (get_string_list(w, v, p, "args", nc->args, &nc->nargs) < 0)
			return -1;
	}
	/* Launching must not fail half-way: check the totals the manager's
	 * tables can hold before anything starts. */
	{
		unsigned int per_service[MGR_CFG_MAX_SERVICE + 1] = {0}, total = 0;

		json_array_foreach(arr, i, v) {
			const struct mgr_nf_cfg *nc = &cfg->nfs[i];

			join_index(p, "nfs", i);
			per_service[nc->service] += nc->instances;
			total += nc->instances;
			if (per_service[nc->service] > MGR_CFG_MAX_INSTANCES)
				return cfg_fail(w, p, "service %u would have %u instances (max %d)",
						nc->service, per_service[nc->service],
						MGR_CFG_MAX_INSTANCES);
			if (total > MGR_CFG_MAX_NF_SLOTS)
				return cfg_fail(w, p, "%u NF instances in all (max %d)", total,
						MGR_CFG_MAX_NF_SLOTS);
		}
	}
	return 0;
}

/* A port named by string or by index. */
static int
port_ref(struct cfg_walk *w, const json_t *v, const char *path, const struct mgr_config *cfg,
	 int *out)
{
	if (json_is_string(v)) {
		int idx = mgr_config_port_index(cfg, json_string_value(v));

		if (idx < 0)
			return cfg_fail(w, path, "no port named \"%s\"", json_string_value(v));
		*out = idx;
		return 0;
	}
	if (json_is_integer(v)) {
		json_int_t x = json_integer_value(v);

		if (x < 0 || x >= cfg->nports)
			return cfg_fail(w, path, "port index %lld does not exist (%d ports)",
					(long long)x, cfg->nports);
		*out = (int)x;
		return 0;
	}
	return cfg_fail(w, path, "expected a port name or index, got %s", json_type_name(v));
}

static int
parse_chains(struct cfg_walk *w, const json_t *root, struct mgr_config *cfg)
{
	static const char *const keys[] = {"name", "services", "ingress_port", "exit_port", NULL};
	char p[PATH_BUF], sp[PATH_BUF], ep[PATH_BUF];
	json_t *arr, *v, *svcs, *s;
	size_t i, j;

	if (get_array(w, root, "", "chains", MGR_CFG_MAX_CHAINS, &arr) < 0)
		return -1;
	if (arr == NULL)
		return 0;
	json_array_foreach(arr, i, v) {
		struct mgr_chain_cfg *cc = &cfg->chains[i];
		json_t *port;

		join_index(p, "chains", i);
		cc->ingress_port = -1;
		cc->exit_port = -1;
		if (expect_type(w, v, p, JSON_OBJECT, "a chain object") < 0 ||
		    check_keys(w, v, p, keys) < 0 ||
		    get_string(w, v, p, "name", cc->name, sizeof(cc->name), true, false) < 0)
			return -1;
		for (j = 0; j < i; j++)
			if (strcmp(cfg->chains[j].name, cc->name) == 0)
				return cfg_fail(w, p, "duplicate chain name \"%s\"", cc->name);
		if (get_array(w, v, p, "services", MGR_CFG_MAX_CHAIN_LEN, &svcs) < 0)
			return -1;
		if (svcs != NULL) {
			join_key(sp, p, "services");
			json_array_foreach(svcs, j, s) {
				uint64_t id;

				join_index(ep, sp, j);
				if (check_uint(w, s, ep, 1, MGR_CFG_MAX_SERVICE, &id) < 0)
					return -1;
				cc->services[cc->len++] = id;
			}
		}
		port = json_object_get(v, "ingress_port");
		join_key(sp, p, "ingress_port");
		if (port != NULL && !json_is_null(port) &&
		    port_ref(w, port, sp, cfg, &cc->ingress_port) < 0)
			return -1;
		port = json_object_get(v, "exit_port");
		join_key(sp, p, "exit_port");
		if (port != NULL && !json_is_null(port) &&
		    port_ref(w, port, sp, cfg, &cc->exit_port) < 0)
			return -1;
		if (cc->len == 0 && cc->exit_port < 0)
			return cfg_fail(w, p, "a chain needs services or an exit_port");
		for (j = 0; j < i; j++)
			if (cc->ingress_port >= 0 && cfg->chains[j].ingress_port == cc->ingress_port)
				return cfg_fail(w, p,
						"port %d is already the ingress of chain \"%s\"",
						cc->ingress_port, cfg->chains[j].name);
		cfg->nchains++;
	}
	return 0;
}

/* "198.18.0.0/15" or "198.18.0.1" -> address and mask, host byte order. */
static int
parse_prefix(struct cfg_walk *w, const json_t *v, const char *path, uint32_t *ip, uint32_t *mask)
{
	char buf[INET_ADDRSTRLEN + 4], *slash;
	struct in_addr a;
	unsigned long len = 32;

	if (!json_is_string(v))
		return cfg_fail(w, path, "expected an IPv4 prefix string, got %s",
				json_type_name(v));
	if (json_string_length(v) >= sizeof(buf))
		return cfg_fail(w, path, "\"%s\" is not an IPv4 prefix", json_string_value(v));
	strcpy(buf, json_string_value(v));
	slash = strchr(buf, '/');
	if (slash != NULL) {
		char *end;

		*slash = '\0';
		len = strtoul(slash + 1, &end, 10);
		if (!isdigit((unsigned char)slash[1]) || *end != '\0' || len > 32)
			return cfg_fail(w, path, "bad prefix length in \"%s\"",
					json_string_value(v));
	}
	if (inet_pton(AF_INET, buf, &a) != 1)
		return cfg_fail(w, path, "\"%s\" is not an IPv4 address", json_string_value(v));
	*mask = len == 0 ? 0 : 0xffffffffu << (32 - len);
	*ip = ntohl(a.s_addr) & *mask;
	return 0;
}

/* 80, "80" or "1000-2000". */
static int
parse_port_range(struct cfg_walk *w, const json_t *v, const char *path, uint16_t *lo,
		 uint16_t *hi)
{
	unsigned long a, b;
	char *end;

	if (json_is_integer(v)) {
		uint64_t x;

		if (check_uint(w, v, path, 0, 65535, &x) < 0)
			return -1;
		*lo = *hi = x;
		return 0;
	}
	if (!json_is_string(v))
		return cfg_fail(w, path, "expected a port or \"lo-hi\" range, got %s",
				json_type_name(v));
	if (!isdigit((unsigned char)json_string_value(v)[0]))
		goto bad;
	a = strtoul(json_string_value(v), &end, 10);
	b = a;
	if (*end == '-') {
		const char *s = end + 1;

		if (!isdigit((unsigned char)*s))
			goto bad;
		b = strtoul(s, &end, 10);
	}
	if (*end != '\0' || a > 65535 || b > 65535 || a > b)
		goto bad;
	*lo = a;
	*hi = b;
	return 0;
bad:
	return cfg_fail(w, path, "\"%s\" is not a port or \"lo-hi\" range",
			json_string_value(v));
}

static int
parse_proto(struct cfg_walk *w, const json_t *v, const char *path, uint8_t *proto)
{
	if (json_is_string(v)) {
		const char *s = json_string_value(v);

		if (strcmp(s, "tcp") == 0)
			*proto = 6;
		else if (strcmp(s, "udp") == 0)
			*proto = 17;
		else if (strcmp(s, "icmp") == 0)
			*proto = 1;
		else if (strcmp(s, "any") == 0)
			*proto = 0;
		else
			return cfg_fail(w, path, "unknown protocol \"%s\" (tcp, udp, icmp, any "
						 "or a number)", s);
		return 0;
	}
	{
		uint64_t x;

		if (check_uint(w, v, path, 0, 255, &x) < 0)
			return -1;
		*proto = x;
	}
	return 0;
}

static int
parse_rules(struct cfg_walk *w, const json_t *root, struct mgr_config *cfg)
{
	static const char *const keys[] = {"chain", "src", "dst", "proto", "sport", "dport",
					   "in_port", NULL};
	char p[PATH_BUF], fp[PATH_BUF];
	json_t *arr, *v, *f;
	size_t i;

	if (get_array(w, root, "", "flow_rules", MGR_CFG_MAX_RULES, &arr) < 0)
		return -1;
	if (arr == NULL)
		return 0;
	json_array_foreach(arr, i, v) {
		struct mgr_rule_cfg *r = &cfg->rules[i];
		char chain[MGR_CFG_NAME_LEN] = "";

		join_index(p, "flow_rules", i);
		*r = (struct mgr_rule_cfg){.sport_hi = 65535, .dport_hi = 65535, .in_port = -1};
		if (expect_type(w, v, p, JSON_OBJECT, "a rule object") < 0 ||
		    check_keys(w, v, p, keys) < 0 ||
		    get_string(w, v, p, "chain", chain, sizeof(chain), true, false) < 0)
			return -1;
		r->chain = mgr_config_chain_index(cfg, chain);
		join_key(fp, p, "chain");
		if (r->chain < 0)
			return cfg_fail(w, fp, "no chain named \"%s\"", chain);
		join_key(fp, p, "src");
		if ((f = json_object_get(v, "src")) && parse_prefix(w, f, fp, &r->src_ip,
								      &r->src_mask) < 0)
			return -1;
		join_key(fp, p, "dst");
		if ((f = json_object_get(v, "dst")) && parse_prefix(w, f, fp, &r->dst_ip,
								      &r->dst_mask) < 0)
			return -1;
		join_key(fp, p, "proto");
		if ((f = json_object_get(v, "proto")) && parse_proto(w, f, fp, &r->proto) < 0)
			return -1;
		join_key(fp, p, "sport");
		if ((f = json_object_get(v, "sport")) &&
		    parse_port_range(w, f, fp, &r->sport_lo, &r->sport_hi) < 0)
			return -1;
		join_key(fp, p, "dport");
		if ((f = json_object_get(v, "dport")) &&
		    parse_port_range(w, f, fp, &r->dport_lo, &r->dport_hi) < 0)
			return -1;
		join_key(fp, p, "in_port");
		if ((f = json_object_get(v, "in_port")) && port_ref(w, f, fp, cfg, &r->in_port) < 0)
			return -1;
		cfg->nrules++;
	}
	return 0;
}

/* A unicast host address: "198.18.0.1" -> host byte order. */
static int
parse_host_addr(struct cfg_walk *w, const json_t *v, const char *path, uint32_t *ip)
{
	struct in_addr a;

	if (!json_is_string(v))
		return cfg_fail(w, path, "expected an IPv4 address string, got %s",
				json_type_name(v));
	if (inet_pton(AF_INET, json_string_value(v), &a) != 1)
		return cfg_fail(w, path, "\"%s\" is not an IPv4 address", json_string_value(v));
	*ip = ntohl(a.s_addr);
	if (*ip == 0 || *ip == 0xffffffffu || (*ip >> 28) == 0xe)
		return cfg_fail(w, path, "\"%s\" is not a unicast host address",
				json_string_value(v));
	return 0;
}

/* "auth": {"type": "keyed-sha1" | "meticulous-keyed-sha1", "key_id": N, "key": "..."} */
static int
parse_bfd_auth(struct cfg_walk *w, const json_t *v, const char *p, struct mgr_bfd_cfg *b)
{
	static const char *const keys[] = {"type", "key_id", "key", NULL};
	char type[32] = "", key[MGR_CFG_BFD_KEY_MAX + 1] = "", fp[PATH_BUF];
	uint64_t key_id = 0;

	if (expect_type(w, v, p, JSON_OBJECT, "an auth object") < 0 ||
	    check_keys(w, v, p, keys) < 0 ||
	    get_string(w, v, p, "type", type, sizeof(type), true, false) < 0 ||
	    get_uint(w, v, p, "key_id", 0, 255, &key_id) < 0 ||
	    get_string(w, v, p, "key", key, sizeof(key), true, false) < 0)
		return -1;
	join_key(fp, p, "type");
	if (strcmp(type, "keyed-sha1") == 0)
		b->auth_type = BFD_AUTH_KEYED_SHA1;
	else if (strcmp(type, "meticulous-keyed-sha1") == 0)
		b->auth_type = BFD_AUTH_METICULOUS_SHA1;
	else
		return cfg_fail(w, fp, "\"%s\" is not supported (keyed-sha1, "
				       "meticulous-keyed-sha1)", type);
	b->auth_key_id = key_id;
	b->auth_key_len = strlen(key);
	memcpy(b->auth_key, key, b->auth_key_len);
	return 0;
}

static int
parse_bfd(struct cfg_walk *w, const json_t *root, struct mgr_config *cfg)
{
	static const char *const top_keys[] = {"sessions", NULL};
	static const char *const keys[] = {"name", "port", "local", "peer", "peer_mac",
					   "desired_min_tx_us", "required_min_rx_us",
					   "detect_mult", "admin_down", "auth", NULL};
	static const char *const required[] = {"port", "local", "peer", NULL};
	char p[PATH_BUF], fp[PATH_BUF];
	json_t *o, *arr, *v, *f;
	size_t i;

	if (get_object(w, root, "bfd", &o) < 0)
		return -1;
	if (o == NULL)
		return 0;
	if (check_keys(w, o, "bfd", top_keys) < 0 ||
	    get_array(w, o, "bfd", "sessions", MGR_CFG_MAX_BFD, &arr) < 0)
		return -1;
	if (arr == NULL)
		return 0;
	json_array_foreach(arr, i, v) {
		struct mgr_bfd_cfg *b = &cfg->bfd[i];
		char mac[32] = "";

		join_index(p, "bfd.sessions", i);
		/* FRR's defaults: 300 ms x 3. */
		*b = (struct mgr_bfd_cfg){.desired_min_tx_us = 300000,
					  .required_min_rx_us = 300000, .detect_mult = 3};
		if (expect_type(w, v, p, JSON_OBJECT, "a BFD session object") < 0 ||
		    check_keys(w, v, p, keys) < 0 ||
		    get_string(w, v, p, "name", b->name, sizeof(b->name), true, false) < 0 ||
		    get_string(w, v, p, "peer_mac", mac, sizeof(mac), false, false) < 0 ||
		    GET_UINT_FIELD(w, v, p, "desired_min_tx_us", 1000, 60000000,
				   b->desired_min_tx_us) < 0 ||
		    GET_UINT_FIELD(w, v, p, "required_min_rx_us", 1000, 60000000,
				   b->required_min_rx_us) < 0 ||
		    GET_UINT_FIELD(w, v, p, "detect_mult", 1, 255, b->detect_mult) < 0)
			return -1;
		/* The name is a key of /onvm/bfd: DPDK telemetry takes only
		 * letters, digits and '_' there. */
		for (const char *c = b->name; *c != '\0'; c++)
			if (!isalnum((unsigned char)*c) && *c != '_')
				return cfg_fail(w, p, "name: use letters, digits or '_'");
		for (const char *const *k = required; *k != NULL; k++)
			if (json_object_get(v, *k) == NULL)
				return cfg_fail(w, p, "missing required field \"%s\"", *k);
		join_key(fp, p, "port");
		if (port_ref(w, json_object_get(v, "port"), fp, cfg, &b->port) < 0)
			return -1;
		if (cfg->ports[b->port].no_rx)
			return cfg_fail(w, fp, "port \"%s\" has \"rx\": false; BFD must receive",
					cfg->ports[b->port].name);
		join_key(fp, p, "local");
		if (parse_host_addr(w, json_object_get(v, "local"), fp, &b->local_ip) < 0)
			return -1;
		join_key(fp, p, "peer");
		if (parse_host_addr(w, json_object_get(v, "peer"), fp, &b->peer_ip) < 0)
			return -1;
		if (b->peer_ip == b->local_ip)
			return cfg_fail(w, fp, "the peer address is the local address");
		if (mac[0] != '\0') {
			join_key(fp, p, "peer_mac");
			if (bfd_mac_parse(mac, b->peer_mac) < 0 || (b->peer_mac[0] & 1) != 0)
				return cfg_fail(w, fp, "\"%s\" is not a unicast MAC address "
						       "(aa:bb:cc:dd:ee:ff)", mac);
			b->peer_mac_static = true;
		}
		if ((f = json_object_get(v, "admin_down")) != NULL) {
			join_key(fp, p, "admin_down");
			if (!json_is_boolean(f))
				return cfg_fail(w, fp, "expected a boolean, got %s",
						json_type_name(f));
			b->admin_down = json_is_true(f);
		}
		if ((f = json_object_get(v, "auth")) != NULL) {
			join_key(fp, p, "auth");
			if (parse_bfd_auth(w, f, fp, b) < 0)
				return -1;
		}
		for (size_t j = 0; j < i; j++) {
			const struct mgr_bfd_cfg *o2 = &cfg->bfd[j];

			if (strcmp(o2->name, b->name) == 0)
				return cfg_fail(w, p, "duplicate BFD session name \"%s\"", b->name);
			if (o2->port == b->port && o2->local_ip == b->local_ip &&
			    o2->peer_ip == b->peer_ip)
				return cfg_fail(w, p, "same port, local and peer as session \"%s\"",
						o2->name);
		}
		cfg->nbfd++;
	}
	return 0;
}

void
mgr_config_defaults(struct mgr_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	snprintf(cfg->node_name, sizeof(cfg->node_name), "node");
	cfg->nb_mbufs = 16383;
	cfg->mbuf_cache = 256;
	cfg->nf_ring_size = 4096;
	cfg->port_ring_size = 1024;
	cfg->rx_desc = 1024;
	cfg->tx_desc = 1024;
	for (int u = 0; u < MGR_UNIT_MAX; u++)
		cfg->unit_lcore[u] = -1;
	cfg->stats_interval_ms = 1000;
	cfg->idle_spin_us = 100;
	cfg->idle_sleep_max_us = 1000;
	cfg->nf_start_timeout_ms = 10000;
	cfg->nf_heartbeat_ms = 2000;
	cfg->link_wait_ms = 5000;
	cfg->state_pool_mb = 64;
	cfg->default_chain = -1;
}

int
mgr_config_load_string(const char *text, size_t len, const char *name, struct mgr_config *cfg,
		       char *err, size_t errlen)
{
	static const char *const keys[] = {"node", "pool", "rings", "units", "stats", "idle",
					   "nf_defaults", "startup", "state", "ports", "nfs", "chains",
					   "flow_rules", "default_chain", "bfd", NULL};
	struct cfg_walk w = {
		.name = name, .text = text, .len = len, .err = err, .errlen = errlen, .cfg = cfg,
	};
	char dirbuf[PATH_MAX];
	json_error_t jerr;
	json_t *root, *dc;
	int ret = -1;

	/* ${CONFIG_DIR}: the directory of the file, or of `name` for text. */
	if (cfg->dir[0] != '\0') {
		w.dir = cfg->dir;
	} else {
		char *copy = strdup(name);

		snprintf(dirbuf, sizeof(dirbuf), "%s", copy != NULL ? dirname(copy) : ".");
		free(copy);
		w.dir = dirbuf;
	}

	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL) {
		snprintf(err, errlen, "%s:%d:%d: syntax: %s", name, jerr.line,
			 jerr.column > 0 ? jerr.column : 1, jerr.text); /* 0 at end of input */
		one_line(err);
		return -1;
	}
	if (!json_is_object(root)) {
		cfg_fail(&w, "", "the configuration must be a JSON object");
		goto out;
	}
	if (check_keys(&w, root, "", keys) < 0 || parse_node(&w, root, cfg) < 0 ||
	    parse_tunables(&w, root, cfg) < 0 || parse_units(&w, root, cfg) < 0 ||
	    parse_ports(&w, root, cfg) < 0 || parse_nfs(&w, root, cfg) < 0 ||
	    parse_chains(&w, root, cfg) < 0 || parse_rules(&w, root, cfg) < 0 ||
	    parse_bfd(&w, root, cfg) < 0)
		goto out;
	dc = json_object_get(root, "default_chain");
	if (dc != NULL && !json_is_null(dc)) {
		if (expect_type(&w, dc, "default_chain", JSON_STRING, "a chain name") < 0)
			goto out;
		cfg->default_chain = mgr_config_chain_index(cfg, json_string_value(dc));
		if (cfg->default_chain < 0) {
			cfg_fail(&w, "default_chain", "no chain named \"%s\"",
				 json_string_value(dc));
			goto out;
		}
	}
	ret = 0;
out:
	json_decref(root);
	return ret;
}

int
mgr_config_load_file(const char *path, struct mgr_config *cfg, char *err, size_t errlen)
{
	char *text = NULL, *dirbuf;
	size_t len = 0;
	FILE *f;
	int ret;

	f = fopen(path, "r");
	if (f == NULL) {
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	{
		char buf[65536];
		size_t n;

		while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
			char *t = realloc(text, len + n + 1);

			if (t == NULL || len + n > (16u << 20)) {
				free(t ? t : text);
				fclose(f);
				snprintf(err, errlen, "%s: too large or out of memory", path);
				return -1;
			}
			text = t;
			memcpy(text + len, buf, n);
			len += n;
		}
	}
	fclose(f);
	if (text == NULL) {
		snprintf(err, errlen, "%s:1:1: syntax: the file is empty", path);
		return -1;
	}
	text[len] = '\0';
	snprintf(cfg->path, sizeof(cfg->path), "%s", path);
	dirbuf = strdup(path);
	if (dirbuf == NULL || realpath(dirname(dirbuf), cfg->dir) == NULL)
		snprintf(cfg->dir, sizeof(cfg->dir), ".");
	free(dirbuf);
	ret = mgr_config_load_string(text, len, path, cfg, err, errlen);
	free(text);
	return ret;
}

void
mgr_config_free(struct mgr_config *cfg)
{
	for (int i = 0; i < cfg->n_eal; i++)
		free(cfg->eal_args[i]);
	cfg->n_eal = 0;
	for (int i = 0; i < cfg->nnfs; i++) {
		for (int a = 0; a < cfg->nfs[i].nargs; a++)
			free(cfg->nfs[i].args[a]);
		cfg->nfs[i].nargs = 0;
	}
}

int
mgr_config_port_index(const struct mgr_config *cfg, const char *name)
{
	for (int i = 0; i < cfg->nports; i++)
		if (strcmp(cfg->ports[i].name, name) == 0)
			return i;
	return -1;
}

int
mgr_config_chain_index(const struct mgr_config *cfg, const char *name)
{
	for (int i = 0; i < cfg->nchains; i++)
		if (strcmp(cfg->chains[i].name, name) == 0)
			return i;
	return -1;
}
