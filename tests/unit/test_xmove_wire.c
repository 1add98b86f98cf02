/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * test_xmove_wire -- the frames of a cross-node flow migration (0x88B5
 * version 4, common/onvm_xmove_wire.c): every type encoded and decoded back
 * to the same fields, its bytes at the documented offsets, and one refusal
 * per reason (each with the exact enum onvm_xm_reason), the other 0x88B5
 * versions and EtherTypes left as not ours.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "onvm_xmove_wire.h"

#define SYNC_LEN   184
#define STATE_HEAD 36
#define LOG_HEAD   40
#define LOG_ENTRY  40
#define STATUS_LEN 112
#define SEQ_MASK   ((UINT64_C(1) << 40) - 1)

static const uint8_t macs[12] = {2, 0, 0, 0, 0, 0x0b, 2, 0, 0, 0, 0, 0x0a};

/* An inner frame: Ethernet + IPv4 + UDP, 42 bytes. */
static const uint8_t inner[42] = {0x02, 0,    0,    0,	  0,   0x02, 0x02, 0, 0,   0,  0,
				  0x01, 0x08, 0x00, 0x45, 0,   0,    28,   0, 1,   0,  0,
				  64,	17,   0xee, 0xa8, 198, 18,   0,	   1, 198, 19, 0,
				  1,	0x30, 0x39, 0,	  53,  0,    8,	   0, 0};

static uint16_t
be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t
be32(const uint8_t *p)
{
	return (uint32_t)be16(p) << 16 | be16(p + 2);
}

static uint64_t
be64(const uint8_t *p)
{
	return (uint64_t)be32(p) << 32 | be32(p + 4);
}

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void
put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static void
put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

static uint64_t
tag_of(uint32_t slot, uint32_t gen, uint64_t seq)
{
	return UINT64_C(1) << 63 | (uint64_t)slot << 48 | (uint64_t)(gen & 0xff) << 40 |
	       (seq & SEQ_MASK);
}

static void
assert_hdr(const uint8_t *f, uint8_t type)
{
	assert_memory_equal(f, macs, 12);
	assert_int_equal(f[12], 0x88);
	assert_int_equal(f[13], 0xB5);
	assert_int_equal(f[14], ONVM_XM_VERSION);
	assert_int_equal(f[15], type);
	assert_int_equal(onvm_xm_peek(f, ONVM_XM_HDR_LEN), type);
}

/* ---- data frames ---- */

static struct onvm_xm_data
data_of(uint8_t type)
{
	struct onvm_xm_data d;

	memset(&d, 0, sizeof(d));
	d.type = type;
	d.service = 0x1234;
	d.chain_id = 0xbeef;
	d.chain_index = 3;
	d.flags = ONVM_XM_F_ND;
	d.in_port = 1;
	d.egress_port = 0xff;
	d.flow_hash = 0xdeadbeef;
	switch (type) {
	case ONVM_XM_COPY:
	case ONVM_XM_BUFFERED:
		d.inst = 7;
		d.tag = tag_of(23, 0x1ab, 0xfedcba9876);
		break;
	case ONVM_XM_HANDOFF:
		d.inst = 0x0102;
		break;
	default: /* RETURN */
		d.action = ONVM_XM_ACTION_MAXV;
		d.destination = 0x0203;
		break;
	}
	return d;
}

/* `d` encoded with the inner frame after it; its length. */
static size_t
data_frame(uint8_t *f, const struct onvm_xm_data *d)
{
	onvm_xm_data_encode(f, macs, d);
	memcpy(f + ONVM_XM_DATA_LEN, inner, sizeof(inner));
	return ONVM_XM_DATA_LEN + sizeof(inner);
}

static void
assert_data_equal(const struct onvm_xm_data *a, const struct onvm_xm_data *b)
{
	assert_int_equal(a->type, b->type);
	assert_int_equal(a->chain_index, b->chain_index);
	assert_int_equal(a->action, b->action);
	assert_int_equal(a->flags, b->flags);
	assert_int_equal(a->service, b->service);
	assert_int_equal(a->inst, b->inst);
	assert_int_equal(a->chain_id, b->chain_id);
	assert_int_equal(a->destination, b->destination);
	assert_int_equal(a->in_port, b->in_port);
	assert_int_equal(a->egress_port, b->egress_port);
	assert_int_equal(a->flow_hash, b->flow_hash);
	assert_true(a->tag == b->tag);
}

static void
test_data_round_trip(void **state)
{
	static const uint8_t types[] = {ONVM_XM_COPY, ONVM_XM_BUFFERED, ONVM_XM_HANDOFF,
					ONVM_XM_RETURN};
	uint8_t f[128];

	(void)state;
	for (size_t i = 0; i < sizeof(types); i++) {
		const struct onvm_xm_data d = data_of(types[i]);
		struct onvm_xm_data out;
		size_t len = data_frame(f, &d);

		memset(&out, 0xa5, sizeof(out));
		assert_int_equal(onvm_xm_data_decode(f, len, &out), ONVM_XM_OK);
		assert_data_equal(&out, &d);
		/* just an Ethernet header after the fields is enough */
		assert_int_equal(onvm_xm_data_decode(f, ONVM_XM_DATA_LEN + 14, &out), ONVM_XM_OK);
		assert_data_equal(&out, &d);
		/* the inner frame is left alone */
		assert_memory_equal(f + ONVM_XM_DATA_LEN, inner, sizeof(inner));
		/* a data frame is no control frame */
		{
			struct onvm_xm_ctl c;

			assert_int_equal(onvm_xm_ctl_decode(f, len, &c), ONVM_XM_BAD_TYPE);
			assert_int_equal(
			    onvm_xm_ctl_encode(f, sizeof(f), macs,
					       &(struct onvm_xm_ctl){.type = types[i]}),
			    0);
		}
	}
}

/* The bytes at docs/wire-format.md's offsets. */
static void
test_data_layout(void **state)
{
	struct onvm_xm_data d = data_of(ONVM_XM_COPY);
	uint8_t f[128];

	(void)state;
	memset(f, 0xee, sizeof(f));
	onvm_xm_data_encode(f, macs, &d);
	assert_hdr(f, ONVM_XM_COPY);
	assert_int_equal(be16(f + 16), 0x1234);	    /* service */
	assert_int_equal(be16(f + 18), 7);	    /* inst */
	assert_int_equal(be16(f + 20), 0xbeef);	    /* chain_id */
	assert_int_equal(f[22], 3);		    /* chain_index */
	assert_int_equal(f[23], 0);		    /* action */
	assert_int_equal(be16(f + 24), 0);	    /* destination */
	assert_int_equal(f[26], ONVM_XM_F_ND);	    /* flags */
	assert_int_equal(f[27], 1);		    /* in_port */
	assert_int_equal(f[28], 0xff);		    /* egress_port */
	assert_int_equal(f[29], 0);		    /* reserved */
	assert_int_equal(be32(f + 30), 0xdeadbeef); /* flow_hash */
	assert_true(be64(f + 34) == d.tag);
	assert_int_equal(f[ONVM_XM_DATA_LEN], 0xee); /* nothing written past the fields */

	d = data_of(ONVM_XM_RETURN);
	onvm_xm_data_encode(f, macs, &d);
	assert_hdr(f, ONVM_XM_RETURN);
	assert_int_equal(f[23], ONVM_XM_ACTION_MAXV);
	assert_int_equal(be16(f + 24), 0x0203);
	assert_true(be64(f + 34) == 0);
}

/* ---- control frames ---- */

static struct onvm_xm_ctl
sync_of(void)
{
	struct onvm_xm_ctl c;
	struct onvm_xm_sync *s = &c.u.sync;

	memset(&c, 0, sizeof(c));
	c.type = ONVM_XM_SYNC;
	c.slot = 23;
	c.gen = 0x89abcdef;
	s->service = 9;
	s->inst = 0x0405;
	s->method = ONVM_XM_METHOD_MAX;
	s->state = ONVM_XM_STATE_MAXV;
	s->flags =
	    ONVM_XM_S_START_OUT | ONVM_XM_S_END_OUT | ONVM_XM_S_SRC_GONE | ONVM_XM_S_EXPORTED;
	s->fail = ONVM_XM_FAIL_MAXV;
	s->copies = UINT64_C(0x0102030405060708);
	s->n_included = ONVM_XM_INCLUDED_MAX;
	s->state_len = ONVM_XM_STATE_MAX;
	for (int i = 0; i < 16; i++)
		s->buckets[i] = UINT64_C(0x8000000000000001) * (uint64_t)(i + 1) ^ (uint64_t)i
										       << 20;
	return c;
}

static struct onvm_xm_ctl
status_of(void)
{
	struct onvm_xm_ctl c;
	struct onvm_xm_status *s = &c.u.status;

	memset(&c, 0, sizeof(c));
	c.type = ONVM_XM_STATUS;
	c.slot = 5;
	c.gen = 77;
	s->mirror_slot = 0xff;
	s->state = 6;
	s->fail = 12;
	s->flags = ONVM_XM_T_OPEN | ONVM_XM_T_IMPORTED | ONVM_XM_T_LOSSY;
	s->state_acked = ONVM_XM_STATE_MAX;
	s->log_next = UINT64_C(1) << 40;
	s->copies_rcvd = 1;
	s->dst_seen = 2;
	s->imported_flows = 3;
	s->reprocessed = 4;
	s->skipped_included = 5;
	s->nd_replayed = 6;
	s->dst_dropped = 7;
	s->copies_lost = UINT64_MAX;
	s->nd_short = 0xfedcba98;
	return c;
}

static struct onvm_xm_ctl
log_of(uint8_t count)
{
	struct onvm_xm_ctl c;
	struct onvm_xm_log *l = &c.u.log;

	memset(&c, 0, sizeof(c));
	c.type = ONVM_XM_LOG;
	c.slot = 1;
	c.gen = 2;
	l->first = 41;
	l->count = count;
	for (unsigned int i = 0; i < count; i++) {
		l->e[i].flags = i & 0x7;
		l->e[i].n_nd = i % (ONVM_XM_ND_MAX + 1);
		for (unsigned int k = 0; k < l->e[i].n_nd; k++)
			l->e[i].nd[k] = UINT64_C(0x1111111111111111) * (k + 1) + i;
	}
	return c;
}

static void
assert_ctl_equal(const struct onvm_xm_ctl *a, const struct onvm_xm_ctl *b)
{
	assert_int_equal(a->type, b->type);
	assert_int_equal(a->slot, b->slot);
	assert_int_equal(a->gen, b->gen);
	switch (a->type) {
	case ONVM_XM_SYNC: {
		const struct onvm_xm_sync *x = &a->u.sync, *y = &b->u.sync;

		assert_int_equal(x->service, y->service);
		assert_int_equal(x->inst, y->inst);
		assert_int_equal(x->method, y->method);
		assert_int_equal(x->state, y->state);
		assert_int_equal(x->flags, y->flags);
		assert_int_equal(x->fail, y->fail);
		assert_true(x->copies == y->copies);
		assert_true(x->state_len == y->state_len);
		assert_int_equal(x->n_included, y->n_included);
		assert_memory_equal(x->buckets, y->buckets, sizeof(x->buckets));
		break;
	}
	case ONVM_XM_STATE:
		assert_int_equal(a->u.state.offset, b->u.state.offset);
		assert_int_equal(a->u.state.total, b->u.state.total);
		assert_int_equal(a->u.state.len, b->u.state.len);
		assert_memory_equal(a->u.state.bytes, b->u.state.bytes, a->u.state.len);
		break;
	case ONVM_XM_LOG:
		assert_true(a->u.log.first == b->u.log.first);
		assert_int_equal(a->u.log.count, b->u.log.count);
		for (unsigned int i = 0; i < a->u.log.count; i++) {
			assert_int_equal(a->u.log.e[i].flags, b->u.log.e[i].flags);
			assert_int_equal(a->u.log.e[i].n_nd, b->u.log.e[i].n_nd);
			assert_memory_equal(a->u.log.e[i].nd, b->u.log.e[i].nd,
					    sizeof(a->u.log.e[i].nd));
		}
		break;
	default: {
		const struct onvm_xm_status *x = &a->u.status, *y = &b->u.status;

		assert_int_equal(x->mirror_slot, y->mirror_slot);
		assert_int_equal(x->state, y->state);
		assert_int_equal(x->fail, y->fail);
		assert_int_equal(x->flags, y->flags);
		assert_true(x->state_acked == y->state_acked);
		assert_true(x->log_next == y->log_next);
		assert_true(x->copies_rcvd == y->copies_rcvd);
		assert_true(x->dst_seen == y->dst_seen);
		assert_true(x->imported_flows == y->imported_flows);
		assert_true(x->reprocessed == y->reprocessed);
		assert_true(x->skipped_included == y->skipped_included);
		assert_true(x->nd_replayed == y->nd_replayed);
		assert_true(x->dst_dropped == y->dst_dropped);
		assert_true(x->copies_lost == y->copies_lost);
		assert_true(x->nd_short == y->nd_short);
		break;
	}
	}
}

/* Encode `c` (it must take `want` bytes), decode it back, exactly and padded
 * to Ethernet's minimum and beyond; one byte less is short. */
static void
round_trip(const struct onvm_xm_ctl *c, size_t want)
{
	static uint8_t f[ONVM_XM_FRAME_MAX + 64];
	struct onvm_xm_ctl out;
	size_t n;

	memset(f, 0xcc, sizeof(f));
	n = onvm_xm_ctl_encode(f, ONVM_XM_FRAME_MAX, macs, c);
	assert_int_equal(n, want);
	assert_int_equal(f[n], 0xcc); /* nothing written past its end */
	assert_hdr(f, c->type);
	assert_int_equal(f[16], c->slot);
	assert_int_equal(f[17], 0);
	assert_int_equal(be16(f + 18), 0);
	assert_int_equal(be32(f + 20), c->gen);

	memset(&out, 0x5a, sizeof(out));
	assert_int_equal(onvm_xm_ctl_decode(f, n, &out), ONVM_XM_OK);
	assert_ctl_equal(&out, c);
	if (c->type == ONVM_XM_STATE)
		assert_ptr_equal(out.u.state.bytes, f + STATE_HEAD); /* into the frame */
	memset(f + n, 0, 64);
	assert_int_equal(onvm_xm_ctl_decode(f, n < 60 ? 60 : n + 64, &out), ONVM_XM_OK);
	assert_ctl_equal(&out, c);
	assert_int_equal(onvm_xm_ctl_decode(f, n - 1, &out), ONVM_XM_SHORT);
	/* a control frame is no data frame */
	{
		struct onvm_xm_data d;

		assert_int_equal(onvm_xm_data_decode(f, n + 64, &d), ONVM_XM_BAD_TYPE);
	}
	/* it does not fit one byte less of room */
	assert_int_equal(onvm_xm_ctl_encode(f, n - 1, macs, c), 0);
	assert_int_equal(onvm_xm_ctl_encode(f, n, macs, c), n);
}

static void
test_sync_round_trip(void **state)
{
	struct onvm_xm_ctl c = sync_of();
	uint8_t f[SYNC_LEN];

	(void)state;
	round_trip(&c, SYNC_LEN);
	/* before the export: no length */
	c.u.sync.flags = 0;
	c.u.sync.state_len = 0;
	c.u.sync.n_included = 0;
	c.u.sync.method = 0;
	c.u.sync.state = 0;
	c.u.sync.fail = 0;
	round_trip(&c, SYNC_LEN);
	/* the layout */
	c = sync_of();
	assert_int_equal(onvm_xm_ctl_encode(f, sizeof(f), macs, &c), SYNC_LEN);
	assert_int_equal(be16(f + 24), 9);
	assert_int_equal(be16(f + 26), 0x0405);
	assert_int_equal(f[28], ONVM_XM_METHOD_MAX);
	assert_int_equal(f[29], ONVM_XM_STATE_MAXV);
	assert_int_equal(f[30], 0x0f);
	assert_int_equal(f[31], ONVM_XM_FAIL_MAXV);
	assert_true(be64(f + 32) == c.u.sync.copies);
	assert_true(be64(f + 40) == ONVM_XM_STATE_MAX);
	assert_int_equal(be32(f + 48), ONVM_XM_INCLUDED_MAX);
	assert_int_equal(be32(f + 52), 0);
	for (int i = 0; i < 16; i++)
		assert_true(be64(f + 56 + 8 * i) == c.u.sync.buckets[i]);
}

static void
test_state_round_trip(void **state)
{
	static uint8_t bytes[ONVM_XM_STATE_CHUNK];
	struct onvm_xm_ctl c;
	uint8_t f[64];

	(void)state;
	for (size_t i = 0; i < sizeof(bytes); i++)
		bytes[i] = (uint8_t)(i * 7 + 1);
	memset(&c, 0, sizeof(c));
	c.type = ONVM_XM_STATE;
	c.slot = 2;
	c.gen = 3;
	c.u.state.bytes = bytes;
	/* a full chunk at the export's end */
	c.u.state.total = ONVM_XM_STATE_MAX;
	c.u.state.offset = ONVM_XM_STATE_MAX - ONVM_XM_STATE_CHUNK;
	c.u.state.len = ONVM_XM_STATE_CHUNK;
	round_trip(&c, STATE_HEAD + ONVM_XM_STATE_CHUNK);
	/* one byte: a frame of 37, padded to 60 on the wire */
	c.u.state.total = 1;
	c.u.state.offset = 0;
	c.u.state.len = 1;
	round_trip(&c, STATE_HEAD + 1);
	/* the layout */
	c.u.state.total = 0x01020304;
	c.u.state.offset = 0x00010203;
	c.u.state.len = 3;
	assert_int_equal(onvm_xm_ctl_encode(f, sizeof(f), macs, &c), STATE_HEAD + 3);
	assert_int_equal(be32(f + 24), 0x00010203);
	assert_int_equal(be32(f + 28), 0x01020304);
	assert_int_equal(be16(f + 32), 3);
	assert_int_equal(be16(f + 34), 0);
	assert_memory_equal(f + 36, bytes, 3);
}

static void
test_log_round_trip(void **state)
{
	struct onvm_xm_ctl c;
	uint8_t f[LOG_HEAD + 2 * LOG_ENTRY];

	(void)state;
	c = log_of(1);
	round_trip(&c, LOG_HEAD + LOG_ENTRY);
	c = log_of(ONVM_XM_LOG_MAX);
	round_trip(&c, LOG_HEAD + ONVM_XM_LOG_MAX * LOG_ENTRY);
	/* the last sequence numbers there are */
	c.u.log.first = (UINT64_C(1) << 40) - ONVM_XM_LOG_MAX;
	round_trip(&c, LOG_HEAD + ONVM_XM_LOG_MAX * LOG_ENTRY);
	/* the layout */
	c = log_of(2);
	c.u.log.e[1].flags = 0x5;
	c.u.log.e[1].n_nd = 2;
	assert_int_equal(onvm_xm_ctl_encode(f, sizeof(f), macs, &c), sizeof(f));
	assert_true(be64(f + 24) == 41);
	assert_int_equal(f[32], 2);
	assert_int_equal(f[33] | f[34] | f[35] | be32(f + 36), 0);
	assert_int_equal(be32(f + 40 + 40), 0x5);
	assert_int_equal(be32(f + 40 + 44), 2);
	assert_true(be64(f + 40 + 48) == c.u.log.e[1].nd[0]);
	assert_true(be64(f + 40 + 56) == c.u.log.e[1].nd[1]);
	assert_true(be64(f + 40 + 64) == 0 && be64(f + 40 + 72) == 0);
}

/* ND values past n_nd are not sent (and an n_nd over the maximum is cut). */
static void
test_log_encode_drops_unused_nd(void **state)
{
	struct onvm_xm_ctl c = log_of(1), out;
	uint8_t f[LOG_HEAD + LOG_ENTRY];

	(void)state;
	c.u.log.e[0].n_nd = 1;
	c.u.log.e[0].nd[0] = 11;
	c.u.log.e[0].nd[3] = 99; /* not one of them */
	assert_int_equal(onvm_xm_ctl_encode(f, sizeof(f), macs, &c), sizeof(f));
	assert_int_equal(onvm_xm_ctl_decode(f, sizeof(f), &out), ONVM_XM_OK);
	assert_int_equal(out.u.log.e[0].n_nd, 1);
	assert_true(out.u.log.e[0].nd[0] == 11 && out.u.log.e[0].nd[3] == 0);

	c.u.log.e[0].n_nd = ONVM_XM_ND_MAX + 3;
	assert_int_equal(onvm_xm_ctl_encode(f, sizeof(f), macs, &c), sizeof(f));
	assert_int_equal(onvm_xm_ctl_decode(f, sizeof(f), &out), ONVM_XM_OK);
	assert_int_equal(out.u.log.e[0].n_nd, ONVM_XM_ND_MAX);
	assert_true(out.u.log.e[0].nd[3] == 99);
}

static void
test_status_round_trip(void **state)
{
	struct onvm_xm_ctl c = status_of();
	uint8_t f[STATUS_LEN];

	(void)state;
	round_trip(&c, STATUS_LEN);
	/* mirror_refuse()'s: nothing but a failed state */
	memset(&c.u.status, 0, sizeof(c.u.status));
	c.u.status.mirror_slot = 0xff;
	c.u.status.state = 7;
	c.u.status.fail = 13;
	c.u.status.log_next = 1;
	round_trip(&c, STATUS_LEN);
	/* the layout */
	c = status_of();
	assert_int_equal(onvm_xm_ctl_encode(f, sizeof(f), macs, &c), STATUS_LEN);
	assert_int_equal(f[24], 0xff);
	assert_int_equal(f[25], 6);
	assert_int_equal(f[26], 12);
	assert_int_equal(f[27], 0x07);
	assert_int_equal(be32(f + 28), 0xfedcba98); /* nd_short */
	assert_true(be64(f + 32) == ONVM_XM_STATE_MAX);
	assert_true(be64(f + 40) == UINT64_C(1) << 40);
	for (int i = 2; i < 9; i++)
		assert_true(be64(f + 32 + 8 * i) == (uint64_t)(i - 1));
	assert_true(be64(f + 104) == UINT64_MAX);
}

/* What the encoder cannot write. */
static void
test_ctl_encode_refuses(void **state)
{
	static uint8_t f[ONVM_XM_FRAME_MAX];
	static const uint8_t bytes[ONVM_XM_STATE_CHUNK + 1];
	struct onvm_xm_ctl c;

	(void)state;
	memset(&c, 0, sizeof(c));
	c.type = ONVM_XM_STATE;
	c.u.state.bytes = bytes;
	c.u.state.total = ONVM_XM_STATE_CHUNK + 1;
	c.u.state.len = 0;
	assert_int_equal(onvm_xm_ctl_encode(f, sizeof(f), macs, &c), 0);
	c.u.state.len = ONVM_XM_STATE_CHUNK + 1;
	assert_int_equal(onvm_xm_ctl_encode(f, sizeof(f), macs, &c), 0);
	c = log_of(1);
	c.u.log.count = 0;
	assert_int_equal(onvm_xm_ctl_encode(f, sizeof(f), macs, &c), 0);
	c.u.log.count = ONVM_XM_LOG_MAX + 1;
	assert_int_equal(onvm_xm_ctl_encode(f, sizeof(f), macs, &c), 0);
	for (unsigned int t = 0; t < 256; t++) {
		if (t >= ONVM_XM_SYNC && t <= ONVM_XM_STATUS)
			continue;
		c.type = (uint8_t)t;
		assert_int_equal(onvm_xm_ctl_encode(f, sizeof(f), macs, &c), 0);
	}
	c = sync_of();
	assert_int_equal(onvm_xm_ctl_encode(f, SYNC_LEN - 1, macs, &c), 0);
	assert_int_equal(onvm_xm_ctl_encode(f, 0, macs, &c), 0);
}

/* ---- refusals ---- */

static enum onvm_xm_reason
data_with(uint8_t type, size_t off, const uint8_t *bytes, size_t n)
{
	const struct onvm_xm_data d = data_of(type);
	struct onvm_xm_data out;
	uint8_t f[128];
	size_t len = data_frame(f, &d);

	memcpy(f + off, bytes, n);
	return onvm_xm_data_decode(f, len, &out);
}

static enum onvm_xm_reason
data_tagged(uint8_t type, uint64_t tag)
{
	uint8_t b[8];

	put64(b, tag);
	return data_with(type, 34, b, 8);
}

/* `c` encoded, then `n` bytes at `off` overwritten, then decoded. */
static enum onvm_xm_reason
ctl_with(const struct onvm_xm_ctl *c, size_t off, const uint8_t *bytes, size_t n)
{
	static uint8_t f[ONVM_XM_FRAME_MAX];
	struct onvm_xm_ctl out;
	size_t len = onvm_xm_ctl_encode(f, sizeof(f), macs, c);

	assert_true(len > 0);
	memcpy(f + off, bytes, n);
	return onvm_xm_ctl_decode(f, len, &out);
}

static enum onvm_xm_reason
ctl_decoded(const struct onvm_xm_ctl *c)
{
	return ctl_with(c, 0, macs, 0);
}

#define B(...) (const uint8_t[]){__VA_ARGS__}, sizeof((const uint8_t[]){__VA_ARGS__})

static void
test_refuse_short(void **state)
{
	const struct onvm_xm_data d = data_of(ONVM_XM_HANDOFF);
	const struct onvm_xm_ctl ctls[] = {sync_of(), log_of(3), status_of()};
	static uint8_t f[ONVM_XM_FRAME_MAX];
	struct onvm_xm_data dout;
	struct onvm_xm_ctl out, st;
	size_t n;

	(void)state;
	/* a data frame without a whole Ethernet header after its fields */
	n = data_frame(f, &d);
	assert_int_equal(onvm_xm_data_decode(f, ONVM_XM_DATA_LEN + 13, &dout), ONVM_XM_SHORT);
	assert_int_equal(onvm_xm_data_decode(f, ONVM_XM_DATA_LEN, &dout), ONVM_XM_SHORT);
	assert_int_equal(onvm_xm_data_decode(f, 20, &dout), ONVM_XM_SHORT);
	/* ... and without its type: the version is there, so it is ours */
	assert_int_equal(onvm_xm_data_decode(f, 15, &dout), ONVM_XM_SHORT);
	assert_int_equal(onvm_xm_ctl_decode(f, 15, &out), ONVM_XM_SHORT);
	assert_int_equal(onvm_xm_peek(f, 15), -ONVM_XM_SHORT);

	/* control frames cut anywhere before their end */
	for (size_t i = 0; i < sizeof(ctls) / sizeof(ctls[0]); i++) {
		n = onvm_xm_ctl_encode(f, sizeof(f), macs, &ctls[i]);
		assert_true(n > 0);
		for (size_t cut = 15; cut < n; cut++)
			if (onvm_xm_ctl_decode(f, cut, &out) != ONVM_XM_SHORT)
				fail_msg("type %u cut to %zu of %zu bytes: %s", ctls[i].type, cut,
					 n, onvm_xm_reason_str(onvm_xm_ctl_decode(f, cut, &out)));
	}
	/* a STATE shorter than its len says */
	memset(&st, 0, sizeof(st));
	st.type = ONVM_XM_STATE;
	st.u.state.total = 100;
	st.u.state.len = 100;
	st.u.state.bytes = f + 512;
	n = onvm_xm_ctl_encode(f, sizeof(f), macs, &st);
	assert_int_equal(n, STATE_HEAD + 100);
	assert_int_equal(onvm_xm_ctl_decode(f, n - 1, &out), ONVM_XM_SHORT);
	assert_int_equal(onvm_xm_ctl_decode(f, STATE_HEAD, &out), ONVM_XM_SHORT);
	/* a LOG of 3 entries with room for 2 */
	n = onvm_xm_ctl_encode(f, sizeof(f), macs, &ctls[1]);
	assert_int_equal(onvm_xm_ctl_decode(f, n - LOG_ENTRY, &out), ONVM_XM_SHORT);
}

static void
test_refuse_bad_type(void **state)
{
	static const uint8_t data_bad[] = {
	    0, 5, 15, ONVM_XM_SYNC, ONVM_XM_STATE, ONVM_XM_LOG, ONVM_XM_STATUS, 20, 0xff};
	static const uint8_t ctl_bad[] = {
	    0,	  ONVM_XM_COPY, ONVM_XM_BUFFERED, ONVM_XM_HANDOFF, ONVM_XM_RETURN, 5, 15, 20,
	    0x80, 0xff};
	const struct onvm_xm_ctl sync = sync_of();

	(void)state;
	for (size_t i = 0; i < sizeof(data_bad); i++)
		assert_int_equal(data_with(ONVM_XM_COPY, 15, &data_bad[i], 1), ONVM_XM_BAD_TYPE);
	for (size_t i = 0; i < sizeof(ctl_bad); i++)
		assert_int_equal(ctl_with(&sync, 15, &ctl_bad[i], 1), ONVM_XM_BAD_TYPE);
}

static void
test_refuse_bad_flags(void **state)
{
	struct onvm_xm_ctl c;

	(void)state;
	for (unsigned int bit = 1; bit < 8; bit++)
		assert_int_equal(data_with(ONVM_XM_RETURN, 26, B((uint8_t)(1u << bit))),
				 ONVM_XM_BAD_FLAGS);
	/* SYNC: bits 4-7 */
	c = sync_of();
	for (unsigned int bit = 4; bit < 8; bit++)
		assert_int_equal(ctl_with(&c, 30, B((uint8_t)(0x0f | 1u << bit))),
				 ONVM_XM_BAD_FLAGS);
	/* a LOG entry's: bits 3-31, in the second entry too */
	c = log_of(2);
	assert_int_equal(ctl_with(&c, 40, B(0, 0, 0, 0x08)), ONVM_XM_BAD_FLAGS);
	assert_int_equal(ctl_with(&c, 40 + LOG_ENTRY, B(0x80, 0, 0, 0)), ONVM_XM_BAD_FLAGS);
	/* STATUS: bits 3-7 */
	c = status_of();
	for (unsigned int bit = 3; bit < 8; bit++)
		assert_int_equal(ctl_with(&c, 27, B((uint8_t)(1u << bit))), ONVM_XM_BAD_FLAGS);
}

static void
test_refuse_bad_field(void **state)
{
	struct onvm_xm_ctl c;

	(void)state;
	/* data: no service; an action or destination but in a RETURN; a
	 * RETURN's instance or unknown action */
	for (uint8_t t = ONVM_XM_COPY; t <= ONVM_XM_RETURN; t++)
		assert_int_equal(data_with(t, 16, B(0, 0)), ONVM_XM_BAD_FIELD);
	for (uint8_t t = ONVM_XM_COPY; t <= ONVM_XM_HANDOFF; t++) {
		assert_int_equal(data_with(t, 23, B(1)), ONVM_XM_BAD_FIELD);
		assert_int_equal(data_with(t, 24, B(0, 1)), ONVM_XM_BAD_FIELD);
	}
	assert_int_equal(data_with(ONVM_XM_RETURN, 18, B(0, 1)), ONVM_XM_BAD_FIELD);
	assert_int_equal(data_with(ONVM_XM_RETURN, 23, B(ONVM_XM_ACTION_MAXV + 1)),
			 ONVM_XM_BAD_FIELD);

	/* SYNC */
	c = sync_of();
	assert_int_equal(ctl_with(&c, 24, B(0, 0)), ONVM_XM_BAD_FIELD);
	assert_int_equal(ctl_with(&c, 28, B(ONVM_XM_METHOD_MAX + 1)), ONVM_XM_BAD_FIELD);
	assert_int_equal(ctl_with(&c, 29, B(ONVM_XM_STATE_MAXV + 1)), ONVM_XM_BAD_FIELD);
	assert_int_equal(ctl_with(&c, 31, B(ONVM_XM_FAIL_MAXV + 1)), ONVM_XM_BAD_FIELD);
	c.u.sync.n_included = ONVM_XM_INCLUDED_MAX + 1;
	assert_int_equal(ctl_decoded(&c), ONVM_XM_BAD_FIELD);
	c = sync_of();
	c.u.sync.state_len = (uint64_t)ONVM_XM_STATE_MAX + 1;
	assert_int_equal(ctl_decoded(&c), ONVM_XM_BAD_FIELD);

	/* LOG: no first entry, no entries, too many, past 2^40 - 1 */
	c = log_of(2);
	c.u.log.first = 0;
	assert_int_equal(ctl_decoded(&c), ONVM_XM_BAD_FIELD);
	c.u.log.first = (UINT64_C(1) << 40) - 1;
	assert_int_equal(ctl_decoded(&c), ONVM_XM_BAD_FIELD);
	c.u.log.first = UINT64_MAX;
	assert_int_equal(ctl_decoded(&c), ONVM_XM_BAD_FIELD);
	c = log_of(2);
	assert_int_equal(ctl_with(&c, 32, B(0)), ONVM_XM_BAD_FIELD);
	c = log_of(ONVM_XM_LOG_MAX);
	assert_int_equal(ctl_with(&c, 32, B(ONVM_XM_LOG_MAX + 1)), ONVM_XM_BAD_FIELD);
	/* ... an entry with more ND values than there is room for */
	c = log_of(2);
	assert_int_equal(ctl_with(&c, 40 + LOG_ENTRY + 4, B(0, 0, 0, ONVM_XM_ND_MAX + 1)),
			 ONVM_XM_BAD_FIELD);

	/* STATUS */
	c = status_of();
	assert_int_equal(ctl_with(&c, 25, B(ONVM_XM_STATE_MAXV + 1)), ONVM_XM_BAD_FIELD);
	assert_int_equal(ctl_with(&c, 26, B(ONVM_XM_FAIL_MAXV + 1)), ONVM_XM_BAD_FIELD);
	c.u.status.state_acked = (uint64_t)ONVM_XM_STATE_MAX + 1;
	assert_int_equal(ctl_decoded(&c), ONVM_XM_BAD_FIELD);
	c = status_of();
	c.u.status.log_next = 0;
	assert_int_equal(ctl_decoded(&c), ONVM_XM_BAD_FIELD);
}

static void
test_refuse_bad_tag(void **state)
{
	(void)state;
	/* a copy (or buffered packet) needs a move's tag with a sequence number */
	for (uint8_t t = ONVM_XM_COPY; t <= ONVM_XM_BUFFERED; t++) {
		assert_int_equal(data_tagged(t, 0), ONVM_XM_BAD_TAG);
		assert_int_equal(data_tagged(t, tag_of(23, 1, 5) & ~(UINT64_C(1) << 63)),
				 ONVM_XM_BAD_TAG);
		assert_int_equal(data_tagged(t, tag_of(23, 1, 0)), ONVM_XM_BAD_TAG);
		assert_int_equal(data_tagged(t, tag_of(23, 1, 1)), ONVM_XM_OK);
		assert_int_equal(data_tagged(t, tag_of(0, 0, SEQ_MASK)), ONVM_XM_OK);
	}
	/* a handoff and a return have none, nor any other tag (docs/wire-format.md:
	 * "HANDOFF, RETURN: 0") */
	for (uint8_t t = ONVM_XM_HANDOFF; t <= ONVM_XM_RETURN; t++) {
		assert_int_equal(data_tagged(t, tag_of(23, 1, 5)), ONVM_XM_BAD_TAG);
		assert_int_equal(data_tagged(t, UINT64_C(1) << 63), ONVM_XM_BAD_TAG);
		assert_int_equal(data_tagged(t, tag_of(23, 1, 5) & ~(UINT64_C(1) << 63)),
				 ONVM_XM_BAD_TAG);
		assert_int_equal(data_tagged(t, 1), ONVM_XM_BAD_TAG);
		assert_int_equal(data_tagged(t, 0), ONVM_XM_OK);
	}
}

static void
test_refuse_bad_length(void **state)
{
	struct onvm_xm_ctl c;
	static const uint8_t bytes[ONVM_XM_STATE_CHUNK + 1];

	(void)state;
	/* SYNC before the export: no length, no tags */
	c = sync_of();
	c.u.sync.flags = 0;
	c.u.sync.n_included = 0;
	c.u.sync.state_len = 1;
	assert_int_equal(ctl_decoded(&c), ONVM_XM_BAD_LENGTH);
	c.u.sync.n_included = 1;
	c.u.sync.state_len = 0;
	assert_int_equal(ctl_decoded(&c), ONVM_XM_BAD_LENGTH);
	/* ... after it, at least 8 bytes a tag */
	c = sync_of();
	c.u.sync.n_included = 3;
	c.u.sync.state_len = 23;
	assert_int_equal(ctl_decoded(&c), ONVM_XM_BAD_LENGTH);
	c.u.sync.state_len = 24;
	assert_int_equal(ctl_decoded(&c), ONVM_XM_OK);

	/* STATE: len 0 or over a chunk, past total, total over the maximum */
	memset(&c, 0, sizeof(c));
	c.type = ONVM_XM_STATE;
	c.u.state.bytes = bytes;
	c.u.state.total = 2000;
	c.u.state.offset = 100;
	c.u.state.len = 10;
	assert_int_equal(ctl_decoded(&c), ONVM_XM_OK);
	assert_int_equal(ctl_with(&c, 32, B(0, 0)), ONVM_XM_BAD_LENGTH);
	c.u.state.len = ONVM_XM_STATE_CHUNK;
	assert_int_equal(ctl_decoded(&c), ONVM_XM_OK);
	assert_int_equal(ctl_with(&c, 32, B(ONVM_XM_STATE_CHUNK >> 8, 1)), ONVM_XM_BAD_LENGTH);
	c.u.state.len = 10;
	c.u.state.offset = 1991;
	assert_int_equal(ctl_decoded(&c), ONVM_XM_BAD_LENGTH);
	c.u.state.offset = 1990;
	assert_int_equal(ctl_decoded(&c), ONVM_XM_OK);
	c.u.state.offset = UINT32_MAX - 4; /* (no wrap) */
	assert_int_equal(ctl_decoded(&c), ONVM_XM_BAD_LENGTH);
	c.u.state.offset = 0;
	c.u.state.total = ONVM_XM_STATE_MAX + 1;
	assert_int_equal(ctl_decoded(&c), ONVM_XM_BAD_LENGTH);
}

static void
test_refuse_bad_reserved(void **state)
{
	struct onvm_xm_ctl c;

	(void)state;
	for (uint8_t t = ONVM_XM_COPY; t <= ONVM_XM_RETURN; t++)
		assert_int_equal(data_with(t, 29, B(0x01)), ONVM_XM_BAD_RESERVED);
	/* every control frame's bytes 17-19 */
	{
		const struct onvm_xm_ctl all[] = {sync_of(), log_of(1), status_of()};

		for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
			for (size_t off = 17; off < 20; off++)
				assert_int_equal(ctl_with(&all[i], off, B(0x80)),
						 ONVM_XM_BAD_RESERVED);
	}
	c = sync_of();
	for (size_t off = 52; off < 56; off++)
		assert_int_equal(ctl_with(&c, off, B(1)), ONVM_XM_BAD_RESERVED);
	memset(&c, 0, sizeof(c));
	c.type = ONVM_XM_STATE;
	c.u.state.bytes = macs;
	c.u.state.total = c.u.state.len = 12;
	for (size_t off = 17; off < 20; off++)
		assert_int_equal(ctl_with(&c, off, B(1)), ONVM_XM_BAD_RESERVED);
	assert_int_equal(ctl_with(&c, 34, B(1)), ONVM_XM_BAD_RESERVED);
	assert_int_equal(ctl_with(&c, 35, B(1)), ONVM_XM_BAD_RESERVED);
	c = log_of(2);
	for (size_t off = 33; off < 40; off++)
		assert_int_equal(ctl_with(&c, off, B(1)), ONVM_XM_BAD_RESERVED);
	/* ... an ND value past the entry's n_nd (entry 1 has one) */
	assert_int_equal(log_of(2).u.log.e[1].n_nd, 1);
	assert_int_equal(ctl_with(&c, 40 + LOG_ENTRY + 8 + 8 + 7, B(1)), ONVM_XM_BAD_RESERVED);
	assert_int_equal(ctl_with(&c, 40 + LOG_ENTRY + 8 + 24, B(1)), ONVM_XM_BAD_RESERVED);
	/* (STATUS has no reserved field: bytes 28..31 are nd_short) */
}

/* Another EtherType, and 0x88B5's other versions (the shim, FTC's): not
 * ours, whatever follows; too short to tell is not ours either. */
static void
test_refuse_not_xm(void **state)
{
	const struct onvm_xm_data d = data_of(ONVM_XM_COPY);
	const struct onvm_xm_ctl sync = sync_of();
	static uint8_t f[ONVM_XM_FRAME_MAX], g[ONVM_XM_FRAME_MAX];
	static const uint8_t other[][3] = {
	    {0x08, 0x00, 4}, {0x81, 0x00, 4}, {0x88, 0xB6, 4}, {0xB5, 0x88, 4}, {0x88, 0xB5, 0},
	    {0x88, 0xB5, 1}, {0x88, 0xB5, 2}, {0x88, 0xB5, 3}, {0x88, 0xB5, 5}, {0x88, 0xB5, 0xff},
	};
	struct onvm_xm_data dout;
	struct onvm_xm_ctl out;
	size_t n = data_frame(f, &d), m = onvm_xm_ctl_encode(g, sizeof(g), macs, &sync);

	(void)state;
	assert_int_equal(m, SYNC_LEN);
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
		memcpy(f + 12, other[i], 3);
		memcpy(g + 12, other[i], 3);
		assert_int_equal(onvm_xm_peek(f, n), -ONVM_XM_NOT_XM);
		assert_int_equal(onvm_xm_data_decode(f, n, &dout), ONVM_XM_NOT_XM);
		assert_int_equal(onvm_xm_ctl_decode(f, n, &out), ONVM_XM_NOT_XM);
		assert_int_equal(onvm_xm_data_decode(g, m, &dout), ONVM_XM_NOT_XM);
		assert_int_equal(onvm_xm_ctl_decode(g, m, &out), ONVM_XM_NOT_XM);
		/* ... also cut short */
		assert_int_equal(onvm_xm_data_decode(f, 15, &dout), ONVM_XM_NOT_XM);
		assert_int_equal(onvm_xm_ctl_decode(g, 15, &out), ONVM_XM_NOT_XM);
	}
	/* the version is not there yet */
	n = data_frame(f, &d);
	for (size_t len = 0; len < 15; len++) {
		assert_int_equal(onvm_xm_peek(f, len), -ONVM_XM_NOT_XM);
		assert_int_equal(onvm_xm_data_decode(f, len, &dout), ONVM_XM_NOT_XM);
		assert_int_equal(onvm_xm_ctl_decode(g, len, &out), ONVM_XM_NOT_XM);
	}
	assert_int_equal(onvm_xm_peek(f, n), ONVM_XM_COPY);
}

static void
test_reason_names(void **state)
{
	static const char *const want[ONVM_XM_REASON_MAX] = {
	    "ok",	 "not_xm",  "short",	  "bad_type",	  "bad_flags",
	    "bad_field", "bad_tag", "bad_length", "bad_reserved",
	};

	(void)state;
	for (int r = 0; r < ONVM_XM_REASON_MAX; r++)
		assert_string_equal(onvm_xm_reason_str((enum onvm_xm_reason)r), want[r]);
	assert_string_equal(onvm_xm_reason_str(ONVM_XM_REASON_MAX), "unknown");
	assert_string_equal(onvm_xm_reason_str((enum onvm_xm_reason) - 1), "unknown");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_data_round_trip),
	    cmocka_unit_test(test_data_layout),
	    cmocka_unit_test(test_sync_round_trip),
	    cmocka_unit_test(test_state_round_trip),
	    cmocka_unit_test(test_log_round_trip),
	    cmocka_unit_test(test_log_encode_drops_unused_nd),
	    cmocka_unit_test(test_status_round_trip),
	    cmocka_unit_test(test_ctl_encode_refuses),
	    cmocka_unit_test(test_refuse_short),
	    cmocka_unit_test(test_refuse_bad_type),
	    cmocka_unit_test(test_refuse_bad_flags),
	    cmocka_unit_test(test_refuse_bad_field),
	    cmocka_unit_test(test_refuse_bad_tag),
	    cmocka_unit_test(test_refuse_bad_length),
	    cmocka_unit_test(test_refuse_bad_reserved),
	    cmocka_unit_test(test_refuse_not_xm),
	    cmocka_unit_test(test_reason_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
