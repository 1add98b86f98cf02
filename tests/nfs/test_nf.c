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
 *   -W BYTES:N                  with -S: also dirty BYTES of a second region (64-byte
 *                               chunks) every N packets -- an 8-byte counter in each
 *                               chunk, a few per packet, round the region (benchmarks:
 *                               bytes of state updated per epoch of N packets)
 *   -F POINT:N                  SIGKILL itself at fault POINT (processed, mid_commit,
 *                               committed, mid_emit, mid_alloc, fini) of the batch
 *                               holding packet N; only the first incarnation (never a
 *                               promoted standby); fini: N is ignored
 *   -F POINT:usr1               the same at the first batch after each SIGUSR1, in every
 *                               incarnation (benchmarks: a crash on the NF's own CPU);
 *                               after a SIGUSR2, dying of a SIGSEGV whatever -K says
 *   -C                          with -F: damage the state block's sequence numbers
 *                               just before dying (a standby cannot trust the state)
 *   -H N                        hang (spin forever in the handler) at packet N; first
 *                               incarnation only (the manager's heartbeat check kills it)
 *   -h N                        the same, in a promoted standby only (N counts from 1
 *                               again after the promotion)
 *   -g K:P                      generate: every Kth packet, allocate a copy of it
 *                               (nf_pkt_alloc) and send it out of port P
 *   -u                          with -g: also allocate one packet per copy and never
 *                               send it (libnf must drop it, not leak it)
 *   -x FILE                     as a standby: exit with status 3 before parking if FILE
 *                               exists (a standby that fails to start)
 *   -K kill|segv|bus|fpe|abort  with -F: how it dies -- SIGKILL (default), or the NF's own
 *                               bug: a write through NULL, a bus error, an integer division
 *                               by zero, abort() (libnf's crash hand-over; no core file)
 *   -D FILE                     with -F: write the CLOCK_MONOTONIC ns of the crash to FILE
 *                               just before it (the benchmark's time of death)
 *   -e FILE                     write {"packets": P, "bytes": B} (state) on exit; %i: instance
 *   -A KEY[:DELTA]              add DELTA (default 1) to shared-state counter KEY per
 *                               packet (nf_shared_add)
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_pause.h>

#include "onvm_nflib.h"
#include "onvm_state.h"

#define WIDE_CHUNK 64 /* -W: NF_STATE_CHUNK_MIN */

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
	uint64_t *wide;		    /* -W: the second region, `wide_chunks` 64-byte chunks */
	uint32_t wide_chunks, wide_per_pkt, wide_next;
	int fault_point;	    /* -1: none */
	uint64_t fault_at;
	bool fault_due;
	bool fault_on_usr1;
	bool corrupt_state; /* -C */
	uint64_t hang_at; /* -H / -h in the incarnation it applies to, 0: never */
	uint64_t gen_every; /* -g */
	uint16_t gen_port;
	bool gen_unsent;    /* -u */
	char *death_map; /* -D: the file, mapped (a store, not a write(2), at death) */
	int death;    /* -K: 0 for SIGKILL, else the signal the crash raises */
	const char *export_path;
	int shared_key; /* -A: add shared_delta to this shared-state key per packet (-1: no) */
	int64_t shared_delta;
};

static struct test_conf conf = {.action = ONVM_ACTION_NEXT, .fault_point = -1, .shared_key = -1};
static volatile sig_atomic_t usr1_seen;

static void
on_usr1(int sig)
{
	usr1_seen = sig == SIGUSR2 ? 2 : 1;
}

#define DEATH_FILE_LEN 22 /* 20 digits, a newline, a NUL */

static int
map_death_file(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT, 0644);
	void *p;

	if (fd < 0 || ftruncate(fd, DEATH_FILE_LEN - 1) != 0)
		return -1;
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return -1;
	conf.death_map = p;
	/* Fault the page in writable now, not at death (the first digit is a
	 * '0' whichever incarnation wrote it: rewriting it changes nothing). */
	*(volatile char *)conf.death_map = *(volatile char *)conf.death_map;
	return 0;
}

/* Die as -K says: like a real bug, from the faulting instruction itself. */
static void
crash(int how)
{
	static volatile int zero, seven = 7;
	static volatile int *volatile null_ptr;

	switch (how) {
	case SIGSEGV:
		*null_ptr = 1;
		break;
	case SIGBUS: {
		/* A page of a file past its end. */
		FILE *f = tmpfile();
		volatile char *p = f == NULL ? NULL
				: mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fileno(f), 0);

		if (p != NULL && p != MAP_FAILED)
			p[0] = 1;
		break;
	}
	case SIGFPE:
		zero = seven / zero; /* (1 / x needs no division: gcc does without) */
		break;
	case SIGABRT:
		abort();
	}
	kill(getpid(), SIGKILL);
}

static void
test_fault(struct nf_ctx *nf, enum nf_fault_point point)
{
	if (conf.fault_on_usr1 && usr1_seen) {
		conf.fault_due = true;
		if (usr1_seen == 2)
			conf.death = SIGSEGV;
	}
	if (point == NF_FAULT_FINI && conf.fault_point == NF_FAULT_FINI)
		conf.fault_due = true;
	if (conf.fault_due && (int)point == conf.fault_point) {
		if (conf.death_map != NULL) {
			/* A store into the page cache: a pwrite(2) here took
			 * 12-27 us on ext4, all of it counted as failover time. */
			struct timespec ts;

			clock_gettime(CLOCK_MONOTONIC, &ts);
			snprintf(conf.death_map, DEATH_FILE_LEN, "%020" PRIu64 "\n",
				 (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
		}
		if (conf.corrupt_state && nf_state(nf) != NULL) {
			/* Sequence numbers that cannot both be right. */
			struct nf_state_hdr *h = nf_state(nf)->hdr;

			__atomic_store_n(&h->commit_seq, h->replica_seq + 7, __ATOMIC_RELEASE);
		}
		crash(conf.death);
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

/* -g: a copy of `pkt` out of conf.gen_port (and, with -u, one never sent). */
static void
generate(struct nf_ctx *nf, struct rte_mbuf *pkt)
{
	struct rte_mbuf *m = nf_pkt_alloc(nf);
	uint32_t len = rte_pktmbuf_data_len(pkt);
	char *dst;

	if (m == NULL)
		return;
	dst = rte_pktmbuf_append(m, RTE_MIN(len, (uint32_t)rte_pktmbuf_tailroom(m)));
	if (dst != NULL)
		memcpy(dst, rte_pktmbuf_mtod(pkt, const void *), rte_pktmbuf_data_len(m));
	nf_pkt_out(nf_pkt_meta(m), conf.gen_port);
	if (nf_pkt_send(nf, m) != 0)
		fprintf(stderr, "test_nf: nf_pkt_send refused its own packet\n");
	if (conf.gen_unsent)
		(void)nf_pkt_alloc(nf); /* dropped by libnf at the end of the batch */
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
	for (uint32_t k = 0; k < c->wide_per_pkt; k++) {
		uint64_t *w = &c->wide[(size_t)c->wide_next * (WIDE_CHUNK / sizeof(uint64_t))];

		nf_touch(nf, w, sizeof(*w));
		(*w)++;
		c->wide_next = c->wide_next + 1 == c->wide_chunks ? 0 : c->wide_next + 1;
	}
	if (c->fault_point >= 0 && c->seen == c->fault_at)
		c->fault_due = true;
	if (unlikely(c->seen == c->hang_at))
		for (;;)
			rte_pause();
	if (c->nd_every != 0 && c->seen % c->nd_every == 0)
		(void)nf_nd_rand(nf);
	if (c->gen_every != 0 && c->seen % c->gen_every == 0)
		generate(nf, pkt);
	if (c->shared_key >= 0 && nf_shared_add(nf, (uint32_t)c->shared_key, c->shared_delta) != 0)
		fprintf(stderr, "test_nf: nf_shared_add refused key %d\n", c->shared_key);
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
	static const char *const points[] = {
	    [NF_FAULT_PROCESSED] = "processed", [NF_FAULT_MID_COMMIT] = "mid_commit",
	    [NF_FAULT_COMMITTED] = "committed", [NF_FAULT_MID_EMIT] = "mid_emit",
	    [NF_FAULT_MID_ALLOC] = "mid_alloc", [NF_FAULT_FINI] = "fini",
	};
	/* (no per-flow state: its counters are the instance's) */
	struct nf_ops ops = {.pkt = test_packet, .fini = test_fini};
	const char *fail_file = NULL;
	bool with_state = false;
	unsigned long long wide_bytes = 0, wide_every = 1;
	uint64_t hang_at = 0, hang_promoted_at = 0;
	struct nf_ctx *nf;
	int n, opt;

	n = nf_init(argc, argv, "test_nf", &nf);
	if (n < 0)
		return 1;
	argc -= n;
	argv += n;
	while ((opt = getopt(argc, argv, "a:d:bN:SW:F:Ce:D:H:h:g:ux:K:A:")) != -1) {
		switch (opt) {
		case 'a':
			if (parse_action(optarg, &conf) < 0)
				goto bad;
			break;
		case 'A': {
			long long delta = 1;

			if (sscanf(optarg, "%d:%lld", &conf.shared_key, &delta) < 1)
				goto bad;
			conf.shared_delta = delta;
			break;
		}
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
		case 'W': {
			unsigned long long bytes, every;

			if (sscanf(optarg, "%llu:%llu", &bytes, &every) != 2 || bytes == 0 ||
			    every == 0 || bytes > (64ULL << 20))
				goto bad;
			wide_bytes = bytes;
			wide_every = every;
			break;
		}
		case 'e':
			conf.export_path = optarg;
			break;
		case 'F': {
			const char *colon = strchr(optarg, ':');

			for (int i = 0; colon != NULL && i < (int)RTE_DIM(points); i++)
				if (points[i] != NULL && strncmp(optarg, points[i], colon - optarg) == 0 &&
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
		case 'C':
			conf.corrupt_state = true;
			break;
		case 'H':
			hang_at = strtoull(optarg, NULL, 10);
			break;
		case 'h':
			hang_promoted_at = strtoull(optarg, NULL, 10);
			break;
		case 'g': {
			char *end;

			conf.gen_every = strtoull(optarg, &end, 10);
			if (*end != ':' || conf.gen_every == 0)
				goto bad;
			conf.gen_port = (uint16_t)strtoul(end + 1, NULL, 10);
			break;
		}
		case 'u':
			conf.gen_unsent = true;
			break;
		case 'x':
			fail_file = optarg;
			break;
		case 'K': {
			static const struct {
				const char *name;
				int sig;
			} how[] = {{"kill", 0}, {"segv", SIGSEGV}, {"bus", SIGBUS},
				   {"fpe", SIGFPE}, {"abort", SIGABRT}};
			const struct rlimit no_core = {0, 0};

			conf.death = -1;
			for (size_t i = 0; i < RTE_DIM(how); i++)
				if (strcmp(optarg, how[i].name) == 0)
					conf.death = how[i].sig;
			if (conf.death < 0)
				goto bad;
			setrlimit(RLIMIT_CORE, &no_core); /* tests crash it on purpose */
			break;
		}
		case 'D':
			if (map_death_file(optarg) < 0) { /* every incarnation */
				perror(optarg);
				goto bad;
			}
			break;
		default:
			goto bad;
		}
	}
	if (nf_is_standby(nf) && fail_file != NULL && access(fail_file, F_OK) == 0) {
		fprintf(stderr, "test_nf: -x %s exists: this standby fails\n", fail_file);
		nf_fini(nf);
		return 3;
	}
	if (with_state) {
		if (nf_state_declare(nf, "totals", sizeof(struct test_totals), 0) < 0 ||
		    (wide_bytes > 0 &&
		     nf_state_declare(nf, "wide",
				      ((wide_bytes + WIDE_CHUNK - 1) / WIDE_CHUNK) * WIDE_CHUNK,
				      WIDE_CHUNK) < 0) ||
		    nf_state_map(nf) < 0)
			goto bad;
		conf.totals = nf_state_ptr(nf, "totals");
	}
	if (wide_bytes > 0) {
		conf.wide_chunks = (uint32_t)((wide_bytes + WIDE_CHUNK - 1) / WIDE_CHUNK);
		conf.wide_per_pkt = (uint32_t)((conf.wide_chunks + wide_every - 1) / wide_every);
		conf.wide = nf_state_ptr(nf, "wide");
		if (conf.wide == NULL)
			goto bad;
	}
	/* Counted faults hit the first incarnation only: a promoted standby
	 * runs clean.  Signalled faults hit whoever is active when signalled. */
	if (!nf_is_standby(nf))
		conf.hang_at = hang_at;
	else
		conf.hang_at = hang_promoted_at;
	if (conf.fault_on_usr1) {
		const struct rlimit no_core = {0, 0};

		signal(SIGUSR1, on_usr1);
		signal(SIGUSR2, on_usr1);
		setrlimit(RLIMIT_CORE, &no_core);
	}
	if (conf.fault_point >= 0 && (conf.fault_on_usr1 || !nf_is_standby(nf)))
		nf_set_fault_hook(nf, test_fault);
	/* Movable unless a per-instance cadence (-N, -g every Kth packet) makes
	 * a flow's packets behave by which instance counted them. */
	ops.movable = conf.nd_every <= 1 && conf.gen_every <= 1;
	n = nf_run(nf, &ops, &conf);
	nf_fini(nf);
	return n < 0 ? 4 : 0;
bad:
	fprintf(stderr, "test_nf: bad arguments\n");
	nf_fini(nf);
	return 2;
}
