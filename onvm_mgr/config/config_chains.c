/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * config_chains.c -- the "chains" section (service chains: a list of
 * services, an ingress port, an exit port) and "flow_rules" (5-tuple
 * matches that steer traffic into a chain).  What a rule matches on (src,
 * dst, proto, sport, dport) is read by common/onvm_rule.h, the parser the
 * NFs' rules use too, so a prefix or a port range means the same here as in
 * a firewall's rules file: host bits in a prefix are refused, not masked.
 *
 * Chains are parsed before rules, since a rule names its chain, and after
 * ports, since a chain names its ingress and exit ports.  A port is the
 * ingress of one chain at most.  Addresses and masks come out in host byte
 * order (struct mgr_rule_cfg).
 */
#include <stdint.h>
#include <string.h>

#include <jansson.h>

#include "config_walk.h"

/* The optional port reference `key` of `obj`; null is the same as absent. */
static int
get_port(struct cfg_walk *w, const json_t *obj, const char *base, const char *key,
	 const struct mgr_config *cfg, int *out)
{
	char p[CFG_PATH_LEN];
	json_t *v = cfg_member(obj, base, key, p);

	if (v == NULL || json_is_null(v))
		return 0;
	return cfg_port_ref(w, v, p, cfg, out);
}

int
cfg_parse_chains(struct cfg_walk *w, const json_t *root, struct mgr_config *cfg)
{
	static const char *const keys[] = {"name", "services", "ingress_port", "exit_port", NULL};
	char p[CFG_PATH_LEN], sp[CFG_PATH_LEN], ep[CFG_PATH_LEN];
	json_t *arr, *v, *svcs, *s;
	size_t i, j;

	if (cfg_get_array(w, root, "", "chains", MGR_CFG_MAX_CHAINS, &arr) < 0)
		return -1;
	if (arr == NULL)
		return 0;
	json_array_foreach(arr, i, v) {
		struct mgr_chain_cfg *cc = &cfg->chains[i];

		cfg_join_index(p, "chains", i);
		cc->ingress_port = -1;
		cc->exit_port = -1;
		if (cfg_check_object(w, v, p, "a chain object", keys) < 0 ||
		    cfg_get_string(w, v, p, "name", cc->name, sizeof(cc->name), true, false) < 0)
			return -1;
		for (j = 0; j < i; j++)
			if (strcmp(cfg->chains[j].name, cc->name) == 0)
				return cfg_fail(w, p, "duplicate chain name \"%s\"", cc->name);
		if (cfg_get_array(w, v, p, "services", MGR_CFG_MAX_CHAIN_LEN, &svcs) < 0)
			return -1;
		if (svcs != NULL) {
			cfg_join_key(sp, p, "services");
			json_array_foreach(svcs, j, s) {
				uint64_t id;

				cfg_join_index(ep, sp, j);
				if (cfg_check_uint(w, s, ep, 1, MGR_CFG_MAX_SERVICE, &id) < 0)
					return -1;
				cc->services[cc->len++] = id;
			}
		}
		if (get_port(w, v, p, "ingress_port", cfg, &cc->ingress_port) < 0 ||
		    get_port(w, v, p, "exit_port", cfg, &cc->exit_port) < 0)
			return -1;
		if (cc->len == 0 && cc->exit_port < 0)
			return cfg_fail(w, p, "a chain needs services or an exit_port");
		for (j = 0; j < i; j++)
			if (cc->ingress_port >= 0 &&
			    cfg->chains[j].ingress_port == cc->ingress_port)
				return cfg_fail(w, p,
						"port %d is already the ingress of chain \"%s\"",
						cc->ingress_port, cfg->chains[j].name);
		cfg->nchains++;
	}
	return 0;
}

int
cfg_parse_rules(struct cfg_walk *w, const json_t *root, struct mgr_config *cfg)
{
	static const char *const keys[] = {"chain", "src",   "dst",	"proto",
					   "sport", "dport", "in_port", NULL};
	char p[CFG_PATH_LEN], fp[CFG_PATH_LEN];
	json_t *arr, *v, *f;
	size_t i;

	if (cfg_get_array(w, root, "", "flow_rules", MGR_CFG_MAX_RULES, &arr) < 0)
		return -1;
	if (arr == NULL)
		return 0;
	json_array_foreach(arr, i, v) {
		struct mgr_rule_cfg *r = &cfg->rules[i];
		char chain[MGR_CFG_NAME_LEN] = "";
		struct onvm_rule_match m;
		struct onvm_rule_err e;

		cfg_join_index(p, "flow_rules", i);
		*r = (struct mgr_rule_cfg){.in_port = -1};
		if (cfg_check_object(w, v, p, "a rule object", keys) < 0 ||
		    cfg_get_string(w, v, p, "chain", chain, sizeof(chain), true, false) < 0)
			return -1;
		r->chain = mgr_config_chain_index(cfg, chain);
		cfg_join_key(fp, p, "chain");
		if (r->chain < 0)
			return cfg_fail(w, fp, "no chain named \"%s\"", chain);
		if (onvm_rule_match(v, &m, &e) < 0)
			return cfg_rule_fail(w, p, &e);
		r->src_ip = m.src.addr;
		r->src_mask = m.src.mask;
		r->dst_ip = m.dst.addr;
		r->dst_mask = m.dst.mask;
		/* The data path's rule table says "any protocol" with 0 (no IPv4
		 * protocol is 0, so onvm_rule_proto() never gives it). */
		r->proto = m.proto == ONVM_RULE_PROTO_ANY ? 0 : (uint8_t)m.proto;
		r->sport_lo = m.sport.lo;
		r->sport_hi = m.sport.hi;
		r->dport_lo = m.dport.lo;
		r->dport_hi = m.dport.hi;
		if ((f = cfg_member(v, p, "in_port", fp)) != NULL &&
		    cfg_port_ref(w, f, fp, cfg, &r->in_port) < 0)
			return -1;
		cfg->nrules++;
	}
	return 0;
}
