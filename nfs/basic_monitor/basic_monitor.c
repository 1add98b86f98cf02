/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * basic_monitor -- per-flow packet and byte counters; passes every packet on.
 *
 * Flows are directional IPv4 5-tuples (what tshark's conversation statistics
 * call an endpoint pair in one direction).  Packets that are not IPv4 are
 * counted as "non_ip"; IPv4 packets that fail to parse are counted as
 * "malformed" by reason.  Both are still forwarded: a monitor observes, it
 * does not filter.
 *
 * The counters live in two libnf state regions -- "totals" and "flows", an
 * open-addressing table with linear probing of fixed size (-f, a power of
 * two) -- and every update is announced with nf_touch() first, so libnf
 * commits them to the replica at the end of each batch and a standby takes
 * over exactly the counts of the packets this NF emitted.  When the table is
 * full, new flows are counted in "untracked" rather than evicting old ones.
 *
 * Output: a summary every -p seconds on stdout, and with -e FILE a JSON
 * export written on exit (and on every print when -E is given).  "%i" in
 * FILE becomes the instance id, so several instances of one service can
 * share a command line.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onvm_nf_output.h"
#include "onvm_nflib.h"
#include "onvm_pkt_helper.h"
#include "onvm_rule.h"

struct flow_entry {
	struct onvm_flow_key key;
	uint32_t used;
	uint64_t packets;
	uint64_t bytes;
};

/* Region "totals". */
struct monitor_totals {
	uint32_t nflows;
	uint32_t pad;
	uint64_t packets, bytes;
	uint64_t non_ip;
	uint64_t untracked;
	uint64_t malformed[ONVM_PARSE_REASON_MAX];
};

struct monitor {
	struct nf_ctx *nf;
	uint32_t mask;		    /* capacity - 1 */
	struct flow_entry *table;   /* region "flows" */
	struct monitor_totals *t;   /* region "totals" */
	uint32_t print_s;
	uint64_t last_print_ns;
	const char *export_path;
	bool export_periodic;
};

static uint32_t
key_hash(const struct onvm_flow_key *k)
{
	/* Directional: both halves of a connection are separate flows here. */
	uint32_t h = k->src_ip * 0x9e3779b1u;

	h ^= k->dst_ip + 0x7f4a7c15u + (h << 6) + (h >> 2);
	h ^= (((uint32_t)k->sport << 16) | k->dport) + 0x85ebca6bu + (h << 6) + (h >> 2);
	h ^= k->proto + (h << 6) + (h >> 2);
	return h;
}

static struct flow_entry *
flow_lookup(struct monitor *m, const struct onvm_flow_key *k)
{
	uint32_t i = key_hash(k) & m->mask;

	for (uint32_t probes = 0; probes <= m->mask; probes++, i = (i + 1) & m->mask) {
		struct flow_entry *e = &m->table[i];

		if (!e->used) {
			/* Keep a quarter free so probe sequences stay short. */
			if (m->t->nflows >= (m->mask + 1) - (m->mask + 1) / 4)
				return NULL;
			nf_touch(m->nf, e, sizeof(*e));
			e->used = 1;
			e->key = *k;
			m->t->nflows++;
			return e;
		}
		if (memcmp(&e->key, k, sizeof(*k)) == 0)
			return e;
	}
	return NULL;
}

static void
monitor_packet(struct rte_mbuf *pkt, struct onvm_pkt_meta *meta, struct nf_ctx *nf)
{
	struct monitor *m = nf_user(nf);
	uint32_t len = rte_pktmbuf_pkt_len(pkt);
	struct onvm_pkt_info pi;
	enum onvm_parse_reason r = nf_pkt_parse(pkt, &pi);

	nf_touch(nf, m->t, sizeof(*m->t));
	m->t->packets++;
	m->t->bytes += len;
	if (r == ONVM_PARSE_OK) {
		struct onvm_flow_key k;
		struct flow_entry *e;

		onvm_flow_key_from_info(&pi, &k);
		e = flow_lookup(m, &k);
		if (e != NULL) {
			nf_touch(nf, e, sizeof(*e));
			e->packets++;
			e->bytes += len;
		} else {
			m->t->untracked++;
		}
	} else if (r == ONVM_PARSE_NOT_IPV4) {
		m->t->non_ip++;
	} else {
		m->t->malformed[r]++;
	}
	nf_pkt_next(meta);
}

static int
write_json(FILE *f, const void *arg)
{
	const struct monitor *m = arg;
	char s[ONVM_RULE_IPV4_STR_LEN], d[ONVM_RULE_IPV4_STR_LEN];
	bool first = true;

	fprintf(f, "{\n  \"packets\": %" PRIu64 ",\n  \"bytes\": %" PRIu64 ",\n",
		m->t->packets, m->t->bytes);
	fprintf(f, "  \"non_ip\": %" PRIu64 ",\n  \"untracked\": %" PRIu64 ",\n",
		m->t->non_ip, m->t->untracked);
	fprintf(f, "  \"malformed\": {");
	for (int r = ONVM_PARSE_TRUNC_L2; r < ONVM_PARSE_REASON_MAX; r++) {
		if (r == ONVM_PARSE_NOT_IPV4)
			continue;
		fprintf(f, "%s\"%s\": %" PRIu64, first ? "" : ", ", onvm_parse_reason_str(r),
			m->t->malformed[r]);
		first = false;
	}
	fprintf(f, "},\n  \"flows\": [");
	first = true;
	for (uint32_t i = 0; i <= m->mask; i++) {
		const struct flow_entry *e = &m->table[i];

		if (!e->used)
			continue;
		onvm_rule_ipv4_str(e->key.src_ip, s);
		onvm_rule_ipv4_str(e->key.dst_ip, d);
		fprintf(f,
			"%s\n    {\"src\": \"%s\", \"dst\": \"%s\", \"proto\": %u, \"sport\": %u, "
			"\"dport\": %u, \"packets\": %" PRIu64 ", \"bytes\": %" PRIu64 "}",
			first ? "" : ",", s, d, e->key.proto, e->key.sport, e->key.dport, e->packets,
			e->bytes);
		first = false;
	}
	fprintf(f, "\n  ]\n}\n");
	return ferror(f) ? -1 : 0;
}

static int
export_json(const struct monitor *m, const char *path)
{
	return nf_write_file(path, write_json, m);
}

static void
print_summary(const struct monitor *m, const char *name)
{
	uint64_t bad = 0;

	for (int r = 0; r < ONVM_PARSE_REASON_MAX; r++)
		bad += m->t->malformed[r];
	printf("%s: %" PRIu64 " pkts %" PRIu64 " bytes, %u flows, non-ip %" PRIu64
	       ", malformed %" PRIu64 ", untracked %" PRIu64 "\n",
	       name, m->t->packets, m->t->bytes, m->t->nflows, m->t->non_ip, bad,
	       m->t->untracked);
	fflush(stdout);
}

static void
monitor_tick(struct nf_ctx *nf, uint64_t now_ns)
{
	struct monitor *m = nf_user(nf);

	if (m->print_s == 0 || now_ns - m->last_print_ns < m->print_s * 1000000000ULL)
		return;
	m->last_print_ns = now_ns;
	print_summary(m, nf_name(nf));
	if (m->export_path != NULL && m->export_periodic && export_json(m, m->export_path) < 0)
		fprintf(stderr, "basic_monitor: cannot write %s\n", m->export_path);
}

static int export_failed;

/* After the last packet (nf_fini drains the queue first), state still mapped. */
static void
monitor_fini(struct nf_ctx *nf)
{
	struct monitor *m = nf_user(nf);

	print_summary(m, nf_name(nf));
	if (m->export_path != NULL && export_json(m, m->export_path) < 0) {
		fprintf(stderr, "basic_monitor: cannot write %s\n", m->export_path);
		export_failed = 1;
	}
}

int
main(int argc, char **argv)
{
	static char export_buf[4096];
	struct monitor m = {.print_s = 5};
	struct nf_ops ops = {
		.pkt = monitor_packet, .tick = monitor_tick, .tick_ms = 100, .fini = monitor_fini,
	};
	unsigned long flows = 65536;
	struct nf_ctx *nf;
	int n, opt, ret = 0;

	n = nf_init(argc, argv, "basic_monitor", &nf);
	if (n < 0)
		return 1;
	argc -= n;
	argv += n;
	while ((opt = getopt(argc, argv, "f:e:Ep:h")) != -1) {
		char *end;

		switch (opt) {
		case 'f':
			flows = strtoul(optarg, &end, 10);
			if (*end != '\0' || flows < 16 || flows > (1ul << 26) ||
			    (flows & (flows - 1)) != 0) {
				fprintf(stderr, "basic_monitor: -f wants a power of two, 16..2^26\n");
				ret = 2;
				goto out;
			}
			break;
		case 'e':
			m.export_path = optarg;
			break;
		case 'E':
			m.export_periodic = true;
			break;
		case 'p':
			m.print_s = strtoul(optarg, &end, 10);
			if (*end != '\0') {
				fprintf(stderr, "basic_monitor: -p wants seconds\n");
				ret = 2;
				goto out;
			}
			break;
		default:
			fprintf(stderr,
				"usage: %s [EAL] -- -r SVC -- [-f FLOWS] [-e FILE [-E]] [-p SECS]\n",
				argv[0]);
			ret = 2;
			goto out;
		}
	}
	if (m.export_path != NULL && nf_expand_instance(m.export_path, nf_instance_id(nf), export_buf,
						    sizeof(export_buf)) < 0) {
		fprintf(stderr, "basic_monitor: -e path too long\n");
		ret = 2;
		goto out;
	}
	if (m.export_path != NULL)
		m.export_path = export_buf;
	m.nf = nf;
	m.mask = flows - 1;
	if (nf_state_declare(nf, "totals", sizeof(struct monitor_totals), 0) < 0 ||
	    nf_state_declare(nf, "flows", flows * sizeof(struct flow_entry), 0) < 0 ||
	    nf_state_map(nf) < 0) {
		fprintf(stderr, "basic_monitor: no state memory for %lu flows\n", flows);
		ret = 1;
		goto out;
	}
	m.t = nf_state_ptr(nf, "totals");
	m.table = nf_state_ptr(nf, "flows");
	nf_run(nf, &ops, &m);
out:
	nf_fini(nf); /* runs monitor_fini() when the monitor ran */
	return ret != 0 ? ret : export_failed;
}
