/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * json_locate.c -- map a JSON path to a line/column in the JSON source text.
 *
 * Jansson does not keep the source position of the values it builds, so once
 * the configuration has been parsed we can no longer say where a bad field
 * is.  This is a small recursive-descent scanner over the original text that
 * walks a path ("chains[1].services[2]") down to the value it names and turns
 * the value's byte offset into a line and column.  It follows the JSON grammar
 * strictly enough to reject what Jansson rejects on the way, never allocates,
 * never reads past the given length and limits nesting so that hostile input
 * cannot exhaust the stack.
 */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "json_locate.h"

struct jl_scanner {
	const char *text;
	size_t len;
	size_t pos;
	unsigned int depth;
};

enum jl_comp_type {
	JL_END,
	JL_KEY,
	JL_INDEX,
};

/* One step of a path: a key, an index, or the end of the path. */
struct jl_comp {
	enum jl_comp_type type;
	const char *key;
	size_t key_len;
	size_t index;
	const char *next; /* the rest of the path, separator consumed */
};

/*
 * Parse the path step at p.  A step is a non-empty key running up to '.', '[' or the end, or
 * "[digits]".  It must be followed by the end, '[', or '.' and another key.
 */
static int jl_parse_comp(const char *p, struct jl_comp *c)
{
	if (*p == '\0') {
		c->type = JL_END;
		c->next = p;
		return 0;
	}

	if (*p == '[') {
		size_t idx = 0;

		p++;
		if (*p < '0' || *p > '9')
			return -1;
		while (*p >= '0' && *p <= '9') {
			size_t d = (size_t)(*p - '0');

			if (idx > (SIZE_MAX - d) / 10)
				return -1;
			idx = idx * 10 + d;
			p++;
		}
		if (*p != ']')
			return -1;
		p++;
		c->type = JL_INDEX;
		c->index = idx;
	} else {
		const char *start = p;

		while (*p != '\0' && *p != '.' && *p != '[')
			p++;
		if (p == start)
			return -1; /* empty key: ".a", "a..b" */
		c->type = JL_KEY;
		c->key = start;
		c->key_len = (size_t)(p - start);
	}

	if (*p == '.') {
		p++;
		if (*p == '\0' || *p == '.' || *p == '[')
			return -1; /* "a.", "a.[0]" */
	} else if (*p != '\0' && *p != '[') {
		return -1; /* "[0]x" */
	}
	c->next = p;
	return 0;
}

static int jl_path_valid(const char *path)
{
	struct jl_comp c;

	do {
		if (jl_parse_comp(path, &c) < 0)
			return 0;
		path = c.next;
	} while (c.type != JL_END);
	return 1;
}

/* Next byte, or -1 at the end of the text. */
static int jl_peek(const struct jl_scanner *s)
{
	if (s->pos >= s->len)
		return -1;
	return (unsigned char)s->text[s->pos];
}

static void jl_skip_ws(struct jl_scanner *s)
{
	while (s->pos < s->len) {
		char c = s->text[s->pos];

		if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			break;
		s->pos++;
	}
}

/* Consume `c` (after whitespace) or fail. */
static int jl_expect(struct jl_scanner *s, char c)
{
	jl_skip_ws(s);
	if (jl_peek(s) != (unsigned char)c)
		return -1;
	s->pos++;
	return 0;
}

static int jl_hex4(struct jl_scanner *s, unsigned int *out)
{
	unsigned int v = 0;
	int i;

	if (s->len - s->pos < 4)
		return -1;
	for (i = 0; i < 4; i++) {
		char c = s->text[s->pos++];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned int)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned int)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned int)(c - 'A' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

/* Decode the rest of a \u escape (the "\u" already consumed) into UTF-8 in buf. */
static int jl_unicode_escape(struct jl_scanner *s, unsigned char *buf, size_t *n)
{
	unsigned int cp, lo;

	if (jl_hex4(s, &cp) < 0)
		return -1;
	if (cp >= 0xDC00 && cp <= 0xDFFF)
		return -1; /* lone low surrogate */
	if (cp >= 0xD800 && cp <= 0xDBFF) {
		if (s->len - s->pos < 2 || s->text[s->pos] != '\\' || s->text[s->pos + 1] != 'u')
			return -1; /* lone high surrogate */
		s->pos += 2;
		if (jl_hex4(s, &lo) < 0 || lo < 0xDC00 || lo > 0xDFFF)
			return -1;
		cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
	}

	if (cp < 0x80) {
		buf[0] = (unsigned char)cp;
		*n = 1;
	} else if (cp < 0x800) {
		buf[0] = (unsigned char)(0xC0 | (cp >> 6));
		buf[1] = (unsigned char)(0x80 | (cp & 0x3F));
		*n = 2;
	} else if (cp < 0x10000) {
		buf[0] = (unsigned char)(0xE0 | (cp >> 12));
		buf[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
		buf[2] = (unsigned char)(0x80 | (cp & 0x3F));
		*n = 3;
	} else {
		buf[0] = (unsigned char)(0xF0 | (cp >> 18));
		buf[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
		buf[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
		buf[3] = (unsigned char)(0x80 | (cp & 0x3F));
		*n = 4;
	}
	return 0;
}

/*
 * Scan the string starting at the current '"'.  If `key` is not NULL, set *match to whether
 * the decoded contents equal key[0..key_len).
 */
static int jl_scan_string(struct jl_scanner *s, const char *key, size_t key_len, int *match)
{
	size_t matched = 0;
	int equal = 1;

	s->pos++; /* opening quote */
	for (;;) {
		unsigned char buf[4];
		size_t n = 1;
		int c = jl_peek(s);

		if (c < 0x20)
			return -1; /* end of text, or a raw control character */
		s->pos++;
		if (c == '"')
			break;
		if (c == '\\') {
			c = jl_peek(s);
			if (c < 0)
				return -1;
			s->pos++;
			switch (c) {
			case '"':
			case '\\':
			case '/':
				buf[0] = (unsigned char)c;
				break;
			case 'b':
				buf[0] = '\b';
				break;
			case 'f':
				buf[0] = '\f';
				break;
			case 'n':
				buf[0] = '\n';
				break;
			case 'r':
				buf[0] = '\r';
				break;
			case 't':
				buf[0] = '\t';
				break;
			case 'u':
				if (jl_unicode_escape(s, buf, &n) < 0)
					return -1;
				break;
			default:
				return -1;
			}
		} else {
			buf[0] = (unsigned char)c;
		}

		if (key && equal) {
			if (n <= key_len - matched && memcmp(key + matched, buf, n) == 0)
				matched += n;
			else
				equal = 0;
		}
	}

	if (key)
		*match = equal && matched == key_len;
	return 0;
}

static int jl_is_digit(int c)
{
	return c >= '0' && c <= '9';
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static int jl_scan_number(struct jl_scanner *s)
{
	if (jl_peek(s) == '-')
		s->pos++;
	if (jl_peek(s) == '0') {
		s->pos++;
	} else if (jl_is_digit(jl_peek(s))) {
		while (jl_is_digit(jl_peek(s)))
			s->pos++;
	} else {
		return -1;
	}

	if (jl_peek(s) == '.') {
		s->pos++;
		if (!jl_is_digit(jl_peek(s)))
			return -1;
		while (jl_is_digit(jl_peek(s)))
			s->pos++;
	}

	if (jl_peek(s) == 'e' || jl_peek(s) == 'E') {
		s->pos++;
		if (jl_peek(s) == '+' || jl_peek(s) == '-')
			s->pos++;
		if (!jl_is_digit(jl_peek(s)))
			return -1;
		while (jl_is_digit(jl_peek(s)))
			s->pos++;
	}
	return 0;
}

static int jl_scan_literal(struct jl_scanner *s, const char *word)
{
	size_t n = strlen(word);

	if (s->len - s->pos < n || memcmp(s->text + s->pos, word, n) != 0)
		return -1;
	s->pos += n;
	return 0;
}

/* Step into an object or array at the current '{' or '['. */
static int jl_enter(struct jl_scanner *s)
{
	if (s->depth >= JSON_LOCATE_MAX_DEPTH)
		return -1;
	s->depth++;
	s->pos++;
	return 0;
}

static int jl_skip_value(struct jl_scanner *s);

/* Skip the rest of an object after its '{' (or after a member's value) up to and past '}'. */
static int jl_skip_members(struct jl_scanner *s)
{
	for (;;) {
		jl_skip_ws(s);
		switch (jl_peek(s)) {
		case ',':
			s->pos++;
			break;
		case '}':
			s->pos++;
			s->depth--;
			return 0;
		default:
			return -1;
		}
		jl_skip_ws(s);
		if (jl_peek(s) != '"' || jl_scan_string(s, NULL, 0, NULL) < 0)
			return -1;
		if (jl_expect(s, ':') < 0)
			return -1;
		if (jl_skip_value(s) < 0)
			return -1;
	}
}

/* Skip the rest of an array after one of its elements up to and past ']'. */
static int jl_skip_elements(struct jl_scanner *s)
{
	for (;;) {
		jl_skip_ws(s);
		switch (jl_peek(s)) {
		case ',':
			s->pos++;
			break;
		case ']':
			s->pos++;
			s->depth--;
			return 0;
		default:
			return -1;
		}
		if (jl_skip_value(s) < 0)
			return -1;
	}
}

static int jl_skip_object(struct jl_scanner *s)
{
	if (jl_enter(s) < 0)
		return -1;
	jl_skip_ws(s);
	if (jl_peek(s) == '}') {
		s->pos++;
		s->depth--;
		return 0;
	}
	if (jl_peek(s) != '"' || jl_scan_string(s, NULL, 0, NULL) < 0)
		return -1;
	if (jl_expect(s, ':') < 0 || jl_skip_value(s) < 0)
		return -1;
	return jl_skip_members(s);
}

static int jl_skip_array(struct jl_scanner *s)
{
	if (jl_enter(s) < 0)
		return -1;
	jl_skip_ws(s);
	if (jl_peek(s) == ']') {
		s->pos++;
		s->depth--;
		return 0;
	}
	if (jl_skip_value(s) < 0)
		return -1;
	return jl_skip_elements(s);
}

/* Skip whitespace and one complete value. */
static int jl_skip_value(struct jl_scanner *s)
{
	jl_skip_ws(s);
	switch (jl_peek(s)) {
	case '{':
		return jl_skip_object(s);
	case '[':
		return jl_skip_array(s);
	case '"':
		return jl_scan_string(s, NULL, 0, NULL);
	case 't':
		return jl_scan_literal(s, "true");
	case 'f':
		return jl_scan_literal(s, "false");
	case 'n':
		return jl_scan_literal(s, "null");
	default:
		return jl_scan_number(s);
	}
}

static int jl_locate_value(struct jl_scanner *s, const char *path, size_t *found);

/*
 * After a member: ',' means another follows (returns 0); the closing bracket
 * ends the container without the path's component in it (returns 1, position
 * of the container in *found); anything else is malformed (-1).
 */
static int
jl_next_member(struct jl_scanner *s, char close, size_t start, size_t *found)
{
	jl_skip_ws(s);
	if (jl_peek(s) == ',') {
		s->pos++;
		return 0;
	}
	if (jl_peek(s) == close) {
		s->pos++;
		s->depth--;
		*found = start;
		return 1;
	}
	return -1;
}

/* Look up key c in the object starting at `start` (current position). */
static int jl_locate_key(struct jl_scanner *s, const struct jl_comp *c, size_t start,
			 size_t *found)
{
	int r;

	if (jl_enter(s) < 0)
		return -1;
	jl_skip_ws(s);
	if (jl_peek(s) == '}') {
		s->pos++;
		s->depth--;
		*found = start;
		return 1;
	}

	for (;;) {
		int match = 0;

		jl_skip_ws(s);
		if (jl_peek(s) != '"' || jl_scan_string(s, c->key, c->key_len, &match) < 0)
			return -1;
		if (jl_expect(s, ':') < 0)
			return -1;
		if (match)
			return jl_locate_value(s, c->next, found); /* first occurrence wins */
		if (jl_skip_value(s) < 0)
			return -1;
		r = jl_next_member(s, '}', start, found);
		if (r != 0)
			return r;
	}
}

/* Look up index c in the array starting at `start` (current position). */
static int jl_locate_index(struct jl_scanner *s, const struct jl_comp *c, size_t start,
			   size_t *found)
{
	size_t i;
	int r;

	if (jl_enter(s) < 0)
		return -1;
	jl_skip_ws(s);
	if (jl_peek(s) == ']') {
		s->pos++;
		s->depth--;
		*found = start;
		return 1;
	}

	for (i = 0;; i++) {
		if (i == c->index)
			return jl_locate_value(s, c->next, found);
		if (jl_skip_value(s) < 0)
			return -1;
		r = jl_next_member(s, ']', start, found);
		if (r != 0)
			return r;
	}
}

/* Locate `path` relative to the value at the current position (after whitespace). */
static int jl_locate_value(struct jl_scanner *s, const char *path, size_t *found)
{
	struct jl_comp c;
	size_t start;
	int ch;

	if (jl_parse_comp(path, &c) < 0)
		return -1; /* cannot happen: the path was validated up front */

	jl_skip_ws(s);
	start = s->pos;
	ch = jl_peek(s);

	if (c.type == JL_KEY && ch == '{')
		return jl_locate_key(s, &c, start, found);
	if (c.type == JL_INDEX && ch == '[')
		return jl_locate_index(s, &c, start, found);

	/* End of path, or the path wants to go into something that isn't that container. */
	if (jl_skip_value(s) < 0)
		return -1;
	*found = start;
	return c.type == JL_END ? 0 : 1;
}

static int jl_clamp_int(size_t v)
{
	return v > INT_MAX ? INT_MAX : (int)v;
}

int json_locate(const char *text, size_t len, const char *path, int *line, int *column)
{
	struct jl_scanner s = { .text = text, .len = len, .pos = 0, .depth = 0 };
	size_t off, i, ln = 1, col = 1;
	int rc;

	if (!text || !path || !line || !column || !jl_path_valid(path))
		return -1;

	rc = jl_locate_value(&s, path, &off);
	if (rc < 0)
		return -1;

	for (i = 0; i < off; i++) {
		char c = text[i];

		if (c == '\n' || (c == '\r' && (i + 1 >= len || text[i + 1] != '\n'))) {
			ln++;
			col = 1;
		} else {
			col++;
		}
	}
	*line = jl_clamp_int(ln);
	*column = jl_clamp_int(col);
	return rc;
}
