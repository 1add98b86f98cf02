/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * bridge -- port-to-port forwarding: a packet that entered on port P leaves
 * on map[P] (default: 0<->1, 2<->3, ...; -m IN:OUT,... to change).
 *
 * Alone, it sends the packet out at once (OUT).  With -n it only chooses the
 * exit port (meta->egress_port) and passes the packet to the next service,
 * so a chain "bridge -> monitor -> forward" ends on the port the bridge chose.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onvm_nflib.h"

struct bridge_conf {
	bool next;
	uint8_t map[ONVM_MAX_PORTS];
	uint64_t bad_port;
};

static void
bridge_packet(struct rte_mbuf *pkt, struct onvm_pkt_meta *meta, struct nf_ctx *nf)
{
	struct bridge_conf *c = nf_user(nf);
	uint8_t out;

	(void)pkt;
	if (meta->in_port >= ONVM_MAX_PORTS || c->map[meta->in_port] == ONVM_PORT_UNSET) {
		c->bad_port++;
		nf_pkt_drop(meta);
		return;
	}
	out = c->map[meta->in_port];
	if (c->next) {
		meta->egress_port = out;
		nf_pkt_next(meta);
	} else {
		nf_pkt_out(meta, out);
	}
}

/* "0:1,1:0" */
static int
parse_map(const char *s, struct bridge_conf *c, uint16_t nports)
{
	memset(c->map, ONVM_PORT_UNSET, sizeof(c->map));
	while (*s != '\0') {
		char *end;
		unsigned long in = strtoul(s, &end, 10), out;

		if (end == s || *end != ':')
			return -1;
		s = end + 1;
		out = strtoul(s, &end, 10);
		if (end == s || in >= nports || out >= nports)
			return -1;
		c->map[in] = out;
		s = end;
		if (*s == ',')
			s++;
		else if (*s != '\0')
			return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct bridge_conf conf = {0};
	struct nf_ops ops = {.pkt = bridge_packet};
	struct nf_ctx *nf;
	uint16_t nports;
	int n, opt;

	n = nf_init(argc, argv, "bridge", &nf);
	if (n < 0)
		return 1;
	argc -= n;
	argv += n;
	nports = nf_port_count(nf);
	memset(conf.map, ONVM_PORT_UNSET, sizeof(conf.map));
	for (uint16_t p = 0; p < nports; p++)
		conf.map[p] = (p ^ 1) < nports ? (p ^ 1) : p;
	while ((opt = getopt(argc, argv, "m:nh")) != -1) {
		switch (opt) {
		case 'm':
			if (parse_map(optarg, &conf, nports) < 0) {
				fprintf(stderr, "bridge: bad -m '%s' (IN:OUT,... with ports < %u)\n",
					optarg, nports);
				nf_fini(nf);
				return 2;
			}
			break;
		case 'n':
			conf.next = true;
			break;
		default:
			fprintf(stderr, "usage: %s [EAL] -- -r SVC -- [-m IN:OUT,...] [-n]\n",
				argv[0]);
			nf_fini(nf);
			return 2;
		}
	}
	nf_run(nf, &ops, &conf);
	if (conf.bad_port)
		fprintf(stderr, "bridge: %" PRIu64 " packets from unmapped ports dropped\n",
			conf.bad_port);
	nf_fini(nf);
	return 0;
}
