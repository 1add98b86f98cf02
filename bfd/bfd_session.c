/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * BFD session, asynchronous mode (RFC 5880 sections 6.2, 6.8).  Section
 * numbers in comments point at the rule being implemented.
 */
#include <string.h>

#include "bfd_session.h"

static uint32_t
max_u32(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

/* 6.8.3: while not Up, DesiredMinTxInterval is at least one second. */
static uint32_t
advertised_tx(const struct bfd_session *s)
{
	return s->state == BFD_STATE_UP ? s->cfg.desired_min_tx_us
					: max_u32(s->cfg.desired_min_tx_us, BFD_SLOW_TX_US);
}

static uint64_t jittered(struct bfd_session *s, uint64_t interval_ns);

/* 6.8.7: Demand mode is active on the remote system -- it set the D bit,
 * and both sides are Up.  (We never ask for Demand mode ourselves:
 * bfd.DemandMode is 0, our D bit always clear.) */
static bool
remote_demand_active(const struct bfd_session *s)
{
	return s->remote_demand && s->state == BFD_STATE_UP && s->remote_state == BFD_STATE_UP;
}

/* 6.8.7: no periodic packets to a remote whose RequiredMinRx is 0, nor to
 * one in Demand mode unless a Poll Sequence of ours is running.  Finals go
 * out regardless (bfd_session_rx_decoded). */
static bool
periodic_tx(const struct bfd_session *s)
{
	return s->remote_min_rx_us != 0 && (!remote_demand_active(s) || s->poll_active);
}

/* 6.8.7: the interval is the larger of ours and what the remote can take.
 * When it shrinks (the remote came Up and now takes 10 ms instead of 1 s),
 * a transmission scheduled with the old interval is brought forward: left
 * alone, the remote would see nothing for up to a second and time out. */
static void
update_tx_interval(struct bfd_session *s)
{
	uint64_t old = s->tx_interval_ns;

	s->tx_interval_ns = (uint64_t)max_u32(s->use_tx_us, s->remote_min_rx_us) * 1000;
	if (s->tx_interval_ns < old && s->last_tx_ns != 0 &&
	    s->next_tx_ns > s->last_tx_ns + s->tx_interval_ns)
		s->next_tx_ns = s->last_tx_ns + jittered(s, s->tx_interval_ns);
}

uint64_t
bfd_session_detect_time_ns(const struct bfd_session *s)
{
	/* 6.8.4, asynchronous mode: the remote's multiplier times the larger
	 * of our RequiredMinRx and its last DesiredMinTx.  Always so: Demand
	 * mode is never active here (we never set D), and a remote in Demand
	 * mode still sends to us periodically; only we stop sending to it. */
	if (s->remote_detect_mult == 0)
		return 0;
	return (uint64_t)s->remote_detect_mult * max_u32(s->use_rx_us, s->remote_desired_min_tx_us) *
	       1000;
}

/* 6.8.7: jitter of 0-25 % off the interval (10-25 % with a multiplier of 1). */
static uint64_t
jittered(struct bfd_session *s, uint64_t interval_ns)
{
	uint64_t r, pct;

	s->rng ^= s->rng << 13;
	s->rng ^= s->rng >> 7;
	s->rng ^= s->rng << 17;
	r = s->rng;
	pct = s->detect_mult == 1 ? 75 + r % 16 : 75 + r % 26; /* 75..90 or 75..100 */
	return interval_ns * pct / 100;
}

static void
transmit(struct bfd_session *s, bool final)
{
	struct bfd_ctrl c = {
	    .diag = s->local_diag,
	    .state = s->state,
	    .detect_mult = s->detect_mult,
	    .my_disc = s->local_discr,
	    .your_disc = s->remote_discr,
	    .desired_min_tx_us = s->desired_min_tx_us,
	    .required_min_rx_us = s->required_min_rx_us,
	};
	uint8_t buf[BFD_PKT_MAX_LEN];
	int n;

	/* 6.8.7: never both P and F. */
	c.flags = final ? BFD_FLAG_FINAL : s->poll_active ? BFD_FLAG_POLL : 0;
	if (s->cfg.auth_type != BFD_AUTH_NONE) {
		c.flags |= BFD_FLAG_AUTH;
		c.auth.type = s->cfg.auth_type;
		c.auth.len = BFD_AUTH_SHA1_LEN;
		c.auth.key_id = s->cfg.auth_key_id;
		/* 6.7.4: meticulous increments on every packet; keyed may, so
		 * it does too. */
		c.auth.seq = ++s->xmit_auth_seq;
	}
	n = bfd_pkt_encode(&c, buf, sizeof(buf));
	if (n < 0)
		return;
	if (s->cfg.auth_type != BFD_AUTH_NONE &&
	    bfd_auth_sha1_sign(buf, (size_t)n, s->cfg.auth_key, s->cfg.auth_key_len) < 0)
		return;
	s->stats.tx++;
	if (s->ops != NULL && s->ops->send != NULL)
		s->ops->send(s, buf, n, s->arg);
}

static void
set_state(struct bfd_session *s, uint8_t state, uint8_t diag, uint64_t now_ns)
{
	uint8_t old = s->state;

	if (old == state)
		return;
	s->state = state;
	s->local_diag = diag;
	if (state == BFD_STATE_UP)
		s->stats.up_events++;
	else if (old == BFD_STATE_UP)
		s->stats.down_events++;
	/* Entering or leaving Up changes the advertised transmit interval
	 * (6.8.3).  Coming Up, a faster rate is a decrease: used at once, and
	 * announced with a Poll Sequence.  A remote already in Demand mode
	 * gets one too (6.6: with Demand mode active, a packet that differs
	 * from the last goes out as a Poll; nothing periodic would carry it).
	 * Going down: slow rate, no poll, and periodic packets again. */
	if (state == BFD_STATE_UP &&
	    (advertised_tx(s) != s->desired_min_tx_us || remote_demand_active(s))) {
		s->desired_min_tx_us = advertised_tx(s);
		s->use_tx_us = s->desired_min_tx_us;
		if (!s->poll_active)
			s->stats.polls_started++;
		s->poll_active = true;
	} else if (state != BFD_STATE_UP) {
		s->desired_min_tx_us = advertised_tx(s);
		s->use_tx_us = s->desired_min_tx_us;
		s->use_rx_us = s->required_min_rx_us;
		s->poll_active = false;
	}
	update_tx_interval(s);
	/* A state change is news for the remote: say it now. */
	s->next_tx_ns = now_ns;
	if (s->ops != NULL && s->ops->state_change != NULL)
		s->ops->state_change(s, old, s->arg);
}

static bool
cfg_ok(const struct bfd_session_cfg *cfg)
{
	return cfg->detect_mult != 0 && cfg->desired_min_tx_us != 0 &&
	       cfg->required_min_rx_us != 0 && cfg->auth_key_len <= BFD_AUTH_KEY_MAX &&
	       (cfg->auth_type == BFD_AUTH_NONE || cfg->auth_type == BFD_AUTH_KEYED_SHA1 ||
		cfg->auth_type == BFD_AUTH_METICULOUS_SHA1);
}

int
bfd_session_init(struct bfd_session *s, const struct bfd_session_cfg *cfg, uint32_t discr,
		 const struct bfd_session_ops *ops, void *arg, uint64_t now_ns)
{
	if (!cfg_ok(cfg) || discr == 0)
		return -1;
	memset(s, 0, sizeof(*s));
	s->cfg = *cfg;
	s->ops = ops;
	s->arg = arg;
	/* 6.8.1 initial values. */
	s->state = cfg->admin_down ? BFD_STATE_ADMIN_DOWN : BFD_STATE_DOWN;
	s->local_diag = cfg->admin_down ? BFD_DIAG_ADMIN_DOWN : BFD_DIAG_NONE;
	s->remote_state = BFD_STATE_DOWN;
	s->local_discr = discr;
	s->remote_min_rx_us = 1;
	s->detect_mult = cfg->detect_mult;
	s->desired_min_tx_us = advertised_tx(s);
	s->required_min_rx_us = cfg->required_min_rx_us;
	s->use_tx_us = s->desired_min_tx_us;
	s->use_rx_us = s->required_min_rx_us;
	s->xmit_auth_seq = (uint32_t)(now_ns ^ (now_ns >> 32) ^ discr); /* 6.7.3: random start */
	s->rng = ((uint64_t)discr << 32 | 0x9e3779b9u) ^ now_ns;
	if (s->rng == 0)
		s->rng = 1;
	update_tx_interval(s);
	s->next_tx_ns = now_ns;
	return 0;
}

static enum bfd_rx_reason
check_auth(struct bfd_session *s, const struct bfd_ctrl *c, const uint8_t *payload,
	   uint32_t len)
{
	bool has = (c->flags & BFD_FLAG_AUTH) != 0;

	if (has != (s->cfg.auth_type != BFD_AUTH_NONE))
		return BFD_RX_AUTH_MISMATCH;
	if (!has)
		return BFD_RX_OK;
	if (c->auth.type != s->cfg.auth_type || c->auth.key_id != s->cfg.auth_key_id ||
	    !bfd_auth_seq_ok(s->auth_seq_known, s->rcv_auth_seq, c->auth.seq,
			     s->cfg.auth_type == BFD_AUTH_METICULOUS_SHA1, s->detect_mult) ||
	    !bfd_auth_sha1_digest_ok(payload, len, c, s->cfg.auth_key, s->cfg.auth_key_len))
		return BFD_RX_AUTH_FAILED;
	s->rcv_auth_seq = c->auth.seq;
	s->auth_seq_known = true;
	return BFD_RX_OK;
}

enum bfd_rx_reason
bfd_session_rx(struct bfd_session *s, const uint8_t *payload, uint32_t len, uint64_t now_ns)
{
	struct bfd_ctrl c;
	enum bfd_rx_reason r = bfd_pkt_decode(payload, len, &c);

	if (r != BFD_RX_OK) {
		s->stats.rx_drop[r]++;
		return r;
	}
	return bfd_session_rx_decoded(s, &c, payload, len, now_ns);
}

enum bfd_rx_reason
bfd_session_rx_decoded(struct bfd_session *s, const struct bfd_ctrl *c, const uint8_t *payload,
		       uint32_t len, uint64_t now_ns)
{
	enum bfd_rx_reason r;

	/* 6.8.6: a non-zero Your Discriminator must be ours. */
	if (c->your_disc != 0 && c->your_disc != s->local_discr) {
		s->stats.rx_drop[BFD_RX_NO_SESSION]++;
		return BFD_RX_NO_SESSION;
	}
	r = check_auth(s, c, payload, len);
	if (r != BFD_RX_OK) {
		s->stats.rx_drop[r]++;
		return r;
	}
	/* 6.8.6, in its order: what the packet says about the remote is
	 * recorded, and the timers updated, before the AdminDown discard
	 * below -- a session held down keeps the remote's discriminator and
	 * RequiredMinRx for its own AdminDown packets (and, 6.8.1, does not
	 * forget them while valid packets keep coming). */
	s->last_heard_ns = now_ns;
	s->remote_discr = c->my_disc;
	s->remote_state = c->state;
	s->remote_diag = c->diag;
	s->remote_demand = (c->flags & BFD_FLAG_DEMAND) != 0;
	s->remote_min_rx_us = c->required_min_rx_us;
	s->remote_desired_min_tx_us = c->desired_min_tx_us;
	s->remote_detect_mult = c->detect_mult;
	/* A Final ends our Poll Sequence: the new timers now apply fully. */
	if ((c->flags & BFD_FLAG_FINAL) && s->poll_active) {
		s->poll_active = false;
		s->use_tx_us = s->desired_min_tx_us;
		s->use_rx_us = s->required_min_rx_us;
		s->stats.polls_completed++;
	}
	update_tx_interval(s);

	/* 6.8.6: in AdminDown the packet is discarded: no state change, no
	 * Final, and (the rule's last line) a discarded packet has not been
	 * received for the detection time of 6.8.4, so last_rx_ns and the
	 * accepted count stay as they were. */
	if (s->state == BFD_STATE_ADMIN_DOWN) {
		s->stats.rx_drop[BFD_RX_ADMIN_DOWN]++;
		return BFD_RX_ADMIN_DOWN;
	}
	/* No rule below discards: the packet counts as received. */
	s->stats.rx++;
	s->last_rx_ns = now_ns;
	if (c->state == BFD_STATE_ADMIN_DOWN) {
		if (s->state != BFD_STATE_DOWN)
			set_state(s, BFD_STATE_DOWN, BFD_DIAG_NEIGHBOR_DOWN, now_ns);
	} else if (s->state == BFD_STATE_DOWN) {
		if (c->state == BFD_STATE_DOWN)
			set_state(s, BFD_STATE_INIT, BFD_DIAG_NONE, now_ns);
		else if (c->state == BFD_STATE_INIT)
			set_state(s, BFD_STATE_UP, BFD_DIAG_NONE, now_ns);
	} else if (s->state == BFD_STATE_INIT) {
		if (c->state == BFD_STATE_INIT || c->state == BFD_STATE_UP)
			set_state(s, BFD_STATE_UP, BFD_DIAG_NONE, now_ns);
	} else if (c->state == BFD_STATE_DOWN) { /* Up */
		set_state(s, BFD_STATE_DOWN, BFD_DIAG_NEIGHBOR_DOWN, now_ns);
	}
	/* 6.8.6: a Poll is answered at once with a Final. */
	if (c->flags & BFD_FLAG_POLL)
		transmit(s, true);
	return BFD_RX_OK;
}

uint64_t
bfd_session_timers(struct bfd_session *s, uint64_t now_ns)
{
	uint64_t detect = bfd_session_detect_time_ns(s), next;

	/* 6.8.4: nothing received (and not discarded) for a detection time
	 * while Init or Up. */
	if (s->last_rx_ns != 0 && detect != 0 && now_ns >= s->last_rx_ns + detect &&
	    (s->state == BFD_STATE_INIT || s->state == BFD_STATE_UP)) {
		set_state(s, BFD_STATE_DOWN, BFD_DIAG_TIME_EXPIRED, now_ns);
		/* Leaving Up ends a Poll Sequence that kept an old, longer
		 * RequiredMinRx (6.8.3): the detection time may just have
		 * shrunk.  Use the new one below, or the deadline returned
		 * could already have passed. */
		detect = bfd_session_detect_time_ns(s);
	}
	/* 6.8.1: nothing valid heard for a detection time: forget its
	 * discriminator; after twice, its authentication sequence. */
	if (s->last_heard_ns != 0 && detect != 0 && now_ns >= s->last_heard_ns + detect) {
		s->remote_discr = 0;
		if (now_ns >= s->last_heard_ns + 2 * detect) {
			s->auth_seq_known = false;
			s->last_heard_ns = 0;
			s->last_rx_ns = 0;
			s->remote_detect_mult = 0;
		}
	}
	/* 6.8.7: no periodic packets to a remote that asked for none or is in
	 * Demand mode.  When that ends (it clears D or leaves Up, we leave Up,
	 * a Poll of ours starts) next_tx_ns, left where it was, is due at
	 * once or within an interval of our last periodic packet. */
	if (periodic_tx(s) && now_ns >= s->next_tx_ns) {
		transmit(s, false);
		s->last_tx_ns = now_ns;
		s->next_tx_ns = now_ns + jittered(s, s->tx_interval_ns);
	}
	next = periodic_tx(s) ? s->next_tx_ns : now_ns + (uint64_t)BFD_SLOW_TX_US * 1000;
	detect = bfd_session_detect_time_ns(s);
	if (detect != 0) {
		/* Init or Up after the check above: this lies ahead. */
		if (s->last_rx_ns != 0 &&
		    (s->state == BFD_STATE_INIT || s->state == BFD_STATE_UP) &&
		    s->last_rx_ns + detect < next)
			next = s->last_rx_ns + detect;
		if (s->last_heard_ns != 0) {
			uint64_t due = s->last_heard_ns + detect;

			if (due <= now_ns)
				due = s->last_heard_ns + 2 * detect;
			if (due < next)
				next = due;
		}
	}
	return next;
}

void
bfd_session_set_admin_down(struct bfd_session *s, bool down, uint64_t now_ns)
{
	s->cfg.admin_down = down;
	if (down)
		set_state(s, BFD_STATE_ADMIN_DOWN, BFD_DIAG_ADMIN_DOWN, now_ns);
	else if (s->state == BFD_STATE_ADMIN_DOWN)
		set_state(s, BFD_STATE_DOWN, BFD_DIAG_NONE, now_ns);
}

int
bfd_session_set_timers(struct bfd_session *s, uint32_t desired_min_tx_us,
		       uint32_t required_min_rx_us, uint8_t detect_mult, uint64_t now_ns)
{
	uint32_t old_tx = s->desired_min_tx_us, old_rx = s->required_min_rx_us;
	uint8_t old_mult = s->detect_mult;

	if (desired_min_tx_us == 0 || required_min_rx_us == 0 || detect_mult == 0)
		return -1;
	s->cfg.desired_min_tx_us = desired_min_tx_us;
	s->cfg.required_min_rx_us = required_min_rx_us;
	s->cfg.detect_mult = detect_mult;
	s->detect_mult = detect_mult;
	s->desired_min_tx_us = advertised_tx(s);
	s->required_min_rx_us = required_min_rx_us;
	if (s->state != BFD_STATE_UP) {
		s->use_tx_us = s->desired_min_tx_us;
		s->use_rx_us = s->required_min_rx_us;
	} else if (s->desired_min_tx_us != old_tx || s->required_min_rx_us != old_rx ||
		   (s->detect_mult != old_mult && remote_demand_active(s))) {
		/* 6.8.3: transmit faster at once, slower only after the Final;
		 * detect slower at once, faster only after the Final.  A new
		 * multiplier alone needs no Poll (6.8.12) -- unless the remote
		 * is in Demand mode: no periodic packet would carry it (6.6). */
		s->use_tx_us = s->desired_min_tx_us < s->use_tx_us ? s->desired_min_tx_us
								   : s->use_tx_us;
		s->use_rx_us = s->required_min_rx_us > s->use_rx_us ? s->required_min_rx_us
								    : s->use_rx_us;
		if (!s->poll_active)
			s->stats.polls_started++;
		s->poll_active = true;
		s->next_tx_ns = now_ns;
	}
	update_tx_interval(s);
	return 0;
}
