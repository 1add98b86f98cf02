/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * config_ports.c -- the "ports" section (the DPDK ports the manager drives,
 * by EAL --vdev device string) and cfg_port_ref(), with which later sections
 * (chains, flow rules, BFD sessions) name a port.
 *
 * A port is named by its index in "ports" or by its name; an unnamed port is
 * "portN".  Names are unique, so a reference resolves to one port; the
 * lookup is mgr_config_port_index(), a linear scan (at most
 * MGR_CFG_MAX_PORTS, load time only).
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "config_walk.h"

int
cfg_parse_ports(struct cfg_walk *w, const json_t *root, struct mgr_config *cfg)
{
	static const char *const keys[] = {"name", "dev", "rx", "peer", NULL};
	char p[CFG_PATH_LEN];
	json_t *arr, *v;
	size_t i;

	if (cfg_get_array(w, root, "", "ports", MGR_CFG_MAX_PORTS, &arr) < 0)
		return -1;
	if (arr == NULL)
		return 0;
	json_array_foreach(arr, i, v) {
		struct mgr_port_cfg *pc = &cfg->ports[i];
		bool rx = !pc->no_rx;

		cfg_join_index(p, "ports", i);
		if (cfg_check_object(w, v, p, "a port object", keys) < 0 ||
		    cfg_get_string(w, v, p, "dev", pc->dev, sizeof(pc->dev), true, true) < 0 ||
		    cfg_get_string(w, v, p, "name", pc->name, sizeof(pc->name), false, false) < 0 ||
		    cfg_get_bool(w, v, p, "rx", &rx) < 0 ||
		    cfg_get_bool(w, v, p, "peer", &pc->peer) < 0)
			return -1;
		pc->no_rx = !rx;
		if (pc->name[0] == '\0')
			snprintf(pc->name, sizeof(pc->name), "port%zu", i);
		if (!cfg_valid_name(pc->name))
			return cfg_fail(w, p, "name: " CFG_NAME_RULE);
		for (size_t j = 0; j < i; j++)
			if (strcmp(cfg->ports[j].name, pc->name) == 0)
				return cfg_fail(w, p, "duplicate port name \"%s\"", pc->name);
		cfg->nports++;
	}
	return 0;
}

/* A port named by string or by index. */
int
cfg_port_ref(struct cfg_walk *w, const json_t *v, const char *path, const struct mgr_config *cfg,
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
	return cfg_fail(w, path, "expected a port name or index, got %s", onvm_rule_json_type(v));
}
