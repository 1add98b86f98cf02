/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * config_bfd.c -- the "bfd" section: BFD sessions (RFC 5880/5881) the
 * manager runs on its ports, with their timers and optional authentication
 * (RFC 5880 6.7.4, keyed and meticulous keyed SHA1).
 *
 * A session that could never come up is refused here, with a position: on a
 * port that does not receive, with a non-unicast address, with the peer
 * equal to the local address, or with the same port, local and peer as
 * another session.  The name is a key of the /onvm/bfd telemetry command, so
 * it takes telemetry's alphabet.  Timer defaults are FRR's (300 ms x 3).
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <jansson.h>

#include "bfd_net.h"
#include "config_walk.h"

/* A unicast host address: "198.18.0.1" -> host byte order. */
static int
parse_host_addr(struct cfg_walk *w, const json_t *v, const char *path, uint32_t *ip)
{
	if (cfg_ipv4(w, v, path, ip) < 0)
		return -1;
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
	char type[32] = "", key[MGR_CFG_BFD_KEY_MAX + 1] = "", fp[CFG_PATH_LEN];
	uint64_t key_id = 0;

	if (cfg_check_object(w, v, p, "an auth object", keys) < 0 ||
	    cfg_get_string(w, v, p, "type", type, sizeof(type), true, false) < 0 ||
	    cfg_get_uint(w, v, p, "key_id", 0, 255, &key_id) < 0 ||
	    cfg_get_string(w, v, p, "key", key, sizeof(key), true, false) < 0)
		return -1;
	cfg_join_key(fp, p, "type");
	if (strcmp(type, "keyed-sha1") == 0)
		b->auth_type = BFD_AUTH_KEYED_SHA1;
	else if (strcmp(type, "meticulous-keyed-sha1") == 0)
		b->auth_type = BFD_AUTH_METICULOUS_SHA1;
	else
		return cfg_fail(w, fp,
				"\"%s\" is not supported (keyed-sha1, "
				"meticulous-keyed-sha1)",
				type);
	b->auth_key_id = key_id;
	b->auth_key_len = strlen(key);
	memcpy(b->auth_key, key, b->auth_key_len);
	return 0;
}

int
cfg_parse_bfd(struct cfg_walk *w, const json_t *root, struct mgr_config *cfg)
{
	static const char *const top_keys[] = {"sessions", NULL};
	static const char *const keys[] = {"name",
					   "port",
					   "local",
					   "peer",
					   "peer_mac",
					   "desired_min_tx_us",
					   "required_min_rx_us",
					   "detect_mult",
					   "admin_down",
					   "auth",
					   NULL};
	static const char *const required[] = {"port", "local", "peer", NULL};
	char p[CFG_PATH_LEN], fp[CFG_PATH_LEN];
	json_t *o, *arr, *v, *f;
	size_t i;

	if (cfg_get_section(w, root, "bfd", top_keys, &o) < 0)
		return -1;
	if (o == NULL)
		return 0;
	if (cfg_get_array(w, o, "bfd", "sessions", MGR_CFG_MAX_BFD, &arr) < 0)
		return -1;
	if (arr == NULL)
		return 0;
	json_array_foreach(arr, i, v) {
		struct mgr_bfd_cfg *b = &cfg->bfd[i];
		char mac[32] = "";

		cfg_join_index(p, "bfd.sessions", i);
		/* FRR's defaults: 300 ms x 3. */
		*b = (struct mgr_bfd_cfg){
		    .desired_min_tx_us = 300000, .required_min_rx_us = 300000, .detect_mult = 3};
		if (cfg_check_object(w, v, p, "a BFD session object", keys) < 0 ||
		    cfg_get_string(w, v, p, "name", b->name, sizeof(b->name), true, false) < 0 ||
		    cfg_get_string(w, v, p, "peer_mac", mac, sizeof(mac), false, false) < 0 ||
		    CFG_UINT_FIELD(w, v, p, "desired_min_tx_us", 1000, 60000000,
				   b->desired_min_tx_us) < 0 ||
		    CFG_UINT_FIELD(w, v, p, "required_min_rx_us", 1000, 60000000,
				   b->required_min_rx_us) < 0 ||
		    CFG_UINT_FIELD(w, v, p, "detect_mult", 1, 255, b->detect_mult) < 0)
			return -1;
		/* The name is a key of /onvm/bfd: DPDK telemetry takes only
		 * letters, digits and '_' there. */
		for (const char *c = b->name; *c != '\0'; c++)
			if (!isalnum((unsigned char)*c) && *c != '_')
				return cfg_fail(w, p, "name: use letters, digits or '_'");
		for (const char *const *k = required; *k != NULL; k++)
			if (json_object_get(v, *k) == NULL)
				return cfg_fail(w, p, "missing required field \"%s\"", *k);
		if (cfg_port_ref(w, cfg_member(v, p, "port", fp), fp, cfg, &b->port) < 0)
			return -1;
		if (cfg->ports[b->port].no_rx)
			return cfg_fail(w, fp, "port \"%s\" has \"rx\": false; BFD must receive",
					cfg->ports[b->port].name);
		if (parse_host_addr(w, cfg_member(v, p, "local", fp), fp, &b->local_ip) < 0 ||
		    parse_host_addr(w, cfg_member(v, p, "peer", fp), fp, &b->peer_ip) < 0)
			return -1;
		if (b->peer_ip == b->local_ip)
			return cfg_fail(w, fp, "the peer address is the local address");
		if (mac[0] != '\0') {
			cfg_join_key(fp, p, "peer_mac");
			if (bfd_mac_parse(mac, b->peer_mac) < 0 || (b->peer_mac[0] & 1) != 0)
				return cfg_fail(w, fp,
						"\"%s\" is not a unicast MAC address "
						"(aa:bb:cc:dd:ee:ff)",
						mac);
			b->peer_mac_static = true;
		}
		if (cfg_get_bool(w, v, p, "admin_down", &b->admin_down) < 0 ||
		    ((f = cfg_member(v, p, "auth", fp)) != NULL && parse_bfd_auth(w, f, fp, b) < 0))
			return -1;
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
