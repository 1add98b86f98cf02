/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * config_node.c -- the node-wide sections of the config: "node" (name, EAL
 * options), the tunables ("pool", "rings", "stats", "idle", "nf_defaults",
 * "startup", "state") and "units" (which lcore runs each unit).
 *
 * These sections are flat objects of scalars: every field has its default in
 * mgr_config_defaults() and a range checked here, so an absent field keeps
 * the default and a present one is either in range or an error.  Checks that
 * span fields or need more than a range (ring sizes are powers of two, the
 * CPU lists parse) come right after their section's fields, before the
 * next section is read.
 */
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "config_walk.h"
#include "onvm_cpuset.h"

int
cfg_parse_node(struct cfg_walk *w, const json_t *root, struct mgr_config *cfg)
{
	static const char *const keys[] = {"name", "file_prefix", "lcores", "eal_args", NULL};
	json_t *node;

	if (cfg_get_section(w, root, "node", keys, &node) < 0)
		return -1;
	if (node == NULL)
		return 0;
	if (cfg_get_string(w, node, "node", "name", cfg->node_name, sizeof(cfg->node_name), false,
			   false) < 0 ||
	    cfg_get_string(w, node, "node", "file_prefix", cfg->file_prefix,
			   sizeof(cfg->file_prefix), false, true) < 0 ||
	    cfg_get_string(w, node, "node", "lcores", cfg->lcores, sizeof(cfg->lcores), false,
			   false) < 0 ||
	    cfg_get_string_list(w, node, "node", "eal_args", cfg->eal_args, &cfg->n_eal) < 0)
		return -1;
	if (!cfg_valid_name(cfg->node_name))
		return cfg_fail(w, "node.name", CFG_NAME_RULE);
	if (!cfg_valid_name(cfg->file_prefix))
		return cfg_fail(w, "node.file_prefix", CFG_NAME_RULE);
	return 0;
}

static bool
is_pow2(uint64_t x)
{
	return x != 0 && (x & (x - 1)) == 0;
}

int
cfg_parse_tunables(struct cfg_walk *w, const json_t *root, struct mgr_config *cfg)
{
	static const char *const pool_keys[] = {"mbufs", "cache", NULL};
	static const char *const ring_keys[] = {"nf_size", "port_size", "rx_desc", "tx_desc", NULL};
	static const char *const stats_keys[] = {"interval_ms", NULL};
	static const char *const idle_keys[] = {"spin_us", "max_sleep_us", "share_nf_cpus", NULL};
	static const char *const nfs_keys[] = {"start_timeout_ms", "start_retries", "heartbeat_ms",
					       "cpus", "standby_cpus", NULL};
	static const char *const startup_keys[] = {"link_wait_ms", NULL};
	static const char *const state_keys[] = {"pool_mb", NULL};
	json_t *o;

	if (cfg_get_section(w, root, "pool", pool_keys, &o) < 0)
		return -1;
	if (o != NULL &&
	    (CFG_UINT_FIELD(w, o, "pool", "mbufs", 1024, 1u << 24, cfg->nb_mbufs) < 0 ||
	     CFG_UINT_FIELD(w, o, "pool", "cache", 0, 512, cfg->mbuf_cache) < 0))
		return -1;
	if (cfg_get_section(w, root, "rings", ring_keys, &o) < 0)
		return -1;
	if (o != NULL &&
	    (CFG_UINT_FIELD(w, o, "rings", "nf_size", 64, 1u << 20, cfg->nf_ring_size) < 0 ||
	     CFG_UINT_FIELD(w, o, "rings", "port_size", 64, 1u << 20, cfg->port_ring_size) < 0 ||
	     CFG_UINT_FIELD(w, o, "rings", "rx_desc", 64, 16384, cfg->rx_desc) < 0 ||
	     CFG_UINT_FIELD(w, o, "rings", "tx_desc", 64, 16384, cfg->tx_desc) < 0))
		return -1;
	if (!is_pow2(cfg->nf_ring_size))
		return cfg_fail(w, "rings.nf_size", "must be a power of two");
	if (!is_pow2(cfg->port_ring_size))
		return cfg_fail(w, "rings.port_size", "must be a power of two");
	if (cfg_get_section(w, root, "stats", stats_keys, &o) < 0)
		return -1;
	if (o != NULL &&
	    CFG_UINT_FIELD(w, o, "stats", "interval_ms", 0, 3600000, cfg->stats_interval_ms) < 0)
		return -1;
	if (cfg_get_section(w, root, "idle", idle_keys, &o) < 0)
		return -1;
	if (o != NULL &&
	    (CFG_UINT_FIELD(w, o, "idle", "spin_us", 0, 1000000, cfg->idle_spin_us) < 0 ||
	     CFG_UINT_FIELD(w, o, "idle", "max_sleep_us", 1, 100000, cfg->idle_sleep_max_us) < 0 ||
	     cfg_get_bool(w, o, "idle", "share_nf_cpus", &cfg->idle_share_nf_cpus) < 0))
		return -1;
	if (cfg_get_section(w, root, "nf_defaults", nfs_keys, &o) < 0)
		return -1;
	if (o != NULL && (CFG_UINT_FIELD(w, o, "nf_defaults", "start_timeout_ms", 10, 600000,
					 cfg->nf_start_timeout_ms) < 0 ||
			  CFG_UINT_FIELD(w, o, "nf_defaults", "start_retries", 0, 10,
					 cfg->nf_start_retries) < 0 ||
			  CFG_UINT_FIELD(w, o, "nf_defaults", "heartbeat_ms", 0, 600000,
					 cfg->nf_heartbeat_ms) < 0 ||
			  cfg_get_string(w, o, "nf_defaults", "cpus", cfg->nf_cpus,
					 sizeof(cfg->nf_cpus), false, false) < 0 ||
			  cfg_get_string(w, o, "nf_defaults", "standby_cpus", cfg->nf_standby_cpus,
					 sizeof(cfg->nf_standby_cpus), false, false) < 0))
		return -1;
	if (cfg->nf_heartbeat_ms != 0 && cfg->nf_heartbeat_ms < 10)
		return cfg_fail(w, "nf_defaults.heartbeat_ms", "must be 0 (off) or at least 10");
	if (onvm_cpulist_parse(cfg->nf_cpus, &cfg->nf_cpu_set) < 0)
		return cfg_fail(w, "nf_defaults.cpus",
				"a CPU list like \"1\" or \"0-1,3\" is expected");
	if (onvm_cpulist_parse(cfg->nf_standby_cpus, &cfg->nf_standby_cpu_set) < 0)
		return cfg_fail(w, "nf_defaults.standby_cpus",
				"a CPU list like \"1\" or \"0-1,3\" is expected");
	if (cfg_get_section(w, root, "startup", startup_keys, &o) < 0)
		return -1;
	if (o != NULL &&
	    CFG_UINT_FIELD(w, o, "startup", "link_wait_ms", 0, 600000, cfg->link_wait_ms) < 0)
		return -1;
	if (cfg_get_section(w, root, "state", state_keys, &o) < 0)
		return -1;
	if (o != NULL && CFG_UINT_FIELD(w, o, "state", "pool_mb", 0, 65536, cfg->state_pool_mb) < 0)
		return -1;
	return 0;
}

int
cfg_parse_units(struct cfg_walk *w, const json_t *root, struct mgr_config *cfg)
{
	static const char *const names[MGR_UNIT_MAX] = {"rx", "tx", "ctrl", "bfd"};
	static const char *const keys[] = {"rx", "tx", "ctrl", "bfd", NULL};
	json_t *o;

	if (cfg_get_section(w, root, "units", keys, &o) < 0)
		return -1;
	if (o == NULL)
		return 0;
	for (int u = 0; u < MGR_UNIT_MAX; u++) {
		char p[CFG_PATH_LEN];
		json_t *v = cfg_member(o, "units", names[u], p);
		uint64_t lc;

		if (v == NULL || json_is_null(v))
			continue;
		if (cfg_check_uint(w, v, p, 0, 127, &lc) < 0)
			return -1;
		cfg->unit_lcore[u] = (int)lc;
	}
	return 0;
}
