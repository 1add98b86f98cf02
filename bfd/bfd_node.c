/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * bfd_node.c -- a node's BFD sessions on Ethernet ports: demultiplexing,
 * RFC 5881 framing, ARP for the session addresses, events to subscribers.
 */
#include <string.h>

#include "bfd_node.h"

static uint64_t
splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void
transmit(struct bfd_node *n, uint16_t port, const uint8_t *frame, int len, uint64_t *sess_fail)
{
	if (len <= 0)
		return;
	if (n->ops != NULL && n->ops->xmit != NULL &&
	    n->ops->xmit(port, frame, (uint32_t)len, n->arg) == 0) {
		n->stats.tx_frames++;
		return;
	}
	n->stats.tx_fail++;
	if (sess_fail != NULL)
		(*sess_fail)++;
}

/* ---- callbacks of the sessions ---------------------------------------------- */

static void
session_send(struct bfd_session *s, const uint8_t *pkt, int len, void *arg)
{
	struct bfd_node_session *ns = arg;
	struct bfd_node *n = ns->node;
	uint8_t frame[BFD_FRAME_MAX];

	(void)s;
	if (!ns->mac_known || !n->port_mac_set[ns->cfg.port]) {
		ns->tx_no_mac++;
		return;
	}
	transmit(n, ns->cfg.port, frame,
		 bfd_frame_build_ctrl(frame, sizeof(frame), n->port_mac[ns->cfg.port],
				      ns->peer_mac, ns->cfg.local_ip, ns->cfg.peer_ip,
				      ns->src_port, pkt, (uint32_t)len),
		 &ns->tx_fail);
}

static void
session_state_change(struct bfd_session *s, enum bfd_state old, void *arg)
{
	struct bfd_node_session *ns = arg;
	struct bfd_node *n = ns->node;
	struct bfd_event ev = {
		.session = ns->index,
		.name = ns->cfg.name,
		.port = ns->cfg.port,
		.local_ip = ns->cfg.local_ip,
		.peer_ip = ns->cfg.peer_ip,
		.old_state = old,
		.new_state = s->state,
		.diag = s->local_diag,
		.remote_diag = s->remote_diag,
		.time_ns = n->now_ns,
	};

	ns->last_change_ns = n->now_ns;
	if (s->state == BFD_STATE_UP)
		ns->last_up_ns = n->now_ns;
	else if (old == BFD_STATE_UP) {
		ns->last_down_ns = n->now_ns;
		ns->last_down_diag = s->local_diag;
	}
	for (uint16_t i = 0; i < n->nsubs; i++)
		n->subs[i].fn(&ev, n->subs[i].arg);
}

static const struct bfd_session_ops session_ops = {
	.send = session_send,
	.state_change = session_state_change,
};

/* ---- set-up ----------------------------------------------------------------- */

void
bfd_node_init(struct bfd_node *n, const struct bfd_node_ops *ops, void *arg, uint64_t seed)
{
	memset(n, 0, sizeof(*n));
	n->ops = ops;
	n->arg = arg;
	n->rng = seed;
}

int
bfd_node_set_port_mac(struct bfd_node *n, uint16_t port, const uint8_t mac[BFD_ETH_ALEN])
{
	if (port >= BFD_NODE_MAX_PORTS || (mac[0] & 1) != 0) /* a group address cannot send */
		return -1;
	memcpy(n->port_mac[port], mac, BFD_ETH_ALEN);
	n->port_mac_set[port] = true;
	return 0;
}

static uint32_t
new_discriminator(struct bfd_node *n)
{
	for (;;) {
		uint32_t d = (uint32_t)splitmix64(&n->rng);
		bool used = (d == 0);

		for (uint16_t i = 0; i < n->nsessions && !used; i++)
			used = n->sess[i].s.local_discr == d;
		if (!used)
			return d;
	}
}

int
bfd_node_add_session(struct bfd_node *n, const struct bfd_node_session_cfg *cfg, uint64_t now_ns)
{
	struct bfd_node_session *ns;

	if (n->nsessions >= BFD_NODE_MAX_SESSIONS || cfg->port >= BFD_NODE_MAX_PORTS ||
	    cfg->name[0] == '\0' || memchr(cfg->name, '\0', BFD_NAME_LEN) == NULL ||
	    cfg->local_ip == 0 || cfg->peer_ip == 0 || cfg->local_ip == cfg->peer_ip ||
	    (cfg->peer_mac_static && (cfg->peer_mac[0] & 1) != 0))
		return -1;
	for (uint16_t i = 0; i < n->nsessions; i++) {
		const struct bfd_node_session_cfg *o = &n->sess[i].cfg;

		if (strcmp(o->name, cfg->name) == 0 ||
		    (o->port == cfg->port && o->local_ip == cfg->local_ip &&
		     o->peer_ip == cfg->peer_ip))
			return -1;
	}
	ns = &n->sess[n->nsessions];
	memset(ns, 0, sizeof(*ns));
	ns->cfg = *cfg;
	ns->node = n;
	ns->index = n->nsessions;
	ns->src_port = BFD_SRC_PORT_MIN + ns->index;
	if (cfg->peer_mac_static) {
		memcpy(ns->peer_mac, cfg->peer_mac, BFD_ETH_ALEN);
		ns->mac_known = true;
	}
	n->now_ns = now_ns;
	if (bfd_session_init(&ns->s, &cfg->bfd, new_discriminator(n), &session_ops, ns, now_ns) < 0)
		return -1;
	ns->last_change_ns = now_ns;
	return n->nsessions++;
}

int
bfd_node_subscribe(struct bfd_node *n, bfd_event_fn fn, void *arg)
{
	if (fn == NULL || n->nsubs >= BFD_NODE_MAX_SUBSCRIBERS)
		return -1;
	n->subs[n->nsubs].fn = fn;
	n->subs[n->nsubs].arg = arg;
	n->nsubs++;
	return 0;
}

int
bfd_node_find(const struct bfd_node *n, const char *name)
{
	for (uint16_t i = 0; i < n->nsessions; i++)
		if (strcmp(n->sess[i].cfg.name, name) == 0)
			return i;
	return -1;
}

/* ---- receive ---------------------------------------------------------------- */

bool
bfd_node_wants(const struct bfd_node *n, uint16_t port, const uint8_t *frame, uint32_t len)
{
	uint32_t ip, ip2;

	if (!bfd_frame_peek(frame, len, &ip, &ip2))
		return false;
	for (uint16_t i = 0; i < n->nsessions; i++) {
		const struct bfd_node_session_cfg *c = &n->sess[i].cfg;

		if (c->port == port && (ip == c->local_ip || (ip2 != 0 && ip2 == c->peer_ip)))
			return true;
	}
	return false;
}

/* The session a frame from `src` to `dst` on `port` belongs to, or NULL. */
static struct bfd_node_session *
by_addresses(struct bfd_node *n, uint16_t port, uint32_t src, uint32_t dst)
{
	for (uint16_t i = 0; i < n->nsessions; i++) {
		struct bfd_node_session *ns = &n->sess[i];

		if (ns->cfg.port == port && ns->cfg.peer_ip == src && ns->cfg.local_ip == dst)
			return ns;
	}
	return NULL;
}

static enum bfd_rx_reason
rx_drop(struct bfd_node *n, struct bfd_node_session *ns, enum bfd_rx_reason r)
{
	n->stats.rx_drop[r]++;
	if (ns != NULL)
		ns->rx_drop[r]++;
	return r;
}

static void
rx_arp(struct bfd_node *n, uint16_t port, const struct bfd_frame *f)
{
	bool replied = false;

	n->stats.arp_rx++;
	/* No session (nor port MAC) on a port beyond the tables. */
	if (port >= BFD_NODE_MAX_PORTS)
		return;
	/* Our own frames looped back (a hub, a capture) teach nothing. */
	if (n->port_mac_set[port] && memcmp(f->arp_sha, n->port_mac[port], BFD_ETH_ALEN) == 0)
		return;
	for (uint16_t i = 0; i < n->nsessions; i++) {
		struct bfd_node_session *ns = &n->sess[i];

		if (ns->cfg.port != port)
			continue;
		/* RFC 826 merge: whoever speaks ARP from the peer's address
		 * tells us its MAC, request or reply.  Not a group address. */
		if (f->arp_spa == ns->cfg.peer_ip && !ns->cfg.peer_mac_static &&
		    (f->arp_sha[0] & 1) == 0) {
			if (!ns->mac_known || memcmp(ns->peer_mac, f->arp_sha, BFD_ETH_ALEN) != 0)
				n->stats.arp_learned++;
			memcpy(ns->peer_mac, f->arp_sha, BFD_ETH_ALEN);
			ns->mac_known = true;
			if (ns->s.state != BFD_STATE_UP)
				ns->next_arp_ns = n->now_ns + BFD_ARP_REFRESH_NS;
		}
		if (f->arp_op == BFD_ARP_REQUEST && f->arp_tpa == ns->cfg.local_ip && !replied &&
		    n->port_mac_set[port] && (f->arp_sha[0] & 1) == 0) {
			uint8_t frame[BFD_ARP_FRAME_LEN];

			transmit(n, port, frame,
				 bfd_frame_build_arp(frame, sizeof(frame), BFD_ARP_REPLY,
						     n->port_mac[port], ns->cfg.local_ip,
						     f->arp_sha, f->arp_spa),
				 NULL);
			n->stats.arp_replied++;
			replied = true;
		}
	}
}

enum bfd_rx_reason
bfd_node_rx(struct bfd_node *n, uint16_t port, const uint8_t *frame, uint32_t len,
	    uint64_t now_ns)
{
	struct bfd_node_session *ns = NULL;
	struct bfd_frame f;
	struct bfd_ctrl c;
	enum bfd_rx_reason r;

	n->now_ns = now_ns;
	n->stats.rx_frames++;
	switch (bfd_frame_parse(frame, len, &f)) {
	case BFD_FRAME_OTHER:
		n->stats.rx_other++;
		return BFD_RX_NO_SESSION;
	case BFD_FRAME_BAD:
		if (f.reason != BFD_RX_BAD_ARP && f.reason != BFD_RX_BAD_IP)
			ns = by_addresses(n, port, f.src_ip, f.dst_ip);
		return rx_drop(n, ns, f.reason);
	case BFD_FRAME_ARP:
		rx_arp(n, port, &f);
		return BFD_RX_OK;
	case BFD_FRAME_CTRL:
		break;
	}
	r = bfd_pkt_decode(f.payload, f.payload_len, &c);
	if (r != BFD_RX_OK)
		return rx_drop(n, by_addresses(n, port, f.src_ip, f.dst_ip), r);
	/* RFC 5880 6.8.6: a non-zero Your Discriminator selects the session;
	 * RFC 5881 section 3: it must also have come from the session's peer
	 * to its local address on its port.  Zero: select by those. */
	if (c.your_disc != 0) {
		for (uint16_t i = 0; i < n->nsessions; i++)
			if (n->sess[i].s.local_discr == c.your_disc) {
				ns = &n->sess[i];
				break;
			}
		if (ns != NULL && (ns->cfg.port != port || ns->cfg.peer_ip != f.src_ip ||
				   ns->cfg.local_ip != f.dst_ip))
			ns = NULL;
	} else {
		ns = by_addresses(n, port, f.src_ip, f.dst_ip);
	}
	if (ns == NULL)
		return rx_drop(n, NULL, BFD_RX_NO_SESSION);
	n->stats.rx_ctrl++;
	return bfd_session_rx_decoded(&ns->s, &c, f.payload, f.payload_len, now_ns);
}

/* ---- timers ----------------------------------------------------------------- */

/* ARP for the peer: every second while unknown, every few seconds while the
 * session is not Up (the peer may have been replaced), never while Up. */
static uint64_t
arp_timer(struct bfd_node *n, struct bfd_node_session *ns, uint64_t now_ns)
{
	uint64_t period;
	uint8_t frame[BFD_ARP_FRAME_LEN];

	if (ns->cfg.peer_mac_static || !n->port_mac_set[ns->cfg.port])
		return UINT64_MAX;
	period = !ns->mac_known ? BFD_ARP_RETRY_NS
				: (ns->s.state != BFD_STATE_UP ? BFD_ARP_REFRESH_NS : 0);
	if (period == 0) {
		ns->next_arp_ns = 0;
		return UINT64_MAX;
	}
	if (ns->next_arp_ns == 0 || ns->next_arp_ns > now_ns + period)
		ns->next_arp_ns = now_ns;
	if (now_ns >= ns->next_arp_ns) {
		transmit(n, ns->cfg.port, frame,
			 bfd_frame_build_arp(frame, sizeof(frame), BFD_ARP_REQUEST,
					     n->port_mac[ns->cfg.port], ns->cfg.local_ip, NULL,
					     ns->cfg.peer_ip),
			 NULL);
		n->stats.arp_requests++;
		ns->next_arp_ns = now_ns + period;
	}
	return ns->next_arp_ns;
}

uint64_t
bfd_node_timers(struct bfd_node *n, uint64_t now_ns)
{
	uint64_t next = now_ns + (uint64_t)BFD_SLOW_TX_US * 1000;

	n->now_ns = now_ns;
	for (uint16_t i = 0; i < n->nsessions; i++) {
		struct bfd_node_session *ns = &n->sess[i];
		uint64_t t;

		/* ARP first, so a session's first packet finds the MAC when the
		 * peer answered a request sent earlier. */
		t = arp_timer(n, ns, now_ns);
		if (t < next)
			next = t;
		t = bfd_session_timers(&ns->s, now_ns);
		if (t < next)
			next = t;
	}
	return next;
}

/* ---- operator controls ------------------------------------------------------ */

int
bfd_node_set_admin_down(struct bfd_node *n, int idx, bool down, uint64_t now_ns)
{
	if (idx < 0 || idx >= n->nsessions)
		return -1;
	n->now_ns = now_ns;
	bfd_session_set_admin_down(&n->sess[idx].s, down, now_ns);
	return 0;
}

int
bfd_node_set_timers(struct bfd_node *n, int idx, uint32_t desired_min_tx_us,
		    uint32_t required_min_rx_us, uint8_t detect_mult, uint64_t now_ns)
{
	if (idx < 0 || idx >= n->nsessions)
		return -1;
	n->now_ns = now_ns;
	return bfd_session_set_timers(&n->sess[idx].s, desired_min_tx_us, required_min_rx_us,
				      detect_mult, now_ns);
}
