/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * Keyed SHA1 for BFD (RFC 5880 section 6.7.4).  SHA-1 is written out here
 * (FIPS 180-4, section 6.1) rather than pulled from a crypto library: BFD
 * needs only this one digest over packets of at most 64 bytes, and the
 * project's dependencies stay what Debian's DPDK already brings.
 */
#include <string.h>

#include "bfd_auth.h"

static uint32_t
rol(uint32_t x, int n)
{
	return x << n | x >> (32 - n);
}

static void
sha1_block(uint32_t h[5], const uint8_t *p)
{
	uint32_t w[80], a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];

	for (int t = 0; t < 16; t++)
		w[t] = (uint32_t)p[4 * t] << 24 | (uint32_t)p[4 * t + 1] << 16 |
		       (uint32_t)p[4 * t + 2] << 8 | p[4 * t + 3];
	for (int t = 16; t < 80; t++)
		w[t] = rol(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);
	for (int t = 0; t < 80; t++) {
		uint32_t f, k, tmp;

		if (t < 20) {
			f = (b & c) | (~b & d);
			k = 0x5a827999;
		} else if (t < 40) {
			f = b ^ c ^ d;
			k = 0x6ed9eba1;
		} else if (t < 60) {
			f = (b & c) | (b & d) | (c & d);
			k = 0x8f1bbcdc;
		} else {
			f = b ^ c ^ d;
			k = 0xca62c1d6;
		}
		tmp = rol(a, 5) + f + e + k + w[t];
		e = d;
		d = c;
		c = rol(b, 30);
		b = a;
		a = tmp;
	}
	h[0] += a;
	h[1] += b;
	h[2] += c;
	h[3] += d;
	h[4] += e;
}

void
bfd_sha1(const void *data, size_t len, uint8_t digest[BFD_SHA1_LEN])
{
	uint32_t h[5] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0};
	const uint8_t *p = data;
	uint8_t last[128];
	size_t rest = len % 64, tail;
	uint64_t bits = (uint64_t)len * 8;

	for (size_t off = 0; off + 64 <= len; off += 64)
		sha1_block(h, p + off);
	/* Padding: 0x80, zeros, the message length in bits (big endian). */
	memset(last, 0, sizeof(last));
	memcpy(last, p + len - rest, rest);
	last[rest] = 0x80;
	tail = rest + 1 + 8 <= 64 ? 64 : 128;
	for (int i = 0; i < 8; i++)
		last[tail - 1 - i] = (uint8_t)(bits >> (8 * i));
	sha1_block(h, last);
	if (tail == 128)
		sha1_block(h, last + 64);
	for (int i = 0; i < 5; i++) {
		digest[4 * i] = h[i] >> 24;
		digest[4 * i + 1] = h[i] >> 16;
		digest[4 * i + 2] = h[i] >> 8;
		digest[4 * i + 3] = h[i];
	}
}

static bool
is_sha1(uint8_t type)
{
	return type == BFD_AUTH_KEYED_SHA1 || type == BFD_AUTH_METICULOUS_SHA1;
}

/* Offset of the digest field of the SHA1 section at the end of the mandatory
 * section, or 0 if `pkt` does not carry one. */
static size_t
digest_offset(const uint8_t *pkt, size_t len)
{
	if (len < BFD_PKT_LEN + BFD_AUTH_SHA1_LEN || !(pkt[1] & BFD_FLAG_AUTH) ||
	    !is_sha1(pkt[BFD_PKT_LEN]) || pkt[BFD_PKT_LEN + 1] != BFD_AUTH_SHA1_LEN)
		return 0;
	return BFD_PKT_LEN + 8;
}

int
bfd_auth_sha1_sign(uint8_t *pkt, size_t len, const uint8_t *key, size_t keylen)
{
	size_t off = digest_offset(pkt, len);
	uint8_t digest[BFD_SHA1_LEN];

	if (off == 0 || keylen > BFD_AUTH_KEY_MAX || pkt[3] > len ||
	    pkt[3] < off + BFD_SHA1_LEN)
		return -1;
	memset(pkt + off, 0, BFD_SHA1_LEN);
	memcpy(pkt + off, key, keylen);
	bfd_sha1(pkt, pkt[3], digest);
	memcpy(pkt + off, digest, BFD_SHA1_LEN);
	return 0;
}

bool
bfd_auth_sha1_digest_ok(const uint8_t *pkt, size_t len, const struct bfd_ctrl *c,
			const uint8_t *key, size_t keylen)
{
	uint8_t copy[BFD_PKT_MAX_LEN], digest[BFD_SHA1_LEN], diff = 0;
	size_t off = digest_offset(pkt, len);

	if (off == 0 || keylen > BFD_AUTH_KEY_MAX || c->length > sizeof(copy) ||
	    c->length < off + BFD_SHA1_LEN)
		return false;
	memcpy(copy, pkt, c->length);
	memset(copy + off, 0, BFD_SHA1_LEN);
	memcpy(copy + off, key, keylen);
	bfd_sha1(copy, c->length, digest);
	for (int i = 0; i < BFD_SHA1_LEN; i++)
		diff |= digest[i] ^ pkt[off + i];
	return diff == 0;
}

bool
bfd_auth_seq_ok(bool known, uint32_t rcv_seq, uint32_t seq, bool meticulous,
		uint8_t detect_mult)
{
	uint32_t lo = rcv_seq + (meticulous ? 1 : 0);
	uint32_t span = 3u * detect_mult - (meticulous ? 1 : 0);

	if (!known)
		return true;
	/* seq in [lo, lo + span], modulo 2^32. */
	return (uint32_t)(seq - lo) <= span;
}
