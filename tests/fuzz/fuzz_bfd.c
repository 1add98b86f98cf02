/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * fuzz_bfd.c -- libFuzzer target for the BFD library (bfd/): the control
 * packet codec, the RFC 5881 framing and a node's session table.  No DPDK.
 *
 * The input is used four ways:
 *
 *   1. as a UDP payload: bfd_pkt_decode().  When it is accepted, the packet
 *      is re-encoded with bfd_pkt_encode() and decoded again; every field
 *      must come back unchanged, and the bytes must be the input's (except
 *      the length field and the auth section's reserved byte, which the
 *      encoder derives).
 *   2. as an Ethernet frame: bfd_frame_parse().  The result is checked
 *      against the frame (payload inside the frame, TTL 255, source port
 *      range, ...), against bfd_frame_peek(), and a CTRL frame is rebuilt
 *      with bfd_frame_build_ctrl() and must parse back the same.
 *   3. as a frame received by a node (bfd_node_rx(), then bfd_node_timers()
 *      at later times).  The node is a static one, re-initialised for every
 *      input with the same seed, so a run depends on the input alone.  It
 *      has four sessions on ports 0 and 1 (see `sessions` below), one with
 *      keyed SHA1 and two with a static peer MAC.  The lowest bit of the
 *      destination MAC's last byte picks the receiving port (the node never
 *      reads the destination MAC).  The frame is fed twice (the second time
 *      as a replay, so that a single Init/Poll/Final packet can bring a
 *      session Up and then complete a Poll Sequence); when it carries a
 *      keyed SHA1 section, a copy signed with the SHA1 session's key and
 *      with a zero UDP checksum is fed in between, so the fuzzer gets past
 *      the digest check.  A copy saying state Up (re-signed likewise) comes
 *      next, so a session the frame brought Up hears its peer Up too -- and,
 *      with the D bit, a remote in Demand mode.  Then the operator changes
 *      the timers of every session that is Up (a Poll Sequence; the frame is
 *      fed once more, it may be the Final) and sets session "plain"
 *      AdminDown and back.  The
 *      fake xmit checks every frame the node sends: it must parse back as
 *      ARP or CTRL, come from the port's MAC and a session address, and a
 *      CTRL payload must decode, carry the session's current parameters
 *      and (for the SHA1 session) a valid digest, and to a remote in Demand
 *      mode only Polls and Finals.  Subscribers' events, the
 *      node's counters, the sessions' state and every deadline returned by
 *      bfd_node_timers() (after now) are checked as well.
 *   4. as the payload of a lone session (bfd_session_rx()), and as the text
 *      of a MAC address (bfd_mac_parse() / bfd_mac_format() round trip).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bfd_auth.h"
#include "bfd_net.h"
#include "bfd_node.h"
#include "bfd_pkt.h"

#include "fuzz_check.h"

#define NODE_SEED 0x5eedbfd0ull
#define T0_NS	  1000000000ull /* 1 s: time 0 means "never" to the session */
#define MS	  1000000ull

static const uint8_t port_mac[2][BFD_ETH_ALEN] = {
    {0x02, 0xfe, 0x00, 0x00, 0x00, 0x00},
    {0x02, 0xfe, 0x00, 0x00, 0x00, 0x01},
};

/* 198.18.0.0/15 (RFC 2544 benchmarking). */
#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

static const uint8_t sha1_key[] = "reinforce-fuzz-key"; /* 18 bytes + NUL */
#define SHA1_KEY_LEN (sizeof(sha1_key) - 1)
#define SHA1_KEY_ID  7

static const struct bfd_node_session_cfg sessions[] = {
    {.name = "plain",
     .port = 0,
     .local_ip = IP(198, 18, 0, 1),
     .peer_ip = IP(198, 18, 0, 2),
     .bfd = {.desired_min_tx_us = 10000, .required_min_rx_us = 10000, .detect_mult = 3}},
    {.name = "sha1",
     .port = 0,
     .local_ip = IP(198, 18, 0, 1),
     .peer_ip = IP(198, 18, 0, 3),
     .bfd = {.desired_min_tx_us = 20000,
	     .required_min_rx_us = 20000,
	     .detect_mult = 3,
	     .auth_type = BFD_AUTH_KEYED_SHA1,
	     .auth_key_id = SHA1_KEY_ID,
	     .auth_key = "reinforce-fuzz-key",
	     .auth_key_len = SHA1_KEY_LEN}},
    {.name = "static",
     .port = 1,
     .local_ip = IP(198, 19, 0, 1),
     .peer_ip = IP(198, 19, 0, 2),
     .peer_mac_static = true,
     .peer_mac = {0x02, 0x00, 0x00, 0x00, 0x01, 0x02},
     .bfd = {.desired_min_tx_us = 50000, .required_min_rx_us = 30000, .detect_mult = 1}},
    {.name = "admin",
     .port = 1,
     .local_ip = IP(198, 19, 0, 1),
     .peer_ip = IP(198, 19, 0, 3),
     .peer_mac_static = true,
     .peer_mac = {0x02, 0x00, 0x00, 0x00, 0x01, 0x03},
     .bfd = {.desired_min_tx_us = 300000,
	     .required_min_rx_us = 300000,
	     .detect_mult = 5,
	     .admin_down = true}},
};
#define NSESS (sizeof(sessions) / sizeof(sessions[0]))

static struct bfd_node node;
static uint64_t xmit_calls, events;
static bool print;

static uint16_t
be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t
be32(const uint8_t *p)
{
	return (uint32_t)be16(p) << 16 | be16(p + 2);
}

static bool
is_sha1(uint8_t type)
{
	return type == BFD_AUTH_KEYED_SHA1 || type == BFD_AUTH_METICULOUS_SHA1;
}

/* ---- 1. codec round trip -------------------------------------------------- */

static void
check_ctrl_equal(const struct bfd_ctrl *a, const struct bfd_ctrl *b)
{
	CHECK(a->version == b->version);
	CHECK(a->diag == b->diag);
	CHECK(a->state == b->state);
	CHECK(a->flags == b->flags);
	CHECK(a->detect_mult == b->detect_mult);
	CHECK(a->my_disc == b->my_disc);
	CHECK(a->your_disc == b->your_disc);
	CHECK(a->desired_min_tx_us == b->desired_min_tx_us);
	CHECK(a->required_min_rx_us == b->required_min_rx_us);
	CHECK(a->required_min_echo_rx_us == b->required_min_echo_rx_us);
	if (a->flags & BFD_FLAG_AUTH) {
		CHECK(a->auth.type == b->auth.type);
		CHECK(a->auth.len == b->auth.len);
		CHECK(a->auth.key_id == b->auth.key_id);
		CHECK(a->auth.seq == b->auth.seq);
		CHECK(a->auth.data_len == b->auth.data_len);
		CHECK(a->auth.data_len <= sizeof(a->auth.data));
		CHECK(memcmp(a->auth.data, b->auth.data, a->auth.data_len) == 0);
		CHECK(a->auth.offset == b->auth.offset);
	}
}

static void
fuzz_codec(const uint8_t *data, size_t size)
{
	struct bfd_ctrl c, c2;
	uint8_t buf[BFD_PKT_MAX_LEN];
	enum bfd_rx_reason r = bfd_pkt_decode(data, size, &c);
	int n;

	CHECK((unsigned int)r < BFD_RX_REASON_MAX);
	CHECK(strcmp(bfd_rx_reason_str(r), "?") != 0);
	if (r != BFD_RX_OK) {
		/* Only the packet-only checks of 6.8.6 come from the codec. */
		CHECK(r <= BFD_RX_BAD_AUTH_LEN);
		return;
	}
	/* What decode accepted must be true of the bytes. */
	CHECK(size >= BFD_PKT_LEN);
	CHECK(c.version == BFD_VERSION && c.state <= BFD_STATE_UP && c.diag < BFD_DIAG_MAX);
	CHECK(c.length >= BFD_PKT_LEN && c.length <= size && c.length == data[3]);
	CHECK(c.detect_mult != 0 && c.my_disc != 0);
	CHECK(!(c.flags & BFD_FLAG_MULTI));
	CHECK(c.your_disc != 0 || c.state <= BFD_STATE_DOWN);
	CHECK(bfd_state_str(c.state)[0] != '?');
	(void)bfd_diag_str(c.diag);
	if (c.flags & BFD_FLAG_AUTH) {
		CHECK(c.auth.offset == BFD_PKT_LEN);
		CHECK(c.auth.len >= 2 && BFD_PKT_LEN + (size_t)c.auth.len <= c.length);
		CHECK(c.auth.type == data[BFD_PKT_LEN] && c.auth.len == data[BFD_PKT_LEN + 1]);
		if (is_sha1(c.auth.type)) {
			/* Memory safety of the digest check on whatever was accepted. */
			(void)bfd_auth_sha1_digest_ok(data, size, &c, sha1_key, SHA1_KEY_LEN);
		}
	}

	n = bfd_pkt_encode(&c, buf, sizeof(buf));
	if (n < 0) {
		/* The encoder refuses only auth types it cannot describe. */
		CHECK((c.flags & BFD_FLAG_AUTH) &&
		      (c.auth.type < BFD_AUTH_SIMPLE || c.auth.type > BFD_AUTH_METICULOUS_SHA1));
		return;
	}
	CHECK((size_t)n == BFD_PKT_LEN + ((c.flags & BFD_FLAG_AUTH) ? c.auth.len : 0u));
	CHECK((size_t)n <= c.length);
	CHECK(buf[3] == n);
	/* Same bytes as the input but for the derived length and the reserved byte. */
	for (int i = 0; i < n; i++) {
		bool reserved = (c.flags & BFD_FLAG_AUTH) && c.auth.type >= BFD_AUTH_KEYED_MD5 &&
				i == BFD_PKT_LEN + 3;

		if (i == 3)
			continue;
		CHECK(buf[i] == (reserved ? 0 : data[i]));
	}
	CHECK(bfd_pkt_decode(buf, (size_t)n, &c2) == BFD_RX_OK);
	check_ctrl_equal(&c, &c2);
	CHECK(c2.length == n);
}

/* ---- 2. framing ------------------------------------------------------------- */

static void
check_frame(const uint8_t *f, size_t size, const struct bfd_frame *fr, enum bfd_frame_kind k)
{
	uint32_t ip = 0, ip2 = 0;
	bool peek = bfd_frame_peek(f, (uint32_t)size, &ip, &ip2);

	CHECK(k == fr->kind);
	if (size < BFD_ETH_HLEN) {
		CHECK(k == BFD_FRAME_OTHER && !peek);
		return;
	}
	CHECK(memcmp(fr->dst_mac, f, BFD_ETH_ALEN) == 0);
	CHECK(memcmp(fr->src_mac, f + BFD_ETH_ALEN, BFD_ETH_ALEN) == 0);
	switch (k) {
	case BFD_FRAME_OTHER:
		return;
	case BFD_FRAME_BAD:
		CHECK(fr->reason == BFD_RX_BAD_IP || fr->reason == BFD_RX_BAD_UDP ||
		      fr->reason == BFD_RX_BAD_TTL || fr->reason == BFD_RX_BAD_ARP);
		CHECK(be16(f + 12) ==
		      (fr->reason == BFD_RX_BAD_ARP ? BFD_ETHERTYPE_ARP : BFD_ETHERTYPE_IPV4));
		/* A malformed BFD datagram still goes to BFD. */
		if (fr->reason != BFD_RX_BAD_ARP)
			CHECK(peek && ip2 == 0 && ip == be32(f + BFD_ETH_HLEN + 16));
		if (fr->reason == BFD_RX_BAD_TTL)
			CHECK(fr->ttl != BFD_TTL);
		return;
	case BFD_FRAME_ARP:
		CHECK(be16(f + 12) == BFD_ETHERTYPE_ARP);
		CHECK(size >= BFD_ETH_HLEN + 28);
		CHECK(fr->arp_op == BFD_ARP_REQUEST || fr->arp_op == BFD_ARP_REPLY);
		CHECK(peek && ip == fr->arp_tpa && ip2 == fr->arp_spa);
		CHECK(memcmp(fr->arp_sha, f + BFD_ETH_HLEN + 8, BFD_ETH_ALEN) == 0);
		return;
	case BFD_FRAME_CTRL: {
		const uint8_t *l3 = f + BFD_ETH_HLEN;
		size_t ihl = (size_t)(l3[0] & 0x0f) * 4;
		const uint8_t *udp = l3 + ihl;

		CHECK(be16(f + 12) == BFD_ETHERTYPE_IPV4);
		CHECK(ihl >= BFD_IP_HLEN && BFD_ETH_HLEN + ihl + BFD_UDP_HLEN <= size);
		CHECK(l3[9] == 17 && (be16(l3 + 6) & 0x3fff) == 0);
		CHECK(BFD_ETH_HLEN + (size_t)be16(l3 + 2) <= size);
		CHECK(fr->ttl == BFD_TTL && fr->ttl == l3[8]);
		CHECK(fr->src_port >= BFD_SRC_PORT_MIN && fr->src_port == be16(udp));
		CHECK(be16(udp + 2) == BFD_UDP_PORT);
		CHECK(fr->src_ip == be32(l3 + 12) && fr->dst_ip == be32(l3 + 16));
		/* The payload lies in the frame, inside the IP datagram. */
		CHECK(fr->payload == udp + BFD_UDP_HLEN);
		CHECK(fr->payload >= f && fr->payload <= f + size);
		CHECK(fr->payload_len <= (size_t)(f + size - fr->payload));
		CHECK(fr->payload_len + BFD_UDP_HLEN == be16(udp + 4));
		CHECK(ihl + BFD_UDP_HLEN + fr->payload_len <= be16(l3 + 2));
		CHECK(peek && ip == fr->dst_ip && ip2 == 0);
		return;
	}
	}
	CHECK(!"unknown frame kind");
}

/* A CTRL frame rebuilt from what was parsed must parse back the same. */
static void
check_rebuild(const struct bfd_frame *fr)
{
	uint8_t buf[BFD_FRAME_MAX + 8];
	struct bfd_frame f2;
	int n;

	n = bfd_frame_build_ctrl(buf, sizeof(buf), fr->src_mac, fr->dst_mac, fr->src_ip, fr->dst_ip,
				 fr->src_port, fr->payload, fr->payload_len);
	if (fr->payload_len > BFD_PKT_MAX_LEN) {
		CHECK(n == -1);
		return;
	}
	CHECK(n == (int)(BFD_ETH_HLEN + BFD_IP_HLEN + BFD_UDP_HLEN + fr->payload_len));
	CHECK(bfd_frame_parse(buf, (uint32_t)n, &f2) == BFD_FRAME_CTRL);
	check_frame(buf, (size_t)n, &f2, BFD_FRAME_CTRL);
	CHECK(buf[BFD_ETH_HLEN + 1] == BFD_IP_TOS_CS6);
	CHECK(be16(buf + BFD_ETH_HLEN + BFD_IP_HLEN + 6) != 0); /* checksum always sent */
	CHECK(memcmp(f2.dst_mac, fr->dst_mac, BFD_ETH_ALEN) == 0);
	CHECK(memcmp(f2.src_mac, fr->src_mac, BFD_ETH_ALEN) == 0);
	CHECK(f2.src_ip == fr->src_ip && f2.dst_ip == fr->dst_ip);
	CHECK(f2.src_port == fr->src_port);
	CHECK(f2.payload_len == fr->payload_len);
	CHECK(memcmp(f2.payload, fr->payload, fr->payload_len) == 0);
	CHECK(bfd_frame_build_ctrl(buf, (uint32_t)n - 1, fr->src_mac, fr->dst_mac, fr->src_ip,
				   fr->dst_ip, fr->src_port, fr->payload, fr->payload_len) == -1);
}

/* ---- 3. the node ------------------------------------------------------------ */

static const struct bfd_node_session_cfg *
session_of(uint16_t port, uint32_t local, uint32_t peer)
{
	for (size_t i = 0; i < NSESS; i++)
		if (sessions[i].port == port && sessions[i].local_ip == local &&
		    sessions[i].peer_ip == peer)
			return &sessions[i];
	return NULL;
}

static bool
is_local_ip(uint16_t port, uint32_t ip)
{
	for (size_t i = 0; i < NSESS; i++)
		if (sessions[i].port == port && sessions[i].local_ip == ip)
			return true;
	return false;
}

static int
fake_xmit(uint16_t port, const uint8_t *frame, uint32_t len, void *arg)
{
	struct bfd_frame f;
	enum bfd_frame_kind k;

	CHECK(arg == &node);
	CHECK(port < 2);
	CHECK(len >= BFD_ETH_HLEN && len <= BFD_FRAME_MAX);
	k = bfd_frame_parse(frame, len, &f);
	CHECK(k == BFD_FRAME_ARP || k == BFD_FRAME_CTRL);
	check_frame(frame, len, &f, k);
	CHECK(memcmp(f.src_mac, port_mac[port], BFD_ETH_ALEN) == 0);
	CHECK(!(f.dst_mac[0] & 1) || (k == BFD_FRAME_ARP && f.arp_op == BFD_ARP_REQUEST));
	if (k == BFD_FRAME_ARP) {
		CHECK(len == BFD_ARP_FRAME_LEN);
		CHECK(memcmp(f.arp_sha, port_mac[port], BFD_ETH_ALEN) == 0);
		CHECK(is_local_ip(port, f.arp_spa));
		if (f.arp_op == BFD_ARP_REQUEST) {
			const struct bfd_node_session_cfg *cfg =
			    session_of(port, f.arp_spa, f.arp_tpa);

			/* We only ask for the MAC of a peer we were not told. */
			CHECK(cfg != NULL && !cfg->peer_mac_static);
		}
	} else {
		const struct bfd_node_session_cfg *cfg = session_of(port, f.src_ip, f.dst_ip);
		const struct bfd_session *ls;
		const struct bfd_session_cfg *live; /* as the operator changed it */
		struct bfd_ctrl c;

		CHECK(cfg != NULL);
		ls = &node.sess[cfg - sessions].s;
		live = &ls->cfg;
		CHECK(f.src_port == BFD_SRC_PORT_MIN + (cfg - sessions));
		CHECK(!cfg->peer_mac_static || memcmp(f.dst_mac, cfg->peer_mac, BFD_ETH_ALEN) == 0);
		/* We never send what a peer would refuse. */
		CHECK(bfd_pkt_decode(f.payload, f.payload_len, &c) == BFD_RX_OK);
		CHECK(c.length == f.payload_len);
		CHECK(!((c.flags & BFD_FLAG_POLL) && (c.flags & BFD_FLAG_FINAL)));
		CHECK(c.detect_mult == live->detect_mult);
		CHECK(c.required_min_rx_us == live->required_min_rx_us);
		CHECK(c.state != BFD_STATE_UP || c.desired_min_tx_us == live->desired_min_tx_us);
		CHECK(c.state == BFD_STATE_UP || c.desired_min_tx_us >= BFD_SLOW_TX_US);
		CHECK(!live->admin_down ||
		      (c.state == BFD_STATE_ADMIN_DOWN && c.diag == BFD_DIAG_ADMIN_DOWN));
		CHECK(live->admin_down || c.state != BFD_STATE_ADMIN_DOWN);
		/* RFC 5880 6.8.7: nothing periodic to a remote in Demand mode
		 * but our Poll Sequence; Finals go out regardless.  We never
		 * ask for Demand mode. */
		CHECK(!(ls->remote_demand && ls->state == BFD_STATE_UP &&
			ls->remote_state == BFD_STATE_UP) ||
		      (c.flags & (BFD_FLAG_POLL | BFD_FLAG_FINAL)));
		CHECK(!(c.flags & BFD_FLAG_DEMAND));
		CHECK(((c.flags & BFD_FLAG_AUTH) != 0) == (cfg->bfd.auth_type != BFD_AUTH_NONE));
		if (c.flags & BFD_FLAG_AUTH) {
			CHECK(c.auth.type == cfg->bfd.auth_type);
			CHECK(c.auth.key_id == cfg->bfd.auth_key_id);
			CHECK(bfd_auth_sha1_digest_ok(f.payload, f.payload_len, &c,
						      cfg->bfd.auth_key, cfg->bfd.auth_key_len));
		}
	}
	xmit_calls++;
	return 0;
}

static const struct bfd_node_ops node_ops = {.xmit = fake_xmit};

static void
on_event(const struct bfd_event *ev, void *arg)
{
	const struct bfd_node_session *ns;

	CHECK(arg == &node);
	CHECK(ev->session < node.nsessions);
	ns = &node.sess[ev->session];
	CHECK(strcmp(ev->name, ns->cfg.name) == 0);
	CHECK(ev->port == ns->cfg.port && ev->local_ip == ns->cfg.local_ip &&
	      ev->peer_ip == ns->cfg.peer_ip);
	CHECK(ev->old_state != ev->new_state);
	CHECK(ev->old_state <= BFD_STATE_UP && ev->new_state <= BFD_STATE_UP);
	CHECK(ev->new_state == ns->s.state);
	CHECK(ev->diag < BFD_DIAG_MAX && ev->remote_diag < BFD_DIAG_MAX);
	CHECK(ev->time_ns == node.now_ns);
	/* An operator-down session only leaves AdminDown when told to. */
	CHECK(!ns->cfg.bfd.admin_down || ev->old_state != BFD_STATE_ADMIN_DOWN);
	events++;
}

static void
node_setup(void)
{
	bfd_node_init(&node, &node_ops, &node, NODE_SEED);
	CHECK(bfd_node_set_port_mac(&node, 0, port_mac[0]) == 0);
	CHECK(bfd_node_set_port_mac(&node, 1, port_mac[1]) == 0);
	for (size_t i = 0; i < NSESS; i++)
		CHECK(bfd_node_add_session(&node, &sessions[i], T0_NS) == (int)i);
	for (size_t i = 0; i < NSESS; i++)
		CHECK(bfd_node_find(&node, sessions[i].name) == (int)i);
	CHECK(bfd_node_subscribe(&node, on_event, &node) == 0);
}

static void
check_node(void)
{
	uint64_t drops = 0;

	for (int r = 0; r < BFD_RX_REASON_MAX; r++)
		drops += node.stats.rx_drop[r];
	CHECK(node.stats.rx_drop[BFD_RX_OK] == 0);
	CHECK(node.stats.tx_frames == xmit_calls && node.stats.tx_fail == 0);
	CHECK(node.stats.rx_ctrl + drops + node.stats.rx_other + node.stats.arp_rx ==
	      node.stats.rx_frames);
	CHECK(node.stats.arp_replied <= node.stats.arp_rx);
	for (uint16_t i = 0; i < node.nsessions; i++) {
		const struct bfd_node_session *ns = &node.sess[i];
		const struct bfd_session *s = &ns->s;

		CHECK(s->state <= BFD_STATE_UP && s->remote_state <= BFD_STATE_UP);
		/* Init and Up are only reached by hearing the peer. */
		CHECK(s->state <= BFD_STATE_DOWN || s->remote_discr != 0);
		CHECK(!s->poll_active || s->state == BFD_STATE_UP);
		CHECK(s->use_tx_us != 0 && s->use_rx_us != 0 && s->tx_interval_ns != 0);
		CHECK(!ns->cfg.bfd.admin_down || s->state == BFD_STATE_ADMIN_DOWN);
		CHECK(ns->cfg.peer_mac_static ? ns->mac_known : ns->tx_no_mac > 0 || ns->mac_known);
		CHECK(ns->tx_fail == 0);
		CHECK(s->stats.up_events >= s->stats.down_events);
		CHECK(s->stats.polls_started >= s->stats.polls_completed);
	}
}

/* The receive path's quick test lets through every frame meant for a session. */
static void
check_wants(uint16_t port, const uint8_t *data, size_t size)
{
	struct bfd_frame f;
	bool wants = bfd_node_wants(&node, port, data, (uint32_t)size);

	switch (bfd_frame_parse(data, (uint32_t)size, &f)) {
	case BFD_FRAME_CTRL:
		if (is_local_ip(port, f.dst_ip))
			CHECK(wants);
		break;
	case BFD_FRAME_ARP:
		if (is_local_ip(port, f.arp_tpa))
			CHECK(wants);
		for (size_t i = 0; i < NSESS; i++)
			if (sessions[i].port == port && sessions[i].peer_ip == f.arp_spa)
				CHECK(wants);
		break;
	default:
		break;
	}
}

static void
run_timers(uint64_t now)
{
	uint64_t next = bfd_node_timers(&node, now);

	/* The next deadline is in the future: no busy loop. */
	CHECK(next > now);
	check_node();
}

/*
 * A copy of a control frame with the UDP checksum set to 0 (none) and its
 * keyed SHA1 section, if any, signed with the SHA1 session's key; with
 * `as_up`, its state field says Up first.  0 if the frame is not a control
 * packet that decodes, or (without `as_up`) has no keyed SHA1 section.
 */
static size_t
variant_copy(const uint8_t *data, size_t size, uint8_t *out, size_t outlen, bool as_up)
{
	struct bfd_frame f;
	struct bfd_ctrl c;
	size_t off;
	bool sha1;

	if (size > outlen || bfd_frame_parse(data, (uint32_t)size, &f) != BFD_FRAME_CTRL ||
	    bfd_pkt_decode(f.payload, f.payload_len, &c) != BFD_RX_OK)
		return 0;
	sha1 = (c.flags & BFD_FLAG_AUTH) && is_sha1(c.auth.type);
	if (!sha1 && !as_up)
		return 0;
	memcpy(out, data, size);
	off = (size_t)(f.payload - data);
	if (as_up)
		out[off + 1] = (uint8_t)(BFD_STATE_UP << 6 | (out[off + 1] & 0x3f));
	if (sha1 && bfd_auth_sha1_sign(out + off, f.payload_len, sha1_key, SHA1_KEY_LEN) < 0)
		return 0;
	out[off - 2] = 0;
	out[off - 1] = 0;
	return size;
}

/* FUZZ_BFD_PRINT=1: what the node made of each input, after the replay. */
static void
print_node(uint16_t port, enum bfd_rx_reason r, enum bfd_rx_reason r2, bool resigned)
{
	fprintf(stderr, "port %u: rx %s, replay %s%s; tx %llu, events %llu;", port,
		bfd_rx_reason_str(r), bfd_rx_reason_str(r2),
		resigned ? " (re-signed copy fed)" : "", (unsigned long long)xmit_calls,
		(unsigned long long)events);
	for (uint16_t i = 0; i < node.nsessions; i++) {
		const struct bfd_node_session *ns = &node.sess[i];

		fprintf(stderr, " %s=%s%s%s", ns->cfg.name, bfd_state_str(ns->s.state),
			ns->s.poll_active ? "+poll" : "",
			ns->s.stats.polls_completed ? "+final" : "");
	}
	fprintf(stderr, "\n");
}

static void
fuzz_node(const uint8_t *data, size_t size)
{
	static uint8_t signed_frame[2048], up_frame[2048];
	uint16_t port = size >= BFD_ETH_ALEN ? (data[5] & 1) : 0;
	uint64_t t = T0_NS;
	size_t ssize, usize;
	enum bfd_rx_reason r, r2;
	uint64_t rx0, last_rx0;

	xmit_calls = events = 0;
	node_setup();
	run_timers(t); /* first ARP requests, first packets of static-MAC sessions */

	check_wants(port, data, size);
	r = bfd_node_rx(&node, port, data, (uint32_t)size, t += MS);
	CHECK((unsigned int)r < BFD_RX_REASON_MAX);
	check_node();
	run_timers(t += MS);

	ssize = variant_copy(data, size, signed_frame, sizeof(signed_frame), false);
	if (ssize != 0) {
		bfd_node_rx(&node, port, signed_frame, (uint32_t)ssize, t += MS);
		check_node();
		run_timers(t += MS);
	}

	/* The same frame again: a replay, or the second step of a handshake. */
	r2 = bfd_node_rx(&node, port, data, (uint32_t)size, t += MS);
	check_node();
	if (print)
		print_node(port, r, r2, ssize != 0);
	run_timers(t += 5 * MS);

	/* The remote says Up, every 10 ms for 100 ms: sessions the frame
	 * brought Up are Up on both sides now, and with its D bit the remote
	 * is in Demand mode (our periodic packets stop; fake_xmit checks). */
	usize = variant_copy(data, size, up_frame, sizeof(up_frame), true);
	for (int i = 0; usize != 0 && i < 10; i++) {
		bfd_node_rx(&node, port, up_frame, (uint32_t)usize, t += MS);
		check_node();
		run_timers(t += 9 * MS);
	}

	/* The operator changes the timers of every session that is Up (a Poll
	 * Sequence starts; the frame, once more, may be its Final) and takes
	 * "plain" down and up again. */
	for (uint16_t i = 0; i < node.nsessions; i++)
		if (node.sess[i].s.state == BFD_STATE_UP) {
			const struct bfd_session_cfg *b = &sessions[i].bfd;

			CHECK(bfd_node_set_timers(&node, i, b->desired_min_tx_us * 2,
						  b->required_min_rx_us / 2, b->detect_mult + 1,
						  t += MS) == 0);
			CHECK(node.sess[i].s.poll_active);
		}
	CHECK(bfd_node_set_timers(&node, 0, 0, 1, 1, t) == -1);
	CHECK(bfd_node_set_timers(&node, NSESS, 1, 1, 1, t) == -1);
	run_timers(t += MS);
	bfd_node_rx(&node, port, data, (uint32_t)size, t += MS);
	check_node();
	run_timers(t += MS);
	CHECK(bfd_node_set_admin_down(&node, 0, true, t += MS) == 0);
	CHECK(node.sess[0].s.state == BFD_STATE_ADMIN_DOWN);
	run_timers(t += MS);
	rx0 = node.sess[0].s.stats.rx;
	last_rx0 = node.sess[0].s.last_rx_ns;
	bfd_node_rx(&node, port, data, (uint32_t)size, t += MS);
	/* RFC 5880 6.8.6: AdminDown discards; a discarded packet is not
	 * received (no refresh of the detection time), only counted. */
	CHECK(node.sess[0].s.state == BFD_STATE_ADMIN_DOWN);
	CHECK(node.sess[0].s.stats.rx == rx0 && node.sess[0].s.last_rx_ns == last_rx0);
	CHECK(bfd_node_set_admin_down(&node, 0, false, t += MS) == 0);
	CHECK(node.sess[0].s.state == BFD_STATE_DOWN);
	CHECK(bfd_node_set_admin_down(&node, -1, true, t) == -1);
	run_timers(t += MS);
	/* Past the detection times (session "static": 1 x 50 ms ...) and the
	 * ARP retry/refresh periods. */
	run_timers(t += 100 * MS);
	run_timers(t += 2 * BFD_ARP_RETRY_NS);
	run_timers(t += 2 * BFD_ARP_REFRESH_NS);
}

/* ---- 4. the rest: MAC text, a session without a node ------------------------ */

/* bfd_mac_parse() on the input as text; what it accepts formats back the same
 * (but for case), and the frame's MACs survive format + parse. */
static void
fuzz_mac(const uint8_t *data, size_t size)
{
	char text[32], out[18];
	uint8_t mac[BFD_ETH_ALEN];
	size_t n = size < sizeof(text) - 1 ? size : sizeof(text) - 1;

	memcpy(text, data, n);
	text[n] = '\0';
	if (bfd_mac_parse(text, mac) == 0) {
		CHECK(strlen(text) == 17);
		bfd_mac_format(mac, out);
		CHECK(strcasecmp(out, text) == 0);
	}
	if (size >= BFD_ETH_HLEN) {
		for (int k = 0; k < 2; k++) {
			bfd_mac_format(data + k * BFD_ETH_ALEN, out);
			CHECK(strlen(out) == 17);
			CHECK(bfd_mac_parse(out, mac) == 0);
			CHECK(memcmp(mac, data + k * BFD_ETH_ALEN, BFD_ETH_ALEN) == 0);
		}
	}
}

static void
bare_send(struct bfd_session *s, const uint8_t *pkt, int len, void *arg)
{
	struct bfd_ctrl c;

	(void)arg;
	CHECK(len >= BFD_PKT_LEN && len <= BFD_PKT_MAX_LEN);
	CHECK(bfd_pkt_decode(pkt, (size_t)len, &c) == BFD_RX_OK);
	CHECK(c.my_disc == s->local_discr && c.your_disc == s->remote_discr);
}

/* bfd_session_rx() (decode + apply) with the input as the payload, twice. */
static void
fuzz_session(const uint8_t *data, size_t size)
{
	static const struct bfd_session_ops ops = {.send = bare_send};
	static const struct bfd_session_cfg cfg = {
	    .desired_min_tx_us = 1000, .required_min_rx_us = 1000, .detect_mult = 2};
	struct bfd_session s;
	uint32_t len = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size;

	CHECK(bfd_session_init(&s, &cfg, 0x12345678, &ops, NULL, T0_NS) == 0);
	(void)bfd_session_rx(&s, data, len, T0_NS + MS);
	(void)bfd_session_rx(&s, data, len, T0_NS + 2 * MS);
	CHECK(bfd_session_timers(&s, T0_NS + 3 * MS) > T0_NS + 3 * MS);
	CHECK(s.state <= BFD_STATE_DOWN || s.remote_discr != 0);
	CHECK(bfd_session_timers(&s, T0_NS + 100 * MS) > T0_NS + 100 * MS);
	/* Still Init or Up only within a detection time of the last packet. */
	CHECK(s.state <= BFD_STATE_DOWN ||
	      T0_NS + 100 * MS < s.last_rx_ns + bfd_session_detect_time_ns(&s));
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *p = getenv("FUZZ_BFD_PRINT");

	(void)argc;
	(void)argv;
	print = p != NULL && strcmp(p, "1") == 0;
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bfd_frame fr;
	enum bfd_frame_kind k;

	/* Frames come from a port: at most 64 KiB (the node takes a uint32_t). */
	if (size > UINT16_MAX)
		return -1;

	fuzz_codec(data, size);

	k = bfd_frame_parse(data, (uint32_t)size, &fr);
	check_frame(data, size, &fr, k);
	if (k == BFD_FRAME_CTRL)
		check_rebuild(&fr);

	fuzz_node(data, size);
	fuzz_session(data, size);
	fuzz_mac(data, size);
	return 0;
}
