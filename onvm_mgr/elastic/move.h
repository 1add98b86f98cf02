/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * Flow migration: the manager's part (the protocol is described at
 * struct onvm_move in onvm_common.h, the design in docs/design/elastic.md).
 *
 * What each file is for:
 *   move_ctl.c     the control side, under mgr.ctl_lock: a move started
 *                  (markers, the units' hook), the bucket table flipped
 *                  once dst has the state, NFs gone and time-outs, the
 *                  end; /onvm/move and /onvm/moves
 *   move_unit.c    the data units: the hook that tags and copies (or
 *                  redirects) the moving buckets' packets, the move
 *                  markers coming out of NFs, a failed move
 *   scale.c        scale-out and scale-in of a service, a rank at a
 *                  time, its flows moved by jump hashing; /onvm/scale
 *   move_peer_unit.c  moves across nodes on the data units: the frames
 *                  of the link in and out (copies, handed-over packets
 *                  and their return, control frames to the control thread)
 *   move_peer_ctl.c   moves across nodes on the control thread: the src
 *                  node's SYNC, STATE and LOG, the dst node's mirror and
 *                  STATUS; /onvm/peer_moves
 *   move_peer.h    their interface (the design is at its top)
 *   shared.c       shared state across instances: the NFs' adds taken
 *                  in batches for the agent to apply to etcd, etcd's
 *                  values handed back; /onvm/shared
 *   move.h         this interface
 */
#ifndef MGR_ELASTIC_MOVE_H
#define MGR_ELASTIC_MOVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "onvm_common.h"

struct rte_mbuf;
struct mgr_dp_ctx;
struct mgr_dest;

/* Any move live since start-up (a hint for the units: read relaxed). */
extern bool mgr_moves_any;
/* Per NF id: the move slots (bit i: moves[i]) whose src it is -- the
 * units' hook.  Written by the control side, read by the units. */
extern uint32_t mgr_move_hook[ONVM_MAX_NFS];
/* Per NF id: live moves it is the dst of (entry backpressure counts its
 * ring though it holds no bucket yet: copies pile up there). */
extern uint8_t mgr_move_into[ONVM_MAX_NFS];
/* The moves' memzones, by slot (the manager's mapping). */
extern struct onvm_move_xfer *mgr_move_xfer[ONVM_MAX_MOVES];

/* ---- data units (move_unit.c) ---- */

/* `m`, routed to NF d->id, which is the src of a live move: tag it and
 * queue its copy for dst (REPROCESS: returns false, m goes on to src) or
 * send it to dst instead (BUFFER: returns true, m is taken). */
bool mgr_move_divert(struct mgr_dp_ctx *ctx, struct rte_mbuf *m, const struct mgr_dest *d);

/* A tagged packet did not fit NF `id`'s ring (freed by the caller): a
 * copy lost fails the move; an original lost is logged so that dst skips
 * its copy. */
void mgr_move_lost(uint16_t id, struct rte_mbuf *m);

/* A marker out of NF `id`: true if it was a move's (then consumed). */
bool mgr_move_marker_out(struct mgr_dp_ctx *ctx, uint16_t id, struct rte_mbuf *m);

/* ---- control side (move_ctl.c), under mgr.ctl_lock ---- */

struct mgr_move_req {
	uint16_t service, src, dst;
	uint8_t method; /* enum onvm_move_method */
	/* dst on the node behind peer_port, its instance peer_inst there
	 * (dst unused); else both here */
	bool to_peer;
	uint16_t peer_port, peer_inst;
	/* The buckets asked for; those not routed to src are left out. */
	uint64_t buckets[ONVM_FLOW_BUCKETS / 64];
};

/* Start a move; returns its slot, or -errno with a sentence in err. */
int mgr_move_start(const struct mgr_move_req *req, char *err, size_t errlen);

/* Drive the live moves; returns how soon (ms) it wants to run again. */
int mgr_move_ctl(void);

/* The dst node's mirror of a move of the node behind `port` (its slot
 * `a_slot`, gen `a_gen`): a slot of its own, dst's IN marker in; returns
 * the slot, or -errno with a sentence in err.  _close: it is over here. */
int mgr_move_mirror_open(const struct mgr_move_req *req, uint16_t port, uint32_t a_slot,
			 uint32_t a_gen, char *err, size_t errlen);
void mgr_move_mirror_close(uint32_t slot);
/* Is NF `id` (as it was when move `slot` opened) still the same process? */
bool mgr_move_dst_alive(uint32_t slot);

/* Fail move `slot` (if not flipped yet): src keeps the flows. */
void mgr_move_fail(uint32_t slot, enum onvm_move_fail why);

const char *mgr_move_state_str(uint32_t state);
/* A telemetry command's parameters as words (commas to spaces) in buf;
 * 0, or -EINVAL (none, or too long).  "reprocess" or "buffer" as an enum
 * onvm_move_method: 0, or -EINVAL. */
int mgr_tel_words(const char *params, char *buf, size_t len);
int mgr_move_method(const char *s, uint8_t *method);
const char *mgr_move_fail_str(uint32_t fail);

/* /onvm/move and /onvm/moves. */
int mgr_move_telemetry_init(void);

/* Scale `service` to `target` instances (scale.c), one rank at a time;
 * 0, or -errno with a sentence in err. */
int mgr_scale_start(uint16_t service, uint16_t target, uint8_t method, char *err,
		    size_t errlen);
/* The load policies of the configuration ("scale" of an NF entry). */
int mgr_scale_init(void);
/* Drive the scale operations and the load policies; returns how soon (ms)
 * it wants to run again. */
int mgr_scale_ctl(void);
/* /onvm/scale. */
int mgr_scale_telemetry_init(void);

/* Shared state (shared.c): a slot being reset has its last adds carried
 * into the next batch first (ctl_lock held); /onvm/shared*. */
void mgr_shared_slot_reset(uint16_t id);
int mgr_shared_telemetry_init(void);

#endif /* MGR_ELASTIC_MOVE_H */
