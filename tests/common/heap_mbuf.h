/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * heap_mbuf.h -- rte_mbufs on the plain heap, for tests and fuzz targets that
 * exercise header parsing without an EAL.  Each segment's data is an
 * exact-size heap copy, so AddressSanitizer catches any read past the frame.
 * Only fields the parsers read are set; never hand these to a PMD or a pool.
 */
#ifndef TEST_HEAP_MBUF_H
#define TEST_HEAP_MBUF_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

/* One segment over a copy of bytes[0..len); NULL if out of memory. */
static inline struct rte_mbuf *
heap_mbuf(const uint8_t *bytes, size_t len)
{
	struct rte_mbuf *m =
	    aligned_alloc(RTE_CACHE_LINE_SIZE, RTE_ALIGN_CEIL(sizeof(*m), RTE_CACHE_LINE_SIZE));
	/* malloc(0) may return NULL: keep a unique pointer for empty frames. */
	uint8_t *buf = malloc(len > 0 ? len : 1);

	if (m == NULL || buf == NULL) {
		free(m);
		free(buf);
		return NULL;
	}
	memset(m, 0, sizeof(*m));
	if (len > 0)
		memcpy(buf, bytes, len);
	m->buf_addr = buf;
	m->buf_len = (uint16_t)len;
	m->data_len = (uint16_t)len;
	m->pkt_len = (uint32_t)len;
	m->nb_segs = 1;
	return m;
}

static inline void
heap_mbuf_free(struct rte_mbuf *m)
{
	while (m != NULL) {
		struct rte_mbuf *next = m->next;

		free(m->buf_addr);
		free(m);
		m = next;
	}
}

#endif /* TEST_HEAP_MBUF_H */
