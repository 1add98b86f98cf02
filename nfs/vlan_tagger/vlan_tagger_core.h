/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * vlan_tagger_core.h -- the vlan_tagger NF's logic, EAL-free: the policy
 * (JSON), the per-flow tag table in a state region, and the tagging of
 * frames (802.1Q insert or outer-tag rewrite).
 *
 * This is the paper's QoS NF: each NEW flow (directional IPv4 5-tuple) gets
 * the VLAN id and priority (PCP) of the first policy rule it matches, or the
 * policy's default; the decision is remembered in the per-flow table (the
 * NF's state, committed with every batch, so a promoted standby keeps tagging
 * every flow exactly as before), and every later packet of the flow gets the
 * remembered tag.  The policy is static and the first match is a pure
 * function of the 5-tuple, so the output is deterministic: the NF has no ND
 * source.
 *
 * Tagging.  An untagged frame gets an 802.1Q header (TPID 0x8100, DEI 0)
 * inserted after the source MAC, in the mbuf's headroom.  A frame that
 * already carries a tag (outer TPID 0x8100 or 0x88a8) keeps its tags: the
 * OUTER tag's VID and PCP are rewritten (its DEI bit is kept), nothing is
 * inserted.  VLAN 0 in the default means "leave the frame as it is".
 *
 * Frames that are not IPv4 (ARP, LLC, IPv6, more than two tags, ...) and IPv4
 * frames the parser rejects (counted by reason) get the default tag.  Frames
 * too short for an Ethernet header (truncated_l2) are dropped: there is no
 * header to put a tag in.  So are frames whose tag cannot be written: no
 * headroom for an insert, or an Ethernet header split across segments
 * (counted as no_headroom / split_header; never seen with the node's pool).
 *
 * The core never calls libnf's runtime: state writes are announced through
 * the struct nf_state_set (nf_state_touch_ptr), so unit tests run it on heap
 * state sets (tests/common/test_state.h).
 */
#ifndef VLAN_TAGGER_CORE_H
#define VLAN_TAGGER_CORE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_mbuf.h>

#include "onvm_flow_table.h"
#include "onvm_nf_json.h"
#include "onvm_pkt_parse.h"
#include "onvm_state.h"

#define VT_RULES_MAX	     1024
#define VT_VLAN_MAX	     4094
#define VT_PCP_MAX	     7
#define VT_FLOWS_DEFAULT     65536
#define VT_IDLE_MS_DEFAULT   30000
#define VT_TPID		     0x8100

/* One rule; a field that is absent matches anything. */
struct vt_rule {
	uint32_t src, src_mask; /* host order */
	uint32_t dst, dst_mask;
	int16_t proto;		/* -1: any */
	uint16_t sport_lo, sport_hi;
	uint16_t dport_lo, dport_hi;
	uint16_t vlan;		/* 1..4094 */
	uint8_t pcp;		/* 0..7 */
};

struct vt_policy {
	uint16_t def_vlan; /* 0: leave frames as they are */
	uint8_t def_pcp;
	uint32_t n_rules;
	uint32_t flows;		  /* flow table capacity (power of two) */
	uint64_t idle_timeout_ms; /* 0: flows never expire */
	struct vt_rule rules[VT_RULES_MAX];
};

/* Parse a policy.  Returns 0, or -EINVAL / -ENOENT with
 * "FILE:LINE:COL: field: reason" in err. */
int vt_policy_load_file(struct vt_policy *p, const char *file, char *err, size_t errlen);
int vt_policy_load_text(struct vt_policy *p, const char *name, const char *text, char *err,
			size_t errlen);

/* Index of the first rule matching the directional 5-tuple, or -1. */
int vt_policy_match(const struct vt_policy *p, const struct onvm_flow_key *k);

/* A digest of the policy, kept in state: a standby started with another
 * policy refuses the dead NF's state instead of mixing two policies. */
uint64_t vt_policy_digest(const struct vt_policy *p);

/* Per-flow value in the flow table. */
struct vt_flow {
	uint16_t vlan;
	uint8_t pcp;
	uint8_t pad;
	int32_t rule; /* -1: the default */
	uint64_t packets;
	uint64_t bytes;
};

/* Reasons a frame is dropped. */
enum vt_drop_reason {
	VT_DROP_TRUNCATED_L2, /* shorter than an Ethernet (+VLAN) header */
	VT_DROP_NO_HEADROOM,  /* no 4 bytes in front of the frame for an insert */
	VT_DROP_SPLIT_HEADER, /* Ethernet header not in the first segment */
	VT_DROP_MAX,
};

struct vt_rule_counters {
	uint64_t packets;
	uint64_t flows; /* new flows that got this rule's tag */
};

/* Region "counters": totals, per-rule counters (n_rules + 1: the default
 * last). */
struct vt_counters {
	uint64_t magic;
	uint64_t digest; /* vt_policy_digest() of the policy that made it */
	uint64_t packets, bytes;
	uint64_t inserted;  /* a tag was inserted */
	uint64_t rewritten; /* the outer tag's VID/PCP were rewritten */
	uint64_t unchanged; /* VLAN 0: passed as is */
	uint64_t non_ip;    /* default tag */
	uint64_t untracked; /* IPv4 flows the full table could not hold (tag computed per packet) */
	uint64_t malformed[ONVM_PARSE_REASON_MAX]; /* by parse reason */
	uint64_t dropped[VT_DROP_MAX];
	struct vt_rule_counters rule[]; /* n_rules + 1 */
};

/* Process-local handle. */
struct vt_tagger {
	const struct vt_policy *pol;
	struct nf_state_set *state;
	struct onvm_ft ft;
	struct vt_counters *c;
};

enum vt_verdict {
	VT_PASS,
	VT_DROP,
};

/* Bytes of the two state regions for policy p. */
size_t vt_flows_size(const struct vt_policy *p);
size_t vt_counters_size(const struct vt_policy *p);

/* Open the tagger on its two regions (fresh or a dead active's).  Returns 0
 * or a negative errno with the reason in err. */
int vt_open(struct vt_tagger *t, const struct vt_policy *p, struct nf_state_set *state,
	    void *flows_mem, size_t flows_len, void *counters_mem, size_t counters_len, char *err,
	    size_t errlen);

/* Classify and tag one frame.  now_ns: the idle clock (nf_clock_ns()). */
enum vt_verdict vt_packet(struct vt_tagger *t, struct rte_mbuf *m, uint64_t now_ns);

/* Remove flows idle for the policy's timeout, looking at up to `budget`
 * slots.  Returns the number removed (0 if the timeout is 0). */
uint32_t vt_expire(struct vt_tagger *t, uint64_t now_ns, uint32_t budget);

/* Result of vt_tag_frame(). */
enum vt_tag_result {
	VT_TAG_INSERTED,
	VT_TAG_REWRITTEN,
	VT_TAG_NO_HEADROOM,
	VT_TAG_SPLIT_HEADER,
};

/* Put (vlan, pcp) on a frame of at least 14 bytes: insert a tag, or rewrite
 * the outer one.  vlan must be 1..4094. */
enum vt_tag_result vt_tag_frame(struct rte_mbuf *m, uint16_t vlan, uint8_t pcp);

const char *vt_drop_reason_str(enum vt_drop_reason r);

/* The JSON export (totals, per-rule counters, per-flow tags). */
int vt_export(const struct vt_tagger *t, FILE *f);
/* Write the export to `path` atomically (path.tmp, then rename). */
int vt_export_file(const struct vt_tagger *t, const char *path);
/* One line of stats. */
void vt_print_summary(const struct vt_tagger *t, const char *name, FILE *f);

#endif /* VLAN_TAGGER_CORE_H */
