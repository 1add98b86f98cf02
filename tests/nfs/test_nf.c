/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * test_nf -- an NF for tests: configurable action, per-packet delay (so a
 * kill lands mid-trace), and a fault hook that SIGKILLs itself while it holds
 * a batch.  Not installed.
 *
 *   -a next|drop|out:P|tonf:S   action for every packet (default next)
 *   -d US                       busy-wait US microseconds per packet
 *   -b                          invalid action value (tests the manager's check)
 *   -N K                        draw an ND random number on every Kth packet
 *   -S                          count packets and bytes in a libnf state region
 *   -F POINT:N                  SIGKILL itself at fault POINT (processed, mid_commit,
 *                               committed, mid_emit) of the batch holding packet N;
 *                               only the first incarnation (never a promoted standby)
 *   -F POINT:usr1               the same at the first batch after each SIGUSR1, in every
 *                               incarnation (benchmarks: a crash on the NF's own CPU)
 *   -H N                        hang (spin forever in the handler) at packet N; first
 *                               incarnation only (the manager's heartbeat check kills it)
 *   -D FILE                     with -F: write the CLOCK_MONOTONIC ns of the crash to FILE
 *                               just before it (the benchmark's time of death)
 *   -e FILE                     write {"packets": P, "bytes": B} (state) on exit; %i: instance
 */
#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_pause.h>

#include "onvm_nflib.h"

struct test_totals {
	uint64_t packets;
	uint64_t bytes;
};

struct test_conf {
	uint8_t action;
	uint16_t dest;
	uint64_t delay_cycles;
	uint64_t nd_every;
	uint64_t seen;
	struct test_totals *totals; /* state region, with -S */
	int fault_point;	    /* -1: none */
	uint64_t fault_at;
	bool fault_due;
	bool fault_on_usr1;
	uint64_t hang_at; /* -H, 0: never */
	int death_fd; /* -D */
	const char *export_path;
};

static struct test_conf conf = {.action = ONVM_ACTION_NEXT, .fault_point = -1, .death_fd = -1};
static volatile sig_atomic_t usr1_seen;

static void
on_usr1(int sig)
{
	(void)sig;
	usr1_seen = 1;
}

static void
test_fault(struct nf_ctx *nf, enum nf_fault_point point)
{
	(void)nf;
	if (conf.fault_on_usr1 && usr1_seen)
		conf.fault_due = true;
	if (conf.fault_due && (int)point == conf.fault_point) {
		if (conf.death_fd >= 0) {
			struct timespec ts;
			char buf[32];
			int len;

			clock_gettime(CLOCK_MONOTONIC, &ts);
			len = snprintf(buf, sizeof(buf), "%020" PRIu64 "\n",
				       (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
			if (pwrite(conf.death_fd, buf, len, 0) != len)
				perror("test_nf: -D");
		}
		kill(getpid(), SIGKILL);
	}
}

static void
test_fini(struct nf_ctx *nf)
{
	char path[4096];
	FILE *f;
	const char *p = conf.export_path;
	size_t o = 0;

	if (p == NULL || conf.totals == NULL)
		return;
	for (; *p != '\0' && o + 8 < sizeof(path); p++) {
		if (p[0] == '%' && p[1] == 'i') {
			o += snprintf(path + o, sizeof(path) - o, "%u", nf_instance_id(nf));
			p++;
		} else {
			path[o++] = *p;
		}
	}
	path[o] = '\0';
	f = fopen(path, "w");
	if (f == NULL)
		return;
	fprintf(f, "{\"packets\": %" PRIu64 ", \"bytes\": %" PRIu64 "}\n", conf.totals->packets,
		conf.totals->bytes);
	fclose(f);
}

static void
test_packet(struct rte_mbuf *pkt, struct onvm_pkt_meta *meta, struct nf_ctx *nf)
{
	struct test_conf *c = nf_user(nf);

	c->seen++;
	if (c->totals != NULL) {
		nf_touch(nf, c->totals, sizeof(*c->totals));
		c->totals->packets++;
		c->totals->bytes += rte_pktmbuf_pkt_len(pkt);
	}
	if (c->fault_point >= 0 && c->seen == c->fault_at)
		c->fault_due = true;
	if (unlikely(c->seen == c->hang_at))
		for (;;)
			rte_pause();
	if (c->nd_every != 0 && c->seen % c->nd_every == 0)
		(void)nf_nd_rand(nf);
	if (c->delay_cycles != 0) {
		uint64_t end = rte_get_tsc_cycles() + c->delay_cycles;

		while (rte_get_tsc_cycles() < end)
			;
	}
	meta->action = c->action;
	meta->destination = c->dest;
}

static int
parse_action(const char *s, struct test_conf *c)
{
	if (strcmp(s, "next") == 0) {
		c->action = ONVM_ACTION_NEXT;
	} else if (strcmp(s, "drop") == 0) {
		c->action = ONVM_ACTION_DROP;
	} else if (strncmp(s, "out:", 4) == 0) {
		c->action = ONVM_ACTION_OUT;
		c->dest = atoi(s + 4);
	} else if (strncmp(s, "tonf:", 5) == 0) {
		c->action = ONVM_ACTION_TONF;
		c->dest = atoi(s + 5);
	} else {
		return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	static const char *const points[] = {"processed", "mid_commit", "committed", "mid_emit"};
	struct nf_ops ops = {.pkt = test_packet, .fini = test_fini};
	bool with_state = false;
	uint64_t hang_at = 0;
	struct nf_ctx *nf;
	int n, opt;

	n = nf_init(argc, argv, "test_nf", &nf);
	if (n < 0)
		return 1;
	argc -= n;
	argv += n;
	while ((opt = getopt(argc, argv, "a:d:bN:SF:e:D:H:")) != -1) {
		switch (opt) {
		case 'a':
			if (parse_action(optarg, &conf) < 0)
				goto bad;
			break;
		case 'd':
			conf.delay_cycles = strtoull(optarg, NULL, 10) * rte_get_tsc_hz() / 1000000;
			break;
		case 'b':
			conf.action = 77;
			break;
		case 'N':
			conf.nd_every = strtoull(optarg, NULL, 10);
			break;
		case 'S':
			with_state = true;
			break;
		case 'e':
			conf.export_path = optarg;
			break;
		case 'F': {
			const char *colon = strchr(optarg, ':');

			for (int i = 0; colon != NULL && i < 4; i++)
				if (strncmp(optarg, points[i], colon - optarg) == 0 &&
				    strlen(points[i]) == (size_t)(colon - optarg))
					conf.fault_point = i;
			if (conf.fault_point < 0)
				goto bad;
			if (strcmp(colon + 1, "usr1") == 0)
				conf.fault_on_usr1 = true;
			else
				conf.fault_at = strtoull(colon + 1, NULL, 10);
			break;
		}
		case 'H':
			hang_at = strtoull(optarg, NULL, 10);
			break;
		case 'D':
			conf.death_fd = open(optarg, O_WRONLY | O_CREAT, 0644); /* every incarnation */
			if (conf.death_fd < 0) {
				perror(optarg);
				goto bad;
			}
			break;
		default:
			goto bad;
		}
	}
	if (with_state) {
		if (nf_state_declare(nf, "totals", sizeof(struct test_totals), 0) < 0 ||
		    nf_state_map(nf) < 0)
			goto bad;
		conf.totals = nf_state_ptr(nf, "totals");
	}
	/* Counted faults hit the first incarnation only: a promoted standby
	 * runs clean.  Signalled faults hit whoever is active when signalled. */
	if (!nf_is_standby(nf))
		conf.hang_at = hang_at;
	if (conf.fault_on_usr1)
		signal(SIGUSR1, on_usr1);
	if (conf.fault_point >= 0 && (conf.fault_on_usr1 || !nf_is_standby(nf)))
		nf_set_fault_hook(nf, test_fault);
	nf_run(nf, &ops, &conf);
	nf_fini(nf);
	return 0;
bad:
	fprintf(stderr, "test_nf: bad arguments\n");
	nf_fini(nf);
	return 2;
}
