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
 * The table is open addressing with linear probing in one flat array of
 * fixed size (-f, a power of two): no pointers, so the same layout can live
 * in a libnf state region later.  When it is full, new flows are counted in
 * "untracked" rather than evicting old ones.
 *
 * Output: a summary every -p seconds on stdout, and with -e FILE a JSON
 * export written on exit (and on every print when -E is given).  "%i" in
 * FILE becomes the instance id, so several instances of one service can
 * share a command line.
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onvm_nflib.h"
#include "onvm_pkt_helper.h"

struct flow_entry {
	struct onvm_flow_key key;
	uint32_t used;
	uint64_t packets;
	uint64_t bytes;
};

struct monitor {
	uint32_t mask; /* capacity - 1 */
	uint32_t nflows;
	struct flow_entry *table;
	uint64_t packets, bytes;
	uint64_t non_ip;
	uint64_t untracked;
	uint64_t malformed[ONVM_PARSE_REASON_MAX];
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
			if (m->nflows >= (m->mask + 1) - (m->mask + 1) / 4)
				return NULL;
			e->used = 1;
			e->key = *k;
			m->nflows++;
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

	m->packets++;
	m->bytes += len;
	if (r == ONVM_PARSE_OK) {
		struct onvm_flow_key k;
		struct flow_entry *e;

		onvm_flow_key_from_info(&pi, &k);
		e = flow_lookup(m, &k);
		if (e != NULL) {
			e->packets++;
			e->bytes += len;
		} else {
			m->untracked++;
		}
	} else if (r == ONVM_PARSE_NOT_IPV4) {
		m->non_ip++;
	} else {
		m->malformed[r]++;
	}
	nf_pkt_next(meta);
}

static void
ip_str(uint32_t host_order, char *buf)
{
	struct in_addr a = {.s_addr = htonl(host_order)};

	inet_ntop(AF_INET, &a, buf, INET_ADDRSTRLEN);
}

static int
export_json(const struct monitor *m, const char *path)
{
	char tmp[4096], s[INET_ADDRSTRLEN], d[INET_ADDRSTRLEN];
	bool first = true;
	FILE *f;

	/* Write-then-rename: readers never see a half-written file. */
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (f == NULL)
		return -1;
	fprintf(f, "{\n  \"packets\": %" PRIu64 ",\n  \"bytes\": %" PRIu64 ",\n", m->packets,
		m->bytes);
	fprintf(f, "  \"non_ip\": %" PRIu64 ",\n  \"untracked\": %" PRIu64 ",\n", m->non_ip,
		m->untracked);
	fprintf(f, "  \"malformed\": {");
	for (int r = ONVM_PARSE_TRUNC_L2; r < ONVM_PARSE_REASON_MAX; r++) {
		if (r == ONVM_PARSE_NOT_IPV4)
			continue;
		fprintf(f, "%s\"%s\": %" PRIu64, first ? "" : ", ", onvm_parse_reason_str(r),
			m->malformed[r]);
		first = false;
	}
	fprintf(f, "},\n  \"flows\": [");
	first = true;
	for (uint32_t i = 0; i <= m->mask; i++) {
		const struct flow_entry *e = &m->table[i];

		if (!e->used)
			continue;
		ip_str(e->key.src_ip, s);
		ip_str(e->key.dst_ip, d);
		fprintf(f,
			"%s\n    {\"src\": \"%s\", \"dst\": \"%s\", \"proto\": %u, \"sport\": %u, "
			"\"dport\": %u, \"packets\": %" PRIu64 ", \"bytes\": %" PRIu64 "}",
			first ? "" : ",", s, d, e->key.proto, e->key.sport, e->key.dport, e->packets,
			e->bytes);
		first = false;
	}
	fprintf(f, "\n  ]\n}\n");
	if (fclose(f) != 0)
		return -1;
	return rename(tmp, path);
}

static void
print_summary(const struct monitor *m, const char *name)
{
	uint64_t bad = 0;

	for (int r = 0; r < ONVM_PARSE_REASON_MAX; r++)
		bad += m->malformed[r];
	printf("%s: %" PRIu64 " pkts %" PRIu64 " bytes, %u flows, non-ip %" PRIu64
	       ", malformed %" PRIu64 ", untracked %" PRIu64 "\n",
	       name, m->packets, m->bytes, m->nflows, m->non_ip, bad, m->untracked);
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

/* Copy `in` to `out` with every "%i" replaced by the instance id. */
static int
expand_instance(const char *in, uint16_t instance, char *out, size_t len)
{
	size_t o = 0;

	for (; *in != '\0'; in++) {
		int n = 1;

		if (in[0] == '%' && in[1] == 'i') {
			n = snprintf(out + o, len - o, "%u", instance);
			in++;
		} else if (o + 1 < len) {
			out[o] = *in;
		}
		if (n < 0 || o + n >= len)
			return -1;
		o += n;
	}
	out[o] = '\0';
	return 0;
}

int
main(int argc, char **argv)
{
	static char export_buf[4096];
	struct monitor m = {.print_s = 5};
	struct nf_ops ops = {.pkt = monitor_packet, .tick = monitor_tick, .tick_ms = 100};
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
	if (m.export_path != NULL && expand_instance(m.export_path, nf_instance_id(nf), export_buf,
						    sizeof(export_buf)) < 0) {
		fprintf(stderr, "basic_monitor: -e path too long\n");
		ret = 2;
		goto out;
	}
	if (m.export_path != NULL)
		m.export_path = export_buf;
	m.mask = flows - 1;
	m.table = calloc(flows, sizeof(*m.table));
	if (m.table == NULL) {
		fprintf(stderr, "basic_monitor: no memory for %lu flows\n", flows);
		ret = 1;
		goto out;
	}
	nf_run(nf, &ops, &m);
	print_summary(&m, nf_name(nf));
	if (m.export_path != NULL && export_json(&m, m.export_path) < 0) {
		fprintf(stderr, "basic_monitor: cannot write %s\n", m.export_path);
		ret = 1;
	}
out:
	nf_fini(nf);
	/* nf_fini() may have run the handler on the last queued packets. */
	if (m.table != NULL && m.export_path != NULL && ret == 0)
		export_json(&m, m.export_path);
	free(m.table);
	return ret;
}
