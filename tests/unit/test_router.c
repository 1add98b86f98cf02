/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * test_router.c -- unit tests for the routing decisions in router.c.
 *
 * The shared tables are an ordinary heap copy of struct onvm_shm, filled by
 * hand the way onvm_mgr's init_chains() and nf_ctl fill the real memzone; no
 * EAL, rings or packets are involved.  The fixture is:
 *
 *   port 0 "wan"  ingress of chain 0 "main" = services 1 -> 2, exit port 1
 *   port 1 "lan"  ingress of chain 1 "back" = service 3, exit_drop
 *   port 2        no chain of its own
 *   chain 2 "bypass" = no services, exit port 0
 *   service 1: instances 10, 11, 12; service 2: instance 20; service 3: 30;
 *   service 4: no instance.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <netinet/in.h>

#include "dataplane/router.h"

#define IP(a, b, c, d) (((uint32_t)(a) << 24) | ((uint32_t)(b) << 16) | ((c) << 8) | (d))

enum { CH_MAIN = 0, CH_BACK = 1, CH_BYPASS = 2 };

static struct onvm_shm *
shm_new(void)
{
	struct onvm_shm *s =
	    aligned_alloc(RTE_CACHE_LINE_SIZE, RTE_ALIGN_CEIL(sizeof(*s), RTE_CACHE_LINE_SIZE));

	assert_non_null(s);
	memset(s, 0, sizeof(*s));
	return s;
}

/* exit_port < 0: drop at the end of the chain. */
static void
set_chain(struct onvm_shm *s, uint16_t id, const uint16_t *svcs, uint16_t len, int exit_port)
{
	mgr_chain_set(&s->chains[id], NULL, svcs, len, exit_port);
}

static void
set_port(struct onvm_shm *s, uint16_t port, int chain)
{
	s->ports[port].used = 1;
	s->ports[port].port_id = port;
	s->ports[port].has_default_chain = chain >= 0;
	s->ports[port].default_chain = chain >= 0 ? chain : 0;
}

/* Publish `n` instances of `svc` in the inactive copy, then flip, as nf_ctl does. */
static void
set_instances(struct onvm_shm *s, uint16_t svc, const uint16_t *inst, uint16_t n)
{
	struct onvm_service *sv = &s->services[svc];
	uint32_t next = (sv->active & 1) ^ 1;

	memcpy(sv->inst[next], inst, n * sizeof(inst[0]));
	sv->n[next] = n;
	sv->active = next;
}

/* A wildcard rule sending everything to `chain`; callers narrow it. */
static struct onvm_flow_rule *
add_rule(struct onvm_shm *s, uint16_t chain)
{
	struct onvm_flow_rule *r = &s->rules[s->nb_rules++];

	*r = (struct onvm_flow_rule){
	    .sport_hi = 65535, .dport_hi = 65535, .in_port = 0xff, .chain_id = chain};
	return r;
}

static int
setup(void **state)
{
	static const uint16_t main_svcs[] = {1, 2}, back_svcs[] = {3};
	static const uint16_t s1[] = {10, 11, 12}, s2[] = {20}, s3[] = {30};
	struct onvm_shm *s = shm_new();

	set_chain(s, CH_MAIN, main_svcs, 2, 1);
	set_chain(s, CH_BACK, back_svcs, 1, -1);
	set_chain(s, CH_BYPASS, NULL, 0, 0);
	set_port(s, 0, CH_MAIN);
	set_port(s, 1, CH_BACK);
	set_port(s, 2, -1);
	set_instances(s, 1, s1, 3);
	set_instances(s, 2, s2, 1);
	set_instances(s, 3, s3, 1);
	*state = s;
	return 0;
}

static int
teardown(void **state)
{
	free(*state);
	return 0;
}

/* A TCP packet 10.0.0.1:1234 -> 192.168.1.1:80. */
static struct onvm_pkt_info
tcp_pkt(void)
{
	return (struct onvm_pkt_info){.l2_len = 14,
				      .l3_len = 20,
				      .l4_len = 20,
				      .ip_len = 40,
				      .proto = IPPROTO_TCP,
				      .src_ip = IP(10, 0, 0, 1),
				      .dst_ip = IP(192, 168, 1, 1),
				      .sport = 1234,
				      .dport = 80};
}

static uint32_t
hash_of(const struct onvm_pkt_info *pi)
{
	struct onvm_flow_key k;

	onvm_flow_key_from_info(pi, &k);
	return onvm_flow_key_hash(&k);
}

/* Route an OK-parsed packet in on `port`. */
static struct mgr_dest
ingress(struct onvm_shm *s, struct onvm_pkt_meta *meta, uint16_t port,
	const struct onvm_pkt_info *pi)
{
	struct mgr_dest d;

	memset(meta, 0xee, sizeof(*meta)); /* whatever the previous user left */
	mgr_route_ingress(s, meta, port, ONVM_PARSE_OK, pi, &d);
	return d;
}

static struct mgr_dest
action(struct onvm_shm *s, struct onvm_pkt_meta *meta, uint8_t act, uint16_t destination)
{
	struct mgr_dest d;

	meta->action = act;
	meta->destination = destination;
	mgr_route_action(s, meta, &d);
	return d;
}

/* Metadata of a packet on `chain` at step `index` with hash `hash`. */
static struct onvm_pkt_meta
meta_at(uint16_t chain, uint8_t index, uint32_t hash)
{
	return (struct onvm_pkt_meta){.action = ONVM_ACTION_NEXT,
				      .chain_id = chain,
				      .chain_index = index,
				      .flow_hash = hash,
				      .egress_port = ONVM_PORT_UNSET};
}

static void
assert_nf(struct mgr_dest d, uint16_t id)
{
	assert_int_equal(d.kind, MGR_DEST_NF);
	assert_int_equal(d.id, id);
}

static void
assert_port(struct mgr_dest d, uint16_t port)
{
	assert_int_equal(d.kind, MGR_DEST_PORT);
	assert_int_equal(d.id, port);
}

static void
assert_drop(struct mgr_dest d, enum mgr_drop_reason r)
{
	assert_int_equal(d.kind, MGR_DEST_DROP);
	assert_string_equal(mgr_drop_reason_str(d.reason), mgr_drop_reason_str(r));
}

/* ---- ingress: chain selection ---------------------------------------------------- */

static void
test_ingress_follows_the_ports_chain(void **state)
{
	struct onvm_shm *s = *state;
	struct onvm_pkt_info pi = tcp_pkt();
	struct onvm_pkt_meta m;
	struct mgr_dest d = ingress(s, &m, 1, &pi);

	assert_nf(d, 30);
	assert_int_equal(m.chain_id, CH_BACK);
	assert_int_equal(m.chain_index, 0);
}

static void
test_ingress_initialises_every_metadata_field(void **state)
{
	struct onvm_shm *s = *state;
	struct onvm_pkt_info pi = tcp_pkt();
	struct onvm_pkt_meta m;

	ingress(s, &m, 0, &pi);
	assert_int_equal(m.action, ONVM_ACTION_NEXT);
	assert_int_equal(m.chain_id, CH_MAIN);
	assert_int_equal(m.chain_index, 0);
	assert_int_equal(m.destination, 0);
	assert_int_equal(m.flags, 0);
	assert_int_equal(m.in_port, 0);
	assert_int_equal(m.egress_port, ONVM_PORT_UNSET);
	assert_int_equal(m.flow_hash, hash_of(&pi));
	assert_int_equal(m.ts, 0);
	assert_int_equal(m.chain_run | m.peer_port | m.reserved, 0);
}

static void
test_ingress_without_port_chain_uses_the_default_chain(void **state)
{
	struct onvm_shm *s = *state;
	struct onvm_pkt_info pi = tcp_pkt();
	struct onvm_pkt_meta m;
	struct mgr_dest d;

	s->default_chain = CH_BACK;
	s->has_default_chain = 1;
	d = ingress(s, &m, 2, &pi);
	assert_nf(d, 30);
	assert_int_equal(m.chain_id, CH_BACK);
}

static void
test_ingress_port_chain_beats_the_default_chain(void **state)
{
	struct onvm_shm *s = *state;
	struct onvm_pkt_info pi = tcp_pkt();
	struct onvm_pkt_meta m;

	s->default_chain = CH_BACK;
	s->has_default_chain = 1;
	ingress(s, &m, 0, &pi);
	assert_int_equal(m.chain_id, CH_MAIN);
}

static void
test_ingress_without_any_chain_drops_no_chain(void **state)
{
	struct onvm_shm *s = *state;
	struct onvm_pkt_info pi = tcp_pkt();
	struct onvm_pkt_meta m;

	assert_drop(ingress(s, &m, 2, &pi), MGR_DROP_NO_CHAIN);
}

static void
test_ingress_on_port_beyond_the_table_uses_the_default_chain(void **state)
{
	struct onvm_shm *s = *state;
	struct onvm_pkt_info pi = tcp_pkt();
	struct onvm_pkt_meta m;

	assert_drop(ingress(s, &m, ONVM_MAX_PORTS, &pi), MGR_DROP_NO_CHAIN);
	s->default_chain = CH_BACK;
	s->has_default_chain = 1;
	assert_nf(ingress(s, &m, ONVM_MAX_PORTS, &pi), 30);
}

static void
test_ingress_non_ipv4_skips_rules_and_has_flow_hash_0(void **state)
{
	struct onvm_shm *s = *state;
	struct onvm_pkt_info pi = {.l2_len = 14};
	struct onvm_pkt_meta m;
	struct mgr_dest d;

	add_rule(s, CH_BYPASS); /* would match anything parsed */
	mgr_route_ingress(s, &m, 0, ONVM_PARSE_NOT_IPV4, &pi, &d);
	assert_int_equal(m.chain_id, CH_MAIN);
	assert_int_equal(m.flow_hash, 0);
	assert_nf(d, 10); /* instance list [10, 11, 12], hash 0 */
	assert_int_equal(s->rules[0].hits, 0);
}

static void
test_ingress_unparseable_packet_follows_the_port_chain(void **state)
{
	struct onvm_shm *s = *state;
	struct onvm_pkt_info pi = {.l2_len = 14};
	struct onvm_pkt_meta m;
	struct mgr_dest d;

	add_rule(s, CH_BYPASS);
	mgr_route_ingress(s, &m, 1, ONVM_PARSE_BAD_TOTLEN, &pi, &d);
	assert_nf(d, 30);
	assert_int_equal(m.chain_id, CH_BACK);
}

static void
test_ingress_chain_without_services_goes_straight_to_its_exit(void **state)
{
	struct onvm_shm *s = *state;
	struct onvm_pkt_info pi = tcp_pkt();
	struct onvm_pkt_meta m;

	add_rule(s, CH_BYPASS);
	assert_port(ingress(s, &m, 1, &pi), 0);
	assert_int_equal(m.chain_id, CH_BYPASS);
}

static void
test_ingress_first_step_without_instance_drops_no_instance(void **state)
{
	static const uint16_t svcs[] = {4};
	struct onvm_shm *s = *state;
	struct onvm_pkt_info pi = tcp_pkt();
	struct onvm_pkt_meta m;

	set_chain(s, 3, svcs, 1, 0);
	set_port(s, 2, 3);
	assert_drop(ingress(s, &m, 2, &pi), MGR_DROP_NO_INSTANCE);
}

/* ---- ingress: flow rules --------------------------------------------------------- */

static void
test_ingress_flow_rule_beats_the_port_chain(void **state)
{
	struct onvm_shm *s = *state;
	struct onvm_pkt_info pi = tcp_pkt();
	struct onvm_pkt_meta m;
	struct mgr_dest d;

	add_rule(s, CH_BACK)->dport_lo = 80;
	s->rules[0].dport_hi = 80;
	d = ingress(s, &m, 0, &pi);
	assert_nf(d, 30);
	assert_int_equal(m.chain_id, CH_BACK);
}

static void
test_ingress_first_matching_rule_wins(void **state)
{
	struct onvm_shm *s = *state;
	struct onvm_pkt_info pi = tcp_pkt();
	struct onvm_pkt_meta m;

	add_rule(s, CH_MAIN)->proto = IPPROTO_UDP; /* does not match */
	add_rule(s, CH_BYPASS);			   /* first match */
	add_rule(s, CH_BACK);			   /* matches too, later */
	assert_int_equal(mgr_flow_rule_match(s, 0, &pi), 1);
	ingress(s, &m, 0, &pi);
	assert_int_equal(m.chain_id, CH_BYPASS);
}

static void
test_ingress_counts_hits_on_the_matching_rule_only(void **state)
{
	struct onvm_shm *s = *state;
	struct onvm_pkt_info pi = tcp_pkt();
	struct onvm_pkt_meta m;

	add_rule(s, CH_MAIN)->proto = IPPROTO_UDP;
	add_rule(s, CH_BYPASS);
	add_rule(s, CH_BACK);
	for (int i = 0; i < 5; i++)
		ingress(s, &m, 0, &pi);
	assert_int_equal(s->rules[0].hits, 0);
	assert_int_equal(s->rules[1].hits, 5);
	assert_int_equal(s->rules[2].hits, 0);
}

static void
test_flow_rule_match_without_rules_is_minus_1(void **state)
{
	struct onvm_shm *s = *state;
	struct onvm_pkt_info pi = tcp_pkt();

	assert_int_equal(mgr_flow_rule_match(s, 0, &pi), -1);
}

static void
test_flow_rule_zero_length_prefixes_and_full_ranges_match_anything(void **state)
{
	struct onvm_shm *s = *state;
	struct onvm_pkt_info pi = {.proto = 47, .src_ip = 0xffffffff, .dst_ip = 1};

	add_rule(s, CH_BYPASS);
	assert_int_equal(mgr_flow_rule_match(s, 15, &pi), 0);
	pi = tcp_pkt();
	pi.sport = 65535;
	pi.dport = 0;
	assert_int_equal(mgr_flow_rule_match(s, 0, &pi), 0);
}

static void
test_flow_rule_src_prefix_matches_inside_not_outside(void **state)
{
	struct onvm_shm *s = *state;
	struct onvm_pkt_info pi = tcp_pkt();
	struct onvm_flow_rule *r = add_rule(s, CH_BYPASS);

	r->src_ip = IP(10, 0, 0, 0);
	r->src_mask = 0xff000000; /* 10.0.0.0/8 */
	pi.src_ip = IP(10, 255, 255, 255);
	assert_int_equal(mgr_flow_rule_match(s, 0, &pi), 0);
	pi.src_ip = IP(11, 0, 0, 0);
	assert_int_equal(mgr_flow_rule_match(s, 0, &pi), -1);
	pi.src_ip = IP(9, 255, 255, 255);
	assert_int_equal(mgr_flow_rule_match(s, 0, &pi), -1);
}

static void
test_flow_rule_dst_host_prefix_matches_only_that_host(void **state)
{
	struct onvm_shm *s = *state;
	struct onvm_pkt_info pi = tcp_pkt();
	struct onvm_flow_rule *r = add_rule(s, CH_BYPASS);

	r->dst_ip = IP(192, 168, 1, 1);
	r->dst_mask = 0xffffffff;
	assert_int_equal(mgr_flow_rule_match(s, 0, &pi), 0);
	pi.dst_ip = IP(192, 168, 1, 2);
	assert_int_equal(mgr_flow_rule_match(s, 0, &pi), -1);
}

static void
test_flow_rule_port_ranges_are_inclusive(void **state)
{
	struct onvm_shm *s = *state;
	struct onvm_pkt_info pi = tcp_pkt();
	struct onvm_flow_rule *r = add_rule(s, CH_BYPASS);

	r->sport_lo = 1000;
	r->sport_hi = 2000;
	r->dport_lo = r->dport_hi = 80;
	for (uint16_t sp = 998; sp <= 1001; sp++) {
		pi.sport = sp;
		assert_int_equal(mgr_flow_rule_match(s, 0, &pi), sp >= 1000 ? 0 : -1);
	}
	for (uint16_t sp = 1999; sp <= 2001; sp++) {
		pi.sport = sp;
		assert_int_equal(mgr_flow_rule_match(s, 0, &pi), sp <= 2000 ? 0 : -1);
	}
	pi.sport = 1500;
	pi.dport = 81;
	assert_int_equal(mgr_flow_rule_match(s, 0, &pi), -1);
	pi.dport = 79;
	assert_int_equal(mgr_flow_rule_match(s, 0, &pi), -1);
}

static void
test_flow_rule_protocol_must_match_unless_0(void **state)
{
	struct onvm_shm *s = *state;
	struct onvm_pkt_info pi = tcp_pkt();
	struct onvm_flow_rule *r = add_rule(s, CH_BYPASS);

	r->proto = IPPROTO_UDP;
	assert_int_equal(mgr_flow_rule_match(s, 0, &pi), -1);
	pi.proto = IPPROTO_UDP;
	assert_int_equal(mgr_flow_rule_match(s, 0, &pi), 0);
	r->proto = 0;
	pi.proto = IPPROTO_ICMP;
	assert_int_equal(mgr_flow_rule_match(s, 0, &pi), 0);
}

static void
test_flow_rule_in_port_must_match_unless_0xff(void **state)
{
	struct onvm_shm *s = *state;
	struct onvm_pkt_info pi = tcp_pkt();
	struct onvm_flow_rule *r = add_rule(s, CH_BYPASS);
	struct onvm_pkt_meta m;

	r->in_port = 1;
	assert_int_equal(mgr_flow_rule_match(s, 0, &pi), -1);
	assert_int_equal(mgr_flow_rule_match(s, 1, &pi), 0);
	ingress(s, &m, 0, &pi);
	assert_int_equal(m.chain_id, CH_MAIN);
	ingress(s, &m, 1, &pi);
	assert_int_equal(m.chain_id, CH_BYPASS);
	r->in_port = 0xff;
	assert_int_equal(mgr_flow_rule_match(s, 2, &pi), 0);
}

static void
test_flow_rule_to_unused_chain_drops_no_chain(void **state)
{
	struct onvm_shm *s = *state;
	struct onvm_pkt_info pi = tcp_pkt();
	struct onvm_pkt_meta m;

	add_rule(s, 7);
	assert_drop(ingress(s, &m, 0, &pi), MGR_DROP_NO_CHAIN);
	assert_int_equal(s->rules[0].hits, 1);
}

/* ---- actions: NEXT ---------------------------------------------------------------- */

static void
test_next_walks_the_chain_in_order(void **state)
{
	struct onvm_shm *s = *state;
	struct onvm_pkt_info pi = tcp_pkt();
	struct onvm_pkt_meta m;

	assert_nf(ingress(s, &m, 0, &pi), 10 + mgr_bucket_rank(MGR_FLOW_BUCKET(hash_of(&pi)), 3));
	assert_nf(action(s, &m, ONVM_ACTION_NEXT, 0), 20);
	assert_int_equal(m.chain_index, 1);
}

static void
test_route_next_after_last_step_goes_to_exit_port(void **state)
{
	struct onvm_shm *s = *state;
	struct onvm_pkt_meta m = meta_at(CH_MAIN, 1, 0);

	assert_port(action(s, &m, ONVM_ACTION_NEXT, 0), 1);
	assert_int_equal(m.chain_index, 2);
}

static void
test_next_after_last_step_with_exit_drop_drops_chain_end(void **state)
{
	struct onvm_shm *s = *state;
	struct onvm_pkt_meta m = meta_at(CH_BACK, 0, 0);

	assert_drop(action(s, &m, ONVM_ACTION_NEXT, 0), MGR_DROP_CHAIN_END);
}

static void
test_next_to_exit_port_that_is_not_used_drops_bad_port(void **state)
{
	static const uint16_t svcs[] = {2};
	struct onvm_shm *s = *state;
	struct onvm_pkt_meta m = meta_at(3, 0, 0);

	set_chain(s, 3, svcs, 1, 9);
	assert_drop(action(s, &m, ONVM_ACTION_NEXT, 0), MGR_DROP_BAD_PORT);
}

static void
test_egress_port_chosen_by_an_nf_overrides_the_exit_port(void **state)
{
	struct onvm_shm *s = *state;
	struct onvm_pkt_meta m = meta_at(CH_MAIN, 1, 0);

	m.egress_port = 2;
	assert_port(action(s, &m, ONVM_ACTION_NEXT, 0), 2);
}

static void
test_egress_port_chosen_by_an_nf_overrides_exit_drop(void **state)
{
	struct onvm_shm *s = *state;
	struct onvm_pkt_meta m = meta_at(CH_BACK, 0, 0);

	m.egress_port = 0;
	assert_port(action(s, &m, ONVM_ACTION_NEXT, 0), 0);
}

static void
test_egress_port_is_ignored_before_the_chain_ends(void **state)
{
	struct onvm_shm *s = *state;
	struct onvm_pkt_meta m = meta_at(CH_MAIN, 0, 0);

	m.egress_port = 2;
	assert_nf(action(s, &m, ONVM_ACTION_NEXT, 0), 20);
}

static void
test_egress_port_that_is_not_used_drops_bad_port(void **state)
{
	struct onvm_shm *s = *state;
	struct onvm_pkt_meta m = meta_at(CH_MAIN, 1, 0);

	m.egress_port = 5;
	assert_drop(action(s, &m, ONVM_ACTION_NEXT, 0), MGR_DROP_BAD_PORT);
}

static void
test_next_to_a_step_without_instance_drops_no_instance(void **state)
{
	static const uint16_t svcs[] = {1, 4};
	struct onvm_shm *s = *state;
	struct onvm_pkt_meta m = meta_at(3, 0, 0);

	set_chain(s, 3, svcs, 2, 0);
	assert_drop(action(s, &m, ONVM_ACTION_NEXT, 0), MGR_DROP_NO_INSTANCE);
}

static void
test_next_with_chain_id_beyond_the_table_drops_no_chain(void **state)
{
	struct onvm_shm *s = *state;
	struct onvm_pkt_meta m = meta_at(ONVM_MAX_CHAINS, 0, 0);

	assert_drop(action(s, &m, ONVM_ACTION_NEXT, 0), MGR_DROP_NO_CHAIN);
	m = meta_at(0xffff, 0, 0);
	assert_drop(action(s, &m, ONVM_ACTION_NEXT, 0), MGR_DROP_NO_CHAIN);
}

static void
test_next_with_unused_chain_id_drops_no_chain(void **state)
{
	struct onvm_shm *s = *state;
	struct onvm_pkt_meta m = meta_at(5, 0, 0);

	assert_drop(action(s, &m, ONVM_ACTION_NEXT, 0), MGR_DROP_NO_CHAIN);
}

static void
test_next_with_chain_index_past_the_end_exits_without_wrapping(void **state)
{
	struct onvm_shm *s = *state;
	struct onvm_pkt_meta m = meta_at(CH_MAIN, 255, 0);

	assert_port(action(s, &m, ONVM_ACTION_NEXT, 0), 1);
	assert_int_equal(m.chain_index, 255);
	m = meta_at(CH_MAIN, ONVM_MAX_CHAIN_LEN, 0);
	assert_port(action(s, &m, ONVM_ACTION_NEXT, 0), 1);
	assert_int_equal(m.chain_index, ONVM_MAX_CHAIN_LEN);
}

/* ---- actions: TONF, OUT, DROP ---------------------------------------------------- */

static void
test_tonf_into_the_middle_of_the_chain_continues_from_there(void **state)
{
	static const uint16_t svcs[] = {1, 2, 3};
	struct onvm_shm *s = *state;
	struct onvm_pkt_meta m = meta_at(3, 0, 0);

	set_chain(s, 3, svcs, 3, 2);
	assert_nf(action(s, &m, ONVM_ACTION_TONF, 2), 20);
	assert_int_equal(m.chain_index, 1);
	assert_nf(action(s, &m, ONVM_ACTION_NEXT, 0), 30);
	assert_port(action(s, &m, ONVM_ACTION_NEXT, 0), 2);
}

static void
test_tonf_backwards_in_the_chain_continues_from_there(void **state)
{
	static const uint16_t svcs[] = {1, 2, 3};
	struct onvm_shm *s = *state;
	struct onvm_pkt_meta m = meta_at(3, 2, 0);

	set_chain(s, 3, svcs, 3, 2);
	assert_nf(action(s, &m, ONVM_ACTION_TONF, 1), 10);
	assert_int_equal(m.chain_index, 0);
	assert_nf(action(s, &m, ONVM_ACTION_NEXT, 0), 20);
}

static void
test_tonf_to_a_service_outside_the_chain_keeps_the_position(void **state)
{
	struct onvm_shm *s = *state;
	struct onvm_pkt_meta m = meta_at(CH_MAIN, 0, 0);

	assert_nf(action(s, &m, ONVM_ACTION_TONF, 3), 30);
	assert_int_equal(m.chain_index, 0);
	assert_nf(action(s, &m, ONVM_ACTION_NEXT, 0), 20);
}

static void
test_tonf_and_ingress_pick_the_same_instance_for_a_flow(void **state)
{
	struct onvm_shm *s = *state;
	struct onvm_pkt_info pi = tcp_pkt();

	for (uint16_t sp = 1000; sp < 1010; sp++) {
		struct onvm_pkt_meta m;
		struct mgr_dest first;

		pi.sport = sp;
		first = ingress(s, &m, 0, &pi); /* step 0 is service 1 */
		assert_nf(action(s, &m, ONVM_ACTION_TONF, 1), first.id);
	}
}

static void
test_tonf_to_service_without_instances_drops_no_instance(void **state)
{
	struct onvm_shm *s = *state;
	struct onvm_pkt_meta m = meta_at(CH_MAIN, 0, 0);

	assert_drop(action(s, &m, ONVM_ACTION_TONF, 4), MGR_DROP_NO_INSTANCE);
}

static void
test_tonf_to_service_0_or_beyond_the_table_drops_bad_service(void **state)
{
	struct onvm_shm *s = *state;
	struct onvm_pkt_meta m = meta_at(CH_MAIN, 0, 0);

	assert_drop(action(s, &m, ONVM_ACTION_TONF, 0), MGR_DROP_BAD_SERVICE);
	assert_drop(action(s, &m, ONVM_ACTION_TONF, ONVM_MAX_SERVICES), MGR_DROP_BAD_SERVICE);
	assert_drop(action(s, &m, ONVM_ACTION_TONF, 0xffff), MGR_DROP_BAD_SERVICE);
}

static void
test_tonf_with_chain_id_beyond_the_table_still_reaches_the_service(void **state)
{
	struct onvm_shm *s = *state;
	struct onvm_pkt_meta m = meta_at(0xffff, 3, 0);

	assert_nf(action(s, &m, ONVM_ACTION_TONF, 2), 20);
	assert_int_equal(m.chain_index, 3);
}

static void
test_out_sends_to_the_named_port(void **state)
{
	struct onvm_shm *s = *state;
	struct onvm_pkt_meta m = meta_at(CH_MAIN, 0, 0);

	assert_port(action(s, &m, ONVM_ACTION_OUT, 2), 2);
}

static void
test_out_to_a_port_that_does_not_exist_drops_bad_port(void **state)
{
	struct onvm_shm *s = *state;
	struct onvm_pkt_meta m = meta_at(CH_MAIN, 0, 0);

	assert_drop(action(s, &m, ONVM_ACTION_OUT, 3), MGR_DROP_BAD_PORT);
	assert_drop(action(s, &m, ONVM_ACTION_OUT, ONVM_MAX_PORTS), MGR_DROP_BAD_PORT);
	assert_drop(action(s, &m, ONVM_ACTION_OUT, 0xffff), MGR_DROP_BAD_PORT);
}

static void
test_drop_action_drops_nf_action(void **state)
{
	struct onvm_shm *s = *state;
	struct onvm_pkt_meta m = meta_at(CH_MAIN, 0, 0);

	assert_drop(action(s, &m, ONVM_ACTION_DROP, 0), MGR_DROP_NF_ACTION);
}

static void
test_unknown_action_drops_bad_action(void **state)
{
	struct onvm_shm *s = *state;
	struct onvm_pkt_meta m = meta_at(CH_MAIN, 0, 0);

	assert_drop(action(s, &m, ONVM_ACTION_OUT + 1, 0), MGR_DROP_BAD_ACTION);
	assert_drop(action(s, &m, 0xff, 0), MGR_DROP_BAD_ACTION);
}

static void
test_drop_reason_str_names_every_reason(void **state)
{
	(void)state;
	assert_string_equal(mgr_drop_reason_str(MGR_DROP_RING_FULL), "ring_full");
	assert_string_equal(mgr_drop_reason_str(MGR_DROP_NF_GONE), "nf_gone");
	for (int r = 0; r < MGR_DROP_REASON_MAX; r++) {
		assert_non_null(mgr_drop_reason_str(r));
		assert_string_not_equal(mgr_drop_reason_str(r), "unknown");
		for (int q = 0; q < r; q++)
			assert_string_not_equal(mgr_drop_reason_str(r), mgr_drop_reason_str(q));
	}
	assert_string_equal(mgr_drop_reason_str(MGR_DROP_REASON_MAX), "unknown");
}

/* ---- instance choice (flow affinity) --------------------------------------------- */

static void
test_service_pick_same_flow_hash_same_instance(void **state)
{
	struct onvm_shm *s = *state;

	for (uint32_t h = 0; h < 100; h++) {
		int first = mgr_service_pick(s, 1, h * 2654435761u);

		assert_in_range(first, 10, 12);
		for (int i = 0; i < 3; i++)
			assert_int_equal(mgr_service_pick(s, 1, h * 2654435761u), first);
	}
}

static void
test_service_pick_spreads_flows_over_all_instances(void **state)
{
	struct onvm_shm *s = *state;
	int seen[3] = {0};

	/* Flow hashes are CRCs: spread over all 32 bits. */
	for (uint32_t h = 0; h < 30; h++)
		seen[mgr_service_pick(s, 1, h * 2654435761u) - 10]++;
	assert_true(seen[0] > 0 && seen[1] > 0 && seen[2] > 0);
}

/* Jump consistent hashing: n -> n + 1 ranks moves about 1/(n + 1) of the
 * buckets, every one of them to the new rank; the ranks stay balanced. */
static void
test_bucket_ranks_are_consistent_and_balanced(void **state)
{
	(void)state;
	for (uint16_t n = 1; n <= ONVM_MAX_INSTANCES; n++) {
		unsigned per_rank[ONVM_MAX_INSTANCES] = {0}, moved = 0;

		for (uint32_t b = 0; b < MGR_FLOW_BUCKETS; b++) {
			int r = mgr_bucket_rank(b, n);

			assert_in_range(r, 0, n - 1);
			per_rank[r]++;
			if (n > 1 && r != mgr_bucket_rank(b, n - 1)) {
				assert_int_equal(r, n - 1); /* only to the new rank */
				moved++;
			}
		}
		for (uint16_t r = 0; r < n; r++) /* each within 25 % of 1/n */
			assert_in_range(per_rank[r] * n, MGR_FLOW_BUCKETS * 3 / 4,
					MGR_FLOW_BUCKETS * 5 / 4);
		if (n > 1) /* the new rank's share: about 1/n of the buckets */
			assert_in_range(moved * n, MGR_FLOW_BUCKETS * 3 / 4, MGR_FLOW_BUCKETS * 5 / 4);
	}
	assert_int_equal(mgr_bucket_rank(0, 0), -1);
	assert_int_equal(mgr_bucket_rank(0, ONVM_MAX_INSTANCES + 1), -1);
	assert_int_equal(mgr_bucket_rank(MGR_FLOW_BUCKETS, 2), -1);
	assert_int_equal(mgr_jump_hash(12345, 1), 0);
}

/* A third instance added to a service of two: flows keep their instance
 * unless they move to the new one, and about a third do. */
static void
test_an_added_instance_takes_a_share_and_moves_no_other_flow(void **state)
{
	struct onvm_shm *s = *state;
	struct onvm_service *sv = &s->services[1];
	uint32_t a = sv->active & 1, b = a ^ 1;
	int before[3000];
	unsigned moved = 0;

	/* instances 10 and 11, then 10, 11 and 12 (ranks 0, 1, 2) */
	sv->inst[b][0] = 10;
	sv->inst[b][1] = 11;
	sv->n[b] = 2;
	sv->active = b;
	for (uint32_t h = 0; h < 3000; h++)
		before[h] = mgr_service_pick(s, 1, h * 2654435761u);
	sv->inst[a][0] = 10;
	sv->inst[a][1] = 11;
	sv->inst[a][2] = 12;
	sv->n[a] = 3;
	sv->active = a;
	for (uint32_t h = 0; h < 3000; h++) {
		int now = mgr_service_pick(s, 1, h * 2654435761u);

		if (now != before[h]) {
			assert_int_equal(now, 12);
			moved++;
		}
	}
	assert_in_range(moved, 3000 / 3 * 3 / 4, 3000 / 3 * 5 / 4);
}

static void
test_both_directions_of_a_flow_reach_the_same_instance(void **state)
{
	struct onvm_shm *s = *state;
	struct onvm_pkt_info fwd = tcp_pkt(), rev = tcp_pkt();
	struct onvm_pkt_meta mf, mr;
	struct mgr_dest df, dr;

	rev.src_ip = fwd.dst_ip;
	rev.dst_ip = fwd.src_ip;
	rev.sport = fwd.dport;
	rev.dport = fwd.sport;
	s->default_chain = CH_MAIN;
	s->has_default_chain = 1;
	for (uint16_t sp = 1000; sp < 1020; sp++) {
		fwd.sport = rev.dport = sp;
		df = ingress(s, &mf, 0, &fwd);
		dr = ingress(s, &mr, 2, &rev);
		assert_int_equal(mf.flow_hash, mr.flow_hash);
		assert_nf(df, dr.id);
	}
}

static void
test_service_pick_without_instances_is_minus_1(void **state)
{
	struct onvm_shm *s = *state;

	assert_int_equal(mgr_service_pick(s, 4, 123), -1);
	assert_int_equal(mgr_service_pick(s, 0, 123), -1);
	assert_int_equal(mgr_service_pick(s, ONVM_MAX_SERVICES, 123), -1);
}

static void
test_service_pick_reads_only_the_active_copy(void **state)
{
	struct onvm_shm *s = *state;
	struct onvm_service *sv = &s->services[1];
	uint32_t a = sv->active;

	/* Garbage in the inactive copy must never be seen. */
	sv->n[a ^ 1] = 2;
	sv->inst[a ^ 1][0] = sv->inst[a ^ 1][1] = 63;
	for (uint32_t h = 0; h < 50; h++)
		assert_in_range(mgr_service_pick(s, 1, h), 10, 12);
	sv->active = a ^ 1;
	for (uint32_t h = 0; h < 50; h++)
		assert_int_equal(mgr_service_pick(s, 1, h), 63);
}

/* A flow migration's table (moved[]) decides a bucket's rank instead of
 * jump hashing, in the active copy only; a rank beyond the list routes
 * nowhere (a table left behind by a shrinking list). */
static void
test_service_pick_follows_the_moved_bucket_table(void **state)
{
	struct onvm_shm *s = *state;
	struct onvm_service *sv = &s->services[1];
	uint32_t a = sv->active;
	const uint32_t b7 = 7u << (32 - MGR_FLOW_BUCKET_BITS);

	memset(sv->rank_of[a], 2, sizeof(sv->rank_of[a]));
	sv->rank_of[a][7] = 0;
	sv->rank_of[a][8] = 3; /* n is 3: no such rank */
	sv->moved[a ^ 1] = 1;  /* (the inactive copy's flag: not read) */
	for (uint32_t b = 0; b < MGR_FLOW_BUCKETS; b++)
		assert_int_equal(mgr_service_pick(s, 1, b << (32 - MGR_FLOW_BUCKET_BITS)),
				 sv->inst[a][mgr_bucket_rank(b, 3)]);
	sv->moved[a] = 1;
	assert_int_equal(mgr_service_pick(s, 1, b7), sv->inst[a][0]);
	assert_int_equal(mgr_service_pick(s, 1, b7 + 12345), sv->inst[a][0]);
	assert_int_equal(mgr_service_pick(s, 1, 8u << (32 - MGR_FLOW_BUCKET_BITS)), -1);
	assert_int_equal(mgr_service_pick(s, 1, 9u << (32 - MGR_FLOW_BUCKET_BITS)),
			 sv->inst[a][2]);
	sv->moved[a] = sv->moved[a ^ 1] = 0;
}

static void
test_service_pick_is_deterministic_after_the_instance_set_changes(void **state)
{
	static const uint16_t two[] = {10, 12};
	struct onvm_shm *s = *state;
	int before[64], after[64];

	for (uint32_t h = 0; h < 64; h++)
		before[h] = mgr_service_pick(s, 1, h * 7919u);
	set_instances(s, 1, two, 2); /* instance 11 leaves */
	for (uint32_t h = 0; h < 64; h++) {
		after[h] = mgr_service_pick(s, 1, h * 7919u);
		assert_true(after[h] == 10 || after[h] == 12);
		assert_int_equal(mgr_service_pick(s, 1, h * 7919u), after[h]);
	}
	/* Putting the old set back restores the old mapping exactly. */
	set_instances(s, 1, (const uint16_t[]){10, 11, 12}, 3);
	for (uint32_t h = 0; h < 64; h++)
		assert_int_equal(mgr_service_pick(s, 1, h * 7919u), before[h]);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_ingress_follows_the_ports_chain),
	    T(test_ingress_initialises_every_metadata_field),
	    T(test_ingress_without_port_chain_uses_the_default_chain),
	    T(test_ingress_port_chain_beats_the_default_chain),
	    T(test_ingress_without_any_chain_drops_no_chain),
	    T(test_ingress_on_port_beyond_the_table_uses_the_default_chain),
	    T(test_ingress_non_ipv4_skips_rules_and_has_flow_hash_0),
	    T(test_ingress_unparseable_packet_follows_the_port_chain),
	    T(test_ingress_chain_without_services_goes_straight_to_its_exit),
	    T(test_ingress_first_step_without_instance_drops_no_instance),
	    T(test_ingress_flow_rule_beats_the_port_chain),
	    T(test_ingress_first_matching_rule_wins),
	    T(test_ingress_counts_hits_on_the_matching_rule_only),
	    T(test_flow_rule_match_without_rules_is_minus_1),
	    T(test_flow_rule_zero_length_prefixes_and_full_ranges_match_anything),
	    T(test_flow_rule_src_prefix_matches_inside_not_outside),
	    T(test_flow_rule_dst_host_prefix_matches_only_that_host),
	    T(test_flow_rule_port_ranges_are_inclusive),
	    T(test_flow_rule_protocol_must_match_unless_0),
	    T(test_flow_rule_in_port_must_match_unless_0xff),
	    T(test_flow_rule_to_unused_chain_drops_no_chain),
	    T(test_next_walks_the_chain_in_order),
	    T(test_route_next_after_last_step_goes_to_exit_port),
	    T(test_next_after_last_step_with_exit_drop_drops_chain_end),
	    T(test_next_to_exit_port_that_is_not_used_drops_bad_port),
	    T(test_egress_port_chosen_by_an_nf_overrides_the_exit_port),
	    T(test_egress_port_chosen_by_an_nf_overrides_exit_drop),
	    T(test_egress_port_is_ignored_before_the_chain_ends),
	    T(test_egress_port_that_is_not_used_drops_bad_port),
	    T(test_next_to_a_step_without_instance_drops_no_instance),
	    T(test_next_with_chain_id_beyond_the_table_drops_no_chain),
	    T(test_next_with_unused_chain_id_drops_no_chain),
	    T(test_next_with_chain_index_past_the_end_exits_without_wrapping),
	    T(test_tonf_into_the_middle_of_the_chain_continues_from_there),
	    T(test_tonf_backwards_in_the_chain_continues_from_there),
	    T(test_tonf_to_a_service_outside_the_chain_keeps_the_position),
	    T(test_tonf_and_ingress_pick_the_same_instance_for_a_flow),
	    T(test_tonf_to_service_without_instances_drops_no_instance),
	    T(test_tonf_to_service_0_or_beyond_the_table_drops_bad_service),
	    T(test_tonf_with_chain_id_beyond_the_table_still_reaches_the_service),
	    T(test_out_sends_to_the_named_port),
	    T(test_out_to_a_port_that_does_not_exist_drops_bad_port),
	    T(test_drop_action_drops_nf_action),
	    T(test_unknown_action_drops_bad_action),
	    T(test_drop_reason_str_names_every_reason),
	    T(test_service_pick_same_flow_hash_same_instance),
	    T(test_service_pick_spreads_flows_over_all_instances),
	    T(test_bucket_ranks_are_consistent_and_balanced),
	    T(test_an_added_instance_takes_a_share_and_moves_no_other_flow),
	    T(test_both_directions_of_a_flow_reach_the_same_instance),
	    T(test_service_pick_without_instances_is_minus_1),
	    T(test_service_pick_reads_only_the_active_copy),
	    T(test_service_pick_follows_the_moved_bucket_table),
	    T(test_service_pick_is_deterministic_after_the_instance_set_changes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
