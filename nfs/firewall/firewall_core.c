/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * The firewall's rules file, reference matcher and counters (firewall_core.h).
 *
 * The parser is strict because a firewall that silently ignores a typo lets
 * traffic through that the operator meant to stop: unknown fields, host bits
 * in a prefix, an empty port range and ports on a protocol without ports are
 * all errors, each placed at its line and column.  What a rule matches on is
 * read by common/onvm_rule.h (the manager's flow rules use it too); the
 * names, actions and policies are this file's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>

#include "onvm_nf_json.h"

#include "firewall_core.h"
#include "onvm_nf_output.h"

const char *
fw_action_str(uint8_t action)
{
	return action == FW_ALLOW ? "allow" : "deny";
}

/* ---- rules file ---- */

static int
parse_action(const struct nf_json *j, const json_t *obj, const char *path, const char *key,
	     bool required, uint8_t *out, char *err, size_t errlen)
{
	const char *s = NULL;
	char p[256];
	int ret = nf_json_string(j, obj, path, key, required, &s, err, errlen);

	snprintf(p, sizeof(p), "%s%s%s", path, path[0] != '\0' ? "." : "", key);
	if (ret < 0) {
		/* Name the accepted values rather than "a non-empty string". */
		if (json_object_get(obj, key) != NULL)
			return nf_json_fail(j, err, errlen, p, "expected \"allow\" or \"deny\"");
		return ret;
	}
	if (s == NULL)
		return 0;
	if (strcmp(s, "allow") == 0)
		*out = FW_ALLOW;
	else if (strcmp(s, "deny") == 0)
		*out = FW_DENY;
	else
		return nf_json_fail(j, err, errlen, p, "expected \"allow\" or \"deny\"");
	return 0;
}

static bool
valid_name(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n >= FW_NAME_SIZE)
		return false;
	for (; *s != '\0'; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '.' || *s == ':' || *s == '-'))
			return false;
	return true;
}

static int
parse_rule(const struct nf_json *j, const json_t *rule, uint32_t i, struct fw_rule *r,
	   const struct fw_rule *earlier, char *err, size_t errlen)
{
	static const char *const keys[] = {"name",  "action", "src",   "dst",
					   "proto", "sport",  "dport", NULL};
	const char *name = NULL;
	struct onvm_rule_match m;
	struct onvm_rule_err e;
	char path[64], p[96];
	int ret;

	snprintf(path, sizeof(path), "rules[%u]", i);
	ret = nf_json_only_keys(j, rule, path, keys, err, errlen);
	if (ret < 0)
		return ret;
	snprintf(p, sizeof(p), "%s.name", path);
	ret = nf_json_string(j, rule, path, "name", true, &name, err, errlen);
	if (ret < 0)
		return ret;
	if (!valid_name(name))
		return nf_json_fail(j, err, errlen, p,
				    "a name is 1..%d characters of A-Z a-z 0-9 _ . : -",
				    FW_NAME_SIZE - 1);
	for (uint32_t k = 0; k < i; k++)
		if (strcmp(earlier[k].name, name) == 0)
			return nf_json_fail(j, err, errlen, p,
					    "duplicate rule name \"%s\" (also rules[%u])", name, k);
	memset(r, 0, sizeof(*r));
	memcpy(r->name, name, strlen(name) + 1);
	if ((ret = parse_action(j, rule, path, "action", true, &r->action, err, errlen)) < 0)
		return ret;
	if (onvm_rule_match(rule, &m, &e) < 0)
		return nf_json_rule_fail(j, err, errlen, path, &e);
	r->src = m.src.addr;
	r->src_len = m.src.len;
	r->dst = m.dst.addr;
	r->dst_len = m.dst.len;
	r->has_proto = m.proto != ONVM_RULE_PROTO_ANY;
	r->proto = r->has_proto ? (uint8_t)m.proto : 0;
	r->has_sport = m.has_sport;
	r->sport_lo = m.sport.lo;
	r->sport_hi = m.sport.hi;
	r->has_dport = m.has_dport;
	r->dport_lo = m.dport.lo;
	r->dport_hi = m.dport.hi;
	return 0;
}

/* FNV-1a over the parsed rule set: equal files give equal fingerprints. */
static uint64_t
config_fingerprint(const struct fw_config *c)
{
	uint64_t h = NF_FNV1A_INIT;
	uint8_t pol[3] = {c->def, c->non_ip, c->malformed};

	h = nf_fnv1a(h, pol, sizeof(pol));
	h = nf_fnv1a(h, &c->n_rules, sizeof(c->n_rules));
	/* Rules are memset before they are filled: padding is zero. */
	return nf_fnv1a(h, c->rules, c->n_rules * sizeof(c->rules[0]));
}

int
fw_config_parse(struct fw_config *c, const char *name, const char *text, size_t len, char *err,
		size_t errlen)
{
	static const char *const keys[] = {"default", "non_ip", "malformed", "rules", NULL};
	struct nf_json j;
	const json_t *rules;
	int ret;

	memset(c, 0, sizeof(*c));
	ret = nf_json_load_text(&j, name, text, len, err, errlen);
	if (ret < 0)
		return ret;
	ret = nf_json_only_keys(&j, j.root, "", keys, err, errlen);
	if (ret < 0)
		goto out;
	c->malformed = FW_DENY;
	if ((ret = parse_action(&j, j.root, "", "default", true, &c->def, err, errlen)) < 0)
		goto out;
	c->non_ip = c->def;
	if ((ret = parse_action(&j, j.root, "", "non_ip", false, &c->non_ip, err, errlen)) < 0 ||
	    (ret = parse_action(&j, j.root, "", "malformed", false, &c->malformed, err, errlen)) <
		0)
		goto out;
	rules = json_object_get(j.root, "rules");
	if (rules != NULL) {
		if (!json_is_array(rules)) {
			ret = nf_json_fail(&j, err, errlen, "rules", "expected an array of rules");
			goto out;
		}
		if (json_array_size(rules) > FW_MAX_RULES) {
			char p[32];

			snprintf(p, sizeof(p), "rules[%d]", FW_MAX_RULES);
			ret = nf_json_fail(&j, err, errlen, p, "too many rules (%zu, at most %d)",
					   json_array_size(rules), FW_MAX_RULES);
			goto out;
		}
		c->n_rules = (uint32_t)json_array_size(rules);
		c->rules = calloc(c->n_rules > 0 ? c->n_rules : 1, sizeof(c->rules[0]));
		if (c->rules == NULL) {
			snprintf(err, errlen, "%s: out of memory", name);
			ret = -ENOMEM;
			goto out;
		}
		for (uint32_t i = 0; i < c->n_rules; i++) {
			ret = parse_rule(&j, json_array_get(rules, i), i, &c->rules[i], c->rules,
					 err, errlen);
			if (ret < 0)
				goto out;
		}
	}
	c->fingerprint = config_fingerprint(c);
out:
	nf_json_free(&j);
	if (ret < 0)
		fw_config_free(c);
	return ret;
}

int
fw_config_load(struct fw_config *c, const char *file, char *err, size_t errlen)
{
	struct nf_json j;
	int ret;

	memset(c, 0, sizeof(*c));
	ret = nf_json_load_file(&j, file, err, errlen);
	if (ret < 0)
		return ret;
	ret = fw_config_parse(c, file, j.text, j.len, err, errlen);
	nf_json_free(&j);
	return ret;
}

void
fw_config_free(struct fw_config *c)
{
	free(c->rules);
	memset(c, 0, sizeof(*c));
}

/* ---- matching ---- */

bool
fw_rule_matches(const struct fw_rule *r, const struct fw_tuple *t)
{
	if (((t->src ^ r->src) & onvm_rule_mask(r->src_len)) != 0 ||
	    ((t->dst ^ r->dst) & onvm_rule_mask(r->dst_len)) != 0)
		return false;
	if (r->has_proto && t->proto != r->proto)
		return false;
	if (r->has_sport || r->has_dport) {
		if (!t->has_ports)
			return false;
		if (t->sport < r->sport_lo || t->sport > r->sport_hi || t->dport < r->dport_lo ||
		    t->dport > r->dport_hi)
			return false;
	}
	return true;
}

int32_t
fw_match_linear(const struct fw_config *c, const struct fw_tuple *t)
{
	for (uint32_t i = 0; i < c->n_rules; i++)
		if (fw_rule_matches(&c->rules[i], t))
			return (int32_t)i;
	return FW_NO_MATCH;
}

void
fw_pkt_parse(const struct rte_mbuf *m, struct fw_pkt *p)
{
	struct onvm_pkt_info pi;
	enum onvm_parse_reason r = onvm_pkt_parse(m, &pi);

	memset(p, 0, sizeof(*p));
	p->len = rte_pktmbuf_pkt_len(m);
	if (r == ONVM_PARSE_NOT_IPV4) {
		p->kind = FW_KIND_NON_IP;
		return;
	}
	if (r != ONVM_PARSE_OK) {
		p->kind = FW_KIND_MALFORMED;
		p->reason = (uint8_t)r;
		return;
	}
	p->kind = FW_KIND_IPV4;
	p->t.src = pi.src_ip;
	p->t.dst = pi.dst_ip;
	p->t.proto = pi.proto;
	p->t.has_ports = !pi.fragment && (pi.proto == IPPROTO_TCP || pi.proto == IPPROTO_UDP);
	p->t.sport = pi.sport;
	p->t.dport = pi.dport;
}

/* ---- counters ---- */

size_t
fw_state_size(uint32_t n_rules)
{
	return sizeof(struct fw_state_hdr) + (size_t)n_rules * sizeof(struct fw_counter);
}

void
fw_state_format(struct fw *fw)
{
	size_t size = fw_state_size(fw->cfg->n_rules);

	nf_state_touch_ptr(fw->set, fw->st, size);
	memset(fw->st, 0, size);
	fw->st->fingerprint = fw->cfg->fingerprint;
	fw->st->n_rules = fw->cfg->n_rules;
	fw->st->magic = FW_STATE_MAGIC;
}

int
fw_state_open(struct fw *fw, const struct fw_config *c, struct nf_state_set *set, void *region,
	      size_t size, bool may_format, char *err, size_t errlen)
{
	struct fw_state_hdr *st = region;

	fw->cfg = c;
	fw->set = set;
	fw->st = st;
	if (size < fw_state_size(c->n_rules)) {
		snprintf(err, errlen, "state region of %zu bytes, %zu needed", size,
			 fw_state_size(c->n_rules));
		return -ENOSPC;
	}
	if (st->magic == 0) {
		if (!may_format)
			return -EAGAIN;
		fw_state_format(fw);
		return 1;
	}
	if (st->magic != FW_STATE_MAGIC || st->fingerprint != c->fingerprint ||
	    st->n_rules != c->n_rules) {
		snprintf(err, errlen,
			 "the state holds counters of another rule set (%u rules, fingerprint "
			 "%016" PRIx64 "; this file: %u rules, %016" PRIx64 ")",
			 st->n_rules, st->fingerprint, c->n_rules, c->fingerprint);
		return -ESTALE;
	}
	return 0;
}

void
fw_state_set_owner(struct fw *fw, const char *name, char *prev, size_t prev_len)
{
	if (prev != NULL && prev_len > 0)
		snprintf(prev, prev_len, "%.*s", FW_NAME_SIZE - 1, fw->st->owner);
	nf_state_touch_ptr(fw->set, fw->st->owner, sizeof(fw->st->owner));
	memset(fw->st->owner, 0, sizeof(fw->st->owner));
	snprintf(fw->st->owner, sizeof(fw->st->owner), "%s", name);
}

static inline void
count(struct nf_state_set *set, struct fw_counter *c, uint32_t len)
{
	nf_state_touch_ptr(set, c, sizeof(*c));
	c->packets++;
	c->bytes += len;
}

uint8_t
fw_account(struct fw *fw, const struct fw_pkt *p, int32_t rule)
{
	struct fw_state_hdr *st = fw->st;

	switch (p->kind) {
	case FW_KIND_IPV4:
		if (rule >= 0 && (uint32_t)rule < fw->cfg->n_rules) {
			count(fw->set, &st->rule[rule], p->len);
			return fw->cfg->rules[rule].action;
		}
		count(fw->set, &st->deflt, p->len);
		return fw->cfg->def;
	case FW_KIND_NON_IP:
		count(fw->set, &st->non_ip, p->len);
		return fw->cfg->non_ip;
	default:
		count(fw->set, &st->malformed, p->len);
		if (p->reason < ONVM_PARSE_REASON_MAX) {
			nf_state_touch_ptr(fw->set, &st->malformed_reason[p->reason],
					   sizeof(st->malformed_reason[0]));
			st->malformed_reason[p->reason]++;
		}
		return fw->cfg->malformed;
	}
}

static void
add(struct fw_counter *to, const struct fw_counter *c)
{
	to->packets += c->packets;
	to->bytes += c->bytes;
}

void
fw_totals(const struct fw *fw, struct fw_counter *allowed, struct fw_counter *denied)
{
	const struct fw_state_hdr *st = fw->st;

	memset(allowed, 0, sizeof(*allowed));
	memset(denied, 0, sizeof(*denied));
	for (uint32_t i = 0; i < fw->cfg->n_rules; i++)
		add(fw->cfg->rules[i].action == FW_ALLOW ? allowed : denied, &st->rule[i]);
	add(fw->cfg->def == FW_ALLOW ? allowed : denied, &st->deflt);
	add(fw->cfg->non_ip == FW_ALLOW ? allowed : denied, &st->non_ip);
	add(fw->cfg->malformed == FW_ALLOW ? allowed : denied, &st->malformed);
}

/* A JSON string; the rules file path is the only value that may need it. */
static void
json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s != '\0'; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

static void
policy_json(FILE *f, const char *key, uint8_t action, const struct fw_counter *c)
{
	fprintf(f,
		"  \"%s\": {\"action\": \"%s\", \"packets\": %" PRIu64 ", \"bytes\": %" PRIu64 "}",
		key, fw_action_str(action), c->packets, c->bytes);
}

int
fw_export_json(const struct fw *fw, FILE *f, const char *rules_file, const char *classifier)
{
	const struct fw_state_hdr *st = fw->st;
	struct fw_counter allowed, denied;
	bool first = true;

	fw_totals(fw, &allowed, &denied);
	fprintf(f, "{\n  \"rules_file\": ");
	json_str(f, rules_file != NULL ? rules_file : "");
	fprintf(f, ",\n  \"classifier\": \"%s\",\n", classifier);
	fprintf(f, "  \"packets\": %" PRIu64 ",\n  \"bytes\": %" PRIu64 ",\n",
		allowed.packets + denied.packets, allowed.bytes + denied.bytes);
	fprintf(f, "  \"allowed\": {\"packets\": %" PRIu64 ", \"bytes\": %" PRIu64 "},\n",
		allowed.packets, allowed.bytes);
	fprintf(f, "  \"denied\": {\"packets\": %" PRIu64 ", \"bytes\": %" PRIu64 "},\n",
		denied.packets, denied.bytes);
	policy_json(f, "default", fw->cfg->def, &st->deflt);
	fprintf(f, ",\n");
	policy_json(f, "non_ip", fw->cfg->non_ip, &st->non_ip);
	fprintf(f, ",\n");
	fprintf(f,
		"  \"malformed\": {\"action\": \"%s\", \"packets\": %" PRIu64
		", \"bytes\": %" PRIu64 ", \"reasons\": {",
		fw_action_str(fw->cfg->malformed), st->malformed.packets, st->malformed.bytes);
	for (int r = ONVM_PARSE_TRUNC_L2; r < ONVM_PARSE_REASON_MAX; r++) {
		if (r == ONVM_PARSE_NOT_IPV4)
			continue;
		fprintf(f, "%s\"%s\": %" PRIu64, first ? "" : ", ", onvm_parse_reason_str(r),
			st->malformed_reason[r]);
		first = false;
	}
	fprintf(f, "}},\n  \"rules\": [");
	for (uint32_t i = 0; i < fw->cfg->n_rules; i++)
		fprintf(f,
			"%s\n    {\"index\": %u, \"name\": \"%s\", \"action\": \"%s\", "
			"\"packets\": %" PRIu64 ", \"bytes\": %" PRIu64 "}",
			i == 0 ? "" : ",", i, fw->cfg->rules[i].name,
			fw_action_str(fw->cfg->rules[i].action), st->rule[i].packets,
			st->rule[i].bytes);
	fprintf(f, "%s]\n}\n", fw->cfg->n_rules > 0 ? "\n  " : "");
	return ferror(f) ? -1 : 0;
}

struct export_args {
	const struct fw *fw;
	const char *rules_file, *classifier;
};

static int
write_export(FILE *f, const void *arg)
{
	const struct export_args *a = arg;

	return fw_export_json(a->fw, f, a->rules_file, a->classifier);
}

int
fw_export_file(const struct fw *fw, const char *path, const char *rules_file,
	       const char *classifier)
{
	const struct export_args a = {fw, rules_file, classifier};

	return nf_write_file(path, write_export, &a) < 0 ? -1 : 0;
}
