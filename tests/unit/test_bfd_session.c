/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * BFD session (RFC 5880 section 6): the state machine table-driven from the
 * diagram of section 6.2 / the rules of 6.8.6, detection time (6.8.4),
 * transmit intervals and jitter (6.8.3, 6.8.7), Poll/Final timer changes,
 * keyed SHA1 accept/reject, and two sessions talking to each other.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "bfd_session.h"

#define MS 1000000ULL
#define US 1000ULL

/* Everything a session sent, and its state changes. */
struct capture {
	int n;
	uint8_t pkt[64][BFD_PKT_MAX_LEN];
	int len[64];
	int changes;
	uint8_t last_old;
};

static void
cap_send(struct bfd_session *s, const uint8_t *pkt, int len, void *arg)
{
	struct capture *c = arg;

	(void)s;
	if (c->n < 64) {
		memcpy(c->pkt[c->n], pkt, (size_t)len);
		c->len[c->n] = len;
	}
	c->n++;
}

static void
cap_change(struct bfd_session *s, enum bfd_state old, void *arg)
{
	struct capture *c = arg;

	(void)s;
	c->changes++;
	c->last_old = old;
}

static const struct bfd_session_ops cap_ops = {.send = cap_send, .state_change = cap_change};

static struct bfd_session_cfg
fast_cfg(void)
{
	struct bfd_session_cfg cfg = {
	    .desired_min_tx_us = 10000, .required_min_rx_us = 10000, .detect_mult = 3};

	return cfg;
}

/* The last packet the session sent, decoded. */
static struct bfd_ctrl
last_sent(const struct capture *c)
{
	struct bfd_ctrl d;
	int i = (c->n - 1) % 64;

	assert_true(c->n > 0);
	assert_int_equal(bfd_pkt_decode(c->pkt[i], (size_t)c->len[i], &d), BFD_RX_OK);
	return d;
}

/* A packet from the remote (discriminator 77) in `state`, which can
 * receive every `min_rx_us`. */
static enum bfd_rx_reason
feed_rx(struct bfd_session *s, uint8_t state, uint8_t flags, uint32_t your, uint32_t min_rx_us,
	uint64_t now)
{
	struct bfd_ctrl c = {
	    .state = state,
	    .flags = flags,
	    .detect_mult = 3,
	    .my_disc = 77,
	    .your_disc = your,
	    .desired_min_tx_us = 20000,
	    .required_min_rx_us = min_rx_us,
	};
	uint8_t buf[BFD_PKT_MAX_LEN];
	int n = bfd_pkt_encode(&c, buf, sizeof(buf));

	assert_true(n > 0);
	return bfd_session_rx(s, buf, (uint32_t)n, now);
}

static enum bfd_rx_reason
feed(struct bfd_session *s, uint8_t state, uint8_t flags, uint32_t your, uint64_t now)
{
	return feed_rx(s, state, flags, your, 30000, now);
}

/* Put a fresh session into `state` by the protocol's own path. */
static void
session_in(struct bfd_session *s, struct capture *cap, uint8_t state, uint64_t now)
{
	struct bfd_session_cfg cfg = fast_cfg();

	memset(cap, 0, sizeof(*cap));
	cfg.admin_down = state == BFD_STATE_ADMIN_DOWN;
	assert_int_equal(bfd_session_init(s, &cfg, 5, &cap_ops, cap, now), 0);
	if (state == BFD_STATE_INIT || state == BFD_STATE_UP)
		assert_int_equal(feed(s, BFD_STATE_DOWN, 0, 0, now), BFD_RX_OK);
	if (state == BFD_STATE_UP)
		assert_int_equal(feed(s, BFD_STATE_UP, 0, 5, now), BFD_RX_OK);
	assert_int_equal(s->state, state);
}

static void
test_state_machine_table(void **state)
{
	/* local state, received state -> new local state, diag (-1: unchanged) */
	static const struct {
		uint8_t local, rcvd, want;
		int diag;
	} table[] = {
	    {BFD_STATE_DOWN, BFD_STATE_ADMIN_DOWN, BFD_STATE_DOWN, -1},
	    {BFD_STATE_DOWN, BFD_STATE_DOWN, BFD_STATE_INIT, BFD_DIAG_NONE},
	    {BFD_STATE_DOWN, BFD_STATE_INIT, BFD_STATE_UP, BFD_DIAG_NONE},
	    {BFD_STATE_DOWN, BFD_STATE_UP, BFD_STATE_DOWN, -1},
	    {BFD_STATE_INIT, BFD_STATE_ADMIN_DOWN, BFD_STATE_DOWN, BFD_DIAG_NEIGHBOR_DOWN},
	    {BFD_STATE_INIT, BFD_STATE_DOWN, BFD_STATE_INIT, -1},
	    {BFD_STATE_INIT, BFD_STATE_INIT, BFD_STATE_UP, BFD_DIAG_NONE},
	    {BFD_STATE_INIT, BFD_STATE_UP, BFD_STATE_UP, BFD_DIAG_NONE},
	    {BFD_STATE_UP, BFD_STATE_ADMIN_DOWN, BFD_STATE_DOWN, BFD_DIAG_NEIGHBOR_DOWN},
	    {BFD_STATE_UP, BFD_STATE_DOWN, BFD_STATE_DOWN, BFD_DIAG_NEIGHBOR_DOWN},
	    {BFD_STATE_UP, BFD_STATE_INIT, BFD_STATE_UP, -1},
	    {BFD_STATE_UP, BFD_STATE_UP, BFD_STATE_UP, -1},
	    {BFD_STATE_ADMIN_DOWN, BFD_STATE_ADMIN_DOWN, BFD_STATE_ADMIN_DOWN, -1},
	    {BFD_STATE_ADMIN_DOWN, BFD_STATE_DOWN, BFD_STATE_ADMIN_DOWN, -1},
	    {BFD_STATE_ADMIN_DOWN, BFD_STATE_INIT, BFD_STATE_ADMIN_DOWN, -1},
	    {BFD_STATE_ADMIN_DOWN, BFD_STATE_UP, BFD_STATE_ADMIN_DOWN, -1},
	};
	struct bfd_session s;
	struct capture cap;

	(void)state;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		uint8_t diag_before;
		int changes;

		session_in(&s, &cap, table[i].local, 1 * MS);
		diag_before = s.local_diag;
		changes = cap.changes;
		/* Down and AdminDown may say "your discriminator 0".  A session
		 * that is AdminDown discards every packet (6.8.6). */
		assert_int_equal(
		    feed(&s, table[i].rcvd, 0, table[i].rcvd <= BFD_STATE_DOWN ? 0 : 5, 2 * MS),
		    table[i].local == BFD_STATE_ADMIN_DOWN ? BFD_RX_ADMIN_DOWN : BFD_RX_OK);
		if (s.state != table[i].want)
			fail_msg("row %zu: %s + rx %s -> %s, want %s", i,
				 bfd_state_str(table[i].local), bfd_state_str(table[i].rcvd),
				 bfd_state_str(s.state), bfd_state_str(table[i].want));
		assert_int_equal(s.local_diag, table[i].diag < 0 ? diag_before : table[i].diag);
		assert_int_equal(cap.changes - changes, table[i].want != table[i].local);
		assert_int_equal(s.remote_discr, 77);
	}
}

static void
test_detection_time_and_expiry(void **state)
{
	struct bfd_session s;
	struct capture cap;

	(void)state;
	session_in(&s, &cap, BFD_STATE_UP, 1 * MS);
	/* remote mult 3 x max(our rx 10 ms, its tx 20 ms) = 60 ms */
	assert_int_equal(bfd_session_detect_time_ns(&s), 60 * MS);
	bfd_session_timers(&s, 1 * MS + 60 * MS - 1);
	assert_int_equal(s.state, BFD_STATE_UP);
	bfd_session_timers(&s, 1 * MS + 60 * MS);
	assert_int_equal(s.state, BFD_STATE_DOWN);
	assert_int_equal(s.local_diag, BFD_DIAG_TIME_EXPIRED);
	assert_int_equal(s.remote_discr, 0);
	assert_int_equal(s.stats.down_events, 1);
	/* Init expires too; Down stays Down. */
	session_in(&s, &cap, BFD_STATE_INIT, 1 * MS);
	bfd_session_timers(&s, 200 * MS);
	assert_int_equal(s.state, BFD_STATE_DOWN);
	assert_int_equal(s.local_diag, BFD_DIAG_TIME_EXPIRED);
	session_in(&s, &cap, BFD_STATE_DOWN, 1 * MS);
	assert_int_equal(feed(&s, BFD_STATE_UP, 0, 5, 2 * MS), BFD_RX_OK); /* stays Down */
	cap.changes = 0;
	bfd_session_timers(&s, 500 * MS);
	assert_int_equal(s.state, BFD_STATE_DOWN);
	assert_int_equal(cap.changes, 0);
}

/* Run the timers from `t0` for `span` and return the min/max gap between
 * sends.  With `feed_every`, the remote says Up (with Final) that often, so
 * an Up session stays Up and any Poll of ours ends. */
static void
tx_gaps(struct bfd_session *s, struct capture *cap, uint64_t t0, uint64_t span,
	uint64_t feed_every, uint64_t *lo, uint64_t *hi, int *gaps)
{
	uint64_t now = t0, last = 0, next_feed = t0;

	*lo = UINT64_MAX;
	*hi = 0;
	*gaps = 0;
	while (now < t0 + span) {
		int before = cap->n;
		uint64_t next;

		if (feed_every != 0 && now >= next_feed) {
			feed(s, BFD_STATE_UP, BFD_FLAG_FINAL, 5, now);
			next_feed += feed_every;
		}
		next = bfd_session_timers(s, now);
		if (cap->n > before) {
			if (last != 0) {
				*lo = now - last < *lo ? now - last : *lo;
				*hi = now - last > *hi ? now - last : *hi;
				(*gaps)++;
			}
			last = now;
		}
		if (feed_every != 0 && next_feed < next)
			next = next_feed;
		now = next > now ? next : now + 1;
	}
}

static void
test_slow_tx_while_down_and_jitter(void **state)
{
	struct bfd_session s;
	struct capture cap;
	uint64_t lo, hi;
	int n;

	(void)state;
	session_in(&s, &cap, BFD_STATE_DOWN, 1 * MS);
	tx_gaps(&s, &cap, 1 * MS, 60000 * MS, 0, &lo, &hi, &n);
	/* 6.8.3: at least 1 s advertised while not Up; 6.8.7: 75-100 %. */
	assert_int_equal(s.desired_min_tx_us, BFD_SLOW_TX_US);
	assert_true(lo >= 750 * MS && hi <= 1000 * MS);
	assert_true(hi - lo > 100 * MS); /* really jittered */
	assert_true(n > 55);
}

static void
test_fast_tx_when_up_jitter_and_mult_1(void **state)
{
	struct bfd_session s;
	struct capture cap;
	uint64_t lo, hi;
	int n;

	(void)state;
	session_in(&s, &cap, BFD_STATE_UP, 1 * MS);
	/* Interval: max(our 10 ms, the remote's RequiredMinRx 30 ms) = 30 ms,
	 * less 0-25 %. */
	tx_gaps(&s, &cap, 2 * MS, 3000 * MS, 20 * MS, &lo, &hi, &n);
	assert_int_equal(s.state, BFD_STATE_UP);
	assert_true(n > 90);
	assert_true(lo >= 22500 * US && hi <= 30000 * US);
	assert_true(hi - lo > 3 * MS); /* jittered */
	/* Detect multiplier 1: 10-25 % off. */
	assert_int_equal(bfd_session_set_timers(&s, 10000, 10000, 1, 3000 * MS), 0);
	tx_gaps(&s, &cap, 3000 * MS, 3000 * MS, 20 * MS, &lo, &hi, &n);
	assert_int_equal(s.state, BFD_STATE_UP);
	assert_true(n > 90);
	assert_true(lo >= 22500 * US && hi <= 27000 * US);
	assert_true(hi - lo > 2 * MS);
}

static void
test_coming_up_announces_fast_timers_with_a_poll(void **state)
{
	struct bfd_session s;
	struct capture cap;
	struct bfd_ctrl c;

	(void)state;
	session_in(&s, &cap, BFD_STATE_DOWN, 1 * MS);
	bfd_session_timers(&s, 1 * MS);
	c = last_sent(&cap);
	assert_int_equal(c.desired_min_tx_us, BFD_SLOW_TX_US);
	assert_int_equal(c.required_min_rx_us, 10000);
	assert_int_equal(c.flags & (BFD_FLAG_POLL | BFD_FLAG_FINAL), 0);
	feed(&s, BFD_STATE_INIT, 0, 5, 2 * MS);
	assert_int_equal(s.state, BFD_STATE_UP);
	assert_true(s.poll_active);
	bfd_session_timers(&s, 2 * MS); /* the state change is sent at once */
	c = last_sent(&cap);
	assert_int_equal(c.state, BFD_STATE_UP);
	assert_int_equal(c.desired_min_tx_us, 10000);
	assert_int_equal(c.flags & BFD_FLAG_POLL, BFD_FLAG_POLL);
	feed(&s, BFD_STATE_UP, BFD_FLAG_FINAL, 5, 3 * MS);
	assert_false(s.poll_active);
	assert_int_equal(s.stats.polls_completed, 1);
	bfd_session_timers(&s, 100 * MS);
	assert_int_equal(last_sent(&cap).flags & BFD_FLAG_POLL, 0);
}

/*
 * Found against FRR's bfdd: a remote in Init asks for 1 s (its slow rate);
 * we come Up and schedule the next packet 1 s ahead; the remote comes Up
 * and asks for 10 ms.  The scheduled packet must move forward to the new
 * interval, or the remote times out after 30 ms and the session flaps.
 */
static void
test_remote_faster_rx_brings_next_tx_forward(void **state)
{
	struct bfd_session s;
	struct capture cap;
	struct bfd_session_cfg cfg = fast_cfg();
	uint64_t now = 1 * MS, last = 0;
	int before;

	(void)state;
	memset(&cap, 0, sizeof(cap));
	assert_int_equal(bfd_session_init(&s, &cfg, 5, &cap_ops, &cap, now), 0);
	bfd_session_timers(&s, now);
	assert_int_equal(feed_rx(&s, BFD_STATE_INIT, 0, 5, 1000000, now), BFD_RX_OK);
	assert_int_equal(s.state, BFD_STATE_UP);
	bfd_session_timers(&s, now); /* Up, with a Poll; next one 1 s away */
	assert_true(s.next_tx_ns >= now + 750 * MS);
	now += 1 * MS;
	assert_int_equal(feed_rx(&s, BFD_STATE_UP, BFD_FLAG_FINAL, 5, 10000, now), BFD_RX_OK);
	assert_true(s.next_tx_ns <= now + 10 * MS);
	/* From here every gap is 7.5-10 ms (the remote keeps talking). */
	before = cap.n;
	for (; now < 300 * MS; now += 100 * US) {
		int n = cap.n;

		if (now % (10 * MS) == 0)
			assert_int_equal(feed_rx(&s, BFD_STATE_UP, 0, 5, 10000, now), BFD_RX_OK);
		bfd_session_timers(&s, now);
		if (cap.n > n) {
			if (last != 0) {
				assert_true(now - last >= 7500 * US);
				assert_true(now - last <= 10100 * US);
			}
			last = now;
		}
	}
	assert_int_equal(s.state, BFD_STATE_UP);
	assert_true(cap.n - before > 25);
}

/* Found by fuzz_bfd: going Down mid-Poll shrinks the detection time; the
 * deadline returned must still lie in the future. */
static void
test_timers_never_return_a_past_deadline(void **state)
{
	struct bfd_session s;
	struct capture cap;
	uint64_t now, next;

	(void)state;
	session_in(&s, &cap, BFD_STATE_UP, 1 * MS);
	feed(&s, BFD_STATE_UP, BFD_FLAG_FINAL, 5, 2 * MS); /* end the coming-Up poll */
	/* Detect slowly (100 ms: above the remote's 20 ms TX)... */
	assert_int_equal(bfd_session_set_timers(&s, 10000, 100000, 3, 3 * MS), 0);
	feed(&s, BFD_STATE_UP, BFD_FLAG_FINAL, 5, 4 * MS);
	assert_int_equal(bfd_session_detect_time_ns(&s), 300 * MS);
	/* ...then ask for faster detection: it waits for a Final that never
	 * comes, and the silent remote times out at the old 300 ms. */
	assert_int_equal(bfd_session_set_timers(&s, 10000, 5000, 3, 5 * MS), 0);
	assert_true(s.poll_active);
	for (now = 5 * MS; now < 1000 * MS; now += 100 * US) {
		next = bfd_session_timers(&s, now);
		assert_true(next > now);
	}
	assert_int_equal(s.state, BFD_STATE_DOWN);
	assert_int_equal(s.local_diag, BFD_DIAG_TIME_EXPIRED);
}

static void
test_poll_final_timer_change(void **state)
{
	struct bfd_session s;
	struct capture cap;
	struct bfd_ctrl c;

	(void)state;
	session_in(&s, &cap, BFD_STATE_UP, 1 * MS);
	feed(&s, BFD_STATE_UP, BFD_FLAG_FINAL, 5, 2 * MS); /* end the coming-Up poll */
	assert_false(s.poll_active);
	/* Slower transmit, faster detection: both wait for the Final. */
	assert_int_equal(bfd_session_set_timers(&s, 50000, 5000, 3, 3 * MS), 0);
	assert_true(s.poll_active);
	assert_int_equal(s.use_tx_us, 10000);
	assert_int_equal(s.use_rx_us, 10000);
	bfd_session_timers(&s, 3 * MS);
	c = last_sent(&cap);
	assert_int_equal(c.flags & BFD_FLAG_POLL, BFD_FLAG_POLL);
	assert_int_equal(c.desired_min_tx_us, 50000);
	assert_int_equal(c.required_min_rx_us, 5000);
	feed(&s, BFD_STATE_UP, 0, 5, 4 * MS); /* no Final yet */
	assert_true(s.poll_active);
	feed(&s, BFD_STATE_UP, BFD_FLAG_FINAL, 5, 5 * MS);
	assert_false(s.poll_active);
	assert_int_equal(s.use_tx_us, 50000);
	assert_int_equal(s.use_rx_us, 5000);
	/* Faster transmit, slower detection: both at once. */
	assert_int_equal(bfd_session_set_timers(&s, 20000, 40000, 3, 6 * MS), 0);
	assert_int_equal(s.use_tx_us, 20000);
	assert_int_equal(s.use_rx_us, 40000);
	/* 3 x max(40 ms, remote tx 20 ms) */
	assert_int_equal(bfd_session_detect_time_ns(&s), 120 * MS);
	assert_int_equal(bfd_session_set_timers(&s, 0, 1, 1, 7 * MS), -1);
}

static void
test_poll_is_answered_with_final_at_once(void **state)
{
	struct bfd_session s;
	struct capture cap;
	struct bfd_ctrl c;
	int before;

	(void)state;
	session_in(&s, &cap, BFD_STATE_UP, 1 * MS);
	before = cap.n;
	feed(&s, BFD_STATE_UP, BFD_FLAG_POLL, 5, 2 * MS);
	assert_int_equal(cap.n, before + 1);
	c = last_sent(&cap);
	assert_int_equal(c.flags & (BFD_FLAG_POLL | BFD_FLAG_FINAL), BFD_FLAG_FINAL);
	assert_int_equal(c.your_disc, 77);
	assert_int_equal(c.my_disc, 5);
}

static void
test_admin_down(void **state)
{
	struct bfd_session s;
	struct capture cap;
	struct bfd_ctrl c;
	int before;

	(void)state;
	session_in(&s, &cap, BFD_STATE_UP, 1 * MS);
	bfd_session_set_admin_down(&s, true, 2 * MS);
	assert_int_equal(s.state, BFD_STATE_ADMIN_DOWN);
	assert_int_equal(s.local_diag, BFD_DIAG_ADMIN_DOWN);
	bfd_session_timers(&s, 2 * MS);
	c = last_sent(&cap);
	assert_int_equal(c.state, BFD_STATE_ADMIN_DOWN);
	assert_int_equal(c.diag, BFD_DIAG_ADMIN_DOWN);
	/* Polls are not answered, nothing moves it, detection does not fire. */
	before = cap.n;
	feed(&s, BFD_STATE_UP, BFD_FLAG_POLL, 5, 3 * MS);
	assert_int_equal(cap.n, before);
	bfd_session_timers(&s, 10000 * MS);
	assert_int_equal(s.state, BFD_STATE_ADMIN_DOWN);
	bfd_session_set_admin_down(&s, false, 10001 * MS);
	assert_int_equal(s.state, BFD_STATE_DOWN);
	assert_int_equal(s.local_diag, BFD_DIAG_NONE);
}

/*
 * RFC 5880 6.8.6: "If bfd.SessionState is AdminDown: Discard the packet", and
 * only a packet that was not discarded "has been received for purposes of the
 * Detection Time expiration rules" (6.8.4).  The packet is counted as a drop,
 * not as received, and the receive time stays the last accepted packet's.
 * What 6.8.6 records before that discard (the remote's discriminator, state,
 * RequiredMinRx) is kept, and 6.8.1 forgets the discriminator only a
 * detection time after the last valid packet, discarded or not.
 */
static void
test_admin_down_session_discards_without_refreshing_detection(void **state)
{
	struct bfd_session s;
	struct capture cap;
	uint64_t rx, now, last_ok;
	int sent, drops = 0;

	(void)state;
	session_in(&s, &cap, BFD_STATE_UP, 1 * MS);
	last_ok = s.last_rx_ns;
	assert_int_equal(last_ok, 1 * MS);
	bfd_session_set_admin_down(&s, true, 2 * MS);
	bfd_session_timers(&s, 2 * MS);
	rx = s.stats.rx;
	/* The remote keeps talking (Up, then Down with a new discriminator)
	 * for 300 ms, five detection times. */
	for (now = 10 * MS; now <= 300 * MS; now += 10 * MS) {
		uint8_t st = now < 100 * MS ? BFD_STATE_UP : BFD_STATE_DOWN;
		uint32_t disc = now < 100 * MS ? 77 : 78;
		struct bfd_ctrl c = {.state = st,
				     .detect_mult = 3,
				     .my_disc = disc,
				     .your_disc = 5,
				     .desired_min_tx_us = 20000,
				     .required_min_rx_us = 40000};
		uint8_t buf[BFD_PKT_MAX_LEN];
		int n = bfd_pkt_encode(&c, buf, sizeof(buf));

		sent = cap.n;
		assert_int_equal(bfd_session_rx(&s, buf, (uint32_t)n, now), BFD_RX_ADMIN_DOWN);
		drops++;
		assert_int_equal(cap.n, sent); /* nothing answered */
		assert_int_equal(s.last_rx_ns, last_ok);
		assert_true(bfd_session_timers(&s, now + 1 * MS) > now + 1 * MS);
		/* 6.8.6 records these before its AdminDown discard; 6.8.1 keeps
		 * the discriminator while valid packets come. */
		assert_int_equal(s.remote_discr, disc);
		assert_int_equal(s.remote_state, st);
		assert_int_equal(s.remote_min_rx_us, 40000);
	}
	assert_int_equal(s.state, BFD_STATE_ADMIN_DOWN);
	assert_int_equal(s.stats.rx, rx);
	assert_int_equal(s.stats.rx_drop[BFD_RX_ADMIN_DOWN], drops);
	assert_int_equal(s.last_heard_ns, 300 * MS);
	/* The remote falls silent: a detection time (3 x 20 ms) after its last
	 * packet its discriminator is forgotten, after twice everything. */
	bfd_session_timers(&s, 359 * MS);
	assert_int_equal(s.remote_discr, 78);
	bfd_session_timers(&s, 360 * MS);
	assert_int_equal(s.remote_discr, 0);
	bfd_session_timers(&s, 420 * MS);
	assert_int_equal(s.last_heard_ns, 0);
	assert_int_equal(s.last_rx_ns, 0);
	/* Back in service: the next packet is received as usual. */
	bfd_session_set_admin_down(&s, false, 421 * MS);
	assert_int_equal(feed(&s, BFD_STATE_DOWN, 0, 0, 422 * MS), BFD_RX_OK);
	assert_int_equal(s.stats.rx, rx + 1);
	assert_int_equal(s.last_rx_ns, 422 * MS);
	assert_int_equal(s.state, BFD_STATE_INIT);
	assert_int_equal(s.stats.rx_drop[BFD_RX_ADMIN_DOWN], drops);
}

/* ---- a remote in Demand mode (RFC 5880 6.6, 6.8.7) ------------------------- */

/* An Up session whose remote is in Demand mode: the coming-Up Poll ended,
 * then the remote set D (with a Poll, as 6.6 asks), which we answered. */
static void
session_with_demand_remote(struct bfd_session *s, struct capture *cap, uint64_t now)
{
	session_in(s, cap, BFD_STATE_UP, now);
	assert_int_equal(feed(s, BFD_STATE_UP, BFD_FLAG_FINAL, 5, now), BFD_RX_OK);
	assert_false(s->poll_active);
	assert_int_equal(feed(s, BFD_STATE_UP, BFD_FLAG_DEMAND | BFD_FLAG_POLL, 5, now), BFD_RX_OK);
	assert_true(s->remote_demand);
	assert_int_equal(last_sent(cap).flags & (BFD_FLAG_POLL | BFD_FLAG_FINAL), BFD_FLAG_FINAL);
}

/* Run the timers from *now for `span` while the remote, Up, sends a packet
 * with `flags` every 20 ms (its periodic ones: it keeps sending to us).
 * Returns how many packets the session sent; every deadline lies ahead. */
static int
run_with_remote(struct bfd_session *s, struct capture *cap, uint64_t *now, uint64_t span,
		uint8_t flags)
{
	uint64_t end = *now + span, next_feed = *now;
	int before = cap->n;

	while (*now < end) {
		uint64_t next;

		if (*now >= next_feed) {
			assert_int_equal(feed(s, BFD_STATE_UP, flags, 5, *now), BFD_RX_OK);
			next_feed += 20 * MS;
		}
		next = bfd_session_timers(s, *now);
		assert_true(next > *now);
		*now = next < next_feed ? next : next_feed;
	}
	return cap->n - before;
}

static void
test_remote_demand_up_stops_periodic_tx(void **state)
{
	struct bfd_session s;
	struct capture cap;
	uint64_t now = 2 * MS;

	(void)state;
	session_with_demand_remote(&s, &cap, 1 * MS);
	/* 6.8.7: Demand mode is active on the remote (D, both Up), no Poll
	 * of ours: nothing periodic for a whole second... */
	assert_int_equal(run_with_remote(&s, &cap, &now, 1000 * MS, BFD_FLAG_DEMAND), 0);
	/* ...and our detection still runs on the remote's packets. */
	assert_int_equal(s.state, BFD_STATE_UP);
	assert_int_equal(bfd_session_detect_time_ns(&s), 60 * MS);
	/* Our D bit stays clear: we never ask for Demand mode. */
	assert_int_equal(last_sent(&cap).flags & BFD_FLAG_DEMAND, 0);
}

static void
test_poll_from_demand_remote_gets_final(void **state)
{
	struct bfd_session s;
	struct capture cap;
	uint64_t now = 2 * MS;
	struct bfd_ctrl c;
	int before;

	(void)state;
	session_with_demand_remote(&s, &cap, 1 * MS);
	assert_int_equal(run_with_remote(&s, &cap, &now, 100 * MS, BFD_FLAG_DEMAND), 0);
	/* 6.8.7: a Poll is answered at once, periodic transmission or not. */
	before = cap.n;
	assert_int_equal(feed(&s, BFD_STATE_UP, BFD_FLAG_DEMAND | BFD_FLAG_POLL, 5, now),
			 BFD_RX_OK);
	assert_int_equal(cap.n, before + 1);
	c = last_sent(&cap);
	assert_int_equal(c.flags & (BFD_FLAG_POLL | BFD_FLAG_FINAL | BFD_FLAG_DEMAND),
			 BFD_FLAG_FINAL);
	assert_int_equal(c.state, BFD_STATE_UP);
	assert_int_equal(c.your_disc, 77);
	/* The Final is all: periodic transmission stays off. */
	assert_int_equal(run_with_remote(&s, &cap, &now, 500 * MS, BFD_FLAG_DEMAND), 0);
	assert_int_equal(s.state, BFD_STATE_UP);
}

/* Periodic transmission comes back, at the right interval, when the remote
 * leaves Demand mode, when it leaves Up, when we do (detection, AdminDown). */
static void
test_periodic_tx_resumes_when_remote_demand_ends(void **state)
{
	struct bfd_session s;
	struct capture cap;
	uint64_t now, lo, hi;
	int n;

	(void)state;
	/* The remote clears D (with a Poll): a Final at once, then periodic
	 * packets at max(our 10 ms, its RequiredMinRx 30 ms) less jitter. */
	session_with_demand_remote(&s, &cap, 1 * MS);
	now = 2 * MS;
	assert_int_equal(run_with_remote(&s, &cap, &now, 200 * MS, BFD_FLAG_DEMAND), 0);
	n = cap.n;
	assert_int_equal(feed(&s, BFD_STATE_UP, BFD_FLAG_POLL, 5, now), BFD_RX_OK);
	assert_int_equal(cap.n, n + 1);
	assert_int_equal(last_sent(&cap).flags & BFD_FLAG_FINAL, BFD_FLAG_FINAL);
	assert_false(s.remote_demand);
	bfd_session_timers(&s, now);
	assert_int_equal(cap.n, n + 2); /* overdue: sent at once */
	tx_gaps(&s, &cap, now, 1000 * MS, 20 * MS, &lo, &hi, &n);
	assert_int_equal(s.state, BFD_STATE_UP);
	assert_true(n > 30);
	assert_true(lo >= 22500 * US && hi <= 30000 * US);

	/* The remote goes Down: so do we (diag 3), and send at the slow rate. */
	session_with_demand_remote(&s, &cap, 1 * MS);
	now = 2 * MS;
	assert_int_equal(run_with_remote(&s, &cap, &now, 200 * MS, BFD_FLAG_DEMAND), 0);
	n = cap.n;
	assert_int_equal(feed(&s, BFD_STATE_DOWN, 0, 5, now), BFD_RX_OK);
	assert_int_equal(s.state, BFD_STATE_DOWN);
	bfd_session_timers(&s, now);
	assert_int_equal(cap.n, n + 1);
	assert_int_equal(last_sent(&cap).state, BFD_STATE_DOWN);
	tx_gaps(&s, &cap, now, 5000 * MS, 0, &lo, &hi, &n);
	assert_true(n >= 4);
	assert_true(lo >= 750 * MS && hi <= 1000 * MS);

	/* The remote falls silent: our detection time (3 x 20 ms) still runs
	 * in its Demand mode; Down, and periodic packets again. */
	session_with_demand_remote(&s, &cap, 1 * MS);
	now = 2 * MS;
	assert_int_equal(run_with_remote(&s, &cap, &now, 200 * MS, BFD_FLAG_DEMAND), 0);
	n = cap.n;
	for (uint64_t t = now; t <= now + 60 * MS; t += 1 * MS)
		bfd_session_timers(&s, t);
	assert_int_equal(s.state, BFD_STATE_DOWN);
	assert_int_equal(s.local_diag, BFD_DIAG_TIME_EXPIRED);
	assert_int_equal(cap.n, n + 1);
	assert_int_equal(last_sent(&cap).state, BFD_STATE_DOWN);

	/* We go AdminDown: said at once, then periodically. */
	session_with_demand_remote(&s, &cap, 1 * MS);
	now = 2 * MS;
	assert_int_equal(run_with_remote(&s, &cap, &now, 200 * MS, BFD_FLAG_DEMAND), 0);
	n = cap.n;
	bfd_session_set_admin_down(&s, true, now);
	for (uint64_t t = now; t < now + 3000 * MS; t += 1 * MS)
		bfd_session_timers(&s, t);
	assert_true(cap.n - n >= 4);
	assert_int_equal(last_sent(&cap).state, BFD_STATE_ADMIN_DOWN);
}

/* Coming Up to a remote already in Demand mode (it should not be, 6.6, but
 * may): our Up is news no periodic packet would carry, so it goes out as a
 * Poll until the Final -- even when the advertised interval stays the same. */
static void
test_coming_up_to_demand_remote_sends_a_poll(void **state)
{
	struct bfd_session s;
	struct capture cap;
	struct bfd_session_cfg cfg = fast_cfg();
	uint64_t now = 1 * MS;

	(void)state;
	memset(&cap, 0, sizeof(cap));
	cfg.desired_min_tx_us = BFD_SLOW_TX_US; /* no interval change on coming Up */
	assert_int_equal(bfd_session_init(&s, &cfg, 5, &cap_ops, &cap, now), 0);
	assert_int_equal(feed(&s, BFD_STATE_DOWN, 0, 0, now), BFD_RX_OK);
	assert_int_equal(s.state, BFD_STATE_INIT);
	assert_int_equal(feed(&s, BFD_STATE_UP, BFD_FLAG_DEMAND, 5, now), BFD_RX_OK);
	assert_int_equal(s.state, BFD_STATE_UP);
	assert_true(s.poll_active);
	bfd_session_timers(&s, now);
	assert_int_equal(last_sent(&cap).state, BFD_STATE_UP);
	assert_int_equal(last_sent(&cap).flags & BFD_FLAG_POLL, BFD_FLAG_POLL);
	assert_int_equal(feed(&s, BFD_STATE_UP, BFD_FLAG_DEMAND | BFD_FLAG_FINAL, 5, now),
			 BFD_RX_OK);
	assert_false(s.poll_active);
	assert_int_equal(run_with_remote(&s, &cap, &now, 3000 * MS, BFD_FLAG_DEMAND), 0);
}

/* Our own Poll Sequence (a timer change) is sent periodically to a remote in
 * Demand mode until its Final (6.5, 6.8.7), then transmission stops again.
 * A new detect multiplier alone needs a Poll only in that case (6.6). */
static void
test_our_poll_to_demand_remote_runs_until_final(void **state)
{
	struct bfd_session s;
	struct capture cap;
	uint64_t now = 2 * MS;
	int n, polls;

	(void)state;
	session_with_demand_remote(&s, &cap, 1 * MS);
	assert_int_equal(run_with_remote(&s, &cap, &now, 100 * MS, BFD_FLAG_DEMAND), 0);
	assert_int_equal(bfd_session_set_timers(&s, 20000, 20000, 3, now), 0);
	assert_true(s.poll_active);
	/* The remote, in Demand mode, is slow to answer: Polls every
	 * max(10 ms in use until the Final, its 30 ms) less jitter. */
	n = cap.n;
	polls = run_with_remote(&s, &cap, &now, 100 * MS, BFD_FLAG_DEMAND);
	assert_true(polls >= 4 && polls <= 5);
	for (int i = n; i < cap.n; i++) {
		struct bfd_ctrl c;

		assert_int_equal(bfd_pkt_decode(cap.pkt[i], (size_t)cap.len[i], &c), BFD_RX_OK);
		assert_int_equal(c.flags & (BFD_FLAG_POLL | BFD_FLAG_DEMAND), BFD_FLAG_POLL);
		assert_int_equal(c.desired_min_tx_us, 20000);
	}
	/* Its Final ends the Poll and our periodic packets with it. */
	assert_int_equal(feed(&s, BFD_STATE_UP, BFD_FLAG_DEMAND | BFD_FLAG_FINAL, 5, now),
			 BFD_RX_OK);
	assert_false(s.poll_active);
	assert_int_equal(run_with_remote(&s, &cap, &now, 500 * MS, BFD_FLAG_DEMAND), 0);

	/* A new multiplier only: a Poll carries it, then quiet again. */
	assert_int_equal(bfd_session_set_timers(&s, 20000, 20000, 5, now), 0);
	assert_true(s.poll_active);
	bfd_session_timers(&s, now);
	assert_int_equal(last_sent(&cap).flags & BFD_FLAG_POLL, BFD_FLAG_POLL);
	assert_int_equal(last_sent(&cap).detect_mult, 5);
	assert_int_equal(feed(&s, BFD_STATE_UP, BFD_FLAG_DEMAND | BFD_FLAG_FINAL, 5, now),
			 BFD_RX_OK);
	assert_int_equal(run_with_remote(&s, &cap, &now, 500 * MS, BFD_FLAG_DEMAND), 0);

	/* Without Demand mode the periodic packets carry it: no Poll (6.8.12). */
	session_in(&s, &cap, BFD_STATE_UP, 1 * MS);
	assert_int_equal(feed(&s, BFD_STATE_UP, BFD_FLAG_FINAL, 5, 1 * MS), BFD_RX_OK);
	assert_int_equal(bfd_session_set_timers(&s, 10000, 10000, 5, 2 * MS), 0);
	assert_false(s.poll_active);
}

static void
test_your_discriminator_must_be_ours(void **state)
{
	struct bfd_session s;
	struct capture cap;

	(void)state;
	session_in(&s, &cap, BFD_STATE_DOWN, 1 * MS);
	assert_int_equal(feed(&s, BFD_STATE_INIT, 0, 6, 2 * MS), BFD_RX_NO_SESSION);
	assert_int_equal(s.stats.rx_drop[BFD_RX_NO_SESSION], 1);
	assert_int_equal(s.state, BFD_STATE_DOWN);
	/* Packet-level rejections are counted by the session too. */
	{
		uint8_t junk[30] = {0};

		assert_int_equal(bfd_session_rx(&s, junk, sizeof(junk), 3 * MS),
				 BFD_RX_BAD_VERSION);
		assert_int_equal(s.stats.rx_drop[BFD_RX_BAD_VERSION], 1);
	}
}

/* ---- two sessions talking, with authentication ---------------------------- */

struct pair {
	struct bfd_session a, b;
	uint8_t q[2][64][BFD_PKT_MAX_LEN];
	int qlen[2][64], qn[2];
	bool cut_a_to_b; /* drop A's packets */
	int a_changes, b_changes;
};

static void
pair_send(struct bfd_session *s, const uint8_t *pkt, int len, void *arg)
{
	struct pair *p = arg;
	int to = s == &p->a ? 1 : 0;

	if (to == 1 && p->cut_a_to_b)
		return;
	if (p->qn[to] < 64) {
		memcpy(p->q[to][p->qn[to]], pkt, (size_t)len);
		p->qlen[to][p->qn[to]++] = len;
	}
}

static void
pair_change(struct bfd_session *s, enum bfd_state old, void *arg)
{
	struct pair *p = arg;

	(void)old;
	if (s == &p->a)
		p->a_changes++;
	else
		p->b_changes++;
}

static const struct bfd_session_ops pair_ops = {.send = pair_send, .state_change = pair_change};

/* Run both until `until`, delivering packets at once; counts rx results. */
static void
pair_run(struct pair *p, uint64_t *now, uint64_t until, int *rejected)
{
	while (*now < until) {
		uint64_t na = bfd_session_timers(&p->a, *now);
		uint64_t nb = bfd_session_timers(&p->b, *now);

		for (int to = 0; to < 2; to++) {
			struct bfd_session *dst = to ? &p->b : &p->a;

			/* Deliver in order; answers may queue more. */
			for (int i = 0; i < p->qn[to]; i++)
				if (bfd_session_rx(dst, p->q[to][i], (uint32_t)p->qlen[to][i], *now) !=
				    BFD_RX_OK && rejected)
					(*rejected)++;
			p->qn[to] = 0;
		}
		*now = na < nb ? na : nb;
		if (*now > until)
			*now = until;
	}
}

static void
pair_init(struct pair *p, const struct bfd_session_cfg *ca, const struct bfd_session_cfg *cb)
{
	memset(p, 0, sizeof(*p));
	assert_int_equal(bfd_session_init(&p->a, ca, 101, &pair_ops, p, 1), 0);
	assert_int_equal(bfd_session_init(&p->b, cb, 202, &pair_ops, p, 1), 0);
}

static void
test_two_sessions_come_up_and_detect_a_silent_peer(void **state)
{
	struct bfd_session_cfg cfg = fast_cfg();
	struct pair p;
	uint64_t now = 1, cut;

	(void)state;
	pair_init(&p, &cfg, &cfg);
	pair_run(&p, &now, 5000 * MS, NULL);
	assert_int_equal(p.a.state, BFD_STATE_UP);
	assert_int_equal(p.b.state, BFD_STATE_UP);
	assert_false(p.a.poll_active || p.b.poll_active); /* fast timers agreed */
	assert_int_equal(p.a.remote_discr, 202);
	assert_int_equal(p.b.remote_discr, 101);
	/* A goes silent: B declares Down within its detection time (3 x 10 ms). */
	p.cut_a_to_b = true;
	cut = now;
	while (p.b.state == BFD_STATE_UP && now < cut + 1000 * MS)
		pair_run(&p, &now, now + 1 * MS, NULL);
	assert_int_equal(p.b.state, BFD_STATE_DOWN);
	assert_int_equal(p.b.local_diag, BFD_DIAG_TIME_EXPIRED);
	assert_true(now - cut <= 30 * MS + 1 * MS);
	/* A hears B go Down and leaves Up (diag 3; then Init, as B says Down). */
	pair_run(&p, &now, now + 2000 * MS, NULL);
	assert_int_not_equal(p.a.state, BFD_STATE_UP);
	assert_int_equal(p.a.stats.down_events, 1);
	/* Heal: both come Up again. */
	p.cut_a_to_b = false;
	pair_run(&p, &now, now + 5000 * MS, NULL);
	assert_int_equal(p.a.state, BFD_STATE_UP);
	assert_int_equal(p.b.state, BFD_STATE_UP);
}

static void
test_sha1_sessions_accept_and_reject(void **state)
{
	struct bfd_session_cfg ca = fast_cfg(), cb;
	struct pair p;
	uint64_t now = 1;
	int rejected = 0;

	(void)state;
	ca.auth_type = BFD_AUTH_METICULOUS_SHA1;
	ca.auth_key_id = 3;
	memcpy(ca.auth_key, "s3cret", 6);
	ca.auth_key_len = 6;
	cb = ca;
	pair_init(&p, &ca, &cb);
	pair_run(&p, &now, 3000 * MS, &rejected);
	assert_int_equal(rejected, 0);
	assert_int_equal(p.a.state, BFD_STATE_UP);
	assert_int_equal(p.b.state, BFD_STATE_UP);
	assert_true(p.b.auth_seq_known);

	/* Wrong key on one side: every packet fails, nothing comes Up. */
	memcpy(cb.auth_key, "s3creT", 6);
	pair_init(&p, &ca, &cb);
	now = 1;
	pair_run(&p, &now, 3000 * MS, &rejected);
	assert_true(rejected > 0);
	assert_int_equal(p.a.state, BFD_STATE_DOWN);
	assert_true(p.a.stats.rx_drop[BFD_RX_AUTH_FAILED] > 0);
	assert_true(p.b.stats.rx_drop[BFD_RX_AUTH_FAILED] > 0);

	/* Different key id: refused. Auth on one side only: mismatch. */
	cb = ca;
	cb.auth_key_id = 4;
	pair_init(&p, &ca, &cb);
	now = 1;
	pair_run(&p, &now, 3000 * MS, NULL);
	assert_true(p.b.stats.rx_drop[BFD_RX_AUTH_FAILED] > 0);
	assert_int_equal(p.b.state, BFD_STATE_DOWN);
	cb = fast_cfg();
	pair_init(&p, &ca, &cb);
	now = 1;
	pair_run(&p, &now, 3000 * MS, NULL);
	assert_true(p.a.stats.rx_drop[BFD_RX_AUTH_MISMATCH] > 0);
	assert_true(p.b.stats.rx_drop[BFD_RX_AUTH_MISMATCH] > 0);
	assert_int_equal(p.a.state, BFD_STATE_DOWN);
}

static void
test_replayed_packet_is_refused(void **state)
{
	struct bfd_session_cfg cfg = fast_cfg();
	struct bfd_session a, b;
	struct capture ca = {0}, cb = {0};
	uint8_t old[BFD_PKT_MAX_LEN];
	int oldlen;

	(void)state;
	cfg.auth_type = BFD_AUTH_METICULOUS_SHA1;
	cfg.auth_key_len = 4;
	memcpy(cfg.auth_key, "key1", 4);
	assert_int_equal(bfd_session_init(&a, &cfg, 11, &cap_ops, &ca, 1), 0);
	assert_int_equal(bfd_session_init(&b, &cfg, 22, &cap_ops, &cb, 1), 0);
	bfd_session_timers(&a, 1 * MS);
	memcpy(old, ca.pkt[0], (size_t)ca.len[0]);
	oldlen = ca.len[0];
	assert_int_equal(bfd_session_rx(&b, old, (uint32_t)oldlen, 2 * MS), BFD_RX_OK);
	/* The same packet again: meticulous sequence numbers must increase. */
	assert_int_equal(bfd_session_rx(&b, old, (uint32_t)oldlen, 3 * MS), BFD_RX_AUTH_FAILED);
	bfd_session_timers(&a, 2000 * MS);
	assert_int_equal(bfd_session_rx(&b, ca.pkt[1], (uint32_t)ca.len[1], 2001 * MS),
			 BFD_RX_OK);
}

static void
test_bad_configs_are_refused(void **state)
{
	struct bfd_session s;
	struct bfd_session_cfg cfg = fast_cfg();

	(void)state;
	assert_int_equal(bfd_session_init(&s, &cfg, 0, NULL, NULL, 1), -1); /* discr 0 */
	cfg.detect_mult = 0;
	assert_int_equal(bfd_session_init(&s, &cfg, 1, NULL, NULL, 1), -1);
	cfg = fast_cfg();
	cfg.required_min_rx_us = 0;
	assert_int_equal(bfd_session_init(&s, &cfg, 1, NULL, NULL, 1), -1);
	cfg = fast_cfg();
	cfg.auth_type = BFD_AUTH_KEYED_MD5; /* not offered */
	assert_int_equal(bfd_session_init(&s, &cfg, 1, NULL, NULL, 1), -1);
	cfg = fast_cfg();
	cfg.auth_type = BFD_AUTH_KEYED_SHA1;
	cfg.auth_key_len = BFD_AUTH_KEY_MAX + 1;
	assert_int_equal(bfd_session_init(&s, &cfg, 1, NULL, NULL, 1), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_state_machine_table),
	    cmocka_unit_test(test_detection_time_and_expiry),
	    cmocka_unit_test(test_slow_tx_while_down_and_jitter),
	    cmocka_unit_test(test_fast_tx_when_up_jitter_and_mult_1),
	    cmocka_unit_test(test_coming_up_announces_fast_timers_with_a_poll),
	    cmocka_unit_test(test_remote_faster_rx_brings_next_tx_forward),
	    cmocka_unit_test(test_timers_never_return_a_past_deadline),
	    cmocka_unit_test(test_poll_final_timer_change),
	    cmocka_unit_test(test_poll_is_answered_with_final_at_once),
	    cmocka_unit_test(test_admin_down),
	    cmocka_unit_test(test_admin_down_session_discards_without_refreshing_detection),
	    cmocka_unit_test(test_remote_demand_up_stops_periodic_tx),
	    cmocka_unit_test(test_poll_from_demand_remote_gets_final),
	    cmocka_unit_test(test_periodic_tx_resumes_when_remote_demand_ends),
	    cmocka_unit_test(test_coming_up_to_demand_remote_sends_a_poll),
	    cmocka_unit_test(test_our_poll_to_demand_remote_runs_until_final),
	    cmocka_unit_test(test_your_discriminator_must_be_ours),
	    cmocka_unit_test(test_two_sessions_come_up_and_detect_a_silent_peer),
	    cmocka_unit_test(test_sha1_sessions_accept_and_reject),
	    cmocka_unit_test(test_replayed_packet_is_refused),
	    cmocka_unit_test(test_bad_configs_are_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
