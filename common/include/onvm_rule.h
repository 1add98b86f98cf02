/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * onvm_rule.h -- the one parser of what 5-tuple rules match on: an IPv4
 * address, an IPv4 prefix, a port or port range, a protocol, and the match
 * object {"src", "dst", "proto", "sport", "dport"} built of them.  The
 * manager's "flow_rules", the firewall's and the VLAN tagger's rules, the
 * NAT's internal prefixes and the load balancer's addresses all read their
 * values here, so one text means one thing everywhere.
 *
 * Contract.  Every int function returns 0 with its result written, or a
 * negative errno value with the result untouched and `e` filled in:
 * -EINVAL for a value of the wrong JSON type or shape, malformed text, a
 * prefix with host bits set, an unknown protocol name, an empty port range
 * or ports on a protocol without them; -ERANGE for a number outside its
 * range (an octet over 255, a prefix length over 32, a port outside
 * 0..65535, a protocol outside 1..255).  `e->why` is one line an operator
 * can act on, without a position ("\"10.0.0.1/8\" has host bits set (the
 * network is 10.0.0.0/8)"); `e->where` is where in the value parsed the bad
 * part sits ("" for the value itself, "[1]" for an element, "dport[1]"
 * inside a match object).  Each caller places the message with its own
 * position helper: onvm_rule_err_path() joins `where` to the caller's path
 * of the value, and the manager's cfg_rule_fail() or libnf's
 * nf_json_rule_fail() writes "FILE:LINE:COL: PATH: WHY".  Values quoted in
 * a reason are cut short and have control characters replaced by '?'.
 *
 * The syntax, one for the whole tree:
 *   - address  "a.b.c.d": four decimal octets 0..255, no leading zeros
 *     (inet_aton() would read "010" as octal 8), no spaces, nothing after;
 *   - prefix   "a.b.c.d/n", n 0..32 without leading zeros, or a bare address
 *     (a /32).  Host bits set are refused, never masked: "10.0.0.1/8" is a
 *     typo for a host or for a network, and silently matching 10.0.0.0/8
 *     turns a rule for one host into a rule for 16 million;
 *   - ports    a number 0..65535, or an inclusive JSON array [lo, hi] with
 *     lo <= hi.  An array, not the string "lo-hi": its ends are JSON
 *     numbers typed by the JSON parser instead of digits cut out of a
 *     string, an error can point at the bad end ("dport[1]"), a single port
 *     stays a plain number, and the NFs' rules files already wrote ranges
 *     so.  A string ("80", "1000-2000") is refused with a reason that shows
 *     the accepted form;
 *   - protocol "tcp", "udp", "icmp", a number 1..255, or "any" (the same as
 *     leaving it out).  0 is refused: no IPv4 packet should carry it, and
 *     the manager's rule table uses 0 for "any", so 0 would mean two things;
 *   - a match object: each of the five members is optional (absent: any);
 *     "sport"/"dport" need "proto" tcp or udp in the same object, since
 *     other packets have no ports (and a range holding 0 would match them).
 *     Other members are the caller's: it checks for unknown keys itself.
 *
 * Pure C and Jansson, no DPDK and no global state: any thread may call any
 * function at any time.  Nothing allocates.  Start-up only; the data paths
 * use the results (host byte order), not these functions.
 */
#ifndef ONVM_RULE_H
#define ONVM_RULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Room for a dotted quad and its NUL (INET_ADDRSTRLEN). */
#define ONVM_RULE_IPV4_STR_LEN 16

/* A protocol that matches every protocol: absent or "any". */
#define ONVM_RULE_PROTO_ANY (-1)

/* Why a value was refused, and where inside it (see the contract above). */
struct onvm_rule_err {
	char where[32];
	char why[192];
};

/* An IPv4 prefix, host byte order: `addr` has no bit outside `mask`. */
struct onvm_rule_prefix {
	uint32_t addr;
	uint32_t mask;
	uint8_t len; /* 0..32 */
};

/* An inclusive port range, lo <= hi. */
struct onvm_rule_ports {
	uint16_t lo, hi;
};

/* A parsed match object; absent members match anything. */
struct onvm_rule_match {
	struct onvm_rule_prefix src, dst;    /* 0.0.0.0/0 when absent */
	struct onvm_rule_ports sport, dport; /* 0..65535 when absent */
	int16_t proto;			     /* 1..255 or ONVM_RULE_PROTO_ANY */
	bool has_sport, has_dport;	     /* the member was given */
};

/* The netmask of a prefix length 0..32, host byte order. */
static inline uint32_t
onvm_rule_mask(uint8_t len)
{
	return len == 0 ? 0 : ~UINT32_C(0) << (32 - (len > 32 ? 32 : len));
}

/**
 * The dotted quad "a.b.c.d" in the NUL-terminated `s` into `*addr` (host
 * byte order).
 *
 * @return
 *   0, -EINVAL (malformed: missing or extra octets, a leading zero, a
 *   character that is not a digit or a dot) or -ERANGE (an octet over 255).
 */
int onvm_rule_ipv4_text(const char *s, uint32_t *addr, struct onvm_rule_err *e);

/**
 * The prefix "a.b.c.d/n" or bare address (a /32) in `s` into `*p`.
 *
 * @return
 *   0, -EINVAL (malformed address or length, host bits set) or -ERANGE (an
 *   octet over 255, a length over 32).
 */
int onvm_rule_prefix_text(const char *s, struct onvm_rule_prefix *p, struct onvm_rule_err *e);

/**
 * onvm_rule_ipv4_text() of the JSON string `v`.
 *
 * @return
 *   As onvm_rule_ipv4_text(), and -EINVAL if `v` is not a string (or holds
 *   a NUL byte).
 */
int onvm_rule_ipv4(const json_t *v, uint32_t *addr, struct onvm_rule_err *e);

/**
 * onvm_rule_prefix_text() of the JSON string `v`.
 *
 * @return
 *   As onvm_rule_prefix_text(), and -EINVAL if `v` is not a string.
 */
int onvm_rule_prefix(const json_t *v, struct onvm_rule_prefix *p, struct onvm_rule_err *e);

/**
 * A port (integer 0..65535) or an inclusive range [lo, hi] of two.
 *
 * @return
 *   0, -EINVAL (a string, an array not of two, an element not an integer,
 *   lo > hi; `e->where` "[i]" names a bad element) or -ERANGE (a port
 *   outside 0..65535).
 */
int onvm_rule_ports(const json_t *v, struct onvm_rule_ports *r, struct onvm_rule_err *e);

/**
 * A protocol: "tcp" (6), "udp" (17), "icmp" (1), "any"
 * (ONVM_RULE_PROTO_ANY) or an integer 1..255.
 *
 * @return
 *   0, -EINVAL (another name, another type) or -ERANGE (a number outside
 *   1..255).
 */
int onvm_rule_proto(const json_t *v, int16_t *proto, struct onvm_rule_err *e);

/**
 * The members "src", "dst" (prefixes), "proto", "sport" and "dport" of the
 * object `obj` into `*m`, in that order; the first bad one ends the parse
 * with `e->where` naming it ("src", "dport[0]").  Members other than these
 * five are not looked at.
 *
 * @return
 *   0, or the first member's error as the functions above, or -EINVAL with
 *   `e->where` "sport"/"dport" if ports are given without "proto" tcp or udp.
 */
int onvm_rule_match(const json_t *obj, struct onvm_rule_match *m, struct onvm_rule_err *e);

/**
 * The path of the bad value: `base` (the caller's path of the value parsed,
 * "" for the root) joined with `e->where` ("flow_rules[3]" + "dport[1]" =
 * "flow_rules[3].dport[1]"), into `out` (cut at `outlen`).
 *
 * @return
 *   `out`.
 */
char *onvm_rule_err_path(char *out, size_t outlen, const char *base, const struct onvm_rule_err *e);

/**
 * `addr` (host byte order) as "a.b.c.d" into `buf`, the inverse of
 * onvm_rule_ipv4_text(); for messages and the NFs' JSON exports.
 *
 * @return
 *   `buf`.
 */
char *onvm_rule_ipv4_str(uint32_t addr, char buf[ONVM_RULE_IPV4_STR_LEN]);

/**
 * The JSON type of `v` as messages name it: "an object", "a string", ...
 *
 * @return
 *   A static string; never NULL.
 */
const char *onvm_rule_json_type(const json_t *v);

#ifdef __cplusplus
}
#endif
#endif /* ONVM_RULE_H */
