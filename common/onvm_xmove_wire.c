/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * onvm_xmove_wire.c -- encode and decode the frames of a cross-node flow
 * migration (onvm_xmove_wire.h; the layout is in docs/wire-format.md,
 * "0x88B5 version 4").  All fields are big-endian at fixed offsets.
 */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "onvm_wire.h"
#include "onvm_xmove_wire.h"

/* Offsets. */
#define OFF_ETYPE 12
#define OFF_VERSION 14
#define OFF_TYPE 15
#define CTL_LEN 24 /* header, slot, reserved, gen */
#define SYNC_LEN (CTL_LEN + 160)
#define STATE_LEN (CTL_LEN + 12)
#define LOG_LEN (CTL_LEN + 16)
#define LOG_ENTRY_LEN 40
#define STATUS_LEN (CTL_LEN + 8 + 10 * 8)

static const char *const reason_names[ONVM_XM_REASON_MAX] = {
	[ONVM_XM_OK] = "ok",
	[ONVM_XM_NOT_XM] = "not_xm",
	[ONVM_XM_SHORT] = "short",
	[ONVM_XM_BAD_TYPE] = "bad_type",
	[ONVM_XM_BAD_FLAGS] = "bad_flags",
	[ONVM_XM_BAD_FIELD] = "bad_field",
	[ONVM_XM_BAD_TAG] = "bad_tag",
	[ONVM_XM_BAD_LENGTH] = "bad_length",
	[ONVM_XM_BAD_RESERVED] = "bad_reserved",
};

const char *
onvm_xm_reason_str(enum onvm_xm_reason r)
{
	return (unsigned int)r < ONVM_XM_REASON_MAX ? reason_names[r] : "unknown";
}

int
onvm_xm_peek(const uint8_t *f, size_t len)
{
	if (len < ONVM_XM_HDR_LEN)
		return len >= OFF_VERSION + 1 && onvm_get_be16(f + OFF_ETYPE) == ONVM_XM_ETHERTYPE &&
				       f[OFF_VERSION] == ONVM_XM_VERSION
			       ? -ONVM_XM_SHORT
			       : -ONVM_XM_NOT_XM;
	if (onvm_get_be16(f + OFF_ETYPE) != ONVM_XM_ETHERTYPE || f[OFF_VERSION] != ONVM_XM_VERSION)
		return -ONVM_XM_NOT_XM;
	return f[OFF_TYPE];
}

static void
put_hdr(uint8_t *f, const uint8_t mac[12], uint8_t type)
{
	memcpy(f, mac, 12);
	onvm_put_be16(f + OFF_ETYPE, ONVM_XM_ETHERTYPE);
	f[OFF_VERSION] = ONVM_XM_VERSION;
	f[OFF_TYPE] = type;
}

enum onvm_xm_reason
onvm_xm_data_decode(const uint8_t *f, size_t len, struct onvm_xm_data *d)
{
	int t = onvm_xm_peek(f, len);
	const bool tagged = t == ONVM_XM_COPY || t == ONVM_XM_BUFFERED;

	if (t < 0)
		return (enum onvm_xm_reason)-t;
	if (t < ONVM_XM_COPY || t > ONVM_XM_RETURN)
		return ONVM_XM_BAD_TYPE;
	/* the packet: at least an Ethernet header */
	if (len < ONVM_XM_DATA_LEN + 14)
		return ONVM_XM_SHORT;
	memset(d, 0, sizeof(*d));
	d->type = (uint8_t)t;
	d->service = onvm_get_be16(f + 16);
	d->inst = onvm_get_be16(f + 18);
	d->chain_id = onvm_get_be16(f + 20);
	d->chain_index = f[22];
	d->action = f[23];
	d->destination = onvm_get_be16(f + 24);
	d->flags = f[26];
	d->in_port = f[27];
	d->egress_port = f[28];
	d->flow_hash = onvm_get_be32(f + 30);
	d->tag = onvm_get_be64(f + 34);
	if (f[29] != 0)
		return ONVM_XM_BAD_RESERVED;
	if (d->flags & ~ONVM_XM_F_ND)
		return ONVM_XM_BAD_FLAGS;
	if (d->service == 0)
		return ONVM_XM_BAD_FIELD;
	if (t == ONVM_XM_RETURN) {
		if (d->inst != 0 || d->action > ONVM_XM_ACTION_MAXV)
			return ONVM_XM_BAD_FIELD;
	} else if (d->action != 0 || d->destination != 0) {
		return ONVM_XM_BAD_FIELD;
	}
	/* a move's tag: the top bit, and a sequence number from 1; else 0 */
	if (tagged ? d->tag >> 63 == 0 || (d->tag & ((UINT64_C(1) << 40) - 1)) == 0 : d->tag != 0)
		return ONVM_XM_BAD_TAG;
	return ONVM_XM_OK;
}

void
onvm_xm_data_encode(uint8_t *f, const uint8_t mac[12], const struct onvm_xm_data *d)
{
	put_hdr(f, mac, d->type);
	onvm_put_be16(f + 16, d->service);
	onvm_put_be16(f + 18, d->inst);
	onvm_put_be16(f + 20, d->chain_id);
	f[22] = d->chain_index;
	f[23] = d->action;
	onvm_put_be16(f + 24, d->destination);
	f[26] = d->flags;
	f[27] = d->in_port;
	f[28] = d->egress_port;
	f[29] = 0;
	onvm_put_be32(f + 30, d->flow_hash);
	onvm_put_be64(f + 34, d->tag);
}

static enum onvm_xm_reason
sync_decode(const uint8_t *p, struct onvm_xm_sync *s)
{
	s->service = onvm_get_be16(p);
	s->inst = onvm_get_be16(p + 2);
	s->method = p[4];
	s->state = p[5];
	s->flags = p[6];
	s->fail = p[7];
	s->copies = onvm_get_be64(p + 8);
	s->state_len = onvm_get_be64(p + 16);
	s->n_included = onvm_get_be32(p + 24);
	for (int i = 0; i < 16; i++)
		s->buckets[i] = onvm_get_be64(p + 32 + 8 * i);
	if (onvm_get_be32(p + 28) != 0)
		return ONVM_XM_BAD_RESERVED;
	if (s->flags & ~(ONVM_XM_S_START_OUT | ONVM_XM_S_END_OUT | ONVM_XM_S_SRC_GONE |
			 ONVM_XM_S_EXPORTED))
		return ONVM_XM_BAD_FLAGS;
	if (s->service == 0 || s->method > ONVM_XM_METHOD_MAX || s->state > ONVM_XM_STATE_MAXV ||
	    s->fail > ONVM_XM_FAIL_MAXV || s->n_included > ONVM_XM_INCLUDED_MAX ||
	    s->state_len > ONVM_XM_STATE_MAX)
		return ONVM_XM_BAD_FIELD;
	/* before the export, no length; after it, at least the tags */
	if (!(s->flags & ONVM_XM_S_EXPORTED) ? s->state_len != 0 || s->n_included != 0
					     : s->state_len < 8ull * s->n_included)
		return ONVM_XM_BAD_LENGTH;
	return ONVM_XM_OK;
}

static enum onvm_xm_reason
log_decode(const uint8_t *p, size_t room, struct onvm_xm_log *l)
{
	l->first = onvm_get_be64(p);
	l->count = p[8];
	if (p[9] != 0 || p[10] != 0 || p[11] != 0 || onvm_get_be32(p + 12) != 0)
		return ONVM_XM_BAD_RESERVED;
	if (l->first == 0 || l->count == 0 || l->count > ONVM_XM_LOG_MAX ||
	    l->first > (UINT64_C(1) << 40) - l->count)
		return ONVM_XM_BAD_FIELD;
	if (room < 16 + (size_t)l->count * LOG_ENTRY_LEN)
		return ONVM_XM_SHORT;
	for (unsigned int i = 0; i < l->count; i++) {
		const uint8_t *e = p + 16 + i * LOG_ENTRY_LEN;
		struct onvm_xm_log_entry *x = &l->e[i];

		x->flags = onvm_get_be32(e);
		x->n_nd = onvm_get_be32(e + 4);
		if (x->flags & ~UINT32_C(0x7))
			return ONVM_XM_BAD_FLAGS;
		if (x->n_nd > ONVM_XM_ND_MAX)
			return ONVM_XM_BAD_FIELD;
		for (unsigned int k = 0; k < ONVM_XM_ND_MAX; k++) {
			x->nd[k] = onvm_get_be64(e + 8 + 8 * k);
			if (k >= x->n_nd && x->nd[k] != 0)
				return ONVM_XM_BAD_RESERVED;
		}
	}
	return ONVM_XM_OK;
}

static enum onvm_xm_reason
status_decode(const uint8_t *p, struct onvm_xm_status *s)
{
	uint64_t v[10];

	s->mirror_slot = p[0];
	s->state = p[1];
	s->fail = p[2];
	s->flags = p[3];
	s->nd_short = onvm_get_be32(p + 4);
	if (s->flags & ~(ONVM_XM_T_OPEN | ONVM_XM_T_IMPORTED | ONVM_XM_T_LOSSY))
		return ONVM_XM_BAD_FLAGS;
	if (s->state > ONVM_XM_STATE_MAXV || s->fail > ONVM_XM_FAIL_MAXV)
		return ONVM_XM_BAD_FIELD;
	for (int i = 0; i < 10; i++)
		v[i] = onvm_get_be64(p + 8 + 8 * i);
	s->state_acked = v[0];
	s->log_next = v[1];
	s->copies_rcvd = v[2];
	s->dst_seen = v[3];
	s->imported_flows = v[4];
	s->reprocessed = v[5];
	s->skipped_included = v[6];
	s->nd_replayed = v[7];
	s->dst_dropped = v[8];
	s->copies_lost = v[9];
	if (s->state_acked > ONVM_XM_STATE_MAX || s->log_next == 0)
		return ONVM_XM_BAD_FIELD;
	return ONVM_XM_OK;
}

enum onvm_xm_reason
onvm_xm_ctl_decode(const uint8_t *f, size_t len, struct onvm_xm_ctl *c)
{
	int t = onvm_xm_peek(f, len);
	const uint8_t *p;

	if (t < 0)
		return (enum onvm_xm_reason)-t;
	if (t < ONVM_XM_SYNC || t > ONVM_XM_STATUS)
		return ONVM_XM_BAD_TYPE;
	if (len < CTL_LEN)
		return ONVM_XM_SHORT;
	p = f + CTL_LEN;
	memset(c, 0, offsetof(struct onvm_xm_ctl, u));
	c->type = (uint8_t)t;
	c->slot = f[16];
	c->gen = onvm_get_be32(f + 20);
	if (f[17] != 0 || onvm_get_be16(f + 18) != 0)
		return ONVM_XM_BAD_RESERVED;
	switch (t) {
	case ONVM_XM_SYNC:
		if (len < SYNC_LEN)
			return ONVM_XM_SHORT;
		return sync_decode(p, &c->u.sync);
	case ONVM_XM_STATE: {
		struct onvm_xm_state *s = &c->u.state;

		if (len < STATE_LEN)
			return ONVM_XM_SHORT;
		s->offset = onvm_get_be32(p);
		s->total = onvm_get_be32(p + 4);
		s->len = onvm_get_be16(p + 8);
		if (onvm_get_be16(p + 10) != 0)
			return ONVM_XM_BAD_RESERVED;
		if (s->len == 0 || s->len > ONVM_XM_STATE_CHUNK || s->total > ONVM_XM_STATE_MAX ||
		    (uint64_t)s->offset + s->len > s->total)
			return ONVM_XM_BAD_LENGTH;
		if (len < (size_t)STATE_LEN + s->len)
			return ONVM_XM_SHORT;
		s->bytes = p + 12;
		return ONVM_XM_OK;
	}
	case ONVM_XM_LOG:
		if (len < LOG_LEN)
			return ONVM_XM_SHORT;
		return log_decode(p, len - CTL_LEN, &c->u.log);
	default:
		if (len < STATUS_LEN)
			return ONVM_XM_SHORT;
		return status_decode(p, &c->u.status);
	}
}

size_t
onvm_xm_ctl_encode(uint8_t *f, size_t room, const uint8_t mac[12], const struct onvm_xm_ctl *c)
{
	uint8_t *p = f + CTL_LEN;
	size_t len;

	switch (c->type) {
	case ONVM_XM_SYNC:
		len = SYNC_LEN;
		break;
	case ONVM_XM_STATE:
		if (c->u.state.len == 0 || c->u.state.len > ONVM_XM_STATE_CHUNK)
			return 0;
		len = STATE_LEN + c->u.state.len;
		break;
	case ONVM_XM_LOG:
		if (c->u.log.count == 0 || c->u.log.count > ONVM_XM_LOG_MAX)
			return 0;
		len = LOG_LEN + (size_t)c->u.log.count * LOG_ENTRY_LEN;
		break;
	case ONVM_XM_STATUS:
		len = STATUS_LEN;
		break;
	default:
		return 0;
	}
	if (len > room)
		return 0;
	memset(f, 0, len);
	put_hdr(f, mac, c->type);
	f[16] = c->slot;
	onvm_put_be32(f + 20, c->gen);
	switch (c->type) {
	case ONVM_XM_SYNC: {
		const struct onvm_xm_sync *s = &c->u.sync;

		onvm_put_be16(p, s->service);
		onvm_put_be16(p + 2, s->inst);
		p[4] = s->method;
		p[5] = s->state;
		p[6] = s->flags;
		p[7] = s->fail;
		onvm_put_be64(p + 8, s->copies);
		onvm_put_be64(p + 16, s->state_len);
		onvm_put_be32(p + 24, s->n_included);
		for (int i = 0; i < 16; i++)
			onvm_put_be64(p + 32 + 8 * i, s->buckets[i]);
		break;
	}
	case ONVM_XM_STATE:
		onvm_put_be32(p, c->u.state.offset);
		onvm_put_be32(p + 4, c->u.state.total);
		onvm_put_be16(p + 8, c->u.state.len);
		memcpy(p + 12, c->u.state.bytes, c->u.state.len);
		break;
	case ONVM_XM_LOG:
		onvm_put_be64(p, c->u.log.first);
		p[8] = c->u.log.count;
		for (unsigned int i = 0; i < c->u.log.count; i++) {
			uint8_t *e = p + 16 + i * LOG_ENTRY_LEN;
			const struct onvm_xm_log_entry *x = &c->u.log.e[i];
			uint32_t n = x->n_nd > ONVM_XM_ND_MAX ? ONVM_XM_ND_MAX : x->n_nd;

			onvm_put_be32(e, x->flags);
			onvm_put_be32(e + 4, n);
			for (unsigned int k = 0; k < n; k++)
				onvm_put_be64(e + 8 + 8 * k, x->nd[k]);
		}
		break;
	default: {
		const struct onvm_xm_status *s = &c->u.status;
		const uint64_t v[10] = {s->state_acked,	   s->log_next,	      s->copies_rcvd,
					s->dst_seen,	   s->imported_flows, s->reprocessed,
					s->skipped_included, s->nd_replayed,  s->dst_dropped,
					s->copies_lost};

		p[0] = s->mirror_slot;
		p[1] = s->state;
		p[2] = s->fail;
		p[3] = s->flags;
		onvm_put_be32(p + 4, s->nd_short);
		for (int i = 0; i < 10; i++)
			onvm_put_be64(p + 8 + 8 * i, v[i]);
		break;
	}
	}
	return len;
}
