/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * config_ftc.c -- a chain's "ftc" object ("resiliency": "ftc"): this node's
 * part of an FTC chain (docs/design/ftc.md, docs/operator-guide.md).
 *
 * An FTC chain runs over nf_nodes + f nodes, each its own manager: node i
 * (i < nf_nodes) runs the chain's NF i, one instance, and the f nodes after
 * the last NF hold replicas only.  Every node names its position; node 0 is
 * the forwarder (the chain's input), the last the egress buffer (its
 * output), and the two are joined by the feedback link that takes the
 * commit vector back.
 */
#include <inttypes.h>
#include <string.h>

#include "config_walk.h"

/* Defaults: docs/operator-guide.md, "FTC chains". */
static void
ftc_defaults(struct mgr_ftc_cfg *fc)
{
	*fc = (struct mgr_ftc_cfg){
		.feedback_port = -1,
		.state_port = -1,
		.propagate_us = 1000,
		.retrans_us = 5000,
		.mtu = 1900, /* a full-size packet and its entries; one mbuf */
		.log_kb = 2048,
		.log_updates = 1024,
		.replica_mb = 16,
		.window = 16,
		.hold_packets = 8192,
	};
}

static int
get_u32(struct cfg_walk *w, const json_t *v, const char *p, const char *key, uint64_t min,
	uint64_t max, uint32_t *out)
{
	uint64_t x = *out;

	if (cfg_get_uint(w, v, p, key, min, max, &x) < 0)
		return -1;
	*out = (uint32_t)x;
	return 0;
}

/* "recover_from": the positions of the NF's replicas that are alive (the
 * next f nodes, those not recovering too), where its state comes from. */
static int
parse_recover_from(struct cfg_walk *w, const json_t *v, const char *p, struct mgr_ftc_cfg *fc)
{
	char ap[CFG_PATH_LEN], ep[CFG_PATH_LEN];
	json_t *arr, *e;
	size_t i;

	if (cfg_get_array(w, v, p, "recover_from", MGR_FTC_F_MAX, &arr) < 0)
		return -1;
	if (arr == NULL)
		return 0;
	cfg_join_key(ap, p, "recover_from");
	if (!fc->recover)
		return cfg_fail(w, ap, "\"recover_from\" is for a node with \"recover\": true");
	if (fc->position >= fc->nf_nodes)
		return cfg_fail(w, ap, "a replica-only node has no NF state to fetch");
	json_array_foreach(arr, i, e) {
		uint64_t pos;

		cfg_join_index(ep, ap, i);
		if (cfg_check_uint(w, e, ep, fc->position + 1u, fc->position + (uint64_t)fc->f,
				   &pos) < 0)
			return -1;
		for (uint8_t k = 0; k < fc->n_recover_from; k++)
			if (fc->recover_from[k] == pos)
				return cfg_fail(w, ep, "position %" PRIu64 " twice", pos);
		fc->recover_from[fc->n_recover_from++] = (uint8_t)pos;
	}
	return 0;
}

int
cfg_parse_ftc(struct cfg_walk *w, const json_t *chain, const char *base, struct mgr_config *cfg,
	      struct mgr_chain_cfg *cc)
{
	static const char *const keys[] = {"id",	  "f",		"position", "nf_nodes",
					   "feedback_port", "propagate_us", "retrans_us", "mtu",
					   "log_kb",	  "log_updates",  "replica_mb", "window",
					   "hold_packets",  "state_port",	"recover",    "recover_from",
					   NULL};
	static const char *const required[] = {"id", "f", "position", "nf_nodes", NULL};
	char p[CFG_PATH_LEN], kp[CFG_PATH_LEN];
	json_t *v = cfg_member(chain, base, "ftc", p), *s;
	struct mgr_ftc_cfg *fc = &cc->ftc;
	uint64_t id = 0, f = 0, pos = 0, nfn = 0;
	unsigned int last;

	ftc_defaults(fc);
	if (v == NULL)
		return cfg_fail(w, base, "an FTC chain needs an \"ftc\" object");
	if (cfg_check_object(w, v, p, "an ftc object", keys) < 0)
		return -1;
	for (const char *const *k = required; *k != NULL; k++)
		if (json_object_get(v, *k) == NULL)
			return cfg_fail(w, p, "an ftc object needs \"%s\"", *k);
	if (cfg_get_uint(w, v, p, "id", 1, UINT16_MAX, &id) < 0 ||
	    cfg_get_uint(w, v, p, "f", 1, MGR_FTC_F_MAX, &f) < 0 ||
	    cfg_get_uint(w, v, p, "nf_nodes", 1, MGR_FTC_MAX_NF_NODES, &nfn) < 0 ||
	    cfg_get_uint(w, v, p, "position", 0, nfn + f - 1, &pos) < 0 ||
	    get_u32(w, v, p, "propagate_us", 10, 1000000, &fc->propagate_us) < 0 ||
	    get_u32(w, v, p, "retrans_us", 100, 10000000, &fc->retrans_us) < 0 ||
	    get_u32(w, v, p, "mtu", 576, 9216, &fc->mtu) < 0 ||
	    get_u32(w, v, p, "log_kb", 64, 1u << 20, &fc->log_kb) < 0 ||
	    get_u32(w, v, p, "log_updates", 16, 1u << 20, &fc->log_updates) < 0 ||
	    get_u32(w, v, p, "replica_mb", 1, 4096, &fc->replica_mb) < 0 ||
	    get_u32(w, v, p, "window", 1, 4096, &fc->window) < 0 ||
	    get_u32(w, v, p, "hold_packets", 64, 1u << 20, &fc->hold_packets) < 0)
		return -1;
	fc->id = (uint16_t)id;
	fc->f = (uint8_t)f;
	fc->nf_nodes = (uint8_t)nfn;
	fc->position = (uint8_t)pos;
	last = fc->nf_nodes + fc->f - 1u;
	if (fc->position < fc->nf_nodes ? cc->len != 1 : cc->len != 0)
		return cfg_fail(w, base,
				"node %u of an FTC chain with %u NF nodes runs %s: \"services\" "
				"must name %s",
				fc->position, fc->nf_nodes,
				fc->position < fc->nf_nodes ? "one NF" : "replicas only",
				fc->position < fc->nf_nodes ? "one service" : "none");
	if (cc->ingress_port < 0 || cc->exit_port < 0)
		return cfg_fail(w, base, "an FTC chain needs an ingress_port and an exit_port");
	cfg_join_key(kp, p, "feedback_port");
	if ((s = json_object_get(v, "feedback_port")) != NULL && !json_is_null(s) &&
	    cfg_port_ref(w, s, kp, cfg, &fc->feedback_port) < 0)
		return -1;
	if ((fc->position == 0 || fc->position == last) != (fc->feedback_port >= 0))
		return cfg_fail(w, kp, "%s", fc->feedback_port >= 0
				? "only the first and the last node of an FTC chain have a "
				  "feedback_port"
				: "the first and the last node of an FTC chain need the "
				  "feedback_port between them");
	if (fc->feedback_port >= 0 &&
	    (fc->feedback_port == cc->ingress_port || fc->feedback_port == cc->exit_port))
		return cfg_fail(w, kp, "the feedback link is a port of its own, not the chain's "
				       "ingress or exit");
	cfg_join_key(kp, p, "state_port");
	if ((s = json_object_get(v, "state_port")) != NULL && !json_is_null(s) &&
	    cfg_port_ref(w, s, kp, cfg, &fc->state_port) < 0)
		return -1;
	if (cfg_get_bool(w, v, p, "recover", &fc->recover) < 0 || parse_recover_from(w, v, p, fc) < 0)
		return -1;
	if (fc->recover && fc->state_port < 0)
		return cfg_fail(w, p, "a node that recovers fetches state: it needs a state_port");
	if (fc->recover && fc->position < fc->nf_nodes && fc->n_recover_from == 0)
		return cfg_fail(w, p, "a recovering NF node needs \"recover_from\": the positions "
				      "of its NF's live replicas");
	for (int n = 0; n < cfg->nnfs && cc->len == 1; n++) {
		if (cfg->nfs[n].service != cc->services[0])
			continue;
		if (cfg->nfs[n].instances != 1)
			return cfg_fail(w, base, "the NF of an FTC node runs one instance, not %u",
					cfg->nfs[n].instances);
		if (cfg->nfs[n].local)
			return cfg_fail(w, base, "NF \"%s\" of an FTC chain has \"resiliency\": "
						 "\"local\": its replicas are on the next nodes",
					cfg->nfs[n].name);
	}
	return 0;
}
