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
 * The counters live in two libnf state regions -- "totals" and "flows", a
 * libnf flow table (onvm_flow_table.h) of fixed size (-f, a power of
 * two), which is what lets libnf move flows, with their counters, to
 * another instance -- and every update is announced first, so libnf
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

#include "onvm_flow_table.h"
#include "onvm_nf_output.h"
#include "onvm_nflib.h"
#include "onvm_pkt_helper.h"
#include "onvm_rule.h"

/* A flow's value in the "flows" table. */
struct flow_counts {
	uint64_t packets;
	uint64_t bytes;
};

/* Region "totals". */
struct monitor_totals {
	uint32_t pad0; /* (was the flow count: the table keeps it) */
	uint32_t pad;
	uint64_t packets, bytes;
	uint64_t non_ip;
	uint64_t untracked;
	uint64_t malformed[ONVM_PARSE_REASON_MAX];
};

struct monitor {
	struct nf_ctx *nf;
	uint32_t capacity;
	void *flows_mem;	    /* region "flows" */
	size_t flows_len;
	struct onvm_ft ft;	    /* in it, once open (ft_open) */
	bool ft_open;
	struct monitor_totals *t;   /* region "totals" */
	uint32_t print_s;
	uint64_t last_print_ns;
	const char *export_path;
	bool export_periodic;
};

/*
 * The table is opened at the first packet, not at start: a standby maps
 * its active's regions, and must not format them while the active may be
 * writing there (opening a fresh region writes its header).
 */
/* For reading (the summary, the export): the table as it is, if the
 * region holds one -- state this instance took over (a promoted standby,
 * a stateless chain's state loaded from its store) before its first
 * packet, or none yet.  Never formats. */
static bool
flows_readable(struct monitor *m)
{
	if (!m->ft_open &&
	    onvm_ft_attach(&m->ft, nf_state(m->nf), m->flows_mem, m->flows_len) == 0)
		m->ft_open = true;
	return m->ft_open;
}

static bool
flows_open(struct monitor *m)
{
	char err[160];

	if (m->ft_open)
		return true;
	if (onvm_ft_open(&m->ft, nf_state(m->nf), m->flows_mem, m->flows_len, m->capacity,
			 sizeof(struct flow_counts), err, sizeof(err)) < 0) {
		fprintf(stderr, "basic_monitor: %s\n", err);
		return false;
	}
	m->ft_open = true;
	return true;
}

static void
monitor_packet(struct rte_mbuf *pkt, struct onvm_pkt_meta *meta, struct nf_ctx *nf)
{
	struct monitor *m = nf_user(nf);
	uint32_t len = rte_pktmbuf_pkt_len(pkt);
	struct onvm_pkt_info pi;
	enum onvm_parse_reason r = nf_pkt_parse(pkt, &pi);

	/* (a flow migration's copy: the flow's counters catch up, the totals
	 * counted it at the flow's old instance) */
	if (!nf_is_reprocessing(nf)) {
		nf_touch(nf, m->t, sizeof(*m->t));
		m->t->packets++;
		m->t->bytes += len;
	}
	if (r == ONVM_PARSE_OK) {
		struct onvm_flow_key k;
		struct flow_counts *e;

		onvm_flow_key_from_info(&pi, &k);
		/* (insert touches the entry it returns) */
		e = flows_open(m) ? onvm_ft_insert(&m->ft, &k, 0, NULL) : NULL;
		if (e != NULL) {
			e->packets++;
			e->bytes += len;
		} else if (!nf_is_reprocessing(nf)) {
			m->t->untracked++;
		}
	} else if (nf_is_reprocessing(nf)) {
		/* (nothing per flow to catch up) */
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
	for (uint32_t i = 0; m->ft_open && i < onvm_ft_capacity(&m->ft); i++) {
		const struct flow_counts *e = onvm_ft_slot_value(&m->ft, i);
		const struct onvm_flow_key *k;

		if (e == NULL)
			continue;
		k = onvm_ft_key(&m->ft, e);
		onvm_rule_ipv4_str(k->src_ip, s);
		onvm_rule_ipv4_str(k->dst_ip, d);
		fprintf(f,
			"%s\n    {\"src\": \"%s\", \"dst\": \"%s\", \"proto\": %u, \"sport\": %u, "
			"\"dport\": %u, \"packets\": %" PRIu64 ", \"bytes\": %" PRIu64 "}",
			first ? "" : ",", s, d, k->proto, k->sport, k->dport, e->packets, e->bytes);
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
	       name, m->t->packets, m->t->bytes, m->ft_open ? onvm_ft_count(&m->ft) : 0,
	       m->t->non_ip, bad,
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
	flows_readable(m);
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

	flows_readable(m);
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
		.movable = true, /* per-flow counters: the flow table */
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
	m.capacity = (uint32_t)flows;
	m.flows_len = onvm_ft_mem_size(m.capacity, sizeof(struct flow_counts));
	if (nf_state_declare(nf, "totals", sizeof(struct monitor_totals), 0) < 0 ||
	    nf_state_declare(nf, "flows", m.flows_len, 0) < 0 ||
	    nf_state_map(nf) < 0) {
		fprintf(stderr, "basic_monitor: no state memory for %lu flows\n", flows);
		ret = 1;
		goto out;
	}
	m.t = nf_state_ptr(nf, "totals");
	m.flows_mem = nf_state_ptr(nf, "flows");
	nf_run(nf, &ops, &m);
out:
	nf_fini(nf); /* runs monitor_fini() when the monitor ran */
	return ret != 0 ? ret : export_failed;
}
