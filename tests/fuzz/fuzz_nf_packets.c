/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * fuzz_nf_packets.c -- libFuzzer target for the NF suite's per-packet code:
 * the EAL-free cores of firewall (linear matcher), load_balancer, nat,
 * vlan_tagger, nondet and, when libndpi is there, the dpi engine.
 *
 * Input:
 *   byte 0   configuration: byte % 10 indexes `configs` below (an NF and a
 *            small fixed config; 8 is dpi, ignored if dpi is not built)
 *   byte 1   where run B splits each frame: after 1 + byte % (len - 1) bytes
 *   byte 2   bits 0-5: clock step per frame, in units of 50 ms (idle
 *            timeouts are 1 s, so flows expire between frames);
 *            bit 6: no headroom in front of the frame (else 4 bytes, enough
 *            for vlan_tagger's insert and no more);
 *            bit 7: no derived replies (see below)
 *   rest     up to 16 raw Ethernet frames separated by FE ED FA CE.
 *
 * Every input starts from fresh state (except dpi, see below), so a crash
 * reproduces from its input alone.  The frames are fed twice, each run on
 * its own heap state (tests/common/test_state.h) and a deterministic random
 * source:
 *   A  each frame in one mbuf whose data is an exact-size heap copy (ASan
 *      catches reads and writes past it; the headroom is exact too);
 *   B  each frame in two exact-size segments, as net_pcap chains long
 *      frames.
 * For load_balancer in VIP mode and nat, a frame the NF rewrote is answered:
 * the output with MACs, addresses and ports swapped is fed back at once (a
 * reply from the backend / the remote end), which reaches the reply and
 * inbound paths.
 *
 * Checked after every packet (abort() on violation, so libFuzzer keeps the
 * input):
 *   - test_state_commit_check() == 0 after the packet and again after the
 *     NF's periodic maintenance (expiry): no state byte written without a
 *     touch; the slack between a region's size and its last chunk stays 0;
 *   - a malformed frame (onvm_pkt_parse() neither OK nor NOT_IPV4) is counted
 *     once under its parse reason, other frames under none;
 *   - the NF's counters add up (every packet counted in exactly one outcome)
 *     and its tables agree (nat: free ports + mappings = range; lb: active
 *     flows per backend = table count; flow tables within their load limit);
 *   - the output frame: NFs that do not rewrite (firewall, nondet, dpi, and
 *     every frame an NF passes unchanged) leave it byte for byte; a rewrite
 *     changes only the bytes it should (lb: destination MAC and address;
 *     nat: source or destination address and port; the IPv4 and L4
 *     checksums), to the values it should (a backend of the config and of
 *     the flow's entry, the external address and a port of the range owned
 *     by this 5-tuple, the original endpoint for a reply), the IPv4 and
 *     TCP/UDP checksums of the result are right, and the output parses
 *     (onvm_pkt_parse() OK) with the expected 5-tuple; vlan_tagger inserts
 *     or rewrites exactly the 802.1Q tag the policy gives the 5-tuple (DEI
 *     kept) and nothing else;
 *   - firewall: the action is the linear first match's (or the policy's) for
 *     what onvm_pkt_parse() says the frame is;
 *   - nondet: one random draw per ND event, ND every 3rd packet in count mode;
 *   - replies: nat translates the answer back to the original source address
 *     and port; lb (VIP mode) rewrites the backend's answer to come from the
 *     VIP;
 *   - A and B agree on every verdict and output byte, until B drops a frame
 *     because its headers straddle the two segments (counted "unwritable" /
 *     "split_header"); A never counts that.
 *
 * dpi: nDPI's module is built once per process (-H 16 MB heap region, 64
 * flows) and its state carries over from input to input (rebuilding it costs
 * ~0.1 s); its clock advances with every frame and idle flows expire, so the
 * table and the heap churn.  The input's frames are one batch (batch_begin,
 * a packet per frame, an expiry step, batch_end; then the commit check of all
 * three regions, incl. the 16 MB heap), or one batch and check per frame
 * when bits 1 and 2 of byte 1 are set (bit 0: split the frames as in B).
 * A crash there may need the inputs before it: replay the corpus with
 * -runs=0.  nDPI itself is the system's static library, not instrumented.
 *
 * FUZZ_NF_PRINT=1 prints what happened to each packet.  FUZZ_NF_ONLY=NAME
 * (a name of `configs`, e.g. nat) sends every input to that configuration,
 * whatever byte 0 says.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>

#include <rte_mbuf.h>

#include "firewall_core.h"
#include "load_balancer_core.h"
#include "nat_core.h"
#include "nondet_core.h"
#include "onvm_pkt_parse.h"
#include "onvm_state.h"
#include "vlan_tagger_core.h"
#ifdef FUZZ_WITH_DPI
#include "dpi_engine.h"
#endif

#include "fuzz_check.h"
#include "heap_mbuf.h"
#include "test_state.h"

#define HDR_LEN	   3
#define MAX_FRAMES 16
#define MAX_FRAME  20000 /* longer frames are skipped (webex has 18 KB ones) */
#define HEADROOM   4	 /* exactly one 802.1Q tag */
#define STEP_NS	   (50ull * 1000000ull)
#define T0_NS	   (1000ull * 1000000000ull)
#define FLOWS	   16 /* load limit 12: a few frames fill a table */
#define OUT_MAX	   (MAX_FRAME + 64)

static const uint8_t SEP[4] = {0xfe, 0xed, 0xfa, 0xce};

/* ---- the fixed configurations ------------------------------------------------------ */

/* Addresses: the traces' (10/8, 192.168/16, 172.16/12 inside) and the lab's
 * 198.18.0.0/15 for the NFs' own. */
static const char FW_RULES[] =
    "{\"default\": \"allow\", \"non_ip\": \"deny\", \"malformed\": \"deny\", \"rules\": ["
    "{\"name\": \"no_telnet\", \"action\": \"deny\", \"proto\": \"tcp\", \"dport\": 23},"
    "{\"name\": \"web\", \"action\": \"allow\", \"dst\": \"192.168.0.0/16\", \"proto\": \"tcp\","
    " \"dport\": [80, 443]},"
    "{\"name\": \"hi_ports\", \"action\": \"deny\", \"src\": \"10.0.0.0/8\", \"proto\": \"tcp\","
    " \"sport\": [1024, 65535], \"dport\": [1024, 65535]},"
    "{\"name\": \"dns\", \"action\": \"allow\", \"proto\": \"udp\", \"dport\": 53},"
    "{\"name\": \"udp_hi\", \"action\": \"deny\", \"proto\": 17, \"sport\": [30000, 40000]},"
    "{\"name\": \"icmp\", \"action\": \"deny\", \"proto\": \"icmp\", \"src\": \"198.18.0.0/15\"},"
    "{\"name\": \"gre\", \"action\": \"allow\", \"proto\": 47, \"dst\": \"198.19.0.0/16\"},"
    "{\"name\": \"host\", \"action\": \"deny\", \"src\": \"172.16.1.2/32\"}]}";

static const char LB_TRANSPARENT[] =
    "{\"backends\": [{\"ip\": \"198.18.1.1\", \"mac\": \"02:00:00:00:01:01\"},"
    "{\"ip\": \"198.18.1.2\", \"mac\": \"02:00:00:00:01:02\"},"
    "{\"ip\": \"198.18.1.3\", \"mac\": \"02:00:00:00:01:03\"},"
    "{\"ip\": \"198.18.1.4\", \"mac\": \"02:00:00:00:01:04\"}],"
    " \"idle_timeout_ms\": 1000, \"flows\": 16}";

static const char LB_VIP[] = "{\"vip\": \"198.18.0.100\", \"backends\": ["
			     "{\"ip\": \"198.18.1.1\", \"mac\": \"02:00:00:00:01:01\"},"
			     "{\"ip\": \"198.18.1.2\", \"mac\": \"02:00:00:00:01:02\"},"
			     "{\"ip\": \"198.18.1.3\", \"mac\": \"02:00:00:00:01:03\"}],"
			     " \"idle_timeout_ms\": 1000, \"flows\": 16}";

/* 8 external ports: exhausted by a few flows. */
static const char NAT_CFG[] =
    "{\"internal\": [\"10.0.0.0/8\", \"192.168.0.0/16\", \"172.16.0.0/12\"],"
    " \"external_ip\": \"198.18.0.1\", \"port_min\": 40000, \"port_max\": 40007,"
    " \"idle_timeout_ms\": 1000, \"flows\": 16}";

/* 100 ports, more than the table holds: the table fills first. */
static const char NAT_WIDE[] =
    "{\"internal\": [\"10.0.0.0/8\", \"192.168.0.0/16\", \"172.16.0.0/12\"],"
    " \"external_ip\": \"198.18.0.1\", \"port_min\": 40000, \"port_max\": 40099,"
    " \"idle_timeout_ms\": 1000, \"flows\": 16}";

static const char VT_POLICY[] =
    "{\"default\": {\"vlan\": 42, \"pcp\": 3}, \"rules\": ["
    "{\"src\": \"10.0.0.0/8\", \"proto\": \"tcp\", \"dport\": 443, \"vlan\": 100, \"pcp\": 4},"
    "{\"dst\": \"192.168.0.0/16\", \"proto\": \"udp\", \"sport\": [1000, 1999], \"vlan\": 200},"
    "{\"proto\": \"icmp\", \"vlan\": 300, \"pcp\": 7},"
    "{\"proto\": 47, \"vlan\": 4094},"
    "{\"proto\": \"tcp\", \"sport\": [0, 1023], \"vlan\": 1, \"pcp\": 1}],"
    " \"idle_timeout_ms\": 1000, \"flows\": 16}";

/* Default VLAN 0: frames no rule matches pass unchanged. */
static const char VT_POLICY_KEEP[] = "{\"rules\": ["
				     "{\"dst\": \"192.168.0.0/16\", \"vlan\": 10, \"pcp\": 2},"
				     "{\"proto\": \"udp\", \"dport\": [53, 53], \"vlan\": 53}],"
				     " \"idle_timeout_ms\": 0, \"flows\": 16}";

static const char ND_SCHEDULE[] = "[{\"seconds\": 1, \"mode\": \"interval\", \"value\": 120000},"
				  " {\"seconds\": 2, \"mode\": \"count\", \"value\": 2},"
				  " {\"seconds\": 0.5, \"mode\": \"none\"},"
				  " {\"seconds\": 1, \"mode\": \"interval\", \"value\": 1}]";

enum nf_kind { K_FW, K_LB, K_NAT, K_VT, K_ND, K_DPI };

struct config {
	const char *name;
	enum nf_kind kind;
	const char *text; /* nondet: the -m argument, or a schedule */
	bool schedule;
	union {
		struct fw_config fw;
		struct lb_config lb;
		struct nat_config nat;
		struct vt_policy vt;
		struct nd_conf nd;
	} u;
};

static struct config configs[] = {
    {.name = "firewall", .kind = K_FW, .text = FW_RULES},
    {.name = "lb", .kind = K_LB, .text = LB_TRANSPARENT},
    {.name = "lb_vip", .kind = K_LB, .text = LB_VIP},
    {.name = "nat", .kind = K_NAT, .text = NAT_CFG},
    {.name = "vlan_tagger", .kind = K_VT, .text = VT_POLICY},
    {.name = "vlan_tagger_keep", .kind = K_VT, .text = VT_POLICY_KEEP},
    {.name = "nondet_count", .kind = K_ND, .text = "count:3"},
    {.name = "nondet_schedule", .kind = K_ND, .text = ND_SCHEDULE, .schedule = true},
    {.name = "dpi", .kind = K_DPI},
    {.name = "nat_wide", .kind = K_NAT, .text = NAT_WIDE},
};
#define N_CONFIGS (sizeof(configs) / sizeof(configs[0]))

/* ---- one NF on its own state ----------------------------------------------------- */

struct inst {
	struct config *cfg;
	struct test_state ts;
	bool allocated;
	struct fw fw;
	struct lb lb;
	struct nat nat;
	struct vt_tagger vt;
	struct nondet nd;
	uint64_t rng, rand_calls, packets, nd_true;
	uint64_t now;
};

/* Per configuration: run A (one segment) and run B (two segments). */
static struct inst insts[N_CONFIGS][2];
static bool print;
static bool have_dpi;
static int only = -1; /* FUZZ_NF_ONLY=NAME: every input goes to that config */

static uint64_t
splitmix(void *arg)
{
	struct inst *in = arg;
	uint64_t z = (in->rng += UINT64_C(0x9e3779b97f4a7c15));

	in->rand_calls++;
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static void *
region(struct inst *in, const char *name)
{
	void *p = test_state_region(&in->ts, name);

	CHECK(p != NULL);
	return p;
}

static size_t
region_size(struct inst *in, const char *name)
{
	int r = nf_state_region_find(&in->ts.set, name);

	CHECK(r >= 0);
	return nf_state_region_size(&in->ts.set, (unsigned int)r);
}

/* Commit, then: no untracked write, and nothing past a region's end. */
static void
check_state(struct test_state *ts)
{
	CHECK(test_state_commit_check(ts) == 0);
	for (unsigned int r = 0; r < ts->set.n_regions; r++) {
		const struct nf_state_region *reg = &ts->set.regions[r];

		for (uint64_t i = reg->size; i < reg->block_size; i++)
			CHECK(reg->canon[i] == 0);
	}
}

static unsigned int
requests(const struct config *c, struct nf_state_request *reqs)
{
	switch (c->kind) {
	case K_FW:
		reqs[0] = (struct nf_state_request){.name = FW_STATE_REGION,
						    .size = fw_state_size(c->u.fw.n_rules)};
		return 1;
	case K_LB:
		lb_regions(&c->u.lb, reqs);
		return LB_REGIONS;
	case K_NAT:
		nat_regions(&c->u.nat, reqs);
		return NAT_REGIONS;
	case K_VT:
		reqs[0] =
		    (struct nf_state_request){.name = "vt_flows", .size = vt_flows_size(&c->u.vt)};
		reqs[1] = (struct nf_state_request){.name = "vt_counters",
						    .size = vt_counters_size(&c->u.vt)};
		return 2;
	case K_ND:
		reqs[0] =
		    (struct nf_state_request){.name = "nondet", .size = nd_totals_size(&c->u.nd)};
		reqs[1] =
		    (struct nf_state_request){.name = "nd_flows", .size = nd_flows_size(FLOWS)};
		return 2;
	default:
		return 0;
	}
}

/* Fresh state and a freshly opened NF. */
static void
inst_reset(struct inst *in, struct config *c)
{
	struct nf_state_request reqs[4];
	unsigned int n = requests(c, reqs);
	char err[256];
	int rc;

	if (!in->allocated) {
		CHECK(test_state_init(&in->ts, reqs, n) == 0);
		in->allocated = true;
	} else {
		CHECK(nf_state_format(in->ts.block, in->ts.layout.total_size, &in->ts.layout, err,
				      sizeof(err)) == 0);
		CHECK(nf_state_attach(&in->ts.set, in->ts.block, in->ts.layout.total_size,
				      &in->ts.layout, err, sizeof(err)) == 0);
	}
	in->cfg = c;
	in->rng = 0x5eed;
	in->rand_calls = in->packets = in->nd_true = 0;
	in->now = T0_NS;
	err[0] = '\0';
	switch (c->kind) {
	case K_FW:
		rc = fw_state_open(&in->fw, &c->u.fw, &in->ts.set, region(in, FW_STATE_REGION),
				   region_size(in, FW_STATE_REGION), true, err, sizeof(err));
		CHECK(rc == 1);
		break;
	case K_LB: {
		void *const regs[LB_REGIONS] = {region(in, "lb"), region(in, "lb_flows")};

		rc = lb_open(&in->lb, &c->u.lb, &in->ts.set, regs, splitmix, in, 1, err,
			     sizeof(err));
		break;
	}
	case K_NAT: {
		void *const regs[NAT_REGIONS] = {region(in, "nat"), region(in, "nat_ports"),
						 region(in, "nat_flows")};

		rc = nat_open(&in->nat, &c->u.nat, &in->ts.set, regs, splitmix, in, 1, err,
			      sizeof(err));
		break;
	}
	case K_VT:
		rc = vt_open(&in->vt, &c->u.vt, &in->ts.set, region(in, "vt_flows"),
			     region_size(in, "vt_flows"), region(in, "vt_counters"),
			     region_size(in, "vt_counters"), err, sizeof(err));
		break;
	case K_ND:
		rc = nd_open(&in->nd, &c->u.nd, &in->ts.set, region(in, "nondet"),
			     region_size(in, "nondet"), region(in, "nd_flows"),
			     region_size(in, "nd_flows"), FLOWS, splitmix, in, err, sizeof(err));
		break;
	default:
		rc = -EINVAL;
	}
	if (rc < 0)
		fprintf(stderr, "fuzz_nf_packets: cannot open %s: %s\n", c->name, err);
	CHECK(rc >= 0);
	check_state(&in->ts);
}

/* ---- mbufs ------------------------------------------------------------------------- */

/* One segment: `headroom` bytes, then an exact-size copy of bytes[0..len). */
static struct rte_mbuf *
seg(const uint8_t *bytes, size_t len, uint16_t headroom)
{
	struct rte_mbuf *m =
	    aligned_alloc(RTE_CACHE_LINE_SIZE, RTE_ALIGN_CEIL(sizeof(*m), RTE_CACHE_LINE_SIZE));
	uint8_t *buf = malloc(headroom + len > 0 ? headroom + len : 1);

	CHECK(m != NULL && buf != NULL);
	memset(m, 0, sizeof(*m));
	memcpy(buf + headroom, bytes, len);
	m->buf_addr = buf;
	m->buf_len = (uint16_t)(headroom + len);
	m->data_off = headroom;
	m->data_len = (uint16_t)len;
	m->pkt_len = (uint32_t)len;
	m->nb_segs = 1;
	return m;
}

/* The frame in one segment (split 0) or cut after `split` bytes. */
static struct rte_mbuf *
frame_mbuf(const uint8_t *f, size_t len, size_t split, uint16_t headroom)
{
	struct rte_mbuf *m;

	if (split == 0 || split >= len)
		return seg(f, len, headroom);
	m = seg(f, split, headroom);
	m->next = seg(f + split, len - split, 0);
	m->nb_segs = 2;
	m->pkt_len = (uint32_t)len;
	return m;
}

/* The mbuf's bytes, contiguous; returns the length. */
static size_t
flatten(const struct rte_mbuf *m, uint8_t *out, size_t cap)
{
	size_t n = 0;

	for (; m != NULL; m = m->next) {
		CHECK(n + m->data_len <= cap);
		memcpy(out + n, rte_pktmbuf_mtod(m, const uint8_t *), m->data_len);
		n += m->data_len;
	}
	return n;
}

static enum onvm_parse_reason
parse_bytes(const uint8_t *f, size_t len, struct onvm_pkt_info *pi)
{
	struct rte_mbuf *m = heap_mbuf(f, len);
	enum onvm_parse_reason r;

	CHECK(m != NULL);
	r = onvm_pkt_parse(m, pi);
	heap_mbuf_free(m);
	return r;
}

/* ---- byte-level checks ----------------------------------------------------------- */

static uint16_t
be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t
sum16(const uint8_t *p, size_t len, uint32_t sum)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		sum += be16(p + i);
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	return sum;
}

static uint16_t
fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* The IPv4 header checksum and the TCP/UDP checksum of a parsed, complete
 * (unfragmented) datagram are right. */
static void
check_checksums(const uint8_t *f, const struct onvm_pkt_info *pi)
{
	const uint8_t *ip = f + pi->l2_len, *l4 = ip + pi->l3_len;
	uint32_t l4len = pi->ip_len - pi->l3_len, sum;

	CHECK(fold(sum16(ip, pi->l3_len, 0)) == 0xffff);
	if (pi->fragment || (pi->proto != IPPROTO_TCP && pi->proto != IPPROTO_UDP))
		return;
	if (pi->proto == IPPROTO_UDP && be16(l4 + 6) == 0)
		return; /* no checksum */
	sum = sum16(ip + 12, 8, 0) + pi->proto + l4len;
	CHECK(fold(sum16(l4, l4len, sum)) == 0xffff);
}

/* Byte ranges a rewrite may change. */
struct span {
	size_t off, len;
};

/* out equals in outside the spans (same length). */
static void
check_only(const uint8_t *in, const uint8_t *out, size_t len, const struct span *sp, int n)
{
	for (size_t i = 0; i < len; i++) {
		bool allowed = false;

		for (int k = 0; k < n; k++)
			allowed |= i >= sp[k].off && i < sp[k].off + sp[k].len;
		if (!allowed && in[i] != out[i]) {
			fprintf(stderr, "fuzz_nf_packets: byte %zu changed (%02x -> %02x)\n", i,
				in[i], out[i]);
			CHECK(!"a byte outside the rewrite changed");
		}
	}
}

static size_t
l4_cksum_off(const struct onvm_pkt_info *pi)
{
	return (size_t)pi->l2_len + pi->l3_len + (pi->proto == IPPROTO_TCP ? 16 : 6);
}

/* ---- one packet through one NF ------------------------------------------------------ */

struct result {
	bool forward;
	bool seg_drop; /* B only: headers not in the first segment */
	size_t len;
	uint8_t out[OUT_MAX];
	/* rewrites: 0 none, else what happened */
	enum {
		RW_NONE,
		RW_LB_BALANCED,
		RW_LB_REPLY,
		RW_NAT_OUT,
		RW_NAT_IN,
		RW_VT_INSERT,
		RW_VT_REWRITE
	} rw;
};

static uint64_t
sum_u64(const uint64_t *v, size_t n)
{
	uint64_t s = 0;

	for (size_t i = 0; i < n; i++)
		s += v[i];
	return s;
}

static void
fw_packet(struct inst *in, struct rte_mbuf *m, const uint8_t *f, size_t len, struct result *res)
{
	const struct fw_config *c = in->fw.cfg;
	const struct fw_state_hdr *st = in->fw.st;
	struct onvm_pkt_info pi;
	enum onvm_parse_reason r = parse_bytes(f, len, &pi);
	struct fw_pkt p;
	int32_t rule = FW_NO_MATCH;
	uint8_t action, expect;
	uint64_t total;

	fw_pkt_parse(m, &p);
	CHECK(p.len == len);
	if (r == ONVM_PARSE_OK) {
		CHECK(p.kind == FW_KIND_IPV4);
		CHECK(p.t.src == pi.src_ip && p.t.dst == pi.dst_ip && p.t.proto == pi.proto);
		CHECK(p.t.has_ports ==
		      (!pi.fragment && (pi.proto == IPPROTO_TCP || pi.proto == IPPROTO_UDP)));
		CHECK(!p.t.has_ports || (p.t.sport == pi.sport && p.t.dport == pi.dport));
		rule = fw_match_linear(c, &p.t);
		CHECK(rule == FW_NO_MATCH || (rule >= 0 && (uint32_t)rule < c->n_rules));
		expect = rule >= 0 ? c->rules[rule].action : c->def;
	} else if (r == ONVM_PARSE_NOT_IPV4) {
		CHECK(p.kind == FW_KIND_NON_IP);
		expect = c->non_ip;
	} else {
		CHECK(p.kind == FW_KIND_MALFORMED && p.reason == r);
		expect = c->malformed;
	}
	action = fw_account(&in->fw, &p, rule);
	CHECK(action == expect);
	res->forward = action == FW_ALLOW;
	/* every packet in exactly one counter */
	total = st->deflt.packets + st->non_ip.packets + st->malformed.packets;
	for (uint32_t i = 0; i < c->n_rules; i++)
		total += st->rule[i].packets;
	CHECK(total == in->packets + 1);
	CHECK(sum_u64(st->malformed_reason, ONVM_PARSE_REASON_MAX) == st->malformed.packets);
}

static void
lb_check_tables(struct inst *in)
{
	const struct lb_totals *t = in->lb.t;
	uint64_t active = 0;

	for (uint32_t b = 0; b < in->lb.cfg->n_backends; b++)
		active += t->backend_active[b];
	CHECK(active == lb_flow_count(&in->lb));
	CHECK(lb_flow_count(&in->lb) <= FLOWS * 3 / 4);
	CHECK(t->packets == t->balanced + t->replies + t->passed + t->unmatched_from_backend +
				t->non_ip + t->fragments + t->table_full + t->unwritable +
				sum_u64(t->malformed, ONVM_PARSE_REASON_MAX));
	CHECK(t->new_flows == sum_u64(t->backend_flows, LB_BACKENDS_MAX));
	CHECK(t->new_flows == in->rand_calls); /* one draw per flow */
}

static void
lb_packet_(struct inst *in, struct rte_mbuf *m, struct result *res)
{
	const struct lb_totals *t = in->lb.t;
	uint64_t balanced = t->balanced, replies = t->replies, unwritable = t->unwritable;

	res->forward = lb_packet(&in->lb, m, in->now) == LB_FORWARD;
	res->seg_drop = t->unwritable != unwritable;
	if (t->balanced != balanced)
		res->rw = RW_LB_BALANCED;
	else if (t->replies != replies)
		res->rw = RW_LB_REPLY;
	CHECK(t->packets == in->packets + 1);
	lb_check_tables(in);
}

static void
nat_check_tables(struct inst *in)
{
	const struct nat_totals *t = in->nat.t;
	const struct nat_config *c = in->nat.cfg;

	CHECK(nat_free_ports(&in->nat) + nat_mapping_count(&in->nat) ==
	      (uint32_t)c->port_max - c->port_min + 1);
	CHECK(nat_mapping_count(&in->nat) <= FLOWS * 3 / 4);
	CHECK(t->packets == t->outbound + t->inbound + t->passed + t->non_ip + t->untranslatable +
				t->fragments + t->ports_exhausted + t->table_full +
				t->inbound_unmapped + t->inbound_mismatch + t->inbound_unsupported +
				t->unwritable + sum_u64(t->malformed, ONVM_PARSE_REASON_MAX));
	CHECK(t->new_mappings == in->rand_calls);
}

static void
nat_packet_(struct inst *in, struct rte_mbuf *m, struct result *res)
{
	const struct nat_totals *t = in->nat.t;
	uint64_t out = t->outbound, inb = t->inbound, unwritable = t->unwritable;

	res->forward = nat_packet(&in->nat, m, in->now) == NAT_FORWARD;
	res->seg_drop = t->unwritable != unwritable;
	if (t->outbound != out)
		res->rw = RW_NAT_OUT;
	else if (t->inbound != inb)
		res->rw = RW_NAT_IN;
	CHECK(t->packets == in->packets + 1);
	nat_check_tables(in);
}

static void
vt_check_tables(struct inst *in)
{
	const struct vt_counters *c = in->vt.c;
	uint64_t rules = 0;

	for (uint32_t i = 0; i <= in->vt.pol->n_rules; i++)
		rules += c->rule[i].packets;
	CHECK(c->packets ==
	      c->inserted + c->rewritten + c->unchanged + sum_u64(c->dropped, VT_DROP_MAX));
	CHECK(rules == c->packets - c->dropped[VT_DROP_TRUNCATED_L2]);
	CHECK(onvm_ft_count(&in->vt.ft) <= FLOWS * 3 / 4);
}

static void
vt_packet_(struct inst *in, struct rte_mbuf *m, struct result *res)
{
	const struct vt_counters *c = in->vt.c;
	uint64_t ins = c->inserted, rew = c->rewritten, split = c->dropped[VT_DROP_SPLIT_HEADER];

	res->forward = vt_packet(&in->vt, m, in->now) == VT_PASS;
	res->seg_drop = c->dropped[VT_DROP_SPLIT_HEADER] != split;
	if (c->inserted != ins)
		res->rw = RW_VT_INSERT;
	else if (c->rewritten != rew)
		res->rw = RW_VT_REWRITE;
	CHECK(c->packets == in->packets + 1);
	vt_check_tables(in);
}

static void
nd_packet_(struct inst *in, struct rte_mbuf *m, struct result *res)
{
	const struct nd_totals *t = in->nd.t;
	uint64_t calls = in->rand_calls, ph = 0;
	bool nd = nd_packet(&in->nd, m, in->now);

	res->forward = true;
	CHECK(in->rand_calls == calls + (nd ? 1 : 0));
	in->nd_true += nd;
	CHECK(t->packets == in->packets + 1 && t->nd_events == in->nd_true);
	for (uint32_t i = 0; i < in->nd.conf->n_phases; i++)
		ph += t->ph[i].packets;
	CHECK(ph == t->packets);
	CHECK(t->phase < in->nd.conf->n_phases);
	if (!in->nd.conf->schedule && in->nd.conf->phases[0].mode == ND_MODE_COUNT)
		CHECK(nd == (t->packets % in->nd.conf->phases[0].value == 0));
	CHECK(t->untracked + t->non_ip + sum_u64(t->malformed, ONVM_PARSE_REASON_MAX) <=
	      t->packets);
}

/* The tag vlan_tagger must give a frame: the first rule the 5-tuple matches,
 * else the default (also for frames that are not parsed IPv4). */
static void
vt_expected(const struct vt_policy *p, const uint8_t *f, size_t len, uint16_t *vlan, uint8_t *pcp)
{
	struct onvm_pkt_info pi;
	struct onvm_flow_key k;
	int rule = -1;

	if (parse_bytes(f, len, &pi) == ONVM_PARSE_OK) {
		onvm_flow_key_from_info(&pi, &k);
		rule = vt_policy_match(p, &k);
	}
	*vlan = rule < 0 ? p->def_vlan : p->rules[rule].vlan;
	*pcp = rule < 0 ? p->def_pcp : p->rules[rule].pcp;
}

static bool
same_tuple(const struct onvm_pkt_info *a, const struct onvm_pkt_info *b)
{
	return a->src_ip == b->src_ip && a->dst_ip == b->dst_ip && a->sport == b->sport &&
	       a->dport == b->dport && a->proto == b->proto && a->fragment == b->fragment;
}

/* What the NF did to frame f[0..len), against what it should have done. */
static void
check_output(struct inst *in, const uint8_t *f, size_t len, const struct result *res)
{
	const uint8_t *o = res->out;
	struct onvm_pkt_info pi, po;
	enum onvm_parse_reason r = parse_bytes(f, len, &pi);
	enum onvm_parse_reason ro;
	struct span sp[4];
	size_t l2 = pi.l2_len, l4 = (size_t)pi.l2_len + pi.l3_len;
	bool ports = pi.proto == IPPROTO_TCP || pi.proto == IPPROTO_UDP;
	uint16_t vlan = 0;
	uint8_t pcp = 0;

	if (in->cfg->kind == K_VT)
		vt_expected(in->vt.pol, f, len, &vlan, &pcp);
	if (!res->forward)
		return;
	if (res->rw == RW_NONE) {
		/* passed unchanged (vlan_tagger: only with VLAN 0) */
		CHECK(res->len == len && memcmp(o, f, len) == 0);
		CHECK(in->cfg->kind != K_VT || vlan == 0);
		return;
	}
	ro = parse_bytes(o, res->len, &po);
	switch (res->rw) {
	case RW_LB_BALANCED: {
		const struct lb_config *c = in->lb.cfg;
		struct onvm_flow_key k;
		const struct lb_flow *fl;
		const struct lb_backend *be;

		CHECK(r == ONVM_PARSE_OK && ro == ONVM_PARSE_OK && res->len == len);
		CHECK(!c->has_vip || pi.dst_ip == c->vip);
		sp[0] = (struct span){0, 6};
		sp[1] = (struct span){l2 + 10, 2};
		sp[2] = (struct span){l2 + 16, 4};
		sp[3] = (struct span){ports ? l4_cksum_off(&pi) : 0, ports ? 2 : 0};
		check_only(f, o, len, sp, 4);
		onvm_flow_key_from_info(&pi, &k);
		fl = lb_lookup(&in->lb, &k);
		CHECK(fl != NULL && fl->backend < c->n_backends);
		be = &c->backends[fl->backend];
		CHECK(po.dst_ip == be->ip && memcmp(o, be->mac, 6) == 0);
		pi.dst_ip = be->ip;
		CHECK(same_tuple(&pi, &po));
		check_checksums(o, &po);
		break;
	}
	case RW_LB_REPLY:
		CHECK(r == ONVM_PARSE_OK && ro == ONVM_PARSE_OK && res->len == len);
		CHECK(in->lb.cfg->has_vip);
		sp[0] = (struct span){l2 + 10, 2};
		sp[1] = (struct span){l2 + 12, 4};
		sp[2] = (struct span){ports ? l4_cksum_off(&pi) : 0, ports ? 2 : 0};
		check_only(f, o, len, sp, 3);
		pi.src_ip = in->lb.cfg->vip;
		CHECK(same_tuple(&pi, &po));
		check_checksums(o, &po);
		break;
	case RW_NAT_OUT: {
		const struct nat_config *c = in->nat.cfg;
		const struct onvm_flow_key *owner;
		const struct nat_flow *fl;
		struct onvm_flow_key k;

		CHECK(r == ONVM_PARSE_OK && ro == ONVM_PARSE_OK && res->len == len && ports);
		sp[0] = (struct span){l2 + 10, 2};
		sp[1] = (struct span){l2 + 12, 4};
		sp[2] = (struct span){l4, 2};
		sp[3] = (struct span){l4_cksum_off(&pi), 2};
		check_only(f, o, len, sp, 4);
		CHECK(po.src_ip == c->external_ip);
		CHECK(po.sport >= c->port_min && po.sport <= c->port_max);
		onvm_flow_key_from_info(&pi, &k);
		owner = nat_port_owner(&in->nat, po.sport);
		CHECK(owner != NULL && memcmp(owner, &k, sizeof(k)) == 0);
		fl = nat_lookup(&in->nat, &k);
		CHECK(fl != NULL && fl->ext_port == po.sport);
		pi.src_ip = po.src_ip;
		pi.sport = po.sport;
		CHECK(same_tuple(&pi, &po));
		check_checksums(o, &po);
		break;
	}
	case RW_NAT_IN: {
		const struct onvm_flow_key *owner;

		CHECK(r == ONVM_PARSE_OK && ro == ONVM_PARSE_OK && res->len == len && ports);
		CHECK(pi.dst_ip == in->nat.cfg->external_ip);
		sp[0] = (struct span){l2 + 10, 2};
		sp[1] = (struct span){l2 + 16, 4};
		sp[2] = (struct span){l4 + 2, 2};
		sp[3] = (struct span){l4_cksum_off(&pi), 2};
		check_only(f, o, len, sp, 4);
		owner = nat_port_owner(&in->nat, pi.dport);
		CHECK(owner != NULL);
		/* from the mapping's remote end, back to its inside endpoint */
		CHECK(owner->proto == pi.proto && owner->dst_ip == pi.src_ip &&
		      owner->dport == pi.sport);
		pi.dst_ip = owner->src_ip;
		pi.dport = owner->sport;
		CHECK(same_tuple(&pi, &po));
		check_checksums(o, &po);
		break;
	}
	case RW_VT_INSERT:
		CHECK(len >= 14 && res->len == len + 4);
		CHECK(be16(f + 12) != 0x8100 && be16(f + 12) != 0x88a8);
		CHECK(memcmp(o, f, 12) == 0 && be16(o + 12) == VT_TPID);
		CHECK(be16(o + 14) == (uint16_t)(pcp << 13 | vlan)); /* DEI 0 */
		CHECK(memcmp(o + 16, f + 12, len - 12) == 0);
		CHECK(vlan != 0);
		if (r == ONVM_PARSE_OK) {
			CHECK(ro == ONVM_PARSE_OK && po.vlans == 1 && same_tuple(&pi, &po));
			CHECK(po.ip_len == pi.ip_len && po.l3_len == pi.l3_len);
		}
		break;
	case RW_VT_REWRITE:
		CHECK(len >= 16 && res->len == len);
		CHECK(be16(f + 12) == 0x8100 || be16(f + 12) == 0x88a8);
		sp[0] = (struct span){14, 2};
		check_only(f, o, len, sp, 1);
		CHECK((be16(o + 14) & 0x0fff) == vlan && be16(o + 14) >> 13 == pcp);
		CHECK((be16(o + 14) & 0x1000) == (be16(f + 14) & 0x1000)); /* DEI kept */
		CHECK(vlan != 0);
		CHECK(ro == r);
		if (r == ONVM_PARSE_OK)
			CHECK(same_tuple(&pi, &po));
		break;
	default:
		CHECK(!"unknown rewrite");
	}
}

/* ---- runs ---------------------------------------------------------------------------- */

#define MAX_PKTS (2 * MAX_FRAMES) /* each frame and its reply */

static struct result results[2][MAX_PKTS];

static const char *const rw_names[] = {"",	  " balanced",	   " reply->vip",   " nat-out",
				       " nat-in", " tag-inserted", " tag-rewritten"};

static void
maintain(struct inst *in)
{
	switch (in->cfg->kind) {
	case K_LB:
		lb_maintain(&in->lb, in->now);
		lb_check_tables(in);
		break;
	case K_NAT:
		nat_maintain(&in->nat, in->now);
		nat_check_tables(in);
		break;
	case K_VT:
		vt_expire(&in->vt, in->now, 64);
		vt_check_tables(in);
		break;
	case K_ND:
		nd_expire(&in->nd, in->now, 1000ull * 1000000ull, 64);
		break;
	default:
		break;
	}
	check_state(&in->ts);
}

/* The NF's per-reason counters of malformed frames. */
static const uint64_t *
malformed_of(const struct inst *in)
{
	switch (in->cfg->kind) {
	case K_FW:
		return in->fw.st->malformed_reason;
	case K_LB:
		return in->lb.t->malformed;
	case K_NAT:
		return in->nat.t->malformed;
	case K_VT:
		return in->vt.c->malformed;
	case K_ND:
		return in->nd.t->malformed;
	default:
		CHECK(!"no such NF");
		return NULL;
	}
}

/* A malformed frame is counted once, under the parser's reason (SPEC 9:
 * "rejects malformed input with a counted reason"); anything else is not. */
static void
check_counted(const uint64_t *before, const uint64_t *after, enum onvm_parse_reason r)
{
	for (int k = 0; k < ONVM_PARSE_REASON_MAX; k++)
		CHECK(after[k] - before[k] ==
		      (k == (int)r && r != ONVM_PARSE_OK && r != ONVM_PARSE_NOT_IPV4 ? 1u : 0u));
}

static void
feed(struct inst *in, int run, int idx, const uint8_t *f, size_t len, size_t split,
     uint16_t headroom, struct result *res)
{
	struct rte_mbuf *m = frame_mbuf(f, len, split, headroom);
	uint64_t bad[ONVM_PARSE_REASON_MAX];
	struct onvm_pkt_info pi;

	memcpy(bad, malformed_of(in), sizeof(bad));
	res->forward = res->seg_drop = false;
	res->rw = RW_NONE;
	switch (in->cfg->kind) {
	case K_FW:
		fw_packet(in, m, f, len, res);
		break;
	case K_LB:
		lb_packet_(in, m, res);
		break;
	case K_NAT:
		nat_packet_(in, m, res);
		break;
	case K_VT:
		vt_packet_(in, m, res);
		break;
	case K_ND:
		nd_packet_(in, m, res);
		break;
	default:
		CHECK(!"no such NF");
	}
	in->packets++;
	check_counted(bad, malformed_of(in), parse_bytes(f, len, &pi));
	res->len = flatten(m, res->out, sizeof(res->out));
	heap_mbuf_free(m);
	if (print) {
		fprintf(stderr, "fuzz_nf_packets: %s %c #%d (%zu bytes, split %zu): %s, %s%s%s\n",
			in->cfg->name, run ? 'B' : 'A', idx, len, split,
			onvm_parse_reason_str(parse_bytes(f, len, &pi)),
			res->forward ? "forward" : "drop", rw_names[res->rw],
			res->seg_drop ? " (headers split)" : "");
	}
	CHECK(run == 1 || !res->seg_drop); /* one segment always holds the headers */
	check_state(&in->ts);
	check_output(in, f, len, res);
	maintain(in);
}

/* The answer to a rewritten frame: MACs, addresses and ports swapped. */
static size_t
make_reply(const struct result *res, uint8_t *r)
{
	struct onvm_pkt_info pi;
	uint8_t tmp[6];
	size_t l2, l4;

	CHECK(parse_bytes(res->out, res->len, &pi) == ONVM_PARSE_OK);
	memcpy(r, res->out, res->len);
	l2 = pi.l2_len;
	l4 = l2 + pi.l3_len;
	memcpy(tmp, r, 6);
	memcpy(r, r + 6, 6);
	memcpy(r + 6, tmp, 6);
	memcpy(tmp, r + l2 + 12, 4);
	memcpy(r + l2 + 12, r + l2 + 16, 4);
	memcpy(r + l2 + 16, tmp, 4);
	if (pi.proto == IPPROTO_TCP || pi.proto == IPPROTO_UDP) {
		memcpy(tmp, r + l4, 2);
		memcpy(r + l4, r + l4 + 2, 2);
		memcpy(r + l4 + 2, tmp, 2);
	}
	return res->len;
}

/* The reply came back through the NF as it should. */
static void
check_reply(struct inst *in, const uint8_t *orig, size_t len, const struct result *rep)
{
	struct onvm_pkt_info pi, po;

	CHECK(parse_bytes(orig, len, &pi) == ONVM_PARSE_OK);
	if (in->cfg->kind == K_NAT) {
		/* outside -> external_ip:port -> back to the inside endpoint */
		CHECK(rep->forward && rep->rw == RW_NAT_IN);
		CHECK(parse_bytes(rep->out, rep->len, &po) == ONVM_PARSE_OK);
		CHECK(po.dst_ip == pi.src_ip && po.dport == pi.sport);
		CHECK(po.src_ip == pi.dst_ip && po.sport == pi.dport && po.proto == pi.proto);
		return;
	}
	/* lb, VIP mode: the backend's answer leaves from the VIP (unless the
	 * client was the VIP itself: then the answer is a new flow to it). */
	if (pi.src_ip == in->lb.cfg->vip)
		return;
	CHECK(rep->forward && rep->rw == RW_LB_REPLY);
	CHECK(parse_bytes(rep->out, rep->len, &po) == ONVM_PARSE_OK);
	CHECK(po.src_ip == in->lb.cfg->vip && po.dst_ip == pi.src_ip);
	CHECK(po.sport == pi.dport && po.dport == pi.sport);
}

struct frame {
	const uint8_t *p;
	size_t len;
};

/* Run the frames through one instance; returns the number of packets. */
static int
run(struct inst *in, int which, const struct frame *fr, int n, uint8_t split_seed, uint64_t step,
    uint16_t headroom, bool replies)
{
	static uint8_t reply[OUT_MAX];
	int k = 0;

	for (int i = 0; i < n; i++) {
		size_t len = fr[i].len, split = 0;
		struct result *res = &results[which][k];

		in->now += step;
		if (which == 1 && len >= 2)
			split = 1 + split_seed % (len - 1);
		feed(in, which, k++, fr[i].p, len, split, headroom, res);
		if (replies && res->forward &&
		    (res->rw == RW_NAT_OUT || (res->rw == RW_LB_BALANCED && in->lb.cfg->has_vip))) {
			size_t rlen = make_reply(res, reply);
			struct result *rep = &results[which][k];

			if (which == 1 && rlen >= 2)
				split = 1 + split_seed % (rlen - 1);
			feed(in, which, k++, reply, rlen, split, headroom, rep);
			check_reply(in, fr[i].p, len, rep);
		}
	}
	return k;
}

/* A (one segment) and B (two) agree until B drops a frame whose headers it
 * cannot rewrite in the first segment. */
static void
compare_runs(int na, int nb)
{
	for (int k = 0; k < na && k < nb; k++) {
		const struct result *a = &results[0][k], *b = &results[1][k];

		if (b->seg_drop)
			return; /* the states part here */
		if (a->forward != b->forward || a->rw != b->rw ||
		    (a->forward && (a->len != b->len || memcmp(a->out, b->out, a->len) != 0))) {
			fprintf(stderr, "fuzz_nf_packets: packet #%d: one segment %s%s, two %s%s\n",
				k, a->forward ? "forward" : "drop", rw_names[a->rw],
				b->forward ? "forward" : "drop", rw_names[b->rw]);
			if (a->forward && b->forward && a->len == b->len)
				for (size_t i = 0; i < a->len; i++)
					if (a->out[i] != b->out[i]) {
						fprintf(
						    stderr,
						    "fuzz_nf_packets: first differing byte %zu: "
						    "%02x vs %02x\n",
						    i, a->out[i], b->out[i]);
						break;
					}
			CHECK(!"one and two segments disagree");
		}
	}
	CHECK(na == nb);
}

/* ---- dpi ------------------------------------------------------------------------------ */

#ifdef FUZZ_WITH_DPI
#define DPI_FLOWS   64 /* load limit 48: inputs fill it */
#define DPI_HEAP_MB DPI_HEAP_MIN_MB

static struct {
	struct dpi_engine *e;
	struct test_state ts;
	struct dpi_config cfg;
	uint64_t now, packets;
	bool ready;
} dpi;

static void
dpi_setup(void)
{
	struct nf_state_request reqs[3];
	struct dpi_config def = DPI_CONFIG_DEFAULT;

	dpi.e = calloc(1, sizeof(*dpi.e));
	CHECK(dpi.e != NULL);
	dpi.cfg = def;
	dpi.cfg.flows = DPI_FLOWS;
	dpi.cfg.heap_mb = DPI_HEAP_MB;
	dpi.cfg.idle_ns = 2ull * 1000000000ull;
	CHECK(dpi_engine_regions(&dpi.cfg, reqs) == 0);
	CHECK(test_state_init(&dpi.ts, reqs, 3) == 0);
	if (dpi_engine_process_init(dpi.e) != 0 ||
	    dpi_engine_open(dpi.e, &dpi.cfg, &dpi.ts.set,
			    test_state_region(&dpi.ts, DPI_REGION_FLOWS),
			    test_state_region(&dpi.ts, DPI_REGION_TOTALS),
			    test_state_region(&dpi.ts, DPI_REGION_HEAP)) != 0) {
		fprintf(stderr, "fuzz_nf_packets: dpi: %s\n", dpi.e->err);
		CHECK(!"dpi engine does not open");
	}
	check_state(&dpi.ts);
	dpi.now = T0_NS;
	dpi.ready = true;
}

static void
dpi_input(const struct frame *fr, int n, uint8_t split_seed, uint64_t step, uint16_t headroom)
{
	static uint8_t out[OUT_MAX];
	const struct dpi_totals *t;
	/* One batch for the whole input, as the NF batches packets; one batch
	 * per frame (and a commit check after each) when bits 1-2 are set. */
	bool per_frame = (split_seed & 6) == 6;

	if (!dpi.ready)
		dpi_setup();
	t = dpi.e->t;
	dpi_engine_batch_begin(dpi.e);
	for (int i = 0; i < n; i++) {
		size_t len = fr[i].len, split = 0;
		uint64_t bad[ONVM_PARSE_REASON_MAX];
		struct onvm_pkt_info pi;
		struct rte_mbuf *m;

		if ((split_seed & 1) && len >= 2)
			split = 1 + split_seed % (len - 1);
		m = frame_mbuf(fr[i].p, len, split, headroom);
		dpi.now += step + 1000000; /* at least 1 ms */
		memcpy(bad, t->malformed, sizeof(bad));
		dpi_engine_packet(dpi.e, m, dpi.now);
		dpi.packets++;
		check_counted(bad, t->malformed, parse_bytes(fr[i].p, len, &pi));
		/* the engine only reads the frame */
		CHECK(flatten(m, out, sizeof(out)) == len && memcmp(out, fr[i].p, len) == 0);
		heap_mbuf_free(m);
		CHECK(t->packets == dpi.packets);
		CHECK(t->non_ip + t->fragments + t->untracked +
			  sum_u64(t->malformed, ONVM_PARSE_REASON_MAX) <=
		      t->packets);
		CHECK(onvm_ft_count(&dpi.e->flows) <= DPI_FLOWS * 3 / 4);
		if (print)
			fprintf(stderr,
				"fuzz_nf_packets: dpi #%d (%zu bytes, split %zu): %u flows\n", i,
				len, split, onvm_ft_count(&dpi.e->flows));
		if (per_frame) {
			dpi_engine_batch_end(dpi.e);
			check_state(&dpi.ts);
			dpi_engine_batch_begin(dpi.e);
		}
	}
	dpi_engine_expire(dpi.e, dpi.now, 64);
	dpi_engine_batch_end(dpi.e);
	check_state(&dpi.ts);
}
#endif

/* ---- the target ------------------------------------------------------------------------ */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[512];

	(void)argc;
	(void)argv;
	print = getenv("FUZZ_NF_PRINT") != NULL;
	if (getenv("FUZZ_NF_ONLY") != NULL) {
		for (size_t i = 0; i < N_CONFIGS; i++)
			if (strcmp(configs[i].name, getenv("FUZZ_NF_ONLY")) == 0)
				only = (int)i;
		if (only < 0) {
			fprintf(stderr, "fuzz_nf_packets: FUZZ_NF_ONLY: no config named %s\n",
				getenv("FUZZ_NF_ONLY"));
			abort();
		}
	}
#ifdef FUZZ_WITH_DPI
	have_dpi = true;
#endif
	for (size_t i = 0; i < N_CONFIGS; i++) {
		struct config *c = &configs[i];
		const char *t = c->text;
		int rc = 0;

		switch (c->kind) {
		case K_FW:
			rc = fw_config_parse(&c->u.fw, c->name, t, strlen(t), err, sizeof(err));
			break;
		case K_LB:
			rc = lb_config_parse(&c->u.lb, c->name, t, strlen(t), err, sizeof(err));
			break;
		case K_NAT:
			rc = nat_config_parse(&c->u.nat, c->name, t, strlen(t), err, sizeof(err));
			break;
		case K_VT:
			rc = vt_policy_load_text(&c->u.vt, c->name, t, err, sizeof(err));
			break;
		case K_ND:
			rc = c->schedule
				 ? nd_schedule_load_text(&c->u.nd, c->name, t, err, sizeof(err))
				 : nd_conf_parse(&c->u.nd, t, err, sizeof(err));
			break;
		default:
			break;
		}
		if (rc != 0) {
			fprintf(stderr, "fuzz_nf_packets: config %s: %s\n", c->name, err);
			abort();
		}
	}
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct frame fr[MAX_FRAMES];
	const uint8_t *p, *end = data + size;
	struct config *c;
	size_t ci;
	uint64_t step;
	uint16_t headroom;
	bool replies;
	int n = 0, na, nb;

	if (size < HDR_LEN)
		return 0;
	ci = only >= 0 ? (size_t)only : data[0] % N_CONFIGS;
	c = &configs[ci];
	if (c->kind == K_DPI && !have_dpi)
		return 0;
	step = (uint64_t)(data[2] & 0x3f) * STEP_NS;
	headroom = (data[2] & 0x40) ? 0 : HEADROOM;
	replies = !(data[2] & 0x80);

	/* frames: the rest, cut at each separator (the last takes what is left) */
	for (p = data + HDR_LEN; n < MAX_FRAMES;) {
		const uint8_t *s =
		    n + 1 < MAX_FRAMES ? memmem(p, (size_t)(end - p), SEP, sizeof(SEP)) : NULL;
		size_t len = s != NULL ? (size_t)(s - p) : (size_t)(end - p);

		if (len <= MAX_FRAME)
			fr[n++] = (struct frame){p, len};
		if (s == NULL)
			break;
		p = s + sizeof(SEP);
	}

#ifdef FUZZ_WITH_DPI
	if (c->kind == K_DPI) {
		dpi_input(fr, n, data[1], step, headroom);
		return 0;
	}
#endif
	inst_reset(&insts[ci][0], c);
	na = run(&insts[ci][0], 0, fr, n, data[1], step, headroom, replies);
	inst_reset(&insts[ci][1], c);
	nb = run(&insts[ci][1], 1, fr, n, data[1], step, headroom, replies);
	compare_runs(na, nb);
	return 0;
}
