/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * config_remote.c -- the "remote" section: this node's role in each
 * protected chain of remote resiliency (predecessor, primary or standby),
 * its links to the other two nodes, the peers' MACs, the HMAC key, and the
 * packet logger's and RSync's tunables.
 *
 * Each role takes only its own fields: a field of another role is an error
 * naming the role it belongs to, so a config copied from one node to another
 * fails loudly instead of being half ignored.  Links must receive (every
 * remote link carries control messages both ways) and be distinct within an
 * entry.  The protected chain of a primary or standby must come in on the
 * predecessor's link and have an exit port, where released packets leave.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <jansson.h>

#include "bfd_net.h"
#include "config_walk.h"

#define P (1u << MGR_REMOTE_PREDECESSOR)
#define M (1u << MGR_REMOTE_PRIMARY)
#define S (1u << MGR_REMOTE_STANDBY)

/* Which roles may give a field. */
static const struct {
	const char *key;
	unsigned int roles;
} role_fields[] = {
	{"name", P | M | S},	     {"id", P | M | S},		 {"role", P | M | S},
	{"epoch", P | M | S},	     {"key", P | M | S},	 {"key_id", P | M | S},
	{"peer_macs", P | M | S},    {"bfd", P},		 {"link_failover", P},
	{"standby_bfd", P},
	{"failover_by", P},
	{"log_packets", P},	     {"log_mb", P},		 {"primary_port", P | S},
	{"failover_timeout_ms", P},
	{"standby_port", P | M},     {"predecessor_port", M | S}, {"chain", M | S},
	/* the primary's latch: a standby's too with "reprotect" (checked below) */
	{"stages", M | S},	     {"stage_packets", M | S},	 {"stage_close_us", M | S},
	{"retrans_us", M | S},	     {"max_tries", M | S},	 {"standby_window", M | S},
	{"checkpoint_ms", M | S},    {"stage_state_kb", M | S},	 {"window", S},
	{"max_frags", S},	     {"txts_flows", S},		 {"state_base_mb", M | S},
	{"state_window_mb", M | S},  {"reprotect", S},
};
static const char *const latch_fields[] = {"stages",	  "stage_packets",  "stage_close_us",
					    "retrans_us",	  "max_tries",	    "standby_window",
					    "checkpoint_ms", "stage_state_kb", NULL};

static const char *const role_names[] = {
	[MGR_REMOTE_PREDECESSOR] = "predecessor",
	[MGR_REMOTE_PRIMARY] = "primary",
	[MGR_REMOTE_STANDBY] = "standby",
};
static const char *const peer_names[MGR_PEER_MAX] = {"predecessor", "primary", "standby"};

static const char *
roles_of(unsigned int mask, char *buf, size_t len)
{
	buf[0] = '\0';
	for (int r = MGR_REMOTE_PREDECESSOR; r <= MGR_REMOTE_STANDBY; r++)
		if (mask & (1u << r))
			snprintf(buf + strlen(buf), len - strlen(buf), "%s%s",
				 buf[0] != '\0' ? " or " : "", role_names[r]);
	return buf;
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)tolower((unsigned char)c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static int
parse_key(struct cfg_walk *w, const char *path, const char *hex, struct mgr_remote_cfg *r)
{
	size_t n = strlen(hex);

	if (n % 2 != 0 || n < 32 || n > 2 * MGR_CFG_REMOTE_KEY_MAX)
		return cfg_fail(w, path, "an HMAC key is 32..%d hex digits (16..%d bytes), even",
				2 * MGR_CFG_REMOTE_KEY_MAX, MGR_CFG_REMOTE_KEY_MAX);
	for (size_t i = 0; i < n; i += 2) {
		int hi = hexval(hex[i]), lo = hexval(hex[i + 1]);

		if (hi < 0 || lo < 0)
			return cfg_fail(w, path, "not a hex digit at position %zu",
					hi < 0 ? i + 1 : i + 2);
		r->key[i / 2] = (uint8_t)(hi << 4 | lo);
	}
	r->key_len = (uint8_t)(n / 2);
	return 0;
}

/* "peer_macs": {"primary": "aa:..", ...}: only the peers the role talks to. */
static int
parse_peer_macs(struct cfg_walk *w, const json_t *v, const char *p, struct mgr_remote_cfg *r)
{
	static const char *const keys[] = {"predecessor", "primary", "standby", NULL};
	char fp[CFG_PATH_LEN];
	const char *k;
	json_t *mv;

	if (cfg_check_object(w, v, p, "an object of peer MACs", keys) < 0)
		return -1;
	json_object_foreach((json_t *)v, k, mv) {
		int peer = 0;
		char mac[32] = "";

		while (strcmp(peer_names[peer], k) != 0)
			peer++;
		cfg_join_key(fp, p, k);
		if ((peer == MGR_PEER_PREDECESSOR && r->role == MGR_REMOTE_PREDECESSOR) ||
		    (peer == MGR_PEER_PRIMARY && r->role == MGR_REMOTE_PRIMARY) ||
		    (peer == MGR_PEER_STANDBY && r->role == MGR_REMOTE_STANDBY))
			return cfg_fail(w, fp, "a %s has no %s peer", role_names[r->role], k);
		if (cfg_get_string(w, v, p, k, mac, sizeof(mac), true, false) < 0)
			return -1;
		if (bfd_mac_parse(mac, r->mac[peer]) < 0 || (r->mac[peer][0] & 1) != 0)
			return cfg_fail(w, fp, "\"%s\" is not a unicast MAC address (aa:bb:cc:dd:ee:ff)",
					mac);
		r->has_mac[peer] = true;
	}
	return 0;
}

static int
port_field(struct cfg_walk *w, const json_t *v, const char *p, const char *key,
	   const struct mgr_config *cfg, int *out)
{
	char fp[CFG_PATH_LEN];
	const json_t *f = cfg_member(v, p, key, fp);

	if (f == NULL)
		return 0;
	if (cfg_port_ref(w, f, fp, cfg, out) < 0)
		return -1;
	if (cfg->ports[*out].no_rx)
		return cfg_fail(w, fp,
				"port \"%s\" has \"rx\": false; remote links carry control "
				"messages both ways",
				cfg->ports[*out].name);
	return 0;
}

static void
remote_defaults(struct mgr_remote_cfg *r)
{
	*r = (struct mgr_remote_cfg){
		.epoch = 1,	       .key_id = 1,	     .bfd = -1, .standby_bfd = -1,
		.link_failover = true, .chain = -1,	     .primary_port = -1,
		.standby_port = -1,    .predecessor_port = -1, .log_packets = 65536,
		.log_mb = 64,	       .stages = 4,	     .stage_packets = 256,
		.failover_timeout_ms = 1000,
		.stage_close_us = 100, .retrans_us = 1000,   .max_tries = 5,
		.standby_window = 16,  .checkpoint_ms = 10,  .stage_state_kb = 16384,
		.window = 32,	       .max_frags = 4096,    .txts_flows = 65536,
		.state_base_mb = 0,    .state_window_mb = 16,
	};
}

static int
parse_entry(struct cfg_walk *w, const json_t *v, const char *p, struct mgr_config *cfg,
	    struct mgr_remote_cfg *r)
{
	static const char *keys[sizeof(role_fields) / sizeof(role_fields[0]) + 1];
	static const char *const required[][3] = {
		[MGR_REMOTE_PREDECESSOR] = {"primary_port", "standby_port", NULL},
		[MGR_REMOTE_PRIMARY] = {"chain", "predecessor_port", "standby_port"},
		[MGR_REMOTE_STANDBY] = {"chain", "primary_port", "predecessor_port"},
	};
	char role[16] = "", key[2 * MGR_CFG_REMOTE_KEY_MAX + 8] = "", bfd[MGR_CFG_NAME_LEN] = "";
	char sbfd[MGR_CFG_NAME_LEN] = "";
	char by[16] = "";
	char chain[MGR_CFG_NAME_LEN] = "", fp[CFG_PATH_LEN], buf[64];
	uint64_t id = 0;
	const json_t *f;

	for (size_t i = 0; i < sizeof(role_fields) / sizeof(role_fields[0]); i++)
		keys[i] = role_fields[i].key;
	remote_defaults(r);
	if (cfg_check_object(w, v, p, "a remote chain object", keys) < 0)
		return -1;
	for (const char *const *k = (const char *const[]){"name", "id", "role", NULL}; *k; k++)
		if (json_object_get(v, *k) == NULL)
			return cfg_fail(w, p, "missing required field \"%s\"", *k);
	if (cfg_get_string(w, v, p, "name", r->name, sizeof(r->name), true, false) < 0 ||
	    cfg_get_uint(w, v, p, "id", 1, UINT16_MAX, &id) < 0 ||
	    cfg_get_string(w, v, p, "role", role, sizeof(role), true, false) < 0)
		return -1;
	r->id = (uint16_t)id;
	/* The name is a telemetry key: letters, digits and '_' only. */
	for (const char *c = r->name; *c != '\0'; c++)
		if (!isalnum((unsigned char)*c) && *c != '_')
			return cfg_fail(w, cfg_member(v, p, "name", fp) ? fp : p,
					"use letters, digits or '_'");
	for (int i = MGR_REMOTE_PREDECESSOR; i <= MGR_REMOTE_STANDBY; i++)
		if (strcmp(role, role_names[i]) == 0)
			r->role = (uint8_t)i;
	if (r->role == 0) {
		cfg_member(v, p, "role", fp);
		return cfg_fail(w, fp, "\"%s\" is not a role (predecessor, primary, standby)", role);
	}
	for (size_t i = 0; i < sizeof(role_fields) / sizeof(role_fields[0]); i++)
		if ((role_fields[i].roles & (1u << r->role)) == 0 &&
		    cfg_member(v, p, role_fields[i].key, fp) != NULL)
			return cfg_fail(w, fp, "a field of role %s, not of %s",
					roles_of(role_fields[i].roles, buf, sizeof(buf)),
					role_names[r->role]);
	/* A standby becomes a primary only with "reprotect": the latch's
	 * fields are of no use to it otherwise. */
	for (const char *const *k = latch_fields; *k != NULL; k++)
		if (r->role == MGR_REMOTE_STANDBY && !json_is_true(json_object_get(v, "reprotect")) &&
		    cfg_member(v, p, *k, fp) != NULL)
			return cfg_fail(w, fp, "a field of role primary, not of standby (unless "
					       "\"reprotect\": true)");
	for (int i = 0; i < 3; i++)
		if (required[r->role][i] != NULL && json_object_get(v, required[r->role][i]) == NULL)
			return cfg_fail(w, p, "missing required field \"%s\" (role %s)",
					required[r->role][i], role_names[r->role]);
	if (CFG_UINT_FIELD(w, v, p, "epoch", 1, INT32_MAX, r->epoch) < 0 ||
	    cfg_get_string(w, v, p, "key", key, sizeof(key), false, false) < 0 ||
	    CFG_UINT_FIELD(w, v, p, "key_id", 1, 255, r->key_id) < 0 ||
	    cfg_get_string(w, v, p, "bfd", bfd, sizeof(bfd), false, false) < 0 ||
	    cfg_get_string(w, v, p, "standby_bfd", sbfd, sizeof(sbfd), false, false) < 0 ||
	    cfg_get_bool(w, v, p, "link_failover", &r->link_failover) < 0 ||
	    cfg_get_bool(w, v, p, "reprotect", &r->reprotect) < 0 ||
	    cfg_get_string(w, v, p, "failover_by", by, sizeof(by), false, false) < 0 ||
	    CFG_UINT_FIELD(w, v, p, "log_packets", 1024, 16777216, r->log_packets) < 0 ||
	    CFG_UINT_FIELD(w, v, p, "log_mb", 1, 65536, r->log_mb) < 0 ||
	    CFG_UINT_FIELD(w, v, p, "failover_timeout_ms", 10, 600000, r->failover_timeout_ms) < 0 ||
	    CFG_UINT_FIELD(w, v, p, "stages", 2, 64, r->stages) < 0 ||
	    CFG_UINT_FIELD(w, v, p, "stage_packets", 1, 65536, r->stage_packets) < 0 ||
	    CFG_UINT_FIELD(w, v, p, "stage_close_us", 1, 1000000, r->stage_close_us) < 0 ||
	    CFG_UINT_FIELD(w, v, p, "retrans_us", 10, 10000000, r->retrans_us) < 0 ||
	    CFG_UINT_FIELD(w, v, p, "max_tries", 1, 100, r->max_tries) < 0 ||
	    CFG_UINT_FIELD(w, v, p, "standby_window", 1, 1024, r->standby_window) < 0 ||
	    CFG_UINT_FIELD(w, v, p, "checkpoint_ms", 1, 60000, r->checkpoint_ms) < 0 ||
	    CFG_UINT_FIELD(w, v, p, "stage_state_kb", 1, 4194304, r->stage_state_kb) < 0 ||
	    CFG_UINT_FIELD(w, v, p, "window", 1, 1024, r->window) < 0 ||
	    CFG_UINT_FIELD(w, v, p, "max_frags", 2, 65535, r->max_frags) < 0 ||
	    CFG_UINT_FIELD(w, v, p, "txts_flows", 1024, 16777216, r->txts_flows) < 0 ||
	    CFG_UINT_FIELD(w, v, p, "state_base_mb", 0, 65535, r->state_base_mb) < 0 ||
	    CFG_UINT_FIELD(w, v, p, "state_window_mb", 1, 32767, r->state_window_mb) < 0)
		return -1;
	if (r->standby_window < r->stages) {
		/* rsync_primary.h: stages waiting for a cut would fill a
		 * smaller window, and the cut could never be sent. */
		if (cfg_member(v, p, "standby_window", fp) == NULL)
			cfg_member(v, p, "stages", fp);
		return cfg_fail(w, fp, "standby_window (%u) must be at least stages (%u)",
				r->standby_window, r->stages);
	}
	if (by[0] != '\0' && strcmp(by, "node") != 0) {
		if (strcmp(by, "agent") != 0) {
			cfg_member(v, p, "failover_by", fp);
			return cfg_fail(w, fp, "\"%s\": \"node\" or \"agent\"", by);
		}
		r->failover_by_agent = true;
	}
	if ((r->txts_flows & (r->txts_flows - 1)) != 0) {
		cfg_member(v, p, "txts_flows", fp);
		return cfg_fail(w, fp, "%u is not a power of two", r->txts_flows);
	}
	if (key[0] != '\0') {
		cfg_member(v, p, "key", fp);
		if (parse_key(w, fp, key, r) < 0)
			return -1;
	} else if (cfg_member(v, p, "key_id", fp) != NULL) {
		return cfg_fail(w, fp, "a key id without a \"key\"");
	}
	for (int k = 0; k < 2; k++) {
		const char *want = k == 0 ? bfd : sbfd;
		int *out = k == 0 ? &r->bfd : &r->standby_bfd;

		if (want[0] == '\0')
			continue;
		for (int i = 0; i < cfg->nbfd && *out < 0; i++)
			if (strcmp(cfg->bfd[i].name, want) == 0)
				*out = i;
		cfg_member(v, p, k == 0 ? "bfd" : "standby_bfd", fp);
		if (*out < 0)
			return cfg_fail(w, fp, "no BFD session named \"%s\" (bfd.sessions)", want);
		if (k == 1 && *out == r->bfd)
			return cfg_fail(w, fp, "the same session as \"bfd\": one per link");
	}
	if ((f = cfg_member(v, p, "peer_macs", fp)) != NULL && parse_peer_macs(w, f, fp, r) < 0)
		return -1;
	if (port_field(w, v, p, "primary_port", cfg, &r->primary_port) < 0 ||
	    port_field(w, v, p, "standby_port", cfg, &r->standby_port) < 0 ||
	    port_field(w, v, p, "predecessor_port", cfg, &r->predecessor_port) < 0)
		return -1;
	{
		const int ports[3] = {r->primary_port, r->standby_port, r->predecessor_port};
		static const char *const names[3] = {"primary_port", "standby_port",
						     "predecessor_port"};

		for (int a = 0; a < 3; a++)
			for (int b = a + 1; b < 3; b++)
				if (ports[a] >= 0 && ports[a] == ports[b]) {
					cfg_member(v, p, names[b], fp);
					return cfg_fail(w, fp, "the same port as \"%s\": each peer "
							       "has a link of its own",
							names[a]);
				}
	}
	if (r->role != MGR_REMOTE_PREDECESSOR) {
		const struct mgr_chain_cfg *c;

		if (cfg_get_string(w, v, p, "chain", chain, sizeof(chain), true, false) < 0)
			return -1;
		cfg_member(v, p, "chain", fp);
		r->chain = mgr_config_chain_index(cfg, chain);
		if (r->chain < 0)
			return cfg_fail(w, fp, "no chain named \"%s\"", chain);
		c = &cfg->chains[r->chain];
		if (c->ingress_port != r->predecessor_port)
			return cfg_fail(w, fp,
					"chain \"%s\" must come in on predecessor_port \"%s\", "
					"where the stamped packets arrive",
					chain, cfg->ports[r->predecessor_port].name);
		if (c->exit_port < 0)
			return cfg_fail(w, fp,
					"chain \"%s\" has no exit port: released packets leave "
					"there",
					chain);
		/* Every input of the chain's NFs comes through the log: no
		 * other chain shares a service with it (its packets were never
		 * stamped), and no flow rule sends another port's into it. */
		for (int j = 0; j < cfg->nchains; j++)
			for (int k = 0; k < cfg->chains[j].len && j != r->chain; k++)
				for (int s = 0; s < c->len; s++)
					if (cfg->chains[j].services[k] == c->services[s])
						return cfg_fail(w, fp,
								"service %u of chain \"%s\" is also "
								"in chain \"%s\": a protected chain's "
								"NFs take only its logged input",
								c->services[s], chain,
								cfg->chains[j].name);
		for (int j = 0; j < cfg->nrules; j++)
			if (cfg->rules[j].chain == r->chain &&
			    cfg->rules[j].in_port != r->predecessor_port)
				return cfg_fail(w, fp,
						"flow_rules[%d] sends packets %s into chain \"%s\": "
						"a protected chain takes only the stamped input of "
						"predecessor_port",
						j, cfg->rules[j].in_port < 0 ? "of any port" :
						"of another port", chain);
	}
	return 0;
}

int
cfg_parse_remote(struct cfg_walk *w, const json_t *root, struct mgr_config *cfg)
{
	static const char *const top_keys[] = {"chains", NULL};
	char p[CFG_PATH_LEN];
	json_t *o, *arr, *v;
	size_t i;

	if (cfg_get_section(w, root, "remote", top_keys, &o) < 0)
		return -1;
	if (o == NULL)
		return 0;
	if (cfg_get_array(w, o, "remote", "chains", MGR_CFG_MAX_REMOTE, &arr) < 0)
		return -1;
	if (arr == NULL)
		return 0;
	json_array_foreach(arr, i, v) {
		struct mgr_remote_cfg *r = &cfg->remote[i];

		cfg_join_index(p, "remote.chains", i);
		if (parse_entry(w, v, p, cfg, r) < 0)
			return -1;
		for (size_t j = 0; j < i; j++) {
			if (strcmp(cfg->remote[j].name, r->name) == 0)
				return cfg_fail(w, p, "duplicate remote chain name \"%s\"", r->name);
			if (cfg->remote[j].id == r->id)
				return cfg_fail(w, p, "id %u is remote chain \"%s\"'s already",
						r->id, cfg->remote[j].name);
			{
				/* One session per link: the units find the chain
				 * of a frame by its port. */
				const int mine[3] = {r->primary_port, r->standby_port,
						     r->predecessor_port};
				const int theirs[3] = {cfg->remote[j].primary_port,
						       cfg->remote[j].standby_port,
						       cfg->remote[j].predecessor_port};

				for (int a = 0; a < 3; a++)
					for (int b = 0; b < 3; b++)
						if (mine[a] >= 0 && mine[a] == theirs[b])
							return cfg_fail(
								w, p,
								"port \"%s\" is already a link of "
								"remote chain \"%s\"",
								cfg->ports[mine[a]].name,
								cfg->remote[j].name);
			}
		}
		cfg->nremote++;
	}
	return 0;
}
