/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * bfd_unit.c -- BFD (RFC 5880/5881) on the manager's ports: the glue between
 * the I/O-free library in bfd/ and DPDK.
 *
 *   RX unit:  frames bfd_node_wants() (ARP and UDP/3784 for a session
 *             address) leave the data path for bfd_rx_ring.
 *   BFD unit: owns the bfd_node: drains bfd_rx_ring, runs the timers when
 *             they are due, and queues the frames to send on a per-port
 *             control ring.  It is a unit like RX/TX/ctrl (units.bfd picks
 *             its lcore) and tells the idle logic of its lcore when it next
 *             has to run, so a sleeping lcore wakes for a BFD deadline.
 *   TX unit:  sends control frames before any data on every poll, so a busy
 *             data path delays BFD by at most one poll, never by a queue.
 *
 * Telemetry runs in its own thread and reads or changes sessions under
 * `lock`; the BFD unit only try-locks, so it never waits on telemetry.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_telemetry.h>

#include "bfd_node.h"
#include "mgr.h"
#include "onvm_rule.h"

#define BFD_RX_RING_SIZE 1024
#define BFD_TX_RING_SIZE 256
#define BFD_TX_PENDING 16
#define BFD_RX_BURST 32
#define BFD_COPY_MAX 256 /* longer frames cannot be valid BFD or ARP */
#define BFD_PEEK_NS 1000000ull

static struct {
	struct bfd_node node;
	pthread_mutex_t lock;
	struct rte_ring *rx_ring;
	struct rte_ring *tx_ring[ONVM_MAX_PORTS];
	/* Frames the port refused, retried first; owned by the TX unit. */
	struct {
		uint16_t n;
		struct rte_mbuf *m[BFD_TX_PENDING];
	} pending[ONVM_MAX_PORTS];
	/* When the BFD unit must run next: written by the BFD unit and by
	 * telemetry (both under lock), read without it by the unit's fast
	 * check and the scheduler (mgr_bfd_next_ns); atomic, relaxed -- a
	 * deadline, nothing is published through it. */
	uint64_t next_ns;
	uint64_t rx_ring_full;	   /* RX unit */
	uint64_t tx_ring_full, tx_alloc_fail; /* BFD unit, under lock */
	uint64_t tx_sent, tx_port_drop;	      /* TX unit */
	uint64_t events;
} bfd = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* ---- node I/O ---------------------------------------------------------------- */

static int
bfd_xmit(uint16_t port, const uint8_t *frame, uint32_t len, void *arg)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mgr.pool);
	char *data;

	(void)arg;
	data = m != NULL ? rte_pktmbuf_append(m, len) : NULL;
	if (data == NULL) {
		rte_pktmbuf_free(m);
		bfd.tx_alloc_fail++;
		return -1;
	}
	/* Fill before enqueueing: the TX unit may send it at once. */
	memcpy(data, frame, len);
	if (rte_ring_sp_enqueue(bfd.tx_ring[port], m) != 0) {
		rte_pktmbuf_free(m);
		bfd.tx_ring_full++;
		return -1;
	}
	return 0;
}

static const struct bfd_node_ops node_ops = {.xmit = bfd_xmit};

/* The built-in subscriber: one log line per state change. */
/*
 * Session events are logged by the control thread, not on the BFD unit's
 * data lcore (a log line costs ~85 us: console and syslog).  The unit queues
 * a copy (single producer, single consumer; `name` points into the node's
 * session table, which lives as long as the manager) and wakes the thread;
 * a full queue counts what it could not log.
 */
#define BFD_LOG_QUEUE 64
static struct bfd_event log_q[BFD_LOG_QUEUE];
static uint32_t log_head, log_tail;
static uint64_t log_lost;

static void
log_event(const struct bfd_event *ev, void *arg)
{
	uint32_t head = log_head;

	(void)arg;
	bfd.events++;
	if (head - __atomic_load_n(&log_tail, __ATOMIC_ACQUIRE) >= BFD_LOG_QUEUE) {
		log_lost++;
		return;
	}
	log_q[head % BFD_LOG_QUEUE] = *ev;
	__atomic_store_n(&log_head, head + 1, __ATOMIC_RELEASE);
	mgr_ctl_wake();
}

void
mgr_bfd_log_flush(void)
{
	uint32_t tail = log_tail;

	MGR_ASSERT_NOT_DATA_UNIT();
	while (tail != __atomic_load_n(&log_head, __ATOMIC_ACQUIRE)) {
		const struct bfd_event *ev = &log_q[tail % BFD_LOG_QUEUE];
		char local[ONVM_RULE_IPV4_STR_LEN], peer[ONVM_RULE_IPV4_STR_LEN];

		onvm_rule_ipv4_str(ev->local_ip, local);
		onvm_rule_ipv4_str(ev->peer_ip, peer);
		MGR_LOG(INFO,
			"bfd: session '%s' (port %u %s -> %s): %s -> %s, diag %u (%s), remote diag %u",
			ev->name, ev->port, local, peer, bfd_state_str(ev->old_state),
			bfd_state_str(ev->new_state), ev->diag, bfd_diag_str(ev->diag),
			ev->remote_diag);
		__atomic_store_n(&log_tail, ++tail, __ATOMIC_RELEASE);
	}
	if (__atomic_load_n(&log_lost, __ATOMIC_RELAXED) != 0)
		MGR_LOG(WARNING, "bfd: %" PRIu64 " session events not logged (queue full)",
			__atomic_exchange_n(&log_lost, 0, __ATOMIC_RELAXED));
}

int
mgr_bfd_subscribe(bfd_event_fn fn, void *arg)
{
	int ret;

	pthread_mutex_lock(&bfd.lock);
	ret = bfd_node_subscribe(&bfd.node, fn, arg);
	pthread_mutex_unlock(&bfd.lock);
	return ret;
}

/* ---- set-up ------------------------------------------------------------------ */

int
mgr_bfd_init(void)
{
	uint64_t seed;
	uint64_t now = mgr_now_ns();

	if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
		seed = now ^ ((uint64_t)getpid() << 32);
	bfd_node_init(&bfd.node, &node_ops, NULL, seed);
	bfd_node_subscribe(&bfd.node, log_event, NULL);
	__atomic_store_n(&bfd.next_ns, UINT64_MAX, __ATOMIC_RELAXED);
	if (mgr.cfg.nbfd == 0)
		return 0;

	bfd.rx_ring = rte_ring_create("onvm_bfd_rx", BFD_RX_RING_SIZE, rte_socket_id(),
				      RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (bfd.rx_ring == NULL) {
		MGR_LOG(ERR, "bfd: cannot create its RX ring: %s", rte_strerror(rte_errno));
		return -1;
	}
	for (int i = 0; i < mgr.cfg.nbfd; i++) {
		const struct mgr_bfd_cfg *c = &mgr.cfg.bfd[i];
		struct bfd_node_session_cfg sc = {
			.port = c->port,
			.local_ip = c->local_ip,
			.peer_ip = c->peer_ip,
			.peer_mac_static = c->peer_mac_static,
			.bfd = {
				.desired_min_tx_us = c->desired_min_tx_us,
				.required_min_rx_us = c->required_min_rx_us,
				.detect_mult = c->detect_mult,
				.admin_down = c->admin_down,
				.auth_type = c->auth_type,
				.auth_key_id = c->auth_key_id,
				.auth_key_len = c->auth_key_len,
			},
		};
		char name[RTE_RING_NAMESIZE];

		if (c->port >= mgr.nb_ports) {
			MGR_LOG(ERR, "bfd: session '%s': port %d does not exist", c->name, c->port);
			return -1;
		}
		if (!mgr.bfd_port[c->port]) {
			struct rte_ether_addr mac;

			snprintf(name, sizeof(name), "onvm_bfd_tx_%d", c->port);
			bfd.tx_ring[c->port] = rte_ring_create(name, BFD_TX_RING_SIZE,
							       rte_socket_id(),
							       RING_F_SP_ENQ | RING_F_SC_DEQ);
			if (bfd.tx_ring[c->port] == NULL ||
			    rte_eth_macaddr_get(c->port, &mac) != 0 ||
			    bfd_node_set_port_mac(&bfd.node, c->port, mac.addr_bytes) != 0) {
				MGR_LOG(ERR, "bfd: port %d: no TX ring or no unicast MAC address",
					c->port);
				return -1;
			}
		}
		memcpy(sc.name, c->name, sizeof(sc.name));
		memcpy(sc.peer_mac, c->peer_mac, sizeof(sc.peer_mac));
		memcpy(sc.bfd.auth_key, c->auth_key, sizeof(sc.bfd.auth_key));
		if (bfd_node_add_session(&bfd.node, &sc, now) < 0) {
			MGR_LOG(ERR, "bfd: session '%s' rejected", c->name);
			return -1;
		}
		mgr.bfd_port[c->port] = true;
		MGR_LOG(INFO, "bfd: session '%s' on port %d, %u us x %u, discriminator %u",
			c->name, c->port, c->desired_min_tx_us, c->detect_mult,
			bfd.node.sess[i].s.local_discr);
	}
	__atomic_store_n(&bfd.next_ns, now, __ATOMIC_RELAXED);
	return 0;
}

/* ---- the data path's side ---------------------------------------------------- */

bool
mgr_bfd_intercept(uint16_t port, struct rte_mbuf *m)
{
	MGR_ASSERT_UNIT(MGR_UNIT_RX);
	if (!bfd_node_wants(&bfd.node, port, rte_pktmbuf_mtod(m, const uint8_t *),
			    rte_pktmbuf_data_len(m)))
		return false;
	m->port = port;
	if (rte_ring_sp_enqueue(bfd.rx_ring, m) != 0) {
		bfd.rx_ring_full++;
		rte_pktmbuf_free(m);
	}
	return true;
}

/* While entry backpressure holds a BFD port, still read it every
 * BFD_PEEK_NS so its control packets are not left to the NIC's drops. */
bool
mgr_bfd_peek_due(uint16_t port, uint64_t *last_peek_tsc)
{
	uint64_t now = rte_get_tsc_cycles();

	if (!mgr.bfd_port[port] || now - *last_peek_tsc < BFD_PEEK_NS * rte_get_tsc_hz() / 1000000000ull)
		return false;
	*last_peek_tsc = now;
	return true;
}

void
mgr_bfd_tx(void)
{
	MGR_ASSERT_UNIT(MGR_UNIT_TX);
	for (uint16_t port = 0; port < mgr.nb_ports; port++) {
		__typeof__(bfd.pending[0]) *p = &bfd.pending[port];
		uint16_t sent;

		if (!mgr.bfd_port[port])
			continue;
		p->n += rte_ring_sc_dequeue_burst(bfd.tx_ring[port], (void **)&p->m[p->n],
						  BFD_TX_PENDING - p->n, NULL);
		if (p->n == 0)
			continue;
		sent = rte_eth_tx_burst(port, 0, p->m, p->n);
		/* Counted in tx like any frame on the wire, and apart. */
		mgr.port_stats[port].ctrl_tx += sent;
		mgr.port_stats[port].tx += sent;
		bfd.tx_sent += sent;
		p->n -= sent;
		memmove(p->m, &p->m[sent], p->n * sizeof(p->m[0]));
		/* A port that stays full: the oldest control frames are the
		 * least useful; make room for what is queued behind them. */
		if (p->n == BFD_TX_PENDING && !rte_ring_empty(bfd.tx_ring[port])) {
			rte_pktmbuf_free_bulk(p->m, p->n);
			bfd.tx_port_drop += p->n;
			p->n = 0;
		}
	}
}

uint64_t
mgr_bfd_next_ns(void)
{
	return __atomic_load_n(&bfd.next_ns, __ATOMIC_RELAXED);
}

/* ---- the BFD unit ------------------------------------------------------------ */

int
mgr_bfd_poll(void)
{
	struct rte_mbuf *pkts[BFD_RX_BURST];
	uint8_t copy[BFD_COPY_MAX];
	unsigned int n;
	uint64_t now;

	MGR_UNIT_ENTER(MGR_UNIT_BFD);
	if (mgr.cfg.nbfd == 0)
		return 0;
	n = rte_ring_count(bfd.rx_ring);
	now = mgr_now_ns();
	if (n == 0 && now < __atomic_load_n(&bfd.next_ns, __ATOMIC_RELAXED))
		return 0;
	if (pthread_mutex_trylock(&bfd.lock) != 0)
		return 0; /* telemetry has it for a moment: next poll */
	n = rte_ring_sc_dequeue_burst(bfd.rx_ring, (void **)pkts, BFD_RX_BURST, NULL);
	for (unsigned int i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		uint32_t len = RTE_MIN(rte_pktmbuf_pkt_len(m), (uint32_t)sizeof(copy));
		const uint8_t *data = rte_pktmbuf_read(m, 0, len, copy);

		if (data != NULL)
			bfd_node_rx(&bfd.node, m->port, data, len, now);
		rte_pktmbuf_free(m);
	}
	/* Packets can change the timers (a Poll answered, a state change): run
	 * them after every batch, not only at the deadline. */
	__atomic_store_n(&bfd.next_ns, bfd_node_timers(&bfd.node, now), __ATOMIC_RELAXED);
	pthread_mutex_unlock(&bfd.lock);
	return (int)n;
}

/* ---- telemetry --------------------------------------------------------------- */

/* A session's drops for reason r: the session layer's plus the framing
 * drops the node attributed to it. */
static uint64_t
session_drops(const struct bfd_node_session *ns, int r)
{
	return ns->s.stats.rx_drop[r] + ns->rx_drop[r];
}

static void
add_session(struct rte_tel_data *d, const struct bfd_node_session *ns, uint64_t now)
{
	const struct bfd_session *s = &ns->s;
	char ip[ONVM_RULE_IPV4_STR_LEN], mac[18];

	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_int(d, "port", ns->cfg.port);
	onvm_rule_ipv4_str(ns->cfg.local_ip, ip);
	rte_tel_data_add_dict_string(d, "local", ip);
	onvm_rule_ipv4_str(ns->cfg.peer_ip, ip);
	rte_tel_data_add_dict_string(d, "peer", ip);
	bfd_mac_format(ns->peer_mac, mac);
	rte_tel_data_add_dict_string(d, "peer_mac", ns->mac_known ? mac : "");
	rte_tel_data_add_dict_string(d, "peer_mac_source",
				     ns->cfg.peer_mac_static ? "static"
							     : ns->mac_known ? "arp" : "unresolved");
	rte_tel_data_add_dict_string(d, "state", bfd_state_str(s->state));
	rte_tel_data_add_dict_string(d, "remote_state", bfd_state_str(s->remote_state));
	rte_tel_data_add_dict_int(d, "local_diag", s->local_diag);
	rte_tel_data_add_dict_string(d, "local_diag_str", bfd_diag_str(s->local_diag));
	rte_tel_data_add_dict_int(d, "remote_diag", s->remote_diag);
	rte_tel_data_add_dict_uint(d, "local_discr", s->local_discr);
	rte_tel_data_add_dict_uint(d, "remote_discr", s->remote_discr);
	rte_tel_data_add_dict_int(d, "src_port", ns->src_port);
	rte_tel_data_add_dict_uint(d, "desired_min_tx_us", s->desired_min_tx_us);
	rte_tel_data_add_dict_uint(d, "required_min_rx_us", s->required_min_rx_us);
	rte_tel_data_add_dict_int(d, "detect_mult", s->detect_mult);
	rte_tel_data_add_dict_uint(d, "remote_desired_min_tx_us", s->remote_desired_min_tx_us);
	rte_tel_data_add_dict_uint(d, "remote_min_rx_us", s->remote_min_rx_us);
	rte_tel_data_add_dict_int(d, "remote_detect_mult", s->remote_detect_mult);
	rte_tel_data_add_dict_int(d, "remote_demand", s->remote_demand);
	rte_tel_data_add_dict_uint(d, "tx_interval_us", s->tx_interval_ns / 1000);
	rte_tel_data_add_dict_uint(d, "detect_time_us", bfd_session_detect_time_ns(s) / 1000);
	rte_tel_data_add_dict_int(d, "poll_active", s->poll_active);
	rte_tel_data_add_dict_string(d, "auth", s->cfg.auth_type == BFD_AUTH_KEYED_SHA1 ? "keyed-sha1"
					 : s->cfg.auth_type == BFD_AUTH_METICULOUS_SHA1
					     ? "meticulous-keyed-sha1" : "none");
	rte_tel_data_add_dict_uint(d, "tx", s->stats.tx);
	rte_tel_data_add_dict_uint(d, "rx", s->stats.rx);
	rte_tel_data_add_dict_uint(d, "tx_no_mac", ns->tx_no_mac);
	rte_tel_data_add_dict_uint(d, "tx_fail", ns->tx_fail);
	for (int r = 1; r < BFD_RX_REASON_MAX; r++) {
		char key[48];
		snprintf(key, sizeof(key), "rx_drop_%s", bfd_rx_reason_str(r));
		rte_tel_data_add_dict_uint(d, key, session_drops(ns, r));
	}
	rte_tel_data_add_dict_uint(d, "up_events", s->stats.up_events);
	rte_tel_data_add_dict_uint(d, "down_events", s->stats.down_events);
	rte_tel_data_add_dict_uint(d, "polls_started", s->stats.polls_started);
	rte_tel_data_add_dict_uint(d, "polls_completed", s->stats.polls_completed);
	/* CLOCK_MONOTONIC ns, comparable with the host's monotonic clock. */
	rte_tel_data_add_dict_uint(d, "last_change_ns", ns->last_change_ns);
	rte_tel_data_add_dict_uint(d, "last_up_ns", ns->last_up_ns);
	rte_tel_data_add_dict_uint(d, "last_down_ns", ns->last_down_ns);
	rte_tel_data_add_dict_int(d, "last_down_diag", ns->last_down_diag);
	rte_tel_data_add_dict_uint(d, "state_age_ms", (now - ns->last_change_ns) / 1000000);
}

static int
tel_bfd(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const struct bfd_node_stats *st = &bfd.node.stats;
	uint64_t now = mgr_now_ns();

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	pthread_mutex_lock(&bfd.lock);
	rte_tel_data_add_dict_int(d, "sessions", bfd.node.nsessions);
	rte_tel_data_add_dict_uint(d, "events", bfd.events);
	rte_tel_data_add_dict_uint(d, "rx_frames", st->rx_frames);
	rte_tel_data_add_dict_uint(d, "rx_ctrl", st->rx_ctrl);
	rte_tel_data_add_dict_uint(d, "rx_other", st->rx_other);
	for (int r = 1; r < BFD_RX_REASON_MAX; r++) {
		char key[48];

		snprintf(key, sizeof(key), "rx_drop_%s", bfd_rx_reason_str(r));
		rte_tel_data_add_dict_uint(d, key, st->rx_drop[r]);
	}
	rte_tel_data_add_dict_uint(d, "rx_ring_full", bfd.rx_ring_full);
	rte_tel_data_add_dict_uint(d, "arp_rx", st->arp_rx);
	rte_tel_data_add_dict_uint(d, "arp_replied", st->arp_replied);
	rte_tel_data_add_dict_uint(d, "arp_learned", st->arp_learned);
	rte_tel_data_add_dict_uint(d, "arp_requests", st->arp_requests);
	rte_tel_data_add_dict_uint(d, "tx_frames", st->tx_frames);
	rte_tel_data_add_dict_uint(d, "tx_fail", st->tx_fail);
	rte_tel_data_add_dict_uint(d, "tx_ring_full", bfd.tx_ring_full);
	rte_tel_data_add_dict_uint(d, "tx_alloc_fail", bfd.tx_alloc_fail);
	rte_tel_data_add_dict_uint(d, "tx_sent", bfd.tx_sent);
	rte_tel_data_add_dict_uint(d, "tx_port_drop", bfd.tx_port_drop);
	for (uint16_t i = 0; i < bfd.node.nsessions; i++) {
		struct rte_tel_data *c = rte_tel_data_alloc();

		if (c == NULL)
			break;
		add_session(c, &bfd.node.sess[i], now);
		if (rte_tel_data_add_dict_container(d, bfd.node.sess[i].cfg.name, c, 0) != 0)
			rte_tel_data_free(c);
	}
	pthread_mutex_unlock(&bfd.lock);
	return 0;
}

/* Split "a,b,c" into at most `max` fields (in place). */
static int
split_params(char *buf, char **out, int max)
{
	int n = 0;

	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t != NULL;
	     t = strtok_r(NULL, ",", &save)) {
		if (n == max)
			return -1;
		out[n++] = t;
	}
	return n;
}

static int
parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long v;

	if (s[0] < '0' || s[0] > '9')
		return -1;
	v = strtoul(s, &end, 10);
	if (*end != '\0' || v < min || v > max)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int
reply_status(struct rte_tel_data *d, const char *status, const char *detail)
{
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "status", status);
	if (detail != NULL)
		rte_tel_data_add_dict_string(d, "detail", detail);
	return 0;
}

/* /onvm/bfd/admin,NAME,down|up */
static int
tel_bfd_admin(const char *cmd, const char *params, struct rte_tel_data *d)
{
	char buf[128], *f[2];
	int idx, ret = -1;

	(void)cmd;
	if (params == NULL || strlen(params) >= sizeof(buf))
		return reply_status(d, "error", "usage: /onvm/bfd/admin,SESSION,down|up");
	strcpy(buf, params);
	if (split_params(buf, f, 2) != 2 || (strcmp(f[1], "down") != 0 && strcmp(f[1], "up") != 0))
		return reply_status(d, "error", "usage: /onvm/bfd/admin,SESSION,down|up");
	pthread_mutex_lock(&bfd.lock);
	idx = bfd_node_find(&bfd.node, f[0]);
	if (idx >= 0)
		ret = bfd_node_set_admin_down(&bfd.node, idx, strcmp(f[1], "down") == 0,
					      mgr_now_ns());
	/* the unit recomputes its deadline */
	__atomic_store_n(&bfd.next_ns, mgr_now_ns(), __ATOMIC_RELAXED);
	pthread_mutex_unlock(&bfd.lock);
	return reply_status(d, ret == 0 ? "ok" : "error", ret == 0 ? NULL : "no such session");
}

/* /onvm/bfd/timers,NAME,DESIRED_MIN_TX_US,REQUIRED_MIN_RX_US,DETECT_MULT */
static int
tel_bfd_timers(const char *cmd, const char *params, struct rte_tel_data *d)
{
	static const char *usage =
		"usage: /onvm/bfd/timers,SESSION,DESIRED_MIN_TX_US,REQUIRED_MIN_RX_US,DETECT_MULT "
		"(1000-60000000 us, multiplier 1-255)";
	char buf[128], *f[4];
	uint32_t tx, rx, mult;
	int idx, ret = -1;

	(void)cmd;
	if (params == NULL || strlen(params) >= sizeof(buf))
		return reply_status(d, "error", usage);
	strcpy(buf, params);
	if (split_params(buf, f, 4) != 4 || parse_u32(f[1], 1000, 60000000, &tx) < 0 ||
	    parse_u32(f[2], 1000, 60000000, &rx) < 0 || parse_u32(f[3], 1, 255, &mult) < 0)
		return reply_status(d, "error", usage);
	pthread_mutex_lock(&bfd.lock);
	idx = bfd_node_find(&bfd.node, f[0]);
	if (idx >= 0)
		ret = bfd_node_set_timers(&bfd.node, idx, tx, rx, (uint8_t)mult, mgr_now_ns());
	__atomic_store_n(&bfd.next_ns, mgr_now_ns(), __ATOMIC_RELAXED);
	pthread_mutex_unlock(&bfd.lock);
	return reply_status(d, ret == 0 ? "ok" : "error", idx < 0 ? "no such session" : NULL);
}

int
mgr_bfd_telemetry_init(void)
{
	if (mgr_tel_register("/onvm/bfd", tel_bfd,
				       "BFD sessions: state, timers, counters. No parameters.") != 0 ||
	    mgr_tel_register("/onvm/bfd/admin", tel_bfd_admin,
				       "Set a BFD session AdminDown or back. "
				       "Parameters: SESSION,down|up") != 0 ||
	    mgr_tel_register("/onvm/bfd/timers", tel_bfd_timers,
				       "Change a BFD session's timers (Poll/Final while Up). "
				       "Parameters: SESSION,DESIRED_MIN_TX_US,REQUIRED_MIN_RX_US,"
				       "DETECT_MULT") != 0) {
		MGR_LOG(ERR, "cannot register the /onvm/bfd telemetry commands");
		return -1;
	}
	return 0;
}

/* ---- console statistics ------------------------------------------------------ */

void
mgr_bfd_stats_print(void)
{
	/* A copy taken under the lock, printed without it: a slow stdout must
	 * not hold the BFD unit off its sessions. */
	static struct bfd_node snap;

	if (bfd.node.nsessions == 0)
		return;
	pthread_mutex_lock(&bfd.lock);
	snap = bfd.node;
	pthread_mutex_unlock(&bfd.lock);
	printf("--- BFD -----------------------------------------------------------------\n");
	for (uint16_t i = 0; i < snap.nsessions; i++) {
		const struct bfd_node_session *ns = &snap.sess[i];
		const struct bfd_session *s = &ns->s;
		uint64_t drops = 0;
		char peer[ONVM_RULE_IPV4_STR_LEN];

		for (int r = 1; r < BFD_RX_REASON_MAX; r++)
			drops += session_drops(ns, r);
		onvm_rule_ipv4_str(ns->cfg.peer_ip, peer);
		printf("bfd %-12s port %u peer %-15s %-9s (remote %s) diag %u tx %u us rx %u us "
		       "x%u detect %.1f ms  tx %" PRIu64 " rx %" PRIu64 " drop %" PRIu64
		       " up %" PRIu64 " down %" PRIu64 "%s\n",
		       ns->cfg.name, ns->cfg.port, peer, bfd_state_str(s->state),
		       bfd_state_str(s->remote_state), s->local_diag, s->desired_min_tx_us,
		       s->required_min_rx_us, s->detect_mult,
		       (double)bfd_session_detect_time_ns(s) / 1e6, s->stats.tx, s->stats.rx, drops,
		       s->stats.up_events, s->stats.down_events,
		       ns->mac_known ? "" : "  (peer MAC unresolved)");
	}
}
