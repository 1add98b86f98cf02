/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * onvm_store.h -- stateless resiliency's store protocol: what a chain's NFs
 * keep in a Redis-protocol store, under which keys, and the server-side
 * scripts that make every update conditional on its version.  No I/O here
 * (libnf's nf_store.c drives the connection); the design and what each
 * mode guarantees are in docs/design/stateless.md.
 *
 * Keys (all of a chain share the hash tag {chain}, so a Redis Cluster keeps
 * them in one slot and a script may touch any of them):
 *
 *   onvm:{C}:run          hash  token, gen, epoch: the chain's last recovery
 *   onvm:{C}:s<S>:m       hash  the NF of service S: gen, epoch, seq, closed,
 *                               layout (fingerprint of its state regions)
 *   onvm:{C}:s<S>:i       set   "<region>.<chunk>" of every chunk it stored
 *   onvm:{C}:s<S>:k       zset  the epochs it closed, scored by epoch:
 *                               "<epoch>:<timestamp of the marker>"
 *   onvm:{C}:s<S>:c:<r>.<k> zset  chunk k of region r: one member per
 *                               version, scored by its epoch: "<epoch>:<bytes>"
 *                               (a sorted set: finding the newest version at or
 *                               below an epoch, and trimming, are O(log n))
 *
 * Epochs are the ids of the markers the chain's root injects: the state an
 * NF stored at field <= E is its state at marker E.  A chunk keeps every
 * version above the chain's committed epoch and the newest at or below it,
 * so the store can always give back the state at the newest epoch every NF
 * of the chain closed (the recovery point), whichever NF ran ahead.
 */
#ifndef ONVM_STORE_H
#define ONVM_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ONVM_STORE_ADDR_LEN 108	 /* sun_path */
#define ONVM_STORE_KEY_LEN 160
#define ONVM_STORE_CHAIN_LEN 32	 /* == ONVM_NAME_LEN */

enum onvm_store_mode {
	ONVM_STORE_SYNC = 0, /* the NF waits for each update's reply before its next batch */
	ONVM_STORE_ASYNC,    /* it never waits (but for a full pipeline) */
};

/* Defaults (docs/operator-guide.md "stateless chains"). */
#define ONVM_STORE_FLUSH_PKTS_DEFAULT 32
#define ONVM_STORE_FLUSH_PKTS_MAX 65536
#define ONVM_STORE_FLUSH_US_DEFAULT 1000
#define ONVM_STORE_FLUSH_US_MAX 1000000
#define ONVM_STORE_PIPELINE_DEFAULT 64
#define ONVM_STORE_PIPELINE_MAX 4096
#define ONVM_STORE_TIMEOUT_MS_DEFAULT 1000
#define ONVM_STORE_TIMEOUT_MS_MAX 60000
#define ONVM_STORE_LOG_PACKETS_DEFAULT 2048
#define ONVM_STORE_LOG_PACKETS_MAX (1u << 20)

/* A chain's store, as the config gives it; shared with its NFs. */
struct onvm_store_cfg {
	char addr[ONVM_STORE_ADDR_LEN]; /* "unix:/path", "/path" or "host:port" */
	uint8_t mode;			/* enum onvm_store_mode */
	uint8_t cache;			/* 1: write back once per epoch; 0: every batch */
	uint16_t reserved;
	uint32_t flush_pkts; /* packets per epoch: the root's marker interval */
	uint32_t flush_us;   /* an epoch is closed this long after its first packet */
	uint32_t pipeline;   /* updates sent and not yet answered, at most */
	uint32_t timeout_ms; /* connect, and a reply overdue: the connection is reset */
	uint32_t log_packets; /* the root's log of input not yet committed, at most */
};

/* A parsed address. */
struct onvm_store_addr {
	bool unix_socket;
	char path[ONVM_STORE_ADDR_LEN]; /* unix_socket */
	char host[64];
	uint16_t port;
};

/* "unix:/p", "/p", "host:port" or "host" (port 6379).  0, or -EINVAL with a
 * sentence in err. */
int onvm_store_addr_parse(const char *s, struct onvm_store_addr *a, char *err, size_t errlen);

/* Fill `c` with the defaults (addr left empty). */
void onvm_store_cfg_defaults(struct onvm_store_cfg *c);

/* Keys.  Each returns the length written, or -ENAMETOOLONG. */
int onvm_store_key_run(char *buf, size_t len, const char *chain);
int onvm_store_key_meta(char *buf, size_t len, const char *chain, uint16_t service);
int onvm_store_key_index(char *buf, size_t len, const char *chain, uint16_t service);
int onvm_store_key_closes(char *buf, size_t len, const char *chain, uint16_t service);
int onvm_store_key_chunk(char *buf, size_t len, const char *chain, uint16_t service,
			 uint32_t region, uint32_t chunk);
/* The index member naming a chunk ("<region>.<chunk>"), and back. */
int onvm_store_chunk_member(char *buf, size_t len, uint32_t region, uint32_t chunk);
int onvm_store_chunk_member_parse(const char *s, size_t len, uint32_t *region, uint32_t *chunk);
/* A decimal number the store sent as a string (digits only, at most
 * UINT64_MAX): 0 or -EINVAL. */
int onvm_store_parse_u64(const char *s, size_t len, uint64_t *out);

/*
 * The scripts (Lua, run by EVALSHA; their texts in store_scripts.c).
 *
 * FENCE  KEYS: run, then the meta and closes keys of every NF of the
 *        chain.  ARGV: token, 1 + E (0: not known).
 *        A recovery of the chain: the first call with a new token bumps the
 *        chain's generation, writes it into every NF's meta (their older
 *        incarnations' updates are refused from then on) and fixes the
 *        recovery point: the E given, which every NF must have closed, or
 *        if none is given the newest epoch every NF closed -- an epoch each
 *        of them closed itself, for one that missed a marker (dropped on a
 *        full ring) holds no version at that epoch, and its next close
 *        covers the missed epoch's packets too.  Calls with the same token
 *        return the same answer.
 *        -> {gen, E, state, "ts"}: state 0 fresh (no NF had stored
 *           anything), 1 whole, 2 partial (some NFs' records are missing: E
 *           0), 3 the store lost state: an NF closed less than the E given,
 *           or re-seeded after it (E 0); ts: the timestamp of marker E (the
 *           last input packet before it), "0" if not known -- a decimal
 *           string: Lua's numbers are doubles, and a timestamp may be above
 *           2^53.
 * LOAD   KEYS: meta, then chunk keys.  ARGV: gen, E, layout.
 *        The chunks' versions at E; versions above E (the dead run's) are
 *        deleted.  -> {1, value or nil, ...}, {-1, gen} fenced, {-3} another
 *        layout.
 * WRITE  KEYS: meta, index, closes, then chunk keys.  ARGV: gen, epoch,
 *        seq, flags, floor, ts, the chunks' values, then index members to
 *        add.
 *        Applied only if (epoch, seq) is newer than the NF's last update of
 *        this generation.  flags: ONVM_STORE_W_CLOSE also records `epoch`
 *        closed, by the marker whose timestamp is `ts`;
 *        ONVM_STORE_W_SEED makes a missing record anew, with
 *        `epoch` as its base (the NF sends its whole state: the store lost
 *        it).  Versions of the chunks, and closes, older than the newest
 *        at or below `floor` are deleted.
 *        -> {1, epoch, seq} applied, {0, epoch, seq} not newer (the last
 *           applied), {-1, gen} fenced, {-2} the store lost the NF's record.
 */
#define ONVM_STORE_W_CLOSE 1
#define ONVM_STORE_W_SEED 2

enum onvm_store_script { ONVM_STORE_FENCE = 0, ONVM_STORE_LOAD, ONVM_STORE_WRITE, ONVM_STORE_NSCRIPTS };

const char *onvm_store_script_text(enum onvm_store_script s);
const char *onvm_store_script_name(enum onvm_store_script s);

/*
 * Test-only: a WRITE without its version check (applies whatever it is
 * given), to show the check is what keeps a late update out.  Selected by
 * the environment variable ONVM_STORE_UNSAFE_NO_VERSION_CHECK=1 in libnf.
 */
const char *onvm_store_script_text_unchecked(enum onvm_store_script s);

/* What a WRITE's reply says. */
enum onvm_store_verdict {
	ONVM_STORE_APPLIED = 0,
	ONVM_STORE_NOT_NEWER, /* an update already applied (a retry): an ack all the same */
	ONVM_STORE_FENCED,    /* a newer incarnation of the chain runs */
	ONVM_STORE_LOST,      /* the store no longer has the NF's record */
	ONVM_STORE_BAD,	      /* not an answer WRITE gives: the connection is reset */
};

/* A reply, reduced to what the protocol reads: an integer array of at most
 * 3 elements.  Filled from a hiredis reply by the caller. */
struct onvm_store_ints {
	int n;	      /* elements; -1: not an integer array */
	int64_t v[3];
};

enum onvm_store_verdict onvm_store_write_verdict(const struct onvm_store_ints *r, uint64_t epoch,
						 uint64_t seq);

/* Fingerprint of a state layout: FNV-1a over region names, sizes, chunk sizes. */
uint64_t onvm_store_layout_fp_add(uint64_t fp, const void *data, size_t len);
#define ONVM_STORE_FP_INIT UINT64_C(0xcbf29ce484222325)

#endif /* ONVM_STORE_H */
