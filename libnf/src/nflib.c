/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * libnf's core: EAL attach, registration with the manager, the run loop.
 *
 * Registration is a synchronous rte_mp request to the primary, so an NF is
 * routed to the moment nf_init() returns -- no status polling, no sleeps.
 *
 * The run loop busy-polls its RX ring while packets flow and, after
 * idle_spin_us without work, blocks on a futex in its shared slot.  The
 * manager wakes it after enqueueing (it checks `sleeping` after every
 * enqueue), so an idle NF costs no CPU and wakes in microseconds.  The
 * sleeping/wake_seq handshake is the classic one: the NF publishes
 * `sleeping`, issues a full barrier and re-checks the ring before it waits;
 * the producer enqueues, issues a full barrier and then reads `sleeping`.
 *
 * The batch bookkeeping in slot->batch (see onvm_common.h) is what lets the
 * manager return every mbuf of an NF killed at any instruction to the pool.
 */
#include <dirent.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <rte_string_fns.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_memzone.h>
#include <rte_pause.h>
#include <rte_prefetch.h>
#include <rte_random.h>
#include <rte_ring.h>

#include "onvm_nflib.h"
#include "onvm_state.h"

RTE_LOG_REGISTER_IMPL(nf_logtype, "onvm.libnf", INFO);
#define NF_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, nf_logtype, "libnf: " fmt "\n", ##__VA_ARGS__)

#define NF_DEFAULT_IDLE_SPIN_US 200
#define NF_MAX_SLEEP_MS 100 /* upper bound on one futex wait (ticks, stop) */
#define NF_MP_TIMEOUT_S 5

int nf_pkt_meta_offset = -1;

struct nf_ctx {
	struct onvm_shm *shm;
	struct onvm_nf_slot *slot;
	struct rte_mempool *pool;
	struct rte_ring *rx;
	struct rte_ring *tx;
	uint16_t service_id;
	uint16_t instance_id;
	int16_t want_instance;
	bool registered;
	volatile sig_atomic_t stop;
	uint64_t idle_spin_cycles;
	const struct nf_ops *ops;
	void *user;
	/* What the ND helpers mark: the packet in the per-packet handler, else
	 * held[nd_first .. held_n) of the current batch (NULL/0 outside one). */
	struct rte_mbuf *cur_pkt;
	bool in_batch;
	bool nd_batch; /* an ND helper ran in this batch's batch handler/tick */
	bool has_state;
	struct nf_state_set state;
	uint32_t n_decl;
	struct onvm_nf_state_req decl[ONVM_STATE_MAX_REGIONS]; /* declared regions */
	bool standby;	       /* parked until the active dies */
	bool holds_alive_lock; /* this process is the slot's active */
	bool failover_pending; /* promoted, first packet not yet handled */
	bool promotion_unfinished; /* finish_promotion() is still due */
	int dead_pidfd;		   /* the active we replace, until it is gone */
	uint64_t fifo_until_ns;	   /* latest end of the promotion's priority */
	uint64_t promoted_seq;	 /* state batch the promotion recovered to */
	bool parked_fifo;      /* parked at real-time priority (park_priority) */
	int saved_policy;      /* scheduling policy before parking */
	struct sched_param saved_param;
	nf_fault_fn fault;     /* test hook: called at the batch's fault points */
	char name[ONVM_NAME_LEN];
};

static struct nf_ctx *signal_nf;

static void
nf_signal(int sig)
{
	(void)sig;
	if (signal_nf != NULL)
		nf_stop(signal_nf);
}

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static bool
has_arg(int argc, char **argv, const char *const *names)
{
	for (int i = 1; i < argc; i++)
		for (const char *const *n = names; *n != NULL; n++)
			if (strncmp(argv[i], *n, strlen(*n)) == 0)
				return true;
	return false;
}

/*
 * Build the EAL argument vector: the user's EAL arguments plus what an NF
 * always needs -- secondary process type, no PCI probing unless an
 * allow-list is given, and an lcore id of its own (the mempool per-lcore cache
 * is indexed by lcore id, so two NFs with the same id would corrupt it).
 */
static int
build_eal_args(int argc, char **argv, char **out, int max)
{
	static const char *const proc_opts[] = {"--proc-type", NULL};
	static const char *const pci_opts[] = {"--no-pci", "-a", "--allow", "-b", "--block", NULL};
	static const char *const lcore_opts[] = {"-l", "--lcores", "-c", NULL};
	static char proc_arg[] = "--proc-type=secondary";
	static char nopci_arg[] = "--no-pci";
	static char lcore_arg[64];
	int n = 0;

	if (argc + 4 > max)
		return -E2BIG;
	for (int i = 0; i < argc; i++)
		out[n++] = argv[i];
	if (!has_arg(argc, argv, proc_opts))
		out[n++] = proc_arg;
	if (!has_arg(argc, argv, pci_opts))
		out[n++] = nopci_arg;
	if (!has_arg(argc, argv, lcore_opts)) {
		/* Hand-started NF: pick an id from the upper range by pid; the
		 * manager rejects a clash with a clear message. */
		unsigned int id = ONVM_NF_LCORE_BASE + ONVM_MAX_NFS + (getpid() % 16);

		snprintf(lcore_arg, sizeof(lcore_arg), "--lcores=%u@(0-%ld)", id,
			 sysconf(_SC_NPROCESSORS_ONLN) - 1);
		out[n++] = lcore_arg;
	}
	out[n] = NULL;
	return n;
}

static void
nf_usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [EAL options] -- -r SERVICE [-n INSTANCE] [-N NAME] "
		"[--idle-spin-us US] [--standby] [-- NF options]\n",
		prog);
}

static int
parse_nf_args(struct nf_ctx *nf, int argc, char **argv)
{
	static const struct option longopts[] = {
		{"service", required_argument, NULL, 'r'},
		{"instance", required_argument, NULL, 'n'},
		{"name", required_argument, NULL, 'N'},
		{"idle-spin-us", required_argument, NULL, 'S'},
		{"standby", no_argument, NULL, 'B'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	unsigned long idle_us = NF_DEFAULT_IDLE_SPIN_US;
	char *end;
	int opt;

	optind = 1;
	opterr = 1;
	while ((opt = getopt_long(argc, argv, "r:n:N:h", longopts, NULL)) != -1) {
		unsigned long v;

		switch (opt) {
		case 'r':
			v = strtoul(optarg, &end, 10);
			if (*end != '\0' || v == 0 || v >= ONVM_MAX_SERVICES) {
				NF_LOG(ERR, "--service: '%s' is not a service id (1..%d)", optarg,
				       ONVM_MAX_SERVICES - 1);
				return -EINVAL;
			}
			nf->service_id = v;
			break;
		case 'n':
			v = strtoul(optarg, &end, 10);
			if (*end != '\0' || v >= ONVM_MAX_NFS) {
				NF_LOG(ERR, "--instance: '%s' is not an instance id (0..%d)",
				       optarg, ONVM_MAX_NFS - 1);
				return -EINVAL;
			}
			nf->want_instance = v;
			break;
		case 'N':
			strlcpy(nf->name, optarg, sizeof(nf->name));
			break;
		case 'S':
			idle_us = strtoul(optarg, &end, 10);
			if (*end != '\0' || idle_us > 1000000) {
				NF_LOG(ERR, "--idle-spin-us: '%s' is not 0..1000000", optarg);
				return -EINVAL;
			}
			break;
		case 'B':
			nf->standby = true;
			break;
		case 'h':
		default:
			nf_usage(argv[0]);
			return -EINVAL;
		}
	}
	if (optind != argc) {
		NF_LOG(ERR, "unexpected libnf argument '%s' (NF options go after a second --)",
		       argv[optind]);
		return -EINVAL;
	}
	if (nf->standby && nf->want_instance < 0) {
		NF_LOG(ERR, "--standby needs the instance id of the active NF (-n ID)");
		return -EINVAL;
	}
	if (nf->service_id == 0) {
		NF_LOG(ERR, "a service id is required (-r ID)");
		nf_usage(argv[0]);
		return -EINVAL;
	}
	nf->idle_spin_cycles = idle_us * (rte_get_tsc_hz() / 1000000);
	return 0;
}

static int
nf_attach(struct nf_ctx *nf)
{
	const struct rte_memzone *mz = rte_memzone_lookup(ONVM_SHM_NAME);

	if (mz == NULL) {
		NF_LOG(ERR, "no manager tables (%s): is onvm_mgr running with this --file-prefix?",
		       ONVM_SHM_NAME);
		return -ENOENT;
	}
	nf->shm = mz->addr;
	if (nf->shm->magic != ONVM_SHM_MAGIC || nf->shm->version != ONVM_SHM_VERSION) {
		NF_LOG(ERR, "manager table layout v%u, libnf expects v%u: rebuild the NF",
		       nf->shm->version, ONVM_SHM_VERSION);
		return -EPROTO;
	}
	nf->pool = rte_mempool_lookup(ONVM_PKTMBUF_POOL_NAME);
	if (nf->pool == NULL) {
		NF_LOG(ERR, "packet pool %s not found", ONVM_PKTMBUF_POOL_NAME);
		return -ENOENT;
	}
	nf_pkt_meta_offset = rte_mbuf_dynfield_lookup(ONVM_PKT_META_DYNFIELD, NULL);
	if (nf_pkt_meta_offset < 0) {
		NF_LOG(ERR, "packet metadata field not registered by the manager");
		return -ENOENT;
	}
	return 0;
}

/* One synchronous request to the manager; copies up to `replen` bytes of the
 * answer into `rep`.  -ETIMEDOUT if the manager did not answer. */
static int
mp_call(const char *action, const void *req, size_t len, void *rep, size_t replen)
{
	struct timespec ts = {.tv_sec = NF_MP_TIMEOUT_S};
	struct rte_mp_reply reply = {0};
	struct rte_mp_msg msg = {0};
	int ret = 0;

	strlcpy(msg.name, action, sizeof(msg.name));
	memcpy(msg.param, req, len);
	msg.len_param = len;
	if (rte_mp_request_sync(&msg, &reply, &ts) != 0 || reply.nb_received != 1)
		ret = -ETIMEDOUT;
	else if (rep != NULL)
		memcpy(rep, reply.msgs[0].param,
		       RTE_MIN(replen, (size_t)reply.msgs[0].len_param));
	free(reply.msgs);
	return ret;
}

static int
nf_register(struct nf_ctx *nf)
{
	struct onvm_mp_register_req req = {
		.shm_version = ONVM_SHM_VERSION,
		.pid = getpid(),
		.service_id = nf->service_id,
		.instance_id = nf->want_instance,
		.lcore_id = rte_lcore_id(),
		.standby = nf->standby,
	};
	struct onvm_mp_register_rep rep = {0};

	strlcpy(req.name, nf->name, sizeof(req.name));
	if (mp_call(ONVM_MP_NF_REGISTER, &req, sizeof(req), &rep, sizeof(rep)) < 0) {
		NF_LOG(ERR, "registration request got no answer from the manager: %s",
		       rte_strerror(rte_errno));
		return -ETIMEDOUT;
	}
	if (rep.result != 0) {
		NF_LOG(ERR, "manager refused registration: %s", rep.reason);
		return rep.result;
	}
	nf->instance_id = rep.instance_id;
	nf->slot = &nf->shm->nfs[rep.instance_id];
	nf->rx = nf->slot->rx_ring;
	nf->tx = nf->slot->tx_ring;
	nf->registered = true;
	if (!nf->standby) {
		/* Held until this process is gone: the standby's death signal. */
		int r = pthread_mutex_lock(&nf->slot->alive_lock);

		if (r == EOWNERDEAD)
			pthread_mutex_consistent(&nf->slot->alive_lock);
		else if (r != 0)
			NF_LOG(WARNING, "liveness lock: %s (no standby can protect this NF)",
			       strerror(r));
		nf->holds_alive_lock = (r == 0 || r == EOWNERDEAD);
		/* Where the slot's active runs: a promoted standby moves there. */
		if (pthread_getaffinity_np(pthread_self(), sizeof(nf->slot->active_cpus),
					   &nf->slot->active_cpus) != 0)
			CPU_ZERO(&nf->slot->active_cpus);
	}
	NF_LOG(INFO, "%s: service %u instance %u (lcore %u) registered%s", nf->name,
	       nf->service_id, nf->instance_id, rte_lcore_id(), nf->standby ? " as standby" : "");
	return 0;
}

static void env_fault_setup(struct nf_ctx *nf);

int
nf_init(int argc, char **argv, const char *default_name, struct nf_ctx **out)
{
	char *eal_argv[256];
	int first_sep = argc, second_sep = argc, eal_argc, ret, consumed;
	struct nf_ctx *nf;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			if (first_sep == argc) {
				first_sep = i;
			} else {
				second_sep = i;
				break;
			}
		}
	}
	nf = calloc(1, sizeof(*nf));
	if (nf == NULL)
		return -ENOMEM;
	nf->want_instance = -1;
	strlcpy(nf->name, default_name != NULL ? default_name : "nf", sizeof(nf->name));

	eal_argc = build_eal_args(first_sep, argv, eal_argv, RTE_DIM(eal_argv) - 1);
	if (eal_argc < 0) {
		free(nf);
		return eal_argc;
	}
	ret = rte_eal_init(eal_argc, eal_argv);
	if (ret < 0) {
		fprintf(stderr, "libnf: EAL init failed: %s\n", rte_strerror(rte_errno));
		free(nf);
		return -rte_errno;
	}
	if (rte_eal_process_type() != RTE_PROC_SECONDARY) {
		NF_LOG(ERR, "an NF must run as a secondary process of onvm_mgr");
		ret = -EINVAL;
		goto fail;
	}

	/* libnf's own options sit between the two separators. */
	{
		int n = (first_sep < argc) ? second_sep - first_sep : 1;
		char *sub[n + 1];

		sub[0] = argv[0];
		for (int i = 1; i < n; i++)
			sub[i] = argv[first_sep + i];
		sub[n] = NULL;
		ret = parse_nf_args(nf, n, sub);
		if (ret < 0)
			goto fail;
	}
	ret = nf_attach(nf);
	if (ret < 0)
		goto fail;
	ret = nf_register(nf);
	if (ret < 0)
		goto fail;

	env_fault_setup(nf);
	signal_nf = nf;
	signal(SIGINT, nf_signal);
	signal(SIGTERM, nf_signal);

	consumed = (second_sep < argc) ? second_sep : argc - 1;
	argv[consumed] = argv[0];
	optind = 1; /* the NF's own getopt starts afresh */
	*out = nf;
	return consumed;
fail:
	rte_eal_cleanup();
	free(nf);
	return ret;
}

void
nf_stop(struct nf_ctx *nf)
{
	nf->stop = 1;
}

bool
nf_stopping(const struct nf_ctx *nf)
{
	return nf->stop || (nf->slot != NULL && nf->slot->stop);
}

void *
nf_user(const struct nf_ctx *nf)
{
	return nf->user;
}

uint16_t
nf_service_id(const struct nf_ctx *nf)
{
	return nf->service_id;
}

uint16_t
nf_instance_id(const struct nf_ctx *nf)
{
	return nf->instance_id;
}

const char *
nf_name(const struct nf_ctx *nf)
{
	return nf->name;
}

const struct onvm_nf_stats *
nf_stats(const struct nf_ctx *nf)
{
	return &nf->slot->stats;
}

uint16_t
nf_port_count(const struct nf_ctx *nf)
{
	return nf->shm->nb_ports;
}

/* Start a batch: record what the NF now holds (see struct onvm_nf_batch). */
static inline void
batch_open(struct nf_ctx *nf, uint32_t n)
{
	struct onvm_nf_batch *b = &nf->slot->batch;

	b->held_n = n;
	b->tx_base = nf->tx->prod.tail;
	b->committed = 0;
	b->seq_before = nf->has_state ? nf_state_seq(&nf->state) : 0;
	__atomic_store_n(&b->rx_seen, nf->rx->cons.tail, __ATOMIC_RELEASE);
}

/* Hand every packet of the batch to the manager; waits (counted) while the TX
 * ring is full -- the manager drains it without ever waiting on NFs. */
static void
batch_emit(struct nf_ctx *nf)
{
	struct onvm_nf_batch *b = &nf->slot->batch;
	uint32_t n = b->held_n, sent = nf->tx->prod.tail - b->tx_base;

	while (sent < n) {
		sent += rte_ring_sp_enqueue_burst(nf->tx, (void **)&b->held[sent], n - sent,
						  NULL);
		if (sent < n) {
			nf->slot->stats.tx_wait++;
			if (nf->slot->stop)
				return; /* manager is shutting down; it reclaims held[] */
			/* Downstream is full: give the CPU to whoever drains it
			 * (NFs may share a core).  Waiting is not hanging. */
			nf->slot->heartbeat++;
			sched_yield();
		}
	}
	nf->slot->stats.tx += n;
}

/* Action counters, kept locally for a batch and added to the shared slot once. */
struct action_counts {
	uint64_t by_action[4];
	uint64_t other;
};

static inline void
count_action(struct action_counts *c, const struct onvm_pkt_meta *meta)
{
	if (likely(meta->action < RTE_DIM(c->by_action)))
		c->by_action[meta->action]++;
	else
		c->other++;
}

static void
run_handlers(struct nf_ctx *nf, uint32_t n)
{
	struct onvm_nf_batch *b = &nf->slot->batch;
	struct onvm_nf_stats *st = &nf->slot->stats;
	struct action_counts c = {0};
	uint64_t bytes = 0;

	/* The metadata was last written by the manager on another core. */
	for (uint32_t i = 0; i < n; i++)
		rte_prefetch0(nf_pkt_meta(b->held[i]));
	if (nf->ops->batch != NULL) {
		for (uint32_t i = 0; i < n; i++) {
			nf_pkt_meta(b->held[i])->action = ONVM_ACTION_NEXT;
			bytes += rte_pktmbuf_pkt_len(b->held[i]);
		}
		nf->in_batch = true;
		nf->nd_batch = false;
		nf->ops->batch(b->held, n, nf);
		nf->in_batch = false;
		for (uint32_t i = 0; i < n; i++) {
			if (nf->nd_batch)
				nf_mark_nd(b->held[i]);
			count_action(&c, nf_pkt_meta(b->held[i]));
		}
	} else {
		for (uint32_t i = 0; i < n; i++) {
			struct rte_mbuf *m = b->held[i];
			struct onvm_pkt_meta *meta = nf_pkt_meta(m);

			meta->action = ONVM_ACTION_NEXT;
			bytes += rte_pktmbuf_pkt_len(m);
			nf->cur_pkt = m;
			nf->ops->pkt(m, meta, nf);
			count_action(&c, meta);
		}
		nf->cur_pkt = NULL;
	}
	/* held_n may have grown with generated packets. */
	for (uint32_t i = n; i < b->held_n; i++)
		count_action(&c, nf_pkt_meta(b->held[i]));
	st->rx += n;
	st->rx_bytes += bytes;
	st->act_drop += c.by_action[ONVM_ACTION_DROP];
	st->act_next += c.by_action[ONVM_ACTION_NEXT];
	st->act_tonf += c.by_action[ONVM_ACTION_TONF];
	st->act_out += c.by_action[ONVM_ACTION_OUT] + c.other;
	st->batches++;
}

/* End of batch: make what the batch touched durable before it is emitted. */
static inline void
state_commit(struct nf_ctx *nf)
{
	/* A batch that touched nothing has nothing to make durable. */
	if (nf->has_state && nf_state_dirty_chunks(&nf->state) > 0) {
		struct onvm_nf_slot *s = nf->slot;
		uint64_t t0 = rte_rdtsc(), dt;

		s->state_seq = nf_state_commit(&nf->state);
		dt = rte_rdtsc() - t0;
		s->state_chunks = nf_state_stats(&nf->state)->chunks_committed;
		s->state_commits = nf_state_stats(&nf->state)->commits;
		s->state_commit_cycles += dt;
		if (dt > s->state_commit_max_cycles)
			s->state_commit_max_cycles = dt;
	}
	/* From here a standby re-emits this batch's held outputs. */
	__atomic_store_n(&nf->slot->batch.committed, 1, __ATOMIC_RELEASE);
}

/* The end of a batch with the test fault hook called at every fault point. */
static void
fault_step(void *arg, enum nf_state_step step, uint32_t k)
{
	struct nf_ctx *nf = arg;

	/* Just past the commit point, before the replica holds the batch. */
	(void)k;
	if (step == NF_STATE_STEP_COMMIT_PUBLISHED)
		nf->fault(nf, NF_FAULT_MID_COMMIT);
}

static uint32_t
faulty_batch_end(struct nf_ctx *nf, uint32_t n)
{
	struct onvm_nf_batch *b = &nf->slot->batch;
	uint32_t half = b->held_n / 2;

	nf->fault(nf, NF_FAULT_PROCESSED);
	if (nf->has_state)
		nf_state_set_step_hook(&nf->state, fault_step, nf);
	state_commit(nf);
	if (nf->has_state)
		nf_state_set_step_hook(&nf->state, NULL, NULL);
	nf->fault(nf, NF_FAULT_COMMITTED);
	/* Emit the first half, then the rest: a crash in between leaves part
	 * of the batch emitted. */
	while (nf->tx->prod.tail - b->tx_base < half)
		if (rte_ring_sp_enqueue(nf->tx, b->held[nf->tx->prod.tail - b->tx_base]) != 0)
			sched_yield();
	nf->fault(nf, NF_FAULT_MID_EMIT);
	batch_emit(nf);
	return n;
}

void
nf_set_fault_hook(struct nf_ctx *nf, nf_fault_fn fn)
{
	nf->fault = fn;
}

/*
 * Failure injection for any NF, from the environment (NFs inherit the
 * manager's): ONVM_NF_FAULT=NAME:POINT:N makes the first incarnation of the
 * NF named NAME SIGKILL itself at fault POINT (processed, mid_commit,
 * committed, mid_emit) of the first batch that ends with N or more packets
 * received.  The integration tests use it to fail an NF at a chosen point of
 * a trace; a promoted standby runs clean.
 */
static const char *const fault_point_names[] = {"processed", "mid_commit", "committed",
						 "mid_emit"};
static int env_fault_point = -1;
static uint64_t env_fault_at;

static void
env_fault_hook(struct nf_ctx *nf, enum nf_fault_point point)
{
	if ((int)point == env_fault_point && nf->slot->stats.rx >= env_fault_at) {
		NF_LOG(WARNING, "ONVM_NF_FAULT: dying at %s after %" PRIu64 " packets",
		       fault_point_names[point], nf->slot->stats.rx);
		kill(getpid(), SIGKILL);
	}
}

static void
env_fault_setup(struct nf_ctx *nf)
{
	const char *v = getenv("ONVM_NF_FAULT");
	char name[ONVM_NAME_LEN], point[16];
	unsigned long long at;

	if (v == NULL || nf->standby ||
	    sscanf(v, "%31[^:]:%15[^:]:%llu", name, point, &at) != 3 ||
	    strcmp(name, nf->name) != 0)
		return;
	for (int i = 0; i < (int)RTE_DIM(fault_point_names); i++)
		if (strcmp(point, fault_point_names[i]) == 0)
			env_fault_point = i;
	if (env_fault_point < 0) {
		NF_LOG(ERR, "ONVM_NF_FAULT: unknown point '%s'", point);
		return;
	}
	env_fault_at = at;
	nf_set_fault_hook(nf, env_fault_hook);
	NF_LOG(WARNING, "ONVM_NF_FAULT: will die at %s after %llu packets", point, at);
}

void
nf_app_stats_begin(struct nf_ctx *nf)
{
	struct onvm_nf_app_stats *a = &nf->slot->app;

	__atomic_store_n(&a->seq, a->seq + 1, __ATOMIC_RELAXED); /* odd: writing */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	a->n = 0;
}

int
nf_app_stat(struct nf_ctx *nf, const char *name, uint64_t value)
{
	struct onvm_nf_app_stats *a = &nf->slot->app;
	char *dst;
	int i;

	if (a->n >= ONVM_NF_APP_STATS)
		return -ENOSPC;
	dst = a->name[a->n];
	/* DPDK telemetry drops dict keys with other characters. */
	for (i = 0; name[i] != '\0' && i < ONVM_NF_APP_STAT_NAME - 1; i++)
		dst[i] = isalnum((unsigned char)name[i]) ? name[i] : '_';
	dst[i] = '\0';
	a->value[a->n++] = value;
	return 0;
}

void
nf_app_stats_end(struct nf_ctx *nf)
{
	struct onvm_nf_app_stats *a = &nf->slot->app;

	__atomic_store_n(&a->seq, a->seq + 1, __ATOMIC_RELEASE); /* even: stable */
}

struct nf_state_set *
nf_state(struct nf_ctx *nf)
{
	return nf->has_state ? &nf->state : NULL;
}

uint64_t
nf_clock_ns(void)
{
	return mono_ns();
}

bool
nf_is_standby(const struct nf_ctx *nf)
{
	return nf->standby;
}

/* Process one burst; returns the number of packets received. */
static uint32_t
poll_once(struct nf_ctx *nf)
{
	struct onvm_nf_batch *b = &nf->slot->batch;
	uint32_t n;

	/* Dequeue straight into the shared held[] array: the ring's consumer
	 * tail and held[] together say what the NF owns at every instant. */
	n = rte_ring_sc_dequeue_burst(nf->rx, (void **)b->held, ONVM_BURST, NULL);
	if (n == 0)
		return 0;
	batch_open(nf, n);
	if (unlikely(nf->slot->first_pkt_ns == 0))
		nf->slot->first_pkt_ns = mono_ns();
	if (unlikely(nf->failover_pending)) {
		nf->slot->failover_first_pkt_ns = mono_ns();
		nf->failover_pending = false;
	}
	run_handlers(nf, n);
	if (unlikely(nf->fault != NULL))
		return faulty_batch_end(nf, n);
	state_commit(nf);
	batch_emit(nf);
	return n;
}

static void
run_tick(struct nf_ctx *nf, uint64_t now_ns)
{
	struct onvm_nf_batch *b = &nf->slot->batch;

	batch_open(nf, 0);
	nf->in_batch = true;
	nf->nd_batch = false;
	nf->ops->tick(nf, now_ns);
	nf->in_batch = false;
	if (nf->nd_batch)
		for (uint32_t i = 0; i < b->held_n; i++)
			nf_mark_nd(b->held[i]);
	state_commit(nf);
	if (b->held_n > 0)
		batch_emit(nf);
}

static long
futex_wait(volatile uint32_t *addr, uint32_t val, uint64_t timeout_ns)
{
	struct timespec ts = {
		.tv_sec = timeout_ns / 1000000000ULL,
		.tv_nsec = timeout_ns % 1000000000ULL,
	};

	return syscall(SYS_futex, addr, FUTEX_WAIT, val, &ts, NULL, 0);
}

/* Block until the manager enqueues, a tick is due, or we are told to stop. */
static void
sleep_until_work(struct nf_ctx *nf, uint64_t wait_ns)
{
	struct onvm_nf_slot *slot = nf->slot;
	uint32_t seq = __atomic_load_n(&slot->wake_seq, __ATOMIC_ACQUIRE);

	__atomic_store_n(&slot->sleeping, 1, __ATOMIC_RELAXED);
	rte_smp_mb();
	if (rte_ring_empty(nf->rx) && !nf_stopping(nf)) {
		futex_wait(&slot->wake_seq, seq, wait_ns);
		slot->stats.wakeups++;
	}
	__atomic_store_n(&slot->sleeping, 0, __ATOMIC_RELAXED);
}

/*
 * Standby: block on the active's liveness lock without using the CPU.  The
 * timed wait only exists so a stop request is noticed (100 ms).  Returns 1 to
 * promote (the active died), 0 to exit (it stopped cleanly, or we are told to
 * stop).
 */
/*
 * Scheduling around a failover.  The dying NF's threads (its main thread and
 * EAL's control threads) exit on their CPUs, and the last one tears the
 * address space down in the kernel: ~3 ms here, with few preemption points on
 * a PREEMPT_NONE kernel.  A standby woken at normal priority queues behind
 * that.  So the standby parks at SCHED_FIFO (it sleeps: no CPU used) and
 * keeps the priority through promotion and its first batch, until the dead
 * process is gone (its pidfd) -- at most PROMOTION_FIFO_MAX_NS -- then goes
 * back to its own policy.  Promoted, it moves to the CPUs the active ran on.
 * Without CAP_SYS_NICE all of this quietly degrades to normal priority.
 */
#define PROMOTION_FIFO_MAX_NS (20 * 1000 * 1000ULL)

static void
park_priority(struct nf_ctx *nf)
{
	struct sched_param fifo = {.sched_priority = 1};

	nf->parked_fifo = false;
	nf->dead_pidfd = -1;
	if (pthread_getschedparam(pthread_self(), &nf->saved_policy, &nf->saved_param) != 0)
		return;
	nf->parked_fifo = pthread_setschedparam(pthread_self(), SCHED_FIFO, &fifo) == 0;
}

static void
restore_priority(struct nf_ctx *nf)
{
	if (nf->parked_fifo)
		pthread_setschedparam(pthread_self(), nf->saved_policy, &nf->saved_param);
	nf->parked_fifo = false;
	if (nf->dead_pidfd >= 0)
		close(nf->dead_pidfd);
	nf->dead_pidfd = -1;
}

/* Promoted: watch the dead active until it is gone; move to its CPUs. */
static void
promoted_placement(struct nf_ctx *nf, pid_t dead_pid)
{
	const cpu_set_t *cpus = &nf->slot->active_cpus;

	nf->fifo_until_ns = mono_ns() + PROMOTION_FIFO_MAX_NS;
	/* After a hand-over to a standby that registered late, the slot
	 * already names us: there is no dead process left to watch. */
	if (nf->parked_fifo && dead_pid > 0 && dead_pid != getpid())
		nf->dead_pidfd = (int)syscall(SYS_pidfd_open, dead_pid, 0);
	if (CPU_COUNT(cpus) > 0) {
		int r = pthread_setaffinity_np(pthread_self(), sizeof(*cpus), cpus);

		if (r != 0)
			NF_LOG(WARNING, "promotion: cannot move to the active's CPUs: %s",
			       strerror(r));
	}
}

static bool
dead_active_gone(struct nf_ctx *nf)
{
	struct pollfd p = {.fd = nf->dead_pidfd, .events = POLLIN};

	return nf->dead_pidfd < 0 || poll(&p, 1, 0) != 0;
}

static int
park(struct nf_ctx *nf)
{
	for (;;) {
		struct timespec ts;
		int r;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		r = pthread_mutex_timedlock(&nf->slot->alive_lock, &ts);
		if (r == EOWNERDEAD) {
			pthread_mutex_consistent(&nf->slot->alive_lock);
			return 1;
		}
		if (r == 0) {
			/* The active unlocked: it stopped in order, so do we. */
			pthread_mutex_unlock(&nf->slot->alive_lock);
			return 0;
		}
		if (r != ETIMEDOUT) {
			NF_LOG(ERR, "standby: liveness lock: %s", strerror(r));
			return 0;
		}
		if (nf_stopping(nf))
			return 0;
	}
}

/*
 * Become the active of a slot whose NF just died, at any instruction:
 *  - state: roll the dead NF's batch forward (committed) or back (not);
 *  - its mempool cache (our lcore id may be its): return it to the pool;
 *  - its rings: undo half-done ring operations (we are now their only
 *    consumer/producer on the NF side);
 *  - its batch: packets dequeued but never processed are processed now;
 *    outputs of a batch whose state committed are emitted (the rest of them:
 *    the emitted prefix is known from the TX ring); outputs of a batch that
 *    did not commit are dropped and counted -- their effects were rolled
 *    back, like packets lost on a wire.  Nothing is emitted twice.
 */
static void
promote(struct nf_ctx *nf)
{
	struct onvm_nf_slot *slot = nf->slot;
	struct onvm_nf_batch *b = &slot->batch;
	uint64_t woke = mono_ns(), seq = 0;
	uint32_t unprocessed = 0;

	if (nf->has_state) {
		char err[160];

		if (nf_state_recover(&nf->state, &seq, err, sizeof(err)) < 0)
			NF_LOG(ERR, "promotion: state recovery failed: %s", err);
	}
	if (slot->lcore_id < RTE_MAX_LCORE) {
		struct rte_mempool_cache *c = rte_mempool_default_cache(nf->pool, slot->lcore_id);

		if (c != NULL && c->len > 0)
			rte_mempool_cache_flush(c, nf->pool);
	}
	slot->lcore_id = rte_lcore_id();
	nf->rx->cons.head = nf->rx->cons.tail;
	nf->tx->prod.head = nf->tx->prod.tail;

	if (nf->rx->cons.tail != b->rx_seen) {
		unprocessed = nf->rx->cons.tail - b->rx_seen;
		if (unprocessed > ONVM_BURST) {
			NF_LOG(ERR, "promotion: inconsistent batch record (%u)", unprocessed);
			unprocessed = 0;
		}
	} else {
		uint32_t emitted = nf->tx->prod.tail - b->tx_base;

		if (emitted > b->held_n || b->held_n > ONVM_NF_HELD_MAX) {
			NF_LOG(ERR, "promotion: inconsistent batch record (%u of %u)", emitted,
			       b->held_n);
		} else if (b->committed || (nf->has_state && seq > b->seq_before)) {
			slot->failover_reemitted += b->held_n - emitted;
			batch_emit(nf);
		} else {
			rte_pktmbuf_free_bulk(&b->held[emitted], b->held_n - emitted);
			slot->failover_dropped += b->held_n - emitted;
			b->held_n = emitted;
		}
	}
	slot->pid = getpid();
	slot->failovers++;
	slot->failover_wake_ns = woke;
	nf->standby = false;
	nf->holds_alive_lock = true;
	nf->failover_pending = true;
	nf->promoted_seq = seq;
	nf->promotion_unfinished = true;
	if (unprocessed > 0) {
		batch_open(nf, unprocessed);
		slot->failover_reprocessed += unprocessed;
		nf->slot->failover_first_pkt_ns = mono_ns();
		nf->failover_pending = false;
		run_handlers(nf, unprocessed);
		state_commit(nf);
		batch_emit(nf);
	}
}

/*
 * The rest of a promotion, once the first batch is out and the dead process
 * is gone: normal priority again; the process's other threads (EAL control
 * threads) follow the main thread to the active's CPUs, so that this NF's
 * own exit work later stays off its standby's CPU; and the log line (DPDK
 * logs to the console and syslog: ~85 us here, more than the promotion).
 */
static void
finish_promotion(struct nf_ctx *nf)
{
	const cpu_set_t *cpus = &nf->slot->active_cpus;
	pid_t self = (pid_t)syscall(SYS_gettid);
	struct dirent *e;
	DIR *d;

	/* Normally after the first batch, once the dead process is gone; with
	 * no traffic, when the priority's time is up anyway. */
	if ((nf->failover_pending || !dead_active_gone(nf)) && mono_ns() <= nf->fifo_until_ns)
		return;
	nf->promotion_unfinished = false;
	restore_priority(nf);
	if (CPU_COUNT(cpus) > 0 && (d = opendir("/proc/self/task")) != NULL) {
		while ((e = readdir(d)) != NULL) {
			pid_t tid = (pid_t)atoi(e->d_name);

			if (tid > 0 && tid != self)
				sched_setaffinity(tid, sizeof(*cpus), cpus);
		}
		closedir(d);
	}
	NF_LOG(WARNING,
	       "%s: promoted to active of instance %u (state at batch %" PRIu64
	       "; first packet %.1f us after waking; re-emitted %" PRIu64 ", dropped %" PRIu64
	       ", reprocessed %" PRIu64 ")",
	       nf->name, nf->instance_id, nf->promoted_seq,
	       (double)onvm_nf_failover_ns(nf->slot) / 1e3,
	       nf->slot->failover_reemitted, nf->slot->failover_dropped,
	       nf->slot->failover_reprocessed);
}

int
nf_run(struct nf_ctx *nf, const struct nf_ops *ops, void *user)
{
	const uint64_t tsc_hz = rte_get_tsc_hz();
	uint64_t tick_cycles, next_tick, idle_since = 0;
	pid_t dead;

	if (ops == NULL || (ops->pkt == NULL && ops->batch == NULL)) {
		NF_LOG(ERR, "nf_run: a packet or batch handler is required");
		return -EINVAL;
	}
	nf->ops = ops;
	nf->user = user;
	if (nf->standby) {
		int r;

		park_priority(nf);
		__atomic_store_n(&nf->slot->standby_parked, 1, __ATOMIC_RELEASE);
		r = park(nf);
		nf->slot->standby_parked = 0;
		if (r == 0) {
			restore_priority(nf);
			return 0;
		}
		dead = nf->slot->pid;
		promote(nf);
		promoted_placement(nf, dead);
	}
	tick_cycles = (ops->tick_ms ? ops->tick_ms : 1000) * (tsc_hz / 1000);
	next_tick = rte_get_tsc_cycles() + tick_cycles;
	__atomic_store_n(&nf->slot->nf_running, 1, __ATOMIC_RELEASE);

	while (!nf_stopping(nf)) {
		uint64_t now;
		uint32_t got;

		/* Liveness for the manager's hung-NF check (a sleeping NF is
		 * waiting for work, not hung). */
		nf->slot->heartbeat++;
		got = poll_once(nf);
		if (unlikely(nf->promotion_unfinished))
			finish_promotion(nf);
		/* Ticks are due under load too (expiry, stats): checked once
		 * per burst, between batches. */
		now = rte_get_tsc_cycles();
		if (ops->tick != NULL && now >= next_tick) {
			run_tick(nf, mono_ns());
			next_tick = now + tick_cycles;
		}
		if (got > 0) {
			idle_since = 0;
			continue;
		}
		if (idle_since == 0) {
			idle_since = now;
		} else if (now - idle_since > nf->idle_spin_cycles) {
			uint64_t wait_ns = (uint64_t)NF_MAX_SLEEP_MS * 1000000ULL;

			if (ops->tick != NULL) {
				uint64_t until = next_tick > now ? next_tick - now : 0;

				wait_ns = RTE_MIN(wait_ns, until * 1000000000ULL / tsc_hz);
			}
			if (wait_ns > 0)
				sleep_until_work(nf, wait_ns);
		} else {
			rte_pause();
		}
	}
	return 0;
}

struct rte_mbuf *
nf_pkt_alloc(struct nf_ctx *nf)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(nf->pool);

	if (m != NULL) {
		struct onvm_pkt_meta *meta = nf_pkt_meta(m);

		memset(meta, 0, sizeof(*meta));
		meta->action = ONVM_ACTION_DROP;
		meta->egress_port = ONVM_PORT_UNSET;
	}
	return m;
}

int
nf_pkt_send(struct nf_ctx *nf, struct rte_mbuf *pkt)
{
	struct onvm_nf_batch *b = &nf->slot->batch;

	if (b->held_n >= ONVM_NF_HELD_MAX)
		return -ENOBUFS;
	b->held[b->held_n] = pkt;
	__atomic_store_n(&b->held_n, b->held_n + 1, __ATOMIC_RELEASE);
	nf->slot->stats.generated++;
	return 0;
}

int
nf_state_declare(struct nf_ctx *nf, const char *name, size_t size, size_t chunk_size)
{
	struct onvm_nf_state_req *r;

	if (nf->has_state) {
		NF_LOG(ERR, "state region '%s': declare every region before nf_state_map()", name);
		return -EBUSY;
	}
	if (nf->n_decl >= ONVM_STATE_MAX_REGIONS) {
		NF_LOG(ERR, "state region '%s': at most %d regions", name, ONVM_STATE_MAX_REGIONS);
		return -E2BIG;
	}
	if (name == NULL || strlen(name) == 0 || strlen(name) >= ONVM_NAME_LEN) {
		NF_LOG(ERR, "state region name must be 1..%d characters", ONVM_NAME_LEN - 1);
		return -EINVAL;
	}
	/* Everything else (size, chunk, duplicates) is checked by the layout,
	 * once, when the manager allocates. */
	r = &nf->decl[nf->n_decl++];
	memset(r, 0, sizeof(*r));
	strlcpy(r->name, name, sizeof(r->name));
	r->size = size;
	r->chunk_size = chunk_size;
	return 0;
}

/* The active asks the manager to allocate (the requests travel in its slot). */
static int
state_request_alloc(struct nf_ctx *nf)
{
	struct onvm_mp_state_req req = {
		.instance_id = nf->instance_id,
		.generation = nf->slot->generation,
	};
	struct onvm_mp_state_rep rep = {0};

	memcpy(nf->slot->state_req, nf->decl, nf->n_decl * sizeof(nf->decl[0]));
	nf->slot->n_state_req = nf->n_decl;
	if (mp_call(ONVM_MP_NF_STATE, &req, sizeof(req), &rep, sizeof(rep)) < 0) {
		NF_LOG(ERR, "state allocation got no answer from the manager");
		return -ETIMEDOUT;
	}
	if (rep.result < 0) {
		NF_LOG(ERR, "state allocation refused: %s", rep.reason);
		return rep.result;
	}
	return 0;
}

int
nf_state_map(struct nf_ctx *nf)
{
	struct nf_state_request reqs[ONVM_STATE_MAX_REGIONS];
	struct nf_state_layout layout;
	const struct rte_memzone *mz;
	char err[160];
	int ret;

	if (nf->has_state)
		return -EALREADY;
	/* A standby attaches to the block its active already has. */
	if (!nf->standby) {
		ret = state_request_alloc(nf);
		if (ret < 0)
			return ret;
	}
	mz = nf->slot->state_mz[0] != '\0' ? rte_memzone_lookup(nf->slot->state_mz) : NULL;
	if (mz == NULL) {
		NF_LOG(ERR, "no state memory for instance %u", nf->instance_id);
		return -ENOENT;
	}
	/* Attach checks the block against what this process declared. */
	for (uint32_t i = 0; i < nf->n_decl; i++)
		reqs[i] = (struct nf_state_request){.name = nf->decl[i].name,
						    .size = nf->decl[i].size,
						    .chunk_size = nf->decl[i].chunk_size};
	ret = nf_state_layout_compute(&layout, reqs, nf->n_decl, err, sizeof(err));
	if (ret == 0 && nf->slot->state_off + nf->slot->state_size > mz->len) {
		snprintf(err, sizeof(err), "state block outside its memzone");
		ret = -ERANGE;
	}
	if (ret == 0)
		ret = nf_state_attach(&nf->state, (uint8_t *)mz->addr + nf->slot->state_off,
				      nf->slot->state_size, &layout, err, sizeof(err));
	if (ret < 0) {
		NF_LOG(ERR, "state: %s", err);
		return ret;
	}
	nf->has_state = true;
	NF_LOG(INFO, "%s: %u state regions mapped (%" PRIu64 " bytes)%s", nf->name, nf->n_decl,
	       nf->slot->state_size, nf->standby ? " as standby" : "");
	return 0;
}

void *
nf_state_ptr(struct nf_ctx *nf, const char *name)
{
	int r;

	if (!nf->has_state)
		return NULL;
	r = nf_state_region_find(&nf->state, name);
	return r < 0 ? NULL : nf_state_region_ptr(&nf->state, r);
}

void
nf_touch(struct nf_ctx *nf, const void *ptr, size_t len)
{
	/* Out-of-region touches are bugs in the NF; count them rather than
	 * crash the data path. */
	if (unlikely(nf_state_touch_ptr(&nf->state, ptr, len) < 0))
		nf->slot->stats.bad_touches++;
}

static void
nd_mark_current(struct nf_ctx *nf)
{
	if (nf->cur_pkt != NULL)
		nf_mark_nd(nf->cur_pkt);
	else if (nf->in_batch)
		nf->nd_batch = true;
	nf->slot->stats.nd_events++;
}

uint64_t
nf_nd_rand(struct nf_ctx *nf)
{
	nd_mark_current(nf);
	return rte_rand();
}

uint64_t
nf_nd_time_ns(struct nf_ctx *nf)
{
	struct timespec ts;

	nd_mark_current(nf);
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void
nf_unregister(struct nf_ctx *nf)
{
	struct onvm_mp_unregister_req req = {
		.instance_id = nf->instance_id,
		.generation = nf->slot->generation,
	};

	if (mp_call(ONVM_MP_NF_UNREGISTER, &req, sizeof(req), NULL, 0) < 0)
		NF_LOG(WARNING, "manager did not acknowledge unregistration");
}

void
nf_fini(struct nf_ctx *nf)
{
	if (nf == NULL)
		return;
	if (nf->registered && !nf->standby) {
		nf_unregister(nf);
		/* No longer routed to: finish what is already queued (unless the
		 * manager itself is going away). */
		if (nf->ops != NULL && !nf->slot->stop)
			while (poll_once(nf) > 0)
				;
		if (nf->ops != NULL && nf->ops->fini != NULL)
			nf->ops->fini(nf);
		NF_LOG(INFO, "%s: rx %" PRIu64 " tx %" PRIu64 " drop %" PRIu64, nf->name,
		       nf->slot->stats.rx, nf->slot->stats.tx, nf->slot->stats.act_drop);
		/* Last: a parked standby wakes, sees the slot stopping, and exits. */
		if (nf->holds_alive_lock)
			pthread_mutex_unlock(&nf->slot->alive_lock);
	}
	signal_nf = NULL;
	rte_eal_cleanup();
	free(nf);
}
