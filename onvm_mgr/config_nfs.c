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

int
cfg_parse_nfs(struct cfg_walk *w, const json_t *root, struct mgr_config *cfg)
{
	static const char *const keys[] = {"name", "binary",	 "service", "instances",
					   "args", "resiliency", NULL};
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
		    cfg_get_string(w, v, p, "name", nc->name, sizeof(nc->name), false, false) < 0)
			return -1;
		nc->service = svc;
		nc->instances = inst;
		if (parse_resiliency(w, v, p, nc) < 0)
			return -1;
		if (nc->name[0] == '\0') {
			const char *base = strrchr(nc->binary, '/');

			snprintf(nc->name, sizeof(nc->name), "%s", base ? base + 1 : nc->binary);
		}
		cfg->nnfs++; /* count first so mgr_config_free() sees its args */
		if (cfg_get_string_list(w, v, p, "args", nc->args, &nc->nargs) < 0)
			return -1;
	}
	return check_totals(w, arr, cfg);
}
