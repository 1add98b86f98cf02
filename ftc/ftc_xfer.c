/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * ftc_xfer.c -- FTC's state transfer frames (ftc_xfer.h).
 */
#include <string.h>

#include "ftc_wire.h"
#include "ftc_xfer.h"
#include "onvm_wire.h"

static const char *const reasons[FTC_XFER_REASON_MAX] = {
	[FTC_XFER_OK] = "ok",
	[FTC_XFER_NOT_XFER] = "not_xfer",
	[FTC_XFER_SHORT] = "short",
	[FTC_XFER_BAD_OP] = "bad_op",
	[FTC_XFER_BAD_LENGTH] = "bad_length",
	[FTC_XFER_BAD_FIELD] = "bad_field",
};

const char *
ftc_xfer_reason_str(enum ftc_xfer_reason r)
{
	return (unsigned int)r < FTC_XFER_REASON_MAX ? reasons[r] : "?";
}

enum ftc_xfer_reason
ftc_xfer_parse(const uint8_t *frame, size_t len, struct ftc_xfer *x)
{
	const uint8_t *h = frame + FTC_MAC_LEN;

	if (len < FTC_MAC_LEN + 3 || onvm_get_be16(h) != FTC_ETHERTYPE ||
	    h[2] != FTC_XFER_VERSION)
		return len < FTC_MAC_LEN + 3 ? FTC_XFER_SHORT : FTC_XFER_NOT_XFER;
	if (len < FTC_MAC_LEN + FTC_XFER_HEAD_LEN)
		return FTC_XFER_SHORT;
	memset(x, 0, sizeof(*x));
	x->op = h[3];
	x->chain = onvm_get_be16(h + 4);
	x->from = h[6];
	x->instance = h[7];
	x->nonce = onvm_get_be32(h + 8);
	x->seq = onvm_get_be64(h + 12);
	x->index = onvm_get_be32(h + 20);
	switch (x->op) {
	case FTC_XFER_FETCH:
	case FTC_XFER_RESYNC:
		return x->seq != 0 || x->index != 0 ? FTC_XFER_BAD_FIELD : FTC_XFER_OK;
	case FTC_XFER_END:
		if (len < FTC_MAC_LEN + FTC_XFER_HEAD_LEN + FTC_XFER_END_LEN)
			return FTC_XFER_SHORT;
		x->high = onvm_get_be64(h + FTC_XFER_HEAD_LEN);
		return FTC_XFER_OK;
	case FTC_XFER_PIECE: {
		const uint8_t *p = h + FTC_XFER_HEAD_LEN;
		size_t want;

		if (len < FTC_MAC_LEN + FTC_XFER_HEAD_LEN + FTC_XFER_PIECE_HEAD)
			return FTC_XFER_SHORT;
		x->region = onvm_get_be16(p);
		x->len = onvm_get_be16(p + 2);
		x->offset = onvm_get_be32(p + 4);
		x->bytes = p + FTC_XFER_PIECE_HEAD;
		want = FTC_MAC_LEN + FTC_XFER_HEAD_LEN + FTC_XFER_PIECE_HEAD + (size_t)x->len;
		/* its bytes end it, but for the padding of a frame shorter
		 * than Ethernet's minimum */
		if (x->len == 0 || x->len > FTC_XFER_PIECE_MAX ||
		    (len != want && !(want < FTC_XFER_MIN_FRAME && len == FTC_XFER_MIN_FRAME)))
			return FTC_XFER_BAD_LENGTH;
		return FTC_XFER_OK;
	}
	default:
		return FTC_XFER_BAD_OP;
	}
}

int
ftc_xfer_build(uint8_t *out, size_t cap, const struct ftc_xfer *x)
{
	const size_t n = FTC_MAC_LEN + FTC_XFER_HEAD_LEN +
			 (x->op == FTC_XFER_PIECE ? FTC_XFER_PIECE_HEAD + (size_t)x->len
			  : x->op == FTC_XFER_END ? FTC_XFER_END_LEN
						  : 0);
	uint8_t *h = out + FTC_MAC_LEN;
	struct ftc_xfer check;

	if (n > cap || x->op < FTC_XFER_FETCH || x->op > FTC_XFER_RESYNC ||
	    (x->op == FTC_XFER_PIECE && (x->len == 0 || x->len > FTC_XFER_PIECE_MAX)) ||
	    ((x->op == FTC_XFER_FETCH || x->op == FTC_XFER_RESYNC) && (x->seq || x->index)))
		return -1;
	onvm_put_be16(h, FTC_ETHERTYPE);
	h[2] = FTC_XFER_VERSION;
	h[3] = x->op;
	onvm_put_be16(h + 4, x->chain);
	h[6] = x->from;
	h[7] = x->instance;
	onvm_put_be32(h + 8, x->nonce);
	onvm_put_be64(h + 12, x->seq);
	onvm_put_be32(h + 20, x->index);
	if (x->op == FTC_XFER_END)
		onvm_put_be64(h + FTC_XFER_HEAD_LEN, x->high);
	if (x->op == FTC_XFER_PIECE) {
		uint8_t *p = h + FTC_XFER_HEAD_LEN;

		onvm_put_be16(p, x->region);
		onvm_put_be16(p + 2, x->len);
		onvm_put_be32(p + 4, x->offset);
		memcpy(p + FTC_XFER_PIECE_HEAD, x->bytes, x->len);
	}
	return ftc_xfer_parse(out, n, &check) == FTC_XFER_OK ? (int)n : -1;
}
