/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * The load balancer's logic: see load_balancer_core.h.
 *
 * Everything that must survive a failover sits in two state regions: "lb"
 * (counters and a fingerprint of the config the table was built for) and
 * "lb_flows" (the shared flow table, onvm_flow_table.h, one entry per flow
 * holding its backend's index).  Every write is announced first
 * (nf_state_touch_ptr(), or the flow table's own touches), so the replica a
 * standby takes over always matches the packets that left: a flow that was
 * given a backend before the failover keeps it after.
 *
 * Backends are stored by index into the config's list, so the config must be
 * the same for the standby: the fingerprint in "lb" catches a changed list
 * (lb_open() fails rather than send old flows to the wrong addresses).
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#include "load_balancer_core.h"
#include "onvm_nf_json.h"
#include "onvm_pkt_helper.h"
#include "onvm_rule.h"

#define LB_MAGIC UINT64_C(0x4c42535441543031) /* "LBSTAT01" */

/* ---- configuration ------------------------------------------------------------------ */

static bool
unicast_ip(uint32_t a)
{
	return a != 0 && a < UINT32_C(0xe0000000); /* not 0.0.0.0, multicast, class E */
}

static int
parse_backend(const struct nf_json *j, const json_t *o, uint32_t i, struct lb_backend *b,
	      char *err, size_t errlen)
{
	static const char *const keys[] = {"ip", "mac", NULL};
	const char *mac = NULL;
	char path[64], p[80], ip[ONVM_RULE_IPV4_STR_LEN];
	int ret;

	snprintf(path, sizeof(path), "backends[%u]", i);
	if ((ret = nf_json_only_keys(j, o, path, keys, err, errlen)) < 0 ||
	    (ret = nf_json_ipv4(j, o, path, "ip", true, &b->ip, err, errlen)) < 0 ||
	    (ret = nf_json_string(j, o, path, "mac", true, &mac, err, errlen)) < 0)
		return ret;
	snprintf(p, sizeof(p), "%s.ip", path);
	if (!unicast_ip(b->ip))
		return nf_json_fail(j, err, errlen, p, "not a unicast address: \"%s\"",
				    onvm_rule_ipv4_str(b->ip, ip));
	snprintf(p, sizeof(p), "%s.mac", path);
	if (nf_parse_mac(mac, b->mac) < 0)
		return nf_json_fail(j, err, errlen, p,
				    "not a MAC address (aa:bb:cc:dd:ee:ff): \"%s\"", mac);
	if (b->mac[0] & 1)
		return nf_json_fail(j, err, errlen, p, "not a unicast MAC: \"%s\"", mac);
	return 0;
}

static int
parse_doc(struct lb_config *cfg, const struct nf_json *j, char *err, size_t errlen)
{
	static const char *const keys[] = {"vip", "backends", "idle_timeout_ms", "flows", NULL};
	const json_t *root = j->root, *list;
	char vip[ONVM_RULE_IPV4_STR_LEN];
	uint64_t v;
	int ret;

	memset(cfg, 0, sizeof(*cfg));
	cfg->idle_timeout_ms = LB_IDLE_TIMEOUT_MS_DEF;
	cfg->flows = LB_FLOWS_DEF;
	if ((ret = nf_json_only_keys(j, root, "", keys, err, errlen)) < 0)
		return ret;
	if ((ret = nf_json_ipv4(j, root, "", "vip", false, &cfg->vip, err, errlen)) < 0)
		return ret;
	if (json_object_get(root, "vip") != NULL) {
		if (!unicast_ip(cfg->vip))
			return nf_json_fail(j, err, errlen, "vip", "not a unicast address: \"%s\"",
					    onvm_rule_ipv4_str(cfg->vip, vip));
		cfg->has_vip = true;
	}
	list = json_object_get(root, "backends");
	if (list == NULL)
		return nf_json_fail(j, err, errlen, "backends", "required field missing");
	if (!json_is_array(list) || json_array_size(list) == 0 ||
	    json_array_size(list) > LB_BACKENDS_MAX)
		return nf_json_fail(j, err, errlen, "backends",
				    "expected an array of 1..%d backends", LB_BACKENDS_MAX);
	for (uint32_t i = 0; i < json_array_size(list); i++) {
		struct lb_backend *b = &cfg->backends[i];
		char p[64];

		if ((ret = parse_backend(j, json_array_get(list, i), i, b, err, errlen)) < 0)
			return ret;
		snprintf(p, sizeof(p), "backends[%u].ip", i);
		for (uint32_t k = 0; k < i; k++)
			if (cfg->backends[k].ip == b->ip)
				return nf_json_fail(j, err, errlen, p,
						    "same address as backends[%u]", k);
		if (cfg->has_vip && b->ip == cfg->vip)
			return nf_json_fail(j, err, errlen, p, "same address as the vip");
		cfg->n_backends = i + 1;
	}
	v = cfg->idle_timeout_ms;
	if ((ret = nf_json_uint(j, root, "", "idle_timeout_ms", 1, LB_IDLE_TIMEOUT_MS_MAX, false,
				&v, err, errlen)) < 0)
		return ret;
	cfg->idle_timeout_ms = v;
	v = cfg->flows;
	if ((ret = nf_json_uint(j, root, "", "flows", ONVM_FT_CAPACITY_MIN, LB_FLOWS_MAX, false, &v,
				err, errlen)) < 0)
		return ret;
	if ((v & (v - 1)) != 0)
		return nf_json_fail(j, err, errlen, "flows",
				    "expected a power of two, not %" PRIu64, v);
	cfg->flows = (uint32_t)v;
	return 0;
}

int
lb_config_parse(struct lb_config *cfg, const char *name, const char *text, size_t len, char *err,
		size_t errlen)
{
	struct nf_json j;
	int ret = nf_json_load_text(&j, name, text, len, err, errlen);

	if (ret < 0)
		return ret;
	ret = parse_doc(cfg, &j, err, errlen);
	nf_json_free(&j);
	return ret;
}

int
lb_config_load(struct lb_config *cfg, const char *file, char *err, size_t errlen)
{
	struct nf_json j;
	int ret = nf_json_load_file(&j, file, err, errlen);

	if (ret < 0)
		return ret;
	ret = parse_doc(cfg, &j, err, errlen);
	nf_json_free(&j);
	return ret;
}

/* ---- state -------------------------------------------------------------------------- */

static inline void
touch(struct lb *lb, const void *p, size_t len)
{
	if (lb->state != NULL)
		nf_state_touch_ptr(lb->state, p, len);
}

/* Count one event in a state counter. */
#define LB_COUNT(lb, field)                                                                        \
	do {                                                                                       \
		if ((lb)->replay)                                                                  \
			break;                                                                     \
		touch((lb), &(field), sizeof(field));                                              \
		(field)++;                                                                         \
	} while (0)

/* What the table's contents depend on: the backend list (flows hold
 * indexes into it), the VIP and the table's shape. */
static uint64_t
config_hash(const struct lb_config *cfg)
{
	uint32_t words[4] = {cfg->has_vip, cfg->vip, cfg->n_backends, cfg->flows};
	uint64_t h = nf_fnv1a(NF_FNV1A_INIT, words, sizeof(words));

	for (uint32_t i = 0; i < cfg->n_backends; i++) {
		h = nf_fnv1a(h, &cfg->backends[i].ip, sizeof(cfg->backends[i].ip));
		h = nf_fnv1a(h, cfg->backends[i].mac, sizeof(cfg->backends[i].mac));
	}
	return h;
}

void
lb_regions(const struct lb_config *cfg, struct nf_state_request reqs[LB_REGIONS])
{
	reqs[0] = (struct nf_state_request){.name = "lb", .size = sizeof(struct lb_totals)};
	reqs[1] = (struct nf_state_request){
		.name = "lb_flows",
		.size = onvm_ft_mem_size(cfg->flows, sizeof(struct lb_flow)),
	};
}

int
lb_open(struct lb *lb, const struct lb_config *cfg, struct nf_state_set *state,
	void *const regions[LB_REGIONS], lb_rand_fn *rand, void *rand_arg, uint32_t sweep_ms,
	char *err, size_t errlen)
{
	size_t ft_len = onvm_ft_mem_size(cfg->flows, sizeof(struct lb_flow));
	uint64_t h = config_hash(cfg);
	struct lb_totals *t = regions[0];
	uint64_t budget;
	int ret;

	if (t == NULL || regions[1] == NULL || rand == NULL || cfg->n_backends == 0 ||
	    sweep_ms == 0) {
		snprintf(err, errlen, "load_balancer: bad arguments");
		return -EINVAL;
	}
	*lb = (struct lb){
		.cfg = cfg,
		.state = state,
		.t = t,
		.rand = rand,
		.rand_arg = rand_arg,
		.idle_ns = cfg->idle_timeout_ms * 1000000ULL,
		.sweep_every_ns = (uint64_t)sweep_ms * 1000000ULL,
	};
	if (t->magic == 0) {
		touch(lb, t, sizeof(*t));
		memset(t, 0, sizeof(*t));
		t->config_hash = h;
		t->magic = LB_MAGIC;
	} else if (t->magic != LB_MAGIC) {
		snprintf(err, errlen, "load_balancer: state region \"lb\" holds something else");
		return -EBADMSG;
	} else if (t->config_hash != h) {
		snprintf(err, errlen,
			 "load_balancer: the state was built for another config (vip, backends or "
			 "flows changed)");
		return -EBADMSG;
	}
	ret = onvm_ft_open(&lb->ft, state, regions[1], ft_len, cfg->flows, sizeof(struct lb_flow),
			   err, errlen);
	if (ret < 0)
		return ret;
	/* Sweep the whole table about twice per idle timeout. */
	budget = (uint64_t)cfg->flows * sweep_ms * 2 / cfg->idle_timeout_ms;
	lb->sweep_budget = (uint32_t)RTE_MIN(RTE_MAX(budget, UINT64_C(64)), (uint64_t)cfg->flows);
	return 0;
}

/* ---- packets ------------------------------------------------------------------------ */

/*
 * Recompute the IPv4 header checksum and the TCP/UDP checksum after a
 * rewrite.  nf_pkt_set_checksums() does it for a single-segment frame; a
 * frame chained over several mbufs (net_pcap does that for frames longer
 * than a segment) gets the same computation over its segments.  Only
 * unfragmented packets come here.
 */
static void
set_checksums(struct rte_mbuf *m, struct rte_ipv4_hdr *ip, const struct onvm_pkt_info *pi)
{
	uint16_t l4_off = pi->l2_len + pi->l3_len, raw, *field;
	uint32_t sum;

	if (m->nb_segs == 1 && nf_pkt_set_checksums(m) == 0)
		return;
	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	if (pi->proto == IPPROTO_TCP)
		field = &((struct rte_tcp_hdr *)((uint8_t *)ip + pi->l3_len))->cksum;
	else if (pi->proto == IPPROTO_UDP)
		field = &((struct rte_udp_hdr *)((uint8_t *)ip + pi->l3_len))->dgram_cksum;
	else
		return;
	if (pi->proto == IPPROTO_UDP && *field == 0)
		return; /* no checksum, and it stays that way */
	*field = 0;
	if (nf_pkt_cksum_chain(m, l4_off, pi->ip_len - pi->l3_len, &raw) < 0)
		return; /* cannot happen: the parser checked the lengths */
	sum = (uint32_t)raw + rte_ipv4_phdr_cksum(ip, 0);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	*field = (uint16_t)~sum;
	if (*field == 0 && pi->proto == IPPROTO_UDP)
		*field = 0xffff;
}

static struct lb_flow *
new_flow(struct lb *lb, const struct onvm_flow_key *key, uint64_t now_ns)
{
	struct lb_flow *f = onvm_ft_insert(&lb->ft, key, now_ns, NULL);
	uint32_t b;

	if (f == NULL)
		return NULL;
	/* The one random draw of the flow (marks this packet ND); the entry
	 * was touched by the insert. */
	b = (uint32_t)(lb->rand(lb->rand_arg) % lb->cfg->n_backends);
	f->backend = b;
	LB_COUNT(lb, lb->t->new_flows);
	LB_COUNT(lb, lb->t->backend_flows[b]);
	LB_COUNT(lb, lb->t->backend_active[b]);
	return f;
}

static enum lb_verdict
balance(struct lb *lb, struct rte_mbuf *m, struct rte_ipv4_hdr *ip,
	const struct onvm_pkt_info *pi, uint64_t now_ns)
{
	struct onvm_flow_key key;
	const struct lb_backend *be;
	struct lb_flow *f;

	onvm_flow_key_from_info(pi, &key);
	f = onvm_ft_lookup(&lb->ft, &key);
	if (f != NULL) {
		onvm_ft_seen(&lb->ft, f, now_ns);
		onvm_ft_touch_value(&lb->ft, f);
	} else if ((f = new_flow(lb, &key, now_ns)) == NULL) {
		LB_COUNT(lb, lb->t->table_full);
		return LB_DROP;
	}
	f->packets++;
	be = &lb->cfg->backends[f->backend];
	rte_ether_addr_copy((const struct rte_ether_addr *)be->mac,
			    &rte_pktmbuf_mtod(m, struct rte_ether_hdr *)->dst_addr);
	ip->dst_addr = rte_cpu_to_be_32(be->ip);
	set_checksums(m, ip, pi);
	LB_COUNT(lb, lb->t->balanced);
	return LB_FORWARD;
}

/* VIP mode, a packet from a backend's address: a reply if the reverse
 * 5-tuple is a flow that was given this backend. */
static enum lb_verdict
reply(struct lb *lb, struct rte_mbuf *m, struct rte_ipv4_hdr *ip,
      const struct onvm_pkt_info *pi, uint64_t now_ns)
{
	struct onvm_flow_key key = {
		.src_ip = pi->dst_ip,
		.dst_ip = lb->cfg->vip,
		.sport = pi->dport,
		.dport = pi->sport,
		.proto = pi->proto,
	};
	struct lb_flow *f = onvm_ft_lookup(&lb->ft, &key);

	if (f == NULL || lb->cfg->backends[f->backend].ip != pi->src_ip) {
		LB_COUNT(lb, lb->t->unmatched_from_backend);
		return LB_FORWARD;
	}
	onvm_ft_seen(&lb->ft, f, now_ns);
	onvm_ft_touch_value(&lb->ft, f);
	f->replies++;
	ip->src_addr = rte_cpu_to_be_32(lb->cfg->vip);
	set_checksums(m, ip, pi);
	LB_COUNT(lb, lb->t->replies);
	return LB_FORWARD;
}

static bool
is_backend(const struct lb_config *cfg, uint32_t ip)
{
	for (uint32_t i = 0; i < cfg->n_backends; i++)
		if (cfg->backends[i].ip == ip)
			return true;
	return false;
}

enum lb_verdict
lb_packet(struct lb *lb, struct rte_mbuf *m, uint64_t now_ns)
{
	struct onvm_pkt_info pi;
	enum onvm_parse_reason r = nf_pkt_parse(m, &pi);
	struct rte_ipv4_hdr *ip;
	bool to_vip, from_backend;

	LB_COUNT(lb, lb->t->packets);
	if (r == ONVM_PARSE_NOT_IPV4) {
		LB_COUNT(lb, lb->t->non_ip);
		return LB_FORWARD;
	}
	if (r != ONVM_PARSE_OK) {
		LB_COUNT(lb, lb->t->malformed[r]);
		return LB_DROP;
	}
	to_vip = !lb->cfg->has_vip || pi.dst_ip == lb->cfg->vip;
	from_backend = lb->cfg->has_vip && !to_vip && is_backend(lb->cfg, pi.src_ip);
	if (!to_vip && !from_backend) {
		LB_COUNT(lb, lb->t->passed);
		return LB_FORWARD;
	}
	/* The rewrite needs the headers in the first segment (always so with
	 * DPDK's 2 KB segments; a hand-built chain might split them). */
	if ((uint32_t)pi.l2_len + pi.l3_len + pi.l4_len > rte_pktmbuf_data_len(m)) {
		LB_COUNT(lb, lb->t->unwritable);
		return LB_DROP;
	}
	ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, pi.l2_len);
	if (pi.fragment || (rte_be_to_cpu_16(ip->fragment_offset) & RTE_IPV4_HDR_MF_FLAG)) {
		LB_COUNT(lb, lb->t->fragments);
		return LB_DROP;
	}
	if (from_backend)
		return reply(lb, m, ip, &pi, now_ns);
	return balance(lb, m, ip, &pi, now_ns);
}

static void
on_expire(void *arg, const struct onvm_flow_key *key, void *value)
{
	struct lb *lb = arg;
	const struct lb_flow *f = value;

	(void)key;
	if (f->backend < lb->cfg->n_backends && lb->t->backend_active[f->backend] > 0) {
		touch(lb, &lb->t->backend_active[f->backend], sizeof(uint32_t));
		lb->t->backend_active[f->backend]--;
	}
}

uint32_t
lb_maintain(struct lb *lb, uint64_t now_ns)
{
	if (now_ns < lb->next_sweep_ns)
		return 0;
	lb->next_sweep_ns = now_ns + lb->sweep_every_ns;
	return onvm_ft_expire(&lb->ft, now_ns, lb->idle_ns, lb->sweep_budget, on_expire, lb);
}

const struct lb_flow *
lb_lookup(const struct lb *lb, const struct onvm_flow_key *key)
{
	struct onvm_flow_key k = *key;

	k.pad[0] = k.pad[1] = k.pad[2] = 0;
	return onvm_ft_lookup(&lb->ft, &k);
}

uint32_t
lb_flow_count(const struct lb *lb)
{
	return onvm_ft_count(&lb->ft);
}

/* ---- output ------------------------------------------------------------------------- */

int
lb_export_json(const struct lb *lb, FILE *f)
{
	const struct lb_config *cfg = lb->cfg;
	const struct lb_totals *t = lb->t;
	const struct onvm_ft_stats *fs = onvm_ft_stats(&lb->ft);
	char a[ONVM_RULE_IPV4_STR_LEN], b[ONVM_RULE_IPV4_STR_LEN], c[ONVM_RULE_IPV4_STR_LEN];
	bool first = true;

	fprintf(f, "{\n  \"mode\": \"%s\",\n", cfg->has_vip ? "vip" : "transparent");
	if (cfg->has_vip)
		fprintf(f, "  \"vip\": \"%s\",\n", onvm_rule_ipv4_str(cfg->vip, a));
	fprintf(f, "  \"backends\": [");
	for (uint32_t i = 0; i < cfg->n_backends; i++) {
		const uint8_t *mac = cfg->backends[i].mac;

		fprintf(f,
			"%s\n    {\"ip\": \"%s\", \"mac\": \"%02x:%02x:%02x:%02x:%02x:%02x\", "
			"\"flows\": %" PRIu64 ", \"active\": %u}",
			i ? "," : "", onvm_rule_ipv4_str(cfg->backends[i].ip, a), mac[0], mac[1],
			mac[2], mac[3], mac[4], mac[5], t->backend_flows[i], t->backend_active[i]);
	}
	fprintf(f, "\n  ],\n");
	fprintf(f,
		"  \"packets\": %" PRIu64 ",\n  \"balanced\": %" PRIu64
		",\n  \"new_flows\": %" PRIu64 ",\n  \"replies\": %" PRIu64
		",\n  \"passed\": %" PRIu64 ",\n  \"unmatched_from_backend\": %" PRIu64
		",\n  \"non_ip\": %" PRIu64 ",\n  \"fragments\": %" PRIu64
		",\n  \"table_full\": %" PRIu64 ",\n  \"unwritable\": %" PRIu64
		",\n  \"expired\": %" PRIu64 ",\n  \"active_flows\": %u,\n",
		t->packets, t->balanced, t->new_flows, t->replies, t->passed,
		t->unmatched_from_backend, t->non_ip, t->fragments, t->table_full, t->unwritable,
		fs->expired, onvm_ft_count(&lb->ft));
	fprintf(f, "  \"malformed\": {");
	for (int r = ONVM_PARSE_TRUNC_L2; r < ONVM_PARSE_REASON_MAX; r++) {
		if (r == ONVM_PARSE_NOT_IPV4)
			continue;
		fprintf(f, "%s\"%s\": %" PRIu64, first ? "" : ", ", onvm_parse_reason_str(r),
			t->malformed[r]);
		first = false;
	}
	fprintf(f, "},\n  \"flows\": [");
	first = true;
	for (uint32_t s = 0; s < onvm_ft_capacity(&lb->ft); s++) {
		const struct lb_flow *fl = onvm_ft_slot_value(&lb->ft, s);
		const struct onvm_flow_key *k;

		if (fl == NULL)
			continue;
		k = onvm_ft_key(&lb->ft, fl);
		fprintf(
		    f,
		    "%s\n    {\"src\": \"%s\", \"dst\": \"%s\", \"proto\": %u, \"sport\": %u, "
		    "\"dport\": %u, \"backend\": %u, \"backend_ip\": \"%s\", \"packets\": %" PRIu64
		    ", \"replies\": %" PRIu64 "}",
		    first ? "" : ",", onvm_rule_ipv4_str(k->src_ip, a),
		    onvm_rule_ipv4_str(k->dst_ip, b), k->proto, k->sport, k->dport, fl->backend,
		    onvm_rule_ipv4_str(cfg->backends[fl->backend % cfg->n_backends].ip, c),
		    fl->packets, fl->replies);
		first = false;
	}
	fprintf(f, "\n  ]\n}\n");
	return ferror(f) ? -EIO : 0;
}

void
lb_summary(const struct lb *lb, char *buf, size_t len)
{
	const struct lb_totals *t = lb->t;
	uint64_t bad = 0;

	for (int r = 0; r < ONVM_PARSE_REASON_MAX; r++)
		bad += t->malformed[r];
	snprintf(buf, len,
		 "%" PRIu64 " pkts: %" PRIu64 " balanced, %" PRIu64 " replies, %" PRIu64
		 " passed, %" PRIu64 " non-ip; %u flows (%" PRIu64 " new, %" PRIu64
		 " expired); dropped: %" PRIu64 " malformed, %" PRIu64 " fragments, %" PRIu64
		 " table full, %" PRIu64 " unwritable",
		 t->packets, t->balanced, t->replies, t->passed + t->unmatched_from_backend,
		 t->non_ip, onvm_ft_count(&lb->ft), t->new_flows, onvm_ft_stats(&lb->ft)->expired,
		 bad, t->fragments, t->table_full, t->unwritable);
}
