/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * fuzz_plog.c -- libFuzzer target for the packet logger (pkt_logger/).
 *
 * The input is used two ways:
 *   1. as a received frame: plog_shim_parse().  An accepted frame is popped
 *      and pushed back with the same timestamp and flags, and must come out
 *      byte for byte as it went in; any frame of an Ethernet header or more
 *      is pushed (after making room) and must parse back with what was given.
 *   2. as a script of log operations (append, trim, seek + read) on a small
 *      log, checked against a model: every entry appended and not trimmed is
 *      read back whole and in order, the bounds are never exceeded, and an
 *      entry leaves only by a trim.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plog_log.h"
#include "plog_shim.h"

#include "fuzz_check.h"

#define MAXOPS 512

static void
check_shim(const uint8_t *data, size_t size)
{
	static uint8_t buf[2048 + PLOG_SHIM_LEN], copy[2048 + PLOG_SHIM_LEN];
	struct plog_shim sh, again;

	if (size > 2048)
		size = 2048;
	if (plog_shim_parse(data, size, &sh) == PLOG_SHIM_OK) {
		memcpy(buf, data, size);
		CHECK(plog_shim_pop(buf, size) == 0);
		/* the popped frame starts PLOG_SHIM_LEN in; push it back */
		CHECK(plog_shim_push(buf, size, sh.ts, sh.flags) == 0);
		CHECK(memcmp(buf, data, size) == 0);
	}
	if (size >= PLOG_ETH_LEN) {
		uint16_t type = (uint16_t)(data[12] << 8 | data[13]);

		memset(buf, 0, PLOG_SHIM_LEN);
		memcpy(buf + PLOG_SHIM_LEN, data, size);
		memcpy(copy, buf, size + PLOG_SHIM_LEN);
		if (plog_shim_push(buf, size + PLOG_SHIM_LEN, 42, PLOG_SHIM_F_REPLAY) == 0) {
			CHECK(type != PLOG_ETHERTYPE);
			CHECK(plog_shim_parse(buf, size + PLOG_SHIM_LEN, &again) == PLOG_SHIM_OK);
			CHECK(again.ts == 42 && again.inner_type == type);
			CHECK(plog_shim_pop(buf, size + PLOG_SHIM_LEN) == 0);
			CHECK(memcmp(buf + PLOG_SHIM_LEN, data, size) == 0);
		} else {
			CHECK(type == PLOG_ETHERTYPE);
			CHECK(memcmp(buf, copy, size + PLOG_SHIM_LEN) == 0);
		}
	}
}

static uint8_t
frame_byte(uint64_t ts, uint32_t i)
{
	return (uint8_t)(ts * 131 + i * 7);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint64_t mem[(PLOG_LOG_REC_HDR + PLOG_LOG_MAX_FRAME) / 8 * 2];
	static uint8_t frame[PLOG_LOG_MAX_FRAME];
	uint64_t ts_of[MAXOPS + 1];
	uint32_t len_of[MAXOPS + 1];
	bool present[MAXOPS + 1] = {0};
	uint32_t n = 0, held = 0;
	uint64_t last_ts = 0, trimmed = 0;
	struct plog_log log;
	struct plog_cursor c;
	struct plog_entry e;

	check_shim(data, size);
	CHECK(plog_log_init(&log, mem, sizeof(mem), 8 + (size > 0 ? data[0] % 16 : 0)) == 0);
	for (size_t i = 1; i + 2 < size && n < MAXOPS; i += 3) {
		uint8_t op = data[i] % 4;
		uint16_t arg = (uint16_t)(data[i + 1] << 8 | data[i + 2]);

		if (op <= 1) { /* append */
			uint64_t ts = last_ts + 1 + (arg & 3);
			uint32_t len = 1 + (uint32_t)arg % PLOG_LOG_MAX_FRAME;
			int rc;

			for (uint32_t k = 0; k < len; k++)
				frame[k] = frame_byte(ts, k);
			rc = plog_log_append(&log, ts, frame, len);
			CHECK(rc == 0 || rc == -ENOSPC);
			if (rc == 0) {
				n++;
				ts_of[n] = ts;
				len_of[n] = len;
				present[n] = true;
				held++;
				last_ts = ts;
			}
		} else if (op == 2) { /* trim, never past what was sent */
			uint64_t wm = trimmed + (arg % 8);
			uint32_t expect = 0;

			if (wm > last_ts)
				wm = last_ts;
			if (wm <= trimmed)
				continue;
			for (uint32_t k = 1; k <= n; k++)
				if (present[k] && ts_of[k] <= wm) {
					present[k] = false;
					expect++;
				}
			CHECK(plog_log_trim(&log, wm) == expect);
			held -= expect;
			trimmed = wm;
		} else { /* replay from somewhere */
			uint64_t from = trimmed + (arg % 4), prev = 0;
			uint32_t k = 1, got = 0;

			plog_log_seek(&log, &c, from);
			while (plog_log_read(&log, &c, &e) == 1) {
				while (k <= n && !(present[k] && ts_of[k] > from))
					k++;
				CHECK(k <= n && e.ts == ts_of[k] && e.len == len_of[k] && e.ts > prev);
				for (uint32_t b = 0; b < e.len; b++)
					CHECK(e.frame[b] == frame_byte(e.ts, b));
				prev = e.ts;
				k++;
				got++;
			}
			while (k <= n && !(present[k] && ts_of[k] > from))
				k++;
			CHECK(k > n); /* nothing was skipped */
			(void)got;
		}
		CHECK(plog_log_pkts(&log) == held && held <= log.max_pkts);
		CHECK(log.tail - log.head <= log.size);
	}
	return 0;
}
