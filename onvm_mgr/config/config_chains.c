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

/* A stateless chain's "store" object (docs/operator-guide.md). */
static int
parse_store(struct cfg_walk *w, const json_t *chain, const char *base, struct mgr_chain_cfg *cc)
{
	static const char *const keys[] = {"address", "mode", "cache", "flush_packets", "flush_us",
					   "pipeline", "timeout_ms", "log_packets", NULL};
	struct onvm_store_cfg *st = &cc->store;
	struct onvm_store_addr a;
	char p[CFG_PATH_LEN], ap[CFG_PATH_LEN], mode[16] = "async", err[160];
	json_t *v = cfg_member(chain, base, "store", p);
	bool cache = true;

	onvm_store_cfg_defaults(st);
	if (v == NULL)
		return cfg_fail(w, base, "a stateless chain needs a \"store\" object");
	if (cfg_check_object(w, v, p, "a store object", keys) < 0 ||
	    cfg_get_string(w, v, p, "address", st->addr, sizeof(st->addr), true, true) < 0 ||
	    cfg_get_string(w, v, p, "mode", mode, sizeof(mode), false, false) < 0 ||
	    cfg_get_bool(w, v, p, "cache", &cache) < 0 ||
	    CFG_UINT_FIELD(w, v, p, "flush_packets", 1, ONVM_STORE_FLUSH_PKTS_MAX, st->flush_pkts) < 0 ||
	    CFG_UINT_FIELD(w, v, p, "flush_us", 1, ONVM_STORE_FLUSH_US_MAX, st->flush_us) < 0 ||
	    CFG_UINT_FIELD(w, v, p, "pipeline", 1, ONVM_STORE_PIPELINE_MAX, st->pipeline) < 0 ||
	    CFG_UINT_FIELD(w, v, p, "timeout_ms", 1, ONVM_STORE_TIMEOUT_MS_MAX, st->timeout_ms) < 0 ||
	    CFG_UINT_FIELD(w, v, p, "log_packets", 64, ONVM_STORE_LOG_PACKETS_MAX, st->log_packets) < 0)
		return -1;
	cfg_join_key(ap, p, "address");
	if (onvm_store_addr_parse(st->addr, &a, err, sizeof(err)) < 0)
		return cfg_fail(w, ap, "%s", err);
	if (strcmp(mode, "sync") == 0) {
		st->mode = ONVM_STORE_SYNC;
	} else if (strcmp(mode, "async") == 0) {
		st->mode = ONVM_STORE_ASYNC;
	} else {
		cfg_join_key(ap, p, "mode");
		return cfg_fail(w, ap, "\"%s\" is not a store mode (sync, async)", mode);
	}
	st->cache = cache;
	if (st->flush_pkts > st->log_packets / 2) {
		cfg_join_key(ap, p, "flush_packets");
		return cfg_fail(w, ap, "%u packets an epoch: at most half of log_packets (%u), or the "
				       "root's log fills before an epoch closes",
				st->flush_pkts, st->log_packets);
	}
	return 0;
}

/* A stateless chain's optional "predecessor" object: {"id": N, "role":
 * "primary" | "spare"} (docs/operator-guide.md). */
static int
parse_peer(struct cfg_walk *w, const json_t *chain, const char *base, struct mgr_chain_cfg *cc)
{
	static const char *const keys[] = {"id", "role", NULL};
	char p[CFG_PATH_LEN], rp[CFG_PATH_LEN], role[16] = "";
	json_t *v = cfg_member(chain, base, "predecessor", p);
	uint64_t id = 0;

	if (v == NULL || json_is_null(v))
		return 0;
	if (cfg_check_object(w, v, p, "a predecessor object", keys) < 0 ||
	    cfg_get_uint(w, v, p, "id", 1, UINT16_MAX, &id) < 0 ||
	    cfg_get_string(w, v, p, "role", role, sizeof(role), true, false) < 0)
		return -1;
	if (json_object_get(v, "id") == NULL)
		return cfg_fail(w, p, "a predecessor needs the \"id\" of its chain");
	cc->peer_id = (uint16_t)id;
	if (strcmp(role, "primary") == 0) {
		cc->peer_role = MGR_SL_PEER_PRIMARY;
	} else if (strcmp(role, "spare") == 0) {
		cc->peer_role = MGR_SL_PEER_SPARE;
	} else {
		cfg_join_key(rp, p, "role");
		return cfg_fail(w, rp, "\"%s\" is not a role behind a predecessor (primary, spare)",
				role);
	}
	return 0;
}

/* "resiliency": "none" (the default), "stateless" or "ftc". */
static int
parse_chain_resiliency(struct cfg_walk *w, const json_t *v, const char *p, struct mgr_config *cfg,
		       struct mgr_chain_cfg *cc)
{
	char mode[16] = "none", rp[CFG_PATH_LEN];

	if (cfg_get_string(w, v, p, "resiliency", mode, sizeof(mode), false, false) < 0)
		return -1;
	if (strcmp(mode, "ftc") != 0 && json_object_get(v, "ftc") != NULL) {
		cfg_join_key(rp, p, "ftc");
		return cfg_fail(w, rp, "\"ftc\" is for a chain with \"resiliency\": \"ftc\"");
	}
	if (strcmp(mode, "ftc") == 0) {
		cc->is_ftc = true;
		if (json_object_get(v, "store") != NULL || json_object_get(v, "predecessor") != NULL) {
			cfg_join_key(rp, p, json_object_get(v, "store") ? "store" : "predecessor");
			return cfg_fail(w, rp, "an FTC chain keeps its state on its next nodes: no "
					       "store, no predecessor");
		}
		return cfg_parse_ftc(w, v, p, cfg, cc);
	}
	if (strcmp(mode, "stateless") == 0) {
		cc->stateless = true;
		return parse_store(w, v, p, cc) < 0 ? -1 : parse_peer(w, v, p, cc);
	}
	cfg_join_key(rp, p, "resiliency");
	if (strcmp(mode, "none") != 0)
		return cfg_fail(w, rp, "\"%s\" is not a chain's resiliency mode (none, stateless, "
				       "ftc; an NF's \"local\" is set on the NF, \"remote\" in the "
				       "\"remote\" section)",
				mode);
	if (json_object_get(v, "store") != NULL) {
		cfg_join_key(rp, p, "store");
		return cfg_fail(w, rp, "\"store\" is for a chain with \"resiliency\": \"stateless\"");
	}
	if (json_object_get(v, "predecessor") != NULL) {
		cfg_join_key(rp, p, "predecessor");
		return cfg_fail(w, rp, "\"predecessor\" is for a chain with \"resiliency\": "
				       "\"stateless\" (remote chains name theirs in \"remote\")");
	}
	return 0;
}

/* What a stateless chain cannot share: its services are its own, have one
 * instance each, and no local standby (the store is the copy). */
static int
check_stateless(struct cfg_walk *w, const char *p, const struct mgr_config *cfg, size_t ci)
{
	const struct mgr_chain_cfg *cc = &cfg->chains[ci];

	for (uint16_t k = 0; k < cc->len; k++) {
		uint16_t svc = cc->services[k];

		for (uint16_t j = 0; j < k; j++)
			if (cc->services[j] == svc)
				return cfg_fail(w, p, "a stateless chain visits service %u once only", svc);
		for (size_t c = 0; c < ci; c++)
			for (uint16_t j = 0; j < cfg->chains[c].len; j++)
				if (cfg->chains[c].services[j] == svc &&
				    (cc->stateless || cfg->chains[c].stateless || cc->is_ftc ||
				     cfg->chains[c].is_ftc))
					return cfg_fail(w, p, "service %u is in chain \"%s\" too: "
							      "%s chain's services are its own",
							svc, cfg->chains[c].name,
							cc->stateless || cfg->chains[c].stateless
								? "a stateless" : "an FTC");
		if (!cc->stateless)
			continue;
		for (int n = 0; n < cfg->nnfs; n++) {
			if (cfg->nfs[n].service != svc)
				continue;
			if (cfg->nfs[n].instances != 1)
				return cfg_fail(w, p, "service %u of a stateless chain runs %u "
						      "instances: one only",
						svc, cfg->nfs[n].instances);
			if (cfg->nfs[n].local)
				return cfg_fail(w, p, "NF \"%s\" of a stateless chain has \"resiliency\": "
						      "\"local\": its state is in the store",
						cfg->nfs[n].name);
		}
	}
	return 0;
}

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
	static const char *const keys[] = {"name",	 "services", "ingress_port", "exit_port",
					   "resiliency", "store",    "predecessor",  "ftc",
					   NULL};
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
		/* (a failed load may have left a partial chain here) */
		memset(cc, 0, sizeof(*cc));
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
		if (parse_chain_resiliency(w, v, p, cfg, cc) < 0)
			return -1;
		if (cc->stateless && (cc->len == 0 || cc->ingress_port < 0 || cc->exit_port < 0))
			return cfg_fail(w, p, "a stateless chain needs services, an ingress_port (its "
					      "root: where epochs begin) and an exit_port (where its "
					      "output waits for the store)");
		if (check_stateless(w, p, cfg, i) < 0)
			return -1;
		for (j = 0; j < i && cc->is_ftc; j++)
			if (cfg->chains[j].is_ftc)
				return cfg_fail(w, p, "chain \"%s\" is this node's FTC chain already: "
						      "one per node", cfg->chains[j].name);
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
