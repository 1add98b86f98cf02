/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * test_rule.c -- the one parser of rule values (common/onvm_rule.h): IPv4
 * addresses and prefixes, ports and port ranges, protocols, 5-tuple match
 * objects, and how its refusals reach an operator through the manager's
 * config loader and libnf's JSON helper ("FILE:LINE:COL: PATH: reason").
 *
 * Each refusal is checked for its code, its `where` and a phrase of its
 * reason, and that the result was left untouched.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "config/config.h"
#include "onvm_nf_json.h"
#include "onvm_rule.h"

#define UNTOUCHED 0xdeadbeefu

static void
expect_reason(const struct onvm_rule_err *e, const char *where, const char *what)
{
	assert_string_equal(e->where, where);
	if (strstr(e->why, what) == NULL)
		fail_msg("reason \"%s\" does not say \"%s\"", e->why, what);
	assert_null(strchr(e->why, '\n'));
}

/* The JSON text `text` parsed (it must be valid JSON). Caller decrefs. */
static json_t *
js(const char *text)
{
	json_error_t je;
	json_t *v = json_loads(text, JSON_DECODE_ANY, &je);

	if (v == NULL)
		fail_msg("bad test JSON %s: %s", text, je.text);
	return v;
}

/* ---- addresses ------------------------------------------------------------------ */

static void
test_address_is_four_decimal_octets(void **state)
{
	struct onvm_rule_err e;
	uint32_t a = 0;

	(void)state;
	assert_int_equal(onvm_rule_ipv4_text("198.18.0.1", &a, &e), 0);
	assert_int_equal(a, 0xc6120001);
	assert_int_equal(onvm_rule_ipv4_text("0.0.0.0", &a, &e), 0);
	assert_int_equal(a, 0);
	assert_int_equal(onvm_rule_ipv4_text("255.255.255.255", &a, &e), 0);
	assert_int_equal(a, 0xffffffff);
	assert_int_equal(onvm_rule_ipv4_text("10.0.100.200", &a, &e), 0);
	assert_int_equal(a, 0x0a0064c8);
}

static void
test_bad_addresses_are_refused_with_the_reason(void **state)
{
	static const struct {
		const char *text;
		int code;
		const char *what;
	} bad[] = {
	    {"256.0.0.1", -ERANGE, "octet \"256\" is over 255"},
	    {"10.0.0.999", -ERANGE, "octet \"999\" is over 255"},
	    {"10.1234.0.1", -ERANGE, "octet \"1234\" is over 255"},
	    {"01.0.0.1", -EINVAL, "octet \"01\" has a leading zero"},
	    {"10.0.00.1", -EINVAL, "octet \"00\" has a leading zero"},
	    {"10.0.0", -EINVAL, "expected 4 octets, found 3"},
	    {"10", -EINVAL, "expected 4 octets, found 1"},
	    {"", -EINVAL, "octet 1 is empty"},
	    {"10..0.1", -EINVAL, "octet 2 is empty"},
	    {"10.0.0.", -EINVAL, "octet 4 is empty"},
	    {"10.0.0.1.5", -EINVAL, "more than 4 octets"},
	    {"10.0.0.1x", -EINVAL, "unexpected 'x' after the address"},
	    {"10.0.0.1/32", -EINVAL, "unexpected '/' after the address"},
	    {" 10.0.0.1", -EINVAL, "unexpected space in octet 1"},
	    {"10.0.0.1 ", -EINVAL, "unexpected space after the address"},
	    {"10. 0.0.1", -EINVAL, "unexpected space in octet 2"},
	    {"10.0.0.1\t", -EINVAL, "unexpected byte 0x09 after the address"},
	    {"-1.0.0.0", -EINVAL, "unexpected '-' in octet 1"},
	    {"+1.0.0.0", -EINVAL, "unexpected '+' in octet 1"},
	    {"0x0a.0.0.1", -EINVAL, "unexpected 'x' after octet 1"},
	    {"10,0,0,1", -EINVAL, "unexpected ',' after octet 1"},
	    {"fe80::1", -EINVAL, "unexpected 'f' in octet 1"},
	};
	struct onvm_rule_err e;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint32_t a = UNTOUCHED;
		char want[96];

		assert_int_equal(onvm_rule_ipv4_text(bad[i].text, &a, &e), bad[i].code);
		assert_int_equal(a, UNTOUCHED);
		snprintf(want, sizeof(want),
			 "\"%s\" is not an IPv4 address a.b.c.d: ", bad[i].text);
		want[strcspn(want, "\t")] = '\0'; /* the tab is quoted as '?' */
		expect_reason(&e, "", want);
		expect_reason(&e, "", bad[i].what);
	}
}

static void
test_address_must_be_a_json_string_without_nul(void **state)
{
	struct onvm_rule_err e;
	uint32_t a = UNTOUCHED;
	json_t *v;

	(void)state;
	v = js("167772161");
	assert_int_equal(onvm_rule_ipv4(v, &a, &e), -EINVAL);
	expect_reason(&e, "", "expected an IPv4 address string \"a.b.c.d\", got an integer");
	json_decref(v);
	v = json_stringn("10.0.0.1\0x", 10);
	assert_int_equal(onvm_rule_ipv4(v, &a, &e), -EINVAL);
	expect_reason(&e, "", "got a string holding a NUL byte");
	json_decref(v);
	v = js("null");
	assert_int_equal(onvm_rule_ipv4(v, &a, &e), -EINVAL);
	expect_reason(&e, "", "got null");
	json_decref(v);
	assert_int_equal(a, UNTOUCHED);
	v = js("\"10.0.0.1\"");
	assert_int_equal(onvm_rule_ipv4(v, &a, &e), 0);
	assert_int_equal(a, 0x0a000001);
	json_decref(v);
}

static void
test_address_formats_back_to_its_text(void **state)
{
	static const char *const texts[] = {"0.0.0.0", "255.255.255.255", "10.1.2.3",
					    "198.18.0.100"};
	char buf[ONVM_RULE_IPV4_STR_LEN];
	struct onvm_rule_err e;

	(void)state;
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		uint32_t a;

		assert_int_equal(onvm_rule_ipv4_text(texts[i], &a, &e), 0);
		assert_ptr_equal(onvm_rule_ipv4_str(a, buf), buf);
		assert_string_equal(buf, texts[i]);
	}
}

/* ---- prefixes ------------------------------------------------------------------- */

static void
test_prefix_gives_address_mask_and_length(void **state)
{
	struct onvm_rule_prefix p;
	struct onvm_rule_err e;

	(void)state;
	assert_int_equal(onvm_rule_prefix_text("198.18.0.0/15", &p, &e), 0);
	assert_int_equal(p.addr, 0xc6120000);
	assert_int_equal(p.mask, 0xfffe0000);
	assert_int_equal(p.len, 15);
	assert_int_equal(onvm_rule_prefix_text("10.0.0.0/8", &p, &e), 0);
	assert_int_equal(p.mask, 0xff000000);
}

static void
test_bare_address_is_a_slash_32(void **state)
{
	struct onvm_rule_prefix p;
	struct onvm_rule_err e;

	(void)state;
	assert_int_equal(onvm_rule_prefix_text("10.1.2.3", &p, &e), 0);
	assert_int_equal(p.addr, 0x0a010203);
	assert_int_equal(p.mask, 0xffffffff);
	assert_int_equal(p.len, 32);
}

static void
test_slash_0_and_slash_32_are_the_ends(void **state)
{
	struct onvm_rule_prefix p;
	struct onvm_rule_err e;

	(void)state;
	assert_int_equal(onvm_rule_prefix_text("0.0.0.0/0", &p, &e), 0);
	assert_int_equal(p.addr, 0);
	assert_int_equal(p.mask, 0);
	assert_int_equal(p.len, 0);
	assert_int_equal(onvm_rule_prefix_text("10.1.2.3/32", &p, &e), 0);
	assert_int_equal(p.addr, 0x0a010203);
	assert_int_equal(p.mask, 0xffffffff);
	assert_int_equal(p.len, 32);
	assert_int_equal(onvm_rule_prefix_text("255.255.255.255/32", &p, &e), 0);
	assert_int_equal(onvm_rule_mask(0), 0);
	assert_int_equal(onvm_rule_mask(1), 0x80000000);
	assert_int_equal(onvm_rule_mask(31), 0xfffffffe);
	assert_int_equal(onvm_rule_mask(32), 0xffffffff);
}

static void
test_host_bits_are_refused_never_masked(void **state)
{
	static const struct {
		const char *text, *network;
	} bad[] = {
	    {"10.0.0.1/8", "10.0.0.0/8"},	   {"10.1.2.3/8", "10.0.0.0/8"},
	    {"192.168.1.77/24", "192.168.1.0/24"}, {"10.1.0.0/0", "0.0.0.0/0"},
	    {"198.18.0.1/15", "198.18.0.0/15"},	   {"10.0.0.1/31", "10.0.0.0/31"},
	};
	struct onvm_rule_err e;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct onvm_rule_prefix p = {UNTOUCHED, UNTOUCHED, 99};
		char want[96];

		assert_int_equal(onvm_rule_prefix_text(bad[i].text, &p, &e), -EINVAL);
		assert_int_equal(p.addr, UNTOUCHED);
		assert_int_equal(p.mask, UNTOUCHED);
		assert_int_equal(p.len, 99);
		snprintf(want, sizeof(want), "\"%s\" has host bits set (the network is %s)",
			 bad[i].text, bad[i].network);
		expect_reason(&e, "", want);
	}
}

static void
test_bad_prefix_lengths_are_refused_with_the_reason(void **state)
{
	static const struct {
		const char *text;
		int code;
		const char *what;
	} bad[] = {
	    {"10.0.0.0/33", -ERANGE, "the length 33 is over 32"},
	    {"10.0.0.0/99", -ERANGE, "the length 99 is over 32"},
	    {"10.0.0.0/100", -ERANGE, "the length 100 is over 32"},
	    {"10.0.0.0/99999999999999999999", -ERANGE, "is over 32"},
	    {"10.0.0.0/", -EINVAL, "the length after '/' is missing"},
	    {"10.0.0.0/x", -EINVAL, "the length \"x\" is not a number 0..32"},
	    {"10.0.0.0/-1", -EINVAL, "the length \"-1\" is not a number 0..32"},
	    {"10.0.0.0/ 8", -EINVAL, "the length \" 8\" is not a number 0..32"},
	    {"10.0.0.0/8 ", -EINVAL, "the length \"8 \" is not a number 0..32"},
	    {"10.0.0.0/8/8", -EINVAL, "the length \"8/8\" is not a number 0..32"},
	    {"10.0.0.0/08", -EINVAL, "the length \"08\" has a leading zero"},
	    {"10.0.0.0/00", -EINVAL, "the length \"00\" has a leading zero"},
	    {"10.0.0/8", -EINVAL, "expected 4 octets, found 3"},
	    {"256.0.0.0/8", -ERANGE, "octet \"256\" is over 255"},
	    {"010.0.0.0/8", -EINVAL, "octet \"010\" has a leading zero"},
	    {"10.0.0.0 /8", -EINVAL, "unexpected space after the address"},
	    {"/8", -EINVAL, "octet 1 is empty"},
	    {"host", -EINVAL, "unexpected 'h' in octet 1"},
	};
	struct onvm_rule_err e;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct onvm_rule_prefix p = {UNTOUCHED, UNTOUCHED, 99};
		char want[96];

		if (onvm_rule_prefix_text(bad[i].text, &p, &e) != bad[i].code)
			fail_msg("%s: code %d, reason %s", bad[i].text, bad[i].code, e.why);
		assert_int_equal(p.addr, UNTOUCHED);
		snprintf(want, sizeof(want),
			 "\"%s\" is not an IPv4 prefix a.b.c.d/n: ", bad[i].text);
		expect_reason(&e, "", want);
		expect_reason(&e, "", bad[i].what);
	}
}

static void
test_prefix_must_be_a_json_string(void **state)
{
	struct onvm_rule_prefix p;
	struct onvm_rule_err e;
	json_t *v = js("[10, 0, 0, 0]");

	(void)state;
	assert_int_equal(onvm_rule_prefix(v, &p, &e), -EINVAL);
	expect_reason(&e, "", "expected an IPv4 prefix string \"a.b.c.d/n\", got an array");
	json_decref(v);
}

static void
test_quoted_values_are_cut_and_kept_on_one_line(void **state)
{
	char text[300];
	struct onvm_rule_prefix p;
	struct onvm_rule_err e;

	(void)state;
	memset(text, '7', sizeof(text) - 1);
	text[sizeof(text) - 1] = '\0';
	assert_int_equal(onvm_rule_prefix_text(text, &p, &e), -ERANGE);
	assert_non_null(strstr(e.why, "...\""));
	assert_true(strlen(e.why) < 150);
	assert_int_equal(onvm_rule_prefix_text("10.0.0.0/8\n\x1b[31m", &p, &e), -EINVAL);
	expect_reason(&e, "", "\"10.0.0.0/8??[31m\"");
}

/* ---- ports ------------------------------------------------------------------------ */

/* onvm_rule_ports() of `text`: the code, and the range in *r on success. */
static int
ports(const char *text, struct onvm_rule_ports *r, struct onvm_rule_err *e)
{
	json_t *v = js(text);
	int ret;

	r->lo = r->hi = 4242;
	ret = onvm_rule_ports(v, r, e);
	json_decref(v);
	return ret;
}

static void
test_single_port_is_a_range_of_one(void **state)
{
	struct onvm_rule_ports r;
	struct onvm_rule_err e;

	(void)state;
	assert_int_equal(ports("80", &r, &e), 0);
	assert_int_equal(r.lo, 80);
	assert_int_equal(r.hi, 80);
	assert_int_equal(ports("0", &r, &e), 0);
	assert_int_equal(r.lo, 0);
	assert_int_equal(r.hi, 0);
	assert_int_equal(ports("65535", &r, &e), 0);
	assert_int_equal(r.lo, 65535);
}

static void
test_range_is_an_inclusive_array(void **state)
{
	struct onvm_rule_ports r;
	struct onvm_rule_err e;

	(void)state;
	assert_int_equal(ports("[0, 65535]", &r, &e), 0);
	assert_int_equal(r.lo, 0);
	assert_int_equal(r.hi, 65535);
	assert_int_equal(ports("[1000, 1999]", &r, &e), 0);
	assert_int_equal(r.lo, 1000);
	assert_int_equal(r.hi, 1999);
	assert_int_equal(ports("[443, 443]", &r, &e), 0);
	assert_int_equal(r.lo, 443);
	assert_int_equal(r.hi, 443);
}

static void
test_bad_ports_and_ranges_are_refused_with_the_reason(void **state)
{
	static const struct {
		const char *text;
		int code;
		const char *where, *what;
	} bad[] = {
	    {"[2000, 1000]", -EINVAL, "", "range [2000, 1000] is empty (lo > hi)"},
	    {"[1, 0]", -EINVAL, "", "range [1, 0] is empty (lo > hi)"},
	    {"65536", -ERANGE, "", "port 65536 is out of range 0..65535"},
	    {"-1", -ERANGE, "", "port -1 is out of range 0..65535"},
	    {"[0, 65536]", -ERANGE, "[1]", "port 65536 is out of range 0..65535"},
	    {"[-5, 10]", -ERANGE, "[0]", "port -5 is out of range 0..65535"},
	    {"[\"a\", 2]", -EINVAL, "[0]", "expected a port 0..65535, got a string"},
	    {"[1, 2.5]", -EINVAL, "[1]", "expected a port 0..65535, got a real number"},
	    {"[1, null]", -EINVAL, "[1]", "expected a port 0..65535, got null"},
	    {"[]", -EINVAL, "", "expected a range [lo, hi] of 2 ports, got an array of 0"},
	    {"[80]", -EINVAL, "", "expected a range [lo, hi] of 2 ports, got an array of 1"},
	    {"[1, 2, 3]", -EINVAL, "", "expected a range [lo, hi] of 2 ports, got an array of 3"},
	    {"80.0", -EINVAL, "",
	     "expected a port 0..65535 or an inclusive range [lo, hi], got a "
	     "real number"},
	    {"true", -EINVAL, "", "got a boolean"},
	    {"null", -EINVAL, "", "got null"},
	    {"{\"lo\": 1, \"hi\": 2}", -EINVAL, "", "got an object"},
	};
	struct onvm_rule_err e;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct onvm_rule_ports r;

		if (ports(bad[i].text, &r, &e) != bad[i].code)
			fail_msg("%s: wrong code, reason %s", bad[i].text, e.why);
		assert_int_equal(r.lo, 4242);
		assert_int_equal(r.hi, 4242);
		expect_reason(&e, bad[i].where, bad[i].what);
	}
}

static void
test_ports_written_as_strings_are_refused_naming_the_accepted_form(void **state)
{
	static const char form[] =
	    "is a string: a port is a number 0..65535 and a range an inclusive array [lo, hi]";
	struct onvm_rule_ports r;
	struct onvm_rule_err e;

	(void)state;
	assert_int_equal(ports("\"1000-2000\"", &r, &e), -EINVAL);
	expect_reason(&e, "", form);
	expect_reason(&e, "", "\"1000-2000\" is a string");
	expect_reason(&e, "", "(write [1000, 2000])");
	assert_int_equal(ports("\"80\"", &r, &e), -EINVAL);
	expect_reason(&e, "", form);
	expect_reason(&e, "", "(write 80)");
	assert_int_equal(ports("\"1000-\"", &r, &e), -EINVAL);
	expect_reason(&e, "", form);
	assert_null(strstr(e.why, "(write"));
	assert_int_equal(ports("\"http\"", &r, &e), -EINVAL);
	expect_reason(&e, "", form);
	assert_int_equal(r.lo, 4242);
}

/* ---- protocols ---------------------------------------------------------------------- */

static int
proto(const char *text, int16_t *p, struct onvm_rule_err *e)
{
	json_t *v = js(text);
	int ret;

	*p = 4242;
	ret = onvm_rule_proto(v, p, e);
	json_decref(v);
	return ret;
}

static void
test_protocol_names_and_numbers(void **state)
{
	static const struct {
		const char *text;
		int16_t proto;
	} good[] = {
	    {"\"tcp\"", 6}, {"\"udp\"", 17}, {"\"icmp\"", 1}, {"\"any\"", ONVM_RULE_PROTO_ANY},
	    {"6", 6},	    {"47", 47},	     {"1", 1},	      {"255", 255}};
	struct onvm_rule_err e;

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		int16_t p;

		assert_int_equal(proto(good[i].text, &p, &e), 0);
		assert_int_equal(p, good[i].proto);
	}
}

static void
test_bad_protocols_are_refused_with_the_reason(void **state)
{
	static const struct {
		const char *text;
		int code;
		const char *what;
	} bad[] = {
	    {"\"sctp\"", -EINVAL,
	     "unknown protocol \"sctp\": expected \"tcp\", \"udp\", \"icmp\", "
	     "\"any\" or a number 1..255"},
	    {"\"TCP\"", -EINVAL, "unknown protocol \"TCP\""},
	    {"\"\"", -EINVAL, "unknown protocol \"\""},
	    {"0", -ERANGE, "protocol 0 is out of range 1..255"},
	    {"256", -ERANGE, "protocol 256 is out of range 1..255"},
	    {"-1", -ERANGE, "protocol -1 is out of range 1..255"},
	    {"6.0", -EINVAL,
	     "expected a protocol \"tcp\", \"udp\", \"icmp\", \"any\" or a number "
	     "1..255, got a real number"},
	    {"[6]", -EINVAL, "got an array"},
	    {"null", -EINVAL, "got null"},
	};
	struct onvm_rule_err e;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int16_t p;

		if (proto(bad[i].text, &p, &e) != bad[i].code)
			fail_msg("%s: wrong code, reason %s", bad[i].text, e.why);
		assert_int_equal(p, 4242);
		expect_reason(&e, "", bad[i].what);
	}
	/* Protocol 0 says how to match every protocol instead. */
	assert_int_equal(proto("0", &(int16_t){0}, &e), -ERANGE);
	expect_reason(&e, "", "leave \"proto\" out or write \"any\"");
}

/* ---- match objects -------------------------------------------------------------------- */

static int
match(const char *text, struct onvm_rule_match *m, struct onvm_rule_err *e)
{
	json_t *v = js(text);
	int ret;

	memset(m, 0x5a, sizeof(*m));
	ret = onvm_rule_match(v, m, e);
	json_decref(v);
	return ret;
}

static void
test_empty_match_matches_anything(void **state)
{
	struct onvm_rule_match m;
	struct onvm_rule_err e;

	(void)state;
	assert_int_equal(match("{\"vlan\": 7, \"name\": \"x\"}", &m, &e), 0);
	assert_int_equal(m.src.addr, 0);
	assert_int_equal(m.src.mask, 0);
	assert_int_equal(m.src.len, 0);
	assert_int_equal(m.dst.mask, 0);
	assert_int_equal(m.proto, ONVM_RULE_PROTO_ANY);
	assert_int_equal(m.sport.lo, 0);
	assert_int_equal(m.sport.hi, 65535);
	assert_int_equal(m.dport.lo, 0);
	assert_int_equal(m.dport.hi, 65535);
	assert_false(m.has_sport);
	assert_false(m.has_dport);
}

static void
test_full_match_reads_all_five_members(void **state)
{
	struct onvm_rule_match m;
	struct onvm_rule_err e;

	(void)state;
	assert_int_equal(match("{\"src\": \"198.18.0.0/15\", \"dst\": \"198.19.0.1\", \"proto\": "
			       "\"udp\", \"sport\": [1024, 65535], \"dport\": 53}",
			       &m, &e),
			 0);
	assert_int_equal(m.src.addr, 0xc6120000);
	assert_int_equal(m.src.len, 15);
	assert_int_equal(m.dst.addr, 0xc6130001);
	assert_int_equal(m.dst.mask, 0xffffffff);
	assert_int_equal(m.proto, 17);
	assert_true(m.has_sport);
	assert_int_equal(m.sport.lo, 1024);
	assert_int_equal(m.sport.hi, 65535);
	assert_true(m.has_dport);
	assert_int_equal(m.dport.lo, 53);
	assert_int_equal(m.dport.hi, 53);
	assert_int_equal(match("{\"proto\": 6, \"sport\": 80}", &m, &e), 0);
	assert_true(m.has_sport);
	assert_false(m.has_dport);
}

static void
test_match_errors_name_the_member_and_element(void **state)
{
	static const struct {
		const char *text, *where, *what;
	} bad[] = {
	    {"{\"src\": \"10.0.0.1/8\"}", "src", "has host bits set"},
	    {"{\"src\": \"10.0.0.0/8\", \"dst\": 5}", "dst", "expected an IPv4 prefix string"},
	    {"{\"proto\": \"gre\"}", "proto", "unknown protocol \"gre\""},
	    {"{\"proto\": \"tcp\", \"sport\": \"1-2\"}", "sport", "is a string"},
	    {"{\"proto\": \"tcp\", \"dport\": [1, 65536]}", "dport[1]", "out of range 0..65535"},
	    {"{\"proto\": \"udp\", \"dport\": [\"x\", 1]}", "dport[0]", "expected a port"},
	    {"{\"proto\": \"udp\", \"dport\": [9, 8]}", "dport", "is empty (lo > hi)"},
	};
	struct onvm_rule_match m;
	struct onvm_rule_err e;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_not_equal(match(bad[i].text, &m, &e), 0);
		expect_reason(&e, bad[i].where, bad[i].what);
	}
	/* A bad member leaves the result as it was. */
	assert_int_equal(m.src.addr, 0x5a5a5a5a);
}

static void
test_ports_need_tcp_or_udp(void **state)
{
	static const char msg[] = "ports need \"proto\": \"tcp\" or \"udp\" in the same rule";
	struct onvm_rule_match m;
	struct onvm_rule_err e;

	(void)state;
	assert_int_equal(match("{\"dport\": 53}", &m, &e), -EINVAL);
	expect_reason(&e, "dport", msg);
	assert_int_equal(match("{\"proto\": \"any\", \"sport\": 53, \"dport\": 53}", &m, &e),
			 -EINVAL);
	expect_reason(&e, "sport", msg);
	assert_int_equal(match("{\"proto\": \"icmp\", \"sport\": 8}", &m, &e), -EINVAL);
	expect_reason(&e, "sport", msg);
	assert_int_equal(match("{\"proto\": 47, \"dport\": [1, 9]}", &m, &e), -EINVAL);
	expect_reason(&e, "dport", msg);
	/* By number, TCP and UDP take ports too. */
	assert_int_equal(match("{\"proto\": 6, \"dport\": [1, 9]}", &m, &e), 0);
	assert_int_equal(match("{\"proto\": 17, \"sport\": 1}", &m, &e), 0);
}

static void
test_error_path_joins_the_callers_path(void **state)
{
	struct onvm_rule_err e = {.where = "dport[1]"};
	char p[64];

	(void)state;
	assert_string_equal(onvm_rule_err_path(p, sizeof(p), "flow_rules[3]", &e),
			    "flow_rules[3].dport[1]");
	assert_string_equal(onvm_rule_err_path(p, sizeof(p), "", &e), "dport[1]");
	snprintf(e.where, sizeof(e.where), "[1]");
	assert_string_equal(onvm_rule_err_path(p, sizeof(p), "x.dport", &e), "x.dport[1]");
	e.where[0] = '\0';
	assert_string_equal(onvm_rule_err_path(p, sizeof(p), "internal[0]", &e), "internal[0]");
	assert_string_equal(onvm_rule_err_path(p, sizeof(p), "", &e), "");
}

/* ---- through the callers' error machinery ------------------------------------------------ */

/* One bad value, in the manager's node config and in an NF's rules file at
 * the same place: line 3, column 50 (the second port of the rule's dport). */
#define BAD_LINE "    {\"chain\": \"c\", \"proto\": \"tcp\", \"dport\": [80, 70000]}"

static void
test_manager_config_places_rule_errors_at_file_line_column_and_path(void **state)
{
	static const char text[] = "{\"ports\": [{\"dev\": \"a\"}], \"chains\": [{\"name\": \"c\", "
				   "\"exit_port\": 0}],\n"
				   "  \"flow_rules\": [{\"chain\": \"c\"},\n" BAD_LINE "\n  ]}\n";
	struct mgr_config *cfg = calloc(1, sizeof(*cfg));
	char err[MGR_CFG_ERR_LEN];

	(void)state;
	assert_non_null(cfg);
	mgr_config_defaults(cfg);
	assert_int_equal(
	    mgr_config_load_string(text, strlen(text), "node.json", cfg, err, sizeof(err)), -1);
	assert_string_equal(err, "node.json:3:50: flow_rules[1].dport[1]: port 70000 is out of "
				 "range 0..65535");
	mgr_config_free(cfg);
	mgr_config_defaults(cfg);
	{
		static const char host[] =
		    "{\"ports\": [{\"dev\": \"a\"}], \"chains\": [{\"name\": "
		    "\"c\", \"exit_port\": 0}],\n \"flow_rules\": [\n"
		    "  {\"chain\": \"c\", \"src\": \"10.0.0.1/8\"}]}";

		assert_int_equal(
		    mgr_config_load_string(host, strlen(host), "node.json", cfg, err, sizeof(err)),
		    -1);
		assert_string_equal(err, "node.json:3:25: flow_rules[0].src: \"10.0.0.1/8\" has "
					 "host bits set (the network is 10.0.0.0/8)");
	}
	mgr_config_free(cfg);
	free(cfg);
}

static void
test_libnf_json_places_rule_errors_at_file_line_column_and_path(void **state)
{
	static const char text[] = "{\"rules\": [\n  {},\n" BAD_LINE "\n]}\n";
	struct onvm_rule_match m;
	struct onvm_rule_err e;
	struct nf_json j;
	char err[512];

	(void)state;
	assert_int_equal(nf_json_load_text(&j, "rules.json", text, strlen(text), err, sizeof(err)),
			 0);
	assert_int_equal(
	    onvm_rule_match(json_array_get(json_object_get(j.root, "rules"), 0), &m, &e), 0);
	assert_int_equal(
	    onvm_rule_match(json_array_get(json_object_get(j.root, "rules"), 1), &m, &e), -ERANGE);
	assert_int_equal(nf_json_rule_fail(&j, err, sizeof(err), "rules[1]", &e), -EINVAL);
	assert_string_equal(
	    err, "rules.json:3:50: rules[1].dport[1]: port 70000 is out of range 0..65535");
	nf_json_free(&j);
}

static void
test_libnf_json_reads_addresses_with_the_same_parser(void **state)
{
	static const char text[] = "{\"a\": \"10.0.0.1\",\n \"b\": \"10.0.0.01\", \"c\": 7}";
	struct nf_json j;
	uint32_t a = 0;
	char err[512];

	(void)state;
	assert_int_equal(nf_json_load_text(&j, "x.json", text, strlen(text), err, sizeof(err)), 0);
	assert_int_equal(nf_json_ipv4(&j, j.root, "", "a", true, &a, err, sizeof(err)), 0);
	assert_int_equal(a, 0x0a000001);
	assert_int_equal(nf_json_ipv4(&j, j.root, "", "b", true, &a, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "x.json:2:7: b: \"10.0.0.01\" is not an IPv4 address a.b.c.d: "
				 "octet \"01\" has a leading zero");
	assert_int_equal(nf_json_ipv4(&j, j.root, "", "c", true, &a, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "x.json:2:25: c: expected an IPv4 address string \"a.b.c.d\", "
				 "got an integer");
	assert_int_equal(nf_json_ipv4(&j, j.root, "", "d", true, &a, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "x.json:1:1: d: required field missing");
	assert_int_equal(nf_json_ipv4(&j, j.root, "", "d", false, &a, err, sizeof(err)), 0);
	assert_int_equal(a, 0x0a000001);
	nf_json_free(&j);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_address_is_four_decimal_octets),
	    cmocka_unit_test(test_bad_addresses_are_refused_with_the_reason),
	    cmocka_unit_test(test_address_must_be_a_json_string_without_nul),
	    cmocka_unit_test(test_address_formats_back_to_its_text),
	    cmocka_unit_test(test_prefix_gives_address_mask_and_length),
	    cmocka_unit_test(test_bare_address_is_a_slash_32),
	    cmocka_unit_test(test_slash_0_and_slash_32_are_the_ends),
	    cmocka_unit_test(test_host_bits_are_refused_never_masked),
	    cmocka_unit_test(test_bad_prefix_lengths_are_refused_with_the_reason),
	    cmocka_unit_test(test_prefix_must_be_a_json_string),
	    cmocka_unit_test(test_quoted_values_are_cut_and_kept_on_one_line),
	    cmocka_unit_test(test_single_port_is_a_range_of_one),
	    cmocka_unit_test(test_range_is_an_inclusive_array),
	    cmocka_unit_test(test_bad_ports_and_ranges_are_refused_with_the_reason),
	    cmocka_unit_test(test_ports_written_as_strings_are_refused_naming_the_accepted_form),
	    cmocka_unit_test(test_protocol_names_and_numbers),
	    cmocka_unit_test(test_bad_protocols_are_refused_with_the_reason),
	    cmocka_unit_test(test_empty_match_matches_anything),
	    cmocka_unit_test(test_full_match_reads_all_five_members),
	    cmocka_unit_test(test_match_errors_name_the_member_and_element),
	    cmocka_unit_test(test_ports_need_tcp_or_udp),
	    cmocka_unit_test(test_error_path_joins_the_callers_path),
	    cmocka_unit_test(test_manager_config_places_rule_errors_at_file_line_column_and_path),
	    cmocka_unit_test(test_libnf_json_places_rule_errors_at_file_line_column_and_path),
	    cmocka_unit_test(test_libnf_json_reads_addresses_with_the_same_parser),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
