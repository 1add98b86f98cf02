/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * config.c -- the config loader's entry points (config.h): defaults, loading
 * from a file or from memory, freeing, and the name look-ups.
 *
 * Loading is a walk (config_walk.h) over the root object, one section parser
 * per part of the schema, in a fixed order: a section may refer only to what
 * an earlier one defined (chains name ports, rules name chains, BFD sessions
 * name ports), and "default_chain", which names a chain, is read last, here.
 * The root's keys are checked first, so a misspelt section is reported before
 * anything inside a correct one.  The first error stops the load.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "config.h"
#include "config_walk.h"

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
	cfg->nf_start_retries = 2;
	cfg->nf_heartbeat_ms = 2000;
	cfg->link_wait_ms = 5000;
	cfg->state_pool_mb = 64;
	cfg->default_chain = -1;
	snprintf(cfg->containers.command, sizeof(cfg->containers.command), "podman");
}

int
mgr_config_load_string(const char *text, size_t len, const char *name, struct mgr_config *cfg,
		       char *err, size_t errlen)
{
	static const char *const keys[] = {"node", "pool", "rings", "units", "stats", "idle",
					   "nf_defaults", "startup", "state", "ports", "nfs", "chains",
					   "flow_rules", "default_chain", "bfd", "remote",
					   "containers", NULL};
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
		cfg_one_line(err);
		return -1;
	}
	if (!json_is_object(root)) {
		cfg_fail(&w, "", "the configuration must be a JSON object");
		goto out;
	}
	if (cfg_check_keys(&w, root, "", keys) < 0 || cfg_parse_node(&w, root, cfg) < 0 ||
	    cfg_parse_tunables(&w, root, cfg) < 0 || cfg_parse_units(&w, root, cfg) < 0 ||
	    cfg_parse_ports(&w, root, cfg) < 0 || cfg_parse_containers(&w, root, cfg) < 0 ||
	    cfg_parse_nfs(&w, root, cfg) < 0 ||
	    cfg_parse_chains(&w, root, cfg) < 0 || cfg_parse_rules(&w, root, cfg) < 0 ||
	    cfg_parse_bfd(&w, root, cfg) < 0 || cfg_parse_remote(&w, root, cfg) < 0)
		goto out;
	dc = json_object_get(root, "default_chain");
	if (dc != NULL && !json_is_null(dc)) {
		if (cfg_expect_type(&w, dc, "default_chain", JSON_STRING, "a chain name") < 0)
			goto out;
		cfg->default_chain = mgr_config_chain_index(cfg, json_string_value(dc));
		if (cfg->default_chain < 0) {
			cfg_fail(&w, "default_chain", "no chain named \"%s\"",
				 json_string_value(dc));
			goto out;
		}
		for (int r = 0; r < cfg->nremote; r++)
			if (cfg->remote[r].role != MGR_REMOTE_PREDECESSOR &&
			    cfg->remote[r].chain == cfg->default_chain) {
				cfg_fail(&w, "default_chain",
					 "chain \"%s\" is protected (remote.chains \"%s\"): it takes "
					 "only the stamped input of its predecessor_port",
					 json_string_value(dc), cfg->remote[r].name);
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
		struct mgr_nf_container_cfg *ctr = &cfg->nfs[i].ctr;

		for (int a = 0; a < cfg->nfs[i].nargs; a++)
			free(cfg->nfs[i].args[a]);
		cfg->nfs[i].nargs = 0;
		for (int a = 0; a < ctr->nvolumes; a++)
			free(ctr->volumes[a]);
		ctr->nvolumes = 0;
		for (int a = 0; a < ctr->nargs; a++)
			free(ctr->args[a]);
		ctr->nargs = 0;
	}
	for (int a = 0; a < cfg->containers.nulimits; a++)
		free(cfg->containers.ulimits[a]);
	cfg->containers.nulimits = 0;
	for (int a = 0; a < cfg->containers.nargs; a++)
		free(cfg->containers.args[a]);
	cfg->containers.nargs = 0;
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
