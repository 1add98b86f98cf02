/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * The 0x88B5 timestamp shim (layout in plog_shim.h).  Inserting it moves
 * only the two MAC addresses (12 bytes) into the room the caller prepended;
 * removing it moves them back: the packet's own headers never move, so the
 * cost does not depend on the packet.
 */
#include <string.h>

#include "onvm_wire.h"
#include "plog_shim.h"

/* Offsets from the frame's start. */
enum {
	OFF_TYPE = PLOG_MAC_LEN,	 /* 0x88B5 */
	OFF_VERSION = PLOG_ETH_LEN,	 /* 14 */
	OFF_FLAGS = PLOG_ETH_LEN + 1,
	OFF_INNER = PLOG_ETH_LEN + 2,
	OFF_TS = PLOG_ETH_LEN + 4,
};
_Static_assert(OFF_TS + 8 == PLOG_ETH_LEN + PLOG_SHIM_LEN, "the shim is 12 bytes");

const char *
plog_shim_reason_str(enum plog_shim_reason r)
{
	static const char *const names[PLOG_SHIM_REASON_MAX] = {
		[PLOG_SHIM_OK] = "ok",
		[PLOG_SHIM_NOT_SHIM] = "not_shim",
		[PLOG_SHIM_SHORT] = "short",
		[PLOG_SHIM_BAD_VERSION] = "bad_version",
		[PLOG_SHIM_BAD_FLAGS] = "bad_flags",
		[PLOG_SHIM_NESTED] = "nested",
		[PLOG_SHIM_ZERO_TS] = "zero_ts",
	};

	return (unsigned int)r < PLOG_SHIM_REASON_MAX ? names[r] : "unknown";
}

enum plog_shim_reason
plog_shim_parse(const uint8_t *frame, size_t len, struct plog_shim *out)
{
	uint64_t ts;

	if (len < PLOG_ETH_LEN || onvm_get_be16(frame + OFF_TYPE) != PLOG_ETHERTYPE)
		return len < PLOG_ETH_LEN ? PLOG_SHIM_SHORT : PLOG_SHIM_NOT_SHIM;
	if (len < PLOG_ETH_LEN + PLOG_SHIM_LEN)
		return PLOG_SHIM_SHORT;
	if (frame[OFF_VERSION] != PLOG_SHIM_VERSION)
		return PLOG_SHIM_BAD_VERSION;
	if ((frame[OFF_FLAGS] & ~PLOG_SHIM_F_KNOWN) != 0)
		return PLOG_SHIM_BAD_FLAGS;
	if (onvm_get_be16(frame + OFF_INNER) == PLOG_ETHERTYPE)
		return PLOG_SHIM_NESTED;
	ts = onvm_get_be64(frame + OFF_TS);
	if (ts == 0)
		return PLOG_SHIM_ZERO_TS;
	out->version = frame[OFF_VERSION];
	out->flags = frame[OFF_FLAGS];
	out->inner_type = onvm_get_be16(frame + OFF_INNER);
	out->ts = ts;
	return PLOG_SHIM_OK;
}

int
plog_shim_push(uint8_t *frame, size_t len, uint64_t ts, uint8_t flags)
{
	const uint8_t *orig = frame + PLOG_SHIM_LEN;
	uint16_t inner;

	if (len < PLOG_SHIM_LEN + PLOG_ETH_LEN || ts == 0 || (flags & ~PLOG_SHIM_F_KNOWN) != 0)
		return -1;
	inner = onvm_get_be16(orig + OFF_TYPE);
	if (inner == PLOG_ETHERTYPE)
		return -1; /* already shimmed: never nest */
	memmove(frame, orig, PLOG_MAC_LEN);
	onvm_put_be16(frame + OFF_TYPE, PLOG_ETHERTYPE);
	frame[OFF_VERSION] = PLOG_SHIM_VERSION;
	frame[OFF_FLAGS] = flags;
	onvm_put_be16(frame + OFF_INNER, inner);
	onvm_put_be64(frame + OFF_TS, ts);
	return 0;
}

int
plog_shim_pop(uint8_t *frame, size_t len)
{
	struct plog_shim sh;

	if (plog_shim_parse(frame, len, &sh) != PLOG_SHIM_OK)
		return -1;
	plog_shim_strip(frame, &sh);
	return 0;
}

void
plog_shim_strip(uint8_t *frame, const struct plog_shim *sh)
{
	/* The inner EtherType goes where the shim's last two bytes are, right
	 * before the payload; the MACs go in front of it. */
	onvm_put_be16(frame + PLOG_SHIM_LEN + OFF_TYPE, sh->inner_type);
	memmove(frame + PLOG_SHIM_LEN, frame, PLOG_MAC_LEN);
}

int
plog_shim_set_flags(uint8_t *frame, size_t len, uint8_t flags)
{
	struct plog_shim sh;

	if ((flags & ~PLOG_SHIM_F_KNOWN) != 0 || plog_shim_parse(frame, len, &sh) != PLOG_SHIM_OK)
		return -1;
	frame[OFF_FLAGS] = flags;
	return 0;
}
