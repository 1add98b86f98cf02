/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * The BFD node (bfd_node.h): two nodes wired back to back through a fake
 * transmit, on a simulated clock, resolve each other by ARP and come Up; a
 * silent peer is detected within the detection time, AdminDown is seen as
 * Neighbor Down, a timer change runs a Poll.  Then, on one node fed made-up
 * frames: ARP answers and learning, ARP timing, demultiplexing (RFC 5880
 * 6.8.6 / RFC 5881 section 3), bfd_node_wants, the session table's
 * refusals, and framing drops counted and attributed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "bfd_node.h"
#include "bfd_test_frames.h"

#define MS 1000000ULL
#define STEP (1 * MS) /* the back-to-back clock's step */
#define RING 512      /* frames a harness remembers */
#define MAX_EVENTS 64

static const uint8_t mac_a[BFD_ETH_ALEN] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x0a};
static const uint8_t mac_b[BFD_ETH_ALEN] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x0b};
static const uint8_t mac_x[BFD_ETH_ALEN] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x99};
static const uint8_t mac_group[BFD_ETH_ALEN] = {0x01, 0x00, 0x5e, 0x00, 0x00, 0x01};
static const uint8_t mac_bcast[BFD_ETH_ALEN] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
static const uint8_t mac_zero[BFD_ETH_ALEN];

#define PA 3 /* A's port, wired to */
#define PB 5 /* B's port */
#define IP_A TF_IP(198, 18, 0, 1)
#define IP_B TF_IP(198, 18, 0, 2)
#define IP_C TF_IP(198, 18, 0, 3)
#define IP_X TF_IP(198, 18, 0, 99) /* a host with no session */

/* ---- harness: a node, its transmitted frames, its subscribers' events ------ */

struct frame_rec {
	uint16_t port;
	uint32_t len;
	uint64_t t;
	enum bfd_frame_kind kind;
	uint16_t arp_op;
	uint8_t b[BFD_FRAME_MAX];
};

struct harness {
	struct bfd_node node;
	uint64_t now;	     /* the clock, for the records */
	bool refuse;	     /* xmit says no */
	uint64_t n;	     /* frames accepted by xmit */
	uint64_t refused;
	uint64_t per_port[BFD_NODE_MAX_PORTS];
	uint64_t n_arp_req, n_arp_rep, n_ctrl;
	uint64_t delivered;  /* of n, how many the wire has passed on */
	struct frame_rec ring[RING];
};

struct event_rec {
	struct bfd_event ev; /* .name cleared: it is only valid in the callback */
	char name[BFD_NAME_LEN];
};

struct evlog {
	int n;
	struct event_rec e[MAX_EVENTS];
};

static int
h_xmit(uint16_t port, const uint8_t *frame, uint32_t len, void *arg)
{
	struct harness *h = arg;
	struct frame_rec *r;
	struct bfd_frame f;

	assert_true(port < BFD_NODE_MAX_PORTS);
	assert_true(len <= BFD_FRAME_MAX);
	if (h->refuse) {
		h->refused++;
		return -1;
	}
	/* Everything a node sends is well-formed ARP or BFD. */
	f.kind = bfd_frame_parse(frame, len, &f);
	if (f.kind != BFD_FRAME_ARP && f.kind != BFD_FRAME_CTRL)
		fail_msg("node sent a frame that parses as kind %d (%s)", f.kind,
			 bfd_rx_reason_str(f.reason));
	r = &h->ring[h->n % RING];
	r->port = port;
	r->len = len;
	r->t = h->now;
	r->kind = f.kind;
	r->arp_op = f.arp_op;
	memcpy(r->b, frame, len);
	h->n++;
	h->per_port[port]++;
	if (f.kind == BFD_FRAME_CTRL)
		h->n_ctrl++;
	else if (f.arp_op == BFD_ARP_REQUEST)
		h->n_arp_req++;
	else
		h->n_arp_rep++;
	return 0;
}

static const struct bfd_node_ops h_ops = {.xmit = h_xmit};

static void
ev_record(const struct bfd_event *ev, void *arg)
{
	struct evlog *l = arg;

	assert_non_null(ev->name);
	if (l->n < MAX_EVENTS) {
		l->e[l->n].ev = *ev;
		l->e[l->n].ev.name = NULL;
		snprintf(l->e[l->n].name, BFD_NAME_LEN, "%s", ev->name);
	}
	l->n++;
}

/* The i-th frame the harness accepted (still remembered). */
static const struct frame_rec *
sent(const struct harness *h, uint64_t i)
{
	assert_true(i < h->n && h->n - i <= RING);
	return &h->ring[i % RING];
}

static const struct frame_rec *
last_sent(const struct harness *h)
{
	assert_true(h->n > 0);
	return sent(h, h->n - 1);
}

static void
h_init(struct harness *h, uint64_t seed)
{
	memset(h, 0, sizeof(*h));
	bfd_node_init(&h->node, &h_ops, h, seed);
}

static struct bfd_node_session_cfg
session_cfg(const char *name, uint16_t port, uint32_t local_ip, uint32_t peer_ip)
{
	struct bfd_node_session_cfg c = {
		.port = port,
		.local_ip = local_ip,
		.peer_ip = peer_ip,
		.bfd = {.desired_min_tx_us = 10000, .required_min_rx_us = 10000, .detect_mult = 3},
	};

	snprintf(c.name, sizeof(c.name), "%s", name);
	return c;
}

static int
add(struct harness *h, const char *name, uint16_t port, uint32_t local_ip, uint32_t peer_ip)
{
	struct bfd_node_session_cfg c = session_cfg(name, port, local_ip, peer_ip);

	return bfd_node_add_session(&h->node, &c, h->now);
}

/* Hand the node a frame at the harness's time. */
static enum bfd_rx_reason
h_rx(struct harness *h, uint16_t port, const uint8_t *frame, uint32_t len)
{
	return bfd_node_rx(&h->node, port, frame, len, h->now);
}

static enum bfd_rx_reason
h_rx_arp(struct harness *h, uint16_t port, uint16_t op, const uint8_t *sha, uint32_t spa,
	 uint32_t tpa)
{
	uint8_t f[BFD_ARP_FRAME_LEN];

	return h_rx(h, port, f, tf_arp_frame(f, op, sha, spa, op == BFD_ARP_REPLY ? mac_a : NULL,
					     tpa));
}

/* A control packet from a peer whose discriminator is 0x7777. */
static struct bfd_ctrl
peer_ctrl(uint8_t state, uint32_t your_disc)
{
	struct bfd_ctrl c = {
		.state = state,
		.detect_mult = 3,
		.my_disc = 0x7777,
		.your_disc = your_disc,
		.desired_min_tx_us = 1000000,
		.required_min_rx_us = 10000,
	};

	return c;
}

static enum bfd_rx_reason
h_rx_ctrl(struct harness *h, uint16_t port, uint32_t src_ip, uint32_t dst_ip,
	  const struct bfd_ctrl *c)
{
	uint8_t f[BFD_FRAME_MAX];

	return h_rx(h, port, f, tf_ctrl_frame(f, mac_b, mac_a, src_ip, dst_ip, 49152, c));
}

static void
assert_arp_frame(const struct frame_rec *r, uint16_t port, uint16_t op, const uint8_t *dst,
		 uint32_t spa, const uint8_t *tha, uint32_t tpa)
{
	struct bfd_frame f;

	assert_int_equal(r->port, port);
	assert_int_equal(r->len, BFD_ARP_FRAME_LEN);
	assert_int_equal(bfd_frame_parse(r->b, r->len, &f), BFD_FRAME_ARP);
	assert_int_equal(f.arp_op, op);
	assert_memory_equal(f.dst_mac, dst, BFD_ETH_ALEN);
	assert_memory_equal(f.src_mac, mac_a, BFD_ETH_ALEN);
	assert_memory_equal(f.arp_sha, mac_a, BFD_ETH_ALEN);
	assert_memory_equal(r->b + TF_ARP_OFF + 18, tha, BFD_ETH_ALEN);
	assert_int_equal(f.arp_spa, spa);
	assert_int_equal(f.arp_tpa, tpa);
}

/* ---- two nodes back to back ------------------------------------------------- */

struct world {
	struct harness a, b;
	struct evlog ea, ea2, eb; /* two subscribers on A, one on B */
	uint64_t now;
	bool cut_b_to_a;
	uint64_t last_b_to_a_ctrl; /* when A last got a control packet */
	uint64_t a_rx_ok, b_rx_ok;
};

static int
setup(void **state)
{
	struct world *w = test_calloc(1, sizeof(*w));

	if (w == NULL)
		return -1;
	h_init(&w->a, 1);
	h_init(&w->b, 2);
	if (bfd_node_set_port_mac(&w->a.node, PA, mac_a) != 0 ||
	    bfd_node_set_port_mac(&w->b.node, PB, mac_b) != 0)
		return -1;
	w->now = 1 * MS;
	w->a.now = w->b.now = w->now;
	*state = w;
	return 0;
}

static int
teardown(void **state)
{
	test_free(*state);
	return 0;
}

/* Pass on what `from` sent since last time to `to`, arriving on `port`;
 * false if there was nothing. */
static bool
wire_pass(struct world *w, struct harness *from, uint16_t from_port, struct harness *to,
	  uint16_t port, bool cut, uint64_t *rx_ok)
{
	bool any = false;

	while (from->delivered < from->n) {
		const struct frame_rec *r = sent(from, from->delivered++);

		any = true;
		assert_int_equal(r->port, from_port);
		if (cut)
			continue;
		/* The owner asks first; everything on this wire is BFD's. */
		assert_true(bfd_node_wants(&to->node, port, r->b, r->len));
		/* A session held AdminDown discards control packets (RFC 5880
		 * 6.8.6); everything else is taken. */
		if (r->kind == BFD_FRAME_CTRL && to->node.sess[0].s.state == BFD_STATE_ADMIN_DOWN) {
			assert_int_equal(bfd_node_rx(&to->node, port, r->b, r->len, w->now),
					 BFD_RX_ADMIN_DOWN);
			continue;
		}
		assert_int_equal(bfd_node_rx(&to->node, port, r->b, r->len, w->now), BFD_RX_OK);
		(*rx_ok)++;
		if (to == &w->a && r->kind == BFD_FRAME_CTRL)
			w->last_b_to_a_ctrl = w->now;
	}
	return any;
}

/* One tick: both nodes' timers, then everything sent delivered (answers
 * included), then the clock moves on by STEP. */
static void
world_step(struct world *w)
{
	bool more = true;

	w->a.now = w->b.now = w->now;
	bfd_node_timers(&w->a.node, w->now);
	bfd_node_timers(&w->b.node, w->now);
	for (int rounds = 0; more; rounds++) {
		/* An answer may call for one more (a Final to a Poll), never
		 * for an endless exchange. */
		if (rounds > 4)
			fail_msg("frames keep answering each other at %llu ns",
				 (unsigned long long)w->now);
		more = wire_pass(w, &w->a, PA, &w->b, PB, false, &w->b_rx_ok);
		more |= wire_pass(w, &w->b, PB, &w->a, PA, w->cut_b_to_a, &w->a_rx_ok);
	}
	w->now += STEP;
}

static void
world_run(struct world *w, uint64_t span)
{
	uint64_t end = w->now + span;

	while (w->now < end)
		world_step(w);
}

static struct bfd_node_session *
sa(struct world *w)
{
	return &w->a.node.sess[0];
}

static struct bfd_node_session *
sb(struct world *w)
{
	return &w->b.node.sess[0];
}

/* A's session to B and B's to A, ARP for the MACs, subscribers; run until
 * both are Up (at most 5 s). */
static void
world_up(struct world *w)
{
	uint64_t end;

	assert_int_equal(add(&w->a, "to-b", PA, IP_A, IP_B), 0);
	assert_int_equal(add(&w->b, "to-a", PB, IP_B, IP_A), 0);
	assert_int_equal(bfd_node_subscribe(&w->a.node, ev_record, &w->ea), 0);
	assert_int_equal(bfd_node_subscribe(&w->a.node, ev_record, &w->ea2), 0);
	assert_int_equal(bfd_node_subscribe(&w->b.node, ev_record, &w->eb), 0);
	end = w->now + 5000 * MS;
	while ((sa(w)->s.state != BFD_STATE_UP || sb(w)->s.state != BFD_STATE_UP) && w->now < end)
		world_step(w);
	assert_int_equal(sa(w)->s.state, BFD_STATE_UP);
	assert_int_equal(sb(w)->s.state, BFD_STATE_UP);
}

/* The events of one side on the way Up: Down -> Init -> Up or Down -> Up. */
static void
check_up_events(const struct evlog *l, const char *name, uint16_t port, uint32_t local_ip,
		uint32_t peer_ip, const struct bfd_node_session *ns)
{
	assert_true(l->n == 1 || l->n == 2);
	for (int i = 0; i < l->n; i++) {
		const struct event_rec *e = &l->e[i];

		assert_int_equal(e->ev.session, 0);
		assert_string_equal(e->name, name);
		assert_int_equal(e->ev.port, port);
		assert_int_equal(e->ev.local_ip, local_ip);
		assert_int_equal(e->ev.peer_ip, peer_ip);
		assert_int_equal(e->ev.diag, BFD_DIAG_NONE);
		assert_int_equal(e->ev.old_state, i == 0 ? BFD_STATE_DOWN : BFD_STATE_INIT);
		assert_int_equal(e->ev.new_state,
				 i == l->n - 1 ? BFD_STATE_UP : BFD_STATE_INIT);
		if (i > 0)
			assert_true(e->ev.time_ns >= l->e[i - 1].ev.time_ns);
	}
	assert_int_equal(l->e[l->n - 1].ev.time_ns, ns->last_up_ns);
	assert_int_equal(ns->last_change_ns, ns->last_up_ns);
}

static void
assert_same_events(const struct evlog *x, const struct evlog *y)
{
	assert_int_equal(x->n, y->n);
	for (int i = 0; i < x->n && i < MAX_EVENTS; i++) {
		assert_int_equal(x->e[i].ev.session, y->e[i].ev.session);
		assert_int_equal(x->e[i].ev.old_state, y->e[i].ev.old_state);
		assert_int_equal(x->e[i].ev.new_state, y->e[i].ev.new_state);
		assert_int_equal(x->e[i].ev.diag, y->e[i].ev.diag);
		assert_int_equal(x->e[i].ev.remote_diag, y->e[i].ev.remote_diag);
		assert_int_equal(x->e[i].ev.time_ns, y->e[i].ev.time_ns);
		assert_string_equal(x->e[i].name, y->e[i].name);
	}
}

static void
test_two_nodes_resolve_by_arp_and_come_up(void **state)
{
	struct world *w = *state;
	uint64_t ctrl0;
	bool a_replied = false;

	world_up(w);
	assert_true(w->now < 1 * MS + 2000 * MS); /* one slow packet or two */
	assert_int_equal(sa(w)->s.remote_discr, sb(w)->s.local_discr);
	assert_int_equal(sb(w)->s.remote_discr, sa(w)->s.local_discr);
	/* ARP: each asked once, answered the other's request, learned once. */
	assert_int_equal(w->a.node.stats.arp_requests, 1);
	assert_int_equal(w->b.node.stats.arp_requests, 1);
	assert_int_equal(w->a.node.stats.arp_replied, 1);
	assert_int_equal(w->b.node.stats.arp_replied, 1);
	assert_int_equal(w->a.node.stats.arp_learned, 1);
	assert_int_equal(w->b.node.stats.arp_learned, 1);
	assert_int_equal(w->a.n_arp_req, 1);
	assert_int_equal(w->a.n_arp_rep, 1);
	assert_true(sa(w)->mac_known && sb(w)->mac_known);
	assert_memory_equal(sa(w)->peer_mac, mac_b, BFD_ETH_ALEN);
	assert_memory_equal(sb(w)->peer_mac, mac_a, BFD_ETH_ALEN);
	for (uint64_t i = 0; i < w->a.n; i++) {
		const struct frame_rec *r = sent(&w->a, i);

		if (r->kind == BFD_FRAME_ARP && r->arp_op == BFD_ARP_REPLY) {
			assert_arp_frame(r, PA, BFD_ARP_REPLY, mac_b, IP_A, mac_b, IP_B);
			assert_int_equal(r->t, 1 * MS); /* to B's first request */
			a_replied = true;
		}
	}
	assert_true(a_replied);
	/* The first packet of each went before the MAC was known. */
	assert_int_equal(sa(w)->tx_no_mac, 1);
	assert_int_equal(sb(w)->tx_no_mac, 1);
	assert_int_equal(w->a.node.stats.tx_fail + w->b.node.stats.tx_fail, 0);
	/* Events, to both subscribers of A, and to B's. */
	check_up_events(&w->ea, "to-b", PA, IP_A, IP_B, sa(w));
	check_up_events(&w->eb, "to-a", PB, IP_B, IP_A, sb(w));
	assert_same_events(&w->ea, &w->ea2);
	assert_int_equal(sa(w)->s.stats.up_events, 1);

	/* Up for a second: fast timers agreed by Poll, 10 ms less jitter,
	 * detection time 3 x 10 ms, no more events or ARP. */
	ctrl0 = w->a.n_ctrl;
	world_run(w, 1000 * MS);
	assert_int_equal(sa(w)->s.state, BFD_STATE_UP);
	assert_int_equal(sb(w)->s.state, BFD_STATE_UP);
	assert_false(sa(w)->s.poll_active || sb(w)->s.poll_active);
	assert_int_equal(sa(w)->s.stats.polls_completed, 1);
	assert_true(w->a.n_ctrl - ctrl0 >= 99 && w->a.n_ctrl - ctrl0 <= 134);
	assert_int_equal(bfd_session_detect_time_ns(&sa(w)->s), 30 * MS);
	assert_int_equal(w->ea.n, w->ea2.n);
	assert_true(w->ea.n <= 2 && w->eb.n <= 2);
	assert_int_equal(w->a.n_arp_req + w->b.n_arp_req, 2);
	/* Every control frame went from A's port MAC to B's, and all arrived. */
	for (uint64_t i = w->a.n - 50; i < w->a.n; i++) {
		const struct frame_rec *r = sent(&w->a, i);

		assert_int_equal(r->kind, BFD_FRAME_CTRL);
		assert_memory_equal(r->b, mac_b, BFD_ETH_ALEN);
		assert_memory_equal(r->b + BFD_ETH_ALEN, mac_a, BFD_ETH_ALEN);
		assert_int_equal(tf_get16(r->b + TF_UDP_OFF), sa(w)->src_port);
	}
	assert_int_equal(w->b_rx_ok, w->a.n);
	assert_int_equal(w->a_rx_ok, w->b.n);
	assert_int_equal(w->b.node.stats.rx_ctrl, w->a.n_ctrl);
}

static void
test_silent_peer_goes_down_within_detection_time(void **state)
{
	struct world *w = *state;
	uint64_t cut, end, last_rx;
	const struct event_rec *e;
	int before, b_before;

	world_up(w);
	world_run(w, 1000 * MS); /* Polls done: detection 3 x 10 ms */
	assert_int_equal(bfd_session_detect_time_ns(&sa(w)->s), 30 * MS);
	before = w->ea.n;
	b_before = w->eb.n;
	w->cut_b_to_a = true;
	cut = w->now;
	last_rx = w->last_b_to_a_ctrl;
	assert_true(cut - last_rx <= 10 * MS);
	end = cut + 1000 * MS;
	while (sa(w)->s.state == BFD_STATE_UP && w->now < end)
		world_step(w);
	assert_int_equal(sa(w)->s.state, BFD_STATE_DOWN);
	assert_int_equal(sa(w)->s.local_diag, BFD_DIAG_TIME_EXPIRED);
	assert_int_equal(w->ea.n, before + 1);
	e = &w->ea.e[before];
	assert_int_equal(e->ev.old_state, BFD_STATE_UP);
	assert_int_equal(e->ev.new_state, BFD_STATE_DOWN);
	assert_int_equal(e->ev.diag, BFD_DIAG_TIME_EXPIRED);
	assert_int_equal(e->ev.remote_diag, BFD_DIAG_NONE);
	assert_string_equal(e->name, "to-b");
	/* Not before the detection time from the last packet, and at the
	 * first tick after it. */
	assert_true(e->ev.time_ns >= last_rx + 30 * MS);
	assert_true(e->ev.time_ns <= last_rx + 30 * MS + STEP);
	assert_true(e->ev.time_ns <= cut + 30 * MS + STEP);
	assert_int_equal(sa(w)->last_down_ns, e->ev.time_ns);
	assert_int_equal(sa(w)->last_down_diag, BFD_DIAG_TIME_EXPIRED);
	assert_int_equal(sa(w)->s.stats.down_events, 1);
	assert_same_events(&w->ea, &w->ea2);
	/* B hears A say Down and follows (Neighbor Down, A's diag 1). */
	world_run(w, 100 * MS);
	assert_int_equal(sb(w)->s.state, BFD_STATE_DOWN);
	assert_int_equal(w->eb.n, b_before + 1);
	e = &w->eb.e[b_before];
	assert_int_equal(e->ev.old_state, BFD_STATE_UP);
	assert_int_equal(e->ev.new_state, BFD_STATE_DOWN);
	assert_int_equal(e->ev.diag, BFD_DIAG_NEIGHBOR_DOWN);
	assert_int_equal(e->ev.remote_diag, BFD_DIAG_TIME_EXPIRED);
	/* Healed, both come Up again. */
	w->cut_b_to_a = false;
	world_run(w, 5000 * MS);
	assert_int_equal(sa(w)->s.state, BFD_STATE_UP);
	assert_int_equal(sb(w)->s.state, BFD_STATE_UP);
	assert_int_equal(w->ea.e[w->ea.n - 1].ev.new_state, BFD_STATE_UP);
}

static void
test_admin_down_is_seen_as_neighbor_down(void **state)
{
	struct world *w = *state;
	uint64_t t;
	const struct event_rec *e;
	int before;
	uint64_t rx;

	world_up(w);
	world_run(w, 1000 * MS);
	before = w->ea.n;
	assert_int_equal(bfd_node_set_admin_down(&w->b.node, -1, true, w->now), -1);
	assert_int_equal(bfd_node_set_admin_down(&w->b.node, 1, true, w->now), -1);
	t = w->now;
	assert_int_equal(bfd_node_set_admin_down(&w->b.node, 0, true, t), 0);
	/* B's own event, at once. */
	e = &w->eb.e[w->eb.n - 1];
	assert_int_equal(e->ev.old_state, BFD_STATE_UP);
	assert_int_equal(e->ev.new_state, BFD_STATE_ADMIN_DOWN);
	assert_int_equal(e->ev.diag, BFD_DIAG_ADMIN_DOWN);
	assert_int_equal(e->ev.time_ns, t);
	/* B says so in its next packet (sent at once): A goes Down. */
	while (sa(w)->s.state == BFD_STATE_UP && w->now < t + 100 * MS)
		world_step(w);
	assert_true(w->now <= t + 2 * STEP);
	assert_int_equal(sa(w)->s.state, BFD_STATE_DOWN);
	assert_int_equal(w->ea.n, before + 1);
	e = &w->ea.e[before];
	assert_int_equal(e->ev.old_state, BFD_STATE_UP);
	assert_int_equal(e->ev.new_state, BFD_STATE_DOWN);
	assert_int_equal(e->ev.diag, BFD_DIAG_NEIGHBOR_DOWN);
	assert_int_equal(e->ev.remote_diag, BFD_DIAG_ADMIN_DOWN);
	assert_int_equal(sa(w)->s.remote_state, BFD_STATE_ADMIN_DOWN);
	/* And stays Down while B is AdminDown: no Init, no more events.  B
	 * discards what A sends, counted by reason, not as received. */
	rx = sb(w)->s.stats.rx;
	world_run(w, 3000 * MS);
	assert_int_equal(sa(w)->s.state, BFD_STATE_DOWN);
	assert_int_equal(sb(w)->s.state, BFD_STATE_ADMIN_DOWN);
	assert_int_equal(w->ea.n, before + 1);
	assert_int_equal(sb(w)->s.stats.rx, rx);
	assert_true(sb(w)->s.stats.rx_drop[BFD_RX_ADMIN_DOWN] >= 2); /* A: Down, 1 s apart */
	assert_int_equal(w->b.node.stats.rx_drop[BFD_RX_ADMIN_DOWN], 0); /* it reached B's session */
	/* Back in service. */
	assert_int_equal(bfd_node_set_admin_down(&w->b.node, 0, false, w->now), 0);
	world_run(w, 5000 * MS);
	assert_int_equal(sa(w)->s.state, BFD_STATE_UP);
	assert_int_equal(sb(w)->s.state, BFD_STATE_UP);
}

static void
test_set_timers_while_up_runs_a_poll(void **state)
{
	struct world *w = *state;
	uint64_t completed, started;
	int events;

	world_up(w);
	world_run(w, 1000 * MS);
	completed = sa(w)->s.stats.polls_completed;
	started = sa(w)->s.stats.polls_started;
	events = w->ea.n + w->eb.n;
	assert_int_equal(bfd_node_set_timers(&w->a.node, 0, 0, 20000, 3, w->now), -1);
	assert_int_equal(bfd_node_set_timers(&w->a.node, 0, 20000, 20000, 0, w->now), -1);
	assert_int_equal(bfd_node_set_timers(&w->a.node, 1, 20000, 20000, 3, w->now), -1);
	assert_int_equal(bfd_node_set_timers(&w->a.node, -1, 20000, 20000, 3, w->now), -1);
	assert_int_equal(bfd_node_set_timers(&w->a.node, 0, 20000, 20000, 3, w->now), 0);
	assert_true(sa(w)->s.poll_active);
	assert_int_equal(sa(w)->s.stats.polls_started, started + 1);
	world_run(w, 100 * MS);
	assert_false(sa(w)->s.poll_active);
	assert_int_equal(sa(w)->s.stats.polls_completed, completed + 1);
	/* Both use the new values: B sends no faster than A now takes. */
	assert_int_equal(sb(w)->s.remote_desired_min_tx_us, 20000);
	assert_int_equal(sb(w)->s.remote_min_rx_us, 20000);
	assert_int_equal(sb(w)->s.tx_interval_ns, 20 * MS);
	assert_int_equal(sa(w)->s.tx_interval_ns, 20 * MS);
	assert_int_equal(bfd_session_detect_time_ns(&sa(w)->s), 60 * MS);
	assert_int_equal(sa(w)->s.state, BFD_STATE_UP);
	assert_int_equal(sb(w)->s.state, BFD_STATE_UP);
	assert_int_equal(w->ea.n + w->eb.n, events);
}

/* ---- ARP -------------------------------------------------------------------- */

static void
test_arp_request_for_local_address_is_answered_once(void **state)
{
	struct world *w = *state;
	struct harness *h = &w->a;

	assert_int_equal(add(h, "b", PA, IP_A, IP_B), 0);
	assert_int_equal(add(h, "c", PA, IP_A, IP_C), 1); /* same local address */
	assert_int_equal(h_rx_arp(h, PA, BFD_ARP_REQUEST, mac_x, IP_X, IP_A), BFD_RX_OK);
	assert_int_equal(h->n, 1);
	assert_arp_frame(last_sent(h), PA, BFD_ARP_REPLY, mac_x, IP_A, mac_x, IP_X);
	assert_int_equal(h->node.stats.arp_rx, 1);
	assert_int_equal(h->node.stats.arp_replied, 1);
	assert_int_equal(h->node.stats.tx_frames, 1);
	/* Nothing for: another address, the peer's address, our address on
	 * another port, a reply, a group or our own sender address. */
	assert_int_equal(h_rx_arp(h, PA, BFD_ARP_REQUEST, mac_x, IP_X, TF_IP(198, 18, 0, 77)),
			 BFD_RX_OK);
	assert_int_equal(h_rx_arp(h, PA, BFD_ARP_REQUEST, mac_x, IP_X, IP_B), BFD_RX_OK);
	assert_int_equal(h_rx_arp(h, PA + 1, BFD_ARP_REQUEST, mac_x, IP_X, IP_A), BFD_RX_OK);
	assert_int_equal(h_rx_arp(h, PA, BFD_ARP_REPLY, mac_x, IP_X, IP_A), BFD_RX_OK);
	assert_int_equal(h_rx_arp(h, PA, BFD_ARP_REQUEST, mac_group, IP_X, IP_A), BFD_RX_OK);
	assert_int_equal(h_rx_arp(h, PA, BFD_ARP_REQUEST, mac_a, IP_X, IP_A), BFD_RX_OK);
	assert_int_equal(h->n, 1);
	assert_int_equal(h->node.stats.arp_rx, 7);
	assert_int_equal(h->node.stats.arp_replied, 1);
	assert_int_equal(h->node.stats.arp_learned, 0);
	/* Asked again: answered again. */
	assert_int_equal(h_rx_arp(h, PA, BFD_ARP_REQUEST, mac_b, IP_B, IP_A), BFD_RX_OK);
	assert_int_equal(h->n, 2);
	assert_arp_frame(last_sent(h), PA, BFD_ARP_REPLY, mac_b, IP_A, mac_b, IP_B);
}

static void
test_arp_learning(void **state)
{
	static const uint8_t mac_b2[BFD_ETH_ALEN] = {0x02, 0x00, 0x00, 0x00, 0x01, 0x0b};
	struct world *w = *state;
	struct harness *h = &w->a;
	struct bfd_node_session *ns;

	assert_int_equal(add(h, "b", PA, IP_A, IP_B), 0);
	assert_int_equal(add(h, "b-other-port", PA + 1, IP_A, IP_B), 1);
	ns = &h->node.sess[0];
	/* Not from the peer's address, from a group address, from our own
	 * MAC (a loop), or on another port: nothing learned. */
	h_rx_arp(h, PA, BFD_ARP_REQUEST, mac_x, IP_X, IP_A);
	h_rx_arp(h, PA, BFD_ARP_REPLY, mac_group, IP_B, IP_A);
	h_rx_arp(h, PA, BFD_ARP_REQUEST, mac_bcast, IP_B, IP_A);
	h_rx_arp(h, PA, BFD_ARP_REPLY, mac_a, IP_B, IP_A);
	h_rx_arp(h, PA + 2, BFD_ARP_REPLY, mac_b, IP_B, IP_A);
	assert_false(ns->mac_known);
	assert_false(h->node.sess[1].mac_known);
	assert_int_equal(h->node.stats.arp_learned, 0);
	/* The peer's reply teaches its MAC; saying it again teaches nothing. */
	h_rx_arp(h, PA, BFD_ARP_REPLY, mac_b, IP_B, IP_A);
	assert_true(ns->mac_known);
	assert_memory_equal(ns->peer_mac, mac_b, BFD_ETH_ALEN);
	assert_int_equal(h->node.stats.arp_learned, 1);
	assert_false(h->node.sess[1].mac_known); /* the other port's peer */
	h_rx_arp(h, PA, BFD_ARP_REQUEST, mac_b, IP_B, IP_A);
	assert_int_equal(h->node.stats.arp_learned, 1);
	/* A new MAC (a request for someone else still says who is asking). */
	h_rx_arp(h, PA, BFD_ARP_REQUEST, mac_b2, IP_B, IP_X);
	assert_memory_equal(ns->peer_mac, mac_b2, BFD_ETH_ALEN);
	assert_int_equal(h->node.stats.arp_learned, 2);
	/* A group sender does not overwrite it. */
	h_rx_arp(h, PA, BFD_ARP_REQUEST, mac_group, IP_B, IP_A);
	assert_memory_equal(ns->peer_mac, mac_b2, BFD_ETH_ALEN);
	/* Session packets now go there. */
	bfd_node_timers(&h->node, h->now);
	assert_int_equal(last_sent(h)->kind, BFD_FRAME_CTRL);
	assert_memory_equal(last_sent(h)->b, mac_b2, BFD_ETH_ALEN);
	assert_int_equal(ns->tx_no_mac, 0);
}

/* Session "b" on port PA to IP_B, whose MAC (mac_b) is configured. */
static struct bfd_node_session *
add_static_b(struct harness *h)
{
	struct bfd_node_session_cfg c = session_cfg("b", PA, IP_A, IP_B);

	c.peer_mac_static = true;
	memcpy(c.peer_mac, mac_b, BFD_ETH_ALEN);
	assert_int_equal(bfd_node_add_session(&h->node, &c, h->now), 0);
	return &h->node.sess[0];
}

static void
test_static_peer_mac_never_arps(void **state)
{
	struct world *w = *state;
	struct harness *h = &w->a;
	struct bfd_node_session *ns = add_static_b(h);

	assert_true(ns->mac_known);
	for (; h->now < 12000 * MS; h->now += STEP)
		bfd_node_timers(&h->node, h->now);
	assert_int_equal(h->node.stats.arp_requests, 0);
	assert_int_equal(h->n_arp_req, 0);
	assert_true(h->n_ctrl >= 12 && h->n_ctrl == h->n);
	assert_memory_equal(last_sent(h)->b, mac_b, BFD_ETH_ALEN);
	assert_int_equal(ns->tx_no_mac, 0);
	/* ARP from the peer's address does not change a configured MAC, but a
	 * request for our address is still answered. */
	h_rx_arp(h, PA, BFD_ARP_REQUEST, mac_x, IP_B, IP_A);
	assert_memory_equal(ns->peer_mac, mac_b, BFD_ETH_ALEN);
	assert_int_equal(h->node.stats.arp_learned, 0);
	assert_int_equal(h->n_arp_rep, 1);
}

static void
test_arp_retry_while_mac_unknown(void **state)
{
	struct world *w = *state;
	struct harness *h = &w->a;
	struct bfd_node_session *ns = &h->node.sess[0];
	uint64_t t0 = h->now, learned, next;
	uint64_t req_t[8] = {0};
	int nreq = 0;

	assert_int_equal(add(h, "b", PA, IP_A, IP_B), 0);
	/* Driven by the deadlines the node returns: if one were late, so would
	 * be the request. */
	while (h->now < t0 + 3500 * MS) {
		uint64_t before = h->n;

		next = bfd_node_timers(&h->node, h->now);
		assert_true(next > h->now);
		for (uint64_t i = before; i < h->n; i++) {
			assert_int_equal(sent(h, i)->kind, BFD_FRAME_ARP);
			assert_true(nreq < 8);
			req_t[nreq++] = sent(h, i)->t;
			assert_arp_frame(sent(h, i), PA, BFD_ARP_REQUEST, mac_bcast, IP_A, mac_zero,
					 IP_B);
		}
		h->now = next;
	}
	assert_int_equal(nreq, 4);
	assert_int_equal(req_t[0], t0);
	for (int i = 1; i < nreq; i++)
		assert_int_equal(req_t[i] - req_t[i - 1], BFD_ARP_RETRY_NS);
	assert_int_equal(h->node.stats.arp_requests, 4);
	/* The session's packets were counted, not sent. */
	assert_int_equal(h->n_ctrl, 0);
	assert_true(ns->s.stats.tx >= 4);
	assert_int_equal(ns->tx_no_mac, ns->s.stats.tx);
	assert_int_equal(ns->tx_fail, 0);

	/* The peer answers: its packets go out, and ARP waits for the refresh
	 * period (the session is not Up). */
	learned = h->now;
	h_rx_arp(h, PA, BFD_ARP_REPLY, mac_b, IP_B, IP_A);
	assert_true(ns->mac_known);
	nreq = 0;
	while (h->now < learned + BFD_ARP_REFRESH_NS + 500 * MS) {
		uint64_t before = h->n;

		next = bfd_node_timers(&h->node, h->now);
		for (uint64_t i = before; i < h->n; i++)
			if (sent(h, i)->kind == BFD_FRAME_ARP) {
				assert_true(nreq < 8);
				req_t[nreq++] = sent(h, i)->t;
			}
		h->now = next;
	}
	assert_int_equal(nreq, 1);
	assert_int_equal(req_t[0], learned + BFD_ARP_REFRESH_NS);
	assert_true(h->n_ctrl >= 5);
	assert_int_equal(ns->tx_no_mac + h->n_ctrl, ns->s.stats.tx);
}

static void
test_refused_transmit_is_counted(void **state)
{
	struct world *w = *state;
	struct harness *h = &w->a;
	struct bfd_node_session *ns = add_static_b(h);

	h->refuse = true;
	bfd_node_timers(&h->node, h->now);
	assert_int_equal(ns->tx_fail, 1);
	assert_int_equal(h->node.stats.tx_fail, 1);
	assert_int_equal(h->node.stats.tx_frames, 0);
	h_rx_arp(h, PA, BFD_ARP_REQUEST, mac_x, IP_X, IP_A); /* the answer fails */
	assert_int_equal(h->node.stats.tx_fail, 2);
	assert_int_equal(ns->tx_fail, 1);
	assert_int_equal(h->refused, 2);
	assert_int_equal(h->n, 0);
	h->refuse = false;
	bfd_node_timers(&h->node, h->now + 1000 * MS);
	assert_int_equal(h->node.stats.tx_frames, 1);
	assert_int_equal(h->n_ctrl, 1);
	assert_int_equal(ns->tx_fail, 1);
}

/* ---- demultiplexing ---------------------------------------------------------- */

#define L0 TF_IP(10, 0, 0, 1)
#define P0 TF_IP(10, 0, 0, 2)
#define P2 TF_IP(10, 0, 0, 3)
#define L1 TF_IP(10, 0, 1, 1)
#define P1 TF_IP(10, 0, 1, 2)

/* s0: port 0, L0 <- P0; s1: port 1, L1 <- P1; s2: port 0, L0 <- P2. */
static void
three_sessions(struct harness *h)
{
	assert_int_equal(add(h, "s0", 0, L0, P0), 0);
	assert_int_equal(add(h, "s1", 1, L1, P1), 1);
	assert_int_equal(add(h, "s2", 0, L0, P2), 2);
}

static void
test_demux(void **state)
{
	struct world *w = *state;
	struct harness *h = &w->a;
	struct bfd_node_session *s = h->node.sess;
	struct bfd_ctrl c;
	uint32_t d0, d1;

	three_sessions(h);
	d0 = s[0].s.local_discr;
	d1 = s[1].s.local_discr;
	/* Your Discriminator selects; the packet must also come from the
	 * session's peer to its address on its port. */
	c = peer_ctrl(BFD_STATE_DOWN, d0);
	assert_int_equal(h_rx_ctrl(h, 0, P0, L0, &c), BFD_RX_OK);
	assert_int_equal(s[0].s.stats.rx, 1);
	assert_int_equal(s[0].s.remote_discr, 0x7777);
	assert_int_equal(s[0].s.state, BFD_STATE_INIT);
	assert_int_equal(h_rx_ctrl(h, 1, P0, L0, &c), BFD_RX_NO_SESSION); /* wrong port */
	assert_int_equal(h_rx_ctrl(h, 0, P2, L0, &c), BFD_RX_NO_SESSION); /* s2's peer */
	assert_int_equal(h_rx_ctrl(h, 0, TF_IP(10, 0, 0, 9), L0, &c), BFD_RX_NO_SESSION);
	assert_int_equal(h_rx_ctrl(h, 0, P0, TF_IP(10, 0, 0, 9), &c), BFD_RX_NO_SESSION);
	c = peer_ctrl(BFD_STATE_DOWN, d1); /* s1's discriminator, s0's addresses */
	assert_int_equal(h_rx_ctrl(h, 0, P0, L0, &c), BFD_RX_NO_SESSION);
	c = peer_ctrl(BFD_STATE_DOWN, d0 ^ d1 ^ s[2].s.local_discr ^ 0x5a5a5a5a);
	if (c.your_disc == d0 || c.your_disc == d1 || c.your_disc == s[2].s.local_discr)
		c.your_disc ^= 1;
	assert_int_equal(h_rx_ctrl(h, 0, P0, L0, &c), BFD_RX_NO_SESSION); /* nobody's */
	assert_int_equal(s[0].s.stats.rx, 1);
	assert_int_equal(s[1].s.stats.rx + s[2].s.stats.rx, 0);
	/* Zero: by port and addresses. */
	c = peer_ctrl(BFD_STATE_DOWN, 0);
	assert_int_equal(h_rx_ctrl(h, 0, P2, L0, &c), BFD_RX_OK);
	assert_int_equal(s[2].s.stats.rx, 1);
	assert_int_equal(s[2].s.state, BFD_STATE_INIT);
	assert_int_equal(h_rx_ctrl(h, 1, P1, L1, &c), BFD_RX_OK);
	assert_int_equal(s[1].s.stats.rx, 1);
	assert_int_equal(s[0].s.stats.rx, 1);
	assert_int_equal(h_rx_ctrl(h, 0, TF_IP(10, 0, 0, 4), L0, &c), BFD_RX_NO_SESSION);
	assert_int_equal(h_rx_ctrl(h, 1, P0, L0, &c), BFD_RX_NO_SESSION);
	assert_int_equal(h_rx_ctrl(h, 0, P1, L1, &c), BFD_RX_NO_SESSION);
	assert_int_equal(h_rx_ctrl(h, 0, P0, L1, &c), BFD_RX_NO_SESSION);
	/* Counted by the node, not charged to a session. */
	assert_int_equal(h->node.stats.rx_drop[BFD_RX_NO_SESSION], 10);
	assert_int_equal(h->node.stats.rx_ctrl, 3);
	assert_int_equal(h->node.stats.rx_frames, 13);
	for (int i = 0; i < 3; i++)
		assert_int_equal(s[i].rx_drop[BFD_RX_NO_SESSION], 0);
	/* Once Up by discriminator, the session works both ways. */
	c = peer_ctrl(BFD_STATE_INIT, d0);
	assert_int_equal(h_rx_ctrl(h, 0, P0, L0, &c), BFD_RX_OK);
	assert_int_equal(s[0].s.state, BFD_STATE_UP);
	assert_int_equal(s[2].s.state, BFD_STATE_INIT);
}

static void
test_wants(void **state)
{
	struct world *w = *state;
	struct harness *h = &w->a;
	const struct bfd_node *n = &h->node;
	uint8_t f[BFD_FRAME_MAX], g[BFD_FRAME_MAX + 4];
	struct bfd_ctrl c = peer_ctrl(BFD_STATE_DOWN, 0);
	uint32_t len;

	/* No sessions, nothing wanted. */
	len = tf_ctrl_frame(f, mac_b, mac_a, P0, L0, 49152, &c);
	assert_false(bfd_node_wants(n, 0, f, len));
	three_sessions(h);
	/* BFD to a local address on its session's port, from anyone (the
	 * node counts what it then drops). */
	assert_true(bfd_node_wants(n, 0, f, len));
	len = tf_ctrl_frame(f, mac_b, mac_a, TF_IP(10, 9, 9, 9), L0, 49152, &c);
	assert_true(bfd_node_wants(n, 0, f, len));
	f[TF_IP_OFF + 8] = 64; /* malformed is still BFD's to count */
	assert_true(bfd_node_wants(n, 0, f, len));
	len = tf_ctrl_frame(f, mac_b, mac_a, P1, L1, 49152, &c);
	assert_true(bfd_node_wants(n, 1, f, len));
	/* Not on another port, to another address, to the peer. */
	assert_false(bfd_node_wants(n, 0, f, len));
	assert_false(bfd_node_wants(n, 2, f, len));
	assert_false(bfd_node_wants(n, BFD_NODE_MAX_PORTS + 1, f, len));
	len = tf_ctrl_frame(f, mac_b, mac_a, P0, L0, 49152, &c);
	assert_false(bfd_node_wants(n, 1, f, len));
	len = tf_ctrl_frame(f, mac_b, mac_a, P0, TF_IP(10, 0, 0, 77), 49152, &c);
	assert_false(bfd_node_wants(n, 0, f, len));
	len = tf_ctrl_frame(f, mac_b, mac_a, L0, P0, 49152, &c);
	assert_false(bfd_node_wants(n, 0, f, len));
	/* ARP to a local address, or from a peer's. */
	len = tf_arp_frame(f, BFD_ARP_REQUEST, mac_x, IP_X, NULL, L0);
	assert_true(bfd_node_wants(n, 0, f, len));
	assert_false(bfd_node_wants(n, 1, f, len));
	len = tf_arp_frame(f, BFD_ARP_REPLY, mac_b, P0, mac_a, L0);
	assert_true(bfd_node_wants(n, 0, f, len));
	len = tf_arp_frame(f, BFD_ARP_REQUEST, mac_b, P2, NULL, TF_IP(10, 0, 0, 77));
	assert_true(bfd_node_wants(n, 0, f, len));
	len = tf_arp_frame(f, BFD_ARP_REQUEST, mac_b, P2, NULL, P2); /* gratuitous */
	assert_true(bfd_node_wants(n, 0, f, len));
	assert_false(bfd_node_wants(n, 1, f, len));
	len = tf_arp_frame(f, BFD_ARP_REQUEST, mac_b, P1, NULL, L1);
	assert_true(bfd_node_wants(n, 1, f, len));
	assert_false(bfd_node_wants(n, 0, f, len));
	/* ARP between others, or for a peer's address. */
	len = tf_arp_frame(f, BFD_ARP_REQUEST, mac_x, TF_IP(10, 0, 0, 78), NULL,
			   TF_IP(10, 0, 0, 77));
	assert_false(bfd_node_wants(n, 0, f, len));
	len = tf_arp_frame(f, BFD_ARP_REQUEST, mac_x, IP_X, NULL, P0);
	assert_false(bfd_node_wants(n, 0, f, len));
	assert_false(bfd_node_wants(n, 0, f, BFD_ETH_HLEN + 20)); /* truncated */
	/* Data: UDP to another port, TCP, IPv6, VLAN-tagged BFD, a runt. */
	len = tf_ctrl_frame(f, mac_b, mac_a, P0, L0, 49152, &c);
	tf_put16(f + TF_UDP_OFF + 2, 53);
	assert_false(bfd_node_wants(n, 0, f, len));
	len = tf_ctrl_frame(f, mac_b, mac_a, P0, L0, 49152, &c);
	f[TF_IP_OFF + 9] = 6;
	assert_false(bfd_node_wants(n, 0, f, len));
	len = tf_ctrl_frame(f, mac_b, mac_a, P0, L0, 49152, &c);
	tf_put16(f + 12, 0x86dd);
	assert_false(bfd_node_wants(n, 0, f, len));
	len = tf_ctrl_frame(f, mac_b, mac_a, P0, L0, 49152, &c);
	assert_false(bfd_node_wants(n, 0, g, tf_vlan_tag(g, f, len, 10)));
	assert_false(bfd_node_wants(n, 0, f, 10));
}

/* ---- the session table ------------------------------------------------------- */

static void
test_add_session_refusals(void **state)
{
	struct world *w = *state;
	struct harness *h = &w->a;
	struct bfd_node *n = &h->node;
	struct bfd_node_session_cfg c;
	char name[BFD_NAME_LEN];

	assert_int_equal(add(h, "s0", 0, L0, P0), 0);
	/* refused: */
	assert_int_equal(add(h, "s0", 1, L1, P1), -1); /* name taken */
	assert_int_equal(add(h, "other", 0, L0, P0), -1); /* same port/local/peer */
	assert_int_equal(add(h, "x", 0, 0, P0), -1);
	assert_int_equal(add(h, "x", 0, L0, 0), -1);
	assert_int_equal(add(h, "x", 0, L0, L0), -1);
	assert_int_equal(add(h, "x", BFD_NODE_MAX_PORTS, L0, P1), -1);
	assert_int_equal(add(h, "x", 0xffff, L0, P1), -1);
	assert_int_equal(add(h, "", 0, L0, P1), -1);
	c = session_cfg("x", 0, L0, P1);
	memset(c.name, 'n', sizeof(c.name)); /* not terminated */
	assert_int_equal(bfd_node_add_session(n, &c, h->now), -1);
	c = session_cfg("x", 0, L0, P1);
	c.peer_mac_static = true;
	memcpy(c.peer_mac, mac_group, BFD_ETH_ALEN);
	assert_int_equal(bfd_node_add_session(n, &c, h->now), -1);
	memcpy(c.peer_mac, mac_bcast, BFD_ETH_ALEN);
	assert_int_equal(bfd_node_add_session(n, &c, h->now), -1);
	c = session_cfg("x", 0, L0, P1);
	c.bfd.detect_mult = 0;
	assert_int_equal(bfd_node_add_session(n, &c, h->now), -1);
	c = session_cfg("x", 0, L0, P1);
	c.bfd.desired_min_tx_us = 0;
	assert_int_equal(bfd_node_add_session(n, &c, h->now), -1);
	c = session_cfg("x", 0, L0, P1);
	c.bfd.required_min_rx_us = 0;
	assert_int_equal(bfd_node_add_session(n, &c, h->now), -1);
	c = session_cfg("x", 0, L0, P1);
	c.bfd.auth_type = BFD_AUTH_KEYED_MD5;
	assert_int_equal(bfd_node_add_session(n, &c, h->now), -1);
	assert_int_equal(n->nsessions, 1);
	assert_int_equal(bfd_node_find(n, "x"), -1);
	assert_int_equal(bfd_node_find(n, "other"), -1);
	/* accepted: the same pair on another port, another peer, the longest
	 * name, the highest port, a unicast static MAC. */
	assert_int_equal(add(h, "s0-port1", 1, L0, P0), 1);
	assert_int_equal(add(h, "s0-p2", 0, L0, P2), 2);
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	assert_int_equal(add(h, name, 0, P0, L0), 3);
	assert_int_equal(add(h, "hi", BFD_NODE_MAX_PORTS - 1, L0, P0), 4);
	c = session_cfg("static", 2, L0, P0);
	c.peer_mac_static = true;
	memcpy(c.peer_mac, mac_b, BFD_ETH_ALEN);
	assert_int_equal(bfd_node_add_session(n, &c, h->now), 5);
	assert_int_equal(bfd_node_find(n, name), 3);
	assert_int_equal(bfd_node_find(n, "static"), 5);
	assert_int_equal(bfd_node_find(n, "s0"), 0);
	/* Fill the table; one more is refused. */
	for (int i = n->nsessions; i < BFD_NODE_MAX_SESSIONS; i++) {
		char nm[16];

		snprintf(nm, sizeof(nm), "fill%d", i);
		assert_int_equal(add(h, nm, 7, L1, TF_IP(10, 7, 0, i)), i);
	}
	assert_int_equal(add(h, "one-too-many", 8, L1, P1), -1);
	assert_int_equal(n->nsessions, BFD_NODE_MAX_SESSIONS);
}

static void
test_discriminators_and_source_ports(void **state)
{
	struct world *w = *state;
	struct bfd_node *a = &w->a.node, *b = &w->b.node;
	int same = 0;

	for (int i = 0; i < BFD_NODE_MAX_SESSIONS; i++) {
		char nm[16];

		snprintf(nm, sizeof(nm), "s%d", i);
		assert_int_equal(add(&w->a, nm, (uint16_t)(i % 4), L0, TF_IP(10, 1, 0, i + 1)), i);
		assert_int_equal(add(&w->b, nm, (uint16_t)(i % 4), L0, TF_IP(10, 1, 0, i + 1)), i);
	}
	for (int i = 0; i < BFD_NODE_MAX_SESSIONS; i++) {
		assert_int_not_equal(a->sess[i].s.local_discr, 0);
		assert_true(a->sess[i].src_port >= BFD_SRC_PORT_MIN);
		assert_int_equal(a->sess[i].index, i);
		for (int j = 0; j < i; j++) {
			assert_int_not_equal(a->sess[i].s.local_discr, a->sess[j].s.local_discr);
			assert_int_not_equal(a->sess[i].src_port, a->sess[j].src_port);
		}
		same += a->sess[i].s.local_discr == b->sess[i].s.local_discr;
	}
	/* Another seed, other discriminators. */
	assert_int_equal(same, 0);
	/* And a session's packets carry its source port. */
	w->a.now = 5 * MS;
	assert_int_equal(bfd_node_set_port_mac(a, 1, mac_a), 0);
	h_rx_arp(&w->a, 1, BFD_ARP_REPLY, mac_b, TF_IP(10, 1, 0, 6), L0); /* s5's peer */
	assert_true(a->sess[5].mac_known);
	bfd_node_timers(a, w->a.now);
	assert_int_equal(w->a.n_ctrl, 1);
	for (uint64_t i = 0; i < w->a.n; i++)
		if (sent(&w->a, i)->kind == BFD_FRAME_CTRL)
			assert_int_equal(tf_get16(sent(&w->a, i)->b + TF_UDP_OFF),
					 a->sess[5].src_port);
	/* Subscribers and port MACs have limits too. */
	for (int i = 0; i < BFD_NODE_MAX_SUBSCRIBERS; i++)
		assert_int_equal(bfd_node_subscribe(a, ev_record, &w->ea), 0);
	assert_int_equal(bfd_node_subscribe(a, ev_record, &w->ea), -1);
	assert_int_equal(bfd_node_subscribe(b, NULL, NULL), -1);
	assert_int_equal(bfd_node_set_port_mac(a, BFD_NODE_MAX_PORTS, mac_a), -1);
	assert_int_equal(bfd_node_set_port_mac(a, 2, mac_group), -1);
}

/* ---- framing drops ----------------------------------------------------------- */

static void
test_framing_drops_are_counted_and_attributed(void **state)
{
	struct world *w = *state;
	struct harness *h = &w->a;
	struct bfd_node_stats *st = &h->node.stats;
	struct bfd_node_session *s = h->node.sess;
	struct bfd_ctrl c = peer_ctrl(BFD_STATE_DOWN, 0);
	uint8_t f[BFD_FRAME_MAX], g[BFD_FRAME_MAX + 4];
	uint32_t len;

	three_sessions(h);
	assert_int_equal(bfd_node_set_port_mac(&h->node, 0, mac_a), 0);
	/* From s0's peer to s0's address on its port: charged to s0 too. */
	len = tf_ctrl_frame(f, mac_b, mac_a, P0, L0, 49152, &c);
	f[TF_IP_OFF + 8] = 254;
	tf_fix_csums(f);
	assert_int_equal(h_rx(h, 0, f, len), BFD_RX_BAD_TTL);
	len = tf_ctrl_frame(f, mac_b, mac_a, P0, L0, 49152, &c);
	f[TF_IP_OFF + 8] = 1;
	tf_fix_csums(f);
	assert_int_equal(h_rx(h, 0, f, len), BFD_RX_BAD_TTL);
	len = tf_ctrl_frame(f, mac_b, mac_a, P0, L0, 1024, &c);
	assert_int_equal(h_rx(h, 0, f, len), BFD_RX_BAD_UDP);
	len = tf_ctrl_frame(f, mac_b, mac_a, P0, L0, 49152, &c);
	f[TF_PAYLOAD_OFF + 9] ^= 1;
	assert_int_equal(h_rx(h, 0, f, len), BFD_RX_BAD_UDP);
	assert_int_equal(st->rx_drop[BFD_RX_BAD_TTL], 2);
	assert_int_equal(st->rx_drop[BFD_RX_BAD_UDP], 2);
	assert_int_equal(s[0].rx_drop[BFD_RX_BAD_TTL], 2);
	assert_int_equal(s[0].rx_drop[BFD_RX_BAD_UDP], 2);
	/* The same from an unknown source, or on another port: the node's
	 * only. */
	len = tf_ctrl_frame(f, mac_b, mac_a, TF_IP(10, 0, 0, 9), L0, 49152, &c);
	f[TF_IP_OFF + 8] = 254;
	tf_fix_csums(f);
	assert_int_equal(h_rx(h, 0, f, len), BFD_RX_BAD_TTL);
	len = tf_ctrl_frame(f, mac_b, mac_a, P0, L0, 49152, &c);
	f[TF_IP_OFF + 8] = 254;
	tf_fix_csums(f);
	assert_int_equal(h_rx(h, 1, f, len), BFD_RX_BAD_TTL);
	assert_int_equal(st->rx_drop[BFD_RX_BAD_TTL], 4);
	assert_int_equal(s[0].rx_drop[BFD_RX_BAD_TTL], 2);
	assert_int_equal(s[1].rx_drop[BFD_RX_BAD_TTL] + s[2].rx_drop[BFD_RX_BAD_TTL], 0);
	/* A bad IPv4 header or ARP cannot be attributed. */
	len = tf_ctrl_frame(f, mac_b, mac_a, P0, L0, 49152, &c);
	f[TF_IP_OFF + 10] ^= 0xff;
	assert_int_equal(h_rx(h, 0, f, len), BFD_RX_BAD_IP);
	len = tf_arp_frame(f, BFD_ARP_REQUEST, mac_b, P0, NULL, L0);
	f[TF_ARP_OFF + 1] = 6;
	assert_int_equal(h_rx(h, 0, f, len), BFD_RX_BAD_ARP);
	assert_int_equal(st->rx_drop[BFD_RX_BAD_IP], 1);
	assert_int_equal(st->rx_drop[BFD_RX_BAD_ARP], 1);
	assert_int_equal(s[0].rx_drop[BFD_RX_BAD_IP] + s[0].rx_drop[BFD_RX_BAD_ARP], 0);
	assert_int_equal(h->n, 0); /* and the bad ARP request was not answered */
	/* Payloads the codec refuses, from s2's peer: charged to s2. */
	len = tf_ctrl_frame(f, mac_b, mac_a, P2, L0, 49152, &c);
	tf_put16(f + TF_IP_OFF + 2, BFD_IP_HLEN + BFD_UDP_HLEN + 10);
	tf_put16(f + TF_UDP_OFF + 4, BFD_UDP_HLEN + 10);
	tf_fix_csums(f);
	assert_int_equal(h_rx(h, 0, f, TF_PAYLOAD_OFF + 10), BFD_RX_SHORT);
	c = peer_ctrl(BFD_STATE_UP, 0);
	len = tf_ctrl_frame(f, mac_b, mac_a, P2, L0, 49152, &c);
	assert_int_equal(h_rx(h, 0, f, len), BFD_RX_ZERO_YOUR_DISC);
	assert_int_equal(s[2].rx_drop[BFD_RX_SHORT], 1);
	assert_int_equal(s[2].rx_drop[BFD_RX_ZERO_YOUR_DISC], 1);
	assert_int_equal(st->rx_drop[BFD_RX_SHORT], 1);
	assert_int_equal(st->rx_drop[BFD_RX_ZERO_YOUR_DISC], 1);
	/* Not BFD's at all: counted apart, not as a drop. */
	c = peer_ctrl(BFD_STATE_DOWN, 0);
	len = tf_ctrl_frame(f, mac_b, mac_a, P0, L0, 49152, &c);
	assert_int_equal(h_rx(h, 0, g, tf_vlan_tag(g, f, len, 3)), BFD_RX_NO_SESSION);
	assert_int_equal(st->rx_other, 1);
	assert_int_equal(st->rx_drop[BFD_RX_NO_SESSION], 0);
	assert_int_equal(st->rx_frames, 11);
	assert_int_equal(st->rx_ctrl, 0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(s[i].s.stats.rx, 0);
		assert_int_equal(s[i].s.state, BFD_STATE_DOWN);
	}
}

/* A frame from a port beyond the table (the owner may hand over any port's
 * frames) is nobody's, and is not looked up in the per-port tables. */
static void
test_frames_from_ports_beyond_the_table(void **state)
{
	struct world *w = *state;
	struct harness *h = &w->a;
	struct bfd_ctrl c = peer_ctrl(BFD_STATE_DOWN, 0);
	uint8_t f[BFD_FRAME_MAX];
	uint32_t len;

	assert_int_equal(add(h, "b", PA, IP_A, IP_B), 0);
	for (uint32_t port = BFD_NODE_MAX_PORTS; port <= 0xffff; port += 0x3fff) {
		h_rx_arp(h, (uint16_t)port, BFD_ARP_REQUEST, mac_b, IP_B, IP_A);
		len = tf_ctrl_frame(f, mac_b, mac_a, IP_B, IP_A, 49152, &c);
		assert_int_equal(h_rx(h, (uint16_t)port, f, len), BFD_RX_NO_SESSION);
	}
	assert_int_equal(h->n, 0);
	assert_false(h->node.sess[0].mac_known);
	assert_int_equal(h->node.sess[0].s.stats.rx, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_two_nodes_resolve_by_arp_and_come_up, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_silent_peer_goes_down_within_detection_time,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_admin_down_is_seen_as_neighbor_down, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_set_timers_while_up_runs_a_poll, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_arp_request_for_local_address_is_answered_once,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_arp_learning, setup, teardown),
		cmocka_unit_test_setup_teardown(test_static_peer_mac_never_arps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_arp_retry_while_mac_unknown, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused_transmit_is_counted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_demux, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wants, setup, teardown),
		cmocka_unit_test_setup_teardown(test_add_session_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_discriminators_and_source_ports, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_framing_drops_are_counted_and_attributed,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_frames_from_ports_beyond_the_table, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
