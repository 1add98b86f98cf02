/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * onvm_rule.c -- the values 5-tuple rules match on, parsed once for the
 * manager and every NF (onvm_rule.h has the contract and the syntax).
 *
 * The address parser is written out rather than left to inet_pton() so that
 * a refusal can say what is wrong ("octet \"256\" is over 255", "expected 4
 * octets, found 3"): the operator reads the reason, not a man page.  Every
 * reason quotes the value as given, cut to QUOTE_MAX bytes and with control
 * characters replaced, so a message stays one short line whatever the file
 * holds.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "onvm_rule.h"

/* Longest part of a value a reason quotes. */
#define QUOTE_MAX 48

/* The error: `where` and the formatted reason; returns `code`. */
static int __attribute__((format(printf, 4, 5)))
fail(struct onvm_rule_err *e, int code, const char *where, const char *fmt, ...)
{
	va_list ap;

	snprintf(e->where, sizeof(e->where), "%s", where);
	va_start(ap, fmt);
	vsnprintf(e->why, sizeof(e->why), fmt, ap);
	va_end(ap);
	return code;
}

/* `s` (its first `n` bytes at most) as a message may quote it. */
static const char *
quote(char out[QUOTE_MAX + 4], const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n && s[i] != '\0' && i < QUOTE_MAX; i++)
		out[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	if (i == QUOTE_MAX && i < n && s[i] != '\0') {
		memcpy(out + i, "...", 3);
		i += 3;
	}
	out[i] = '\0';
	return out;
}

/* What a character that does not belong is called in a reason. */
static const char *
char_name(char out[16], char c)
{
	if (c == ' ')
		return "space";
	if ((unsigned char)c < 0x20 || (unsigned char)c >= 0x7f)
		snprintf(out, 16, "byte 0x%02x", (unsigned char)c);
	else
		snprintf(out, 16, "'%c'", c);
	return out;
}

static bool
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/*
 * The address at the start of `s`, up to `stop` ('\0', or '/' in a prefix).
 * On error, a reason without the value quoted in `detail`.
 */
static int
parse_addr(const char *s, char stop, uint32_t *addr, char *detail, size_t dlen)
{
	uint32_t a = 0;
	const char *p = s;
	char cn[16];

	for (int i = 0; i < 4; i++) {
		const char *start;
		unsigned int v = 0;

		if (i > 0) {
			if (*p == stop) {
				snprintf(detail, dlen, "expected 4 octets, found %d", i);
				return -EINVAL;
			}
			if (*p != '.') {
				snprintf(detail, dlen, "unexpected %s after octet %d",
					 char_name(cn, *p), i);
				return -EINVAL;
			}
			p++;
		}
		start = p;
		while (is_digit(*p) && p - start < 4)
			v = v * 10 + (unsigned int)(*p++ - '0');
		if (p == start) {
			if (*p == '.' || *p == stop)
				snprintf(detail, dlen, "octet %d is empty", i + 1);
			else
				snprintf(detail, dlen, "unexpected %s in octet %d",
					 char_name(cn, *p), i + 1);
			return -EINVAL;
		}
		if (is_digit(*p) || v > 255) {
			while (is_digit(*p))
				p++;
			snprintf(detail, dlen, "octet \"%.*s%s\" is over 255",
				 p - start > 6 ? 6 : (int)(p - start), start,
				 p - start > 6 ? "..." : "");
			return -ERANGE;
		}
		if (*start == '0' && p - start > 1) {
			snprintf(detail, dlen, "octet \"%.*s\" has a leading zero",
				 (int)(p - start), start);
			return -EINVAL;
		}
		a = a << 8 | v;
	}
	if (*p == '.') {
		snprintf(detail, dlen, "more than 4 octets");
		return -EINVAL;
	}
	if (*p != stop) {
		snprintf(detail, dlen, "unexpected %s after the address", char_name(cn, *p));
		return -EINVAL;
	}
	*addr = a;
	return 0;
}

int
onvm_rule_ipv4_text(const char *s, uint32_t *addr, struct onvm_rule_err *e)
{
	char q[QUOTE_MAX + 4], detail[80];
	int ret = parse_addr(s, '\0', addr, detail, sizeof(detail));

	if (ret < 0)
		return fail(e, ret, "", "\"%s\" is not an IPv4 address a.b.c.d: %s",
			    quote(q, s, SIZE_MAX), detail);
	return 0;
}

int
onvm_rule_prefix_text(const char *s, struct onvm_rule_prefix *p, struct onvm_rule_err *e)
{
	const char *slash = strchr(s, '/');
	char q[QUOTE_MAX + 4], ql[QUOTE_MAX + 4], detail[80];
	unsigned int len = 32;
	uint32_t a, mask;
	int ret;

	ret = parse_addr(s, slash != NULL ? '/' : '\0', &a, detail, sizeof(detail));
	if (ret < 0)
		return fail(e, ret, "", "\"%s\" is not an IPv4 prefix a.b.c.d/n: %s",
			    quote(q, s, SIZE_MAX), detail);
	if (slash != NULL) {
		const char *l = slash + 1;
		size_t n = strspn(l, "0123456789");

		quote(q, s, SIZE_MAX);
		quote(ql, l, SIZE_MAX);
		if (*l == '\0')
			return fail(e, -EINVAL, "",
				    "\"%s\" is not an IPv4 prefix a.b.c.d/n: the length after '/' "
				    "is missing",
				    q);
		if (l[n] != '\0')
			return fail(e, -EINVAL, "",
				    "\"%s\" is not an IPv4 prefix a.b.c.d/n: the length \"%s\" is "
				    "not a number 0..32",
				    q, ql);
		if (l[0] == '0' && n > 1)
			return fail(e, -EINVAL, "",
				    "\"%s\" is not an IPv4 prefix a.b.c.d/n: the length \"%s\" has "
				    "a leading zero",
				    q, ql);
		for (len = 0; *l != '\0' && len <= 32; l++)
			len = len * 10 + (unsigned int)(*l - '0');
		if (len > 32)
			return fail(
			    e, -ERANGE, "",
			    "\"%s\" is not an IPv4 prefix a.b.c.d/n: the length %s is over 32", q,
			    ql);
	}
	mask = onvm_rule_mask((uint8_t)len);
	if ((a & ~mask) != 0) {
		char net[ONVM_RULE_IPV4_STR_LEN];

		return fail(e, -EINVAL, "", "\"%s\" has host bits set (the network is %s/%u)",
			    quote(q, s, SIZE_MAX), onvm_rule_ipv4_str(a & mask, net), len);
	}
	p->addr = a;
	p->mask = mask;
	p->len = (uint8_t)len;
	return 0;
}

/* The string `v`, or NULL with the error written (`what` names the form). */
static const char *
string_of(const json_t *v, const char *what, struct onvm_rule_err *e)
{
	if (!json_is_string(v)) {
		fail(e, -EINVAL, "", "expected %s, got %s", what, onvm_rule_json_type(v));
		return NULL;
	}
	if (strlen(json_string_value(v)) != json_string_length(v)) {
		fail(e, -EINVAL, "", "expected %s, got a string holding a NUL byte", what);
		return NULL;
	}
	return json_string_value(v);
}

int
onvm_rule_ipv4(const json_t *v, uint32_t *addr, struct onvm_rule_err *e)
{
	const char *s = string_of(v, "an IPv4 address string \"a.b.c.d\"", e);

	return s == NULL ? -EINVAL : onvm_rule_ipv4_text(s, addr, e);
}

int
onvm_rule_prefix(const json_t *v, struct onvm_rule_prefix *p, struct onvm_rule_err *e)
{
	const char *s = string_of(v, "an IPv4 prefix string \"a.b.c.d/n\"", e);

	return s == NULL ? -EINVAL : onvm_rule_prefix_text(s, p, e);
}

/* One port: the integer `v`, at `where`. */
static int
port_of(const json_t *v, const char *where, uint16_t *out, struct onvm_rule_err *e)
{
	json_int_t x;

	if (!json_is_integer(v))
		return fail(e, -EINVAL, where, "expected a port 0..65535, got %s",
			    onvm_rule_json_type(v));
	x = json_integer_value(v);
	if (x < 0 || x > 65535)
		return fail(e, -ERANGE, where, "port %lld is out of range 0..65535", (long long)x);
	*out = (uint16_t)x;
	return 0;
}

/*
 * The refusal of a port or range written as a string ("80", "1000-2000"):
 * it says the accepted form, with the string's own numbers where it has the
 * shape of a range.
 */
static int
string_ports(const json_t *v, struct onvm_rule_err *e)
{
	const char *s = json_string_value(v);
	size_t lo = strspn(s, "0123456789"), hi = 0;
	char q[QUOTE_MAX + 4], hint[40] = "";

	if (lo > 0 && lo <= 5 && s[lo] == '-') {
		hi = strspn(s + lo + 1, "0123456789");
		if (hi > 0 && hi <= 5 && s[lo + 1 + hi] == '\0')
			snprintf(hint, sizeof(hint), " (write [%.*s, %.*s])", (int)lo, s, (int)hi,
				 s + lo + 1);
	} else if (lo > 0 && lo <= 5 && s[lo] == '\0') {
		snprintf(hint, sizeof(hint), " (write %s)", s);
	}
	return fail(e, -EINVAL, "",
		    "\"%s\" is a string: a port is a number 0..65535 and a range an inclusive "
		    "array [lo, hi]%s",
		    quote(q, s, json_string_length(v)), hint);
}

int
onvm_rule_ports(const json_t *v, struct onvm_rule_ports *r, struct onvm_rule_err *e)
{
	uint16_t lo, hi;
	int ret;

	if (json_is_integer(v)) {
		if ((ret = port_of(v, "", &lo, e)) < 0)
			return ret;
		r->lo = r->hi = lo;
		return 0;
	}
	if (json_is_string(v))
		return string_ports(v, e);
	if (!json_is_array(v))
		return fail(e, -EINVAL, "",
			    "expected a port 0..65535 or an inclusive range [lo, hi], got %s",
			    onvm_rule_json_type(v));
	if (json_array_size(v) != 2)
		return fail(e, -EINVAL, "",
			    "expected a range [lo, hi] of 2 ports, got an array of %zu",
			    json_array_size(v));
	if ((ret = port_of(json_array_get(v, 0), "[0]", &lo, e)) < 0 ||
	    (ret = port_of(json_array_get(v, 1), "[1]", &hi, e)) < 0)
		return ret;
	if (lo > hi)
		return fail(e, -EINVAL, "", "range [%u, %u] is empty (lo > hi)", lo, hi);
	r->lo = lo;
	r->hi = hi;
	return 0;
}

#define PROTO_FORMS "\"tcp\", \"udp\", \"icmp\", \"any\" or a number 1..255"

int
onvm_rule_proto(const json_t *v, int16_t *proto, struct onvm_rule_err *e)
{
	static const struct {
		const char *name;
		int16_t proto;
	} names[] = {{"tcp", 6}, {"udp", 17}, {"icmp", 1}, {"any", ONVM_RULE_PROTO_ANY}};
	char q[QUOTE_MAX + 4];
	json_int_t x;

	if (json_is_string(v)) {
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (strcmp(json_string_value(v), names[i].name) == 0 &&
			    json_string_length(v) == strlen(names[i].name)) {
				*proto = names[i].proto;
				return 0;
			}
		return fail(e, -EINVAL, "", "unknown protocol \"%s\": expected " PROTO_FORMS,
			    quote(q, json_string_value(v), json_string_length(v)));
	}
	if (!json_is_integer(v))
		return fail(e, -EINVAL, "", "expected a protocol " PROTO_FORMS ", got %s",
			    onvm_rule_json_type(v));
	x = json_integer_value(v);
	if (x == 0)
		return fail(e, -ERANGE, "",
			    "protocol 0 is out of range 1..255 (IPv4 has no protocol 0): leave "
			    "\"proto\" out or write \"any\" to match every protocol");
	if (x < 0 || x > 255)
		return fail(e, -ERANGE, "", "protocol %lld is out of range 1..255", (long long)x);
	*proto = (int16_t)x;
	return 0;
}

/* Prefix the error's `where` with the member's name `key` (a few bytes:
 * "dport" before "[1]" at most). */
static int
in_member(struct onvm_rule_err *e, const char *key, int ret)
{
	size_t k = strlen(key), n = strnlen(e->where, sizeof(e->where) - 1);

	if (k + n >= sizeof(e->where))
		n = sizeof(e->where) - 1 - k;
	memmove(e->where + k, e->where, n);
	memcpy(e->where, key, k);
	e->where[k + n] = '\0';
	return ret;
}

int
onvm_rule_match(const json_t *obj, struct onvm_rule_match *m, struct onvm_rule_err *e)
{
	struct onvm_rule_match r = {
	    .sport = {0, 65535}, .dport = {0, 65535}, .proto = ONVM_RULE_PROTO_ANY};
	const json_t *v;
	int ret;

	if ((v = json_object_get(obj, "src")) != NULL && (ret = onvm_rule_prefix(v, &r.src, e)) < 0)
		return in_member(e, "src", ret);
	if ((v = json_object_get(obj, "dst")) != NULL && (ret = onvm_rule_prefix(v, &r.dst, e)) < 0)
		return in_member(e, "dst", ret);
	if ((v = json_object_get(obj, "proto")) != NULL &&
	    (ret = onvm_rule_proto(v, &r.proto, e)) < 0)
		return in_member(e, "proto", ret);
	if ((v = json_object_get(obj, "sport")) != NULL) {
		if ((ret = onvm_rule_ports(v, &r.sport, e)) < 0)
			return in_member(e, "sport", ret);
		r.has_sport = true;
	}
	if ((v = json_object_get(obj, "dport")) != NULL) {
		if ((ret = onvm_rule_ports(v, &r.dport, e)) < 0)
			return in_member(e, "dport", ret);
		r.has_dport = true;
	}
	if ((r.has_sport || r.has_dport) && r.proto != 6 && r.proto != 17)
		return fail(e, -EINVAL, r.has_sport ? "sport" : "dport",
			    "ports need \"proto\": \"tcp\" or \"udp\" in the same rule (other "
			    "packets have none)");
	*m = r;
	return 0;
}

char *
onvm_rule_err_path(char *out, size_t outlen, const char *base, const struct onvm_rule_err *e)
{
	const char *sep = base[0] != '\0' && e->where[0] != '\0' && e->where[0] != '[' ? "." : "";

	snprintf(out, outlen, "%s%s%s", base, sep, e->where);
	return out;
}

char *
onvm_rule_ipv4_str(uint32_t addr, char buf[ONVM_RULE_IPV4_STR_LEN])
{
	snprintf(buf, ONVM_RULE_IPV4_STR_LEN, "%u.%u.%u.%u", addr >> 24, (addr >> 16) & 0xff,
		 (addr >> 8) & 0xff, addr & 0xff);
	return buf;
}

const char *
onvm_rule_json_type(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a real number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	default:
		return "null";
	}
}
