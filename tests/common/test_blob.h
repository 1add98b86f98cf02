/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * test_blob.h -- a byte buffer a writer callback fills (plog_log_write_pcapng
 * in the unit test and the fuzz target), and a host-order 32-bit read of the
 * result.  A write that does not fit fails, and so does every later one
 * (counted), as a full disk would.
 */
#ifndef TEST_BLOB_H
#define TEST_BLOB_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct blob {
	uint8_t *p;
	size_t n, cap;
	int calls_after_failure;
	int failed;
};

static inline int
blob_write(void *ctx, const void *buf, size_t len)
{
	struct blob *b = ctx;

	if (b->failed) {
		b->calls_after_failure++;
		return -1;
	}
	if (b->n + len > b->cap) {
		b->failed = 1;
		return -1;
	}
	memcpy(b->p + b->n, buf, len);
	b->n += len;
	return 0;
}

static inline uint32_t
rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

#endif /* TEST_BLOB_H */
