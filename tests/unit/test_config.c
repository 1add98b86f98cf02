/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * test_config.c -- unit tests for the node configuration loader (config.c).
 *
 * SPEC §3: every field has a default, and every bad field gives one error
 * naming the file, line, column and field.  So each rejection test checks the
 * whole "NAME:LINE:COL: PATH" prefix exactly, plus a word of the message.
 *
 * The JSON texts below are written with ' for " so they stay readable; the
 * loader sees real double quotes (one byte each way, so columns do not move).
 * Most offending values sit on a line of their own in the form
 *     <indent>'key': value
 * so the column is easy to check by eye: indent + len(key) + 5.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "config/config.h"

#define NAME "cfg.json"

struct fixture {
	struct mgr_config cfg;
	char err[MGR_CFG_ERR_LEN];
};

static int
setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return -1;
	mgr_config_defaults(&f->cfg);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;

	mgr_config_free(&f->cfg);
	free(f);
	return 0;
}

/* The text with every ' turned into ". Caller frees. */
static char *
dq(const char *text)
{
	char *t = strdup(text);

	assert_non_null(t);
	for (char *p = t; *p != '\0'; p++)
		if (*p == '\'')
			*p = '"';
	return t;
}

static int
load(struct fixture *f, const char *text)
{
	char *t = dq(text);
	int rc;

	f->err[0] = '\0';
	rc = mgr_config_load_string(t, strlen(t), NAME, &f->cfg, f->err, sizeof(f->err));
	free(t);
	return rc;
}

static void
load_ok(struct fixture *f, const char *text)
{
	int rc = load(f, text);

	if (rc != 0)
		fail_msg("unexpected error: %s", f->err);
}

/*
 * The text must be rejected with an error starting "<where>: " (where is
 * "cfg.json:LINE:COL: PATH") and containing `what`.
 */
static void
expect_error(void **state, const char *text, const char *where, const char *what)
{
	struct fixture *f = *state;
	char head[MGR_CFG_ERR_LEN];
	size_t n = strlen(where);

	assert_int_equal(load(f, text), -1);
	snprintf(head, sizeof(head), "%.*s", (int)n + 2, f->err);
	{
		char want[MGR_CFG_ERR_LEN];

		snprintf(want, sizeof(want), "%s: ", where);
		assert_string_equal(head, want);
	}
	if (strstr(f->err, what) == NULL)
		fail_msg("error \"%s\" does not say \"%s\"", f->err, what);
	assert_null(strchr(f->err, '\n'));
}

/* Write `text` to a fresh file in a fresh directory; returns the file path. */
static void
temp_file(const char *text, char *dir, size_t dirlen, char *path, size_t pathlen)
{
	FILE *fp;

	snprintf(dir, dirlen, "/tmp/test_config.XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(path, pathlen, "%s/node.json", dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static void
temp_remove(const char *dir, const char *path)
{
	unlink(path);
	rmdir(dir);
}

/* ---- a valid configuration ------------------------------------------------------- */

static const char full[] =
    "{\n"
    "  'node': {'name': 'edge-1', 'file_prefix': 'e1', 'lcores': '0@0,1@1',\n"
    "           'eal_args': ['--log-level=onvm.*:debug', '--vdev=net_null9']},\n"
    "  'pool': {'mbufs': 8191, 'cache': 128},\n"
    "  'rings': {'nf_size': 512, 'port_size': 256, 'rx_desc': 512, 'tx_desc': 2048},\n"
    "  'units': {'rx': 1, 'tx': 2, 'ctrl': null},\n"
    "  'stats': {'interval_ms': 0},\n"
    "  'idle': {'spin_us': 50, 'max_sleep_us': 2000, 'share_nf_cpus': true},\n"
    "  'nf_defaults': {'start_timeout_ms': 3000, 'cpus': '0-1,3'},\n"
    "  'startup': {'link_wait_ms': 0},\n"
    "  'ports': [\n"
    "    {'name': 'wan', 'dev': 'net_ring0'},\n"
    "    {'dev': 'net_null1', 'rx': false}\n"
    "  ],\n"
    "  'nfs': [\n"
    "    {'name': 'fw', 'binary': '/opt/nf/firewall', 'service': 1, 'instances': 3,\n"
    "     'args': ['-r', 'rules.txt']},\n"
    "    {'binary': 'nfs/nat/nat', 'service': 63}\n"
    "  ],\n"
    "  'chains': [\n"
    "    {'name': 'main', 'services': [1, 63], 'ingress_port': 'wan', 'exit_port': 1},\n"
    "    {'name': 'back', 'services': [63], 'ingress_port': 1},\n"
    "    {'name': 'bypass', 'exit_port': 'wan'}\n"
    "  ],\n"
    "  'flow_rules': [\n"
    "    {'chain': 'bypass', 'src': '198.18.0.0/15', 'dst': '198.19.0.1', 'proto': 'udp',\n"
    "     'sport': [1024, 65535], 'dport': 53, 'in_port': 'wan'},\n"
    "    {'chain': 'back', 'proto': 6, 'dport': 80, 'in_port': 1}\n"
    "  ],\n"
    "  'default_chain': 'main'\n"
    "}\n";

static void
test_full_config_sets_node_and_tunables(void **state)
{
	struct fixture *f = *state;
	struct mgr_config *c = &f->cfg;

	load_ok(f, full);
	assert_string_equal(c->node_name, "edge-1");
	assert_string_equal(c->file_prefix, "e1");
	assert_string_equal(c->lcores, "0@0,1@1");
	assert_int_equal(c->n_eal, 2);
	assert_string_equal(c->eal_args[0], "--log-level=onvm.*:debug");
	assert_string_equal(c->eal_args[1], "--vdev=net_null9");
	assert_int_equal(c->nb_mbufs, 8191);
	assert_int_equal(c->mbuf_cache, 128);
	assert_int_equal(c->nf_ring_size, 512);
	assert_int_equal(c->port_ring_size, 256);
	assert_int_equal(c->rx_desc, 512);
	assert_int_equal(c->tx_desc, 2048);
	assert_int_equal(c->unit_lcore[MGR_UNIT_RX], 1);
	assert_int_equal(c->unit_lcore[MGR_UNIT_TX], 2);
	assert_int_equal(c->unit_lcore[MGR_UNIT_CTRL], -1);
	assert_int_equal(c->stats_interval_ms, 0);
	assert_int_equal(c->idle_spin_us, 50);
	assert_int_equal(c->idle_sleep_max_us, 2000);
	assert_true(c->idle_share_nf_cpus);
	assert_int_equal(c->nf_start_timeout_ms, 3000);
	assert_string_equal(c->nf_cpus, "0-1,3");
	assert_int_equal(c->link_wait_ms, 0);
}

static void
test_full_config_sets_ports_and_nfs(void **state)
{
	struct fixture *f = *state;
	struct mgr_config *c = &f->cfg;

	load_ok(f, full);
	assert_int_equal(c->nports, 2);
	assert_string_equal(c->ports[0].name, "wan");
	assert_string_equal(c->ports[0].dev, "net_ring0");
	assert_false(c->ports[0].no_rx);
	assert_string_equal(c->ports[1].name, "port1"); /* generated */
	assert_string_equal(c->ports[1].dev, "net_null1");
	assert_true(c->ports[1].no_rx);

	assert_int_equal(c->nnfs, 2);
	assert_string_equal(c->nfs[0].name, "fw");
	assert_string_equal(c->nfs[0].binary, "/opt/nf/firewall");
	assert_int_equal(c->nfs[0].service, 1);
	assert_int_equal(c->nfs[0].instances, 3);
	assert_int_equal(c->nfs[0].nargs, 2);
	assert_string_equal(c->nfs[0].args[0], "-r");
	assert_string_equal(c->nfs[0].args[1], "rules.txt");
	assert_string_equal(c->nfs[1].name, "nat"); /* basename of the binary */
	assert_string_equal(c->nfs[1].binary, "nfs/nat/nat");
	assert_int_equal(c->nfs[1].service, 63);
	assert_int_equal(c->nfs[1].instances, 1);
	assert_int_equal(c->nfs[1].nargs, 0);
}

static void
test_full_config_sets_chains_rules_and_default_chain(void **state)
{
	struct fixture *f = *state;
	struct mgr_config *c = &f->cfg;
	const struct mgr_rule_cfg *r;

	load_ok(f, full);
	assert_int_equal(c->nchains, 3);
	assert_string_equal(c->chains[0].name, "main");
	assert_int_equal(c->chains[0].len, 2);
	assert_int_equal(c->chains[0].services[0], 1);
	assert_int_equal(c->chains[0].services[1], 63);
	assert_int_equal(c->chains[0].ingress_port, 0);
	assert_int_equal(c->chains[0].exit_port, 1);
	assert_int_equal(c->chains[1].len, 1);
	assert_int_equal(c->chains[1].ingress_port, 1);
	assert_int_equal(c->chains[1].exit_port, -1);
	assert_int_equal(c->chains[2].len, 0);
	assert_int_equal(c->chains[2].ingress_port, -1);
	assert_int_equal(c->chains[2].exit_port, 0);
	assert_int_equal(mgr_config_chain_index(c, "bypass"), 2);
	assert_int_equal(mgr_config_chain_index(c, "nope"), -1);
	assert_int_equal(mgr_config_port_index(c, "port1"), 1);
	assert_int_equal(mgr_config_port_index(c, "nope"), -1);

	assert_int_equal(c->nrules, 2);
	r = &c->rules[0];
	assert_int_equal(r->chain, 2);
	assert_int_equal(r->src_ip, 0xc6120000);
	assert_int_equal(r->src_mask, 0xfffe0000);
	assert_int_equal(r->dst_ip, 0xc6130001);
	assert_int_equal(r->dst_mask, 0xffffffff);
	assert_int_equal(r->proto, 17);
	assert_int_equal(r->sport_lo, 1024);
	assert_int_equal(r->sport_hi, 65535);
	assert_int_equal(r->dport_lo, 53);
	assert_int_equal(r->dport_hi, 53);
	assert_int_equal(r->in_port, 0);
	r = &c->rules[1];
	assert_int_equal(r->chain, 1);
	assert_int_equal(r->src_mask, 0);
	assert_int_equal(r->dst_mask, 0);
	assert_int_equal(r->proto, 6);
	assert_int_equal(r->sport_lo, 0);
	assert_int_equal(r->sport_hi, 65535);
	assert_int_equal(r->dport_lo, 80);
	assert_int_equal(r->dport_hi, 80);
	assert_int_equal(r->in_port, 1);

	assert_int_equal(c->default_chain, 0);
}

static void
test_flow_rule_prefixes_give_address_and_mask(void **state)
{
	struct fixture *f = *state;

	load_ok(f, "{'ports': [{'dev': 'a'}], 'chains': [{'name': 'c', 'exit_port': 0}],"
		   " 'flow_rules': [{'chain': 'c', 'src': '10.0.0.0/8', 'dst': '0.0.0.0/0'}]}");
	assert_int_equal(f->cfg.rules[0].src_ip, 0x0a000000);
	assert_int_equal(f->cfg.rules[0].src_mask, 0xff000000);
	assert_int_equal(f->cfg.rules[0].dst_ip, 0);
	assert_int_equal(f->cfg.rules[0].dst_mask, 0);
}

static void
test_flow_rule_protocol_names_map_to_numbers(void **state)
{
	struct fixture *f = *state;

	load_ok(f, "{'ports': [{'dev': 'a'}], 'chains': [{'name': 'c', 'exit_port': 0}],"
		   " 'flow_rules': [{'chain': 'c', 'proto': 'tcp'}, {'chain': 'c', 'proto': 'udp'},"
		   " {'chain': 'c', 'proto': 'icmp'}, {'chain': 'c', 'proto': 'any'},"
		   " {'chain': 'c', 'proto': 47}]}");
	assert_int_equal(f->cfg.rules[0].proto, 6);
	assert_int_equal(f->cfg.rules[1].proto, 17);
	assert_int_equal(f->cfg.rules[2].proto, 1);
	assert_int_equal(f->cfg.rules[3].proto, 0);
	assert_int_equal(f->cfg.rules[4].proto, 47);
	assert_int_equal(f->cfg.rules[4].in_port, -1);
}

/* ---- defaults -------------------------------------------------------------------- */

static void
test_defaults_describe_a_node_without_ports_nfs_or_chains(void **state)
{
	struct fixture *f = *state;
	const struct mgr_config *c = &f->cfg;

	assert_string_equal(c->node_name, "node");
	assert_string_equal(c->file_prefix, "");
	assert_string_equal(c->lcores, "");
	assert_int_equal(c->n_eal, 0);
	assert_int_equal(c->nb_mbufs, 16383);
	assert_int_equal(c->mbuf_cache, 256);
	assert_int_equal(c->nf_ring_size, 4096);
	assert_int_equal(c->port_ring_size, 1024);
	assert_int_equal(c->rx_desc, 1024);
	assert_int_equal(c->tx_desc, 1024);
	for (int u = 0; u < MGR_UNIT_MAX; u++)
		assert_int_equal(c->unit_lcore[u], -1);
	assert_int_equal(c->stats_interval_ms, 1000);
	assert_int_equal(c->idle_spin_us, 100);
	assert_int_equal(c->idle_sleep_max_us, 1000);
	assert_false(c->idle_share_nf_cpus);
	assert_int_equal(c->nf_start_timeout_ms, 10000);
	assert_int_equal(c->nf_start_retries, 2);
	assert_int_equal(c->nf_heartbeat_ms, 2000);
	assert_string_equal(c->nf_standby_cpus, "");
	assert_string_equal(c->nf_cpus, "");
	assert_int_equal(c->link_wait_ms, 5000);
	assert_int_equal(c->nports, 0);
	assert_int_equal(c->nnfs, 0);
	assert_int_equal(c->nchains, 0);
	assert_int_equal(c->nrules, 0);
	assert_int_equal(c->default_chain, -1);
}

static void
test_empty_object_keeps_every_default(void **state)
{
	struct fixture *f = *state;
	struct mgr_config *want = calloc(1, sizeof(*want));

	assert_non_null(want);
	mgr_config_defaults(want);
	load_ok(f, "{}");
	assert_memory_equal(&f->cfg, want, sizeof(*want));
	free(want);
}

static void
test_empty_sections_keep_every_default(void **state)
{
	struct fixture *f = *state;
	struct mgr_config *want = calloc(1, sizeof(*want));

	assert_non_null(want);
	mgr_config_defaults(want);
	load_ok(f, "{'node': {}, 'pool': {}, 'rings': {}, 'units': {'rx': null}, 'stats': {},"
		   " 'idle': {}, 'nf_defaults': {}, 'startup': {}, 'ports': [], 'nfs': [],"
		   " 'chains': [], 'flow_rules': [], 'default_chain': null}");
	assert_memory_equal(&f->cfg, want, sizeof(*want));
	free(want);
}

/* ---- syntax ---------------------------------------------------------------------- */

static void
test_syntax_error_names_line_and_column(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'ports': [\n"
		     "    {'dev': 'net_null0'}\n"
		     "    {'dev': 'net_null1'}\n" /* missing ',': '{' at col 5 */
		     "  ]\n"
		     "}\n",
		     NAME ":4:5: syntax", "expected");
}

static void
test_duplicate_keys_are_rejected(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'pool': {'mbufs': 2048,\n"
		     "           'mbufs': 4096}\n" /* key token ends at col 18 */
		     "}\n",
		     NAME ":3:18: syntax", "duplicate");
}

static void
test_top_level_must_be_an_object(void **state)
{
	expect_error(state, "[1, 2]", NAME ":1:1: (top level)", "must be a JSON object");
}

static void
test_empty_file_is_an_error_at_1_1(void **state)
{
	struct fixture *f = *state;
	char dir[64], path[128], want[256];

	temp_file("", dir, sizeof(dir), path, sizeof(path));
	assert_int_equal(mgr_config_load_file(path, &f->cfg, f->err, sizeof(f->err)), -1);
	temp_remove(dir, path);
	snprintf(want, sizeof(want), "%s:1:1: syntax: ", path);
	assert_memory_equal(f->err, want, strlen(want));
	assert_non_null(strstr(f->err, "empty"));
}

/* Jansson reports column 0 for errors found at the end of the input; the
 * positions we print are 1-based everywhere else (json_locate, editors). */
static void
test_syntax_error_at_end_of_text_has_a_1_based_column(void **state)
{
	expect_error(state, "", NAME ":1:1: syntax", "expected");
	expect_error(state, "{\n  'pool': {}\n", NAME ":3:1: syntax", "expected");
}

static void
test_missing_file_is_an_error_naming_it(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(
	    mgr_config_load_file("/nonexistent/node.json", &f->cfg, f->err, sizeof(f->err)), -1);
	assert_non_null(strstr(f->err, "/nonexistent/node.json: cannot open"));
}

/* ---- unknown fields -------------------------------------------------------------- */

static void
test_unknown_top_level_field_is_rejected(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'node': {'name': 'a'},\n"
		     "  'chain': []\n" /* value at col 12 */
		     "}\n",
		     NAME ":3:12: chain", "unknown field");
}

static void
test_unknown_nested_field_is_rejected_with_its_full_path(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'ports': [{'dev': 'net_null0'}],\n"
		     "  'chains': [\n"
		     "    {'name': 'a', 'exit_port': 0},\n"
		     "    {'name': 'b',\n"
		     "     'services': [1],\n"
		     "     'exit_prot': 0}\n" /* value at col 19 */
		     "  ]\n"
		     "}\n",
		     NAME ":7:19: chains[1].exit_prot", "unknown field");
}

static void
test_unknown_field_in_a_section_is_rejected(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'node': {\n"
		     "    'name': 'a',\n"
		     "    'prefix': 'x'\n" /* col 4 + 6 + 5 = 15 */
		     "  }\n"
		     "}\n",
		     NAME ":4:15: node.prefix", "unknown field");
}

/* ---- wrong types ----------------------------------------------------------------- */

static void
test_string_where_an_integer_is_expected(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'pool': {\n"
		     "    'mbufs': '4096'\n" /* col 14 */
		     "  }\n"
		     "}\n",
		     NAME ":3:14: pool.mbufs", "expected an integer 1024..16777216, got a string");
}

static void
test_integer_where_a_string_is_expected(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'nfs': [{\n"
		     "    'binary': 5,\n" /* col 15 */
		     "    'service': 1\n"
		     "  }]\n"
		     "}\n",
		     NAME ":3:15: nfs[0].binary", "expected a string, got an integer");
}

static void
test_array_where_an_object_is_expected(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'rings': [64]\n" /* col 12 */
		     "}\n",
		     NAME ":2:12: rings", "expected an object, got an array");
}

static void
test_object_where_an_array_is_expected(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'nfs': {'binary': 'x', 'service': 1}\n" /* col 10 */
		     "}\n",
		     NAME ":2:10: nfs", "expected an array, got an object");
}

static void
test_string_where_a_port_object_is_expected(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'ports': [\n"
		     "    'net_null0'\n" /* col 5 */
		     "  ]\n"
		     "}\n",
		     NAME ":3:5: ports[0]", "expected a port object, got a string");
}

static void
test_real_where_an_integer_is_expected(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'rings': {\n"
		     "    'nf_size': 512.0\n" /* col 16 */
		     "  }\n"
		     "}\n",
		     NAME ":3:16: rings.nf_size", "got a real number");
}

static void
test_boolean_where_an_integer_is_expected(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'units': {\n"
		     "    'tx': true\n" /* col 11 */
		     "  }\n"
		     "}\n",
		     NAME ":3:11: units.tx", "expected an integer 0..127, got a boolean");
}

static void
test_null_where_an_integer_is_expected(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'nfs': [{\n"
		     "    'binary': 'fw',\n"
		     "    'service': null\n" /* col 16 */
		     "  }]\n"
		     "}\n",
		     NAME ":4:16: nfs[0].service", "got null");
}

static void
test_boolean_where_a_port_reference_is_expected(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'ports': [{'dev': 'a'}],\n"
		     "  'chains': [{\n"
		     "    'name': 'c',\n"
		     "    'exit_port': true\n" /* col 18 */
		     "  }]\n"
		     "}\n",
		     NAME ":5:18: chains[0].exit_port",
		     "expected a port name or index, got a boolean");
}

static void
test_integer_where_a_chain_name_is_expected(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'default_chain': 0\n" /* col 20 */
		     "}\n",
		     NAME ":2:20: default_chain", "expected a chain name, got an integer");
}

static void
test_integer_in_a_string_list_is_rejected(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'node': {\n"
		     "    'eal_args': [\n"
		     "      '-l',\n"
		     "      0\n" /* col 7 */
		     "    ]\n"
		     "  }\n"
		     "}\n",
		     NAME ":5:7: node.eal_args[1]", "expected a string, got an integer");
}

static void
test_port_rx_must_be_a_boolean(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'ports': [{\n"
		     "    'dev': 'net_null0',\n"
		     "    'rx': 'no'\n" /* col 11 */
		     "  }]\n"
		     "}\n",
		     NAME ":4:11: ports[0].rx", "expected a boolean, got a string");
}

static void
test_peer_port_and_peer_only_nf(void **state)
{
	struct fixture *f = *state;

	load_ok(f, "{'ports': [{'dev': 'a'}, {'dev': 'b', 'peer': true}],"
		   " 'nfs': [{'binary': 'x', 'service': 2},"
		   "         {'binary': 'x', 'service': 2, 'peer_only': true}]}");
	assert_false(f->cfg.ports[0].peer);
	assert_true(f->cfg.ports[1].peer);
	assert_false(f->cfg.nfs[0].peer_only);
	assert_true(f->cfg.nfs[1].peer_only);
}

static void
test_peer_only_nf_is_not_scaled(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'nfs': [{\n"
		     "    'binary': 'x', 'service': 2, 'peer_only': true,\n"
		     "    'scale': {'max': 3}\n"
		     "  }]\n"
		     "}\n",
		     NAME ":2:11: nfs[0]", "\"peer_only\" instances are not scaled here");
}

static void
test_peer_must_be_a_boolean(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'ports': [{\n"
		     "    'dev': 'net_null0',\n"
		     "    'peer': 1\n" /* col 13 */
		     "  }]\n"
		     "}\n",
		     NAME ":4:13: ports[0].peer", "expected a boolean, got an integer");
}

/* ---- ranges ---------------------------------------------------------------------- */

static void
test_nf_service_id_above_63_is_out_of_range(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'nfs': [{\n"
		     "    'binary': 'fw',\n"
		     "    'service': 64\n" /* col 16 */
		     "  }]\n"
		     "}\n",
		     NAME ":4:16: nfs[0].service", "64 is out of range 1..63");
}

static void
test_nf_service_id_0_is_out_of_range(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'nfs': [{\n"
		     "    'binary': 'fw',\n"
		     "    'service': 0\n" /* col 16 */
		     "  }]\n"
		     "}\n",
		     NAME ":4:16: nfs[0].service", "0 is out of range 1..63");
}

static void
test_chain_service_id_out_of_range_names_its_index(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'chains': [{\n"
		     "    'name': 'c',\n"
		     "    'services': [1, 2,\n"
		     "                 99]\n" /* col 18 */
		     "  }]\n"
		     "}\n",
		     NAME ":5:18: chains[0].services[2]", "99 is out of range 1..63");
}

static void
test_negative_number_is_out_of_range(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'pool': {\n"
		     "    'cache': -1\n" /* col 14 */
		     "  }\n"
		     "}\n",
		     NAME ":3:14: pool.cache", "-1 is out of range 0..512");
}

static void
test_nf_instances_above_8_is_out_of_range(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'nfs': [{'binary': 'fw', 'service': 1,\n"
		     "    'instances': 9\n" /* col 18 */
		     "  }]\n"
		     "}\n",
		     NAME ":3:18: nfs[0].instances", "9 is out of range 1..8");
}

/* ---- container NFs ---- */

static void
test_container_nf_and_containers_section(void **state)
{
	struct fixture *f = *state;
	const struct mgr_nf_container_cfg *c, *plain;

	load_ok(f, "{\n"
		   "  'containers': {'command': '/usr/bin/podman', 'runtime': 'runc',\n"
		   "                 'ulimits': ['nofile=1024:1024', 'nproc=4096'],\n"
		   "                 'args': ['--security-opt=label=disable']},\n"
		   "  'nfs': [\n"
		   "    {'binary': 'firewall', 'service': 1,\n"
		   "     'container': {'image': 'localhost/nfs:1', 'volumes': ['/srv/fw:/srv/fw:ro'],\n"
		   "                   'args': ['--env=A=1']}},\n"
		   "    {'binary': 'simple_forward', 'service': 2,\n"
		   "     'container': {'image': 'localhost/nfs:1', 'path': '/opt/fwd'}},\n"
		   "    {'binary': 'simple_forward', 'service': 3}\n"
		   "  ]\n"
		   "}\n");
	assert_string_equal(f->cfg.containers.command, "/usr/bin/podman");
	assert_string_equal(f->cfg.containers.runtime, "runc");
	assert_int_equal(f->cfg.containers.nulimits, 2);
	assert_string_equal(f->cfg.containers.ulimits[1], "nproc=4096");
	assert_int_equal(f->cfg.containers.nargs, 1);
	c = &f->cfg.nfs[0].ctr;
	assert_true(c->enabled);
	assert_string_equal(c->image, "localhost/nfs:1");
	assert_string_equal(c->path, "/nf/bin/firewall"); /* where nf-image.sh puts it */
	assert_int_equal(c->nvolumes, 1);
	assert_string_equal(c->volumes[0], "/srv/fw:/srv/fw:ro");
	assert_int_equal(c->nargs, 1);
	assert_string_equal(f->cfg.nfs[1].ctr.path, "/opt/fwd");
	plain = &f->cfg.nfs[2].ctr;
	assert_false(plain->enabled);
}

static void
test_containers_command_defaults_to_podman(void **state)
{
	struct fixture *f = *state;

	load_ok(f, "{'nfs': [{'binary': 'bridge', 'service': 1,\n"
		   "          'container': {'image': 'img'}}]}\n");
	assert_string_equal(f->cfg.containers.command, "podman");
	assert_string_equal(f->cfg.containers.runtime, "");
	assert_int_equal(f->cfg.containers.nulimits, 0);
}

static void
test_container_without_image_is_rejected(void **state)
{
	expect_error(state, "{'nfs': [{'binary': 'bridge', 'service': 1, 'container': {}}]}",
		     NAME ":1:58: nfs[0].container", "image");
}

static void
test_container_image_that_looks_like_an_option_is_rejected(void **state)
{
	expect_error(state,
		     "{'nfs': [{'binary': 'bridge', 'service': 1,\n"
		     "          'container': {'image': '--privileged'}}]}",
		     NAME ":2:34: nfs[0].container.image", "must not start with '-'");
}

static void
test_container_image_with_a_space_is_rejected(void **state)
{
	expect_error(state,
		     "{'nfs': [{'binary': 'bridge', 'service': 1,\n"
		     "          'container': {'image': 'a b'}}]}",
		     NAME ":2:34: nfs[0].container.image", "space");
}

static void
test_container_path_must_be_absolute(void **state)
{
	expect_error(state,
		     "{'nfs': [{'binary': 'bridge', 'service': 1,\n"
		     "          'container': {'image': 'i', 'path': 'nf/bin/bridge'}}]}",
		     NAME ":2:47: nfs[0].container.path", "absolute path");
}

static void
test_container_volume_must_be_host_colon_container(void **state)
{
	expect_error(state,
		     "{'nfs': [{'binary': 'bridge', 'service': 1,\n"
		     "          'container': {'image': 'i', 'volumes': ['/a:/b', 'data:/d']}}]}",
		     NAME ":2:60: nfs[0].container.volumes[1]", "HOST:CONTAINER");
}

static void
test_container_unknown_key_is_rejected(void **state)
{
	expect_error(state,
		     "{'nfs': [{'binary': 'bridge', 'service': 1,\n"
		     "          'container': {'image': 'i', 'privileged': true}}]}",
		     NAME ":2:53: nfs[0].container.privileged", "unknown");
}

static void
test_containers_ulimit_must_be_name_equals_value(void **state)
{
	expect_error(state, "{'containers': {'ulimits': ['nofile']}}",
		     NAME ":1:29: containers.ulimits[0]", "NAME=SOFT[:HARD]");
}

static void
test_container_args_may_not_set_the_pid_namespace(void **state)
{
	expect_error(state,
		     "{'nfs': [{'binary': 'bridge', 'service': 1,\n"
		     "          'container': {'image': 'i', 'args': ['--env=A=1', '--pid=host']}}]}",
		     NAME ":2:61: nfs[0].container.args[1]", "--pid is set by the manager");
}

static void
test_containers_args_may_not_add_an_init(void **state)
{
	expect_error(state, "{'containers': {'args': ['--init']}}",
		     NAME ":1:26: containers.args[0]", "--init is set by the manager");
}

static void
test_containers_args_may_not_set_libnf_variables(void **state)
{
	expect_error(state, "{'containers': {'args': ['-e', 'ONVM_NF_NS_PID=2']}}",
		     NAME ":1:26: containers.args[0]", "ONVM_NF_NS_PID / ONVM_NF_CPUS");
}

static void
test_containers_args_may_not_detach(void **state)
{
	expect_error(state, "{'containers': {'args': ['--detach']}}",
		     NAME ":1:26: containers.args[0]", "--detach is set");
}

static void
test_containers_args_may_not_relabel_the_node(void **state)
{
	expect_error(state, "{'containers': {'args': ['--label=org.reinforce-nfv.node=x']}}",
		     NAME ":1:26: containers.args[0]", "node label");
}

static void
test_container_args_of_the_operator_are_kept(void **state)
{
	struct fixture *f = *state;

	load_ok(f, "{'containers': {'args': ['--pids-limit=64', '--pidfile=/run/x',\n"
		   "   '--label=team=red', '-e', 'TZ=UTC', '--env=LANG=C', '--entrypoint2x',\n"
		   "   '--env=ONVM_NF_FAULT=x:committed:1']}}");
	assert_int_equal(f->cfg.containers.nargs, 8);
}

static void
test_containers_runtime_that_looks_like_an_option_is_rejected(void **state)
{
	expect_error(state, "{'containers': {'runtime': '--privileged'}}",
		     NAME ":1:28: containers.runtime", "must not start with '-'");
}

static void
test_nf_ring_size_not_a_power_of_two_is_rejected(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'rings': {\n"
		     "    'nf_size': 1000\n" /* col 16 */
		     "  }\n"
		     "}\n",
		     NAME ":3:16: rings.nf_size", "power of two");
}

static void
test_port_ring_size_not_a_power_of_two_is_rejected(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'rings': {\n"
		     "    'nf_size': 1024,\n"
		     "    'port_size': 96\n" /* col 18 */
		     "  }\n"
		     "}\n",
		     NAME ":4:18: rings.port_size", "power of two");
}

static void
test_too_many_ports_is_rejected(void **state)
{
	char text[2048] = "{'ports': [";

	for (int i = 0; i <= MGR_CFG_MAX_PORTS; i++)
		snprintf(text + strlen(text), sizeof(text) - strlen(text),
			 "%s{'dev': 'net_null%d'}", i ? ", " : "", i);
	strcat(text, "]}");
	expect_error(state, text, NAME ":1:11: ports", "at most 16 entries allowed, got 17");
}

static void
test_chain_longer_than_8_services_is_rejected(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'chains': [{\n"
		     "    'name': 'c',\n"
		     "    'services': [1, 2, 3, 4, 5, 6, 7, 8, 9]\n" /* col 17 */
		     "  }]\n"
		     "}\n",
		     NAME ":4:17: chains[0].services", "at most 8 entries");
}

/*
 * A service has at most 8 instances (ONVM_MAX_INSTANCES) and a node 64 NF
 * slots (ONVM_MAX_NFS).  A config asking for more must fail here, "without
 * touching anything" (SPEC §3), not after the manager has launched NFs.
 */
static void
test_more_than_8_instances_of_one_service_are_rejected(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(load(f, "{'nfs': [{'binary': 'a', 'service': 1, 'instances': 5},"
				 "         {'binary': 'b', 'service': 1, 'instances': 4}]}"),
			 -1);
	assert_non_null(strstr(f->err, "nfs[1]"));
}

static void
test_more_instances_than_nf_slots_are_rejected(void **state)
{
	struct fixture *f = *state;
	char text[1024] = "{'nfs': [";

	for (int i = 1; i <= 9; i++) /* 9 x 8 = 72 > 64 */
		snprintf(text + strlen(text), sizeof(text) - strlen(text),
			 "%s{'binary': 'nf%d', 'service': %d, 'instances': 8}", i > 1 ? ", " : "",
			 i, i);
	strcat(text, "]}");
	assert_int_equal(load(f, text), -1);
	assert_non_null(strstr(f->err, "nfs[8]"));
}

/* ---- strings and names ----------------------------------------------------------- */

static void
test_empty_string_is_rejected(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'ports': [{\n"
		     "    'dev': ''\n" /* col 12 */
		     "  }]\n"
		     "}\n",
		     NAME ":3:12: ports[0].dev", "must not be empty");
}

static void
test_too_long_name_is_rejected(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'node': {\n"
		     "    'name': 'abcdefghijabcdefghijabcdefghij-32'\n" /* col 13 */
		     "  }\n"
		     "}\n",
		     NAME ":3:13: node.name", "too long (max 31 bytes)");
}

static void
test_node_name_with_a_space_is_rejected(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'node': {\n"
		     "    'name': 'edge 1'\n" /* col 13 */
		     "  }\n"
		     "}\n",
		     NAME ":3:13: node.name", "letters, digits");
}

static void
test_nf_cpus_must_be_a_cpu_list(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'nf_defaults': {\n"
		     "    'cpus': '0-1,x'\n" /* col 13 */
		     "  }\n"
		     "}\n",
		     NAME ":3:13: nf_defaults.cpus", "CPU list");
}

static void
test_nf_standby_cpus_must_be_a_cpu_list(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'nf_defaults': {\n"
		     "    'standby_cpus': '3-1'\n" /* col 21 */
		     "  }\n"
		     "}\n",
		     NAME ":3:21: nf_defaults.standby_cpus", "CPU list");
}

static void
test_heartbeat_is_off_or_at_least_10_ms(void **state)
{
	struct fixture *f = *state;

	expect_error(state, "{'nf_defaults': {'heartbeat_ms': 5}}", NAME ":1:34: nf_defaults.heartbeat_ms",
		     "at least 10");
	load_ok(f, "{'nf_defaults': {'heartbeat_ms': 0, 'standby_cpus': '0,2-3'}}");
	assert_int_equal(f->cfg.nf_heartbeat_ms, 0);
	assert_string_equal(f->cfg.nf_standby_cpus, "0,2-3");
}

static void
test_start_retries_are_bounded(void **state)
{
	struct fixture *f = *state;

	expect_error(state, "{'nf_defaults': {'start_retries': 11}}",
		     NAME ":1:35: nf_defaults.start_retries", "10");
	load_ok(f, "{'nf_defaults': {'start_retries': 0}}");
	assert_int_equal(f->cfg.nf_start_retries, 0);
}

/* ---- required fields ------------------------------------------------------------- */

static void
test_nf_without_binary_points_at_the_nf(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'nfs': [\n"
		     "    {'binary': 'a', 'service': 1},\n"
		     "    {'service': 2}\n" /* '{' at col 5 */
		     "  ]\n"
		     "}\n",
		     NAME ":4:5: nfs[1]", "missing required field \"binary\"");
}

static void
test_nf_without_service_points_at_the_nf(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'nfs': [\n"
		     "    {'binary': 'a'}\n" /* '{' at col 5 */
		     "  ]\n"
		     "}\n",
		     NAME ":3:5: nfs[0]", "missing required field \"service\"");
}

static void
test_port_without_dev_points_at_the_port(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'ports': [\n"
		     "    {'name': 'a'}\n" /* '{' at col 5 */
		     "  ]\n"
		     "}\n",
		     NAME ":3:5: ports[0]", "missing required field \"dev\"");
}

static void
test_chain_without_services_or_exit_port_is_rejected(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'chains': [\n"
		     "    {'name': 'a', 'services': []}\n" /* '{' at col 5 */
		     "  ]\n"
		     "}\n",
		     NAME ":3:5: chains[0]", "needs services or an exit_port");
}

/* ---- names and references -------------------------------------------------------- */

static void
test_duplicate_port_names_are_rejected(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'ports': [\n"
		     "    {'name': 'wan', 'dev': 'a'},\n"
		     "    {'name': 'wan', 'dev': 'b'}\n" /* '{' at col 5 */
		     "  ]\n"
		     "}\n",
		     NAME ":4:5: ports[1]", "duplicate port name \"wan\"");
}

static void
test_port_name_clashing_with_a_generated_name_is_rejected(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'ports': [\n"
		     "    {'dev': 'a'},\n"
		     "    {'name': 'port0', 'dev': 'b'}\n" /* '{' at col 5 */
		     "  ]\n"
		     "}\n",
		     NAME ":4:5: ports[1]", "duplicate port name \"port0\"");
}

static void
test_duplicate_chain_names_are_rejected(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'ports': [{'dev': 'a'}],\n"
		     "  'chains': [\n"
		     "    {'name': 'c', 'exit_port': 0},\n"
		     "    {'name': 'c', 'services': [1]}\n" /* '{' at col 5 */
		     "  ]\n"
		     "}\n",
		     NAME ":5:5: chains[1]", "duplicate chain name \"c\"");
}

static void
test_chain_naming_a_missing_port_is_rejected(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'ports': [{'name': 'wan', 'dev': 'a'}],\n"
		     "  'chains': [{\n"
		     "    'name': 'c',\n"
		     "    'exit_port': 'lan'\n" /* col 18 */
		     "  }]\n"
		     "}\n",
		     NAME ":5:18: chains[0].exit_port", "no port named \"lan\"");
}

static void
test_chain_with_a_port_index_out_of_range_is_rejected(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'ports': [{'dev': 'a'}, {'dev': 'b'}],\n"
		     "  'chains': [{\n"
		     "    'name': 'c',\n"
		     "    'services': [1],\n"
		     "    'ingress_port': 2\n" /* col 21 */
		     "  }]\n"
		     "}\n",
		     NAME ":6:21: chains[0].ingress_port", "port index 2 does not exist (2 ports)");
}

static void
test_two_chains_on_one_ingress_port_are_rejected(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'ports': [{'name': 'wan', 'dev': 'a'}],\n"
		     "  'chains': [\n"
		     "    {'name': 'a', 'services': [1], 'ingress_port': 'wan'},\n"
		     "    {'name': 'b', 'services': [2], 'ingress_port': 0}\n" /* '{' at 5 */
		     "  ]\n"
		     "}\n",
		     NAME ":5:5: chains[1]", "already the ingress of chain \"a\"");
}

static void
test_default_chain_naming_a_missing_chain_is_rejected(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'chains': [{'name': 'main', 'services': [1]}],\n"
		     "  'default_chain': 'mian'\n" /* col 20 */
		     "}\n",
		     NAME ":3:20: default_chain", "no chain named \"mian\"");
}

/* ---- flow rules ------------------------------------------------------------------ */

/* The ports/chains every flow rule case below refers to (lines 1-3). */
#define RULE_HEAD                                                                                  \
	"{\n"                                                                                      \
	"  'ports': [{'name': 'wan', 'dev': 'a'}],\n"                                              \
	"  'chains': [{'name': 'c', 'exit_port': 0}],\n"                                           \
	"  'flow_rules': [{\n"

static void
test_flow_rule_without_chain_points_at_the_rule(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'chains': [{'name': 'c', 'services': [1]}],\n"
		     "  'flow_rules': [\n"
		     "    {'src': '10.0.0.0/8'}\n" /* '{' at col 5 */
		     "  ]\n"
		     "}\n",
		     NAME ":4:5: flow_rules[0]", "missing required field \"chain\"");
}

static void
test_flow_rule_naming_a_missing_chain_is_rejected(void **state)
{
	expect_error(state,
		     RULE_HEAD		  /* lines 1-4 */
		     "    'chain': 'd'\n" /* line 5, col 14 */
		     "  }]\n"
		     "}\n",
		     NAME ":5:14: flow_rules[0].chain", "no chain named \"d\"");
}

static void
test_flow_rule_prefix_length_above_32_is_rejected(void **state)
{
	expect_error(state,
		     RULE_HEAD /* lines 1-4 */
		     "    'chain': 'c',\n"
		     "    'src': '10.0.0.0/33'\n" /* col 12 */
		     "  }]\n"
		     "}\n",
		     NAME ":6:12: flow_rules[0].src", "the length 33 is over 32");
}

static void
test_flow_rule_prefix_without_length_after_slash_is_rejected(void **state)
{
	expect_error(state,
		     RULE_HEAD /* lines 1-4 */
		     "    'chain': 'c',\n"
		     "    'dst': '10.0.0.0/'\n" /* col 12 */
		     "  }]\n"
		     "}\n",
		     NAME ":6:12: flow_rules[0].dst", "the length after '/' is missing");
}

static void
test_flow_rule_bad_address_is_rejected(void **state)
{
	expect_error(state,
		     RULE_HEAD /* lines 1-4 */
		     "    'chain': 'c',\n"
		     "    'dst': '10.0.0.256'\n" /* col 12 */
		     "  }]\n"
		     "}\n",
		     NAME ":6:12: flow_rules[0].dst", "octet \"256\" is over 255");
}

static void
test_flow_rule_prefix_must_be_a_string(void **state)
{
	expect_error(state,
		     RULE_HEAD /* lines 1-4 */
		     "    'chain': 'c',\n"
		     "    'src': 167772160\n" /* col 12 */
		     "  }]\n"
		     "}\n",
		     NAME ":6:12: flow_rules[0].src",
		     "expected an IPv4 prefix string \"a.b.c.d/n\", got an integer");
}

static void
test_flow_rule_reversed_port_range_is_rejected(void **state)
{
	expect_error(state,
		     RULE_HEAD /* lines 1-4 */
		     "    'chain': 'c',\n"
		     "    'proto': 'tcp',\n"
		     "    'dport': [2000, 1000]\n" /* col 14 */
		     "  }]\n"
		     "}\n",
		     NAME ":7:14: flow_rules[0].dport", "range [2000, 1000] is empty (lo > hi)");
}

static void
test_flow_rule_port_range_as_a_string_is_rejected_naming_the_array_form(void **state)
{
	expect_error(state,
		     RULE_HEAD /* lines 1-4 */
		     "    'chain': 'c', 'proto': 'udp',\n"
		     "    'sport': '1000-2000'\n" /* col 14 */
		     "  }]\n"
		     "}\n",
		     NAME ":6:14: flow_rules[0].sport",
		     "a range an inclusive array [lo, hi] (write [1000, 2000])");
}

static void
test_flow_rule_port_as_a_string_is_rejected(void **state)
{
	expect_error(state,
		     RULE_HEAD /* lines 1-4 */
		     "    'chain': 'c', 'proto': 'tcp',\n"
		     "    'dport': '80'\n" /* col 14 */
		     "  }]\n"
		     "}\n",
		     NAME ":6:14: flow_rules[0].dport", "a port is a number 0..65535");
}

static void
test_flow_rule_ports_without_tcp_or_udp_are_rejected(void **state)
{
	expect_error(state,
		     RULE_HEAD /* lines 1-4 */
		     "    'chain': 'c', 'proto': 'any',\n"
		     "    'dport': 53\n" /* col 14 */
		     "  }]\n"
		     "}\n",
		     NAME ":6:14: flow_rules[0].dport",
		     "ports need \"proto\": \"tcp\" or \"udp\" in the same rule");
}

static void
test_flow_rule_prefix_with_host_bits_is_rejected(void **state)
{
	expect_error(state,
		     RULE_HEAD /* lines 1-4 */
		     "    'chain': 'c',\n"
		     "    'src': '10.1.2.3/8'\n" /* col 12 */
		     "  }]\n"
		     "}\n",
		     NAME ":6:12: flow_rules[0].src",
		     "\"10.1.2.3/8\" has host bits set (the network is 10.0.0.0/8)");
}

static void
test_flow_rule_port_above_65535_is_rejected(void **state)
{
	expect_error(state,
		     RULE_HEAD /* lines 1-4 */
		     "    'chain': 'c',\n"
		     "    'proto': 'tcp',\n"
		     "    'sport': 65536\n" /* col 14 */
		     "  }]\n"
		     "}\n",
		     NAME ":7:14: flow_rules[0].sport", "port 65536 is out of range 0..65535");
}

static void
test_flow_rule_port_range_above_65535_is_rejected(void **state)
{
	expect_error(state,
		     RULE_HEAD /* lines 1-4 */
		     "    'chain': 'c',\n"
		     "    'proto': 'tcp',\n"
		     "    'dport': [80, 70000]\n" /* col 19 */
		     "  }]\n"
		     "}\n",
		     NAME ":7:19: flow_rules[0].dport[1]", "port 70000 is out of range 0..65535");
}

static void
test_flow_rule_unknown_protocol_name_is_rejected(void **state)
{
	expect_error(state,
		     RULE_HEAD /* lines 1-4 */
		     "    'chain': 'c',\n"
		     "    'proto': 'sctp'\n" /* col 14 */
		     "  }]\n"
		     "}\n",
		     NAME ":6:14: flow_rules[0].proto", "unknown protocol \"sctp\"");
}

static void
test_flow_rule_protocol_number_above_255_is_rejected(void **state)
{
	expect_error(state,
		     RULE_HEAD /* lines 1-4 */
		     "    'chain': 'c',\n"
		     "    'proto': 256\n" /* col 14 */
		     "  }]\n"
		     "}\n",
		     NAME ":6:14: flow_rules[0].proto", "protocol 256 is out of range 1..255");
}

static void
test_flow_rule_protocol_0_is_rejected(void **state)
{
	expect_error(state,
		     RULE_HEAD /* lines 1-4 */
		     "    'chain': 'c',\n"
		     "    'proto': 0\n" /* col 14 */
		     "  }]\n"
		     "}\n",
		     NAME ":6:14: flow_rules[0].proto", "write \"any\" to match every protocol");
}

static void
test_flow_rule_naming_a_missing_in_port_is_rejected(void **state)
{
	expect_error(state,
		     RULE_HEAD /* lines 1-4 */
		     "    'chain': 'c',\n"
		     "    'in_port': 'lan'\n" /* col 16 */
		     "  }]\n"
		     "}\n",
		     NAME ":6:16: flow_rules[0].in_port", "no port named \"lan\"");
}

/* ---- variables ------------------------------------------------------------------- */

static void
test_environment_variables_expand_in_paths_devices_and_args(void **state)
{
	struct fixture *f = *state;

	setenv("TEST_CONFIG_NF_DIR", "/opt/nfs", 1);
	setenv("TEST_CONFIG_PCAP", "in.pcap", 1);
	load_ok(f, "{'node': {'file_prefix': 'n${TEST_CONFIG_PCAP}x',"
		   "          'eal_args': ['--d=${TEST_CONFIG_NF_DIR}']},"
		   " 'ports': [{'dev': 'net_pcap0,rx_pcap=${TEST_CONFIG_PCAP}'}],"
		   " 'nfs': [{'binary': '${TEST_CONFIG_NF_DIR}/fw', 'service': 1,"
		   "          'args': ['${TEST_CONFIG_PCAP}', 'a${TEST_CONFIG_PCAP}b']}]}");
	unsetenv("TEST_CONFIG_NF_DIR");
	unsetenv("TEST_CONFIG_PCAP");
	assert_string_equal(f->cfg.file_prefix, "nin.pcapx");
	assert_string_equal(f->cfg.eal_args[0], "--d=/opt/nfs");
	assert_string_equal(f->cfg.ports[0].dev, "net_pcap0,rx_pcap=in.pcap");
	assert_string_equal(f->cfg.nfs[0].binary, "/opt/nfs/fw");
	assert_string_equal(f->cfg.nfs[0].args[0], "in.pcap");
	assert_string_equal(f->cfg.nfs[0].args[1], "ain.pcapb");
}

static void
test_undefined_variable_is_an_error_naming_the_field(void **state)
{
	unsetenv("TEST_CONFIG_UNSET");
	expect_error(state,
		     "{\n"
		     "  'nfs': [{\n"
		     "    'service': 1,\n"
		     "    'binary': '${TEST_CONFIG_UNSET}/fw'\n" /* col 15 */
		     "  }]\n"
		     "}\n",
		     NAME ":4:15: nfs[0].binary", "${TEST_CONFIG_UNSET} is not set");
}

static void
test_undefined_variable_in_an_argument_names_its_index(void **state)
{
	unsetenv("TEST_CONFIG_UNSET");
	expect_error(state,
		     "{\n"
		     "  'nfs': [{\n"
		     "    'service': 1, 'binary': 'fw',\n"
		     "    'args': ['-a',\n"
		     "             '${TEST_CONFIG_UNSET}']\n" /* col 14 */
		     "  }]\n"
		     "}\n",
		     NAME ":5:14: nfs[0].args[1]", "${TEST_CONFIG_UNSET} is not set");
}

static void
test_unterminated_variable_is_rejected(void **state)
{
	expect_error(state,
		     "{\n"
		     "  'ports': [{\n"
		     "    'dev': 'net_pcap0,rx_pcap=${HOME'\n" /* col 12 */
		     "  }]\n"
		     "}\n",
		     NAME ":3:12: ports[0].dev", "unterminated ${");
}

static void
test_config_dir_is_the_directory_of_the_config_file(void **state)
{
	struct fixture *f = *state;
	char dir[64], path[128], want[PATH_MAX + 16], real[PATH_MAX];
	char *text = dq("{'nfs': [{'binary': '${CONFIG_DIR}/nfs/fw', 'service': 1}]}");

	temp_file(text, dir, sizeof(dir), path, sizeof(path));
	free(text);
	assert_non_null(realpath(dir, real));
	assert_int_equal(mgr_config_load_file(path, &f->cfg, f->err, sizeof(f->err)), 0);
	temp_remove(dir, path);
	snprintf(want, sizeof(want), "%s/nfs/fw", real);
	assert_string_equal(f->cfg.nfs[0].binary, want);
	assert_string_equal(f->cfg.path, path);
}

/* config.h: "`name` is used in messages and for ${CONFIG_DIR}". */
static void
test_load_string_takes_config_dir_from_the_name(void **state)
{
	struct fixture *f = *state;
	char *text = dq("{'nfs': [{'binary': '${CONFIG_DIR}/fw', 'service': 1}]}");
	int rc = mgr_config_load_string(text, strlen(text), "/etc/onvm/node.json", &f->cfg, f->err,
					sizeof(f->err));

	free(text);
	assert_int_equal(rc, 0);
	assert_string_equal(f->cfg.nfs[0].binary, "/etc/onvm/fw");
}

/* ---- error handling -------------------------------------------------------------- */

static void
test_error_is_cut_to_the_buffer_and_terminated(void **state)
{
	struct fixture *f = *state;
	char *text = dq("{'pool': {'mbufs': 'x'}}");
	char small[16];

	memset(small, 'z', sizeof(small));
	assert_int_equal(
	    mgr_config_load_string(text, strlen(text), NAME, &f->cfg, small, sizeof(small)), -1);
	free(text);
	assert_int_equal(strlen(small), sizeof(small) - 1);
	assert_memory_equal(small, NAME ":1:20: p", sizeof(small) - 1);
}

static void
test_error_after_arguments_were_read_leaks_nothing(void **state)
{
	struct fixture *f = *state;

	/* Checked under ASan: teardown's mgr_config_free() must release them all. */
	assert_int_equal(load(f, "{'node': {'eal_args': ['-a', '-b']},"
				 " 'nfs': [{'binary': 'a', 'service': 1, 'args': ['x', 'y']},"
				 "         {'binary': 'b', 'service': 2, 'args': ['z', 7]}]}"),
			 -1);
	assert_non_null(strstr(f->err, "nfs[1].args[1]"));
	assert_int_equal(f->cfg.n_eal, 2);
	assert_int_equal(f->cfg.nfs[0].nargs, 2);
	assert_int_equal(f->cfg.nfs[1].nargs, 1);
}

static void
test_free_releases_arguments_and_can_be_repeated(void **state)
{
	struct fixture *f = *state;

	load_ok(f, "{'node': {'eal_args': ['-a']}, 'nfs': [{'binary': 'a', 'service': 1,"
		   " 'args': ['x']}]}");
	mgr_config_free(&f->cfg);
	assert_int_equal(f->cfg.n_eal, 0);
	assert_int_equal(f->cfg.nfs[0].nargs, 0);
	mgr_config_free(&f->cfg); /* teardown frees again */
}


/* ---- stateless chains ---------------------------------------------------------- */

#define SL_HEAD "{'ports': [{'name': 'in', 'dev': 'net_null0'}],\n" \
		" 'nfs': [{'binary': 'a', 'service': 1}, {'binary': 'b', 'service': 2}],\n"

static void
test_stateless_chain_full_and_defaults(void **state)
{
	struct fixture *f = *state;
	const struct onvm_store_cfg *st;

	load_ok(f, SL_HEAD " 'chains': [{'name': 's', 'services': [1, 2], 'ingress_port': 'in',\n"
		       "   'exit_port': 'in', 'resiliency': 'stateless',\n"
		       "   'store': {'address': 'unix:/run/r.sock', 'mode': 'sync', 'cache': false,\n"
		       "             'flush_packets': 8, 'pipeline': 16, 'log_packets': 4096}}]}");
	assert_true(f->cfg.chains[0].stateless);
	st = &f->cfg.chains[0].store;
	assert_string_equal(st->addr, "unix:/run/r.sock");
	assert_int_equal(st->mode, ONVM_STORE_SYNC);
	assert_int_equal(st->cache, 0);
	assert_int_equal(st->flush_pkts, 8);
	assert_int_equal(st->flush_us, ONVM_STORE_FLUSH_US_DEFAULT);
	assert_int_equal(st->pipeline, 16);
	assert_int_equal(st->timeout_ms, ONVM_STORE_TIMEOUT_MS_DEFAULT);
	assert_int_equal(st->log_packets, 4096);
	mgr_config_free(&f->cfg);
	mgr_config_defaults(&f->cfg);
	load_ok(f, SL_HEAD " 'chains': [{'name': 's', 'services': [1], 'ingress_port': 'in',\n"
		       "   'exit_port': 'in', 'resiliency': 'stateless', 'store': {'address': 'r1'}}]}");
	st = &f->cfg.chains[0].store;
	assert_int_equal(st->mode, ONVM_STORE_ASYNC);
	assert_int_equal(st->cache, 1);
	assert_int_equal(st->flush_pkts, ONVM_STORE_FLUSH_PKTS_DEFAULT);
	assert_int_equal(st->log_packets, ONVM_STORE_LOG_PACKETS_DEFAULT);
}

static void
test_stateless_chain_bad_values_are_placed(void **state)
{
	expect_error(state, SL_HEAD " 'chains': [{'name': 's', 'services': [1], 'ingress_port': 'in',\n"
		     "   'exit_port': 'in', 'resiliency': 'stateless',\n"
		     "   'store': {'address': 'r', 'mode': 'lazy'}}]}",
		     NAME ":5:38: chains[0].store.mode", "\"lazy\" is not a store mode");
	expect_error(state, SL_HEAD " 'chains': [{'name': 's', 'services': [1], 'ingress_port': 'in',\n"
		     "   'exit_port': 'in', 'resiliency': 'stateless',\n"
		     "   'store': {'address': 'host:99999'}}]}",
		     NAME ":5:25: chains[0].store.address", "the port must be 1..65535");
	expect_error(state, SL_HEAD " 'chains': [{'name': 's', 'services': [1], 'ingress_port': 'in',\n"
		     "   'exit_port': 'in', 'resiliency': 'stateless',\n"
		     "   'store': {'address': 'r', 'flush_packets': 2000}}]}",
		     NAME ":5:47: chains[0].store.flush_packets", "at most half of log_packets");
	expect_error(state, SL_HEAD " 'chains': [{'name': 's', 'services': [1], 'ingress_port': 'in',\n"
		     "   'exit_port': 'in', 'resiliency': 'stateless',\n"
		     "   'store': {'address': 'r', 'pipeline': 0}}]}",
		     NAME ":5:42: chains[0].store.pipeline", "1..4096");
	expect_error(state, SL_HEAD " 'chains': [{'name': 's', 'services': [1], 'ingress_port': 'in',\n"
		     "   'exit_port': 'in', 'resiliency': 'stateless'}]}",
		     NAME ":3:13: chains[0]", "needs a \"store\" object");
	expect_error(state, SL_HEAD " 'chains': [{'name': 's', 'services': [1], 'ingress_port': 'in',\n"
		     "   'exit_port': 'in', 'store': {'address': 'r'}}]}",
		     NAME ":4:32: chains[0].store", "is for a chain with");
	expect_error(state, SL_HEAD " 'chains': [{'name': 's', 'services': [1], 'ingress_port': 'in',\n"
		     "   'resiliency': 'stateless', 'store': {'address': 'r'}}]}",
		     NAME ":3:13: chains[0]", "an exit_port");
	expect_error(state, SL_HEAD " 'chains': [{'name': 's', 'services': [1], 'exit_port': 'in',\n"
		     "   'resiliency': 'remote'}]}",
		     NAME ":4:18: chains[0].resiliency", "not a chain's resiliency mode");
}

/* Behind a remote-resiliency predecessor (docs/design/stateless.md, "A
 * node lost"): its chain id and this node's role. */
static void
test_stateless_chain_predecessor(void **state)
{
	struct fixture *f = *state;

	load_ok(f, SL_HEAD " 'chains': [{'name': 's', 'services': [1], 'ingress_port': 'in',\n"
		       "   'exit_port': 'in', 'resiliency': 'stateless', 'store': {'address': 'r'},\n"
		       "   'predecessor': {'id': 7, 'role': 'spare'}}]}");
	assert_int_equal(f->cfg.chains[0].peer_role, MGR_SL_PEER_SPARE);
	assert_int_equal(f->cfg.chains[0].peer_id, 7);
	expect_error(state, SL_HEAD " 'chains': [{'name': 's', 'services': [1], 'ingress_port': 'in',\n"
		     "   'exit_port': 'in', 'resiliency': 'stateless', 'store': {'address': 'r'},\n"
		     "   'predecessor': {'id': 7, 'role': 'standby'}}]}",
		     NAME ":5:37: chains[0].predecessor.role", "not a role behind a predecessor");
	expect_error(state, SL_HEAD " 'chains': [{'name': 's', 'services': [1], 'ingress_port': 'in',\n"
		     "   'exit_port': 'in', 'resiliency': 'stateless', 'store': {'address': 'r'},\n"
		     "   'predecessor': {'role': 'primary'}}]}",
		     NAME ":5:19: chains[0].predecessor", "needs the \"id\"");
	expect_error(state, SL_HEAD " 'chains': [{'name': 's', 'services': [1], 'ingress_port': 'in',\n"
		     "   'exit_port': 'in', 'resiliency': 'stateless', 'store': {'address': 'r'},\n"
		     "   'predecessor': {'id': 0, 'role': 'primary'}}]}",
		     NAME ":5:26: chains[0].predecessor.id", "1..65535");
	expect_error(state, SL_HEAD " 'chains': [{'name': 's', 'services': [1], 'ingress_port': 'in',\n"
		     "   'exit_port': 'in', 'predecessor': {'id': 7, 'role': 'primary'}}]}",
		     NAME ":4:38: chains[0].predecessor", "is for a chain with");
}

static void
test_stateless_chain_services_are_its_own(void **state)
{
	expect_error(state, SL_HEAD " 'chains': [{'name': 'o', 'services': [1], 'exit_port': 'in'},\n"
		     "  {'name': 's', 'services': [1, 2], 'ingress_port': 'in', 'exit_port': 'in',\n"
		     "   'resiliency': 'stateless', 'store': {'address': 'r'}}]}",
		     NAME ":4:3: chains[1]", "service 1 is in chain \"o\" too");
	expect_error(state,
		     "{'ports': [{'name': 'in', 'dev': 'net_null0'}],\n"
		     " 'nfs': [{'binary': 'a', 'service': 1, 'instances': 2}],\n"
		     " 'chains': [{'name': 's', 'services': [1], 'ingress_port': 'in', 'exit_port': 'in',\n"
		     "   'resiliency': 'stateless', 'store': {'address': 'r'}}]}",
		     NAME ":3:13: chains[0]", "runs 2 instances: one only");
	expect_error(state,
		     "{'ports': [{'name': 'in', 'dev': 'net_null0'}],\n"
		     " 'nfs': [{'binary': 'a', 'service': 1, 'resiliency': 'local'}],\n"
		     " 'chains': [{'name': 's', 'services': [1], 'ingress_port': 'in', 'exit_port': 'in',\n"
		     "   'resiliency': 'stateless', 'store': {'address': 'r'}}]}",
		     NAME ":3:13: chains[0]", "its state is in the store");
}

/* ---- FTC chains ------------------------------------------------------------------ */

#define FTC_HEAD "{'ports': [{'name': 'in', 'dev': 'net_null0'}, {'name': 'out', 'dev': 'net_null1'},\n" \
		 "           {'name': 'back', 'dev': 'net_null2'}],\n" \
		 " 'nfs': [{'binary': 'a', 'service': 1}],\n"

static void
test_ftc_chain_full_and_defaults(void **state)
{
	struct fixture *f = *state;
	const struct mgr_ftc_cfg *fc;

	load_ok(f, FTC_HEAD " 'chains': [{'name': 'c', 'services': [1], 'ingress_port': 'in',\n"
			"   'exit_port': 'out', 'resiliency': 'ftc',\n"
			"   'ftc': {'id': 9, 'f': 2, 'position': 0, 'nf_nodes': 3, 'feedback_port': 'back',\n"
			"           'propagate_us': 200, 'mtu': 9000}}]}");
	fc = &f->cfg.chains[0].ftc;
	assert_true(f->cfg.chains[0].is_ftc);
	assert_int_equal(fc->id, 9);
	assert_int_equal(fc->f, 2);
	assert_int_equal(fc->position, 0);
	assert_int_equal(fc->nf_nodes, 3);
	assert_int_equal(fc->feedback_port, 2);
	assert_int_equal(fc->propagate_us, 200);
	assert_int_equal(fc->mtu, 9000);
	assert_int_equal(fc->retrans_us, 5000);
	assert_int_equal(fc->window, 16);
	assert_int_equal(fc->state_port, -1);
	assert_false(fc->recover);
	mgr_config_free(&f->cfg);
	mgr_config_defaults(&f->cfg);
	/* a middle node: no feedback link; a replica-only node: no NF */
	load_ok(f, FTC_HEAD " 'chains': [{'name': 'c', 'services': [1], 'ingress_port': 'in',\n"
			"   'exit_port': 'out', 'resiliency': 'ftc',\n"
			"   'ftc': {'id': 9, 'f': 1, 'position': 1, 'nf_nodes': 3}}]}");
	assert_int_equal(f->cfg.chains[0].ftc.feedback_port, -1);
	/* room for a full-size (1514-byte) frame beside its FTC entries */
	assert_int_equal(f->cfg.chains[0].ftc.mtu, 1900);
	mgr_config_free(&f->cfg);
	mgr_config_defaults(&f->cfg);
	load_ok(f, FTC_HEAD " 'chains': [{'name': 'c', 'services': [], 'ingress_port': 'in',\n"
			"   'exit_port': 'out', 'resiliency': 'ftc',\n"
			"   'ftc': {'id': 9, 'f': 1, 'position': 3, 'nf_nodes': 3, 'feedback_port': 2}}]}");
	assert_int_equal(f->cfg.chains[0].ftc.position, 3);
	mgr_config_free(&f->cfg);
	mgr_config_defaults(&f->cfg);
	/* a node taking a failed one's place: its NF's state from position 3 */
	load_ok(f, FTC_HEAD " 'chains': [{'name': 'c', 'services': [1], 'ingress_port': 'in',\n"
			"   'exit_port': 'out', 'resiliency': 'ftc',\n"
			"   'ftc': {'id': 9, 'f': 2, 'position': 1, 'nf_nodes': 3, 'state_port': 'back',\n"
			"           'recover': true, 'recover_from': [3]}}]}");
	fc = &f->cfg.chains[0].ftc;
	assert_true(fc->recover);
	assert_int_equal(fc->state_port, 2);
	assert_int_equal(fc->n_recover_from, 1);
	assert_int_equal(fc->recover_from[0], 3);
}

static void
test_ftc_chain_bad_values_are_placed(void **state)
{
	/* past the last node: nf_nodes + f - 1 */
	expect_error(state, FTC_HEAD " 'chains': [{'name': 'c', 'services': [], 'ingress_port': 'in',\n"
		     "   'exit_port': 'out', 'resiliency': 'ftc',\n"
		     "   'ftc': {'id': 9, 'f': 1, 'position': 4, 'nf_nodes': 3}}]}",
		     NAME ":6:41: chains[0].ftc.position", "0..3");
	expect_error(state, FTC_HEAD " 'chains': [{'name': 'c', 'services': [1], 'ingress_port': 'in',\n"
		     "   'exit_port': 'out', 'resiliency': 'ftc',\n"
		     "   'ftc': {'id': 9, 'f': 5, 'position': 1, 'nf_nodes': 3}}]}",
		     NAME ":6:26: chains[0].ftc.f", "1..4");
	expect_error(state, FTC_HEAD " 'chains': [{'name': 'c', 'services': [1], 'ingress_port': 'in',\n"
		     "   'exit_port': 'out', 'resiliency': 'ftc',\n"
		     "   'ftc': {'id': 9, 'position': 1, 'nf_nodes': 3}}]}",
		     NAME ":6:11: chains[0].ftc", "needs \"f\"");
	expect_error(state, FTC_HEAD " 'chains': [{'name': 'c', 'services': [1], 'ingress_port': 'in',\n"
		     "   'exit_port': 'out', 'resiliency': 'ftc'}]}",
		     NAME ":4:13: chains[0]", "needs an \"ftc\" object");
	/* a replica-only node runs no NF, an NF node one */
	expect_error(state, FTC_HEAD " 'chains': [{'name': 'c', 'services': [1], 'ingress_port': 'in',\n"
		     "   'exit_port': 'out', 'resiliency': 'ftc',\n"
		     "   'ftc': {'id': 9, 'f': 1, 'position': 3, 'nf_nodes': 3, 'feedback_port': 'back'}}]}",
		     NAME ":4:13: chains[0]", "runs replicas only");
	expect_error(state, FTC_HEAD " 'chains': [{'name': 'c', 'services': [], 'ingress_port': 'in',\n"
		     "   'exit_port': 'out', 'resiliency': 'ftc',\n"
		     "   'ftc': {'id': 9, 'f': 1, 'position': 1, 'nf_nodes': 3}}]}",
		     NAME ":4:13: chains[0]", "runs one NF");
	/* the feedback link: first and last node only, a port of its own */
	expect_error(state, FTC_HEAD " 'chains': [{'name': 'c', 'services': [1], 'ingress_port': 'in',\n"
		     "   'exit_port': 'out', 'resiliency': 'ftc',\n"
		     "   'ftc': {'id': 9, 'f': 1, 'position': 0, 'nf_nodes': 3}}]}",
		     NAME ":6:11: chains[0].ftc.feedback_port", "need the feedback_port");
	expect_error(state, FTC_HEAD " 'chains': [{'name': 'c', 'services': [1], 'ingress_port': 'in',\n"
		     "   'exit_port': 'out', 'resiliency': 'ftc',\n"
		     "   'ftc': {'id': 9, 'f': 1, 'position': 1, 'nf_nodes': 3, 'feedback_port': 'back'}}]}",
		     NAME ":6:76: chains[0].ftc.feedback_port", "only the first and the last");
	expect_error(state, FTC_HEAD " 'chains': [{'name': 'c', 'services': [1], 'ingress_port': 'in',\n"
		     "   'exit_port': 'out', 'resiliency': 'ftc',\n"
		     "   'ftc': {'id': 9, 'f': 1, 'position': 0, 'nf_nodes': 3, 'feedback_port': 'out'}}]}",
		     NAME ":6:76: chains[0].ftc.feedback_port", "a port of its own");
	expect_error(state, FTC_HEAD " 'chains': [{'name': 'c', 'services': [1], 'ingress_port': 'in',\n"
		     "   'exit_port': 'out', 'resiliency': 'ftc', 'store': {'address': 'r'},\n"
		     "   'ftc': {'id': 9, 'f': 1, 'position': 1, 'nf_nodes': 3}}]}",
		     NAME ":5:54: chains[0].store", "no store");
	expect_error(state, FTC_HEAD " 'chains': [{'name': 'c', 'services': [1], 'ingress_port': 'in',\n"
		     "   'exit_port': 'out',\n"
		     "   'ftc': {'id': 9, 'f': 1, 'position': 1, 'nf_nodes': 3}}]}",
		     NAME ":6:11: chains[0].ftc", "is for a chain with");
	expect_error(state, FTC_HEAD " 'chains': [{'name': 'c', 'services': [1], 'ingress_port': 'in',\n"
		     "   'resiliency': 'ftc',\n"
		     "   'ftc': {'id': 9, 'f': 1, 'position': 1, 'nf_nodes': 3}}]}",
		     NAME ":4:13: chains[0]", "an ingress_port and an exit_port");
	expect_error(state,
		     "{'ports': [{'name': 'in', 'dev': 'net_null0'}, {'name': 'out', 'dev': 'net_null1'}],\n"
		     " 'nfs': [{'binary': 'a', 'service': 1, 'instances': 2}],\n"
		     " 'chains': [{'name': 'c', 'services': [1], 'ingress_port': 'in', 'exit_port': 'out',\n"
		     "   'resiliency': 'ftc', 'ftc': {'id': 9, 'f': 1, 'position': 1, 'nf_nodes': 3}}]}",
		     NAME ":3:13: chains[0]", "one instance, not 2");
	/* recovery: a state network, and where an NF's state comes from */
	expect_error(state, FTC_HEAD " 'chains': [{'name': 'c', 'services': [1], 'ingress_port': 'in',\n"
		     "   'exit_port': 'out', 'resiliency': 'ftc',\n"
		     "   'ftc': {'id': 9, 'f': 1, 'position': 1, 'nf_nodes': 3, 'recover': true,\n"
		     "           'recover_from': [2]}}]}",
		     NAME ":6:11: chains[0].ftc", "needs a state_port");
	expect_error(state, FTC_HEAD " 'chains': [{'name': 'c', 'services': [1], 'ingress_port': 'in',\n"
		     "   'exit_port': 'out', 'resiliency': 'ftc',\n"
		     "   'ftc': {'id': 9, 'f': 1, 'position': 1, 'nf_nodes': 3, 'recover': true,\n"
		     "           'state_port': 'back'}}]}",
		     NAME ":6:11: chains[0].ftc", "needs \"recover_from\"");
	expect_error(state, FTC_HEAD " 'chains': [{'name': 'c', 'services': [1], 'ingress_port': 'in',\n"
		     "   'exit_port': 'out', 'resiliency': 'ftc',\n"
		     "   'ftc': {'id': 9, 'f': 1, 'position': 1, 'nf_nodes': 3, 'recover': true,\n"
		     "           'state_port': 'back', 'recover_from': [3]}}]}",
		     NAME ":7:51: chains[0].ftc.recover_from[0]", "2..2");
	expect_error(state, FTC_HEAD " 'chains': [{'name': 'c', 'services': [1], 'ingress_port': 'in',\n"
		     "   'exit_port': 'out', 'resiliency': 'ftc',\n"
		     "   'ftc': {'id': 9, 'f': 1, 'position': 1, 'nf_nodes': 3, 'recover_from': [2]}}]}",
		     NAME ":6:75: chains[0].ftc.recover_from", "is for a node with");
	expect_error(state, FTC_HEAD " 'chains': [{'name': 'o', 'services': [1], 'exit_port': 'in'},\n"
		     "  {'name': 'c', 'services': [1], 'ingress_port': 'in', 'exit_port': 'out',\n"
		     "   'resiliency': 'ftc', 'ftc': {'id': 9, 'f': 1, 'position': 1, 'nf_nodes': 3}}]}",
		     NAME ":5:3: chains[1]", "an FTC chain's services are its own");
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

/* ---- bfd.sessions ------------------------------------------------------------ */

#define BFD_PORTS "{'ports': [{'name': 'link', 'dev': 'net_null0'},\n" \
		  "           {'name': 'out', 'dev': 'net_null1', 'rx': false}],\n"

static void
test_bfd_session_full_and_defaults(void **state)
{
	struct fixture *f = *state;
	const struct mgr_bfd_cfg *b;

	load_ok(f, BFD_PORTS
		" 'bfd': {'sessions': [\n"
		"  {'name': 'to_b', 'port': 'link', 'local': '198.18.0.1', 'peer': '198.18.0.2',\n"
		"   'peer_mac': '02:00:0A:bc:de:f0', 'desired_min_tx_us': 10000,\n"
		"   'required_min_rx_us': 20000, 'detect_mult': 5, 'admin_down': true,\n"
		"   'auth': {'type': 'meticulous-keyed-sha1', 'key_id': 9, 'key': 'secret'}},\n"
		"  {'name': 'dflt', 'port': 0, 'local': '198.18.0.1', 'peer': '198.18.0.3'}]}}");
	assert_int_equal(f->cfg.nbfd, 2);
	b = &f->cfg.bfd[0];
	assert_string_equal(b->name, "to_b");
	assert_int_equal(b->port, 0);
	assert_int_equal(b->local_ip, 0xc6120001);
	assert_int_equal(b->peer_ip, 0xc6120002);
	assert_true(b->peer_mac_static);
	assert_memory_equal(b->peer_mac, ((uint8_t[]){0x02, 0x00, 0x0a, 0xbc, 0xde, 0xf0}), 6);
	assert_int_equal(b->desired_min_tx_us, 10000);
	assert_int_equal(b->required_min_rx_us, 20000);
	assert_int_equal(b->detect_mult, 5);
	assert_true(b->admin_down);
	assert_int_equal(b->auth_type, 5);
	assert_int_equal(b->auth_key_id, 9);
	assert_int_equal(b->auth_key_len, 6);
	assert_memory_equal(b->auth_key, "secret", 6);
	b = &f->cfg.bfd[1];
	assert_false(b->peer_mac_static);
	assert_int_equal(b->desired_min_tx_us, 300000);
	assert_int_equal(b->required_min_rx_us, 300000);
	assert_int_equal(b->detect_mult, 3);
	assert_false(b->admin_down);
	assert_int_equal(b->auth_type, 0);
}

static void
test_bfd_session_errors(void **state)
{
	static const struct {
		const char *session; /* on line 4 of the text, from column 3 */
		const char *where;
		const char *what;
	} cases[] = {
	    {"{'port': 'link', 'local': '198.18.0.1', 'peer': '198.18.0.2'}",
	     "cfg.json:4:3: bfd.sessions[0]", "\"name\""},
	    {"{'name': 'a', 'local': '198.18.0.1', 'peer': '198.18.0.2'}",
	     "cfg.json:4:3: bfd.sessions[0]", "\"port\""},
	    {"{'name': 'a', 'port': 'link', 'peer': '198.18.0.2'}",
	     "cfg.json:4:3: bfd.sessions[0]", "\"local\""},
	    {"{'name': 'a-b', 'port': 'link', 'local': '198.18.0.1', 'peer': '198.18.0.2'}",
	     "cfg.json:4:3: bfd.sessions[0]", "letters, digits or '_'"},
	    {"{'name': 'a', 'port': 'nope', 'local': '198.18.0.1', 'peer': '198.18.0.2'}",
	     "cfg.json:4:25: bfd.sessions[0].port", "no port named"},
	    {"{'name': 'a', 'port': 'out', 'local': '198.18.0.1', 'peer': '198.18.0.2'}",
	     "cfg.json:4:25: bfd.sessions[0].port", "must receive"},
	    {"{'name': 'a', 'port': 'link', 'local': '198.18.0', 'peer': '198.18.0.2'}",
	     "cfg.json:4:42: bfd.sessions[0].local", "not an IPv4 address"},
	    {"{'name': 'a', 'port': 'link', 'local': '224.0.0.5', 'peer': '198.18.0.2'}",
	     "cfg.json:4:42: bfd.sessions[0].local", "unicast"},
	    {"{'name': 'a', 'port': 'link', 'local': '198.18.0.1', 'peer': '0.0.0.0'}",
	     "cfg.json:4:64: bfd.sessions[0].peer", "unicast"},
	    {"{'name': 'a', 'port': 'link', 'local': '198.18.0.1', 'peer': '198.18.0.1'}",
	     "cfg.json:4:64: bfd.sessions[0].peer", "is the local address"},
	    {"{'name': 'a', 'port': 'link', 'local': '198.18.0.1', 'peer': '198.18.0.2', "
	     "'peer_mac': '01:00:5e:00:00:01'}",
	     "cfg.json:4:90: bfd.sessions[0].peer_mac", "unicast MAC"},
	    {"{'name': 'a', 'port': 'link', 'local': '198.18.0.1', 'peer': '198.18.0.2', "
	     "'peer_mac': '02:00:00:00:00'}",
	     "cfg.json:4:90: bfd.sessions[0].peer_mac", "unicast MAC"},
	    {"{'name': 'a', 'port': 'link', 'local': '198.18.0.1', 'peer': '198.18.0.2', "
	     "'desired_min_tx_us': 999}",
	     "cfg.json:4:99: bfd.sessions[0].desired_min_tx_us", "out of range"},
	    {"{'name': 'a', 'port': 'link', 'local': '198.18.0.1', 'peer': '198.18.0.2', "
	     "'detect_mult': 0}",
	     "cfg.json:4:93: bfd.sessions[0].detect_mult", "out of range"},
	    {"{'name': 'a', 'port': 'link', 'local': '198.18.0.1', 'peer': '198.18.0.2', "
	     "'admin_down': 1}",
	     "cfg.json:4:92: bfd.sessions[0].admin_down", "boolean"},
	    {"{'name': 'a', 'port': 'link', 'local': '198.18.0.1', 'peer': '198.18.0.2', "
	     "'auth': {'type': 'md5', 'key': 'k'}}",
	     "cfg.json:4:95: bfd.sessions[0].auth.type", "not supported"},
	    {"{'name': 'a', 'port': 'link', 'local': '198.18.0.1', 'peer': '198.18.0.2', "
	     "'auth': {'type': 'keyed-sha1', 'key': '123456789012345678901'}}",
	     "cfg.json:4:116: bfd.sessions[0].auth.key", "too long"},
	    {"{'name': 'a', 'port': 'link', 'local': '198.18.0.1', 'peer': '198.18.0.2', "
	     "'bogus': 1}",
	     "cfg.json:4:87: bfd.sessions[0].bogus", "unknown"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[1024];

		snprintf(text, sizeof(text), BFD_PORTS " 'bfd': {'sessions': [\n  %s]}}",
			 cases[i].session);
		expect_error(state, text, cases[i].where, cases[i].what);
		teardown(state);
		setup(state);
	}
}

static void
test_bfd_duplicate_sessions_are_rejected(void **state)
{
	expect_error(state, BFD_PORTS
		     " 'bfd': {'sessions': [\n"
		     "  {'name': 'a', 'port': 'link', 'local': '198.18.0.1', 'peer': '198.18.0.2'},\n"
		     "  {'name': 'a', 'port': 'link', 'local': '198.18.0.1', 'peer': '198.18.0.3'}]}}",
		     "cfg.json:5:3: bfd.sessions[1]", "duplicate BFD session name");
	teardown(state);
	setup(state);
	expect_error(state, BFD_PORTS
		     " 'bfd': {'sessions': [\n"
		     "  {'name': 'a', 'port': 'link', 'local': '198.18.0.1', 'peer': '198.18.0.2'},\n"
		     "  {'name': 'b', 'port': 0, 'local': '198.18.0.1', 'peer': '198.18.0.2'}]}}",
		     "cfg.json:5:3: bfd.sessions[1]", "same port, local and peer");
}


/* ---- remote.chains ------------------------------------------------------------ */

/* Line 1 ports, line 2 a chain on port "pred" exiting on "sink", line 3 a BFD
 * session; the remote entry starts on line 4 at column 3. */
#define REMOTE_HEAD "{'ports': [{'name': 'pred', 'dev': 'net_null0'}, {'name': 'sync', 'dev': 'net_null1'}, {'name': 'sink', 'dev': 'net_null2'}, {'name': 'out', 'dev': 'net_null3', 'rx': false}], 'nfs': [{'binary': 'a', 'service': 1}],\n" \
	" 'chains': [{'name': 'web', 'services': [], 'ingress_port': 'pred', 'exit_port': 'sink'}, {'name': 'noexit', 'services': [1], 'ingress_port': 'sync'}],\n" \
	" 'bfd': {'sessions': [{'name': 'to_primary', 'port': 'pred', 'local': '198.18.0.1', 'peer': '198.18.0.2'}, {'name': 'to_standby', 'port': 'sync', 'local': '198.18.1.1', 'peer': '198.18.1.2'}]},\n" \
	" 'remote': {'chains': [\n"

static void
test_remote_roles_full_and_defaults(void **state)
{
	struct fixture *f = *state;
	const struct mgr_remote_cfg *r;

	/* One remote chain per config: two chains never share a link. */
	static const char *const entries[4] = {
		"  {'name': 'web_p', 'id': 7, 'role': 'primary', 'chain': 'web', 'predecessor_port': 'pred',\n"
		"   'standby_port': 'sync', 'epoch': 3, 'key': '00112233445566778899aabbccddeeff', 'key_id': 9,\n"
		"   'peer_macs': {'standby': '02:00:00:00:00:0b', 'predecessor': '02:00:00:00:00:0a'},\n"
		"   'stages': 8, 'stage_packets': 64, 'stage_close_us': 50, 'retrans_us': 500, 'max_tries': 3,\n"
		"   'standby_window': 8, 'checkpoint_ms': 20, 'stage_state_kb': 1024, 'state_base_mb': 32,\n"
		"   'state_window_mb': 4}]}}",
		"  {'name': 'web_pred', 'id': 8, 'role': 'predecessor', 'primary_port': 'pred', 'standby_port': 'sync',\n"
		"   'bfd': 'to_primary', 'standby_bfd': 'to_standby', 'link_failover': false,\n"
		"   'log_packets': 4096, 'log_mb': 8,\n"
		"   'failover_timeout_ms': 250, 'failover_by': 'agent'}]}}",
		"  {'name': 'web_s', 'id': 9, 'role': 'standby', 'chain': 'web', 'predecessor_port': 'pred',\n"
		"   'primary_port': 'sync', 'window': 64, 'max_frags': 100, 'txts_flows': 4096,\n"
		"   'reprotect': true, 'stages': 6, 'checkpoint_ms': 30}]}}",
		"  {'name': 'dflt', 'id': 10, 'role': 'standby', 'chain': 'web', 'predecessor_port': 0, 'primary_port': 1}]}}",
	};
	static struct mgr_remote_cfg got[4];
	char text[4096];

	for (int i = 0; i < 4; i++) {
		if (i > 0) {
			teardown(state);
			setup(state);
			f = *state;
		}
		snprintf(text, sizeof(text), "%s%s", REMOTE_HEAD, entries[i]);
		load_ok(f, text);
		assert_int_equal(f->cfg.nremote, 1);
		got[i] = f->cfg.remote[0];
	}
	r = &got[0];
	assert_string_equal(r->name, "web_p");
	assert_int_equal(r->id, 7);
	assert_int_equal(r->role, MGR_REMOTE_PRIMARY);
	assert_int_equal(r->epoch, 3);
	assert_int_equal(r->key_len, 16);
	assert_int_equal(r->key[0], 0x00);
	assert_int_equal(r->key[15], 0xff);
	assert_int_equal(r->key_id, 9);
	assert_true(r->has_mac[MGR_PEER_STANDBY] && r->has_mac[MGR_PEER_PREDECESSOR]);
	assert_false(r->has_mac[MGR_PEER_PRIMARY]);
	assert_int_equal(r->mac[MGR_PEER_STANDBY][5], 0x0b);
	assert_int_equal(r->chain, 0);
	assert_int_equal(r->predecessor_port, 0);
	assert_int_equal(r->standby_port, 1);
	assert_int_equal(r->primary_port, -1);
	assert_int_equal(r->stages, 8);
	assert_int_equal(r->stage_packets, 64);
	assert_int_equal(r->stage_close_us, 50);
	assert_int_equal(r->retrans_us, 500);
	assert_int_equal(r->max_tries, 3);
	assert_int_equal(r->standby_window, 8);
	assert_int_equal(r->checkpoint_ms, 20);
	assert_int_equal(r->stage_state_kb, 1024);
	assert_int_equal(r->state_base_mb, 32);
	assert_int_equal(r->state_window_mb, 4);
	r = &got[1];
	assert_int_equal(r->role, MGR_REMOTE_PREDECESSOR);
	assert_int_equal(r->bfd, 0);
	assert_int_equal(r->standby_bfd, 1);
	assert_false(r->link_failover);
	assert_int_equal(r->log_packets, 4096);
	assert_int_equal(r->log_mb, 8);
	assert_int_equal(r->failover_timeout_ms, 250);
	assert_true(r->failover_by_agent);
	assert_int_equal(r->primary_port, 0);
	assert_int_equal(r->chain, -1);
	assert_int_equal(r->key_len, 0);
	r = &got[2];
	assert_int_equal(r->window, 64);
	assert_int_equal(r->max_frags, 100);
	assert_int_equal(r->txts_flows, 4096);
	assert_true(r->reprotect); /* with the latch it runs once made primary */
	assert_int_equal(r->stages, 6);
	assert_int_equal(r->checkpoint_ms, 30);
	assert_int_equal(r->stage_packets, 256);
	r = &got[3]; /* every default */
	assert_false(r->reprotect);
	assert_int_equal(r->epoch, 1);
	assert_int_equal(r->window, 32);
	assert_int_equal(r->max_frags, 4096);
	assert_int_equal(r->txts_flows, 65536);
	assert_int_equal(r->bfd, -1);
	assert_int_equal(r->standby_bfd, -1);
	assert_int_equal(r->stages, 4);
	assert_int_equal(r->stage_packets, 256);
	assert_int_equal(r->retrans_us, 1000);
	assert_int_equal(r->checkpoint_ms, 10);
	assert_int_equal(r->log_packets, 65536);
	assert_int_equal(r->failover_timeout_ms, 1000);
	assert_true(r->link_failover);
	assert_false(r->failover_by_agent);
	assert_int_equal(r->state_base_mb, 0);
	assert_int_equal(r->state_window_mb, 16);
}

/* A protected chain's NFs take only its stamped, logged input: a service
 * shared with another chain, a flow rule from another port, or the
 * default chain would let other packets change their state. */
#define ISO_PORTS "{'ports': [{'name': 'pred', 'dev': 'net_null0'}, {'name': 'sync', 'dev': 'net_null1'}, {'name': 'sink', 'dev': 'net_null2'}], 'nfs': [{'binary': 'a', 'service': 1}, {'binary': 'b', 'service': 2}],\n"
#define ISO_WEB "{'name': 'web', 'services': [1], 'ingress_port': 'pred', 'exit_port': 'sink'}"
#define ISO_REMOTE " 'remote': {'chains': [\n  {'name': 'r', 'id': 1, 'role': 'standby', 'chain': 'web', 'predecessor_port': 'pred', 'primary_port': 'sync'}]}"

static void
test_remote_chain_takes_only_its_logged_input(void **state)
{
	static const struct {
		const char *chains; /* line 2 of the text, after the chains' opening */
		const char *where, *what;
	} cases[] = {
	    {ISO_WEB ", {'name': 'side', 'services': [2, 1], 'ingress_port': 'sync'}]",
	     "cfg.json:4:54: remote.chains[0].chain",
	     "service 1 of chain \"web\" is also in chain \"side\""},
	    {ISO_WEB "], 'flow_rules': [{'chain': 'web', 'proto': 'tcp', 'dport': 80}]",
	     "cfg.json:4:54: remote.chains[0].chain",
	     "flow_rules[0] sends packets of any port into chain \"web\""},
	    {ISO_WEB "], 'flow_rules': [{'chain': 'web', 'proto': 'tcp', 'dport': 80, 'in_port': 'sync'}]",
	     "cfg.json:4:54: remote.chains[0].chain",
	     "flow_rules[0] sends packets of another port into chain \"web\""},
	    {ISO_WEB "], 'default_chain': 'web'", "cfg.json:2:110: default_chain",
	     "chain \"web\" is protected"},
	};
	char text[2048];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (i > 0) {
			teardown(state);
			setup(state);
		}
		snprintf(text, sizeof(text), "%s 'chains': [%s,\n%s}", ISO_PORTS, cases[i].chains,
			 ISO_REMOTE);
		expect_error(state, text, cases[i].where, cases[i].what);
	}
	/* a rule from its own predecessor port is fine */
	teardown(state);
	setup(state);
	snprintf(text, sizeof(text), "%s 'chains': [%s], 'flow_rules': [{'chain': 'web', 'proto': "
		 "'tcp', 'dport': 80, 'in_port': 'pred'}],\n%s}", ISO_PORTS, ISO_WEB, ISO_REMOTE);
	load_ok(*state, text);
}

static void
test_remote_errors(void **state)
{
	static const struct {
		const char *entry; /* line 5 of the text, from column 3 */
		const char *where;
		const char *what;
	} cases[] = {
	    {"{'id': 1, 'role': 'standby'}", "cfg.json:5:3: remote.chains[0]", "\"name\""},
	    {"{'name': 'a', 'role': 'standby'}", "cfg.json:5:3: remote.chains[0]", "\"id\""},
	    {"{'name': 'a', 'id': 1}", "cfg.json:5:3: remote.chains[0]", "\"role\""},
	    {"{'name': 'a-b', 'id': 1, 'role': 'standby'}", "cfg.json:5:12: remote.chains[0].name",
	     "letters, digits or '_'"},
	    {"{'name': 'a', 'id': 0, 'role': 'standby'}", "cfg.json:5:23: remote.chains[0].id",
	     "out of range"},
	    {"{'name': 'a', 'id': 1, 'role': 'backup'}", "cfg.json:5:34: remote.chains[0].role",
	     "not a role"},
	    {"{'name': 'a', 'id': 1, 'role': 'standby', 'primary_port': 'sync', 'predecessor_port': 'pred'}",
	     "cfg.json:5:3: remote.chains[0]", "missing required field \"chain\" (role standby)"},
	    {"{'name': 'a', 'id': 1, 'role': 'predecessor', 'primary_port': 'pred', 'standby_port': 'sync', 'stages': 4}",
	     "cfg.json:5:107: remote.chains[0].stages", "a field of role primary or standby, not of predecessor"},
	    {"{'name': 'a', 'id': 1, 'role': 'standby', 'chain': 'web', 'primary_port': 'sync', 'predecessor_port': 'pred', 'stages': 4}",
	     "cfg.json:5:123: remote.chains[0].stages", "not of standby (unless \"reprotect\": true)"},
	    {"{'name': 'a', 'id': 1, 'role': 'standby', 'chain': 'web', 'primary_port': 'sync', 'predecessor_port': 'pred', 'reprotect': false, 'checkpoint_ms': 4}",
	     "cfg.json:5:150: remote.chains[0].checkpoint_ms", "not of standby (unless \"reprotect\": true)"},
	    {"{'name': 'a', 'id': 1, 'role': 'primary', 'chain': 'web', 'predecessor_port': 'pred', 'standby_port': 'sync', 'reprotect': true}",
	     "cfg.json:5:126: remote.chains[0].reprotect", "a field of role standby, not of primary"},
	    {"{'name': 'a', 'id': 1, 'role': 'standby', 'chain': 'web', 'primary_port': 'sync', 'predecessor_port': 'pred', 'reprotect': 1}",
	     "cfg.json:5:126: remote.chains[0].reprotect", "expected a boolean"},
	    {"{'name': 'a', 'id': 1, 'role': 'predecessor', 'primary_port': 'pred', 'standby_port': 'sync', 'state_base_mb': 4}",
	     "cfg.json:5:114: remote.chains[0].state_base_mb", "a field of role primary or standby, not of predecessor"},
	    {"{'name': 'a', 'id': 1, 'role': 'standby', 'chain': 'web', 'primary_port': 'sync', 'predecessor_port': 'pred', 'state_window_mb': 0}",
	     "cfg.json:5:132: remote.chains[0].state_window_mb", "out of range"},
	    {"{'name': 'a', 'id': 1, 'role': 'primary', 'chain': 'web', 'predecessor_port': 'pred', 'standby_port': 'sync', 'primary_port': 'sink'}",
	     "cfg.json:5:129: remote.chains[0].primary_port", "a field of role predecessor or standby, not of primary"},
	    {"{'name': 'a', 'id': 1, 'role': 'predecessor', 'primary_port': 'out', 'standby_port': 'sync'}",
	     "cfg.json:5:65: remote.chains[0].primary_port", "both ways"},
	    {"{'name': 'a', 'id': 1, 'role': 'predecessor', 'primary_port': 'nope', 'standby_port': 'sync'}",
	     "cfg.json:5:65: remote.chains[0].primary_port", "no port named"},
	    {"{'name': 'a', 'id': 1, 'role': 'predecessor', 'primary_port': 'sync', 'standby_port': 1}",
	     "cfg.json:5:89: remote.chains[0].standby_port", "the same port as \"primary_port\""},
	    {"{'name': 'a', 'id': 1, 'role': 'standby', 'chain': 'nope', 'primary_port': 'sync', 'predecessor_port': 'pred'}",
	     "cfg.json:5:54: remote.chains[0].chain", "no chain named \"nope\""},
	    {"{'name': 'a', 'id': 1, 'role': 'standby', 'chain': 'web', 'primary_port': 'pred', 'predecessor_port': 'sync'}",
	     "cfg.json:5:54: remote.chains[0].chain", "must come in on predecessor_port \"sync\""},
	    {"{'name': 'a', 'id': 1, 'role': 'standby', 'chain': 'noexit', 'primary_port': 'pred', 'predecessor_port': 'sync'}",
	     "cfg.json:5:54: remote.chains[0].chain", "no exit port"},
	    {"{'name': 'a', 'id': 1, 'role': 'predecessor', 'primary_port': 'pred', 'standby_port': 'sync', 'failover_timeout_ms': 5}",
	     "cfg.json:5:120: remote.chains[0].failover_timeout_ms", "out of range"},
	    {"{'name': 'a', 'id': 1, 'role': 'standby', 'chain': 'web', 'primary_port': 'sync', 'predecessor_port': 'pred', 'failover_timeout_ms': 50}",
	     "cfg.json:5:136: remote.chains[0].failover_timeout_ms", "a field of role predecessor, not of standby"},
	    {"{'name': 'a', 'id': 1, 'role': 'predecessor', 'primary_port': 'pred', 'standby_port': 'sync', 'key': 'abcd'}",
	     "cfg.json:5:104: remote.chains[0].key", "32..128 hex digits"},
	    {"{'name': 'a', 'id': 1, 'role': 'predecessor', 'primary_port': 'pred', 'standby_port': 'sync', 'key': '0011223344556677889900112233445g'}",
	     "cfg.json:5:104: remote.chains[0].key", "not a hex digit at position 32"},
	    {"{'name': 'a', 'id': 1, 'role': 'predecessor', 'primary_port': 'pred', 'standby_port': 'sync', 'key_id': 2}",
	     "cfg.json:5:107: remote.chains[0].key_id", "without a \"key\""},
	    {"{'name': 'a', 'id': 1, 'role': 'predecessor', 'primary_port': 'pred', 'standby_port': 'sync', 'failover_by': 'bfd'}",
	     "cfg.json:5:112: remote.chains[0].failover_by", "\"node\" or \"agent\""},
	    {"{'name': 'a', 'id': 1, 'role': 'standby', 'chain': 'web', 'primary_port': 'sync', 'predecessor_port': 'pred', 'failover_by': 'agent'}",
	     "cfg.json:5:128: remote.chains[0].failover_by", "a field of role predecessor, not of standby"},
	    {"{'name': 'a', 'id': 1, 'role': 'predecessor', 'primary_port': 'pred', 'standby_port': 'sync', 'bfd': 'nope'}",
	     "cfg.json:5:104: remote.chains[0].bfd", "no BFD session named \"nope\""},
	    {"{'name': 'a', 'id': 1, 'role': 'predecessor', 'primary_port': 'pred', 'standby_port': 'sync', 'standby_bfd': 'nope'}",
	     "cfg.json:5:112: remote.chains[0].standby_bfd", "no BFD session named \"nope\""},
	    {"{'name': 'a', 'id': 1, 'role': 'predecessor', 'primary_port': 'pred', 'standby_port': 'sync', 'bfd': 'to_primary', 'standby_bfd': 'to_primary'}",
	     "cfg.json:5:133: remote.chains[0].standby_bfd", "the same session as \"bfd\""},
	    {"{'name': 'a', 'id': 1, 'role': 'standby', 'chain': 'web', 'primary_port': 'sync', 'predecessor_port': 'pred', 'standby_bfd': 'to_standby'}",
	     "cfg.json:5:128: remote.chains[0].standby_bfd", "a field of role predecessor, not of standby"},
	    {"{'name': 'a', 'id': 1, 'role': 'predecessor', 'primary_port': 'pred', 'standby_port': 'sync', 'peer_macs': {'predecessor': '02:00:00:00:00:01'}}",
	     "cfg.json:5:126: remote.chains[0].peer_macs.predecessor", "a predecessor has no predecessor peer"},
	    {"{'name': 'a', 'id': 1, 'role': 'predecessor', 'primary_port': 'pred', 'standby_port': 'sync', 'peer_macs': {'primary': '01:00:00:00:00:01'}}",
	     "cfg.json:5:122: remote.chains[0].peer_macs.primary", "unicast MAC"},
	    {"{'name': 'a', 'id': 1, 'role': 'standby', 'chain': 'web', 'primary_port': 'sync', 'predecessor_port': 'pred', 'txts_flows': 512}",
	     "cfg.json:5:127: remote.chains[0].txts_flows", "out of range"},
	    {"{'name': 'a', 'id': 1, 'role': 'standby', 'chain': 'web', 'primary_port': 'sync', 'predecessor_port': 'pred', 'txts_flows': 3072}",
	     "cfg.json:5:127: remote.chains[0].txts_flows", "not a power of two"},
	    {"{'name': 'a', 'id': 1, 'role': 'primary', 'chain': 'web', 'predecessor_port': 'pred', 'standby_port': 'sync', 'stages': 8, 'standby_window': 4}",
	     "cfg.json:5:144: remote.chains[0].standby_window", "must be at least stages (8)"},
	    {"{'name': 'a', 'id': 1, 'role': 'standby', 'bogus': 1}", "cfg.json:5:54: remote.chains[0].bogus",
	     "unknown"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[2048];

		snprintf(text, sizeof(text), REMOTE_HEAD "  %s]}}", cases[i].entry);
		expect_error(state, text, cases[i].where, cases[i].what);
		teardown(state);
		setup(state);
	}
}

static void
test_remote_duplicate_names_and_ids_are_rejected(void **state)
{
	expect_error(state, REMOTE_HEAD
		     "  {'name': 'a', 'id': 1, 'role': 'predecessor', 'primary_port': 'pred', 'standby_port': 'sync'},\n"
		     "  {'name': 'a', 'id': 2, 'role': 'predecessor', 'primary_port': 'pred', 'standby_port': 'sync'}]}}",
		     "cfg.json:6:3: remote.chains[1]", "duplicate remote chain name \"a\"");
	teardown(state);
	setup(state);
	expect_error(state, REMOTE_HEAD
		     "  {'name': 'a', 'id': 1, 'role': 'predecessor', 'primary_port': 'pred', 'standby_port': 'sync'},\n"
		     "  {'name': 'b', 'id': 1, 'role': 'predecessor', 'primary_port': 'pred', 'standby_port': 'sync'}]}}",
		     "cfg.json:6:3: remote.chains[1]", "id 1 is remote chain \"a\"'s already");
	teardown(state);
	setup(state);
	/* Each link belongs to one chain's session: a port shared by two
	 * chains would feed one chain's frames to the other. */
	expect_error(state, REMOTE_HEAD
		     "  {'name': 'a', 'id': 1, 'role': 'predecessor', 'primary_port': 'pred', 'standby_port': 'sync'},\n"
		     "  {'name': 'b', 'id': 2, 'role': 'predecessor', 'primary_port': 'pred', 'standby_port': 'sync'}]}}",
		     "cfg.json:6:3: remote.chains[1]", "port \"pred\" is already a link of remote chain \"a\"");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_full_config_sets_node_and_tunables),
	    T(test_bfd_session_full_and_defaults),
	    T(test_bfd_session_errors),
	    T(test_bfd_duplicate_sessions_are_rejected),
	    T(test_remote_roles_full_and_defaults),
	    T(test_remote_errors),
	    T(test_remote_chain_takes_only_its_logged_input),
	    T(test_remote_duplicate_names_and_ids_are_rejected),
	    T(test_full_config_sets_ports_and_nfs),
	    T(test_full_config_sets_chains_rules_and_default_chain),
	    T(test_flow_rule_prefixes_give_address_and_mask),
	    T(test_flow_rule_protocol_names_map_to_numbers),
	    T(test_defaults_describe_a_node_without_ports_nfs_or_chains),
	    T(test_empty_object_keeps_every_default),
	    T(test_empty_sections_keep_every_default),
	    T(test_syntax_error_names_line_and_column),
	    T(test_duplicate_keys_are_rejected),
	    T(test_top_level_must_be_an_object),
	    T(test_empty_file_is_an_error_at_1_1),
	    T(test_syntax_error_at_end_of_text_has_a_1_based_column),
	    T(test_missing_file_is_an_error_naming_it),
	    T(test_unknown_top_level_field_is_rejected),
	    T(test_unknown_nested_field_is_rejected_with_its_full_path),
	    T(test_unknown_field_in_a_section_is_rejected),
	    T(test_string_where_an_integer_is_expected),
	    T(test_integer_where_a_string_is_expected),
	    T(test_array_where_an_object_is_expected),
	    T(test_object_where_an_array_is_expected),
	    T(test_string_where_a_port_object_is_expected),
	    T(test_real_where_an_integer_is_expected),
	    T(test_boolean_where_an_integer_is_expected),
	    T(test_null_where_an_integer_is_expected),
	    T(test_boolean_where_a_port_reference_is_expected),
	    T(test_integer_where_a_chain_name_is_expected),
	    T(test_integer_in_a_string_list_is_rejected),
	    T(test_port_rx_must_be_a_boolean),
	    T(test_peer_port_and_peer_only_nf),
	    T(test_peer_only_nf_is_not_scaled),
	    T(test_peer_must_be_a_boolean),
	    T(test_nf_service_id_above_63_is_out_of_range),
	    T(test_nf_service_id_0_is_out_of_range),
	    T(test_chain_service_id_out_of_range_names_its_index),
	    T(test_negative_number_is_out_of_range),
	    T(test_nf_instances_above_8_is_out_of_range),
	    T(test_nf_ring_size_not_a_power_of_two_is_rejected),
	    T(test_container_nf_and_containers_section),
	    T(test_containers_command_defaults_to_podman),
	    T(test_container_without_image_is_rejected),
	    T(test_container_image_that_looks_like_an_option_is_rejected),
	    T(test_container_image_with_a_space_is_rejected),
	    T(test_container_path_must_be_absolute),
	    T(test_container_volume_must_be_host_colon_container),
	    T(test_container_unknown_key_is_rejected),
	    T(test_containers_ulimit_must_be_name_equals_value),
	    T(test_containers_runtime_that_looks_like_an_option_is_rejected),
	    T(test_container_args_may_not_set_the_pid_namespace),
	    T(test_container_args_of_the_operator_are_kept),
	    T(test_containers_args_may_not_add_an_init),
	    T(test_containers_args_may_not_set_libnf_variables),
	    T(test_containers_args_may_not_detach),
	    T(test_containers_args_may_not_relabel_the_node),
	    T(test_port_ring_size_not_a_power_of_two_is_rejected),
	    T(test_too_many_ports_is_rejected),
	    T(test_more_than_8_instances_of_one_service_are_rejected),
	    T(test_more_instances_than_nf_slots_are_rejected),
	    T(test_chain_longer_than_8_services_is_rejected),
	    T(test_empty_string_is_rejected),
	    T(test_too_long_name_is_rejected),
	    T(test_node_name_with_a_space_is_rejected),
	    T(test_nf_cpus_must_be_a_cpu_list),
	    T(test_nf_standby_cpus_must_be_a_cpu_list),
	    T(test_heartbeat_is_off_or_at_least_10_ms),
	    T(test_start_retries_are_bounded),
	    T(test_nf_without_binary_points_at_the_nf),
	    T(test_nf_without_service_points_at_the_nf),
	    T(test_port_without_dev_points_at_the_port),
	    T(test_chain_without_services_or_exit_port_is_rejected),
	    T(test_duplicate_port_names_are_rejected),
	    T(test_port_name_clashing_with_a_generated_name_is_rejected),
	    T(test_duplicate_chain_names_are_rejected),
	    T(test_chain_naming_a_missing_port_is_rejected),
	    T(test_chain_with_a_port_index_out_of_range_is_rejected),
	    T(test_two_chains_on_one_ingress_port_are_rejected),
	    T(test_default_chain_naming_a_missing_chain_is_rejected),
	    T(test_flow_rule_without_chain_points_at_the_rule),
	    T(test_flow_rule_naming_a_missing_chain_is_rejected),
	    T(test_flow_rule_prefix_length_above_32_is_rejected),
	    T(test_flow_rule_prefix_without_length_after_slash_is_rejected),
	    T(test_flow_rule_bad_address_is_rejected),
	    T(test_flow_rule_prefix_must_be_a_string),
	    T(test_flow_rule_reversed_port_range_is_rejected),
	    T(test_flow_rule_port_range_as_a_string_is_rejected_naming_the_array_form),
	    T(test_flow_rule_port_as_a_string_is_rejected),
	    T(test_flow_rule_ports_without_tcp_or_udp_are_rejected),
	    T(test_flow_rule_prefix_with_host_bits_is_rejected),
	    T(test_flow_rule_port_above_65535_is_rejected),
	    T(test_flow_rule_port_range_above_65535_is_rejected),
	    T(test_flow_rule_unknown_protocol_name_is_rejected),
	    T(test_flow_rule_protocol_number_above_255_is_rejected),
	    T(test_flow_rule_protocol_0_is_rejected),
	    T(test_flow_rule_naming_a_missing_in_port_is_rejected),
	    T(test_environment_variables_expand_in_paths_devices_and_args),
	    T(test_undefined_variable_is_an_error_naming_the_field),
	    T(test_undefined_variable_in_an_argument_names_its_index),
	    T(test_unterminated_variable_is_rejected),
	    T(test_config_dir_is_the_directory_of_the_config_file),
	    T(test_load_string_takes_config_dir_from_the_name),
	    T(test_error_is_cut_to_the_buffer_and_terminated),
	    T(test_error_after_arguments_were_read_leaks_nothing),
	    T(test_free_releases_arguments_and_can_be_repeated),
	    T(test_stateless_chain_full_and_defaults),
	    T(test_stateless_chain_bad_values_are_placed),
	    T(test_stateless_chain_predecessor),
	    T(test_stateless_chain_services_are_its_own),
	    T(test_ftc_chain_full_and_defaults),
	    T(test_ftc_chain_bad_values_are_placed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
