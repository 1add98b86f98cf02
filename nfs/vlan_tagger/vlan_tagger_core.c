/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * vlan_tagger's logic: see vlan_tagger_core.h.
 *
 * The per-packet path is parse -> flow table lookup (insert + first-match on
 * a new flow) -> tag.  Every state write is touched first: the counters
 * (region "counters", 64-byte chunks) and the flow's entry (through the flow
 * table's own touches).  Nothing here allocates or logs.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ether.h>

#include "vlan_tagger_core.h"
#include "onvm_nf_output.h"
#include "onvm_rule.h"

#define VT_MAGIC UINT64_C(0x564c414e54414731) /* "VLANTAG1" */

/* ---- policy ------------------------------------------------------------------ */

static int
parse_rule(const struct nf_json *j, const json_t *v, size_t i, struct vt_rule *r, char *err,
	   size_t errlen)
{
	static const char *const keys[] = {"src", "dst", "proto", "sport", "dport", "vlan", "pcp",
					   NULL};
	uint64_t vlan = 0, pcp = 0;
	struct onvm_rule_match m;
	struct onvm_rule_err e;
	char path[64];
	int ret;

	snprintf(path, sizeof(path), "rules[%zu]", i);
	memset(r, 0, sizeof(*r));
	if ((ret = nf_json_only_keys(j, v, path, keys, err, errlen)) < 0)
		return ret;
	if (onvm_rule_match(v, &m, &e) < 0)
		return nf_json_rule_fail(j, err, errlen, path, &e);
	if ((ret = nf_json_uint(j, v, path, "vlan", 1, VT_VLAN_MAX, true, &vlan, err, errlen)) < 0 ||
	    (ret = nf_json_uint(j, v, path, "pcp", 0, VT_PCP_MAX, false, &pcp, err, errlen)) < 0)
		return ret;
	r->src = m.src.addr;
	r->src_mask = m.src.mask;
	r->dst = m.dst.addr;
	r->dst_mask = m.dst.mask;
	r->proto = m.proto; /* ONVM_RULE_PROTO_ANY is -1, as vt_rule's "any" */
	r->sport_lo = m.sport.lo;
	r->sport_hi = m.sport.hi;
	r->dport_lo = m.dport.lo;
	r->dport_hi = m.dport.hi;
	r->vlan = (uint16_t)vlan;
	r->pcp = (uint8_t)pcp;
	return 0;
}

static int
parse_policy(struct vt_policy *p, const struct nf_json *j, char *err, size_t errlen)
{
	static const char *const top[] = {"default", "rules", "idle_timeout_ms", "flows", NULL};
	static const char *const dkeys[] = {"vlan", "pcp", NULL};
	uint64_t vlan = 0, pcp = 0, flows = VT_FLOWS_DEFAULT, idle = VT_IDLE_MS_DEFAULT;
	const json_t *d, *rules;
	int ret;

	memset(p, 0, sizeof(*p));
	if ((ret = nf_json_only_keys(j, j->root, "", top, err, errlen)) < 0)
		return ret;
	d = json_object_get(j->root, "default");
	if (d != NULL) {
		if ((ret = nf_json_only_keys(j, d, "default", dkeys, err, errlen)) < 0 ||
		    (ret = nf_json_uint(j, d, "default", "vlan", 0, VT_VLAN_MAX, true, &vlan, err,
					errlen)) < 0 ||
		    (ret = nf_json_uint(j, d, "default", "pcp", 0, VT_PCP_MAX, false, &pcp, err,
					errlen)) < 0)
			return ret;
		if (vlan == 0 && pcp != 0)
			return nf_json_fail(j, err, errlen, "default.pcp",
					    "a priority needs a VLAN (vlan 0 leaves frames as they are)");
	}
	if ((ret = nf_json_uint(j, j->root, "", "flows", ONVM_FT_CAPACITY_MIN, 1u << 22, false,
				&flows, err, errlen)) < 0 ||
	    (ret = nf_json_uint(j, j->root, "", "idle_timeout_ms", 0, UINT32_MAX, false, &idle, err,
				errlen)) < 0)
		return ret;
	if ((flows & (flows - 1)) != 0)
		return nf_json_fail(j, err, errlen, "flows", "%llu is not a power of two",
				    (unsigned long long)flows);
	rules = json_object_get(j->root, "rules");
	if (rules != NULL) {
		size_t i;
		json_t *v;

		if (!json_is_array(rules))
			return nf_json_fail(j, err, errlen, "rules", "expected an array of rules");
		if (json_array_size(rules) > VT_RULES_MAX)
			return nf_json_fail(j, err, errlen, "rules", "%zu rules, at most %u",
					    json_array_size(rules), VT_RULES_MAX);
		json_array_foreach(rules, i, v) {
			if ((ret = parse_rule(j, v, i, &p->rules[i], err, errlen)) < 0)
				return ret;
		}
		p->n_rules = (uint32_t)json_array_size(rules);
	}
	p->def_vlan = (uint16_t)vlan;
	p->def_pcp = (uint8_t)pcp;
	p->flows = (uint32_t)flows;
	p->idle_timeout_ms = idle;
	return 0;
}

int
vt_policy_load_file(struct vt_policy *p, const char *file, char *err, size_t errlen)
{
	struct nf_json j;
	int ret = nf_json_load_file(&j, file, err, errlen);

	if (ret < 0)
		return ret;
	ret = parse_policy(p, &j, err, errlen);
	nf_json_free(&j);
	return ret;
}

int
vt_policy_load_text(struct vt_policy *p, const char *name, const char *text, char *err,
		    size_t errlen)
{
	struct nf_json j;
	int ret = nf_json_load_text(&j, name, text, strlen(text), err, errlen);

	if (ret < 0)
		return ret;
	ret = parse_policy(p, &j, err, errlen);
	nf_json_free(&j);
	return ret;
}

int
vt_policy_match(const struct vt_policy *p, const struct onvm_flow_key *k)
{
	for (uint32_t i = 0; i < p->n_rules; i++) {
		const struct vt_rule *r = &p->rules[i];

		if ((k->src_ip & r->src_mask) == r->src && (k->dst_ip & r->dst_mask) == r->dst &&
		    (r->proto < 0 || r->proto == k->proto) && k->sport >= r->sport_lo &&
		    k->sport <= r->sport_hi && k->dport >= r->dport_lo && k->dport <= r->dport_hi)
			return (int)i;
	}
	return -1;
}

uint64_t
vt_policy_digest(const struct vt_policy *p)
{
	uint64_t h = NF_FNV1A_INIT;

	h = nf_fnv1a_u64(h, p->def_vlan);
	h = nf_fnv1a_u64(h, p->def_pcp);
	h = nf_fnv1a_u64(h, p->n_rules);
	for (uint32_t i = 0; i < p->n_rules; i++) {
		const struct vt_rule *r = &p->rules[i];

		h = nf_fnv1a_u64(h, (uint64_t)r->src << 32 | r->src_mask);
		h = nf_fnv1a_u64(h, (uint64_t)r->dst << 32 | r->dst_mask);
		h = nf_fnv1a_u64(h, (uint64_t)(uint16_t)r->proto << 48 | (uint64_t)r->vlan << 32 |
					r->pcp);
		h = nf_fnv1a_u64(h, (uint64_t)r->sport_lo << 48 | (uint64_t)r->sport_hi << 32 |
					(uint64_t)r->dport_lo << 16 | r->dport_hi);
	}
	return h;
}

/* ---- state ------------------------------------------------------------------- */

size_t
vt_flows_size(const struct vt_policy *p)
{
	return onvm_ft_mem_size(p->flows, sizeof(struct vt_flow));
}

size_t
vt_counters_size(const struct vt_policy *p)
{
	return sizeof(struct vt_counters) + (p->n_rules + 1) * sizeof(struct vt_rule_counters);
}

int
vt_open(struct vt_tagger *t, const struct vt_policy *p, struct nf_state_set *state,
	void *flows_mem, size_t flows_len, void *counters_mem, size_t counters_len, char *err,
	size_t errlen)
{
	struct vt_counters *c = counters_mem;
	uint64_t digest = vt_policy_digest(p);
	int ret;

	memset(t, 0, sizeof(*t));
	if (c == NULL || counters_len < vt_counters_size(p)) {
		snprintf(err, errlen, "counters region too small (%zu bytes, need %zu)",
			 counters_len, vt_counters_size(p));
		return -EINVAL;
	}
	if (c->magic != 0 && (c->magic != VT_MAGIC || c->digest != digest)) {
		snprintf(err, errlen,
			 "the state was made by another policy (digest %#" PRIx64 ", this one %#" PRIx64
			 "): start the standby with the active's policy",
			 c->digest, digest);
		return -EBADMSG;
	}
	ret = onvm_ft_open(&t->ft, state, flows_mem, flows_len, p->flows, sizeof(struct vt_flow),
			   err, errlen);
	if (ret < 0)
		return ret;
	if (c->magic == 0) {
		nf_state_touch_ptr(state, c, sizeof(*c));
		c->digest = digest;
		c->magic = VT_MAGIC;
	}
	t->pol = p;
	t->state = state;
	t->c = c;
	return 0;
}

static inline void
touch(struct vt_tagger *t, const void *p, size_t len)
{
	nf_state_touch_ptr(t->state, p, len);
}

/* ---- tagging ------------------------------------------------------------------ */

enum vt_tag_result
vt_tag_frame(struct rte_mbuf *m, uint16_t vlan, uint8_t pcp)
{
	uint16_t tci = (uint16_t)(pcp << 13 | (vlan & 0x0fff));
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	uint16_t etype;

	if (rte_pktmbuf_data_len(m) < RTE_ETHER_HDR_LEN)
		return VT_TAG_SPLIT_HEADER;
	memcpy(&etype, p + 2 * RTE_ETHER_ADDR_LEN, 2);
	etype = rte_be_to_cpu_16(etype);
	if (etype == RTE_ETHER_TYPE_VLAN || etype == RTE_ETHER_TYPE_QINQ) {
		uint16_t old;

		if (rte_pktmbuf_data_len(m) < RTE_ETHER_HDR_LEN + 2)
			return VT_TAG_SPLIT_HEADER;
		memcpy(&old, p + RTE_ETHER_HDR_LEN, 2);
		/* Keep DEI (bit 12), the rest is ours. */
		tci = rte_cpu_to_be_16(tci | (rte_be_to_cpu_16(old) & 0x1000));
		memcpy(p + RTE_ETHER_HDR_LEN, &tci, 2);
		return VT_TAG_REWRITTEN;
	}
	if (rte_pktmbuf_headroom(m) < sizeof(struct rte_vlan_hdr))
		return VT_TAG_NO_HEADROOM;
	p = (uint8_t *)rte_pktmbuf_prepend(m, sizeof(struct rte_vlan_hdr));
	memmove(p, p + sizeof(struct rte_vlan_hdr), 2 * RTE_ETHER_ADDR_LEN);
	p[12] = VT_TPID >> 8;
	p[13] = VT_TPID & 0xff;
	p[14] = (uint8_t)(tci >> 8);
	p[15] = (uint8_t)tci;
	/* The tag is in the frame, not in the metadata. */
	m->ol_flags &= ~(RTE_MBUF_F_TX_VLAN | RTE_MBUF_F_RX_VLAN_STRIPPED);
	return VT_TAG_INSERTED;
}

/* The tag for a parsed IPv4 frame: the flow's, or a new flow's first match. */
static void
flow_tag(struct vt_tagger *t, const struct onvm_pkt_info *pi, uint32_t len, uint64_t now_ns,
	 uint16_t *vlan, uint8_t *pcp)
{
	struct vt_counters *c = t->c;
	struct onvm_flow_key k;
	struct vt_rule_counters *rc;
	struct vt_flow *f;
	bool created;
	int rule;

	onvm_flow_key_from_info(pi, &k);
	f = onvm_ft_lookup(&t->ft, &k);
	if (f != NULL) {
		onvm_ft_seen(&t->ft, f, now_ns);
		onvm_ft_touch_value(&t->ft, f);
		rule = f->rule;
	} else {
		rule = vt_policy_match(t->pol, &k);
		f = onvm_ft_insert(&t->ft, &k, now_ns, &created); /* touched */
		rc = &c->rule[rule < 0 ? t->pol->n_rules : (uint32_t)rule];
		if (f != NULL) {
			f->rule = rule;
			f->vlan = rule < 0 ? t->pol->def_vlan : t->pol->rules[rule].vlan;
			f->pcp = rule < 0 ? t->pol->def_pcp : t->pol->rules[rule].pcp;
			touch(t, &rc->flows, sizeof(rc->flows));
			rc->flows++;
		} else {
			c->untracked++; /* the totals are touched by the caller */
		}
	}
	rc = &c->rule[rule < 0 ? t->pol->n_rules : (uint32_t)rule];
	touch(t, &rc->packets, sizeof(rc->packets));
	rc->packets++;
	if (f != NULL) {
		f->packets++;
		f->bytes += len;
		*vlan = f->vlan;
		*pcp = f->pcp;
	} else {
		*vlan = rule < 0 ? t->pol->def_vlan : t->pol->rules[rule].vlan;
		*pcp = rule < 0 ? t->pol->def_pcp : t->pol->rules[rule].pcp;
	}
}

enum vt_verdict
vt_packet(struct vt_tagger *t, struct rte_mbuf *m, uint64_t now_ns)
{
	struct vt_counters *c = t->c;
	uint32_t len = rte_pktmbuf_pkt_len(m);
	struct onvm_pkt_info pi;
	enum onvm_parse_reason r = onvm_pkt_parse(m, &pi);
	uint16_t vlan = t->pol->def_vlan;
	uint8_t pcp = t->pol->def_pcp;

	/* The totals share a few chunks; one touch covers this packet's. */
	touch(t, &c->packets, offsetof(struct vt_counters, rule) -
				  offsetof(struct vt_counters, packets));
	c->packets++;
	c->bytes += len;
	if (r == ONVM_PARSE_TRUNC_L2) {
		c->malformed[r]++;
		c->dropped[VT_DROP_TRUNCATED_L2]++;
		return VT_DROP;
	}
	if (r == ONVM_PARSE_OK) {
		flow_tag(t, &pi, len, now_ns, &vlan, &pcp);
	} else {
		struct vt_rule_counters *rc = &c->rule[t->pol->n_rules];

		if (r == ONVM_PARSE_NOT_IPV4)
			c->non_ip++;
		else
			c->malformed[r]++;
		touch(t, &rc->packets, sizeof(rc->packets));
		rc->packets++;
	}
	if (vlan == 0) {
		c->unchanged++;
		return VT_PASS;
	}
	switch (vt_tag_frame(m, vlan, pcp)) {
	case VT_TAG_INSERTED:
		c->inserted++;
		return VT_PASS;
	case VT_TAG_REWRITTEN:
		c->rewritten++;
		return VT_PASS;
	case VT_TAG_NO_HEADROOM:
		c->dropped[VT_DROP_NO_HEADROOM]++;
		return VT_DROP;
	case VT_TAG_SPLIT_HEADER:
	default:
		c->dropped[VT_DROP_SPLIT_HEADER]++;
		return VT_DROP;
	}
}

uint32_t
vt_expire(struct vt_tagger *t, uint64_t now_ns, uint32_t budget)
{
	if (t->pol->idle_timeout_ms == 0)
		return 0;
	return onvm_ft_expire(&t->ft, now_ns, t->pol->idle_timeout_ms * 1000000ull, budget, NULL,
			      NULL);
}

/* ---- output ------------------------------------------------------------------ */

static const char *const drop_names[VT_DROP_MAX] = {
    [VT_DROP_TRUNCATED_L2] = "truncated_l2",
    [VT_DROP_NO_HEADROOM] = "no_headroom",
    [VT_DROP_SPLIT_HEADER] = "split_header",
};

const char *
vt_drop_reason_str(enum vt_drop_reason r)
{
	return (unsigned int)r < VT_DROP_MAX ? drop_names[r] : "unknown";
}

int
vt_export(const struct vt_tagger *t, FILE *f)
{
	const struct vt_counters *c = t->c;
	const struct onvm_ft_stats *fs = onvm_ft_stats(&t->ft);
	char s[ONVM_RULE_IPV4_STR_LEN], d[ONVM_RULE_IPV4_STR_LEN];
	bool first = true;
	uint64_t dropped = 0;

	for (int i = 0; i < VT_DROP_MAX; i++)
		dropped += c->dropped[i];
	fprintf(f,
		"{\n  \"packets\": %" PRIu64 ",\n  \"bytes\": %" PRIu64 ",\n  \"inserted\": %" PRIu64
		",\n  \"rewritten\": %" PRIu64 ",\n  \"unchanged\": %" PRIu64 ",\n  \"non_ip\": %" PRIu64
		",\n  \"untracked\": %" PRIu64 ",\n  \"dropped\": %" PRIu64 ",\n",
		c->packets, c->bytes, c->inserted, c->rewritten, c->unchanged, c->non_ip,
		c->untracked, dropped);
	fprintf(f, "  \"drop_reasons\": {");
	for (int i = 0; i < VT_DROP_MAX; i++)
		fprintf(f, "%s\"%s\": %" PRIu64, i ? ", " : "", drop_names[i], c->dropped[i]);
	fprintf(f, "},\n  \"malformed\": {");
	for (int r = ONVM_PARSE_TRUNC_L2; r < ONVM_PARSE_REASON_MAX; r++) {
		if (r == ONVM_PARSE_NOT_IPV4)
			continue;
		fprintf(f, "%s\"%s\": %" PRIu64, first ? "" : ", ", onvm_parse_reason_str(r),
			c->malformed[r]);
		first = false;
	}
	fprintf(f, "},\n  \"default\": {\"vlan\": %u, \"pcp\": %u, \"packets\": %" PRIu64
		   ", \"flows\": %" PRIu64 "},\n",
		t->pol->def_vlan, t->pol->def_pcp, c->rule[t->pol->n_rules].packets,
		c->rule[t->pol->n_rules].flows);
	fprintf(f, "  \"rules\": [");
	for (uint32_t i = 0; i < t->pol->n_rules; i++)
		fprintf(f,
			"%s\n    {\"rule\": %u, \"vlan\": %u, \"pcp\": %u, \"packets\": %" PRIu64
			", \"flows\": %" PRIu64 "}",
			i ? "," : "", i, t->pol->rules[i].vlan, t->pol->rules[i].pcp,
			c->rule[i].packets, c->rule[i].flows);
	fprintf(f, "%s],\n", t->pol->n_rules ? "\n  " : "");
	fprintf(f,
		"  \"table\": {\"capacity\": %u, \"flows\": %u, \"inserts\": %" PRIu64
		", \"expired\": %" PRIu64 ", \"full\": %" PRIu64 "},\n",
		onvm_ft_capacity(&t->ft), onvm_ft_count(&t->ft), fs->inserts, fs->expired, fs->full);
	fprintf(f, "  \"flows\": [");
	first = true;
	for (uint32_t slot = 0; slot < onvm_ft_capacity(&t->ft); slot++) {
		const struct vt_flow *v = onvm_ft_slot_value(&t->ft, slot);
		const struct onvm_flow_key *k;

		if (v == NULL)
			continue;
		k = onvm_ft_key(&t->ft, v);
		onvm_rule_ipv4_str(k->src_ip, s);
		onvm_rule_ipv4_str(k->dst_ip, d);
		fprintf(f,
			"%s\n    {\"src\": \"%s\", \"dst\": \"%s\", \"proto\": %u, \"sport\": %u, "
			"\"dport\": %u, \"vlan\": %u, \"pcp\": %u, \"rule\": %d, \"packets\": %" PRIu64
			", \"bytes\": %" PRIu64 "}",
			first ? "" : ",", s, d, k->proto, k->sport, k->dport, v->vlan, v->pcp, v->rule,
			v->packets, v->bytes);
		first = false;
	}
	fprintf(f, "%s]\n}\n", first ? "" : "\n  ");
	return ferror(f) ? -EIO : 0;
}

static int
write_export(FILE *f, const void *arg)
{
	return vt_export(arg, f);
}

int
vt_export_file(const struct vt_tagger *t, const char *path)
{
	return nf_write_file(path, write_export, t);
}

void
vt_print_summary(const struct vt_tagger *t, const char *name, FILE *f)
{
	const struct vt_counters *c = t->c;
	uint64_t bad = 0, dropped = 0;

	for (int r = 0; r < ONVM_PARSE_REASON_MAX; r++)
		bad += c->malformed[r];
	for (int i = 0; i < VT_DROP_MAX; i++)
		dropped += c->dropped[i];
	fprintf(f,
		"%s: %" PRIu64 " pkts, %u flows, inserted %" PRIu64 " rewritten %" PRIu64
		" unchanged %" PRIu64 ", non-ip %" PRIu64 ", malformed %" PRIu64 ", dropped %" PRIu64
		", untracked %" PRIu64 "\n",
		name, c->packets, onvm_ft_count(&t->ft), c->inserted, c->rewritten, c->unchanged,
		c->non_ip, bad, dropped, c->untracked);
	fflush(f);
}

