/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * config_chains.c -- the "chains" section (service chains: a list of
 * services, an ingress port, an exit port) and "flow_rules" (5-tuple
 * matches that steer traffic into a chain), with the parsers of the values
 * rules match on: IPv4 prefixes, port ranges and protocols.
 *
 * Chains are parsed before rules, since a rule names its chain, and after
 * ports, since a chain names its ingress and exit ports.  A port is the
 * ingress of one chain at most.  Addresses and masks come out in host byte
 * order, the address already masked (struct mgr_rule_cfg).
 */
#include <arpa/inet.h> /* INET_ADDRSTRLEN */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
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

/* "198.18.0.0/15" or "198.18.0.1" -> address and mask, host byte order. */
static int
parse_prefix(struct cfg_walk *w, const json_t *v, const char *path, uint32_t *ip, uint32_t *mask)
{
	char buf[INET_ADDRSTRLEN + 4], *slash;
	unsigned long len = 32;

	if (cfg_expect_type(w, v, path, JSON_STRING, "an IPv4 prefix string") < 0)
		return -1;
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
	if (cfg_ipv4(w, path, buf, json_string_value(v), ip) < 0)
		return -1;
	*mask = len == 0 ? 0 : 0xffffffffu << (32 - len);
	*ip &= *mask;
	return 0;
}

/* 80, "80" or "1000-2000". */
static int
parse_port_range(struct cfg_walk *w, const json_t *v, const char *path, uint16_t *lo, uint16_t *hi)
{
	unsigned long a, b;
	char *end;

	if (json_is_integer(v)) {
		uint64_t x;

		if (cfg_check_uint(w, v, path, 0, 65535, &x) < 0)
			return -1;
		*lo = *hi = x;
		return 0;
	}
	if (!json_is_string(v))
		return cfg_fail(w, path, "expected a port or \"lo-hi\" range, got %s",
				cfg_type_name(v));
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
	return cfg_fail(w, path, "\"%s\" is not a port or \"lo-hi\" range", json_string_value(v));
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
			return cfg_fail(w, path,
					"unknown protocol \"%s\" (tcp, udp, icmp, any "
					"or a number)",
					s);
		return 0;
	}
	{
		uint64_t x;

		if (cfg_check_uint(w, v, path, 0, 255, &x) < 0)
			return -1;
		*proto = x;
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

		cfg_join_index(p, "flow_rules", i);
		*r = (struct mgr_rule_cfg){.sport_hi = 65535, .dport_hi = 65535, .in_port = -1};
		if (cfg_check_object(w, v, p, "a rule object", keys) < 0 ||
		    cfg_get_string(w, v, p, "chain", chain, sizeof(chain), true, false) < 0)
			return -1;
		r->chain = mgr_config_chain_index(cfg, chain);
		cfg_join_key(fp, p, "chain");
		if (r->chain < 0)
			return cfg_fail(w, fp, "no chain named \"%s\"", chain);
		if ((f = cfg_member(v, p, "src", fp)) != NULL &&
		    parse_prefix(w, f, fp, &r->src_ip, &r->src_mask) < 0)
			return -1;
		if ((f = cfg_member(v, p, "dst", fp)) != NULL &&
		    parse_prefix(w, f, fp, &r->dst_ip, &r->dst_mask) < 0)
			return -1;
		if ((f = cfg_member(v, p, "proto", fp)) != NULL &&
		    parse_proto(w, f, fp, &r->proto) < 0)
			return -1;
		if ((f = cfg_member(v, p, "sport", fp)) != NULL &&
		    parse_port_range(w, f, fp, &r->sport_lo, &r->sport_hi) < 0)
			return -1;
		if ((f = cfg_member(v, p, "dport", fp)) != NULL &&
		    parse_port_range(w, f, fp, &r->dport_lo, &r->dport_hi) < 0)
			return -1;
		if ((f = cfg_member(v, p, "in_port", fp)) != NULL &&
		    cfg_port_ref(w, f, fp, cfg, &r->in_port) < 0)
			return -1;
		cfg->nrules++;
	}
	return 0;
}
