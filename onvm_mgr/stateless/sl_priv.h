/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * sl_priv.h -- what the stateless chain's files share: one record per
 * chain, each part written by one thread (the RX unit's, the TX unit's,
 * the control thread's), the hand-overs between them atomic.
 */
#ifndef MGR_SL_PRIV_H
#define MGR_SL_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "mgr.h"
#include "plog_shim.h"
#include "rsync_wire.h"
#include "stateless/stateless.h"

#define SL_MARKER_ROOM 256 /* of the exit's room, kept for markers: a full exit still
			    * closes epochs */

/* A chain's life, written by the control thread (DOWN, STARTING, REPLAY)
 * and the RX unit (REPLAY -> RUNNING); read by all three. */
enum sl_phase {
	SL_RUNNING = 0, /* forwarding (or starting for the first time) */
	SL_DOWN,	/* an NF died: the others killed, the chain's input held */
	SL_STARTING,	/* fresh NFs launched, loading their state */
	SL_REPLAY,	/* the RX unit replays the log after the recovery point */
};

/* A chain behind a predecessor (sl_peer.c): the primary, or a spare
 * waiting (its NFs held), taking the replay, then running the chain. */
enum sl_peer_state {
	SL_PEER_PRIMARY = 0,
	SL_PEER_SPARE,
	SL_PEER_REPLAY,
	SL_PEER_ACTIVE,
};

/* A range of a ring: entries [head, head + n) of `cap`, with absolute
 * positions (abs_head for head) that never wrap. */
struct sl_ring {
	uint32_t cap, head, n;
	uint64_t abs_head;
};

static inline uint32_t
sl_ring_at(const struct sl_ring *r, uint64_t abs)
{
	return (uint32_t)((r->head + (abs - r->abs_head)) % r->cap);
}

struct sl_chain {
	bool on;
	uint16_t id; /* the chain's index in the table */
	/* (run << 8) | phase, one atomic word: a unit never sees a new run with
	 * an old phase.  The control thread writes it (DOWN, STARTING, REPLAY,
	 * each with the run), the RX unit too (REPLAY -> RUNNING). */
	uint32_t state;
	uint64_t replay_epoch; /* the recovery point, written before phase REPLAY */
	uint32_t tx_switched;  /* atomic: the run whose output the exit now holds */
	/* atomic (TX): the state word the exit last saw while the chain
	 * recovered -- from then on it releases nothing until the new run, so
	 * the control thread reads the newest marker released only after */
	uint32_t tx_seen;

	/* ---- RX unit: the root ---- */
	uint64_t clock;	      /* the newest packet's timestamp */
	uint64_t next_marker; /* the next marker's id (epoch) */
	uint32_t since;	      /* packets since the last marker */
	uint64_t first_tsc;   /* the first of them arrived */
	bool started;	      /* its NFs loaded their state: epochs may close */
	uint64_t flush_cycles;
	uint64_t last_inject_tsc; /* the last marker went in */
	uint64_t nudges;	  /* empty epochs closed because others stayed open */
	/* The log: a copy of every packet that entered since the committed
	 * epoch, and where each marker went in among them. */
	struct sl_ring log;
	struct rte_mbuf **log_m;
	uint64_t *log_ts;
	struct sl_ring lmk;
	uint64_t *lmk_id, *lmk_pos;
	uint8_t rx_run;	      /* the incarnation the RX unit works for */
	uint64_t cursor;      /* replay: the next log position to send */
	uint64_t packets_in, markers_in, markers_failed, log_full, log_copy_fail;
	uint64_t foreign_in; /* routed in from another port than the ingress: dropped */
	uint64_t logged_held; /* input logged, not sent, while the chain recovered */
	/* The log from `cursor` on is sent before any new input: a first
	 * start's held input (behind a predecessor), or input the first NF's
	 * ring had no room for (`ring_waits` times) */
	bool backlog;
	bool backlog_ring; /* ... the latter (not a first start's) */
	uint64_t ring_waits;
	uint64_t replayed, replay_runs;
	uint64_t replay_rerouted; /* replayed, routed elsewhere now (rules changed): dropped */
	/* Behind a predecessor: the first start sends the log on once the
	 * NFs loaded, without what the loaded state holds (at or below
	 * skip_ts, the marker's timestamp the store gave) */
	bool peer_started;
	uint64_t skip_ts, replay_covered;
	uint64_t replay_ts; /* the last entry a replay passed: its markers' timestamp */

	/* ---- behind a predecessor (sl_peer.c; RX unit but where said) ---- */
	uint8_t peer_role; /* 0: none, MGR_SL_PEER_PRIMARY, MGR_SL_PEER_SPARE */
	uint16_t peer_id, peer_port;
	uint8_t peer_mac[6];
	enum sl_peer_state peer_state;
	uint32_t peer_epoch;		 /* atomic: the predecessor's, or the one taken */
	uint64_t peer_pred_run;		 /* atomic: the predecessor's run as heard (0: not yet) */
	struct rsync_peer_runs peer_pred_runs;
	uint64_t peer_last_ts;		 /* atomic: the newest timestamp admitted */
	uint64_t peer_hb_ns;		 /* (the unit that sends them) */
	/* the spare's takeover: the replayed range admitted whole and in order */
	struct rsync_msg peer_takeover;
	uint32_t peer_cancelled;
	bool peer_epoch_heard;	 /* a primary: the predecessor's epoch heard once */
	bool peer_superseded;	 /* atomic (RX -> control thread): a newer epoch heard */
	uint64_t peer_next, peer_newest, peer_gap_ts, peer_ack_ns;
	uint32_t peer_since_ack;
	uint64_t peer_takeover_ns, peer_end_ns;
	/* the primary's trims (TX unit): the newest released marker's
	 * timestamp, the last trimmed */
	uint64_t peer_trim_ts, peer_trimmed, peer_trim_ns;
	/* a primary (RX unit): the first stamped timestamp its root could not
	 * log (0: none; atomic: the TX unit's trims stay below it) -- nothing
	 * after it is admitted until the predecessor sends it again from its
	 * log (REPLAY_ACK, next_ts = it), or PEER_LACK_GIVE_UP_NS passed (then
	 * lost, counted); since when, the last ask, and the counts */
	uint64_t peer_lack_ts, peer_lack_since_ns, peer_lack_ns, peer_lacks,
		peer_lacks_given_up;
	uint64_t peer_admitted, peer_stale, peer_before_takeover, peer_gap_drops,
		peer_room_drops, peer_acks, peer_takeovers, peer_hb_rx, peer_sent, peer_send_fail,
		peer_trims, peer_not_ready, peer_end_early, peer_replay_lost;
	uint64_t peer_bad[PLOG_SHIM_REASON_MAX];
	uint64_t peer_ctl_rx[RSYNC_RX_REASON_MAX];

	/* ---- TX unit: the exit ---- */
	struct sl_ring hold;
	struct rte_mbuf **q;
	uint16_t *port;
	struct sl_ring xmk; /* markers held: ids and positions in `hold` */
	uint64_t *xmk_id, *xmk_pos;
	uint8_t tx_run;
	uint64_t committed;   /* the lowest epoch the chain's NFs closed */
	uint64_t released_marker; /* the newest marker released (published: sl_committed) */
	uint64_t released_ts; /* the newest timestamp released */
	uint64_t held_total, released, exit_full, markers_out, markers_full;
	uint64_t stale_dropped, dup_suppressed, recovery_dropped;
	uint64_t crossing; /* NF output crossing into or out of the chain: dropped (TX) */
	uint64_t skipped;  /* NF output skipping a step of the chain: dropped (TX) */

	/* ---- control thread: recoveries ---- */
	bool launched; /* some NF of it was launched */
	bool armed;    /* every NF ran once: a missing one is a failure */
	/* The epoch its NFs loaded when the chain first ran (known: they
	 * did; until then a recovery asks the store for none) */
	bool first_known;
	uint64_t first_epoch;
	bool peer_fenced; /* a primary whose spare took over: its NFs stay down */
	uint64_t retry_ns, retry_wait_ns; /* a failed start: when to try again, the back-off */
	uint64_t t_detect, t_down, t_started, t_replayed; /* the last recovery */
	uint64_t recoveries, start_retries;
	bool timing_open;
};

extern struct sl_chain mgr_sl[ONVM_MAX_CHAINS];
/* 1 + the stateless chain whose ingress each port is, 0: none (start-up). */
extern uint8_t mgr_sl_in_port[ONVM_MAX_PORTS];

static inline uint32_t
sl_state(const struct sl_chain *c)
{
	return __atomic_load_n(&c->state, __ATOMIC_ACQUIRE);
}

#define SL_PHASE(st) ((st) & 0xffu)
#define SL_RUN(st) ((uint8_t)((st) >> 8))

/* DOWN or STARTING: the root holds the input, the exit its output, as
 * they are, until the recovery point is known. */
static inline bool
sl_recovering(uint32_t st)
{
	return SL_PHASE(st) == SL_DOWN || SL_PHASE(st) == SL_STARTING;
}

static inline void
sl_set_state(struct sl_chain *c, uint8_t run, uint32_t phase)
{
	__atomic_store_n(&c->state, ((uint32_t)run << 8) | phase, __ATOMIC_RELEASE);
}

/* The slot of the instance of step k of chain `ci`, or NULL. */
const struct onvm_nf_slot *mgr_sl_step_slot(uint16_t ci, uint16_t k);

/* RX unit: the root's log takes one more packet. */
static inline bool
mgr_sl_log_room(const struct sl_chain *c)
{
	return c->log.n < c->log.cap;
}

/* sl_peer.c */
struct mgr_chain_cfg;
struct rte_tel_data;
void mgr_sl_peer_init(struct sl_chain *c, const struct mgr_chain_cfg *cc);
void mgr_sl_peer_rx(struct mgr_dp_ctx *ctx, struct sl_chain *c, uint64_t now);
void mgr_sl_peer_tx(struct mgr_dp_ctx *ctx, struct sl_chain *c, uint64_t now);
void mgr_sl_peer_telemetry(struct rte_tel_data *d, const struct sl_chain *c);
/* RX unit: a primary's root dropped stamped input `ts` (its log full) --
 * the predecessor trims it with the next LOG_TRIM, so it must come again. */
void mgr_sl_peer_lacks(struct sl_chain *c, uint64_t ts);

#endif /* MGR_SL_PRIV_H */
