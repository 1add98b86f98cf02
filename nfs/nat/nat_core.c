/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * Source NAT: see nat_core.h.
 *
 * State, all in libnf regions so a standby takes over every mapping:
 *  - "nat_flows": the shared flow table (onvm_flow_table.h), one entry per
 *    mapping, keyed by the outbound 5-tuple, holding the external port;
 *  - "nat_ports": a bitmap of the ports in use (the random choice counts the
 *    free ones in it) and, per port, the outbound 5-tuple that owns it: an
 *    inbound packet finds its mapping through its destination port, checks
 *    the remote endpoint and protocol against the owner, then refreshes the
 *    one table entry, so both directions keep a mapping alive and expire
 *    together;
 *  - "nat": counters and a fingerprint of the config the state was built for.
 * Every write is announced before it is made; expiry (the table's evict
 * callback) frees the port in the same batch as the entry.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#include "nat_core.h"
#include "onvm_nf_json.h"
#include "onvm_pkt_helper.h"
#include "onvm_rule.h"

#define NAT_MAGIC	UINT64_C(0x4e415453544f5431) /* "NATSTOT1" */
#define NAT_PORTS_MAGIC UINT64_C(0x4e4154504f525431) /* "NATPORT1" */

/* ---- configuration ------------------------------------------------------------------ */

static int
parse_doc(struct nat_config *cfg, const struct nf_json *j, char *err, size_t errlen)
{
	static const char *const keys[] = {"internal", "external_ip", "port_min", "port_max",
					   "idle_timeout_ms", "flows", NULL};
	const json_t *root = j->root, *list;
	char ext[ONVM_RULE_IPV4_STR_LEN];
	uint64_t v;
	int ret;

	memset(cfg, 0, sizeof(*cfg));
	cfg->port_min = NAT_PORT_MIN_DEF;
	cfg->port_max = NAT_PORT_MAX_DEF;
	cfg->idle_timeout_ms = NAT_IDLE_TIMEOUT_MS_DEF;
	cfg->flows = NAT_FLOWS_DEF;
	if ((ret = nf_json_only_keys(j, root, "", keys, err, errlen)) < 0)
		return ret;
	list = json_object_get(root, "internal");
	if (list == NULL)
		return nf_json_fail(j, err, errlen, "internal", "required field missing");
	if (!json_is_array(list) || json_array_size(list) == 0 ||
	    json_array_size(list) > NAT_PREFIXES_MAX)
		return nf_json_fail(j, err, errlen, "internal",
				    "expected an array of 1..%d prefixes", NAT_PREFIXES_MAX);
	for (uint32_t i = 0; i < json_array_size(list); i++) {
		struct onvm_rule_err e;
		char path[64];

		snprintf(path, sizeof(path), "internal[%u]", i);
		if (onvm_rule_prefix(json_array_get(list, i), &cfg->internal[i], &e) < 0)
			return nf_json_rule_fail(j, err, errlen, path, &e);
		cfg->n_internal = i + 1;
	}
	if ((ret = nf_json_ipv4(j, root, "", "external_ip", true, &cfg->external_ip, err,
				errlen)) < 0)
		return ret;
	if (cfg->external_ip == 0 || cfg->external_ip >= UINT32_C(0xe0000000))
		return nf_json_fail(j, err, errlen, "external_ip", "not a unicast address: \"%s\"",
				    onvm_rule_ipv4_str(cfg->external_ip, ext));
	for (uint32_t i = 0; i < cfg->n_internal; i++)
		if ((cfg->external_ip & cfg->internal[i].mask) == cfg->internal[i].addr)
			return nf_json_fail(j, err, errlen, "external_ip",
					    "inside internal[%u]: the NAT could not tell its own "
					    "traffic from the inside's",
					    i);
	v = cfg->port_min;
	if ((ret = nf_json_uint(j, root, "", "port_min", 1, 65535, false, &v, err, errlen)) < 0)
		return ret;
	cfg->port_min = (uint16_t)v;
	v = cfg->port_max;
	if ((ret = nf_json_uint(j, root, "", "port_max", 1, 65535, false, &v, err, errlen)) < 0)
		return ret;
	cfg->port_max = (uint16_t)v;
	if (cfg->port_max < cfg->port_min)
		return nf_json_fail(j, err, errlen,
				    json_object_get(root, "port_max") ? "port_max" : "port_min",
				    "empty port range %u..%u", cfg->port_min, cfg->port_max);
	v = cfg->idle_timeout_ms;
	if ((ret = nf_json_uint(j, root, "", "idle_timeout_ms", 1, NAT_IDLE_TIMEOUT_MS_MAX, false,
				&v, err, errlen)) < 0)
		return ret;
	cfg->idle_timeout_ms = v;
	v = cfg->flows;
	if ((ret = nf_json_uint(j, root, "", "flows", ONVM_FT_CAPACITY_MIN, NAT_FLOWS_MAX, false,
				&v, err, errlen)) < 0)
		return ret;
	if ((v & (v - 1)) != 0)
		return nf_json_fail(j, err, errlen, "flows",
				    "expected a power of two, not %" PRIu64, v);
	cfg->flows = (uint32_t)v;
	return 0;
}

int
nat_config_parse(struct nat_config *cfg, const char *name, const char *text, size_t len,
		 char *err, size_t errlen)
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
nat_config_load(struct nat_config *cfg, const char *file, char *err, size_t errlen)
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
touch(struct nat *nat, const void *p, size_t len)
{
	if (nat->state != NULL)
		nf_state_touch_ptr(nat->state, p, len);
}

#define NAT_COUNT(nat, field)                                                                      \
	do {                                                                                       \
		touch((nat), &(field), sizeof(field));                                             \
		(field)++;                                                                         \
	} while (0)

static uint32_t
n_ports(const struct nat_config *cfg)
{
	return (uint32_t)cfg->port_max - cfg->port_min + 1;
}

static uint32_t
n_words(const struct nat_config *cfg)
{
	return (n_ports(cfg) + 63) / 64;
}

static size_t
ports_size(const struct nat_config *cfg)
{
	return sizeof(struct nat_ports) + (size_t)n_words(cfg) * sizeof(uint64_t) +
	       (size_t)n_ports(cfg) * sizeof(struct onvm_flow_key);
}

static uint64_t
config_hash(const struct nat_config *cfg)
{
	uint32_t words[4] = {cfg->external_ip, cfg->port_min, cfg->port_max, cfg->flows};

	return nf_fnv1a(NF_FNV1A_INIT, words, sizeof(words));
}

void
nat_regions(const struct nat_config *cfg, struct nf_state_request reqs[NAT_REGIONS])
{
	reqs[0] = (struct nf_state_request){.name = "nat", .size = sizeof(struct nat_totals)};
	reqs[1] = (struct nf_state_request){.name = "nat_ports", .size = ports_size(cfg)};
	reqs[2] = (struct nf_state_request){
		.name = "nat_flows",
		.size = onvm_ft_mem_size(cfg->flows, sizeof(struct nat_flow)),
	};
}

int
nat_open(struct nat *nat, const struct nat_config *cfg, struct nf_state_set *state,
	 void *const regions[NAT_REGIONS], nat_rand_fn *rand, void *rand_arg, uint32_t sweep_ms,
	 char *err, size_t errlen)
{
	struct nat_totals *t = regions[0];
	struct nat_ports *p = regions[1];
	uint64_t h = config_hash(cfg), budget;
	int ret;

	if (t == NULL || p == NULL || regions[2] == NULL || rand == NULL || sweep_ms == 0 ||
	    cfg->port_max < cfg->port_min) {
		snprintf(err, errlen, "nat: bad arguments");
		return -EINVAL;
	}
	*nat = (struct nat){
		.cfg = cfg,
		.state = state,
		.t = t,
		.ports = p,
		.used = (uint64_t *)(p + 1),
		.owner = (struct onvm_flow_key *)((uint64_t *)(p + 1) + n_words(cfg)),
		.rand = rand,
		.rand_arg = rand_arg,
		.idle_ns = cfg->idle_timeout_ms * 1000000ULL,
		.sweep_every_ns = (uint64_t)sweep_ms * 1000000ULL,
	};
	if (t->magic == 0 && p->magic == 0) {
		touch(nat, t, sizeof(*t));
		memset(t, 0, sizeof(*t));
		t->config_hash = h;
		t->magic = NAT_MAGIC;
		/* The bitmap and owners are zero (all free) in a fresh region. */
		touch(nat, p, sizeof(*p));
		p->port_min = cfg->port_min;
		p->n_ports = n_ports(cfg);
		p->n_free = n_ports(cfg);
		p->n_words = n_words(cfg);
		p->magic = NAT_PORTS_MAGIC;
	} else if (t->magic != NAT_MAGIC || p->magic != NAT_PORTS_MAGIC) {
		snprintf(err, errlen, "nat: state regions hold something else");
		return -EBADMSG;
	} else if (t->config_hash != h || p->port_min != cfg->port_min ||
		   p->n_ports != n_ports(cfg) || p->n_words != n_words(cfg) ||
		   p->n_free > p->n_ports) {
		snprintf(err, errlen,
			 "nat: the state was built for another config (external_ip, ports or flows "
			 "changed)");
		return -EBADMSG;
	}
	ret = onvm_ft_open(&nat->ft, state, regions[2],
			   onvm_ft_mem_size(cfg->flows, sizeof(struct nat_flow)), cfg->flows,
			   sizeof(struct nat_flow), err, errlen);
	if (ret < 0)
		return ret;
	/* Sweep the whole table about twice per idle timeout. */
	budget = (uint64_t)cfg->flows * sweep_ms * 2 / cfg->idle_timeout_ms;
	nat->sweep_budget = (uint32_t)RTE_MIN(RTE_MAX(budget, UINT64_C(64)), (uint64_t)cfg->flows);
	return 0;
}

/* ---- ports -------------------------------------------------------------------------- */

/* Bits of word w that stand for ports in the range. */
static inline uint64_t
word_mask(const struct nat *nat, uint32_t w)
{
	uint32_t left = nat->ports->n_ports - w * 64;

	return left >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << left) - 1;
}

/* Take the k-th free port (0-based, in port order): the random draw picks k
 * uniformly among the free ports.  The caller checked n_free > k. */
static uint16_t
take_port(struct nat *nat, uint32_t k, const struct onvm_flow_key *key)
{
	for (uint32_t w = 0; w < nat->ports->n_words; w++) {
		uint64_t free = ~nat->used[w] & word_mask(nat, w);
		uint32_t c = (uint32_t)__builtin_popcountll(free);
		uint32_t idx;

		if (k >= c) {
			k -= c;
			continue;
		}
		while (k-- > 0)
			free &= free - 1; /* drop the lowest free bit */
		idx = w * 64 + (uint32_t)__builtin_ctzll(free);
		touch(nat, &nat->used[w], sizeof(uint64_t));
		nat->used[w] |= UINT64_C(1) << (idx % 64);
		touch(nat, &nat->owner[idx], sizeof(*key));
		nat->owner[idx] = *key;
		touch(nat, &nat->ports->n_free, sizeof(nat->ports->n_free));
		nat->ports->n_free--;
		return (uint16_t)(nat->ports->port_min + idx);
	}
	return 0; /* unreachable while n_free is right */
}

static void
free_port(struct nat *nat, uint16_t port)
{
	uint32_t idx = (uint32_t)port - nat->ports->port_min;
	uint64_t bit = UINT64_C(1) << (idx % 64);

	if (idx >= nat->ports->n_ports || !(nat->used[idx / 64] & bit))
		return;
	touch(nat, &nat->used[idx / 64], sizeof(uint64_t));
	nat->used[idx / 64] &= ~bit;
	touch(nat, &nat->owner[idx], sizeof(nat->owner[idx]));
	memset(&nat->owner[idx], 0, sizeof(nat->owner[idx]));
	touch(nat, &nat->ports->n_free, sizeof(nat->ports->n_free));
	nat->ports->n_free++;
}

/* ---- packets ------------------------------------------------------------------------ */

/*
 * Recompute the IPv4 header checksum and the TCP/UDP checksum after a
 * rewrite: nf_pkt_set_checksums() for a single-segment frame, the same
 * computation over the segments of a chained one (net_pcap chains frames
 * longer than a segment).  Only unfragmented TCP/UDP packets come here.
 */
static void
set_checksums(struct rte_mbuf *m, struct rte_ipv4_hdr *ip, const struct onvm_pkt_info *pi,
	      rte_be16_t *l4_cksum)
{
	uint16_t raw;
	uint32_t sum;

	if (m->nb_segs == 1 && nf_pkt_set_checksums(m) == 0)
		return;
	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	if (pi->proto == IPPROTO_UDP && *l4_cksum == 0)
		return; /* no checksum, and it stays that way */
	*l4_cksum = 0;
	if (nf_pkt_cksum_chain(m, pi->l2_len + pi->l3_len, pi->ip_len - pi->l3_len, &raw) < 0)
		return; /* cannot happen: the parser checked the lengths */
	sum = (uint32_t)raw + rte_ipv4_phdr_cksum(ip, 0);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	*l4_cksum = (uint16_t)~sum;
	if (*l4_cksum == 0 && pi->proto == IPPROTO_UDP)
		*l4_cksum = 0xffff;
}

/* The L4 ports (TCP and UDP both start with them) and checksum field. */
struct l4_view {
	rte_be16_t *sport, *dport, *cksum;
};

static void
l4_view(struct rte_ipv4_hdr *ip, const struct onvm_pkt_info *pi, struct l4_view *v)
{
	uint8_t *l4 = (uint8_t *)ip + pi->l3_len;

	v->sport = (rte_be16_t *)l4;
	v->dport = (rte_be16_t *)(l4 + 2);
	v->cksum = pi->proto == IPPROTO_TCP ? &((struct rte_tcp_hdr *)l4)->cksum
					    : &((struct rte_udp_hdr *)l4)->dgram_cksum;
}

static bool
is_internal(const struct nat_config *cfg, uint32_t ip)
{
	for (uint32_t i = 0; i < cfg->n_internal; i++)
		if ((ip & cfg->internal[i].mask) == cfg->internal[i].addr)
			return true;
	return false;
}

static enum nat_verdict
outbound(struct nat *nat, struct rte_mbuf *m, struct rte_ipv4_hdr *ip,
	 const struct onvm_pkt_info *pi, uint64_t now_ns)
{
	struct onvm_flow_key key;
	struct nat_flow *f;
	struct l4_view l4;

	onvm_flow_key_from_info(pi, &key);
	f = onvm_ft_lookup(&nat->ft, &key);
	if (f != NULL) {
		onvm_ft_seen(&nat->ft, f, now_ns);
		onvm_ft_touch_value(&nat->ft, f);
	} else {
		uint32_t k;

		/* Refuse before drawing: a refused packet is no ND event. */
		if (nat->ports->n_free == 0) {
			NAT_COUNT(nat, nat->t->ports_exhausted);
			return NAT_DROP;
		}
		f = onvm_ft_insert(&nat->ft, &key, now_ns, NULL);
		if (f == NULL) {
			NAT_COUNT(nat, nat->t->table_full);
			return NAT_DROP;
		}
		/* The mapping's one random draw (marks this packet ND); the
		 * entry was touched by the insert. */
		k = (uint32_t)(nat->rand(nat->rand_arg) % nat->ports->n_free);
		f->ext_port = take_port(nat, k, &key);
		NAT_COUNT(nat, nat->t->new_mappings);
	}
	f->packets_out++;
	l4_view(ip, pi, &l4);
	ip->src_addr = rte_cpu_to_be_32(nat->cfg->external_ip);
	*l4.sport = rte_cpu_to_be_16(f->ext_port);
	set_checksums(m, ip, pi, l4.cksum);
	NAT_COUNT(nat, nat->t->outbound);
	return NAT_FORWARD;
}

static enum nat_verdict
inbound(struct nat *nat, struct rte_mbuf *m, struct rte_ipv4_hdr *ip,
	const struct onvm_pkt_info *pi, uint64_t now_ns)
{
	uint32_t idx = (uint32_t)pi->dport - nat->ports->port_min;
	const struct onvm_flow_key *o;
	struct nat_flow *f;
	struct l4_view l4;

	if (pi->dport < nat->ports->port_min || idx >= nat->ports->n_ports ||
	    !(nat->used[idx / 64] & (UINT64_C(1) << (idx % 64)))) {
		NAT_COUNT(nat, nat->t->inbound_unmapped);
		return NAT_DROP;
	}
	o = &nat->owner[idx];
	if (o->proto != pi->proto || o->dst_ip != pi->src_ip || o->dport != pi->sport) {
		NAT_COUNT(nat, nat->t->inbound_mismatch);
		return NAT_DROP;
	}
	f = onvm_ft_lookup(&nat->ft, o);
	if (f == NULL || f->ext_port != pi->dport) {
		/* Cannot happen: a port is freed with its mapping. */
		NAT_COUNT(nat, nat->t->inbound_unmapped);
		return NAT_DROP;
	}
	onvm_ft_seen(&nat->ft, f, now_ns);
	onvm_ft_touch_value(&nat->ft, f);
	f->packets_in++;
	l4_view(ip, pi, &l4);
	ip->dst_addr = rte_cpu_to_be_32(o->src_ip);
	*l4.dport = rte_cpu_to_be_16(o->sport);
	set_checksums(m, ip, pi, l4.cksum);
	NAT_COUNT(nat, nat->t->inbound);
	return NAT_FORWARD;
}

enum nat_verdict
nat_packet(struct nat *nat, struct rte_mbuf *m, uint64_t now_ns)
{
	struct onvm_pkt_info pi;
	enum onvm_parse_reason r = nf_pkt_parse(m, &pi);
	struct rte_ipv4_hdr *ip;
	bool in;

	NAT_COUNT(nat, nat->t->packets);
	if (r == ONVM_PARSE_NOT_IPV4) {
		NAT_COUNT(nat, nat->t->non_ip);
		return NAT_FORWARD;
	}
	if (r != ONVM_PARSE_OK) {
		NAT_COUNT(nat, nat->t->malformed[r]);
		return NAT_DROP;
	}
	in = pi.dst_ip == nat->cfg->external_ip;
	if (!in && !is_internal(nat->cfg, pi.src_ip)) {
		NAT_COUNT(nat, nat->t->passed);
		return NAT_FORWARD;
	}
	if (pi.proto != IPPROTO_TCP && pi.proto != IPPROTO_UDP) {
		if (in)
			NAT_COUNT(nat, nat->t->inbound_unsupported);
		else
			NAT_COUNT(nat, nat->t->untranslatable);
		return NAT_DROP;
	}
	/* Headers must be in the first segment to be rewritten (always so
	 * with DPDK's 2 KB segments). */
	if ((uint32_t)pi.l2_len + pi.l3_len + pi.l4_len > rte_pktmbuf_data_len(m)) {
		NAT_COUNT(nat, nat->t->unwritable);
		return NAT_DROP;
	}
	ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, pi.l2_len);
	if (pi.fragment || (rte_be_to_cpu_16(ip->fragment_offset) & RTE_IPV4_HDR_MF_FLAG)) {
		NAT_COUNT(nat, nat->t->fragments);
		return NAT_DROP;
	}
	return in ? inbound(nat, m, ip, &pi, now_ns) : outbound(nat, m, ip, &pi, now_ns);
}

static void
on_expire(void *arg, const struct onvm_flow_key *key, void *value)
{
	struct nat *nat = arg;
	const struct nat_flow *f = value;

	(void)key;
	free_port(nat, f->ext_port);
}

uint32_t
nat_maintain(struct nat *nat, uint64_t now_ns)
{
	if (now_ns < nat->next_sweep_ns)
		return 0;
	nat->next_sweep_ns = now_ns + nat->sweep_every_ns;
	return onvm_ft_expire(&nat->ft, now_ns, nat->idle_ns, nat->sweep_budget, on_expire, nat);
}

const struct nat_flow *
nat_lookup(const struct nat *nat, const struct onvm_flow_key *key)
{
	struct onvm_flow_key k = *key;

	k.pad[0] = k.pad[1] = k.pad[2] = 0;
	return onvm_ft_lookup(&nat->ft, &k);
}

const struct onvm_flow_key *
nat_port_owner(const struct nat *nat, uint16_t port)
{
	uint32_t idx = (uint32_t)port - nat->ports->port_min;

	if (port < nat->ports->port_min || idx >= nat->ports->n_ports ||
	    !(nat->used[idx / 64] & (UINT64_C(1) << (idx % 64))))
		return NULL;
	return &nat->owner[idx];
}

uint32_t
nat_mapping_count(const struct nat *nat)
{
	return onvm_ft_count(&nat->ft);
}

uint32_t
nat_free_ports(const struct nat *nat)
{
	return nat->ports->n_free;
}

/* ---- output ------------------------------------------------------------------------- */

int
nat_export_json(const struct nat *nat, FILE *f)
{
	const struct nat_config *cfg = nat->cfg;
	const struct nat_totals *t = nat->t;
	char a[ONVM_RULE_IPV4_STR_LEN], b[ONVM_RULE_IPV4_STR_LEN];
	bool first = true;

	fprintf(f, "{\n  \"external_ip\": \"%s\",\n  \"port_min\": %u,\n  \"port_max\": %u,\n",
		onvm_rule_ipv4_str(cfg->external_ip, a), cfg->port_min, cfg->port_max);
	fprintf(f, "  \"internal\": [");
	for (uint32_t i = 0; i < cfg->n_internal; i++)
		fprintf(f, "%s\"%s/%u\"", i ? ", " : "",
			onvm_rule_ipv4_str(cfg->internal[i].addr, a), cfg->internal[i].len);
	fprintf(f, "],\n");
	fprintf(f,
		"  \"packets\": %" PRIu64 ",\n  \"outbound\": %" PRIu64 ",\n  \"inbound\": %" PRIu64
		",\n  \"new_mappings\": %" PRIu64 ",\n  \"passed\": %" PRIu64
		",\n  \"non_ip\": %" PRIu64 ",\n  \"untranslatable\": %" PRIu64
		",\n  \"fragments\": %" PRIu64 ",\n  \"ports_exhausted\": %" PRIu64
		",\n  \"table_full\": %" PRIu64 ",\n  \"inbound_unmapped\": %" PRIu64
		",\n  \"inbound_mismatch\": %" PRIu64 ",\n  \"inbound_unsupported\": %" PRIu64
		",\n  \"unwritable\": %" PRIu64 ",\n  \"expired\": %" PRIu64
		",\n  \"active_mappings\": %u,\n  \"free_ports\": %u,\n",
		t->packets, t->outbound, t->inbound, t->new_mappings, t->passed, t->non_ip,
		t->untranslatable, t->fragments, t->ports_exhausted, t->table_full,
		t->inbound_unmapped, t->inbound_mismatch, t->inbound_unsupported, t->unwritable,
		onvm_ft_stats(&nat->ft)->expired, onvm_ft_count(&nat->ft), nat->ports->n_free);
	fprintf(f, "  \"malformed\": {");
	for (int r = ONVM_PARSE_TRUNC_L2; r < ONVM_PARSE_REASON_MAX; r++) {
		if (r == ONVM_PARSE_NOT_IPV4)
			continue;
		fprintf(f, "%s\"%s\": %" PRIu64, first ? "" : ", ", onvm_parse_reason_str(r),
			t->malformed[r]);
		first = false;
	}
	fprintf(f, "},\n  \"mappings\": [");
	first = true;
	for (uint32_t s = 0; s < onvm_ft_capacity(&nat->ft); s++) {
		const struct nat_flow *fl = onvm_ft_slot_value(&nat->ft, s);
		const struct onvm_flow_key *k;

		if (fl == NULL)
			continue;
		k = onvm_ft_key(&nat->ft, fl);
		fprintf(f,
			"%s\n    {\"src\": \"%s\", \"dst\": \"%s\", \"proto\": %u, \"sport\": %u, "
			"\"dport\": %u, \"external_port\": %u, \"packets_out\": %" PRIu64
			", \"packets_in\": %" PRIu64 "}",
			first ? "" : ",", onvm_rule_ipv4_str(k->src_ip, a),
			onvm_rule_ipv4_str(k->dst_ip, b), k->proto, k->sport, k->dport,
			fl->ext_port, fl->packets_out, fl->packets_in);
		first = false;
	}
	fprintf(f, "\n  ]\n}\n");
	return ferror(f) ? -EIO : 0;
}

void
nat_summary(const struct nat *nat, char *buf, size_t len)
{
	const struct nat_totals *t = nat->t;
	uint64_t bad = 0;

	for (int r = 0; r < ONVM_PARSE_REASON_MAX; r++)
		bad += t->malformed[r];
	snprintf(buf, len,
		 "%" PRIu64 " pkts: %" PRIu64 " out, %" PRIu64 " in, %" PRIu64 " passed, %" PRIu64
		 " non-ip; %u mappings (%" PRIu64 " new, %" PRIu64 " expired), %u ports free; "
		 "dropped: %" PRIu64 " malformed, %" PRIu64 " untranslatable, %" PRIu64
		 " fragments, %" PRIu64 " no port, %" PRIu64
		 " table full, inbound unmapped/mismatch/unsupported %" PRIu64 "/%" PRIu64
		 "/%" PRIu64 ", %" PRIu64 " unwritable",
		 t->packets, t->outbound, t->inbound, t->passed, t->non_ip, onvm_ft_count(&nat->ft),
		 t->new_mappings, onvm_ft_stats(&nat->ft)->expired, nat->ports->n_free, bad,
		 t->untranslatable, t->fragments, t->ports_exhausted, t->table_full,
		 t->inbound_unmapped, t->inbound_mismatch, t->inbound_unsupported, t->unwritable);
}
