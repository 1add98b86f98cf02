/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * BFD control packet codec (RFC 5880 section 4.1) and the packet-only
 * reception checks of section 6.8.6.  Wire layout of the mandatory section:
 *
 *   0: Vers(3) Diag(5) | 1: Sta(2) P F C A D M | 2: Detect Mult | 3: Length
 *   4: My Discriminator | 8: Your Discriminator | 12: Desired Min TX Interval
 *  16: Required Min RX Interval | 20: Required Min Echo RX Interval
 *
 * followed, with the A bit, by Auth Type | Auth Len | type-specific data.
 */
#include <string.h>

#include "bfd_pkt.h"

static uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void
put32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

/* The auth section length each type must have; 0: any that fits (unknown types
 * are the session's to refuse).  Simple password: 3 + 1..16 bytes. */
static int
auth_len_ok(uint8_t type, uint8_t len)
{
	switch (type) {
	case BFD_AUTH_SIMPLE:
		return len >= 4 && len <= 3 + BFD_AUTH_SIMPLE_MAX;
	case BFD_AUTH_KEYED_MD5:
	case BFD_AUTH_METICULOUS_MD5:
		return len == 24;
	case BFD_AUTH_KEYED_SHA1:
	case BFD_AUTH_METICULOUS_SHA1:
		return len == BFD_AUTH_SHA1_LEN;
	default:
		return len >= 2;
	}
}

static void
decode_auth(const uint8_t *a, struct bfd_auth *out, uint16_t offset)
{
	memset(out, 0, sizeof(*out));
	out->type = a[0];
	out->len = a[1];
	out->offset = offset;
	if (out->len >= 3)
		out->key_id = a[2];
	switch (out->type) {
	case BFD_AUTH_SIMPLE:
		out->data_len = out->len - 3;
		memcpy(out->data, a + 3, out->data_len);
		break;
	case BFD_AUTH_KEYED_MD5:
	case BFD_AUTH_METICULOUS_MD5:
		out->seq = get32(a + 4);
		out->data_len = 16;
		memcpy(out->data, a + 8, 16);
		break;
	case BFD_AUTH_KEYED_SHA1:
	case BFD_AUTH_METICULOUS_SHA1:
		out->seq = get32(a + 4);
		out->data_len = BFD_SHA1_LEN;
		memcpy(out->data, a + 8, BFD_SHA1_LEN);
		break;
	default:
		break;
	}
}

enum bfd_rx_reason
bfd_pkt_decode(const uint8_t *buf, size_t len, struct bfd_ctrl *out)
{
	uint8_t flags;

	if (len < BFD_PKT_LEN)
		return BFD_RX_SHORT;
	if (buf[0] >> 5 != BFD_VERSION)
		return BFD_RX_BAD_VERSION;
	flags = buf[1] & 0x3f;
	if (buf[3] < ((flags & BFD_FLAG_AUTH) ? BFD_PKT_LEN + 2 : BFD_PKT_LEN) || buf[3] > len)
		return BFD_RX_BAD_LENGTH;
	if (buf[2] == 0)
		return BFD_RX_ZERO_DETECT_MULT;
	if (flags & BFD_FLAG_MULTI)
		return BFD_RX_MULTIPOINT;

	memset(out, 0, sizeof(*out));
	out->version = buf[0] >> 5;
	out->diag = buf[0] & 0x1f;
	out->state = buf[1] >> 6;
	out->flags = flags;
	out->detect_mult = buf[2];
	out->length = buf[3];
	out->my_disc = get32(buf + 4);
	out->your_disc = get32(buf + 8);
	out->desired_min_tx_us = get32(buf + 12);
	out->required_min_rx_us = get32(buf + 16);
	out->required_min_echo_rx_us = get32(buf + 20);

	if (out->my_disc == 0)
		return BFD_RX_ZERO_MY_DISC;
	if (out->your_disc == 0 && out->state != BFD_STATE_DOWN &&
	    out->state != BFD_STATE_ADMIN_DOWN)
		return BFD_RX_ZERO_YOUR_DISC;
	if (flags & BFD_FLAG_AUTH) {
		const uint8_t *a = buf + BFD_PKT_LEN;

		if (BFD_PKT_LEN + (size_t)a[1] > out->length || !auth_len_ok(a[0], a[1]))
			return BFD_RX_BAD_AUTH_LEN;
		decode_auth(a, &out->auth, BFD_PKT_LEN);
	}
	return BFD_RX_OK;
}

int
bfd_pkt_encode(const struct bfd_ctrl *c, uint8_t *buf, size_t buflen)
{
	size_t len = BFD_PKT_LEN;
	uint8_t flags = c->flags & 0x3f & ~BFD_FLAG_MULTI;

	if (c->detect_mult == 0 || c->state > BFD_STATE_UP || c->diag >= BFD_DIAG_MAX)
		return -1;
	if (flags & BFD_FLAG_AUTH) {
		const struct bfd_auth *a = &c->auth;

		if (!auth_len_ok(a->type, a->len) || a->len > BFD_PKT_MAX_LEN - BFD_PKT_LEN)
			return -1;
		len += a->len;
	}
	if (buflen < len)
		return -1;
	memset(buf, 0, len);
	buf[0] = (uint8_t)(BFD_VERSION << 5 | c->diag);
	buf[1] = (uint8_t)(c->state << 6 | flags);
	buf[2] = c->detect_mult;
	buf[3] = (uint8_t)len;
	put32(buf + 4, c->my_disc);
	put32(buf + 8, c->your_disc);
	put32(buf + 12, c->desired_min_tx_us);
	put32(buf + 16, c->required_min_rx_us);
	put32(buf + 20, c->required_min_echo_rx_us);
	if (flags & BFD_FLAG_AUTH) {
		const struct bfd_auth *a = &c->auth;
		uint8_t *p = buf + BFD_PKT_LEN;

		p[0] = a->type;
		p[1] = a->len;
		switch (a->type) {
		case BFD_AUTH_SIMPLE:
			p[2] = a->key_id;
			memcpy(p + 3, a->data, a->len - 3u);
			break;
		case BFD_AUTH_KEYED_MD5:
		case BFD_AUTH_METICULOUS_MD5:
			p[2] = a->key_id;
			put32(p + 4, a->seq);
			memcpy(p + 8, a->data, 16);
			break;
		case BFD_AUTH_KEYED_SHA1:
		case BFD_AUTH_METICULOUS_SHA1:
			p[2] = a->key_id;
			put32(p + 4, a->seq);
			memcpy(p + 8, a->data, BFD_SHA1_LEN);
			break;
		default:
			return -1; /* we only send what we can describe */
		}
	}
	return (int)len;
}

const char *
bfd_rx_reason_str(enum bfd_rx_reason r)
{
	static const char *const names[BFD_RX_REASON_MAX] = {
	    [BFD_RX_OK] = "ok",
	    [BFD_RX_SHORT] = "short",
	    [BFD_RX_BAD_VERSION] = "bad_version",
	    [BFD_RX_BAD_LENGTH] = "bad_length",
	    [BFD_RX_ZERO_DETECT_MULT] = "zero_detect_mult",
	    [BFD_RX_MULTIPOINT] = "multipoint",
	    [BFD_RX_ZERO_MY_DISC] = "zero_my_disc",
	    [BFD_RX_ZERO_YOUR_DISC] = "zero_your_disc",
	    [BFD_RX_BAD_AUTH_LEN] = "bad_auth_len",
	    [BFD_RX_NO_SESSION] = "no_session",
	    [BFD_RX_AUTH_MISMATCH] = "auth_mismatch",
	    [BFD_RX_AUTH_FAILED] = "auth_failed",
	    [BFD_RX_ADMIN_DOWN] = "admin_down",
	    [BFD_RX_BAD_TTL] = "bad_ttl",
	    [BFD_RX_BAD_UDP] = "bad_udp",
	    [BFD_RX_BAD_IP] = "bad_ip",
	    [BFD_RX_BAD_ARP] = "bad_arp",
	};

	return (unsigned int)r < BFD_RX_REASON_MAX && names[r] ? names[r] : "?";
}

const char *
bfd_state_str(enum bfd_state s)
{
	static const char *const names[] = {"AdminDown", "Down", "Init", "Up"};

	return (unsigned int)s < 4 ? names[s] : "?";
}

const char *
bfd_diag_str(enum bfd_diag d)
{
	static const char *const names[] = {
	    "none",	       "control_expired", "echo_failed",	"neighbor_down",
	    "forwarding_reset", "path_down",	   "concat_path_down", "admin_down",
	    "rev_concat_path_down",
	};

	return (unsigned int)d < sizeof(names) / sizeof(names[0]) ? names[d] : "reserved";
}
