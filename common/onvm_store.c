/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * store_keys.c -- the store's addresses, keys and reply verdicts
 * (onvm_store.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onvm_store.h"

void
onvm_store_cfg_defaults(struct onvm_store_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->mode = ONVM_STORE_ASYNC;
	c->cache = 1;
	c->flush_pkts = ONVM_STORE_FLUSH_PKTS_DEFAULT;
	c->flush_us = ONVM_STORE_FLUSH_US_DEFAULT;
	c->pipeline = ONVM_STORE_PIPELINE_DEFAULT;
	c->timeout_ms = ONVM_STORE_TIMEOUT_MS_DEFAULT;
	c->log_packets = ONVM_STORE_LOG_PACKETS_DEFAULT;
}

static int
fail(char *err, size_t errlen, const char *msg, const char *s)
{
	if (err != NULL)
		snprintf(err, errlen, "\"%s\": %s", s, msg);
	return -EINVAL;
}

int
onvm_store_addr_parse(const char *s, struct onvm_store_addr *a, char *err, size_t errlen)
{
	const char *colon;
	char *end;
	unsigned long port = 6379;
	size_t hl;

	memset(a, 0, sizeof(*a));
	if (s == NULL || s[0] == '\0')
		return fail(err, errlen, "an empty address", "");
	if (strncmp(s, "unix:", 5) == 0 || s[0] == '/') {
		const char *p = s[0] == '/' ? s : s + 5;

		if (p[0] != '/')
			return fail(err, errlen, "a Unix socket path must be absolute", s);
		if (strlen(p) >= sizeof(a->path))
			return fail(err, errlen, "the socket path is too long (107 bytes at most)", s);
		a->unix_socket = true;
		strcpy(a->path, p);
		return 0;
	}
	colon = strrchr(s, ':');
	hl = colon != NULL ? (size_t)(colon - s) : strlen(s);
	if (colon != NULL) {
		errno = 0;
		port = strtoul(colon + 1, &end, 10);
		if (colon[1] < '0' || colon[1] > '9' || *end != '\0' || errno != 0 || port == 0 ||
		    port > 65535)
			return fail(err, errlen, "the port must be 1..65535", s);
	}
	if (hl == 0 || hl >= sizeof(a->host))
		return fail(err, errlen, "the host must be 1..63 characters", s);
	for (size_t i = 0; i < hl; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '.' || s[i] == '-'))
			return fail(err, errlen, "the host is a name or an IPv4 address", s);
	memcpy(a->host, s, hl);
	a->host[hl] = '\0';
	a->port = (uint16_t)port;
	return 0;
}

static int
put(char *buf, size_t len, int n)
{
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	(void)buf;
	return n;
}

int
onvm_store_key_run(char *buf, size_t len, const char *chain)
{
	return put(buf, len, snprintf(buf, len, "onvm:{%s}:run", chain));
}

int
onvm_store_key_meta(char *buf, size_t len, const char *chain, uint16_t service)
{
	return put(buf, len, snprintf(buf, len, "onvm:{%s}:s%u:m", chain, service));
}

int
onvm_store_key_index(char *buf, size_t len, const char *chain, uint16_t service)
{
	return put(buf, len, snprintf(buf, len, "onvm:{%s}:s%u:i", chain, service));
}

int
onvm_store_key_closes(char *buf, size_t len, const char *chain, uint16_t service)
{
	return put(buf, len, snprintf(buf, len, "onvm:{%s}:s%u:k", chain, service));
}

int
onvm_store_key_chunk(char *buf, size_t len, const char *chain, uint16_t service, uint32_t region,
		     uint32_t chunk)
{
	return put(buf, len,
		   snprintf(buf, len, "onvm:{%s}:s%u:c:%" PRIu32 ".%" PRIu32, chain, service,
			    region, chunk));
}

int
onvm_store_chunk_member(char *buf, size_t len, uint32_t region, uint32_t chunk)
{
	return put(buf, len, snprintf(buf, len, "%" PRIu32 ".%" PRIu32, region, chunk));
}

int
onvm_store_parse_u64(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;

	if (n == 0 || n > 20)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		unsigned int d = (unsigned int)(s[i] - '0');

		if (s[i] < '0' || s[i] > '9' || v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

/* Digits only, no sign or space, at most UINT32_MAX. */
static int
parse_u32(const char *s, size_t n, uint32_t *out)
{
	uint64_t v;

	if (n > 10 || onvm_store_parse_u64(s, n, &v) < 0 || v > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

int
onvm_store_chunk_member_parse(const char *s, size_t len, uint32_t *region, uint32_t *chunk)
{
	const char *dot = memchr(s, '.', len);

	if (dot == NULL || parse_u32(s, (size_t)(dot - s), region) < 0 ||
	    parse_u32(dot + 1, len - (size_t)(dot - s) - 1, chunk) < 0)
		return -EINVAL;
	return 0;
}

enum onvm_store_verdict
onvm_store_write_verdict(const struct onvm_store_ints *r, uint64_t epoch, uint64_t seq)
{
	if (r->n < 1)
		return ONVM_STORE_BAD;
	switch (r->v[0]) {
	case 1:
		/* Applied: it must say the version we sent. */
		if (r->n == 3 && (uint64_t)r->v[1] == epoch && (uint64_t)r->v[2] == seq)
			return ONVM_STORE_APPLIED;
		return ONVM_STORE_BAD;
	case 0:
		/* Not newer: what it holds is this update or a later one. */
		if (r->n == 3 && r->v[1] >= 0 && r->v[2] >= 0 &&
		    ((uint64_t)r->v[1] > epoch || ((uint64_t)r->v[1] == epoch && (uint64_t)r->v[2] >= seq)))
			return ONVM_STORE_NOT_NEWER;
		return ONVM_STORE_BAD;
	case -1:
		return r->n == 2 ? ONVM_STORE_FENCED : ONVM_STORE_BAD;
	case -2:
		return r->n == 1 ? ONVM_STORE_LOST : ONVM_STORE_BAD;
	default:
		return ONVM_STORE_BAD;
	}
}

uint64_t
onvm_store_layout_fp_add(uint64_t fp, const void *data, size_t len)
{
	const uint8_t *p = data;

	for (size_t i = 0; i < len; i++) {
		fp ^= p[i];
		fp *= UINT64_C(0x100000001b3);
	}
	return fp;
}
