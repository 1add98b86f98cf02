/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * nf_store.c -- stateless resiliency's store client, run by the NF's own
 * loop (design: docs/design/stateless.md; keys and scripts: onvm_store.h).
 *
 * The NF keeps working on its state regions as in every other mode.  What
 * its batches dirtied goes to a Redis-protocol store as versioned WRITEs:
 * with the cache on, once per epoch (at the marker that closes it); with it
 * off, at every batch and at the marker.  One non-blocking hiredis
 * connection, pipelined: the loop sends and reads whenever it passes here,
 * never blocks in a system call, and a sync NF waits (polling, its
 * heartbeat going) for its replies before its next batch.  Every WRITE not
 * yet answered stays in a FIFO, as sent, so a lost connection loses
 * nothing: the FIFO is sent again, in order, on the next one, and the
 * version check makes a WRITE the store had already applied an ack.
 *
 * At start (nf_run), before its first packet, the NF fences the chain's
 * older incarnation and loads its state at the chain's recovery point.
 */
#include <errno.h>
#include <inttypes.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <hiredis/hiredis.h>
#include <hiredis/sds.h>

#include <rte_common.h>

#include "nf_private.h"

#define LOAD_BATCH 256		 /* chunk keys per LOAD */
#define BACKOFF_MIN_NS 10000000ULL /* reconnect after 10 ms, doubling ... */
#define BACKOFF_MAX_NS 1000000000ULL /* ... up to 1 s */
#define FIXED_ARGS 6		 /* WRITE's ARGV before the values */

struct store_req {
	char *cmd; /* the formatted command, as sent */
	int len;
	uint64_t epoch, seq;
	uint64_t sent_ns;
	uint8_t close;
};

struct nf_store {
	const struct onvm_store_cfg *cfg;
	struct onvm_chain *chain;
	struct onvm_store_stats *st;
	struct onvm_store_addr addr;
	uint16_t service;
	bool unchecked;	  /* test-only: WRITE without its version check */
	redisContext *c;
	bool connecting;  /* connect() in progress */
	uint32_t scripts_due; /* SCRIPT LOAD replies still to come on this connection */
	uint64_t retry_ns, backoff_ns;
	char sha[ONVM_STORE_NSCRIPTS][41];
	uint64_t gen;
	uint64_t field; /* the version (epoch) of WRITEs before the next marker */
	uint64_t seq;
	uint64_t layout_fp;
	/* The FIFO of WRITEs not yet answered; the first `n_sent` of them went
	 * out on the current connection. */
	struct store_req *q;
	uint32_t cap, head, n, n_sent;
	/* Chunks dirtied since the last WRITE (a bitmap per region, and the
	 * same as a list), and chunks the index holds. */
	uint64_t *dirty[NF_STATE_MAX_REGIONS];
	uint32_t (*dlist)[2];
	uint64_t *stored[NF_STATE_MAX_REGIONS];
	uint32_t n_dirty;
	/* WRITE's arguments, grown as needed. */
	const char **argv;
	size_t *argl;
	char (*keys)[ONVM_STORE_KEY_LEN];
	char (*members)[24];
	uint32_t arg_cap;
	bool stopped_logged;
	bool seed_pending; /* the store lost our record: the next WRITE re-seeds it */
	uint64_t seed_seq; /* ... that WRITE's seq: "lost" for an older one is no news */
	bool lost_logged;
};

static inline uint64_t
bit_test(const uint64_t *b, uint32_t i)
{
	return b[i >> 6] & (UINT64_C(1) << (i & 63));
}

static inline void
bit_set(uint64_t *b, uint32_t i)
{
	b[i >> 6] |= UINT64_C(1) << (i & 63);
}

static void
set_state(struct nf_store *s, enum onvm_store_state st)
{
	__atomic_store_n(&s->st->state, (uint32_t)st, __ATOMIC_RELEASE);
}

/* ---- the connection ---- */

static void
conn_drop(struct nf_ctx *nf, const char *why)
{
	struct nf_store *s = nf->store;

	if (s->c != NULL) {
		if (!s->connecting && why != NULL)
			NF_LOG(WARNING, "%s: store %s: connection reset: %s (%u updates kept to send again)",
			       nf->name, s->cfg->addr, why, s->n);
		redisFree(s->c);
		s->c = NULL;
		s->st->resets += !s->connecting;
	}
	s->connecting = false;
	s->n_sent = 0;
	s->scripts_due = 0;
	s->retry_ns = nfl_mono_ns() + s->backoff_ns;
	s->backoff_ns = RTE_MIN(s->backoff_ns * 2, BACKOFF_MAX_NS);
	if (__atomic_load_n(&s->st->state, __ATOMIC_RELAXED) == ONVM_STORE_READY)
		set_state(s, ONVM_STORE_DOWN);
}

static void
conn_start(struct nf_ctx *nf)
{
	struct nf_store *s = nf->store;

	s->c = s->addr.unix_socket ? redisConnectUnixNonBlock(s->addr.path)
				   : redisConnectNonBlock(s->addr.host, s->addr.port);
	if (s->c == NULL || s->c->err) {
		s->st->connect_fails++;
		if (s->c != NULL) {
			redisFree(s->c);
			s->c = NULL;
		}
		s->retry_ns = nfl_mono_ns() + s->backoff_ns;
		s->backoff_ns = RTE_MIN(s->backoff_ns * 2, BACKOFF_MAX_NS);
		return;
	}
	if (!s->addr.unix_socket)
		redisEnableKeepAlive(s->c);
	s->connecting = true;
	s->retry_ns = nfl_mono_ns() + (uint64_t)s->cfg->timeout_ms * 1000000ULL;
}

/* The connection is up: scripts first (the store may be a new one), then
 * every WRITE not yet answered, in order. */
static void
conn_ready(struct nf_ctx *nf)
{
	struct nf_store *s = nf->store;

	s->connecting = false;
	for (int i = 0; i < ONVM_STORE_NSCRIPTS; i++) {
		const char *text = s->unchecked ? onvm_store_script_text_unchecked(i)
						: onvm_store_script_text(i);

		redisAppendCommand(s->c, "SCRIPT LOAD %s", text);
	}
	s->scripts_due = ONVM_STORE_NSCRIPTS;
	for (uint32_t k = 0; k < s->n; k++) {
		struct store_req *r = &s->q[(s->head + k) % s->cap];

		redisAppendFormattedCommand(s->c, r->cmd, (size_t)r->len);
		r->sent_ns = nfl_mono_ns();
		s->st->updates_retried++;
	}
	s->n_sent = s->n;
	if (__atomic_load_n(&s->st->state, __ATOMIC_RELAXED) == ONVM_STORE_DOWN)
		set_state(s, ONVM_STORE_READY);
}

/* Has a non-blocking connect() finished?  1 yes, 0 not yet, -1 failed. */
static int
connect_done(struct nf_store *s)
{
	struct pollfd p = {.fd = s->c->fd, .events = POLLOUT};
	int err = 0;
	socklen_t l = sizeof(err);

	if (poll(&p, 1, 0) <= 0)
		return 0;
	if (getsockopt(s->c->fd, SOL_SOCKET, SO_ERROR, &err, &l) < 0 || err != 0)
		return -1;
	return 1;
}

/* ---- replies ---- */

static void
reply_ints(const redisReply *r, struct onvm_store_ints *out)
{
	out->n = -1;
	if (r->type != REDIS_REPLY_ARRAY || r->elements < 1 || r->elements > 3)
		return;
	for (size_t i = 0; i < r->elements; i++) {
		if (r->element[i]->type != REDIS_REPLY_INTEGER)
			return;
		out->v[i] = r->element[i]->integer;
	}
	out->n = (int)r->elements;
}

static void
stop_updates(struct nf_ctx *nf, const char *why)
{
	struct nf_store *s = nf->store;

	if (!s->stopped_logged)
		NF_LOG(ERR, "%s: store %s: %s; this NF sends no more updates and its chain "
			    "releases nothing more (the next recovery of the chain decides)",
		       nf->name, s->cfg->addr, why);
	s->stopped_logged = true;
	set_state(s, ONVM_STORE_STOPPED);
}

/*
 * The store no longer has this NF's record (it restarted without its
 * data): every chunk it ever stored goes again, in the next WRITE, which
 * makes the record anew (ONVM_STORE_W_SEED) with its epoch as the base.
 * Chunks it never stored still hold what a fresh instance's start-up
 * writes.  Until every NF of the chain closed an epoch past every NF's
 * base there is no consistent cut: a recovery then says so (FENCE, state
 * 3).  The updates that got this answer are dropped: the re-seed holds
 * their chunks, newer.
 */
static void
reseed(struct nf_ctx *nf)
{
	struct nf_store *s = nf->store;

	if (s->seed_pending)
		return; /* (the answers to the rest of the pipeline) */
	if (!s->lost_logged)
		NF_LOG(WARNING, "%s: store %s lost this NF's record (restarted without its data?): "
				"sending its whole state again",
		       nf->name, s->cfg->addr);
	s->lost_logged = true;
	s->seed_pending = true;
	for (uint32_t rg = 0; nf->has_state && rg < nf->state.n_regions; rg++) {
		uint32_t chunks = nf_state_chunks(&nf->state, rg);

		for (uint32_t c = 0; c < chunks; c++) {
			if (!bit_test(s->stored[rg], c))
				continue;
			s->stored[rg][c >> 6] &= ~(UINT64_C(1) << (c & 63));
			if (!bit_test(s->dirty[rg], c)) {
				bit_set(s->dirty[rg], c);
				s->dlist[s->n_dirty][0] = rg;
				s->dlist[s->n_dirty][1] = c;
				s->n_dirty++;
			}
		}
	}
}

/* One reply, in order.  false: the connection must be reset. */
static bool
handle_reply(struct nf_ctx *nf, redisReply *r)
{
	struct nf_store *s = nf->store;
	struct onvm_store_ints ints;
	struct store_req *q;

	if (s->scripts_due > 0) {
		int i = ONVM_STORE_NSCRIPTS - (int)s->scripts_due--;

		/* The SHA1 of the same text, so the one loaded at start. */
		if (r->type != REDIS_REPLY_STRING || r->len != 40 || memcmp(r->str, s->sha[i], 40) != 0) {
			s->st->bad_replies++;
			return false;
		}
		return true;
	}
	if (s->n_sent == 0)
		return false; /* a reply to nothing we sent */
	q = &s->q[s->head];
	reply_ints(r, &ints);
	switch (onvm_store_write_verdict(&ints, q->epoch, q->seq)) {
	case ONVM_STORE_NOT_NEWER:
		s->st->versions_refused++;
		/* applied before (a retry) */
		/* fall through */
	case ONVM_STORE_APPLIED:
		s->st->updates_acked++;
		if (q->close) {
			s->st->epochs_closed++;
			if (q->epoch > __atomic_load_n(&nf->slot->store_closed, __ATOMIC_RELAXED))
				__atomic_store_n(&nf->slot->store_closed, q->epoch, __ATOMIC_RELEASE);
		}
		break;
	case ONVM_STORE_FENCED:
		s->st->fenced++;
		stop_updates(nf, "a newer incarnation of the chain runs (updates fenced)");
		break;
	case ONVM_STORE_LOST:
		s->st->lost++;
		if (q->seq > s->seed_seq)
			reseed(nf);
		break;
	default:
		if (r->type == REDIS_REPLY_ERROR)
			NF_LOG(WARNING, "%s: store %s answered an update with an error: %.*s",
			       nf->name, s->cfg->addr, (int)RTE_MIN(r->len, (size_t)200), r->str);
		s->st->bad_replies++;
		return false;
	}
	free(q->cmd);
	s->head = (s->head + 1) % s->cap;
	s->n--;
	s->n_sent--;
	s->backoff_ns = BACKOFF_MIN_NS; /* it answers: a later loss retries at once */
	return true;
}

/* Send what is buffered, read what came, handle every whole reply.  Never
 * blocks. */
static void
service(struct nf_ctx *nf)
{
	struct nf_store *s = nf->store;
	uint64_t now;
	int done = 0;
	void *reply;

	if (__atomic_load_n(&s->st->state, __ATOMIC_RELAXED) == ONVM_STORE_STOPPED)
		return;
	now = nfl_mono_ns();
	if (s->c == NULL) {
		if (now < s->retry_ns)
			return;
		conn_start(nf);
		if (s->c == NULL)
			return;
	}
	if (s->connecting) {
		int d = connect_done(s);

		if (d == 0 && now < s->retry_ns)
			return;
		if (d <= 0) {
			s->st->connect_fails++;
			conn_drop(nf, NULL);
			return;
		}
		conn_ready(nf);
	}
	if (redisBufferWrite(s->c, &done) != REDIS_OK) {
		conn_drop(nf, s->c->errstr);
		return;
	}
	if (redisBufferRead(s->c) != REDIS_OK) {
		conn_drop(nf, s->c->errstr[0] ? s->c->errstr : "closed by the store");
		return;
	}
	for (;;) {
		bool ok;

		reply = NULL;
		if (redisGetReplyFromReader(s->c, &reply) != REDIS_OK) {
			s->st->bad_replies++;
			conn_drop(nf, "a reply that is not RESP");
			return;
		}
		if (reply == NULL)
			break;
		ok = handle_reply(nf, reply);
		freeReplyObject(reply);
		if (!ok) {
			conn_drop(nf, "a reply that is not what was asked");
			return;
		}
	}
	/* The oldest WRITE overdue: the store hangs, or the path to it.  (A
	 * fresh clock: a reconnect above stamped them after `now`.) */
	if (s->n_sent > 0) {
		uint64_t t = nfl_mono_ns(), sent = s->q[s->head].sent_ns;

		if (t > sent && t - sent > (uint64_t)s->cfg->timeout_ms * 1000000ULL) {
			conn_drop(nf, "no reply within timeout_ms");
			return;
		}
	}
	__atomic_store_n(&s->st->outstanding, s->n, __ATOMIC_RELAXED);
}

/* Wait for the connection's fd (or 1 ms), keeping the heartbeat going. */
static void
wait_io(struct nf_ctx *nf, int timeout_ms)
{
	struct nf_store *s = nf->store;
	struct pollfd p = {.fd = s->c != NULL ? s->c->fd : -1, .events = POLLIN};

	if (s->c != NULL && (s->connecting || sdslen(s->c->obuf) > 0))
		p.events |= POLLOUT;
	nfl_heartbeat(nf);
	if (p.fd >= 0)
		(void)poll(&p, 1, timeout_ms);
	else
		usleep((useconds_t)timeout_ms * 1000);
}

/* Serve the connection until at most `keep` WRITEs are unanswered (or the
 * NF is told to stop, or the updates were stopped). */
static void
drain_to(struct nf_ctx *nf, uint32_t keep)
{
	struct nf_store *s = nf->store;
	uint64_t t0 = nfl_mono_ns();

	service(nf);
	while (s->n > keep && !nf_stopping(nf) &&
	       __atomic_load_n(&s->st->state, __ATOMIC_RELAXED) != ONVM_STORE_STOPPED) {
		nfl_rt_leave(nf);
		wait_io(nf, 1);
		service(nf);
	}
	s->st->wait_ns += nfl_mono_ns() - t0;
}

/* ---- WRITE ---- */

static int
grow_args(struct nf_store *s, uint32_t need)
{
	uint32_t cap = s->arg_cap ? s->arg_cap : 64;
	void *a, *l, *k, *m;

	if (need <= s->arg_cap)
		return 0;
	while (cap < need)
		cap *= 2;
	a = realloc(s->argv, cap * sizeof(*s->argv));
	if (a != NULL)
		s->argv = a;
	l = realloc(s->argl, cap * sizeof(*s->argl));
	if (l != NULL)
		s->argl = l;
	k = realloc(s->keys, cap * sizeof(*s->keys));
	if (k != NULL)
		s->keys = k;
	m = realloc(s->members, cap * sizeof(*s->members));
	if (m != NULL)
		s->members = m;
	if (a == NULL || l == NULL || k == NULL || m == NULL)
		return -ENOMEM;
	s->arg_cap = cap;
	return 0;
}

static inline void
arg(struct nf_store *s, uint32_t *i, const char *p, size_t len)
{
	s->argv[*i] = p;
	s->argl[*i] = len;
	(*i)++;
}

/* Queue one WRITE of every dirty chunk at version `epoch`; close: it ends
 * the epoch, at the marker stamped `ts`.  A full pipeline makes the NF
 * wait first (backpressure). */
static void
write_dirty(struct nf_ctx *nf, uint64_t epoch, bool close, uint64_t ts)
{
	struct nf_store *s = nf->store;
	struct nf_state_set *set = &nf->state;
	char nums[FIXED_ARGS + 1][24];
	uint32_t nk = s->n_dirty, nmem = 0, i = 0, v0;
	struct store_req *r;
	char *cmd = NULL;
	int len;

	if (__atomic_load_n(&s->st->state, __ATOMIC_RELAXED) == ONVM_STORE_STOPPED)
		return;
	if (s->n >= s->cfg->pipeline) {
		s->st->pipeline_waits++;
		drain_to(nf, s->cfg->pipeline - 1);
		if (s->n >= s->cfg->pipeline)
			return; /* stopping, or updates stopped */
	}
	if (grow_args(s, 3 * nk + FIXED_ARGS + 16) < 0) {
		stop_updates(nf, "out of memory for an update");
		return;
	}
	s->seq++;
	arg(s, &i, "EVALSHA", 7);
	arg(s, &i, s->sha[ONVM_STORE_WRITE], 40);
	snprintf(nums[0], sizeof(nums[0]), "%u", nk + 3);
	arg(s, &i, nums[0], strlen(nums[0]));
	onvm_store_key_meta(s->keys[0], ONVM_STORE_KEY_LEN, s->chain->name, s->service);
	onvm_store_key_index(s->keys[1], ONVM_STORE_KEY_LEN, s->chain->name, s->service);
	onvm_store_key_closes(s->keys[2], ONVM_STORE_KEY_LEN, s->chain->name, s->service);
	arg(s, &i, s->keys[0], strlen(s->keys[0]));
	arg(s, &i, s->keys[1], strlen(s->keys[1]));
	arg(s, &i, s->keys[2], strlen(s->keys[2]));
	/* Chunk keys now; their values after the fixed arguments. */
	v0 = i + nk + FIXED_ARGS;
	for (uint32_t d = 0; d < nk; d++) {
		uint32_t rg = s->dlist[d][0], c = s->dlist[d][1], k = d + 3;
		uint32_t csz = nf_state_chunk_size(set, rg);
		uint64_t off = (uint64_t)c * csz;

		onvm_store_key_chunk(s->keys[k], ONVM_STORE_KEY_LEN, s->chain->name, s->service, rg,
				     c);
		arg(s, &i, s->keys[k], strlen(s->keys[k]));
		s->argv[v0 + d] = (const char *)nf_state_region_ptr(set, rg) + off;
		s->argl[v0 + d] = (size_t)RTE_MIN((uint64_t)csz, nf_state_region_size(set, rg) - off);
		s->st->bytes_sent += s->argl[v0 + d];
		s->dirty[rg][c >> 6] &= ~(UINT64_C(1) << (c & 63));
		if (!bit_test(s->stored[rg], c)) {
			onvm_store_chunk_member(s->members[nmem], sizeof(s->members[0]), rg, c);
			bit_set(s->stored[rg], c);
			nmem++;
		}
	}
	snprintf(nums[1], sizeof(nums[1]), "%" PRIu64, s->gen);
	snprintf(nums[2], sizeof(nums[2]), "%" PRIu64, epoch);
	snprintf(nums[3], sizeof(nums[3]), "%" PRIu64, s->seq);
	snprintf(nums[4], sizeof(nums[4]), "%" PRIu64,
		 __atomic_load_n(&s->chain->sl_committed, __ATOMIC_ACQUIRE));
	arg(s, &i, nums[1], strlen(nums[1]));
	arg(s, &i, nums[2], strlen(nums[2]));
	arg(s, &i, nums[3], strlen(nums[3]));
	{
		int fl = (close ? ONVM_STORE_W_CLOSE : 0) | (s->seed_pending ? ONVM_STORE_W_SEED : 0);

		snprintf(nums[5], sizeof(nums[5]), "%d", fl);
		arg(s, &i, nums[5], strlen(nums[5]));
		if (s->seed_pending)
			s->seed_seq = s->seq;
		s->seed_pending = false;
	}
	arg(s, &i, nums[4], strlen(nums[4]));
	snprintf(nums[6], sizeof(nums[6]), "%" PRIu64, close ? ts : 0);
	arg(s, &i, nums[6], strlen(nums[6]));
	i += nk; /* the values, filled above */
	for (uint32_t m = 0; m < nmem; m++)
		arg(s, &i, s->members[m], strlen(s->members[m]));
	len = redisFormatCommandArgv(&cmd, (int)i, s->argv, s->argl);
	if (len < 0) {
		stop_updates(nf, "out of memory for an update");
		return;
	}
	s->st->updates_sent++;
	s->st->chunks_sent += nk;
	s->n_dirty = 0;
	r = &s->q[(s->head + s->n) % s->cap];
	*r = (struct store_req){.cmd = cmd, .len = len, .epoch = epoch, .seq = s->seq,
				.sent_ns = nfl_mono_ns(), .close = close};
	s->n++;
	/* Out now on a live connection (else on the next one, with the rest). */
	if (s->c != NULL && !s->connecting && s->n_sent == s->n - 1) {
		redisAppendFormattedCommand(s->c, cmd, (size_t)len);
		s->n_sent++;
	}
	service(nf);
}

/* Fold the current batch's dirty chunks into the store's dirty set. */
static void
note_batch_dirty(struct nf_ctx *nf)
{
	struct nf_store *s = nf->store;

	for (uint32_t rg = 0; rg < nf->state.n_regions; rg++) {
		uint32_t n;
		const uint32_t *l = nf_state_dirty_list(&nf->state, rg, &n);

		for (uint32_t k = 0; k < n; k++)
			if (!bit_test(s->dirty[rg], l[k])) {
				bit_set(s->dirty[rg], l[k]);
				s->dlist[s->n_dirty][0] = rg;
				s->dlist[s->n_dirty][1] = l[k];
				s->n_dirty++;
			}
		s->st->chunks_dirtied += n;
	}
}

/* ---- the NF's side ---- */

void
nfl_store_batch_end(struct nf_ctx *nf)
{
	struct nf_store *s = nf->store;

	if (nf->has_state)
		note_batch_dirty(nf);
	if (!s->cfg->cache && s->n_dirty > 0)
		write_dirty(nf, s->field, false, 0);
	if (s->cfg->mode == ONVM_STORE_SYNC && s->n > 0) {
		s->st->sync_waits++;
		drain_to(nf, 0);
	}
}

void
nfl_store_marker(struct nf_ctx *nf, uint64_t cut_id, uint64_t ts)
{
	struct nf_store *s = nf->store;

	if (cut_id < s->field)
		return; /* older than what this incarnation loaded or wrote */
	if (nf->has_state)
		note_batch_dirty(nf); /* what the batch changed before the marker */
	write_dirty(nf, cut_id, true, ts);
	s->field = cut_id + 1;
}

void
nfl_store_poll(struct nf_ctx *nf)
{
	service(nf);
}

bool
nfl_store_busy(const struct nf_ctx *nf)
{
	const struct nf_store *s = nf->store;

	return s->n > 0 || s->connecting || (s->c != NULL && sdslen(s->c->obuf) > 0);
}

void
nfl_store_wait(struct nf_ctx *nf)
{
	wait_io(nf, 1);
	service(nf);
}

/* ---- warm-up: fence, load ---- */

/* One synchronous command on the (blocking-for-now) start-up path: serve the
 * connection until its reply comes.  NULL on a lost connection or time-out. */
static redisReply *
call_argv(struct nf_ctx *nf, int argc, const char **argv, const size_t *argl)
{
	struct nf_store *s = nf->store;
	uint64_t until = nfl_mono_ns() + (uint64_t)s->cfg->timeout_ms * 1000000ULL;
	void *reply = NULL;
	int done = 0;

	if (redisAppendCommandArgv(s->c, argc, argv, argl) != REDIS_OK)
		return NULL;
	while (nfl_mono_ns() < until && !nf_stopping(nf)) {
		if (redisBufferWrite(s->c, &done) != REDIS_OK || redisBufferRead(s->c) != REDIS_OK)
			return NULL;
		if (redisGetReplyFromReader(s->c, &reply) != REDIS_OK)
			return NULL;
		if (reply != NULL)
			return reply;
		wait_io(nf, 1);
	}
	return NULL;
}

static redisReply *
call2(struct nf_ctx *nf, const char *a0, const char *a1)
{
	const char *argv[2] = {a0, a1};
	size_t argl[2] = {strlen(a0), strlen(a1)};

	return call_argv(nf, 2, argv, argl);
}

static int
connect_now(struct nf_ctx *nf)
{
	struct nf_store *s = nf->store;
	uint64_t until = nfl_mono_ns() + (uint64_t)s->cfg->timeout_ms * 1000000ULL;

	conn_start(nf);
	while (s->c != NULL && s->connecting) {
		int d = connect_done(s);

		if (d < 0 || nfl_mono_ns() > until)
			break;
		if (d > 0) {
			s->connecting = false;
			return 0;
		}
		wait_io(nf, 1);
	}
	if (s->c != NULL) {
		redisFree(s->c);
		s->c = NULL;
	}
	s->connecting = false;
	return -ECONNREFUSED;
}

static int
load_scripts(struct nf_ctx *nf)
{
	struct nf_store *s = nf->store;

	for (int i = 0; i < ONVM_STORE_NSCRIPTS; i++) {
		const char *text = s->unchecked ? onvm_store_script_text_unchecked(i)
						: onvm_store_script_text(i);
		const char *argv[3] = {"SCRIPT", "LOAD", text};
		size_t argl[3] = {6, 4, strlen(text)};
		redisReply *r = call_argv(nf, 3, argv, argl);

		if (r == NULL || r->type != REDIS_REPLY_STRING || r->len != 40) {
			NF_LOG(ERR, "%s: store %s: SCRIPT LOAD %s: %s", nf->name, s->cfg->addr,
			       onvm_store_script_name(i),
			       r != NULL && r->type == REDIS_REPLY_ERROR ? r->str : "no usable answer");
			if (r != NULL)
				freeReplyObject(r);
			return -EPROTO;
		}
		memcpy(s->sha[i], r->str, 40);
		s->sha[i][40] = '\0';
		freeReplyObject(r);
	}
	return 0;
}

/* FENCE: this incarnation's generation and the chain's recovery point. */
static int
fence(struct nf_ctx *nf, const uint64_t *token, uint64_t *epoch)
{
	struct nf_store *s = nf->store;
	const struct onvm_chain *ch = s->chain;
	char keys[2 * ONVM_MAX_CHAIN_LEN + 1][ONVM_STORE_KEY_LEN], tok[24], want[24], nk[8];
	uint64_t ts;
	const char *argv[2 * ONVM_MAX_CHAIN_LEN + 6];
	size_t argl[2 * ONVM_MAX_CHAIN_LEN + 6];
	uint32_t i = 0;
	redisReply *r;
	int ret = -EPROTO;

	argv[i++] = "EVALSHA";
	argv[i++] = s->sha[ONVM_STORE_FENCE];
	snprintf(nk, sizeof(nk), "%u", 2u * ch->len + 1u);
	argv[i++] = nk;
	onvm_store_key_run(keys[0], sizeof(keys[0]), ch->name);
	argv[i++] = keys[0];
	for (uint16_t k = 0; k < ch->len; k++) {
		onvm_store_key_meta(keys[2 * k + 1], sizeof(keys[0]), ch->name, ch->services[k]);
		onvm_store_key_closes(keys[2 * k + 2], sizeof(keys[0]), ch->name, ch->services[k]);
		argv[i++] = keys[2 * k + 1];
		argv[i++] = keys[2 * k + 2];
	}
	snprintf(tok, sizeof(tok), "%" PRIu64, *token);
	argv[i++] = tok;
	snprintf(want, sizeof(want), "%" PRIu64,
		 __atomic_load_n(&ch->sl_recover_epoch, __ATOMIC_ACQUIRE));
	argv[i++] = want;
	for (uint32_t k = 0; k < i; k++)
		argl[k] = strlen(argv[k]);
	r = call_argv(nf, (int)i, argv, argl);
	if (r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements == 4 &&
	    r->element[0]->type == REDIS_REPLY_INTEGER && r->element[1]->type == REDIS_REPLY_INTEGER &&
	    r->element[2]->type == REDIS_REPLY_INTEGER && r->element[3]->type == REDIS_REPLY_STRING &&
	    r->element[0]->integer > 0 && r->element[1]->integer >= 0 &&
	    onvm_store_parse_u64(r->element[3]->str, r->element[3]->len, &ts) == 0) {
		s->gen = (uint64_t)r->element[0]->integer;
		*epoch = (uint64_t)r->element[1]->integer;
		s->st->recovered_ts = ts;
		if (r->element[2]->integer >= 2) {
			NF_LOG(ERR, "%s: store %s %s: chain '%s' starts from its epoch %" PRId64
				    " (0: its initial state)",
			       nf->name, s->cfg->addr,
			       r->element[2]->integer == 2 ? "holds state for some NFs of the chain, "
							     "not all"
							   : "lost state the chain's exit had released: "
							     "no whole epoch is at or after it",
			       ch->name, (int64_t)r->element[1]->integer);
			s->st->lost++;
		}
		ret = 0;
	} else {
		NF_LOG(ERR, "%s: store %s: FENCE: %s", nf->name, s->cfg->addr,
		       r != NULL && r->type == REDIS_REPLY_ERROR ? r->str : "no usable answer");
	}
	if (r != NULL)
		freeReplyObject(r);
	return ret;
}

/* Put one loaded chunk into the state (canonical and replica). */
static int
load_chunk(struct nf_ctx *nf, uint32_t rg, uint32_t c, const redisReply *v)
{
	struct nf_state_set *set = &nf->state;
	uint64_t off = (uint64_t)c * nf_state_chunk_size(set, rg);
	size_t want = (size_t)RTE_MIN((uint64_t)nf_state_chunk_size(set, rg),
				      nf_state_region_size(set, rg) - off);

	if (v->type == REDIS_REPLY_NIL)
		return 0; /* nothing at or before the recovery point */
	if (v->type != REDIS_REPLY_STRING || v->len != want)
		return -EPROTO;
	if (nf_state_write_both(set, rg, off, v->str, want) < 0)
		return -EPROTO;
	bit_set(nf->store->stored[rg], c);
	nf->store->st->loaded_chunks++;
	return 0;
}

static int
load_some(struct nf_ctx *nf, uint64_t epoch, const uint32_t (*which)[2], uint32_t n)
{
	struct nf_store *s = nf->store;
	char nk[12], g[24], e[24], fp[24];
	uint32_t i = 0;
	redisReply *r;
	int ret = 0;

	if (grow_args(s, n + 8) < 0)
		return -ENOMEM;
	snprintf(nk, sizeof(nk), "%u", n + 1);
	snprintf(g, sizeof(g), "%" PRIu64, s->gen);
	snprintf(e, sizeof(e), "%" PRIu64, epoch);
	snprintf(fp, sizeof(fp), "%" PRIu64, s->layout_fp);
	arg(s, &i, "EVALSHA", 7);
	arg(s, &i, s->sha[ONVM_STORE_LOAD], 40);
	arg(s, &i, nk, strlen(nk));
	onvm_store_key_meta(s->keys[0], ONVM_STORE_KEY_LEN, s->chain->name, s->service);
	arg(s, &i, s->keys[0], strlen(s->keys[0]));
	for (uint32_t k = 0; k < n; k++) {
		onvm_store_key_chunk(s->keys[k + 1], ONVM_STORE_KEY_LEN, s->chain->name, s->service,
				     which[k][0], which[k][1]);
		arg(s, &i, s->keys[k + 1], strlen(s->keys[k + 1]));
	}
	arg(s, &i, g, strlen(g));
	arg(s, &i, e, strlen(e));
	arg(s, &i, fp, strlen(fp));
	r = call_argv(nf, (int)i, s->argv, s->argl);
	if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements < 1 ||
	    r->element[0]->type != REDIS_REPLY_INTEGER) {
		ret = -EPROTO;
	} else if (r->element[0]->integer == -3) {
		NF_LOG(ERR, "%s: store %s holds this NF's state for other state regions (another "
			    "binary or version?)",
		       nf->name, s->cfg->addr);
		ret = -EINVAL;
	} else if (r->element[0]->integer != 1 || r->elements != n + 1) {
		ret = r->element[0]->integer == -1 ? -ESTALE : -EPROTO;
	} else {
		for (uint32_t k = 0; k < n && ret == 0; k++)
			ret = load_chunk(nf, which[k][0], which[k][1], r->element[k + 1]);
	}
	if (r != NULL)
		freeReplyObject(r);
	return ret;
}

/* Every chunk the index names, in LOAD_BATCH pieces; an empty LOAD at
 * least (it checks the generation and records the layout). */
static int
load_state(struct nf_ctx *nf, uint64_t epoch)
{
	struct nf_store *s = nf->store;
	uint32_t (*which)[2] = NULL;
	uint32_t n = 0;
	redisReply *r;
	int ret = 0;

	onvm_store_key_index(s->keys[0], ONVM_STORE_KEY_LEN, s->chain->name, s->service);
	r = call2(nf, "SMEMBERS", s->keys[0]);
	if (r == NULL || r->type != REDIS_REPLY_ARRAY)
		ret = -EPROTO;
	if (ret == 0 && r->elements > 0 && (which = calloc(r->elements, sizeof(*which))) == NULL)
		ret = -ENOMEM;
	for (size_t k = 0; ret == 0 && k < r->elements; k++) {
		const redisReply *m = r->element[k];
		uint32_t rg, c;

		if (m->type != REDIS_REPLY_STRING ||
		    onvm_store_chunk_member_parse(m->str, m->len, &rg, &c) < 0 ||
		    rg >= nf->state.n_regions || c >= nf_state_chunks(&nf->state, rg)) {
			NF_LOG(ERR, "%s: store %s: the index names a chunk this NF has not",
			       nf->name, s->cfg->addr);
			ret = -EPROTO;
			break;
		}
		which[n][0] = rg;
		which[n][1] = c;
		n++;
	}
	if (r != NULL)
		freeReplyObject(r);
	for (uint32_t k = 0; ret == 0 && (k < n || k == 0); k += LOAD_BATCH) {
		ret = load_some(nf, epoch, which + k, RTE_MIN((uint32_t)LOAD_BATCH, n - k));
		if (n == 0)
			break;
	}
	free(which);
	return ret;
}

static uint64_t
layout_fp(const struct nf_ctx *nf)
{
	uint64_t fp = ONVM_STORE_FP_INIT;

	for (uint32_t i = 0; i < nf->n_decl; i++) {
		uint64_t sz = nf->decl[i].size, cs = nf_state_chunk_size(&nf->state, i);

		fp = onvm_store_layout_fp_add(fp, nf->decl[i].name, strlen(nf->decl[i].name) + 1);
		fp = onvm_store_layout_fp_add(fp, &sz, sizeof(sz));
		fp = onvm_store_layout_fp_add(fp, &cs, sizeof(cs));
	}
	return fp;
}

static int
resolve_host(struct nf_ctx *nf, struct onvm_store_addr *a)
{
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res = NULL;
	int rc = getaddrinfo(a->host, NULL, &hints, &res);

	if (rc != 0 || res == NULL) {
		NF_LOG(ERR, "%s: store host %s: %s", nf->name, a->host, gai_strerror(rc));
		return -1;
	}
	inet_ntop(AF_INET, &((struct sockaddr_in *)res->ai_addr)->sin_addr, a->host,
		  sizeof(a->host));
	freeaddrinfo(res);
	return 0;
}

/* The stateless chain this NF's service is in, or NULL. */
static struct onvm_chain *
find_chain(struct nf_ctx *nf)
{
	for (int c = 0; c < ONVM_MAX_CHAINS; c++) {
		struct onvm_chain *ch = &nf->shm->chains[c];

		if (!ch->used || !ch->stateless)
			continue;
		for (uint16_t k = 0; k < ch->len; k++)
			if (ch->services[k] == nf->slot->service_id)
				return ch;
	}
	return NULL;
}

int
nfl_store_start(struct nf_ctx *nf)
{
	struct nf_store *s;
	struct onvm_chain *ch = find_chain(nf);
	uint64_t t0 = nfl_mono_ns(), epoch = 0, token;
	char err[160];
	int ret;

	if (ch == NULL)
		return 0;
	/* A spare node's NF: started, but nothing in the store until its
	 * predecessor fails the chain over to this node (its manager then
	 * lets go); the slot's heartbeat goes on meanwhile. */
	while (__atomic_load_n(&ch->sl_hold, __ATOMIC_ACQUIRE) && !nf_stopping(nf)) {
		nfl_heartbeat(nf);
		usleep(1000);
	}
	if (nf_stopping(nf))
		return 0; /* stopped while held: nothing to do */
	t0 = nfl_mono_ns();
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return -ENOMEM;
	nf->store = s;
	s->chain = ch;
	s->cfg = &ch->store;
	s->st = &nf->slot->store;
	s->service = nf->slot->service_id;
	s->backoff_ns = BACKOFF_MIN_NS;
	s->unchecked = getenv("ONVM_STORE_UNSAFE_NO_VERSION_CHECK") != NULL &&
		       strcmp(getenv("ONVM_STORE_UNSAFE_NO_VERSION_CHECK"), "1") == 0;
	s->cap = s->cfg->pipeline + 1;
	s->q = calloc(s->cap, sizeof(*s->q));
	if (s->q == NULL || grow_args(s, 64) < 0)
		return -ENOMEM;
	set_state(s, ONVM_STORE_LOADING);
	if (onvm_store_addr_parse(s->cfg->addr, &s->addr, err, sizeof(err)) < 0) {
		NF_LOG(ERR, "%s: store address %s", nf->name, err);
		return -EINVAL;
	}
	/* A name is resolved once, here: hiredis resolves at every connect,
	 * and a reconnect runs in the packet loop (getaddrinfo may block). */
	if (!s->addr.unix_socket && resolve_host(nf, &s->addr) < 0)
		return -EHOSTUNREACH;
	if (s->unchecked)
		NF_LOG(WARNING, "%s: ONVM_STORE_UNSAFE_NO_VERSION_CHECK: updates are applied "
				"without their version check (tests only)",
		       nf->name);
	for (uint32_t rg = 0, total = 0; nf->has_state && rg < nf->state.n_regions; rg++) {
		size_t words = (nf_state_chunks(&nf->state, rg) + 63) / 64;

		total += nf_state_chunks(&nf->state, rg);
		if (rg == nf->state.n_regions - 1 && (s->dlist = calloc(total, sizeof(*s->dlist))) == NULL)
			return -ENOMEM;

		s->dirty[rg] = calloc(words, sizeof(uint64_t));
		s->stored[rg] = calloc(words, sizeof(uint64_t));
		if (s->dirty[rg] == NULL || s->stored[rg] == NULL)
			return -ENOMEM;
	}
	if (nf->has_state)
		s->layout_fp = layout_fp(nf);
	if (connect_now(nf) < 0) {
		NF_LOG(ERR, "%s: cannot reach the store of chain '%s' at %s within %u ms: the "
			    "chain cannot start (the node serves its other chains)",
		       nf->name, ch->name, s->cfg->addr, s->cfg->timeout_ms);
		s->st->connect_fails++;
		return -ECONNREFUSED;
	}
	token = __atomic_load_n(&ch->sl_token, __ATOMIC_ACQUIRE);
	ret = load_scripts(nf);
	if (ret == 0)
		ret = fence(nf, &token, &epoch);
	if (ret == 0 && nf->has_state)
		ret = load_state(nf, epoch);
	if (ret < 0) {
		NF_LOG(ERR, "%s: store %s: warm-up failed: %s", nf->name, s->cfg->addr,
		       strerror(-ret));
		return ret;
	}
	s->field = epoch + 1;
	s->seq = 0;
	if (epoch > nf->last_marker)
		nf->last_marker = epoch;
	s->st->gen = s->gen;
	s->st->recovered_epoch = epoch;
	s->st->load_ns = nfl_mono_ns() - t0;
	__atomic_store_n(&nf->slot->store_closed, epoch, __ATOMIC_RELEASE);
	set_state(s, ONVM_STORE_READY);
	/* Last: whoever reads the token reads the rest above. */
	__atomic_store_n(&nf->slot->store_token, token, __ATOMIC_RELEASE);
	NF_LOG(INFO, "%s: store %s: chain '%s' generation %" PRIu64 ", state at epoch %" PRIu64
		     " (%" PRIu64 " chunks) loaded in %" PRIu64 " us",
	       nf->name, s->cfg->addr, ch->name, s->gen, epoch, s->st->loaded_chunks,
	       s->st->load_ns / 1000);
	return 0;
}

void
nfl_store_stop(struct nf_ctx *nf)
{
	struct nf_store *s = nf->store;

	if (s == NULL)
		return;
	/* What is still unanswered goes out before the NF leaves, for a
	 * while (a store that is down keeps it: the chain's recovery decides). */
	if (s->c != NULL || s->n > 0) {
		uint64_t until = nfl_mono_ns() + (uint64_t)s->cfg->timeout_ms * 1000000ULL;

		while (s->n > 0 && nfl_mono_ns() < until &&
		       __atomic_load_n(&s->st->state, __ATOMIC_RELAXED) != ONVM_STORE_STOPPED) {
			wait_io(nf, 1);
			service(nf);
		}
	}
	if (s->c != NULL)
		redisFree(s->c);
	for (uint32_t k = 0; k < s->n; k++)
		free(s->q[(s->head + k) % s->cap].cmd);
	for (int rg = 0; rg < NF_STATE_MAX_REGIONS; rg++) {
		free(s->dirty[rg]);
		free(s->stored[rg]);
	}
	free(s->q);
	free(s->dlist);
	free(s->argv);
	free(s->argl);
	free(s->keys);
	free(s->members);
	free(s);
	nf->store = NULL;
}
