/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * ftc_wire.c -- FTC's piggyback header: parse (every field checked, a
 * refusal named), the accessors, build and strip.  The layout is in
 * ftc_wire.h.  build() checks what it writes with parse(): a sender never
 * sends what a receiver refuses.
 */
#include <string.h>

#include "ftc_wire.h"
#include "onvm_wire.h"

static const char *const reasons[FTC_REASON_MAX] = {
	[FTC_OK] = "ok",
	[FTC_NOT_FTC] = "not_ftc",
	[FTC_SHORT] = "short",
	[FTC_BAD_VERSION] = "bad_version",
	[FTC_BAD_FLAGS] = "bad_flags",
	[FTC_BAD_INNER] = "bad_inner",
	[FTC_BAD_LENGTH] = "bad_length",
	[FTC_TOO_MANY] = "too_many",
	[FTC_BAD_PART] = "bad_part",
	[FTC_ZERO_SEQ] = "zero_seq",
	[FTC_BAD_RECORD] = "bad_record",
	[FTC_BAD_RESERVED] = "bad_reserved",
	[FTC_DUP_COMMIT] = "dup_commit",
	[FTC_BAD_KIND] = "bad_kind",
};

const char *
ftc_reason_str(enum ftc_reason r)
{
	return (unsigned int)r < FTC_REASON_MAX ? reasons[r] : "?";
}

/* A log's records fill its data exactly, none empty. */
static enum ftc_reason
check_records(const uint8_t *data, uint32_t len)
{
	uint32_t pos = 0;

	while (pos < len) {
		uint16_t rl;

		if (len - pos < FTC_RECORD_HEAD_LEN)
			return FTC_BAD_RECORD;
		rl = onvm_get_be16(data + pos + 2);
		if (rl == 0 || len - pos - FTC_RECORD_HEAD_LEN < rl)
			return FTC_BAD_RECORD;
		pos += FTC_RECORD_HEAD_LEN + rl;
	}
	return FTC_OK;
}

enum ftc_reason
ftc_parse(const uint8_t *f, size_t len, struct ftc_view *v)
{
	const uint8_t *h = f + FTC_MAC_LEN;
	size_t sec, end, pos;
	uint16_t inner;

	if (len < FTC_MAC_LEN + 2)
		return FTC_SHORT;
	if (onvm_get_be16(h) != FTC_ETHERTYPE)
		return FTC_NOT_FTC;
	if (len >= FTC_MAC_LEN + 3 && h[2] != FTC_VERSION)
		return FTC_BAD_VERSION; /* (the shim's, version 1, too) */
	if (len < FTC_MAC_LEN + FTC_HEAD_LEN)
		return FTC_SHORT;
	if (h[3] & ~FTC_F_KNOWN)
		return FTC_BAD_FLAGS;
	inner = onvm_get_be16(h + 4);
	if (inner == FTC_ETHERTYPE || (inner == 0) != ((h[3] & FTC_F_PROPAGATE) != 0))
		return FTC_BAD_INNER;
	sec = onvm_get_be16(h + 6);
	pos = FTC_MAC_LEN + FTC_HEAD_LEN;
	end = pos + sec;
	if (end > len)
		return FTC_BAD_LENGTH;
	if (h[8] > FTC_MAX_LOGS || h[9] > FTC_MAX_COMMITS)
		return FTC_TOO_MANY;
	v->frame = f;
	v->len = len;
	v->flags = h[3];
	v->inner_ethertype = inner;
	v->n_logs = h[8];
	v->n_commits = h[9];
	for (unsigned int k = 0; k < v->n_logs; k++) {
		const uint8_t *l = f + pos;
		uint32_t dl;
		enum ftc_reason r;

		if (end - pos < FTC_LOG_HEAD_LEN)
			return FTC_BAD_LENGTH;
		if (l[3] == 0 || l[2] >= l[3])
			return FTC_BAD_PART;
		dl = onvm_get_be32(l + 4);
		if (end - pos - FTC_LOG_HEAD_LEN < dl)
			return FTC_BAD_LENGTH;
		if (onvm_get_be64(l + 8) == 0)
			return FTC_ZERO_SEQ;
		r = check_records(l + FTC_LOG_HEAD_LEN, dl);
		if (r != FTC_OK)
			return r;
		v->log_off[k] = (uint32_t)pos;
		pos += FTC_LOG_HEAD_LEN + dl;
	}
	if (end - pos != (size_t)v->n_commits * FTC_COMMIT_LEN)
		return FTC_BAD_LENGTH;
	v->commit_off = (uint32_t)pos;
	for (unsigned int k = 0; k < v->n_commits; k++) {
		const uint8_t *c = f + pos + (size_t)k * FTC_COMMIT_LEN;

		if (c[2] > FTC_APPLIED)
			return FTC_BAD_KIND;
		if (c[2] == FTC_VOID ? c[3] == 0 : c[3] != 0)
			return FTC_BAD_RESERVED;
		if (onvm_get_be64(c + 4) == 0 && c[2] != FTC_APPLIED && c[2] != FTC_VOID)
			return FTC_ZERO_SEQ;
		for (unsigned int j = 0; j < k; j++) {
			const uint8_t *o = f + pos + (size_t)j * FTC_COMMIT_LEN;

			if (onvm_get_be16(o) == onvm_get_be16(c) && o[2] == c[2])
				return FTC_DUP_COMMIT;
		}
	}
	/* (a propagating frame may be padded to Ethernet's minimum: ignored) */
	v->payload_off = (uint32_t)end;
	return FTC_OK;
}

void
ftc_log_get(const struct ftc_view *v, unsigned int k, struct ftc_log *out)
{
	const uint8_t *l = v->frame + v->log_off[k];

	out->instance = onvm_get_be16(l);
	out->part = l[2];
	out->parts = l[3];
	out->len = onvm_get_be32(l + 4);
	out->seq = onvm_get_be64(l + 8);
	out->data = l + FTC_LOG_HEAD_LEN;
}

void
ftc_commit_get(const struct ftc_view *v, unsigned int k, struct ftc_commit *out)
{
	const uint8_t *c = v->frame + v->commit_off + (size_t)k * FTC_COMMIT_LEN;

	out->instance = onvm_get_be16(c);
	out->kind = c[2];
	out->span = c[3];
	out->seq = onvm_get_be64(c + 4);
}

bool
ftc_record_next(const struct ftc_log *l, uint32_t *pos, struct ftc_record *out)
{
	const uint8_t *r;

	if (*pos >= l->len)
		return false;
	r = l->data + *pos;
	out->region = onvm_get_be16(r);
	out->len = onvm_get_be16(r + 2);
	out->offset = onvm_get_be32(r + 4);
	out->bytes = r + FTC_RECORD_HEAD_LEN;
	*pos += FTC_RECORD_HEAD_LEN + out->len;
	return true;
}

static size_t
log_data_len(const struct ftc_log_in *l)
{
	size_t n = 0;

	for (unsigned int i = 0; i < l->n_recs; i++)
		n += FTC_RECORD_HEAD_LEN + l->recs[i].len;
	return n;
}

size_t
ftc_section_len(const struct ftc_log_in *logs, unsigned int n_logs, unsigned int n_commits)
{
	size_t n = (size_t)n_commits * FTC_COMMIT_LEN;

	for (unsigned int k = 0; k < n_logs; k++)
		n += FTC_LOG_HEAD_LEN + log_data_len(&logs[k]);
	return n;
}

/* What ftc_parse() would refuse in these logs and commits, checked before
 * anything is written. */
static bool
input_ok(const struct ftc_log_in *logs, unsigned int n_logs, const struct ftc_commit *commits,
	 unsigned int n_commits)
{
	for (unsigned int k = 0; k < n_logs; k++) {
		const struct ftc_log_in *l = &logs[k];

		if (l->parts == 0 || l->part >= l->parts || l->seq == 0)
			return false;
		for (unsigned int i = 0; i < l->n_recs; i++)
			if (l->recs[i].len == 0)
				return false;
	}
	for (unsigned int k = 0; k < n_commits; k++) {
		if ((commits[k].seq == 0 && commits[k].kind != FTC_APPLIED &&
		     commits[k].kind != FTC_VOID) ||
		    commits[k].kind > FTC_APPLIED ||
		    (commits[k].kind == FTC_VOID ? commits[k].span == 0 : commits[k].span != 0))
			return false;
		for (unsigned int j = 0; j < k; j++)
			if (commits[j].instance == commits[k].instance &&
			    commits[j].kind == commits[k].kind)
				return false;
	}
	return true;
}

void
ftc_put_head(uint8_t *h, uint8_t flags, uint16_t inner, uint16_t section, unsigned int n_logs,
	     unsigned int n_commits)
{
	onvm_put_be16(h, FTC_ETHERTYPE);
	h[2] = FTC_VERSION;
	h[3] = flags;
	onvm_put_be16(h + 4, inner);
	onvm_put_be16(h + 6, section);
	h[8] = (uint8_t)n_logs;
	h[9] = (uint8_t)n_commits;
}

void
ftc_put_log_head(uint8_t *w, uint16_t instance, uint8_t part, uint8_t parts, uint32_t len,
		 uint64_t seq)
{
	onvm_put_be16(w, instance);
	w[2] = part;
	w[3] = parts;
	onvm_put_be32(w + 4, len);
	onvm_put_be64(w + 8, seq);
}

void
ftc_put_commit(uint8_t *w, const struct ftc_commit *c)
{
	onvm_put_be16(w, c->instance);
	w[2] = c->kind;
	w[3] = c->span;
	onvm_put_be64(w + 4, c->seq);
}

int
ftc_build(uint8_t *out, size_t cap, const uint8_t *pkt, size_t pkt_len, uint8_t flags,
	  const struct ftc_log_in *logs, unsigned int n_logs, const struct ftc_commit *commits,
	  unsigned int n_commits)
{
	const bool propagate = (flags & FTC_F_PROPAGATE) != 0;
	size_t sec, total, pos;
	struct ftc_view v;
	uint8_t *h = out + FTC_MAC_LEN;

	if (propagate ? pkt_len != FTC_MAC_LEN
		      : pkt_len < FTC_MAC_LEN + 2 || pkt_len > FTC_FRAME_MAX ||
				onvm_get_be16(pkt + FTC_MAC_LEN) == FTC_ETHERTYPE ||
				onvm_get_be16(pkt + FTC_MAC_LEN) == 0)
		return -1;
	if ((flags & ~FTC_F_KNOWN) != 0 || n_logs > FTC_MAX_LOGS || n_commits > FTC_MAX_COMMITS ||
	    !input_ok(logs, n_logs, commits, n_commits))
		return -1;
	sec = ftc_section_len(logs, n_logs, n_commits);
	if (sec > FTC_MAX_SECTION)
		return -1;
	total = FTC_MAC_LEN + FTC_HEAD_LEN + sec + (propagate ? 0 : pkt_len - FTC_MAC_LEN - 2);
	if (total > cap || total > INT32_MAX)
		return -1;
	memcpy(out, pkt, FTC_MAC_LEN);
	ftc_put_head(h, flags, propagate ? 0 : onvm_get_be16(pkt + FTC_MAC_LEN), (uint16_t)sec,
		     n_logs, n_commits);
	pos = FTC_MAC_LEN + FTC_HEAD_LEN;
	for (unsigned int k = 0; k < n_logs; k++) {
		const struct ftc_log_in *l = &logs[k];

		ftc_put_log_head(out + pos, l->instance, l->part, l->parts,
				 (uint32_t)log_data_len(l), l->seq);
		pos += FTC_LOG_HEAD_LEN;
		for (unsigned int i = 0; i < l->n_recs; i++) {
			const struct ftc_record_in *r = &l->recs[i];

			onvm_put_be16(out + pos, r->region);
			onvm_put_be16(out + pos + 2, r->len);
			onvm_put_be32(out + pos + 4, r->offset);
			if (r->len > 0)
				memcpy(out + pos + FTC_RECORD_HEAD_LEN, r->bytes, r->len);
			pos += FTC_RECORD_HEAD_LEN + r->len;
		}
	}
	for (unsigned int k = 0; k < n_commits; k++) {
		ftc_put_commit(out + pos, &commits[k]);
		pos += FTC_COMMIT_LEN;
	}
	if (!propagate)
		memcpy(out + pos, pkt + FTC_MAC_LEN + 2, pkt_len - FTC_MAC_LEN - 2);
	if (ftc_parse(out, total, &v) != FTC_OK)
		return -1;
	return (int)total;
}

int
ftc_strip_front(uint8_t *frame, const struct ftc_view *v)
{
	const uint32_t cut = v->payload_off - FTC_MAC_LEN - 2;

	if (v->flags & FTC_F_PROPAGATE)
		return -1;
	onvm_put_be16(frame + v->payload_off - 2, v->inner_ethertype);
	memmove(frame + cut, frame, FTC_MAC_LEN);
	return (int)cut;
}

int
ftc_strip(uint8_t *out, size_t cap, const struct ftc_view *v)
{
	size_t body = v->len - v->payload_off;

	if ((v->flags & FTC_F_PROPAGATE) || FTC_MAC_LEN + 2 + body > cap ||
	    FTC_MAC_LEN + 2 + body > FTC_FRAME_MAX)
		return -1;
	memmove(out, v->frame, FTC_MAC_LEN); /* (`out` may be the frame itself) */
	onvm_put_be16(out + FTC_MAC_LEN, v->inner_ethertype);
	memmove(out + FTC_MAC_LEN + 2, v->frame + v->payload_off, body);
	return (int)(FTC_MAC_LEN + 2 + body);
}
