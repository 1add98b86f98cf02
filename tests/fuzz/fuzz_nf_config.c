/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * fuzz_nf_config.c -- libFuzzer target for the NF suite's configuration
 * parsers (what an operator hands an NF with -r/-c/-m):
 *
 *   byte 0 % 6   parser                                 text passed as
 *   0            fw_config_parse()     (firewall rules)  exact-size buffer, no NUL
 *   1            lb_config_parse()     (load_balancer)   exact-size buffer, no NUL
 *   2            nat_config_parse()    (nat)             exact-size buffer, no NUL
 *   3            vt_policy_load_text() (vlan_tagger)     NUL-terminated copy
 *   4            nd_schedule_load_text() (nondet -m schedule:FILE)  NUL-terminated copy
 *   5            nd_conf_parse()       (nondet -m ARG, not schedule:) NUL-terminated copy
 *
 * The rest of the input is the text.  The first three take a length, so their
 * copy is exactly as long as the text and ASan reports any read past it; the
 * other three take a C string (an embedded NUL ends the text early).
 *
 * Checked after each call (abort() on violation, so libFuzzer keeps the
 * input; LeakSanitizer reports anything a failed or successful parse leaks):
 *   - the return value is 0 or a negative errno (-EINVAL, -ENOENT, -ENOMEM);
 *   - on error the message is NUL-terminated, non-empty and has the shape
 *     "fuzz.json:LINE:COL: ..." with LINE, COL >= 0, LINE at most the text's
 *     line count + 1 ("-m ARG: ..." for nd_conf_parse);
 *   - on success the parsed config holds what its header promises: counts
 *     and values within their limits, prefixes without host bits, ordered
 *     port ranges, unique names and backends, a power-of-two table size;
 *     the config is deterministic (a second parse gives the same fingerprint
 *     or digest); and the NF's state regions for it can be laid out
 *     (nf_state_layout_compute(): every region at most 1 GiB), i.e. a config
 *     the parser accepts does not fail later at nf_init.
 *
 * FUZZ_NF_CONFIG_STRICT=1 adds the two checks fuzz_config also keeps optional
 * (see README.md, "Known findings"): the message is one line, and an error
 * in text Jansson accepted carries a position other than 0:0.
 * FUZZ_NF_CONFIG_PRINT=1 prints each result.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>

#include <jansson.h>

#include "firewall_core.h"
#include "load_balancer_core.h"
#include "nat_core.h"
#include "nondet_core.h"
#include "onvm_nf_json.h"
#include "onvm_state.h"
#include "vlan_tagger_core.h"

#include "fuzz_check.h"

#define NAME	"fuzz.json"
#define ERR_LEN 512

enum parser { P_FW, P_LB, P_NAT, P_VT, P_ND_SCHED, P_ND_ARG, P_MAX };

static const char *const parser_names[P_MAX] = {"firewall",    "load_balancer",	  "nat",
						"vlan_tagger", "nondet-schedule", "nondet-m"};

static bool strict, print_result;
/* Large configs (vt_policy is ~24 KB, nd_conf ~2 KB): allocated once. */
static struct vt_policy *vt, *vt2;
static struct nd_conf *nd, *nd2;
static struct lb_config *lb, *lb2;
static struct nat_config *nat, *nat2;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void *
xmalloc(size_t n)
{
	void *p = malloc(n);

	if (p == NULL)
		abort();
	return p;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *s = getenv("FUZZ_NF_CONFIG_STRICT");

	(void)argc;
	(void)argv;
	strict = s != NULL && strcmp(s, "0") != 0;
	print_result = getenv("FUZZ_NF_CONFIG_PRINT") != NULL;
	vt = xmalloc(sizeof(*vt));
	vt2 = xmalloc(sizeof(*vt2));
	nd = xmalloc(sizeof(*nd));
	nd2 = xmalloc(sizeof(*nd2));
	lb = xmalloc(sizeof(*lb));
	lb2 = xmalloc(sizeof(*lb2));
	nat = xmalloc(sizeof(*nat));
	nat2 = xmalloc(sizeof(*nat2));
	return 0;
}

/* ---- errors ------------------------------------------------------------------------ */

static bool
read_int(const char **p, long *out)
{
	char *end;

	if (!((**p >= '0' && **p <= '9') || **p == '-'))
		return false;
	*out = strtol(*p, &end, 10);
	if (end == *p)
		return false;
	*p = end;
	return true;
}

/* Lines as json_locate() counts them: LF, CRLF and a lone CR end a line. */
static long
count_lines(const char *text, size_t len)
{
	long n = 1;

	for (size_t i = 0; i < len; i++)
		n += text[i] == '\n' || (text[i] == '\r' && (i + 1 >= len || text[i + 1] != '\n'));
	return n;
}

static void
check_error(enum parser which, int rc, const char *err, const char *text, size_t len)
{
	const char *p = err;
	long line, col;

	CHECK(rc == -EINVAL || rc == -ENOENT || rc == -ENOMEM);
	CHECK(memchr(err, '\0', ERR_LEN) != NULL);
	CHECK(err[0] != '\0');
	if (which == P_ND_ARG) {
		/* Not a file: "-m ARG: what is wrong".  The argument is echoed
		 * whole, so a long one fills the buffer (nondet.c's is as large)
		 * and cuts the reason off. */
		CHECK(strncmp(err, "-m ", 3) == 0);
		CHECK(strstr(err, ": ") != NULL || strlen(err) == ERR_LEN - 1);
		return;
	}
	CHECK(strncmp(p, NAME ":", strlen(NAME ":")) == 0);
	p += strlen(NAME ":");
	CHECK(read_int(&p, &line));
	CHECK(*p == ':');
	p++;
	CHECK(read_int(&p, &col));
	CHECK(p[0] == ':' && p[1] == ' ');
	p += 2;
	CHECK(line >= 0 && col >= 0);
	CHECK(line <= count_lines(text, len) + 1);
	CHECK(*p != '\0'); /* a reason follows */
	if (strict) {
		json_error_t je;
		json_t *root;

		CHECK(strchr(err, '\n') == NULL && strchr(err, '\r') == NULL);
		/* An error in text Jansson accepts is semantic: it has a place. */
		root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
		if (root != NULL) {
			json_decref(root);
			CHECK(line > 0 && col > 0);
		}
	}
}

/* ---- what a successful parse promises ---------------------------------------------- */

static bool
is_prefix_mask(uint32_t m)
{
	return ((~m) & (~m + 1)) == 0; /* ones, then zeros */
}

static bool
pow2(uint64_t v)
{
	return v != 0 && (v & (v - 1)) == 0;
}

static bool
unicast(uint32_t a)
{
	return a != 0 && a < UINT32_C(0xe0000000);
}

/* The regions can be laid out: what nf_init would refuse otherwise.  Returns
 * 0, or -1 (after printing why) if they cannot. */
static int
layout_ok(const struct nf_state_request *reqs, unsigned int n)
{
	struct nf_state_layout l;
	char err[256];
	int rc = nf_state_layout_compute(&l, reqs, n, err, sizeof(err));

	if (rc != 0 && print_result)
		fprintf(stderr, "fuzz_nf_config: accepted config, but its state does not fit: %s\n",
			err);
	return rc == 0 ? 0 : -1;
}

static void
check_layout(const struct nf_state_request *reqs, unsigned int n)
{
	if (layout_ok(reqs, n) != 0) {
		print_result = true;
		(void)layout_ok(reqs, n);
		CHECK(!"accepted config whose state regions cannot be laid out");
	}
}

static bool
fw_name_ok(const char *s, size_t size)
{
	size_t n = strnlen(s, size);

	if (n == 0 || n >= size)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '.' || s[i] == ':' ||
		      s[i] == '-'))
			return false;
	return true;
}

static void
check_fw(const struct fw_config *c, const char *text, size_t len)
{
	struct fw_config again;
	char err[ERR_LEN];
	struct nf_state_request req = {.name = FW_STATE_REGION, .size = 0};

	CHECK(c->def <= FW_DENY && c->non_ip <= FW_DENY && c->malformed <= FW_DENY);
	CHECK(c->n_rules <= FW_MAX_RULES);
	CHECK(c->n_rules == 0 || c->rules != NULL);
	for (uint32_t i = 0; i < c->n_rules; i++) {
		const struct fw_rule *r = &c->rules[i];

		CHECK(fw_name_ok(r->name, sizeof(r->name)));
		for (uint32_t k = 0; k < i; k++)
			CHECK(strcmp(c->rules[k].name, r->name) != 0);
		CHECK(r->action <= FW_DENY);
		CHECK(r->src_len <= 32 && r->dst_len <= 32);
		CHECK((r->src & ~onvm_rule_mask(r->src_len)) == 0);
		CHECK((r->dst & ~onvm_rule_mask(r->dst_len)) == 0);
		CHECK(r->has_proto <= 1 && r->has_sport <= 1 && r->has_dport <= 1);
		CHECK(r->has_proto || r->proto == 0);
		CHECK(r->sport_lo <= r->sport_hi && r->dport_lo <= r->dport_hi);
		CHECK(r->has_sport || (r->sport_lo == 0 && r->sport_hi == 65535));
		CHECK(r->has_dport || (r->dport_lo == 0 && r->dport_hi == 65535));
		/* ports only on TCP/UDP rules */
		CHECK(!(r->has_sport || r->has_dport) ||
		      (r->has_proto && (r->proto == IPPROTO_TCP || r->proto == IPPROTO_UDP)));
	}
	/* Deterministic: the same text gives the same rule set. */
	CHECK(fw_config_parse(&again, NAME, text, len, err, sizeof(err)) == 0);
	CHECK(again.fingerprint == c->fingerprint && again.n_rules == c->n_rules);
	CHECK(c->n_rules == 0 ||
	      memcmp(again.rules, c->rules, c->n_rules * sizeof(c->rules[0])) == 0);
	fw_config_free(&again);
	req.size = fw_state_size(c->n_rules);
	check_layout(&req, 1);
}

static void
check_lb(const struct lb_config *c, const char *text, size_t len)
{
	struct nf_state_request reqs[LB_REGIONS];
	char err[ERR_LEN];

	CHECK(c->n_backends >= 1 && c->n_backends <= LB_BACKENDS_MAX);
	CHECK(!c->has_vip || unicast(c->vip));
	CHECK(c->has_vip || c->vip == 0);
	for (uint32_t i = 0; i < c->n_backends; i++) {
		CHECK(unicast(c->backends[i].ip));
		CHECK(!(c->backends[i].mac[0] & 1));
		CHECK(!c->has_vip || c->backends[i].ip != c->vip);
		for (uint32_t k = 0; k < i; k++)
			CHECK(c->backends[k].ip != c->backends[i].ip);
	}
	CHECK(c->idle_timeout_ms >= 1 && c->idle_timeout_ms <= LB_IDLE_TIMEOUT_MS_MAX);
	CHECK(pow2(c->flows) && c->flows >= ONVM_FT_CAPACITY_MIN && c->flows <= LB_FLOWS_MAX);
	CHECK(lb_config_parse(lb2, NAME, text, len, err, sizeof(err)) == 0);
	CHECK(memcmp(lb2, c, sizeof(*c)) == 0);
	lb_regions(c, reqs);
	check_layout(reqs, LB_REGIONS);
}

static void
check_nat(const struct nat_config *c, const char *text, size_t len)
{
	struct nf_state_request reqs[NAT_REGIONS];
	char err[ERR_LEN];

	CHECK(c->n_internal >= 1 && c->n_internal <= NAT_PREFIXES_MAX);
	for (uint32_t i = 0; i < c->n_internal; i++) {
		const struct onvm_rule_prefix *p = &c->internal[i];

		CHECK(p->len <= 32 && p->mask == onvm_rule_mask(p->len));
		CHECK(is_prefix_mask(p->mask) && (p->addr & ~p->mask) == 0);
		/* the NAT's own address is outside every internal prefix */
		CHECK((c->external_ip & p->mask) != p->addr);
	}
	CHECK(unicast(c->external_ip));
	CHECK(c->port_min >= 1 && c->port_min <= c->port_max);
	CHECK(c->idle_timeout_ms >= 1 && c->idle_timeout_ms <= NAT_IDLE_TIMEOUT_MS_MAX);
	CHECK(pow2(c->flows) && c->flows >= ONVM_FT_CAPACITY_MIN && c->flows <= NAT_FLOWS_MAX);
	CHECK(nat_config_parse(nat2, NAME, text, len, err, sizeof(err)) == 0);
	CHECK(memcmp(nat2, c, sizeof(*c)) == 0);
	nat_regions(c, reqs);
	check_layout(reqs, NAT_REGIONS);
}

static void
check_vt(const struct vt_policy *p, const char *text)
{
	struct nf_state_request reqs[2] = {{.name = "flows"}, {.name = "counters"}};
	char err[ERR_LEN];

	CHECK(p->def_vlan <= VT_VLAN_MAX && p->def_pcp <= VT_PCP_MAX);
	CHECK(p->def_vlan != 0 || p->def_pcp == 0);
	CHECK(p->n_rules <= VT_RULES_MAX);
	CHECK(pow2(p->flows) && p->flows >= ONVM_FT_CAPACITY_MIN);
	for (uint32_t i = 0; i < p->n_rules; i++) {
		const struct vt_rule *r = &p->rules[i];
		bool ports = r->sport_lo != 0 || r->sport_hi != 65535 || r->dport_lo != 0 ||
			     r->dport_hi != 65535;

		CHECK(r->vlan >= 1 && r->vlan <= VT_VLAN_MAX && r->pcp <= VT_PCP_MAX);
		CHECK(is_prefix_mask(r->src_mask) && (r->src & ~r->src_mask) == 0);
		CHECK(is_prefix_mask(r->dst_mask) && (r->dst & ~r->dst_mask) == 0);
		CHECK(r->proto >= -1 && r->proto <= 255);
		CHECK(r->sport_lo <= r->sport_hi && r->dport_lo <= r->dport_hi);
		CHECK(!ports || r->proto == IPPROTO_TCP || r->proto == IPPROTO_UDP);
	}
	CHECK(vt_policy_load_text(vt2, NAME, text, err, sizeof(err)) == 0);
	CHECK(vt_policy_digest(vt2) == vt_policy_digest(p));
	reqs[0].size = vt_flows_size(p);
	reqs[1].size = vt_counters_size(p);
	/* Found here: 2^24 flows was accepted but did not fit a 1 GiB region
	 * (now capped at 2^22; seed corpus_nf_config/3_finding_flows_2_24.bin). */
	check_layout(reqs, 2);
}

static void
check_nd(const struct nd_conf *c, bool schedule, const char *text)
{
	struct nf_state_request reqs[2] = {{.name = "nondet"}, {.name = "flows"}};
	char err[ERR_LEN];

	CHECK(c->schedule == schedule);
	CHECK(c->n_phases >= 1 && c->n_phases <= ND_PHASES_MAX);
	CHECK(schedule || c->n_phases == 1);
	CHECK(memchr(c->source, '\0', sizeof(c->source)) != NULL);
	for (uint32_t i = 0; i < c->n_phases; i++) {
		const struct nd_phase *ph = &c->phases[i];

		switch (ph->mode) {
		case ND_MODE_NONE:
			CHECK(ph->value == 0);
			break;
		case ND_MODE_COUNT:
			CHECK(ph->value >= 1 && ph->value <= ND_COUNT_MAX);
			break;
		case ND_MODE_INTERVAL:
			CHECK(ph->value >= 1 && ph->value <= ND_INTERVAL_US_MAX);
			break;
		default:
			CHECK(!"unknown mode");
		}
		CHECK(strcmp(nd_mode_str(ph->mode), "unknown") != 0);
		if (schedule) {
			CHECK(ph->seconds > 0 && ph->seconds <= ND_SECONDS_MAX);
			CHECK(ph->duration_ns > 0);
		} else {
			CHECK(ph->duration_ns == 0);
		}
	}
	if (schedule) {
		CHECK(nd_schedule_load_text(nd2, NAME, text, err, sizeof(err)) == 0);
	} else {
		CHECK(nd_conf_parse(nd2, text, err, sizeof(err)) == 0);
		CHECK(strcmp(c->source, text) == 0 || strlen(text) >= sizeof(c->source));
	}
	CHECK(nd_conf_digest(nd2) == nd_conf_digest(c));
	reqs[0].size = nd_totals_size(c);
	reqs[1].size = nd_flows_size(ND_FLOWS_DEFAULT);
	check_layout(reqs, 2);
}

/* ---- the target -------------------------------------------------------------------- */

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum parser which;
	char err[ERR_LEN];
	char *text;
	size_t len;
	int rc;

	if (size < 1)
		return 0;
	which = (enum parser)(data[0] % P_MAX);
	len = size - 1;
	/* exact size for the parsers that take a length; +1 for a NUL for the others */
	text = xmalloc(len + 1);
	memcpy(text, data + 1, len);
	if (which >= P_VT)
		text[len] = '\0';
	memset(err, 0x5a, sizeof(err));

	switch (which) {
	case P_FW: {
		struct fw_config c;

		rc = fw_config_parse(&c, NAME, text, len, err, sizeof(err));
		if (rc == 0) {
			check_fw(&c, text, len);
			fw_config_free(&c);
		} else {
			/* a failed parse leaves nothing to free */
			CHECK(c.rules == NULL && c.n_rules == 0);
		}
		break;
	}
	case P_LB:
		rc = lb_config_parse(lb, NAME, text, len, err, sizeof(err));
		if (rc == 0)
			check_lb(lb, text, len);
		break;
	case P_NAT:
		rc = nat_config_parse(nat, NAME, text, len, err, sizeof(err));
		if (rc == 0)
			check_nat(nat, text, len);
		break;
	case P_VT:
		rc = vt_policy_load_text(vt, NAME, text, err, sizeof(err));
		if (rc == 0)
			check_vt(vt, text);
		break;
	case P_ND_SCHED:
		rc = nd_schedule_load_text(nd, NAME, text, err, sizeof(err));
		if (rc == 0)
			check_nd(nd, true, text);
		break;
	case P_ND_ARG:
	default:
		/* "schedule:FILE" would open a file named by the input. */
		if (strncmp(text, "schedule:", 9) == 0 && text[9] != '\0') {
			free(text);
			return 0;
		}
		rc = nd_conf_parse(nd, text, err, sizeof(err));
		if (rc == 0)
			check_nd(nd, false, text);
		break;
	}
	if (print_result)
		fprintf(stderr, "fuzz_nf_config: %s: %s\n", parser_names[which],
			rc == 0 ? "valid" : err);
	if (rc != 0)
		check_error(which, rc, err, text, which >= P_VT ? strlen(text) : len);
	free(text);
	return 0;
}
