/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * nondet's logic: see nondet_core.h.
 *
 * Per packet: parse (for the flow key), move to the phase the schedule's
 * clock says, decide ND by the phase's mode, then update the totals, the
 * phase's counters and the flow's entry.  Every state write is touched
 * first; the totals and the current phase's counters are one touch each.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nondet_core.h"
#include "onvm_nf_output.h"
#include "onvm_nf_json.h"
#include "onvm_rule.h"

#define ND_MAGIC UINT64_C(0x4e4f4e4445543031) /* "NONDET01" */

/* ---- configuration ---------------------------------------------------------------- */

const char *
nd_mode_str(enum nd_mode m)
{
	switch (m) {
	case ND_MODE_COUNT:
		return "count";
	case ND_MODE_INTERVAL:
		return "interval";
	case ND_MODE_NONE:
		return "none";
	}
	return "unknown";
}

/* Strict decimal in [min, max]. */
static int
parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (s[0] < '0' || s[0] > '9' || (s[0] == '0' && s[1] != '\0'))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int
parse_phase(const struct nf_json *j, const json_t *v, size_t i, struct nd_phase *ph, char *err,
	    size_t errlen)
{
	static const char *const keys[] = {"seconds", "mode", "value", NULL};
	const char *mode = NULL;
	const json_t *sec, *val;
	char path[32], p[48];
	uint64_t value = 0;
	int ret;

	snprintf(path, sizeof(path), "[%zu]", i);
	if ((ret = nf_json_only_keys(j, v, path, keys, err, errlen)) < 0 ||
	    (ret = nf_json_string(j, v, path, "mode", true, &mode, err, errlen)) < 0)
		return ret;
	sec = json_object_get(v, "seconds");
	snprintf(p, sizeof(p), "%s.seconds", path);
	if (sec == NULL)
		return nf_json_fail(j, err, errlen, p, "required field missing");
	if (!json_is_number(sec) || !(json_number_value(sec) > 0) ||
	    json_number_value(sec) > ND_SECONDS_MAX)
		return nf_json_fail(j, err, errlen, p, "expected a number of seconds > 0");
	ph->seconds = json_number_value(sec);
	ph->duration_ns = (uint64_t)llround(ph->seconds * 1e9);
	if (ph->duration_ns == 0)
		return nf_json_fail(j, err, errlen, p, "expected a number of seconds > 0");
	val = json_object_get(v, "value");
	if (strcmp(mode, "none") == 0) {
		ph->mode = ND_MODE_NONE;
		if (val != NULL) {
			snprintf(p, sizeof(p), "%s.value", path);
			return nf_json_fail(j, err, errlen, p, "mode \"none\" takes no value");
		}
	} else if (strcmp(mode, "count") == 0) {
		ph->mode = ND_MODE_COUNT;
		ret = nf_json_uint(j, v, path, "value", 1, ND_COUNT_MAX, true, &value, err, errlen);
	} else if (strcmp(mode, "interval") == 0) {
		ph->mode = ND_MODE_INTERVAL;
		ret = nf_json_uint(j, v, path, "value", 1, ND_INTERVAL_US_MAX, true, &value, err,
				   errlen);
	} else {
		snprintf(p, sizeof(p), "%s.mode", path);
		return nf_json_fail(j, err, errlen, p,
				    "'%s': expected \"count\", \"interval\" or \"none\"", mode);
	}
	ph->value = value;
	return ret;
}

static int
parse_schedule(struct nd_conf *c, const struct nf_json *j, char *err, size_t errlen)
{
	size_t i;
	json_t *v;
	int ret;

	if (!json_is_array(j->root) || json_array_size(j->root) == 0)
		return nf_json_fail(j, err, errlen, "",
				    "expected a non-empty list of phases "
				    "[{\"seconds\": S, \"mode\": M, \"value\": V}, ...]");
	if (json_array_size(j->root) > ND_PHASES_MAX)
		return nf_json_fail(j, err, errlen, "", "%zu phases, at most %d",
				    json_array_size(j->root), ND_PHASES_MAX);
	json_array_foreach(j->root, i, v) {
		if ((ret = parse_phase(j, v, i, &c->phases[i], err, errlen)) < 0)
			return ret;
	}
	c->n_phases = (uint32_t)json_array_size(j->root);
	c->schedule = true;
	return 0;
}

int
nd_schedule_load_text(struct nd_conf *c, const char *name, const char *text, char *err,
		      size_t errlen)
{
	struct nf_json j;
	int ret;

	memset(c, 0, sizeof(*c));
	ret = nf_json_load_text(&j, name, text, strlen(text), err, errlen);
	if (ret < 0)
		return ret;
	ret = parse_schedule(c, &j, err, errlen);
	nf_json_free(&j);
	snprintf(c->source, sizeof(c->source), "schedule:%s", name);
	return ret;
}

int
nd_conf_parse(struct nd_conf *c, const char *arg, char *err, size_t errlen)
{
	const char *colon = strchr(arg, ':');
	uint64_t v;

	memset(c, 0, sizeof(*c));
	if (strncmp(arg, "schedule:", 9) == 0 && arg[9] != '\0') {
		struct nf_json j;
		int ret = nf_json_load_file(&j, arg + 9, err, errlen);

		if (ret < 0)
			return ret;
		ret = parse_schedule(c, &j, err, errlen);
		nf_json_free(&j);
		snprintf(c->source, sizeof(c->source), "%s", arg);
		return ret;
	}
	c->n_phases = 1;
	if (strcmp(arg, "none") == 0) {
		c->phases[0].mode = ND_MODE_NONE;
	} else if (colon != NULL && (size_t)(colon - arg) == 5 && strncmp(arg, "count", 5) == 0) {
		if (parse_u64(colon + 1, 1, ND_COUNT_MAX, &v) < 0) {
			snprintf(err, errlen, "-m %s: N must be a whole number 1..%u", arg,
				 ND_COUNT_MAX);
			return -EINVAL;
		}
		c->phases[0].mode = ND_MODE_COUNT;
		c->phases[0].value = v;
	} else if (colon != NULL && (size_t)(colon - arg) == 8 &&
		   strncmp(arg, "interval", 8) == 0) {
		if (parse_u64(colon + 1, 1, ND_INTERVAL_US_MAX, &v) < 0) {
			snprintf(err, errlen, "-m %s: US must be whole microseconds 1..%llu", arg,
				 ND_INTERVAL_US_MAX);
			return -EINVAL;
		}
		c->phases[0].mode = ND_MODE_INTERVAL;
		c->phases[0].value = v;
	} else {
		snprintf(err, errlen,
			 "-m %s: expected count:N, interval:US, schedule:FILE or none", arg);
		return -EINVAL;
	}
	snprintf(c->source, sizeof(c->source), "%s", arg);
	return 0;
}

uint64_t
nd_conf_digest(const struct nd_conf *c)
{
	uint64_t h = NF_FNV1A_INIT;

	h = nf_fnv1a_u64(h, c->n_phases);
	h = nf_fnv1a_u64(h, c->schedule);
	for (uint32_t i = 0; i < c->n_phases; i++) {
		h = nf_fnv1a_u64(h, c->phases[i].mode);
		h = nf_fnv1a_u64(h, c->phases[i].value);
		h = nf_fnv1a_u64(h, c->phases[i].duration_ns);
	}
	return h;
}

/* ---- state ------------------------------------------------------------------------- */

size_t
nd_totals_size(const struct nd_conf *c)
{
	return sizeof(struct nd_totals) + c->n_phases * sizeof(struct nd_phase_stats);
}

size_t
nd_flows_size(uint32_t flows)
{
	return onvm_ft_mem_size(flows, sizeof(struct nd_flow));
}

int
nd_open(struct nondet *n, const struct nd_conf *c, struct nf_state_set *state, void *totals_mem,
	size_t totals_len, void *flows_mem, size_t flows_len, uint32_t flows, nd_rand_fn *rand,
	void *rand_arg, char *err, size_t errlen)
{
	struct nd_totals *t = totals_mem;
	uint64_t digest = nd_conf_digest(c);
	int ret;

	memset(n, 0, sizeof(*n));
	if (t == NULL || totals_len < nd_totals_size(c) || c->n_phases == 0 || rand == NULL) {
		snprintf(err, errlen, "nondet: bad arguments (region of %zu bytes, need %zu)",
			 totals_len, nd_totals_size(c));
		return -EINVAL;
	}
	if (t->magic != 0 && (t->magic != ND_MAGIC || t->digest != digest)) {
		snprintf(err, errlen,
			 "the state was made with another mode or schedule (digest %#" PRIx64
			 ", this one %#" PRIx64 "): start the standby with the active's -m",
			 t->digest, digest);
		return -EBADMSG;
	}
	if (t->magic != 0 && t->phase >= c->n_phases) {
		snprintf(err, errlen, "the state is damaged (phase %" PRIu64 " of %u)", t->phase,
			 c->n_phases);
		return -EBADMSG;
	}
	ret = onvm_ft_open(&n->ft, state, flows_mem, flows_len, flows, sizeof(struct nd_flow), err,
			   errlen);
	if (ret < 0)
		return ret;
	if (t->magic == 0) {
		nf_state_touch_ptr(state, t, sizeof(*t));
		t->digest = digest;
		t->magic = ND_MAGIC;
	}
	n->conf = c;
	n->state = state;
	n->t = t;
	n->rand = rand;
	n->rand_arg = rand_arg;
	return 0;
}

static inline void
touch(struct nondet *n, const void *p, size_t len)
{
	nf_state_touch_ptr(n->state, p, len);
}

/* The phase the schedule's clock says at now_ns (only forward). */
static uint32_t
phase_at(const struct nondet *n, uint64_t now_ns)
{
	const struct nd_conf *c = n->conf;
	uint32_t p = (uint32_t)n->t->phase;
	uint64_t end = n->t->start_ns;

	for (uint32_t i = 0; i <= p; i++)
		end += c->phases[i].duration_ns;
	while (p + 1 < c->n_phases && now_ns >= end) {
		p++;
		end += c->phases[p].duration_ns;
	}
	return p;
}

bool
nd_packet(struct nondet *n, const struct rte_mbuf *m, uint64_t now_ns)
{
	struct nd_totals *t = n->t;
	struct onvm_pkt_info pi;
	enum onvm_parse_reason r = onvm_pkt_parse(m, &pi);
	struct nd_phase_stats *ps;
	const struct nd_phase *ph;
	struct nd_flow *f = NULL;
	bool nd = false;
	uint32_t p;

	/* Totals and schedule fields: one touch (the header of the region). */
	touch(n, t, sizeof(*t));
	if (!t->started) {
		t->started = 1;
		t->start_ns = now_ns;
	}
	p = phase_at(n, now_ns);
	t->phase = p;
	ph = &n->conf->phases[p];
	ps = &t->ph[p];
	touch(n, ps, sizeof(*ps));
	if (ps->packets == 0) {
		/* The phase's first packet: its clock starts here. */
		ps->first_ns = now_ns;
		ps->last_ns = now_ns;
		t->grid_ns = now_ns;
		t->next_nd_ns = ph->mode == ND_MODE_INTERVAL ? now_ns + ph->value * 1000 : 0;
	} else if (now_ns > ps->last_ns) {
		uint64_t gap = now_ns - ps->last_ns;

		if (gap > ps->max_gap_ns)
			ps->max_gap_ns = gap;
		if (ph->mode == ND_MODE_INTERVAL && gap > ph->value * 1000)
			gap = ph->value * 1000;
		ps->active_ns += gap;
		ps->last_ns = now_ns;
	}
	ps->packets++;
	switch (ph->mode) {
	case ND_MODE_COUNT:
		nd = ps->packets % ph->value == 0;
		break;
	case ND_MODE_INTERVAL:
		if (now_ns >= t->next_nd_ns && ps->packets > 1) {
			uint64_t iv = ph->value * 1000;

			nd = true;
			/* The next boundary after now: missed ones are not owed. */
			t->next_nd_ns = t->grid_ns + ((now_ns - t->grid_ns) / iv + 1) * iv;
		}
		break;
	case ND_MODE_NONE:
		break;
	}
	t->packets++;
	t->bytes += rte_pktmbuf_pkt_len(m);
	if (r == ONVM_PARSE_OK) {
		struct onvm_flow_key k;

		onvm_flow_key_from_info(&pi, &k);
		f = onvm_ft_lookup(&n->ft, &k);
		if (f != NULL) {
			onvm_ft_seen(&n->ft, f, now_ns);
			onvm_ft_touch_value(&n->ft, f);
		} else {
			f = onvm_ft_insert(&n->ft, &k, now_ns, NULL); /* touched */
			if (f == NULL)
				t->untracked++;
		}
		if (f != NULL)
			f->packets++;
	} else if (r == ONVM_PARSE_NOT_IPV4) {
		t->non_ip++;
	} else {
		t->malformed[r]++;
	}
	if (nd) {
		uint64_t v = n->rand(n->rand_arg);

		t->nd_events++;
		ps->nd_events++;
		if (f != NULL) {
			f->nd_events++;
			f->last_rand = v;
		}
	}
	return nd;
}

uint32_t
nd_expire(struct nondet *n, uint64_t now_ns, uint64_t idle_ns, uint32_t budget)
{
	if (idle_ns == 0)
		return 0;
	return onvm_ft_expire(&n->ft, now_ns, idle_ns, budget, NULL, NULL);
}

/* ---- output ------------------------------------------------------------------------ */

int
nd_export(const struct nondet *n, FILE *f)
{
	const struct nd_totals *t = n->t;
	const struct nd_conf *c = n->conf;
	char s[ONVM_RULE_IPV4_STR_LEN], d[ONVM_RULE_IPV4_STR_LEN];
	bool first = true;

	fprintf(f, "{\n  \"mode\": \"");
	/* The -m argument may hold a path: escape what JSON needs. */
	for (const char *p = c->source; *p != '\0'; p++) {
		if (*p == '"' || *p == '\\')
			fputc('\\', f);
		if ((unsigned char)*p < 0x20)
			fprintf(f, "\\u%04x", (unsigned char)*p);
		else
			fputc(*p, f);
	}
	fprintf(f,
		"\",\n  \"packets\": %" PRIu64 ",\n  \"bytes\": %" PRIu64 ",\n  \"nd_events\": %" PRIu64
		",\n  \"non_ip\": %" PRIu64 ",\n  \"untracked\": %" PRIu64 ",\n",
		t->packets, t->bytes, t->nd_events, t->non_ip, t->untracked);
	fprintf(f, "  \"malformed\": {");
	for (int r = ONVM_PARSE_TRUNC_L2; r < ONVM_PARSE_REASON_MAX; r++) {
		if (r == ONVM_PARSE_NOT_IPV4)
			continue;
		fprintf(f, "%s\"%s\": %" PRIu64, first ? "" : ", ", onvm_parse_reason_str(r),
			t->malformed[r]);
		first = false;
	}
	fprintf(f, "},\n  \"current_phase\": %" PRIu64 ",\n  \"phases\": [", t->phase);
	for (uint32_t i = 0; i < c->n_phases; i++) {
		const struct nd_phase *ph = &c->phases[i];
		const struct nd_phase_stats *ps = &t->ph[i];

		fprintf(f,
			"%s\n    {\"phase\": %u, \"mode\": \"%s\", \"value\": %" PRIu64
			", \"seconds\": %.9g, \"packets\": %" PRIu64 ", \"nd_events\": %" PRIu64
			", \"first_ns\": %" PRIu64 ", \"last_ns\": %" PRIu64
			", \"duration_ns\": %" PRIu64 ", \"active_ns\": %" PRIu64
			", \"max_gap_ns\": %" PRIu64 "}",
			i ? "," : "", i, nd_mode_str(ph->mode), ph->value,
			c->schedule ? ph->seconds : 0.0, ps->packets, ps->nd_events, ps->first_ns,
			ps->last_ns, ps->last_ns - ps->first_ns, ps->active_ns, ps->max_gap_ns);
	}
	fprintf(f, "\n  ],\n  \"table\": {\"capacity\": %u, \"flows\": %u, \"full\": %" PRIu64
		   ", \"expired\": %" PRIu64 "},\n  \"flows\": [",
		onvm_ft_capacity(&n->ft), onvm_ft_count(&n->ft), onvm_ft_stats(&n->ft)->full,
		onvm_ft_stats(&n->ft)->expired);
	first = true;
	for (uint32_t slot = 0; slot < onvm_ft_capacity(&n->ft); slot++) {
		const struct nd_flow *v = onvm_ft_slot_value(&n->ft, slot);
		const struct onvm_flow_key *k;

		if (v == NULL)
			continue;
		k = onvm_ft_key(&n->ft, v);
		onvm_rule_ipv4_str(k->src_ip, s);
		onvm_rule_ipv4_str(k->dst_ip, d);
		fprintf(f,
			"%s\n    {\"src\": \"%s\", \"dst\": \"%s\", \"proto\": %u, \"sport\": %u, "
			"\"dport\": %u, \"packets\": %" PRIu64 ", \"nd_events\": %" PRIu64
			", \"last_rand\": %" PRIu64 "}",
			first ? "" : ",", s, d, k->proto, k->sport, k->dport, v->packets, v->nd_events,
			v->last_rand);
		first = false;
	}
	fprintf(f, "%s]\n}\n", first ? "" : "\n  ");
	return ferror(f) ? -EIO : 0;
}

static int
write_export(FILE *f, const void *arg)
{
	return nd_export(arg, f);
}

int
nd_export_file(const struct nondet *n, const char *path)
{
	return nf_write_file(path, write_export, n);
}

void
nd_print_summary(const struct nondet *n, const char *name, FILE *f)
{
	const struct nd_totals *t = n->t;
	const struct nd_phase_stats *ps = &t->ph[t->phase];
	uint64_t bad = 0;

	for (int r = 0; r < ONVM_PARSE_REASON_MAX; r++)
		bad += t->malformed[r];
	fprintf(f,
		"%s: %" PRIu64 " pkts, %" PRIu64 " ND events, phase %" PRIu64 " (%s %" PRIu64
		"): %" PRIu64 " pkts %" PRIu64 " ND; %u flows, non-ip %" PRIu64
		", malformed %" PRIu64 ", untracked %" PRIu64 "\n",
		name, t->packets, t->nd_events, t->phase, nd_mode_str(n->conf->phases[t->phase].mode),
		n->conf->phases[t->phase].value, ps->packets, ps->nd_events, onvm_ft_count(&n->ft),
		t->non_ip, bad, t->untracked);
	fflush(f);
}

