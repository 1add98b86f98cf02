/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * fuzz_ftc.c -- libFuzzer target for FTC's piggyback header (ftc/).
 *
 * The input is a received frame.  ftc_parse() must give a known reason and
 * accept only what ftc_wire.h's layout allows: every log, record and commit
 * of an accepted frame is walked (the sanitizers check the bounds), the
 * records must fill each log exactly, and the commits' instances must
 * differ.  An accepted frame is then built again from what parse read --
 * its logs, records, commits and packet -- and must come out byte for byte
 * as it went in (but a propagating frame's padding); stripped, it must give
 * the MACs, the inner EtherType and the packet, and a strip built again
 * must give the frame.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ftc_wire.h"
#include "ftc_xfer.h"

#include "fuzz_check.h"

#define FRAME_MAX 4096
#define RECS_MAX (FTC_MAX_SECTION / FTC_RECORD_HEAD_LEN + 1)

static struct ftc_record_in recs[RECS_MAX];
static struct ftc_log_in logs[FTC_MAX_LOGS];
static struct ftc_commit commits[FTC_MAX_COMMITS];
static uint8_t again[FRAME_MAX + 64], pkt[FRAME_MAX];

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ftc_view v;
	enum ftc_reason r;
	unsigned int nrec = 0;
	size_t end;
	int n, m;

	if (size > FRAME_MAX)
		return 0;
	{
		struct ftc_xfer x;
		enum ftc_xfer_reason xr = ftc_xfer_parse(data, size, &x);

		CHECK((unsigned int)xr < FTC_XFER_REASON_MAX);
		if (xr == FTC_XFER_OK) {
			int k;

			memcpy(again, data, FTC_MAC_LEN);
			k = ftc_xfer_build(again, sizeof(again), &x);
			CHECK(k > 0 && (size_t)k <= size && memcmp(again, data, (size_t)k) == 0);
			/* a PIECE's bytes end it, or it was padded to the minimum */
			CHECK(x.op != FTC_XFER_PIECE || (size_t)k == size ||
			      (k < FTC_XFER_MIN_FRAME && size == FTC_XFER_MIN_FRAME));
		}
	}
	r = ftc_parse(data, size, &v);
	CHECK((unsigned int)r < FTC_REASON_MAX);
	if (r != FTC_OK)
		return 0;
	CHECK(v.n_logs <= FTC_MAX_LOGS && v.n_commits <= FTC_MAX_COMMITS);
	CHECK(v.payload_off <= size);
	for (unsigned int k = 0; k < v.n_logs; k++) {
		struct ftc_log l;
		struct ftc_record rec;
		uint32_t pos = 0, sum = 0;

		ftc_log_get(&v, k, &l);
		CHECK(l.parts > 0 && l.part < l.parts && l.seq != 0);
		logs[k] = (struct ftc_log_in){.instance = l.instance, .part = l.part,
					      .parts = l.parts, .seq = l.seq, .recs = recs + nrec};
		while (ftc_record_next(&l, &pos, &rec)) {
			CHECK(rec.len > 0 && nrec < RECS_MAX);
			sum += FTC_RECORD_HEAD_LEN + rec.len;
			recs[nrec++] = (struct ftc_record_in){.region = rec.region, .len = rec.len,
							      .offset = rec.offset,
							      .bytes = rec.bytes};
			logs[k].n_recs++;
		}
		CHECK(sum == l.len); /* the records fill the log exactly */
	}
	for (unsigned int k = 0; k < v.n_commits; k++) {
		ftc_commit_get(&v, k, &commits[k]);
		CHECK(commits[k].seq != 0 || commits[k].kind == FTC_APPLIED ||
		      commits[k].kind == FTC_VOID);
		CHECK(commits[k].kind <= FTC_APPLIED);
		CHECK((commits[k].kind == FTC_VOID) == (commits[k].span != 0));
		for (unsigned int j = 0; j < k; j++)
			CHECK(commits[j].instance != commits[k].instance ||
			      commits[j].kind != commits[k].kind);
	}
	/* Built again from what was read: the same bytes. */
	if (v.flags & FTC_F_PROPAGATE) {
		n = ftc_build(again, sizeof(again), data, FTC_MAC_LEN, v.flags, logs, v.n_logs,
			      commits, v.n_commits);
		end = v.payload_off; /* (what follows is padding) */
		CHECK(n == (int)end && memcmp(again, data, end) == 0);
		CHECK(ftc_strip(pkt, sizeof(pkt), &v) == -1);
		return 0;
	}
	m = ftc_strip(pkt, sizeof(pkt), &v);
	CHECK(m == (int)(FTC_MAC_LEN + 2 + size - v.payload_off));
	CHECK(memcmp(pkt, data, FTC_MAC_LEN) == 0);
	CHECK(((pkt[12] << 8) | pkt[13]) == v.inner_ethertype);
	n = ftc_build(again, sizeof(again), pkt, (size_t)m, v.flags, logs, v.n_logs, commits,
		      v.n_commits);
	CHECK(n == (int)size && memcmp(again, data, size) == 0);
	return 0;
}
