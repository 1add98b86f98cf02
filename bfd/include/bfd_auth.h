/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * Keyed SHA1 and Meticulous Keyed SHA1 authentication (RFC 5880 section
 * 6.7.4): SHA-1 (FIPS 180-4), signing an encoded packet, checking a received
 * one, and the sequence-number window.
 */
#ifndef BFD_AUTH_H
#define BFD_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bfd_pkt.h"

#define BFD_AUTH_KEY_MAX 20 /* a SHA1 key fills the 20-byte digest field */

void bfd_sha1(const void *data, size_t len, uint8_t digest[BFD_SHA1_LEN]);

/*
 * `pkt` is an encoded packet (bfd_pkt_encode) of `len` bytes with a keyed
 * SHA1 section: put the key (zero-padded to 20 bytes) in the digest field,
 * hash the whole packet, store the hash there.  -1 if the packet has no
 * SHA1 section or the key is longer than 20 bytes.
 */
int bfd_auth_sha1_sign(uint8_t *pkt, size_t len, const uint8_t *key, size_t keylen);

/* True if the digest of received packet `pkt` (decoded as `c`) is right for
 * `key`.  The comparison takes the same time whatever the digest. */
bool bfd_auth_sha1_digest_ok(const uint8_t *pkt, size_t len, const struct bfd_ctrl *c,
			     const uint8_t *key, size_t keylen);

/*
 * Section 6.7.4 sequence window: with a known last sequence number `rcv_seq`,
 * keyed SHA1 accepts rcv_seq .. rcv_seq + 3 * detect_mult, meticulous
 * rcv_seq + 1 .. rcv_seq + 3 * detect_mult (modulo 2^32).  Unknown: anything.
 */
bool bfd_auth_seq_ok(bool known, uint32_t rcv_seq, uint32_t seq, bool meticulous,
		     uint8_t detect_mult);

#endif /* BFD_AUTH_H */
