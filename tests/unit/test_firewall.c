/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * test_firewall.c -- unit tests for the firewall NF's logic (nfs/firewall).
 *
 *   - the rules file: a good file with every field, the defaults, and each
 *     kind of bad input rejected with "FILE:LINE:COL: field: reason"; the
 *     expected column is found by searching the test's own text, not by the
 *     product's locator;
 *   - matching: first match wins, prefix/port/protocol edges, fragments
 *     (a non-first fragment matches only rules without ports), VLAN tags;
 *     every packet goes through both the linear reference matcher and the
 *     rte_acl context, which must agree;
 *   - non-IPv4 and malformed frames: their policies, counted by reason;
 *   - counters: packets and bytes per rule and policy, every write touched
 *     (test_state_commit_check() after every packet), rolled back to the last
 *     commit by a failover, refused for a different rule set;
 *   - rte_acl against the reference on thousands of random rules and packets
 *     (seeded; ONVM_TEST_SEED=N replays a run), at the rule limit, without
 *     rules, and its context names (a dead process's leftover is replaced).
 *
 * rte_acl allocates from the EAL heap, so a small EAL runs in this process
 * (no hugepages, no PCI, no shared files), once for all tests.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <arpa/inet.h>

#include <jansson.h>
#include <rte_acl.h>
#include <rte_eal.h>
#include <rte_errno.h>

#include "heap_mbuf.h"
#include "onvm_nf_json.h"
#include "test_state.h"

#include "../../nfs/firewall/firewall_acl.h"
#include "../../nfs/firewall/firewall_core.h"

/* ---- helpers ------------------------------------------------------------------------ */

static uint32_t
ip(const char *s)
{
	struct in_addr a;

	assert_int_equal(inet_pton(AF_INET, s, &a), 1);
	return ntohl(a.s_addr);
}

/* What to put in a test frame. */
struct spec {
	const char *src, *dst;
	uint8_t proto;
	uint16_t sport, dport;
	uint16_t frag_off; /* in 8-byte units; > 0: a non-first fragment */
	bool mf;	   /* more fragments */
	uint16_t payload;
	uint16_t vlan; /* one 802.1Q tag when non-zero */
};

/* Ethernet [VLAN] IPv4 [TCP|UDP|ICMP] payload; returns the frame length. */
static size_t
build(uint8_t *b, const struct spec *s)
{
	size_t l2 = 14, l4 = 0, off;
	uint16_t tot;
	uint32_t a;

	memset(b, 0, 1600);
	memcpy(b, "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01", 12);
	if (s->vlan != 0) {
		b[12] = 0x81;
		b[14] = (uint8_t)(s->vlan >> 8);
		b[15] = (uint8_t)s->vlan;
		l2 = 18;
	}
	b[l2 - 2] = 0x08;
	b[l2 - 1] = 0x00;
	if (s->frag_off == 0 && s->proto == IPPROTO_TCP)
		l4 = 20;
	else if (s->frag_off == 0 && (s->proto == IPPROTO_UDP || s->proto == IPPROTO_ICMP))
		l4 = 8;
	tot = (uint16_t)(20 + l4 + s->payload);
	b[l2] = 0x45;
	b[l2 + 2] = (uint8_t)(tot >> 8);
	b[l2 + 3] = (uint8_t)tot;
	b[l2 + 6] = (uint8_t)(((s->mf ? 0x20 : 0) | (s->frag_off >> 8)) & 0xff);
	b[l2 + 7] = (uint8_t)s->frag_off;
	b[l2 + 8] = 64;
	b[l2 + 9] = s->proto;
	a = htonl(ip(s->src));
	memcpy(&b[l2 + 12], &a, 4);
	a = htonl(ip(s->dst));
	memcpy(&b[l2 + 16], &a, 4);
	off = l2 + 20;
	if (l4 > 0 && (s->proto == IPPROTO_TCP || s->proto == IPPROTO_UDP)) {
		b[off] = (uint8_t)(s->sport >> 8);
		b[off + 1] = (uint8_t)s->sport;
		b[off + 2] = (uint8_t)(s->dport >> 8);
		b[off + 3] = (uint8_t)s->dport;
		if (s->proto == IPPROTO_TCP) {
			b[off + 12] = 5 << 4;
		} else {
			b[off + 4] = (uint8_t)((8 + s->payload) >> 8);
			b[off + 5] = (uint8_t)(8 + s->payload);
		}
	} else if (l4 > 0) {
		b[off] = 8; /* ICMP echo request */
	}
	return l2 + tot;
}

static int acl_seq;

/* A firewall over heap state, with both matchers. */
struct fx {
	struct fw_config cfg;
	struct test_state ts;
	struct fw fw;
	struct fw_acl *acl;
};

static void
fx_init(struct fx *x, const char *json)
{
	struct nf_state_request req = {.name = FW_STATE_REGION, .chunk_size = 64};
	char err[512] = "", name[32];
	int r = fw_config_parse(&x->cfg, "t.json", json, strlen(json), err, sizeof(err));

	if (r != 0)
		fail_msg("config: %s", err);
	req.size = fw_state_size(x->cfg.n_rules);
	assert_int_equal(test_state_init(&x->ts, &req, 1), 0);
	assert_int_equal(fw_state_open(&x->fw, &x->cfg, &x->ts.set,
				       test_state_region(&x->ts, FW_STATE_REGION), req.size, true,
				       err, sizeof(err)),
			 1);
	assert_int_equal(test_state_commit_check(&x->ts), 0);
	snprintf(name, sizeof(name), "tfw%d", acl_seq++);
	x->acl = fw_acl_build(&x->cfg, name, err, sizeof(err));
	if (x->acl == NULL)
		fail_msg("acl: %s", err);
}

static void
fx_fini(struct fx *x)
{
	fw_acl_free(x->acl);
	test_state_fini(&x->ts);
	fw_config_free(&x->cfg);
}

/* The rule a parsed packet matches; both matchers must say the same. */
static int32_t
fx_match(struct fx *x, const struct fw_pkt *p)
{
	int32_t lin, acl;

	if (p->kind != FW_KIND_IPV4)
		return FW_NO_MATCH;
	lin = fw_match_linear(&x->cfg, &p->t);
	fw_acl_classify(x->acl, &p->t, 1, &acl);
	assert_int_equal(lin, acl);
	return lin;
}

/* Run one frame through the firewall; every write must have been touched. */
static uint8_t
fx_frame(struct fx *x, const uint8_t *bytes, size_t len, struct fw_pkt *out)
{
	struct rte_mbuf *m = heap_mbuf(bytes, len);
	struct fw_pkt p;
	uint8_t action;

	assert_non_null(m);
	fw_pkt_parse(m, &p);
	action = fw_account(&x->fw, &p, fx_match(x, &p));
	assert_int_equal(test_state_commit_check(&x->ts), 0);
	heap_mbuf_free(m);
	if (out != NULL)
		*out = p;
	return action;
}

static uint8_t
fx_send(struct fx *x, const struct spec *s)
{
	uint8_t b[1600];

	return fx_frame(x, b, build(b, s), NULL);
}

/* Index of the rule the frame `s` matches (checked by both matchers). */
static int32_t
fx_rule_of(struct fx *x, const struct spec *s)
{
	uint8_t b[1600];
	struct rte_mbuf *m = heap_mbuf(b, build(b, s));
	struct fw_pkt p;
	int32_t r;

	assert_non_null(m);
	fw_pkt_parse(m, &p);
	heap_mbuf_free(m);
	assert_int_equal(p.kind, FW_KIND_IPV4);
	r = fx_match(x, &p);
	return r;
}

static int32_t
rule_by_name(const struct fw_config *c, const char *name)
{
	for (uint32_t i = 0; i < c->n_rules; i++)
		if (strcmp(c->rules[i].name, name) == 0)
			return (int32_t)i;
	fail_msg("no rule %s", name);
	return -1;
}

/* ---- the rules file --------------------------------------------------------------------- */

static const char good_file[] =
    "{\n"
    "  \"default\": \"deny\",\n"
    "  \"non_ip\": \"allow\",\n"
    "  \"malformed\": \"allow\",\n"
    "  \"rules\": [\n"
    "    {\"name\": \"web\", \"action\": \"allow\", \"src\": \"10.0.0.0/8\",\n"
    "     \"dst\": \"192.168.1.0/24\", \"proto\": \"tcp\", \"sport\": [1024, 65535],\n"
    "     \"dport\": 80},\n"
    "    {\"name\": \"dns\", \"action\": \"deny\", \"proto\": 17, \"dport\": [53, 53]},\n"
    "    {\"name\": \"ping\", \"action\": \"allow\", \"proto\": \"icmp\", \"dst\": "
    "\"192.0.2.7\"},\n"
    "    {\"name\": \"gre\", \"action\": \"allow\", \"proto\": 47},\n"
    "    {\"name\": \"any-else.1:x\", \"action\": \"deny\"}\n"
    "  ]\n"
    "}\n";

static void
test_config_good_file_sets_every_field(void **state)
{
	char path[] = "/tmp/test_firewall_XXXXXX", err[512] = "";
	struct fw_config c;
	const struct fw_rule *r;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, good_file, strlen(good_file)), (ssize_t)strlen(good_file));
	close(fd);
	if (fw_config_load(&c, path, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	unlink(path);
	assert_int_equal(c.def, FW_DENY);
	assert_int_equal(c.non_ip, FW_ALLOW);
	assert_int_equal(c.malformed, FW_ALLOW);
	assert_int_equal(c.n_rules, 5);
	r = &c.rules[0];
	assert_string_equal(r->name, "web");
	assert_int_equal(r->action, FW_ALLOW);
	assert_int_equal(r->src, ip("10.0.0.0"));
	assert_int_equal(r->src_len, 8);
	assert_int_equal(r->dst, ip("192.168.1.0"));
	assert_int_equal(r->dst_len, 24);
	assert_true(r->has_proto);
	assert_int_equal(r->proto, IPPROTO_TCP);
	assert_true(r->has_sport && r->has_dport);
	assert_int_equal(r->sport_lo, 1024);
	assert_int_equal(r->sport_hi, 65535);
	assert_int_equal(r->dport_lo, 80);
	assert_int_equal(r->dport_hi, 80);
	r = &c.rules[1];
	assert_int_equal(r->action, FW_DENY);
	assert_int_equal(r->proto, IPPROTO_UDP);
	assert_int_equal(r->src_len, 0);
	assert_false(r->has_sport);
	assert_int_equal(r->dport_lo, 53);
	assert_int_equal(r->dport_hi, 53);
	r = &c.rules[2];
	assert_int_equal(r->proto, IPPROTO_ICMP);
	assert_int_equal(r->dst, ip("192.0.2.7"));
	assert_int_equal(r->dst_len, 32); /* a bare address is a /32 */
	assert_int_equal(c.rules[3].proto, 47);
	r = &c.rules[4];
	assert_string_equal(r->name, "any-else.1:x");
	assert_false(r->has_proto || r->has_sport || r->has_dport || r->src_len || r->dst_len);
	fw_config_free(&c);
}

static void
test_config_defaults_non_ip_follows_default_and_malformed_is_denied(void **state)
{
	static const char text[] = "{\"default\": \"allow\"}";
	char err[512] = "";
	struct fw_config c;

	(void)state;
	assert_int_equal(fw_config_parse(&c, "t.json", text, strlen(text), err, sizeof(err)), 0);
	assert_int_equal(c.def, FW_ALLOW);
	assert_int_equal(c.non_ip, FW_ALLOW);
	assert_int_equal(c.malformed, FW_DENY);
	assert_int_equal(c.n_rules, 0);
	fw_config_free(&c);
}

static void
test_config_example_file_of_the_readme_parses(void **state)
{
#ifdef ONVM_SRC_DIR
	char err[512] = "";
	struct fw_config c;

	(void)state;
	if (fw_config_load(&c, ONVM_SRC_DIR "/nfs/firewall/example_rules.json", err, sizeof(err)) !=
	    0)
		fail_msg("%s", err);
	assert_int_equal(c.n_rules, 7);
	assert_int_equal(c.def, FW_DENY);
	fw_config_free(&c);
#else
	(void)state;
	skip();
#endif
}

static void
test_config_same_rules_same_fingerprint_other_rules_other(void **state)
{
	static const char a[] = "{\"default\": \"deny\", \"rules\": [{\"name\": \"x\", "
				"\"action\": \"allow\", \"proto\": \"tcp\", \"dport\": 80}]}";
	static const char b[] = "{\"rules\": [{\"dport\": 80, \"proto\": 6, \"action\": "
				"\"allow\", \"name\": \"x\"}], \"default\": \"deny\"}";
	static const char c2[] = "{\"default\": \"deny\", \"rules\": [{\"name\": \"x\", "
				 "\"action\": \"allow\", \"proto\": \"tcp\", \"dport\": 81}]}";
	struct fw_config ca, cb, cc;
	char err[512];

	(void)state;
	assert_int_equal(fw_config_parse(&ca, "a", a, strlen(a), err, sizeof(err)), 0);
	assert_int_equal(fw_config_parse(&cb, "b", b, strlen(b), err, sizeof(err)), 0);
	assert_int_equal(fw_config_parse(&cc, "c", c2, strlen(c2), err, sizeof(err)), 0);
	assert_true(ca.fingerprint == cb.fingerprint);
	assert_true(ca.fingerprint != cc.fingerprint);
	fw_config_free(&ca);
	fw_config_free(&cb);
	fw_config_free(&cc);
}

/* Parse `text`; the error must be exactly `want`. */
static void
expect_error(const char *text, const char *want)
{
	char err[512] = "";
	struct fw_config c;
	int r = fw_config_parse(&c, "t.json", text, strlen(text), err, sizeof(err));

	if (r == 0)
		fail_msg("accepted: %s", text);
	assert_int_equal(r, -EINVAL);
	assert_string_equal(err, want);
	assert_null(c.rules);
}

/*
 * One rule on line 2, starting at column 3:
 *   {"default": "deny", "rules": [
 *     RULE
 *   ]}
 * The error must point at line 2, column 3 + offset of `at` in RULE (the
 * value the error is about), and read "rules[0].FIELD: MSG".
 */
static void
expect_rule_error(const char *rule, const char *at, const char *field, const char *msg)
{
	char text[1024], want[1024];
	const char *p = strstr(rule, at);

	assert_non_null(p);
	snprintf(text, sizeof(text), "{\"default\": \"deny\", \"rules\": [\n  %s\n]}", rule);
	snprintf(want, sizeof(want), "t.json:2:%d: rules[0]%s%s: %s", 3 + (int)(p - rule),
		 field[0] != '\0' ? "." : "", field, msg);
	expect_error(text, want);
}

static void
test_config_syntax_error_names_file_line_and_column(void **state)
{
	char err[512] = "";
	struct fw_config c;
	static const char text[] = "{\"default\": \"deny\",\n \"rules\": [}\n";

	(void)state;
	assert_int_equal(fw_config_parse(&c, "t.json", text, strlen(text), err, sizeof(err)),
			 -EINVAL);
	assert_true(strncmp(err, "t.json:2:", 9) == 0);
}

static void
test_config_missing_file_is_an_error(void **state)
{
	char err[512] = "";
	struct fw_config c;

	(void)state;
	assert_int_equal(fw_config_load(&c, "/nonexistent/rules.json", err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "/nonexistent/rules.json: No such file or directory");
}

static void
test_config_top_level_must_be_an_object(void **state)
{
	(void)state;
	expect_error("[1, 2]", "t.json:1:1: (top level): expected an object");
}

static void
test_config_unknown_top_level_field_is_rejected(void **state)
{
	(void)state;
	expect_error("{\"default\": \"deny\", \"colour\": 1}",
		     "t.json:1:31: colour: unknown field");
}

static void
test_config_default_is_required(void **state)
{
	(void)state;
	expect_error("{\"rules\": []}", "t.json:1:1: default: required field missing");
}

static void
test_config_policy_values_are_allow_or_deny(void **state)
{
	(void)state;
	expect_error("{\"default\": \"drop\"}",
		     "t.json:1:13: default: expected \"allow\" or \"deny\"");
	expect_error("{\"default\": \"deny\", \"non_ip\": 1}",
		     "t.json:1:31: non_ip: expected \"allow\" or \"deny\"");
	expect_error("{\"default\": \"deny\", \"malformed\": \"\"}",
		     "t.json:1:34: malformed: expected \"allow\" or \"deny\"");
}

static void
test_config_rules_must_be_an_array_of_objects(void **state)
{
	(void)state;
	expect_error("{\"default\": \"deny\", \"rules\": {}}",
		     "t.json:1:30: rules: expected an array of rules");
	expect_rule_error("5", "5", "", "expected an object");
}

static void
test_config_unknown_rule_field_is_rejected(void **state)
{
	(void)state;
	expect_rule_error("{\"name\": \"a\", \"action\": \"deny\", \"port\": 80}", "80", "port",
			  "unknown field");
}

static void
test_config_rule_name_and_action_are_required(void **state)
{
	(void)state;
	expect_rule_error("{\"action\": \"deny\"}", "{", "name", "required field missing");
	expect_rule_error("{\"name\": \"a\"}", "{", "action", "required field missing");
	expect_rule_error("{\"name\": \"a\", \"action\": \"reject\"}", "\"reject\"", "action",
			  "expected \"allow\" or \"deny\"");
}

static void
test_config_rule_names_are_short_plain_words(void **state)
{
	(void)state;
	expect_rule_error("{\"name\": \"a b\", \"action\": \"deny\"}", "\"a b\"", "name",
			  "a name is 1..31 characters of A-Z a-z 0-9 _ . : -");
	expect_rule_error("{\"name\": \"abcdefghijklmnopqrstuvwxyz012345\", \"action\": \"deny\"}",
			  "\"abc", "name", "a name is 1..31 characters of A-Z a-z 0-9 _ . : -");
	expect_rule_error("{\"name\": \"\", \"action\": \"deny\"}", "\"\"", "name",
			  "expected a non-empty string");
}

static void
test_config_duplicate_rule_names_are_rejected(void **state)
{
	static const char text[] = "{\"default\": \"deny\", \"rules\": [\n"
				   "  {\"name\": \"a\", \"action\": \"deny\"},\n"
				   "  {\"name\": \"b\", \"action\": \"deny\"},\n"
				   "  {\"name\": \"a\", \"action\": \"allow\"}\n"
				   "]}";

	(void)state;
	expect_error(text, "t.json:4:12: rules[2].name: duplicate rule name \"a\" (also rules[0])");
}

static void
test_config_bad_prefixes_are_rejected(void **state)
{
	/* The reasons are common/onvm_rule.c's (tests/unit/test_rule.c has them all). */
	static const struct {
		const char *prefix, *why;
	} bad[] = {
	    {"10.0.0/8", "expected 4 octets, found 3"},
	    {"10.0.0.0/33", "the length 33 is over 32"},
	    {"10.0.0.0/", "the length after '/' is missing"},
	    {"10.0.0.0/08", "the length \"08\" has a leading zero"},
	    {"256.0.0.0/8", "octet \"256\" is over 255"},
	    {"host", "unexpected 'h' in octet 1"},
	    {"10.0.0.0/8 ", "the length \"8 \" is not a number 0..32"},
	    {"010.0.0.0/8", "octet \"010\" has a leading zero"},
	};
	char rule[256], at[64], msg[128];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(rule, sizeof(rule),
			 "{\"name\": \"a\", \"action\": \"deny\", \"src\": \"%s\"}",
			 bad[i].prefix);
		snprintf(at, sizeof(at), "\"%s\"", bad[i].prefix);
		snprintf(msg, sizeof(msg), "\"%s\" is not an IPv4 prefix a.b.c.d/n: %s",
			 bad[i].prefix, bad[i].why);
		expect_rule_error(rule, at, "src", msg);
	}
	expect_rule_error("{\"name\": \"a\", \"action\": \"deny\", \"dst\": 167772160}", "1677",
			  "dst", "expected an IPv4 prefix string \"a.b.c.d/n\", got an integer");
}

static void
test_config_prefix_with_host_bits_names_the_network(void **state)
{
	(void)state;
	expect_rule_error("{\"name\": \"a\", \"action\": \"deny\", \"dst\": \"192.168.1.77/24\"}",
			  "\"192", "dst",
			  "\"192.168.1.77/24\" has host bits set (the network is 192.168.1.0/24)");
	expect_rule_error("{\"name\": \"a\", \"action\": \"deny\", \"src\": \"10.1.0.0/0\"}",
			  "\"10", "src",
			  "\"10.1.0.0/0\" has host bits set (the network is 0.0.0.0/0)");
}

static void
test_config_bad_protocols_are_rejected(void **state)
{
	static const char forms[] = "expected \"tcp\", \"udp\", \"icmp\", \"any\" or a number 1..255";
	char msg[160];

	(void)state;
	snprintf(msg, sizeof(msg), "unknown protocol \"sctp\": %s", forms);
	expect_rule_error("{\"name\": \"a\", \"action\": \"deny\", \"proto\": \"sctp\"}", "\"sctp",
			  "proto", msg);
	expect_rule_error("{\"name\": \"a\", \"action\": \"deny\", \"proto\": 256}", "256", "proto",
			  "protocol 256 is out of range 1..255");
	expect_rule_error("{\"name\": \"a\", \"action\": \"deny\", \"proto\": -1}", "-1", "proto",
			  "protocol -1 is out of range 1..255");
	expect_rule_error("{\"name\": \"a\", \"action\": \"deny\", \"proto\": 0}", "0}", "proto",
			  "protocol 0 is out of range 1..255 (IPv4 has no protocol 0): leave "
			  "\"proto\" out or write \"any\" to match every protocol");
	snprintf(msg, sizeof(msg), "unknown protocol \"TCP\": %s", forms);
	expect_rule_error("{\"name\": \"a\", \"action\": \"deny\", \"proto\": \"TCP\"}", "\"TCP",
			  "proto", msg);
}

static void
test_config_protocol_any_is_no_protocol(void **state)
{
	static const char text[] = "{\"default\": \"deny\", \"rules\": [{\"name\": \"a\", "
				   "\"action\": \"allow\", \"proto\": \"any\"}]}";
	char err[512];
	struct fw_config c;

	(void)state;
	assert_int_equal(fw_config_parse(&c, "t.json", text, strlen(text), err, sizeof(err)), 0);
	assert_false(c.rules[0].has_proto);
	fw_config_free(&c);
}

static void
test_config_bad_ports_are_rejected(void **state)
{
	(void)state;
	expect_rule_error("{\"name\": \"a\", \"action\": \"deny\", \"proto\": \"tcp\", \"dport\": "
			  "65536}",
			  "65536", "dport", "port 65536 is out of range 0..65535");
	expect_rule_error("{\"name\": \"a\", \"action\": \"deny\", \"proto\": \"tcp\", \"sport\": "
			  "\"80\"}",
			  "\"80\"", "sport",
			  "\"80\" is a string: a port is a number 0..65535 and a range an inclusive "
			  "array [lo, hi] (write 80)");
	expect_rule_error("{\"name\": \"a\", \"action\": \"deny\", \"proto\": \"udp\", \"dport\": "
			  "[1, 2, 3]}",
			  "[1", "dport", "expected a range [lo, hi] of 2 ports, got an array of 3");
	expect_rule_error("{\"name\": \"a\", \"action\": \"deny\", \"proto\": \"udp\", \"dport\": "
			  "[\"a\", 2]}",
			  "\"a\", 2", "dport[0]", "expected a port 0..65535, got a string");
	expect_rule_error("{\"name\": \"a\", \"action\": \"deny\", \"proto\": \"udp\", \"dport\": "
			  "[1, -2]}",
			  "-2", "dport[1]", "port -2 is out of range 0..65535");
}

static void
test_config_empty_port_range_is_rejected(void **state)
{
	(void)state;
	expect_rule_error("{\"name\": \"a\", \"action\": \"deny\", \"proto\": \"tcp\", \"sport\": "
			  "[2000, 1000]}",
			  "[2000", "sport", "range [2000, 1000] is empty (lo > hi)");
}

static void
test_config_ports_need_tcp_or_udp(void **state)
{
	static const char msg[] = "ports need \"proto\": \"tcp\" or \"udp\" in the same rule "
				  "(other packets have none)";
	char err[512];
	struct fw_config c;
	static const char ok[] =
	    "{\"default\": \"deny\", \"rules\": [{\"name\": \"a\", \"action\": "
	    "\"deny\", \"proto\": 6, \"sport\": 1}, {\"name\": \"b\", "
	    "\"action\": \"deny\", \"proto\": 17, \"dport\": [1, 2]}]}";

	(void)state;
	expect_rule_error("{\"name\": \"a\", \"action\": \"deny\", \"dport\": 80}", "80", "dport",
			  msg);
	expect_rule_error(
	    "{\"name\": \"a\", \"action\": \"deny\", \"proto\": \"icmp\", \"sport\": 8}", "8}",
	    "sport", msg);
	expect_rule_error(
	    "{\"name\": \"a\", \"action\": \"deny\", \"proto\": 47, \"dport\": [1, 9]}", "[1",
	    "dport", msg);
	/* By number, TCP and UDP take ports too. */
	assert_int_equal(fw_config_parse(&c, "t.json", ok, strlen(ok), err, sizeof(err)), 0);
	fw_config_free(&c);
}

/* n rules, one per line from line 2, each starting at column 3. */
static char *
many_rules(unsigned int n)
{
	size_t cap = 64 + (size_t)n * 96, len;
	char *t = malloc(cap);

	assert_non_null(t);
	len = (size_t)snprintf(t, cap, "{\"default\": \"deny\", \"rules\": [\n");
	for (unsigned int i = 0; i < n; i++)
		len += (size_t)snprintf(t + len, cap - len,
					"  {\"name\": \"r%u\", \"action\": \"%s\", \"dport\": %u, "
					"\"proto\": 6}%s\n",
					i, i % 2 ? "allow" : "deny", i, i + 1 < n ? "," : "");
	snprintf(t + len, cap - len, "]}\n");
	return t;
}

static void
test_config_too_many_rules_is_rejected_at_the_first_extra_rule(void **state)
{
	char *t = many_rules(FW_MAX_RULES + 1), want[128];

	(void)state;
	snprintf(want, sizeof(want), "t.json:%d:3: rules[%d]: too many rules (%d, at most %d)",
		 FW_MAX_RULES + 2, FW_MAX_RULES, FW_MAX_RULES + 1, FW_MAX_RULES);
	expect_error(t, want);
	free(t);
}

static void
test_config_rule_limit_is_accepted_and_builds(void **state)
{
	char *t = many_rules(FW_MAX_RULES);
	struct fx x;

	(void)state;
	fx_init(&x, t);
	free(t);
	assert_int_equal(x.cfg.n_rules, FW_MAX_RULES);
	/* The last rule of all is reachable. */
	assert_int_equal(fx_rule_of(&x, &(struct spec){.src = "198.18.0.1",
						       .dst = "198.18.0.2",
						       .proto = IPPROTO_TCP,
						       .sport = 1,
						       .dport = FW_MAX_RULES - 1}),
			 FW_MAX_RULES - 1);
	assert_int_equal(fx_rule_of(&x, &(struct spec){.src = "198.18.0.1",
						       .dst = "198.18.0.2",
						       .proto = IPPROTO_TCP,
						       .sport = 1,
						       .dport = FW_MAX_RULES}),
			 FW_NO_MATCH);
	fx_fini(&x);
}

/* ---- matching -------------------------------------------------------------------------- */

#define TCP(s, d, sp, dp)                                                                          \
	(&(struct spec){.src = (s), .dst = (d), .proto = IPPROTO_TCP, .sport = (sp), .dport = (dp)})
#define UDP(s, d, sp, dp)                                                                          \
	(&(struct spec){.src = (s), .dst = (d), .proto = IPPROTO_UDP, .sport = (sp), .dport = (dp)})

static void
test_first_matching_rule_wins(void **state)
{
	struct fx x;

	(void)state;
	fx_init(&x, "{\"default\": \"allow\", \"rules\": ["
		    "{\"name\": \"narrow\", \"action\": \"deny\", \"src\": \"198.18.1.0/24\"},"
		    "{\"name\": \"wide\", \"action\": \"allow\", \"src\": \"198.18.0.0/16\"},"
		    "{\"name\": \"narrow2\", \"action\": \"deny\", \"src\": \"198.18.2.0/24\"}]}");
	assert_int_equal(fx_rule_of(&x, TCP("198.18.1.9", "198.19.0.1", 1, 2)), 0);
	assert_int_equal(fx_send(&x, TCP("198.18.1.9", "198.19.0.1", 1, 2)), FW_DENY);
	/* narrow2 comes after wide, which covers it: never reached. */
	assert_int_equal(fx_rule_of(&x, TCP("198.18.2.9", "198.19.0.1", 1, 2)), 1);
	assert_int_equal(fx_send(&x, TCP("198.18.2.9", "198.19.0.1", 1, 2)), FW_ALLOW);
	fx_fini(&x);
}

static void
test_no_matching_rule_applies_the_default(void **state)
{
	struct fx x;

	(void)state;
	fx_init(&x, "{\"default\": \"deny\", \"rules\": ["
		    "{\"name\": \"r\", \"action\": \"allow\", \"dst\": \"198.19.0.0/16\"}]}");
	assert_int_equal(fx_rule_of(&x, TCP("198.18.1.9", "198.18.0.1", 1, 2)), FW_NO_MATCH);
	assert_int_equal(fx_send(&x, TCP("198.18.1.9", "198.18.0.1", 1, 2)), FW_DENY);
	assert_int_equal(x.fw.st->deflt.packets, 1);
	assert_int_equal(fx_send(&x, TCP("198.18.1.9", "198.19.0.1", 1, 2)), FW_ALLOW);
	assert_int_equal(x.fw.st->rule[0].packets, 1);
	fx_fini(&x);
}

static void
test_prefixes_match_exactly_their_range(void **state)
{
	struct fx x;

	(void)state;
	fx_init(&x, "{\"default\": \"deny\", \"rules\": ["
		    "{\"name\": \"host\", \"action\": \"allow\", \"dst\": \"198.19.255.255\"},"
		    "{\"name\": \"net24\", \"action\": \"allow\", \"src\": \"198.18.7.0/24\"},"
		    "{\"name\": \"net31\", \"action\": \"allow\", \"src\": \"198.18.9.2/31\"},"
		    "{\"name\": \"all\", \"action\": \"allow\", \"src\": \"0.0.0.0/0\", "
		    "\"dst\": \"0.0.0.0/0\", \"proto\": 47}]}");
	assert_int_equal(fx_rule_of(&x, TCP("1.2.3.4", "198.19.255.255", 1, 2)), 0);
	assert_int_equal(fx_rule_of(&x, TCP("1.2.3.4", "198.19.255.254", 1, 2)), FW_NO_MATCH);
	assert_int_equal(fx_rule_of(&x, TCP("198.18.7.0", "1.1.1.1", 1, 2)), 1);
	assert_int_equal(fx_rule_of(&x, TCP("198.18.7.255", "1.1.1.1", 1, 2)), 1);
	assert_int_equal(fx_rule_of(&x, TCP("198.18.6.255", "1.1.1.1", 1, 2)), FW_NO_MATCH);
	assert_int_equal(fx_rule_of(&x, TCP("198.18.8.0", "1.1.1.1", 1, 2)), FW_NO_MATCH);
	assert_int_equal(fx_rule_of(&x, TCP("198.18.9.2", "1.1.1.1", 1, 2)), 2);
	assert_int_equal(fx_rule_of(&x, TCP("198.18.9.3", "1.1.1.1", 1, 2)), 2);
	assert_int_equal(fx_rule_of(&x, TCP("198.18.9.4", "1.1.1.1", 1, 2)), FW_NO_MATCH);
	assert_int_equal(
	    fx_rule_of(&x, &(struct spec){.src = "255.255.255.255", .dst = "0.0.0.0", .proto = 47}),
	    3);
	fx_fini(&x);
}

static void
test_source_and_destination_must_both_match(void **state)
{
	struct fx x;

	(void)state;
	fx_init(&x, "{\"default\": \"deny\", \"rules\": [{\"name\": \"r\", \"action\": \"allow\", "
		    "\"src\": \"198.18.0.0/16\", \"dst\": \"198.19.0.0/16\"}]}");
	assert_int_equal(fx_rule_of(&x, TCP("198.18.1.1", "198.19.1.1", 1, 2)), 0);
	assert_int_equal(fx_rule_of(&x, TCP("198.19.1.1", "198.18.1.1", 1, 2)), FW_NO_MATCH);
	assert_int_equal(fx_rule_of(&x, TCP("198.18.1.1", "198.18.1.1", 1, 2)), FW_NO_MATCH);
	fx_fini(&x);
}

static void
test_port_ranges_include_both_ends(void **state)
{
	struct fx x;
	const char *a = "198.18.0.1", *b = "198.18.0.2";

	(void)state;
	fx_init(
	    &x,
	    "{\"default\": \"deny\", \"rules\": ["
	    "{\"name\": \"d\", \"action\": \"allow\", \"proto\": \"tcp\", \"dport\": [1000, 1999]},"
	    "{\"name\": \"s\", \"action\": \"allow\", \"proto\": \"tcp\", \"sport\": 0},"
	    "{\"name\": \"sd\", \"action\": \"allow\", \"proto\": \"udp\", "
	    "\"sport\": [53, 53], \"dport\": [65535, 65535]}]}");
	assert_int_equal(fx_rule_of(&x, TCP(a, b, 7, 999)), FW_NO_MATCH);
	assert_int_equal(fx_rule_of(&x, TCP(a, b, 7, 1000)), 0);
	assert_int_equal(fx_rule_of(&x, TCP(a, b, 7, 1999)), 0);
	assert_int_equal(fx_rule_of(&x, TCP(a, b, 7, 2000)), FW_NO_MATCH);
	assert_int_equal(fx_rule_of(&x, TCP(a, b, 0, 2000)), 1);
	assert_int_equal(fx_rule_of(&x, UDP(a, b, 53, 65535)), 2);
	assert_int_equal(fx_rule_of(&x, UDP(a, b, 53, 65534)), FW_NO_MATCH);
	assert_int_equal(fx_rule_of(&x, UDP(a, b, 54, 65535)), FW_NO_MATCH);
	fx_fini(&x);
}

static void
test_protocol_matches_by_name_and_number(void **state)
{
	struct fx x;
	const char *a = "198.18.0.1", *b = "198.18.0.2";

	(void)state;
	fx_init(&x,
		"{\"default\": \"deny\", \"rules\": ["
		"{\"name\": \"udp53\", \"action\": \"allow\", \"proto\": \"udp\", \"dport\": 53},"
		"{\"name\": \"icmp\", \"action\": \"allow\", \"proto\": \"icmp\"},"
		"{\"name\": \"gre\", \"action\": \"allow\", \"proto\": 47},"
		"{\"name\": \"tcp\", \"action\": \"allow\", \"proto\": 6}]}");
	assert_int_equal(fx_rule_of(&x, UDP(a, b, 1, 53)), 0);
	assert_int_equal(fx_rule_of(&x, TCP(a, b, 1, 53)), 3); /* a UDP rule is not a TCP rule */
	assert_int_equal(fx_rule_of(&x, &(struct spec){.src = a, .dst = b, .proto = IPPROTO_ICMP}),
			 1);
	assert_int_equal(
	    fx_rule_of(&x, &(struct spec){.src = a, .dst = b, .proto = 47, .payload = 4}), 2);
	assert_int_equal(fx_rule_of(&x, UDP(a, b, 1, 54)), FW_NO_MATCH);
	assert_int_equal(fx_rule_of(&x, &(struct spec){.src = a, .dst = b, .proto = 50}),
			 FW_NO_MATCH);
	fx_fini(&x);
}

static const char frag_rules[] =
    "{\"default\": \"deny\", \"rules\": ["
    "{\"name\": \"dns\", \"action\": \"deny\", \"proto\": \"udp\", \"dport\": 53},"
    "{\"name\": \"udp\", \"action\": \"allow\", \"proto\": \"udp\"},"
    "{\"name\": \"web\", \"action\": \"allow\", \"proto\": \"tcp\", \"dport\": [0, 65535]}]}";

static void
test_non_first_fragment_matches_only_rules_without_ports(void **state)
{
	struct fx x;
	struct spec udp_frag = {.src = "198.18.0.1",
				.dst = "198.18.0.2",
				.proto = IPPROTO_UDP,
				.frag_off = 185,
				.payload = 100};
	struct spec tcp_frag = {.src = "198.18.0.1",
				.dst = "198.18.0.2",
				.proto = IPPROTO_TCP,
				.frag_off = 1,
				.mf = true,
				.payload = 64};

	(void)state;
	fx_init(&x, frag_rules);
	/* The UDP fragment skips "dns" (ports) and meets "udp"; the TCP one
	 * skips even a full-range port rule and falls to the default. */
	assert_int_equal(fx_rule_of(&x, &udp_frag), 1);
	assert_int_equal(fx_send(&x, &udp_frag), FW_ALLOW);
	assert_int_equal(fx_rule_of(&x, &tcp_frag), FW_NO_MATCH);
	assert_int_equal(fx_send(&x, &tcp_frag), FW_DENY);
	assert_int_equal(x.fw.st->rule[1].packets, 1);
	assert_int_equal(x.fw.st->deflt.packets, 1);
	fx_fini(&x);
}

static void
test_first_fragment_carries_ports_and_matches_port_rules(void **state)
{
	struct fx x;
	struct spec first = {.src = "198.18.0.1",
			     .dst = "198.18.0.2",
			     .proto = IPPROTO_UDP,
			     .sport = 4000,
			     .dport = 53,
			     .mf = true,
			     .payload = 64};

	(void)state;
	fx_init(&x, frag_rules);
	assert_int_equal(fx_rule_of(&x, &first), 0);
	assert_int_equal(fx_send(&x, &first), FW_DENY);
	fx_fini(&x);
}

static void
test_vlan_tagged_ipv4_is_matched_on_its_ip_header(void **state)
{
	struct fx x;
	struct spec s = {.src = "198.18.0.1",
			 .dst = "198.18.0.2",
			 .proto = IPPROTO_TCP,
			 .sport = 5,
			 .dport = 443,
			 .vlan = 42};

	(void)state;
	fx_init(&x, "{\"default\": \"deny\", \"rules\": [{\"name\": \"tls\", \"action\": "
		    "\"allow\", \"proto\": \"tcp\", \"dport\": 443}]}");
	assert_int_equal(fx_rule_of(&x, &s), 0);
	assert_int_equal(fx_send(&x, &s), FW_ALLOW);
	fx_fini(&x);
}

/* ---- non-IPv4 and malformed frames ------------------------------------------------------- */

static const uint8_t arp_frame[42] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0,
				      1,    0x08, 0x06, 0,    1,    8,	  0,	6, 4, 0, 1};
static const uint8_t ipv6_frame[54] = {2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x86, 0xdd, 0x60};

static void
test_non_ip_frames_get_the_non_ip_policy_and_count(void **state)
{
	struct fx x;

	(void)state;
	fx_init(&x, "{\"default\": \"allow\", \"non_ip\": \"deny\", \"rules\": ["
		    "{\"name\": \"all\", \"action\": \"allow\"}]}");
	assert_int_equal(fx_frame(&x, arp_frame, sizeof(arp_frame), NULL), FW_DENY);
	assert_int_equal(fx_frame(&x, ipv6_frame, sizeof(ipv6_frame), NULL), FW_DENY);
	assert_int_equal(x.fw.st->non_ip.packets, 2);
	assert_int_equal(x.fw.st->non_ip.bytes, sizeof(arp_frame) + sizeof(ipv6_frame));
	/* A rule matching everything does not see them. */
	assert_int_equal(x.fw.st->rule[0].packets, 0);
	fx_fini(&x);
}

static void
test_non_ip_frames_follow_the_default_when_no_non_ip_policy(void **state)
{
	struct fx x;

	(void)state;
	fx_init(&x, "{\"default\": \"allow\"}");
	assert_int_equal(fx_frame(&x, arp_frame, sizeof(arp_frame), NULL), FW_ALLOW);
	assert_int_equal(x.fw.st->non_ip.packets, 1);
	fx_fini(&x);
}

/* A TCP frame to mangle: Ethernet + IPv4 + TCP + 10 bytes. */
static size_t
tcp_frame(uint8_t *b)
{
	return build(b, &(struct spec){.src = "198.18.0.1",
				       .dst = "198.18.0.2",
				       .proto = IPPROTO_TCP,
				       .sport = 1,
				       .dport = 2,
				       .payload = 10});
}

static void
test_malformed_frames_are_counted_by_reason(void **state)
{
	struct fx x;
	uint8_t b[1600];
	size_t n;
	struct fw_pkt p;
	uint64_t bytes = 0;

	(void)state;
	fx_init(&x, "{\"default\": \"allow\", \"rules\": [{\"name\": \"all\", \"action\": "
		    "\"allow\"}]}");
	n = tcp_frame(b);
	assert_int_equal(fx_frame(&x, b, 10, &p), FW_DENY); /* runt */
	assert_int_equal(p.reason, ONVM_PARSE_TRUNC_L2);
	bytes += 10;
	assert_int_equal(fx_frame(&x, b, 14 + 12, &p), FW_DENY); /* IPv4 header cut */
	assert_int_equal(p.reason, ONVM_PARSE_TRUNC_L3);
	bytes += 26;
	b[14] = 0x65; /* version 6 */
	assert_int_equal(fx_frame(&x, b, n, &p), FW_DENY);
	assert_int_equal(p.reason, ONVM_PARSE_BAD_VERSION);
	bytes += n;
	b[14] = 0x44; /* IHL 16 bytes */
	assert_int_equal(fx_frame(&x, b, n, &p), FW_DENY);
	assert_int_equal(p.reason, ONVM_PARSE_BAD_IHL);
	bytes += n;
	b[14] = 0x45;
	b[17] = 200; /* total length past the frame */
	assert_int_equal(fx_frame(&x, b, n, &p), FW_DENY);
	assert_int_equal(p.reason, ONVM_PARSE_BAD_TOTLEN);
	bytes += n;
	b[17] = 20 + 10; /* 10 bytes of TCP header */
	assert_int_equal(fx_frame(&x, b, n, &p), FW_DENY);
	assert_int_equal(p.reason, ONVM_PARSE_TRUNC_L4);
	bytes += n;
	b[17] = 20 + 20 + 10;
	b[14 + 20 + 12] = 4 << 4; /* TCP data offset 16 bytes */
	assert_int_equal(fx_frame(&x, b, n, &p), FW_DENY);
	assert_int_equal(p.reason, ONVM_PARSE_BAD_L4LEN);
	bytes += n;
	b[14 + 20 + 12] = 5 << 4; /* repaired: a good packet again */
	assert_int_equal(fx_frame(&x, b, n, &p), FW_ALLOW);
	assert_int_equal(p.kind, FW_KIND_IPV4);

	assert_int_equal(x.fw.st->malformed.packets, 7);
	assert_int_equal(x.fw.st->malformed.bytes, bytes);
	for (int r = ONVM_PARSE_TRUNC_L2; r < ONVM_PARSE_REASON_MAX; r++)
		assert_int_equal(x.fw.st->malformed_reason[r], r == ONVM_PARSE_NOT_IPV4 ? 0 : 1);
	assert_int_equal(x.fw.st->rule[0].packets, 1);
	fx_fini(&x);
}

static void
test_malformed_policy_allow_passes_them_and_still_counts(void **state)
{
	struct fx x;
	uint8_t b[1600];
	size_t n;

	(void)state;
	fx_init(&x, "{\"default\": \"deny\", \"malformed\": \"allow\"}");
	n = tcp_frame(b);
	b[17] = 20 + 4; /* TCP header cut */
	assert_int_equal(fx_frame(&x, b, n, NULL), FW_ALLOW);
	assert_int_equal(x.fw.st->malformed.packets, 1);
	assert_int_equal(x.fw.st->malformed_reason[ONVM_PARSE_TRUNC_L4], 1);
	assert_int_equal(x.fw.st->deflt.packets, 0);
	fx_fini(&x);
}

static void
test_empty_frame_is_a_malformed_runt(void **state)
{
	struct fx x;
	struct fw_pkt p;

	(void)state;
	fx_init(&x, "{\"default\": \"allow\"}");
	assert_int_equal(fx_frame(&x, (const uint8_t *)"", 0, &p), FW_DENY);
	assert_int_equal(p.kind, FW_KIND_MALFORMED);
	assert_int_equal(x.fw.st->malformed_reason[ONVM_PARSE_TRUNC_L2], 1);
	fx_fini(&x);
}

/* ---- counters and state -------------------------------------------------------------------- */

static void
test_counters_add_packets_and_bytes_per_rule_and_policy(void **state)
{
	struct fx x;
	struct fw_counter allowed, denied;
	uint8_t b[1600];
	size_t web, dns, other;

	(void)state;
	fx_init(&x, good_file);
	web = build(b, TCP("10.1.1.1", "192.168.1.5", 4000, 80));
	for (int i = 0; i < 3; i++)
		assert_int_equal(fx_frame(&x, b, web, NULL), FW_ALLOW);
	dns = build(b, &(struct spec){.src = "10.1.1.1",
				      .dst = "8.8.8.8",
				      .proto = IPPROTO_UDP,
				      .sport = 5353,
				      .dport = 53,
				      .payload = 30});
	for (int i = 0; i < 2; i++)
		assert_int_equal(fx_frame(&x, b, dns, NULL), FW_DENY);
	other = build(b, TCP("10.1.1.1", "192.168.1.5", 80, 4000));
	assert_int_equal(fx_frame(&x, b, other, NULL), FW_DENY); /* "any-else" */
	assert_int_equal(fx_frame(&x, arp_frame, sizeof(arp_frame), NULL), FW_ALLOW);

	assert_int_equal(x.fw.st->rule[rule_by_name(&x.cfg, "web")].packets, 3);
	assert_int_equal(x.fw.st->rule[rule_by_name(&x.cfg, "web")].bytes, 3 * web);
	assert_int_equal(x.fw.st->rule[rule_by_name(&x.cfg, "dns")].packets, 2);
	assert_int_equal(x.fw.st->rule[rule_by_name(&x.cfg, "dns")].bytes, 2 * dns);
	assert_int_equal(x.fw.st->rule[rule_by_name(&x.cfg, "ping")].packets, 0);
	assert_int_equal(x.fw.st->rule[rule_by_name(&x.cfg, "any-else.1:x")].packets, 1);
	assert_int_equal(x.fw.st->deflt.packets, 0);
	assert_int_equal(x.fw.st->non_ip.packets, 1);
	fw_totals(&x.fw, &allowed, &denied);
	assert_int_equal(allowed.packets, 4);
	assert_int_equal(allowed.bytes, 3 * web + sizeof(arp_frame));
	assert_int_equal(denied.packets, 3);
	assert_int_equal(denied.bytes, 2 * dns + other);
	fx_fini(&x);
}

/* A deterministic mix of every kind of frame; commit checked after each. */
static void
test_every_counter_write_is_touched(void **state)
{
	struct fx x;
	uint8_t b[1600];
	char *rules = many_rules(64);

	(void)state;
	fx_init(&x, rules);
	free(rules);
	for (int i = 0; i < 600; i++) {
		size_t n;

		switch (i % 5) {
		case 0:
			n = build(b, TCP("198.18.0.1", "198.18.0.2", 1, (uint16_t)(i % 80)));
			break;
		case 1:
			n = build(b, UDP("198.18.0.1", "198.18.0.2", 1, (uint16_t)i));
			break;
		case 2:
			n = sizeof(arp_frame);
			memcpy(b, arp_frame, n);
			break;
		case 3:
			n = tcp_frame(b);
			b[17] = (uint8_t)(20 + (i % 20)); /* truncated TCP */
			break;
		default:
			n = (size_t)(i % 14);
			break;
		}
		fx_frame(&x, b, n, NULL); /* fails on an untouched write */
	}
	fx_fini(&x);
}

static void
test_failover_keeps_committed_counts_and_drops_uncommitted(void **state)
{
	struct fx x;
	uint8_t b[1600];
	size_t n;
	struct rte_mbuf *m;
	struct fw_pkt p;
	char err[256];

	(void)state;
	fx_init(&x, good_file);
	n = build(b, TCP("10.1.1.1", "192.168.1.5", 4000, 80));
	for (int i = 0; i < 3; i++)
		fx_frame(&x, b, n, NULL); /* committed */
	m = heap_mbuf(b, n);
	fw_pkt_parse(m, &p);
	for (int i = 0; i < 2; i++) /* processed, never committed: the NF dies */
		fw_account(&x.fw, &p, fx_match(&x, &p));
	heap_mbuf_free(m);
	assert_int_equal(x.fw.st->rule[0].packets, 5);
	assert_int_equal(test_state_failover(&x.ts), 0);
	/* The standby's view of the same region. */
	assert_int_equal(fw_state_open(&x.fw, &x.cfg, &x.ts.set,
				       test_state_region(&x.ts, FW_STATE_REGION),
				       fw_state_size(x.cfg.n_rules), true, err, sizeof(err)),
			 0);
	assert_int_equal(x.fw.st->rule[0].packets, 3);
	assert_int_equal(x.fw.st->rule[0].bytes, 3 * n);
	fx_frame(&x, b, n, NULL);
	assert_int_equal(x.fw.st->rule[0].packets, 4);
	fx_fini(&x);
}

static void
test_state_open_refuses_counters_of_another_rule_set(void **state)
{
	struct fx x;
	struct fw_config other;
	struct fw fw2;
	char err[512];
	static const char text[] = "{\"default\": \"deny\", \"rules\": ["
				   "{\"name\": \"web\", \"action\": \"deny\"},"
				   "{\"name\": \"dns\", \"action\": \"deny\"},"
				   "{\"name\": \"ping\", \"action\": \"deny\"},"
				   "{\"name\": \"gre\", \"action\": \"deny\"},"
				   "{\"name\": \"any\", \"action\": \"deny\"}]}";

	(void)state;
	fx_init(&x, good_file);
	assert_int_equal(fw_config_parse(&other, "o.json", text, strlen(text), err, sizeof(err)),
			 0);
	assert_int_equal(other.n_rules, x.cfg.n_rules); /* same size, different rules */
	assert_int_equal(fw_state_open(&fw2, &other, &x.ts.set,
				       test_state_region(&x.ts, FW_STATE_REGION),
				       fw_state_size(other.n_rules), true, err, sizeof(err)),
			 -ESTALE);
	assert_non_null(strstr(err, "another rule set"));
	/* The same rules attach without touching anything. */
	assert_int_equal(fw_state_open(&fw2, &x.cfg, &x.ts.set,
				       test_state_region(&x.ts, FW_STATE_REGION),
				       fw_state_size(x.cfg.n_rules), false, err, sizeof(err)),
			 0);
	assert_int_equal(fw_state_open(&fw2, &x.cfg, &x.ts.set,
				       test_state_region(&x.ts, FW_STATE_REGION), 16, true, err,
				       sizeof(err)),
			 -ENOSPC);
	fw_config_free(&other);
	fx_fini(&x);
}

static void
test_standby_does_not_format_a_fresh_region(void **state)
{
	struct fw_config c;
	struct test_state ts;
	struct fw fw;
	char err[256];
	static const char text[] = "{\"default\": \"deny\"}";
	struct nf_state_request req = {.name = FW_STATE_REGION, .size = fw_state_size(0)};
	struct fw_state_hdr *st;

	(void)state;
	assert_int_equal(fw_config_parse(&c, "t.json", text, strlen(text), err, sizeof(err)), 0);
	assert_int_equal(test_state_init(&ts, &req, 1), 0);
	st = test_state_region(&ts, FW_STATE_REGION);
	assert_int_equal(fw_state_open(&fw, &c, &ts.set, st, req.size, false, err, sizeof(err)),
			 -EAGAIN);
	assert_true(st->magic == 0);
	assert_int_equal(fw_state_open(&fw, &c, &ts.set, st, req.size, true, err, sizeof(err)), 1);
	assert_true(st->magic == FW_STATE_MAGIC);
	assert_int_equal(test_state_commit_check(&ts), 0);
	test_state_fini(&ts);
	fw_config_free(&c);
}

static void
test_owner_name_is_recorded_and_the_previous_returned(void **state)
{
	struct fx x;
	char prev[FW_NAME_SIZE];

	(void)state;
	fx_init(&x, good_file);
	fw_state_set_owner(&x.fw, "fw1.0.100", prev, sizeof(prev));
	assert_string_equal(prev, "");
	assert_int_equal(test_state_commit_check(&x.ts), 0);
	fw_state_set_owner(&x.fw, "fw1.0.200", prev, sizeof(prev));
	assert_string_equal(prev, "fw1.0.100");
	assert_string_equal(x.fw.st->owner, "fw1.0.200");
	assert_int_equal(test_state_commit_check(&x.ts), 0);
	fx_fini(&x);
}

static void
test_export_lists_rules_by_index_and_name_with_policies(void **state)
{
	struct fx x;
	uint8_t b[1600];
	size_t n;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	json_error_t je;
	json_t *doc, *rules, *r;

	(void)state;
	assert_non_null(f);
	fx_init(&x, good_file);
	n = build(b, TCP("10.1.1.1", "192.168.1.5", 4000, 80));
	fx_frame(&x, b, n, NULL);
	fx_frame(&x, arp_frame, sizeof(arp_frame), NULL);
	fx_frame(&x, b, 5, NULL);
	assert_int_equal(fw_export_json(&x.fw, f, "r\"ules.json", "rte_acl"), 0);
	fclose(f);
	doc = json_loads(buf, 0, &je);
	if (doc == NULL)
		fail_msg("export is not JSON: %s: %s", je.text, buf);
	assert_string_equal(json_string_value(json_object_get(doc, "rules_file")), "r\"ules.json");
	assert_int_equal(json_integer_value(json_object_get(doc, "packets")), 3);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(doc, "allowed"), "packets")), 3);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(doc, "denied"), "packets")), 0);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(doc, "default"), "action")), "deny");
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(doc, "non_ip"), "packets")), 1);
	r = json_object_get(json_object_get(doc, "malformed"), "reasons");
	assert_int_equal(json_integer_value(json_object_get(r, "truncated_l2")), 1);
	assert_int_equal(json_object_size(r), ONVM_PARSE_REASON_MAX - 2);
	rules = json_object_get(doc, "rules");
	assert_int_equal(json_array_size(rules), 5);
	r = json_array_get(rules, 0);
	assert_int_equal(json_integer_value(json_object_get(r, "index")), 0);
	assert_string_equal(json_string_value(json_object_get(r, "name")), "web");
	assert_string_equal(json_string_value(json_object_get(r, "action")), "allow");
	assert_int_equal(json_integer_value(json_object_get(r, "packets")), 1);
	assert_int_equal(json_integer_value(json_object_get(r, "bytes")), (json_int_t)n);
	r = json_array_get(rules, 4);
	assert_string_equal(json_string_value(json_object_get(r, "name")), "any-else.1:x");
	assert_int_equal(json_integer_value(json_object_get(r, "index")), 4);
	json_decref(doc);
	free(buf);
	fx_fini(&x);
}

/* ---- rte_acl -------------------------------------------------------------------------------- */

static uint64_t rng;

static uint32_t
rnd(void)
{
	/* xorshift64* */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (uint32_t)((rng * UINT64_C(2685821657736338717)) >> 32);
}

/* A few addresses and ports that random rules and packets share, so that
 * rules overlap and packets hit them. */
static const uint32_t base_addrs[] = {0xC6120000, 0xC6120100, 0xC6120180, 0xC6130000, 0xC613FF00,
				      0x0A000000, 0x0A0A0A0A, 0xFFFFFFFF, 0x00000000, 0xC0A80001};
static const uint16_t base_ports[] = {0, 1, 22, 53, 80, 443, 1023, 1024, 8080, 65534, 65535};
static const uint8_t base_protos[] = {6, 17, 1, 47, 6, 17};

static uint32_t
rnd_addr(void)
{
	uint32_t a = base_addrs[rnd() % (sizeof(base_addrs) / sizeof(base_addrs[0]))];

	/* Perturb the low bits: near a prefix edge or well inside. */
	return rnd() % 2 ? a ^ (rnd() & 0xff) : a ^ (1u << (rnd() % 32));
}

static uint16_t
rnd_port(void)
{
	uint16_t p = base_ports[rnd() % (sizeof(base_ports) / sizeof(base_ports[0]))];

	return rnd() % 3 == 0 ? (uint16_t)(p + rnd() % 5 - 2) : p;
}

static void
rnd_ports(uint8_t *has, uint16_t *lo, uint16_t *hi)
{
	uint16_t a = rnd_port(), b = rnd_port();

	*lo = 0;
	*hi = 65535;
	*has = 0;
	switch (rnd() % 4) {
	case 0:
		break;
	case 1:
		*has = 1;
		*lo = *hi = a;
		break;
	default:
		*has = 1;
		*lo = a < b ? a : b;
		*hi = a < b ? b : a;
		break;
	}
}

static void
rnd_rule(struct fw_rule *r, uint32_t i)
{
	static const uint8_t lens[] = {0, 8, 16, 23, 24, 25, 31, 32};

	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "r%u", i);
	r->action = rnd() % 2;
	if (rnd() % 3 != 0) {
		r->src_len = rnd() % 4 == 0 ? (uint8_t)(rnd() % 33) : lens[rnd() % 8];
		r->src = rnd_addr() & onvm_rule_mask(r->src_len);
	}
	if (rnd() % 3 != 0) {
		r->dst_len = rnd() % 4 == 0 ? (uint8_t)(rnd() % 33) : lens[rnd() % 8];
		r->dst = rnd_addr() & onvm_rule_mask(r->dst_len);
	}
	if (rnd() % 4 != 0) {
		r->has_proto = 1;
		r->proto = rnd() % 8 == 0 ? (uint8_t)rnd() : base_protos[rnd() % 6];
	}
	if (r->has_proto && (r->proto == 6 || r->proto == 17)) {
		rnd_ports(&r->has_sport, &r->sport_lo, &r->sport_hi);
		rnd_ports(&r->has_dport, &r->dport_lo, &r->dport_hi);
	} else {
		r->sport_hi = r->dport_hi = 65535;
	}
}

static void
rnd_tuple(struct fw_tuple *t)
{
	memset(t, 0, sizeof(*t));
	t->src = rnd_addr();
	t->dst = rnd_addr();
	t->proto = rnd() % 8 == 0 ? (uint8_t)rnd() : base_protos[rnd() % 6];
	/* One in eight TCP/UDP packets is a non-first fragment. */
	t->has_ports = (t->proto == 6 || t->proto == 17) && rnd() % 8 != 0;
	if (t->has_ports) {
		t->sport = rnd_port();
		t->dport = rnd_port();
	}
}

static uint64_t
test_seed(void)
{
	const char *s = getenv("ONVM_TEST_SEED");

	return s != NULL ? strtoull(s, NULL, 0) : UINT64_C(20260101);
}

static void
test_acl_agrees_with_linear_matcher_on_random_rules(void **state)
{
	static const uint32_t sizes[] = {1, 7, 60, 250, 700, FW_MAX_RULES};
	const uint32_t n_pkts = 3000;
	struct fw_tuple *t = calloc(n_pkts, sizeof(*t));
	int32_t *got = calloc(n_pkts, sizeof(*got));
	uint64_t total_rules = 0, matched = 0, unmatched = 0, first_rule = 0, frags = 0;
	char err[256];

	(void)state;
	rng = test_seed() | 1;
	printf("seed %" PRIu64 " (ONVM_TEST_SEED)\n", test_seed());
	assert_non_null(t);
	assert_non_null(got);
	for (size_t round = 0; round < sizeof(sizes) / sizeof(sizes[0]); round++) {
		struct fw_config c = {.n_rules = sizes[round]};
		struct fw_acl *a;
		char name[32];

		c.rules = calloc(c.n_rules, sizeof(c.rules[0]));
		assert_non_null(c.rules);
		for (uint32_t i = 0; i < c.n_rules; i++)
			rnd_rule(&c.rules[i], i);
		snprintf(name, sizeof(name), "rnd%zu", round);
		a = fw_acl_build(&c, name, err, sizeof(err));
		if (a == NULL)
			fail_msg("%s", err);
		for (uint32_t i = 0; i < n_pkts; i++)
			rnd_tuple(&t[i]);
		/* Odd-sized bursts cross rte_acl's internal batching. */
		for (uint32_t i = 0; i < n_pkts;) {
			uint32_t k = 1 + rnd() % 100;

			if (k > n_pkts - i)
				k = n_pkts - i;
			fw_acl_classify(a, &t[i], k, &got[i]);
			i += k;
		}
		for (uint32_t i = 0; i < n_pkts; i++) {
			int32_t want = fw_match_linear(&c, &t[i]);

			if (want != got[i])
				fail_msg("round %zu (%u rules), packet %u: src %08x dst %08x proto "
					 "%u ports %u %u/%u: linear %d, rte_acl %d",
					 round, c.n_rules, i, t[i].src, t[i].dst, t[i].proto,
					 t[i].has_ports, t[i].sport, t[i].dport, want, got[i]);
			matched += want != FW_NO_MATCH;
			unmatched += want == FW_NO_MATCH;
			first_rule += want == 0;
			frags += !t[i].has_ports && (t[i].proto == 6 || t[i].proto == 17);
		}
		total_rules += c.n_rules;
		fw_acl_free(a);
		free(c.rules);
	}
	printf("%" PRIu64 " rules, %" PRIu64 " packets: %" PRIu64 " matched a rule (%" PRIu64
	       " the first), %" PRIu64 " none, %" PRIu64 " fragments\n",
	       total_rules, matched + unmatched, matched, first_rule, unmatched, frags);
	/* The draw must exercise both outcomes, or the comparison proves little. */
	assert_true(matched > 1000 && unmatched > 1000 && frags > 300);
	free(t);
	free(got);
}

static void
test_acl_without_rules_matches_nothing(void **state)
{
	struct fw_config c = {0};
	struct fw_tuple t = {.src = 1, .dst = 2, .proto = 6, .has_ports = 1, .dport = 80};
	int32_t out = 7;
	char err[256];
	struct fw_acl *a = fw_acl_build(&c, "empty", err, sizeof(err));

	(void)state;
	assert_non_null(a);
	fw_acl_classify(a, &t, 1, &out);
	assert_int_equal(out, FW_NO_MATCH);
	assert_null(rte_acl_find_existing("empty")); /* no context needed */
	fw_acl_free(a);
}

static void
test_acl_contexts_of_two_processes_coexist_under_their_names(void **state)
{
	struct fx x;
	struct fw_acl *b;
	char err[256];
	struct fw_tuple t = {.src = ip("10.1.1.1"),
			     .dst = ip("192.168.1.5"),
			     .proto = 6,
			     .has_ports = 1,
			     .sport = 4000,
			     .dport = 80};
	int32_t r1, r2;

	(void)state;
	fx_init(&x, good_file);
	b = fw_acl_build(&x.cfg, "fw1.0.4242", err, sizeof(err));
	assert_non_null(b);
	assert_non_null(rte_acl_find_existing(fw_acl_name(x.acl)));
	assert_non_null(rte_acl_find_existing("fw1.0.4242"));
	fw_acl_classify(x.acl, &t, 1, &r1);
	fw_acl_classify(b, &t, 1, &r2);
	assert_int_equal(r1, 0);
	assert_int_equal(r2, 0);
	fw_acl_free(b);
	assert_null(rte_acl_find_existing("fw1.0.4242"));
	assert_non_null(rte_acl_find_existing(fw_acl_name(x.acl)));
	fx_fini(&x);
}

static void
test_acl_build_replaces_a_dead_process_context_of_the_same_name(void **state)
{
	/* What a SIGKILLed process leaves: a context of the name a new process
	 * with the same pid would choose, holding other rules. */
	struct rte_acl_param prm = {.name = "fw9.9.77",
				    .socket_id = SOCKET_ID_ANY,
				    .rule_size = RTE_ACL_RULE_SZ(1),
				    .max_rule_num = 1};
	struct rte_acl_ctx *old = rte_acl_create(&prm);
	struct fx x;
	struct fw_acl *a;
	char err[256];
	struct fw_tuple t = {.src = ip("10.1.1.1"),
			     .dst = ip("8.8.8.8"),
			     .proto = 17,
			     .has_ports = 1,
			     .sport = 1,
			     .dport = 53};
	int32_t r;

	(void)state;
	assert_non_null(old);
	fx_init(&x, good_file);
	a = fw_acl_build(&x.cfg, "fw9.9.77", err, sizeof(err));
	if (a == NULL)
		fail_msg("%s", err);
	assert_true(rte_acl_find_existing("fw9.9.77") != NULL);
	fw_acl_classify(a, &t, 1, &r);
	assert_int_equal(r, 1); /* "dns": the new rules, not the leftover's */
	fw_acl_free(a);
	assert_null(rte_acl_find_existing("fw9.9.77"));
	fx_fini(&x);
}

static void
test_acl_free_stale_frees_only_an_existing_context(void **state)
{
	struct rte_acl_param prm = {.name = "fw3.1.99",
				    .socket_id = SOCKET_ID_ANY,
				    .rule_size = RTE_ACL_RULE_SZ(1),
				    .max_rule_num = 1};

	(void)state;
	assert_non_null(rte_acl_create(&prm));
	assert_int_equal(fw_acl_free_stale("fw3.1.99"), 1);
	assert_null(rte_acl_find_existing("fw3.1.99"));
	assert_int_equal(fw_acl_free_stale("fw3.1.99"), 0);
}

static void
test_acl_name_length_is_checked(void **state)
{
	struct fw_config c = {0};
	char err[256];

	(void)state;
	assert_null(fw_acl_build(&c, "", err, sizeof(err)));
	assert_null(fw_acl_build(&c, "abcdefghijklmnopqrstuvwxyz0123", err, sizeof(err)));
	assert_non_null(strstr(err, "1..27 characters"));
}

/* ---- EAL ------------------------------------------------------------------------------------ */

static bool eal_up;
static char runtime_dir[PATH_MAX];

static int
group_setup(void **state)
{
	char prefix[64];
	/* clang-format off */
	char *argv[] = {
		"test_firewall", "--no-huge", "--no-shconf", "--no-pci", "-m", "64",
		"--no-telemetry", "-l", "0", "--log-level=lib.*:error", prefix, NULL,
	};
	/* clang-format on */

	(void)state;
	snprintf(prefix, sizeof(prefix), "--file-prefix=test_firewall_%d", (int)getpid());
	if (rte_eal_init((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv) < 0) {
		fprintf(stderr, "rte_eal_init failed: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	eal_up = true;
	snprintf(runtime_dir, sizeof(runtime_dir), "%s", rte_eal_get_runtime_dir());
	return 0;
}

static int
group_teardown(void **state)
{
	(void)state;
	if (!eal_up)
		return 0;
	rte_eal_cleanup();
	/* --no-shconf keeps EAL from writing files, not from making its
	 * (empty) runtime directory. */
	rmdir(runtime_dir);
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_config_good_file_sets_every_field),
	    cmocka_unit_test(test_config_defaults_non_ip_follows_default_and_malformed_is_denied),
	    cmocka_unit_test(test_config_example_file_of_the_readme_parses),
	    cmocka_unit_test(test_config_same_rules_same_fingerprint_other_rules_other),
	    cmocka_unit_test(test_config_syntax_error_names_file_line_and_column),
	    cmocka_unit_test(test_config_missing_file_is_an_error),
	    cmocka_unit_test(test_config_top_level_must_be_an_object),
	    cmocka_unit_test(test_config_unknown_top_level_field_is_rejected),
	    cmocka_unit_test(test_config_default_is_required),
	    cmocka_unit_test(test_config_policy_values_are_allow_or_deny),
	    cmocka_unit_test(test_config_rules_must_be_an_array_of_objects),
	    cmocka_unit_test(test_config_unknown_rule_field_is_rejected),
	    cmocka_unit_test(test_config_rule_name_and_action_are_required),
	    cmocka_unit_test(test_config_rule_names_are_short_plain_words),
	    cmocka_unit_test(test_config_duplicate_rule_names_are_rejected),
	    cmocka_unit_test(test_config_bad_prefixes_are_rejected),
	    cmocka_unit_test(test_config_prefix_with_host_bits_names_the_network),
	    cmocka_unit_test(test_config_bad_protocols_are_rejected),
	    cmocka_unit_test(test_config_protocol_any_is_no_protocol),
	    cmocka_unit_test(test_config_bad_ports_are_rejected),
	    cmocka_unit_test(test_config_empty_port_range_is_rejected),
	    cmocka_unit_test(test_config_ports_need_tcp_or_udp),
	    cmocka_unit_test(test_config_too_many_rules_is_rejected_at_the_first_extra_rule),
	    cmocka_unit_test(test_config_rule_limit_is_accepted_and_builds),
	    cmocka_unit_test(test_first_matching_rule_wins),
	    cmocka_unit_test(test_no_matching_rule_applies_the_default),
	    cmocka_unit_test(test_prefixes_match_exactly_their_range),
	    cmocka_unit_test(test_source_and_destination_must_both_match),
	    cmocka_unit_test(test_port_ranges_include_both_ends),
	    cmocka_unit_test(test_protocol_matches_by_name_and_number),
	    cmocka_unit_test(test_non_first_fragment_matches_only_rules_without_ports),
	    cmocka_unit_test(test_first_fragment_carries_ports_and_matches_port_rules),
	    cmocka_unit_test(test_vlan_tagged_ipv4_is_matched_on_its_ip_header),
	    cmocka_unit_test(test_non_ip_frames_get_the_non_ip_policy_and_count),
	    cmocka_unit_test(test_non_ip_frames_follow_the_default_when_no_non_ip_policy),
	    cmocka_unit_test(test_malformed_frames_are_counted_by_reason),
	    cmocka_unit_test(test_malformed_policy_allow_passes_them_and_still_counts),
	    cmocka_unit_test(test_empty_frame_is_a_malformed_runt),
	    cmocka_unit_test(test_counters_add_packets_and_bytes_per_rule_and_policy),
	    cmocka_unit_test(test_every_counter_write_is_touched),
	    cmocka_unit_test(test_failover_keeps_committed_counts_and_drops_uncommitted),
	    cmocka_unit_test(test_state_open_refuses_counters_of_another_rule_set),
	    cmocka_unit_test(test_standby_does_not_format_a_fresh_region),
	    cmocka_unit_test(test_owner_name_is_recorded_and_the_previous_returned),
	    cmocka_unit_test(test_export_lists_rules_by_index_and_name_with_policies),
	    cmocka_unit_test(test_acl_agrees_with_linear_matcher_on_random_rules),
	    cmocka_unit_test(test_acl_without_rules_matches_nothing),
	    cmocka_unit_test(test_acl_contexts_of_two_processes_coexist_under_their_names),
	    cmocka_unit_test(test_acl_build_replaces_a_dead_process_context_of_the_same_name),
	    cmocka_unit_test(test_acl_free_stale_frees_only_an_existing_context),
	    cmocka_unit_test(test_acl_name_length_is_checked),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
