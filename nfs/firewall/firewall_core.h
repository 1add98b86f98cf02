/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * firewall_core.h -- the firewall NF's logic without an EAL: the rules file,
 * what a frame is to the rules, the linear first-match matcher, and the
 * per-rule counters kept in a libnf state region.
 *
 * Semantics (README.md has the operator's version):
 *   - rules are ordered; the FIRST rule whose every given field matches
 *     decides (allow -> the packet goes on, deny -> dropped);
 *   - a field that is absent matches anything; "src"/"dst" are IPv4 prefixes,
 *     "proto" a protocol number, "sport"/"dport" inclusive port ranges, only
 *     allowed together with "proto" tcp (6) or udp (17);
 *   - a packet without a TCP/UDP header to read ports from -- a non-first
 *     IPv4 fragment -- matches only rules that have no port field (the same
 *     as what tshark sees with IP reassembly off, and iptables' behaviour);
 *   - frames that are not IPv4 get the "non_ip" policy, IPv4 that fails to
 *     parse (and runts) the "malformed" policy, IPv4 that no rule matches
 *     the "default" policy.
 *
 * This file's matcher is the reference: a plain loop over the rules.  The NF
 * classifies with DPDK's rte_acl (firewall_acl.h), and the unit tests check
 * that both agree on thousands of random rules and packets.
 *
 * State: one region (FW_STATE_REGION) holds a header (a fingerprint of the
 * rule set the counters belong to, so a standby started with a different
 * rules file is refused rather than mixing counts) and packet/byte counters:
 * one pair per rule, one each for the default, non_ip and malformed
 * policies, and one packet count per malformed reason.  Every write is
 * announced with nf_state_touch_ptr() first.
 */
#ifndef FIREWALL_CORE_H
#define FIREWALL_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_mbuf.h>

#include "onvm_pkt_parse.h"
#include "onvm_state.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Rules a file may hold: the rte_acl build of 1024 rules with port ranges
 * stays in a few MB of the node's heap and well under a second. */
#define FW_MAX_RULES 1024
/* Rule names: 1..31 characters of [A-Za-z0-9_.:-]. */
#define FW_NAME_SIZE 32

#define FW_STATE_REGION "fw_counters"

enum fw_action {
	FW_ALLOW = 0,
	FW_DENY = 1,
};

/* Match results besides a rule index. */
#define FW_NO_MATCH (-1)

/* What rules look at; host byte order. */
struct fw_tuple {
	uint32_t src, dst;
	uint16_t sport, dport; /* meaningful only when has_ports */
	uint8_t proto;
	uint8_t has_ports; /* a TCP/UDP header was there (not a non-first fragment) */
};

struct fw_rule {
	char name[FW_NAME_SIZE];
	uint8_t action;
	uint8_t src_len, dst_len; /* 0: any */
	uint8_t has_proto;
	uint8_t proto;
	uint8_t has_sport, has_dport; /* a rule with either needs has_ports */
	uint8_t pad;
	uint32_t src, dst; /* prefix bases, host order, no host bits */
	uint16_t sport_lo, sport_hi, dport_lo, dport_hi;
};

struct fw_config {
	uint8_t def;	   /* no rule matched */
	uint8_t non_ip;	   /* not IPv4 */
	uint8_t malformed; /* runt, or IPv4 that fails to parse */
	uint32_t n_rules;
	struct fw_rule *rules; /* n_rules, in priority order */
	uint64_t fingerprint;  /* of everything above */
};

/*
 * Parse a rules file (or text; `name` is used in messages).  Returns 0, or a
 * negative errno with "NAME:LINE:COL: field: reason" in err.  The config
 * owns its rules: fw_config_free() it.
 */
int fw_config_parse(struct fw_config *c, const char *name, const char *text, size_t len, char *err,
		    size_t errlen);
int fw_config_load(struct fw_config *c, const char *file, char *err, size_t errlen);
void fw_config_free(struct fw_config *c);

const char *fw_action_str(uint8_t action);

/* The reference matcher. */
bool fw_rule_matches(const struct fw_rule *r, const struct fw_tuple *t);
int32_t fw_match_linear(const struct fw_config *c, const struct fw_tuple *t);

/* What a frame is to the firewall. */
enum fw_kind {
	FW_KIND_IPV4 = 0,
	FW_KIND_NON_IP,
	FW_KIND_MALFORMED,
};

struct fw_pkt {
	struct fw_tuple t; /* FW_KIND_IPV4 only */
	uint8_t kind;
	uint8_t reason; /* enum onvm_parse_reason, FW_KIND_MALFORMED only */
	uint32_t len;	/* frame bytes */
};

void fw_pkt_parse(const struct rte_mbuf *m, struct fw_pkt *p);

/* ---- counters in a state region ---- */

struct fw_counter {
	uint64_t packets, bytes;
};

#define FW_STATE_MAGIC UINT64_C(0x3130574649524546) /* "FERIFW01" */

struct fw_state_hdr {
	uint64_t magic; /* FW_STATE_MAGIC once formatted; 0 in a fresh region */
	uint64_t fingerprint;
	uint32_t n_rules;
	uint32_t pad;
	/* Name of the rte_acl context of the process serving now, so that a
	 * promoted standby can free the one its dead predecessor left in the
	 * node's heap. */
	char owner[FW_NAME_SIZE];
	struct fw_counter deflt, non_ip, malformed;
	uint64_t malformed_reason[ONVM_PARSE_REASON_MAX];
	struct fw_counter rule[]; /* n_rules */
};

size_t fw_state_size(uint32_t n_rules);

struct fw {
	const struct fw_config *cfg;
	struct nf_state_set *set;
	struct fw_state_hdr *st;
};

/*
 * Attach `fw` to the counters region (`size` bytes at `region`, inside `set`).
 * Returns 0 when the region already holds counters of exactly this rule set,
 * 1 after formatting a fresh (never formatted) region -- only when
 * may_format, else -EAGAIN -- and -ESTALE (with a sentence in err) when it
 * holds counters of a different rule set; -ENOSPC if it is too small.
 */
int fw_state_open(struct fw *fw, const struct fw_config *c, struct nf_state_set *set, void *region,
		  size_t size, bool may_format, char *err, size_t errlen);
/* Zero every counter and write this rule set's header. */
void fw_state_format(struct fw *fw);

/* Record `name` as the serving process's context; copy the previous one to
 * prev (prev_len bytes, "" if none). */
void fw_state_set_owner(struct fw *fw, const char *name, char *prev, size_t prev_len);

/* Count a packet `p` whose rule lookup gave `rule` (index or FW_NO_MATCH;
 * ignored unless p is IPv4).  Returns FW_ALLOW or FW_DENY. */
uint8_t fw_account(struct fw *fw, const struct fw_pkt *p, int32_t rule);

/* Totals derived from the counters. */
void fw_totals(const struct fw *fw, struct fw_counter *allowed, struct fw_counter *denied);

/* The counters as JSON (see README.md); `classifier` names the matcher. */
int fw_export_json(const struct fw *fw, FILE *f, const char *rules_file, const char *classifier);
/* ... written to path.tmp, then renamed to path.  0 or -1. */
int fw_export_file(const struct fw *fw, const char *path, const char *rules_file,
		   const char *classifier);

#ifdef __cplusplus
}
#endif
#endif /* FIREWALL_CORE_H */
