/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * fuzz_xmove.c -- libFuzzer target for the frames of a cross-node flow
 * migration (common/onvm_xmove_wire.c, 0x88B5 version 4).
 *
 * The input is a received frame, given to both decoders.  Each must give a
 * known reason, agree with onvm_xm_peek() on what is not ours or cut short,
 * and accept only what onvm_xmove_wire.h allows (types, flags and fields in
 * range, a copy's move tag, no tag on a handoff or return).  An accepted
 * control frame is encoded again from what was decoded, with the input's
 * MACs, and must come out byte for byte as the input's first `len` bytes
 * (what follows is padding); one byte less of it is short.  An accepted data
 * frame's 42 bytes are encoded again and must equal the input's.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "onvm_xmove_wire.h"

#include "fuzz_check.h"

#define FRAME_MAX 4096

static uint8_t again[FRAME_MAX];

static void
check_data(const uint8_t *data, size_t size)
{
	struct onvm_xm_data d;
	enum onvm_xm_reason r = onvm_xm_data_decode(data, size, &d);
	int t = onvm_xm_peek(data, size);
	bool tagged;

	CHECK((unsigned int)r < ONVM_XM_REASON_MAX);
	CHECK(strcmp(onvm_xm_reason_str(r), "unknown") != 0);
	CHECK(t < 0 ? r == (enum onvm_xm_reason)(-t) : r != ONVM_XM_NOT_XM);
	if (r != ONVM_XM_OK)
		return;
	CHECK(size >= ONVM_XM_DATA_LEN + 14);
	CHECK(t == d.type && d.type >= ONVM_XM_COPY && d.type <= ONVM_XM_RETURN);
	CHECK(d.service != 0 && (d.flags & ~ONVM_XM_F_ND) == 0);
	tagged = d.type == ONVM_XM_COPY || d.type == ONVM_XM_BUFFERED;
	if (d.type == ONVM_XM_RETURN)
		CHECK(d.inst == 0 && d.action <= ONVM_XM_ACTION_MAXV);
	else
		CHECK(d.action == 0 && d.destination == 0);
	if (tagged)
		CHECK(d.tag >> 63 != 0 && (d.tag & ((UINT64_C(1) << 40) - 1)) != 0);
	else
		CHECK(d.tag == 0);

	memset(again, 0xa5, ONVM_XM_DATA_LEN + 1);
	onvm_xm_data_encode(again, data, &d);
	CHECK(memcmp(again, data, ONVM_XM_DATA_LEN) == 0);
	CHECK(again[ONVM_XM_DATA_LEN] == 0xa5); /* not a byte more */
	/* the fields alone, without a whole Ethernet header after them: short */
	CHECK(onvm_xm_data_decode(data, ONVM_XM_DATA_LEN + 13, &d) == ONVM_XM_SHORT);
}

static void
check_ctl(const uint8_t *data, size_t size)
{
	struct onvm_xm_ctl c, c2;
	enum onvm_xm_reason r = onvm_xm_ctl_decode(data, size, &c);
	int t = onvm_xm_peek(data, size);
	size_t n;

	CHECK((unsigned int)r < ONVM_XM_REASON_MAX);
	CHECK(strcmp(onvm_xm_reason_str(r), "unknown") != 0);
	CHECK(t < 0 ? r == (enum onvm_xm_reason)(-t) : r != ONVM_XM_NOT_XM);
	if (r != ONVM_XM_OK)
		return;
	CHECK(t == c.type && c.type >= ONVM_XM_SYNC && c.type <= ONVM_XM_STATUS);
	switch (c.type) {
	case ONVM_XM_SYNC: {
		const struct onvm_xm_sync *s = &c.u.sync;

		CHECK(s->service != 0 && s->method <= ONVM_XM_METHOD_MAX &&
		      s->state <= ONVM_XM_STATE_MAXV && s->fail <= ONVM_XM_FAIL_MAXV);
		CHECK(s->n_included <= ONVM_XM_INCLUDED_MAX && s->state_len <= ONVM_XM_STATE_MAX);
		CHECK((s->flags & ONVM_XM_S_EXPORTED) ? s->state_len >= 8ull * s->n_included
						      : s->state_len == 0 && s->n_included == 0);
		break;
	}
	case ONVM_XM_STATE: {
		const struct onvm_xm_state *s = &c.u.state;

		CHECK(s->len >= 1 && s->len <= ONVM_XM_STATE_CHUNK);
		CHECK(s->total <= ONVM_XM_STATE_MAX && (uint64_t)s->offset + s->len <= s->total);
		/* the bytes are the frame's (the sanitizer checks the read) */
		CHECK(s->bytes >= data && s->bytes + s->len <= data + size);
		break;
	}
	case ONVM_XM_LOG: {
		const struct onvm_xm_log *l = &c.u.log;

		CHECK(l->first >= 1 && l->count >= 1 && l->count <= ONVM_XM_LOG_MAX);
		CHECK(l->first + l->count - 1 < UINT64_C(1) << 40);
		for (unsigned int i = 0; i < l->count; i++) {
			CHECK(l->e[i].n_nd <= ONVM_XM_ND_MAX &&
			      (l->e[i].flags & ~UINT32_C(7)) == 0);
			for (unsigned int k = l->e[i].n_nd; k < ONVM_XM_ND_MAX; k++)
				CHECK(l->e[i].nd[k] == 0);
		}
		break;
	}
	default: {
		const struct onvm_xm_status *s = &c.u.status;

		CHECK(s->state <= ONVM_XM_STATE_MAXV && s->fail <= ONVM_XM_FAIL_MAXV);
		CHECK((s->flags & ~(ONVM_XM_T_OPEN | ONVM_XM_T_IMPORTED | ONVM_XM_T_LOSSY)) == 0);
		CHECK(s->state_acked <= ONVM_XM_STATE_MAX && s->log_next != 0);
		break;
	}
	}

	/* Encoded again, with the same MACs: the same bytes. */
	n = onvm_xm_ctl_encode(again, sizeof(again), data, &c);
	CHECK(n > 0 && n <= size && n <= ONVM_XM_FRAME_MAX);
	CHECK(memcmp(again, data, n) == 0);
	/* ... all of them needed, and enough */
	CHECK(onvm_xm_ctl_decode(data, n - 1, &c2) == ONVM_XM_SHORT);
	CHECK(onvm_xm_ctl_decode(again, n, &c2) == ONVM_XM_OK);
	CHECK(onvm_xm_ctl_encode(again, n - 1, data, &c) == 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > FRAME_MAX)
		return 0;
	check_data(data, size);
	check_ctl(data, size);
	return 0;
}
