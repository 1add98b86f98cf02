/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * config_nfs.c -- the "nfs" section: which NF binaries the manager launches,
 * as which service, how many instances, with which arguments and
 * resiliency mode.
 *
 * Launching must not fail half-way through, so everything the manager's
 * tables will have to hold (instances per service, NF slots in all) is
 * checked here, at load time, after every entry has parsed.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "config_walk.h"

/* "resiliency": "none" (the default) or "local" (a hot standby on this node). */
static int
parse_resiliency(struct cfg_walk *w, const json_t *v, const char *p, struct mgr_nf_cfg *nc)
{
	char mode[16] = "none", rp[CFG_PATH_LEN];

	if (cfg_get_string(w, v, p, "resiliency", mode, sizeof(mode), false, false) < 0)
		return -1;
	if (strcmp(mode, "local") == 0) {
		nc->local = true;
		return 0;
	}
	if (strcmp(mode, "none") == 0)
		return 0;
	cfg_join_key(rp, p, "resiliency");
	return cfg_fail(w, rp, "\"%s\" is not a resiliency mode (none, local)", mode);
}

/* A word the runtime's command line takes as a value, never as an option. */
static int
check_word(struct cfg_walk *w, const char *path, const char *s, const char *what)
{
	if (s[0] == '-')
		return cfg_fail(w, path, "%s \"%s\" must not start with '-'", what, s);
	for (const char *c = s; *c != '\0'; c++)
		if (isspace((unsigned char)*c) || iscntrl((unsigned char)*c))
			return cfg_fail(w, path, "%s \"%s\" has a space or control character",
					what, s);
	return 0;
}

/*
 * `run` arguments the manager's scheme rests on may not be overridden: each
 * container NF has a pid namespace of its own in which libnf is pid 1 (an
 * --init, a pod, a shared or the host's namespace would give it another pid:
 * nf_pidns.c), runs attached (its CLI's exit is its start's failure), runs
 * the NF binary (no other entrypoint), and the manager sets its name, node
 * label, network, CPUs, ONVM_NF_NS_PID and ONVM_NF_CPUS.  Other labels and
 * variables are the operator's.
 */
static int
check_run_args(struct cfg_walk *w, const char *path, char *const *args, int n)
{
	static const char *const reserved[] = {"--init",     "--pid",	      "--pod",
					       "--name",     "--rm",	      "--network",
					       "--net",	     "--cpuset-cpus", "--detach",
					       "-d",	     "--entrypoint",  "--env-file",
					       "--init-path", NULL};
	char ep[CFG_PATH_LEN];

	for (int i = 0; i < n; i++) {
		const char *a = args[i], *value = strchr(a, '=');
		const char *why = NULL;

		for (int r = 0; reserved[r] != NULL && why == NULL; r++) {
			size_t len = strlen(reserved[r]);

			if (strncmp(a, reserved[r], len) == 0 && (a[len] == '\0' || a[len] == '='))
				why = reserved[r];
		}
		/* -e/--env/-l/--label: their value, here or in the next argument */
		if (why == NULL && (strncmp(a, "--env", 5) == 0 || strncmp(a, "-e", 2) == 0)) {
			const char *v = value ? value + 1 : a[1] == 'e' && a[2] != '\0' ? a + 2 : NULL;

			if (v == NULL && i + 1 < n)
				v = args[i + 1];
			if (v != NULL && (strncmp(v, "ONVM_NF_NS_PID", 14) == 0 ||
					  strncmp(v, "ONVM_NF_CPUS", 12) == 0))
				why = "ONVM_NF_NS_PID / ONVM_NF_CPUS";
		}
		if (why == NULL && (strncmp(a, "--label", 7) == 0 || strncmp(a, "-l", 2) == 0)) {
			const char *v = value ? value + 1 : a[1] == 'l' && a[2] != '\0' ? a + 2 : NULL;

			if (v == NULL && i + 1 < n)
				v = args[i + 1];
			if (v != NULL && strncmp(v, "org.reinforce-nfv.", 18) == 0)
				why = "its node label";
		}
		if (why != NULL) {
			cfg_join_index(ep, path, i);
			return cfg_fail(w, ep, "%s is set by the manager (docs/operator-guide.md, "
					       "\"NFs in containers\")",
					why);
		}
	}
	return 0;
}

/* "volumes" of a container NF: "HOST:CONTAINER[:OPTIONS]", both absolute. */
static int
check_volumes(struct cfg_walk *w, const char *cp, const struct mgr_nf_container_cfg *ctr)
{
	char vp[CFG_PATH_LEN], ep[CFG_PATH_LEN];

	cfg_join_key(vp, cp, "volumes");
	for (int i = 0; i < ctr->nvolumes; i++) {
		const char *v = ctr->volumes[i], *colon = strchr(v, ':');

		cfg_join_index(ep, vp, i);
		if (v[0] != '/' || colon == NULL || colon[1] != '/')
			return cfg_fail(w, ep, "\"%s\" is not HOST:CONTAINER[:OPTIONS] with absolute "
					       "paths",
					v);
		if (check_word(w, ep, v, "a volume") < 0)
			return -1;
	}
	return 0;
}

/*
 * "container": {"image": ..., "path": ..., "volumes": [...], "args": [...]}:
 * the NF runs in a container of `image`, its binary at `path` there
 * (default /nf/bin/BINARY, where scripts/nf-image.sh puts it).  Called once
 * the entry is counted, so mgr_config_free() frees the lists.
 */
static int
parse_container(struct cfg_walk *w, const json_t *v, const char *p, struct mgr_nf_cfg *nc)
{
	static const char *const keys[] = {"image", "path", "volumes", "args", NULL};
	struct mgr_nf_container_cfg *ctr = &nc->ctr;
	const json_t *c = json_object_get(v, "container");
	char cp[CFG_PATH_LEN], fp[CFG_PATH_LEN];

	if (c == NULL || json_is_null(c))
		return 0;
	cfg_join_key(cp, p, "container");
	if (cfg_check_object(w, c, cp, "a container object", keys) < 0 ||
	    cfg_get_string(w, c, cp, "image", ctr->image, sizeof(ctr->image), true, true) < 0 ||
	    cfg_get_string(w, c, cp, "path", ctr->path, sizeof(ctr->path), false, true) < 0)
		return -1;
	cfg_join_key(fp, cp, "image");
	if (check_word(w, fp, ctr->image, "an image") < 0)
		return -1;
	cfg_join_key(fp, cp, "path");
	if (ctr->path[0] == '\0') {
		const char *base = strrchr(nc->binary, '/');

		if (snprintf(ctr->path, sizeof(ctr->path), "/nf/bin/%s",
			     base ? base + 1 : nc->binary) >= (int)sizeof(ctr->path))
			return cfg_fail(w, fp, "the default path is too long");
	} else if (ctr->path[0] != '/') {
		return cfg_fail(w, fp, "\"%s\" is not an absolute path in the image", ctr->path);
	} else if (check_word(w, fp, ctr->path, "a path") < 0) {
		return -1;
	}
	ctr->enabled = true;
	if (cfg_get_string_list(w, c, cp, "volumes", ctr->volumes, &ctr->nvolumes) < 0 ||
	    cfg_get_string_list(w, c, cp, "args", ctr->args, &ctr->nargs) < 0)
		return -1;
	cfg_join_key(fp, cp, "args");
	if (check_run_args(w, fp, ctr->args, ctr->nargs) < 0)
		return -1;
	return check_volumes(w, cp, ctr);
}

/*
 * The "containers" section: how container NFs are run -- the runtime's CLI
 * (Docker-compatible `run`; podman by default), its OCI runtime, --ulimit
 * values and further `run` arguments.  Real servers differ (cgroup layout,
 * limits the runtime may raise), so none of it is hard-coded.
 */
int
cfg_parse_containers(struct cfg_walk *w, const json_t *root, struct mgr_config *cfg)
{
	static const char *const keys[] = {"command", "runtime", "ulimits", "args", NULL};
	struct mgr_containers_cfg *cc = &cfg->containers;
	char fp[CFG_PATH_LEN], ep[CFG_PATH_LEN];
	json_t *sec;

	if (cfg_get_section(w, root, "containers", keys, &sec) < 0)
		return -1;
	if (sec == NULL)
		return 0;
	if (cfg_get_string(w, sec, "containers", "command", cc->command, sizeof(cc->command),
			   false, true) < 0 ||
	    cfg_get_string(w, sec, "containers", "runtime", cc->runtime, sizeof(cc->runtime),
			   false, true) < 0)
		return -1;
	if (check_word(w, "containers.command", cc->command, "a command") < 0 ||
	    (cc->runtime[0] != '\0' &&
	     check_word(w, "containers.runtime", cc->runtime, "a runtime") < 0))
		return -1;
	if (cfg_get_string_list(w, sec, "containers", "ulimits", cc->ulimits, &cc->nulimits) < 0 ||
	    cfg_get_string_list(w, sec, "containers", "args", cc->args, &cc->nargs) < 0 ||
	    check_run_args(w, "containers.args", cc->args, cc->nargs) < 0)
		return -1;
	cfg_join_key(fp, "containers", "ulimits");
	for (int i = 0; i < cc->nulimits; i++) {
		const char *u = cc->ulimits[i], *eq = strchr(u, '=');

		cfg_join_index(ep, fp, i);
		if (check_word(w, ep, u, "a ulimit") < 0)
			return -1;
		if (eq == NULL || eq == u || !isdigit((unsigned char)eq[1]))
			return cfg_fail(w, ep, "\"%s\" is not NAME=SOFT[:HARD]", u);
	}
	return 0;
}

/*
 * Launching must not fail half-way: check the totals the manager's tables
 * can hold before anything starts.  The first entry that goes over is blamed.
 */
static int
check_totals(struct cfg_walk *w, const json_t *arr, const struct mgr_config *cfg)
{
	unsigned int per_service[MGR_CFG_MAX_SERVICE + 1] = {0}, total = 0;
	char p[CFG_PATH_LEN];
	json_t *v;
	size_t i;

	json_array_foreach(arr, i, v) {
		const struct mgr_nf_cfg *nc = &cfg->nfs[i];

		cfg_join_index(p, "nfs", i);
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
	return 0;
}

/*
 * "scale": {"min", "max", "high_pct", "low_pct", "up_ms", "down_ms",
 * "cooldown_ms", "method"} -- scale-out and scale-in by load
 * (docs/design/elastic.md); the defaults are a cautious policy.
 */
static int
parse_scale(struct cfg_walk *w, const json_t *v, const char *p, struct mgr_nf_cfg *nc)
{
	static const char *const keys[] = {"min",     "max",	     "high_pct", "low_pct",
					   "up_ms",   "down_ms",     "cooldown_ms", "method",
					   NULL};
	const json_t *o = json_object_get(v, "scale");
	struct mgr_scale_cfg *sc = &nc->scale;
	char sp[CFG_PATH_LEN], method[16] = "reprocess";

	if (o == NULL || json_is_null(o))
		return 0;
	cfg_join_key(sp, p, "scale");
	*sc = (struct mgr_scale_cfg){
		.on = true, .min = 1, .max = MGR_CFG_MAX_INSTANCES, .high_pct = 50, .low_pct = 5,
		.up_ms = 500, .down_ms = 5000, .cooldown_ms = 2000,
	};
	if (cfg_check_object(w, o, sp, "a scale object", keys) < 0 ||
	    CFG_UINT_FIELD(w, o, sp, "min", 1, MGR_CFG_MAX_INSTANCES, sc->min) < 0 ||
	    CFG_UINT_FIELD(w, o, sp, "max", 1, MGR_CFG_MAX_INSTANCES, sc->max) < 0 ||
	    CFG_UINT_FIELD(w, o, sp, "high_pct", 1, 100, sc->high_pct) < 0 ||
	    CFG_UINT_FIELD(w, o, sp, "low_pct", 0, 99, sc->low_pct) < 0 ||
	    CFG_UINT_FIELD(w, o, sp, "up_ms", 100, 3600000, sc->up_ms) < 0 ||
	    CFG_UINT_FIELD(w, o, sp, "down_ms", 100, 3600000, sc->down_ms) < 0 ||
	    CFG_UINT_FIELD(w, o, sp, "cooldown_ms", 0, 3600000, sc->cooldown_ms) < 0 ||
	    cfg_get_string(w, o, sp, "method", method, sizeof(method), false, false) < 0)
		return -1;
	if (strcmp(method, "buffer") == 0)
		sc->method = MGR_SCALE_BUFFER;
	else if (strcmp(method, "reprocess") == 0)
		sc->method = MGR_SCALE_REPROCESS;
	else
		return cfg_fail(w, sp, "method \"%s\" is not reprocess or buffer", method);
	if (sc->min > sc->max)
		return cfg_fail(w, sp, "min %u is above max %u", sc->min, sc->max);
	if (nc->instances < sc->min || nc->instances > sc->max)
		return cfg_fail(w, sp, "the NF starts with %u instances, outside min..max (%u..%u)",
				nc->instances, sc->min, sc->max);
	if (sc->low_pct >= sc->high_pct)
		return cfg_fail(w, sp, "low_pct %u must be below high_pct %u", sc->low_pct,
				sc->high_pct);
	return 0;
}

int
cfg_parse_nfs(struct cfg_walk *w, const json_t *root, struct mgr_config *cfg)
{
	static const char *const keys[] = {"name", "binary",	 "service",   "instances",
					   "args", "resiliency", "container", "scale",
					   "peer_only", NULL};
	char p[CFG_PATH_LEN];
	json_t *arr, *v;
	size_t i;

	if (cfg_get_array(w, root, "", "nfs", MGR_CFG_MAX_NFS, &arr) < 0)
		return -1;
	if (arr == NULL)
		return 0;
	json_array_foreach(arr, i, v) {
		struct mgr_nf_cfg *nc = &cfg->nfs[i];
		uint64_t svc = 0, inst = 1;

		cfg_join_index(p, "nfs", i);
		if (cfg_check_object(w, v, p, "an NF object", keys) < 0 ||
		    cfg_get_string(w, v, p, "binary", nc->binary, sizeof(nc->binary), true, true) <
			0)
			return -1;
		if (json_object_get(v, "service") == NULL)
			return cfg_fail(w, p, "missing required field \"service\"");
		if (cfg_get_uint(w, v, p, "service", 1, MGR_CFG_MAX_SERVICE, &svc) < 0 ||
		    cfg_get_uint(w, v, p, "instances", 1, MGR_CFG_MAX_INSTANCES, &inst) < 0 ||
		    cfg_get_string(w, v, p, "name", nc->name, sizeof(nc->name), false, false) < 0 ||
		    cfg_get_bool(w, v, p, "peer_only", &nc->peer_only) < 0)
			return -1;
		if (nc->peer_only && json_object_get(v, "scale") != NULL)
			return cfg_fail(w, p, "\"peer_only\" instances are not scaled here: no "
					"\"scale\"");
		nc->service = svc;
		nc->instances = inst;
		if (parse_resiliency(w, v, p, nc) < 0)
			return -1;
		if (nc->name[0] == '\0') {
			const char *base = strrchr(nc->binary, '/');

			snprintf(nc->name, sizeof(nc->name), "%s", base ? base + 1 : nc->binary);
		}
		cfg->nnfs++; /* count first so mgr_config_free() sees its args */
		if (cfg_get_string_list(w, v, p, "args", nc->args, &nc->nargs) < 0 ||
		    parse_container(w, v, p, nc) < 0 || parse_scale(w, v, p, nc) < 0)
			return -1;
	}
	return check_totals(w, arr, cfg);
}
