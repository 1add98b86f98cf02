/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * onvm_wire.h -- big-endian fields at any alignment, for the codecs of
 * frames that come from outside (pkt_logger's shim, RSync): memcpy instead
 * of casts, since a frame sits at whatever offset its mbuf gives it.
 */
#ifndef ONVM_WIRE_H
#define ONVM_WIRE_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

static inline uint16_t
onvm_get_be16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return be16toh(v);
}

static inline uint32_t
onvm_get_be32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return be32toh(v);
}

static inline uint64_t
onvm_get_be64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return be64toh(v);
}

static inline void
onvm_put_be16(uint8_t *p, uint16_t v)
{
	v = htobe16(v);
	memcpy(p, &v, sizeof(v));
}

static inline void
onvm_put_be32(uint8_t *p, uint32_t v)
{
	v = htobe32(v);
	memcpy(p, &v, sizeof(v));
}

static inline void
onvm_put_be64(uint8_t *p, uint64_t v)
{
	v = htobe64(v);
	memcpy(p, &v, sizeof(v));
}

#endif /* ONVM_WIRE_H */
