/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * onvm_cut.h -- consistent cuts of an NF's state for remote resiliency
 * (docs/design/remote.md, "Consistent cuts").
 *
 * A marker travels through the chain with the packets.  When an NF meets
 * marker M, its state reflects exactly the packets before M; libnf then
 * freezes the chunks changed since the cut the marker is a delta over (its
 * base B) by copying them into the NF's cut log, and the NF goes on at once.
 * When M reaches the end of the chain, the manager reads every NF's records
 * of M and ships them as one consistent cut.
 *
 * What changed since B: each chunk keeps the number of the period it was
 * last dirtied in (a period is the time after one marker and before the
 * next; chunk marks are last_marker + 1, 0 = never dirtied), folded in from
 * the state's batch dirty list before every commit.  The chunks of the
 * current period are also listed, so the usual freeze (B is the last marker
 * this NF froze at) costs O(chunks changed); after a lost cut (B older) the
 * marks are scanned, O(chunks).
 *
 * The cut log is a byte ring in shared memory, one producer (the NF, or its
 * promoted standby) and one consumer (the manager).  A freeze publishes all
 * its records at once (one release store of `prod`), so a consumer never
 * sees half a cut, and an NF killed inside a freeze leaves nothing of it.
 * Records never wrap around the end.  A freeze that does not fit writes a
 * FAILED end record instead (counted): the cut is dropped, never cut short.
 * Size the log for at least the whole state (a full freeze after lost cuts)
 * plus one ordinary freeze in flight.
 *
 * The area holds no pointers: any process maps it anywhere.  It is formatted
 * by the manager for the NF's state layout and a log size.  EAL-free.
 */
#ifndef ONVM_CUT_H
#define ONVM_CUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_common.h>

#include "onvm_state.h"

#define ONVM_CUT_REC_LEN 24 /* record header bytes */

enum onvm_cut_kind {
	ONVM_CUT_DATA = 1,   /* `len` bytes of region `region` at `offset` follow */
	ONVM_CUT_END = 2,    /* the cut is whole: offset = cut timestamp, len = data records */
	ONVM_CUT_FAILED = 3, /* the cut did not fit (or its base is unknown): drop it */
	ONVM_CUT_SKIP = 4,   /* filler up to the end of the ring */
};

/* A record header in the log (the data follows, padded to 8 bytes). */
struct onvm_cut_rec {
	uint64_t cut_id;
	uint16_t region;
	uint8_t kind;	/* enum onvm_cut_kind */
	uint8_t pad;
	uint32_t len;
	uint64_t offset;
};
_Static_assert(sizeof(struct onvm_cut_rec) == ONVM_CUT_REC_LEN, "cut record header is 24 bytes");

struct onvm_cut_stats {
	uint64_t freezes;	/* cuts frozen */
	uint64_t freeze_scans;	/* of those, after a lost cut (marks scanned) */
	uint64_t chunks_frozen;
	uint64_t bytes_frozen;
	uint64_t failed_full;	/* freezes that did not fit the log */
	uint64_t failed_base;	/* freezes whose cut id was not newer than the last */
	uint64_t freeze_full;	/* freezes of everything: the base was never seen here */
};

/* Shared header at offset 0 of the area.  Private to onvm_cut.c except for
 * tests; NF-written and manager-written fields on separate lines. */
struct onvm_cut_hdr {
	uint64_t magic;
	uint32_t n_regions;
	uint32_t reserved;
	uint64_t log_off, log_size;
	uint64_t marks_off[NF_STATE_MAX_REGIONS]; /* uint64_t per chunk */
	uint64_t plist_off[NF_STATE_MAX_REGIONS]; /* uint32_t per chunk */
	uint32_t n_chunks[NF_STATE_MAX_REGIONS];
	uint32_t chunk_size[NF_STATE_MAX_REGIONS];

	/* NF-written */
	uint64_t prod __rte_cache_aligned;   /* bytes published (release) */
	uint64_t last_marker;		     /* the last marker frozen at (0: none) */
	uint32_t plist_n[NF_STATE_MAX_REGIONS];
	uint32_t plist_full;		     /* a chunk did not fit the list: scan */
	struct onvm_cut_stats stats;

	/* manager-written */
	uint64_t cons __rte_cache_aligned;   /* bytes consumed (release) */
	uint64_t skipped_records;	     /* records of abandoned cuts skipped */
	uint64_t lost_cuts;		     /* cuts the NF moved past with no record */
} __rte_cache_aligned;

/* Process-local handle. */
struct onvm_cut_set {
	struct onvm_cut_hdr *hdr;
	uint8_t *log;
	uint64_t *marks[NF_STATE_MAX_REGIONS];
	uint32_t *plist[NF_STATE_MAX_REGIONS];
	uint32_t n_regions;
	/* Reader: where the record onvm_cut_read() returned last ends. */
	uint64_t next_cons;
	bool has_next;
};

/* Bytes of the area for `layout` with a log of `log_bytes` (rounded up to
 * 8).  Formats it: everything zero, no marker seen.  Returns 0, or -EINVAL
 * when `size` is too small or the log is under 4 KiB. */
size_t onvm_cut_area_size(const struct nf_state_layout *layout, uint64_t log_bytes);
int onvm_cut_format(void *area, size_t size, const struct nf_state_layout *layout,
		    uint64_t log_bytes);
/* Build a handle; -EINVAL unless formatted for this layout's chunk counts. */
int onvm_cut_attach(struct onvm_cut_set *c, void *area, size_t size,
		    const struct nf_state_layout *layout);

/* ---- NF side (one thread: the active NF) ---- */

/* Fold the current batch's dirty chunks into the period tracking.  Call it
 * before every nf_state_commit() (the batch's list is then complete).
 * O(chunks dirtied in the batch). */
void onvm_cut_note_batch(struct onvm_cut_set *c, const struct nf_state_set *state);

/*
 * The NF met marker `cut_id` (delta over `base_id`, timestamp `cut_ts`):
 * note the batch so far, copy every chunk changed since `base_id` from the
 * canonical regions into the log and publish it with an END record; start a
 * new period.  When this NF never saw `base_id` (a fresh area: the NF was
 * restarted, or the chain's cuts began before it mapped its state), it
 * cannot know what changed since: every chunk of every region is frozen (a
 * standby's copy may hold anything).  Returns the number of chunks frozen,
 * or -ENOSPC (the log has no room: a FAILED record is published if it fits)
 * or -EINVAL (cut_id is not newer than the last marker seen: FAILED).
 */
int onvm_cut_freeze(struct onvm_cut_set *c, const struct nf_state_set *state, uint64_t cut_id,
		    uint64_t base_id, uint64_t cut_ts);
/* The same; `full`: freeze every chunk whatever the base (a full cut a
 * resynchronising standby asked for), keeping the marks' record of what
 * changed since `base_id` when this NF saw it. */
int onvm_cut_freeze_ex(struct onvm_cut_set *c, const struct nf_state_set *state, uint64_t cut_id,
		       uint64_t base_id, uint64_t cut_ts, bool full);

/* ---- manager side (one thread) ---- */

enum onvm_cut_read_result {
	ONVM_CUT_READ_NONE = 0,	 /* nothing (yet) for this cut */
	ONVM_CUT_READ_DATA,	 /* *rec and *data hold a data record */
	ONVM_CUT_READ_END,	 /* the cut is whole (rec->offset: its timestamp) */
	ONVM_CUT_READ_FAILED,	 /* the NF dropped this cut */
	ONVM_CUT_READ_LATER,	 /* the log's next record is of a newer cut: this NF never froze it */
};

/*
 * Read the next record of cut `cut_id`, skipping (and consuming) records of
 * older cuts, which were abandoned.  FAILED also when the log holds nothing
 * of the cut and the NF has moved past it (its FAILED record did not fit,
 * or the NF died between the two).  The record stays in the log until
 * onvm_cut_consume(): `*data` points into the log.  Never blocks.
 */
enum onvm_cut_read_result onvm_cut_read(struct onvm_cut_set *c, uint64_t cut_id,
					struct onvm_cut_rec *rec, const uint8_t **data);
/* Release the record onvm_cut_read() returned last (nothing after a FAILED
 * for a damaged log, which was dropped whole). */
void onvm_cut_consume(struct onvm_cut_set *c);

/* Tests: called between the stores another process can see (NULL in use). */
typedef void onvm_cut_step_fn(const char *step);
extern onvm_cut_step_fn *onvm_cut_test_step;

/* Bytes published and not consumed. */
uint64_t onvm_cut_log_used(const struct onvm_cut_set *c);

#endif /* ONVM_CUT_H */
