/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * nf_init.c -- an NF's start and end: EAL attach, registration with the
 * manager, unregistration, and the context's accessors.
 *
 * Registration is a synchronous rte_mp request to the primary, so an NF is
 * routed to the moment nf_init() returns -- no status polling, no sleeps.
 * The active takes its slot's liveness lock right after registering and holds
 * it until nf_fini(): that lock is how its standby learns of its death.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_memzone.h>
#include <rte_string_fns.h>

#include "onvm_cpuset.h"
#include "onvm_eal_args.h"

#include "nf_private.h"

RTE_LOG_REGISTER_IMPL(nf_logtype, "onvm.libnf", INFO);

#define NF_DEFAULT_IDLE_SPIN_US 200
#define NF_MP_TIMEOUT_S 5
#define NF_UNREG_SLICE_MS 200 /* unregistration: the manager's life checked as often */

int nf_pkt_meta_offset = -1;

static struct nf_ctx *signal_nf;

static void
nf_signal(int sig)
{
	(void)sig;
	if (signal_nf != NULL)
		nf_stop(signal_nf);
}

/*
 * Build the EAL argument vector: the user's EAL arguments plus what an NF
 * always needs -- secondary process type, no PCI probing unless an
 * allow-list is given, and an lcore id of its own (DPDK keeps per-lcore data
 * such as the mempool cache in shared memory, so two NFs with one id would
 * corrupt it).
 */
static int
build_eal_args(int argc, char **argv, char **out, int max)
{
	static const char *const proc_opts[] = {"--proc-type", NULL};
	static const char *const pci_opts[] = {"--no-pci", "-a", "--allow", "-b", "--block", NULL};
	static const char *const lcore_opts[] = {"-l", "--lcores", "-c", NULL};
	static char proc_arg[] = "--proc-type=secondary";
	static char nopci_arg[] = "--no-pci";
	static char lcore_arg[ONVM_CPULIST_MAX + 32];
	int n = 0;

	if (argc + 4 > max)
		return -E2BIG;
	for (int i = 0; i < argc; i++)
		out[n++] = argv[i];
	if (!onvm_eal_has_option(argc - 1, argv + 1, proc_opts))
		out[n++] = proc_arg;
	if (!onvm_eal_has_option(argc - 1, argv + 1, pci_opts))
		out[n++] = nopci_arg;
	if (!onvm_eal_has_option(argc - 1, argv + 1, lcore_opts)) {
		/* Started by hand without an lcore id: one of the ids kept for
		 * such NFs (onvm_cpuset.h), by pid -- the manager refuses a
		 * clash with a message that says so -- on the CPUs this process
		 * may run on, whatever their numbers. */
		int base = onvm_nf_hand_lcore_base(RTE_MAX_LCORE, ONVM_MAX_NFS);
		char cpus[ONVM_CPULIST_MAX];
		cpu_set_t set;

		if (base < 0) {
			fprintf(stderr, "libnf: this DPDK has too few lcore ids (RTE_MAX_LCORE %d) "
					"to pick one: pass --lcores=ID@CPUS\n",
				RTE_MAX_LCORE);
			return -ERANGE;
		}
		if (sched_getaffinity(0, sizeof(set), &set) != 0 ||
		    onvm_cpulist_format(&set, cpus, sizeof(cpus)) < 0 ||
		    snprintf(lcore_arg, sizeof(lcore_arg), "--lcores=%u@(%s)",
			     (unsigned int)base + (unsigned int)getpid() % ONVM_NF_HAND_LCORES,
			     cpus) >= (int)sizeof(lcore_arg))
			return -E2BIG;
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
	if (nf->shm->magic != ONVM_SHM_MAGIC || nf->shm->version != ONVM_SHM_VERSION ||
	    nf->shm->layout != ONVM_SHM_LAYOUT) {
		NF_LOG(ERR, "manager table layout v%u (%#x), libnf expects v%u (%#x): rebuild the NF",
		       nf->shm->version, nf->shm->layout, ONVM_SHM_VERSION, ONVM_SHM_LAYOUT);
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
	/* Every slot's rings are alike; the crash accounting needs their shape. */
	if (onvm_nf_rings_check(&nf->shm->nfs[0]) < 0) {
		NF_LOG(ERR, "the manager's NF rings do not have the sync modes libnf's crash "
			    "accounting needs (onvm_nf_batch.h): manager and NF built against "
			    "different DPDKs?");
		return -EPROTO;
	}
	return 0;
}

/* See nf_private.h. */
int
nfl_mp_call(const char *action, const void *req, size_t len, int fd, void *rep, size_t replen)
{
	return nfl_mp_call_ms(action, req, len, fd, rep, replen, NF_MP_TIMEOUT_S * 1000);
}

int
nfl_mp_call_ms(const char *action, const void *req, size_t len, int fd, void *rep, size_t replen,
	       unsigned int timeout_ms)
{
	struct timespec ts = {.tv_sec = timeout_ms / 1000,
			      .tv_nsec = (long)(timeout_ms % 1000) * 1000000};
	struct rte_mp_reply reply = {0};
	struct rte_mp_msg msg = {0};
	int ret = 0;

	strlcpy(msg.name, action, sizeof(msg.name));
	memcpy(msg.param, req, len);
	msg.len_param = len;
	if (fd >= 0) {
		msg.fds[0] = fd;
		msg.num_fds = 1;
	}
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
		.shm_layout = ONVM_SHM_LAYOUT,
		.pid = getpid(),
		.service_id = nf->service_id,
		.instance_id = nf->want_instance,
		.lcore_id = rte_lcore_id(),
		.standby = nf->standby,
	};
	struct onvm_mp_register_rep rep = {0};
	int self, r;

	strlcpy(req.name, nf->name, sizeof(req.name));
	/* Our identity: the manager reads our pid in its namespace from this
	 * and watches it for our death (nf_ipc.c). */
	self = (int)syscall(SYS_pidfd_open, getpid(), 0);
	if (self < 0) {
		int err = errno; /* the log may change errno */

		NF_LOG(ERR, "pidfd_open: %s%s", strerror(err),
		       err == ENOSYS ? " (libnf needs Linux 5.3 or later)" :
		       err == EPERM  ? " (a seccomp filter forbids it?)" : "");
		return -err;
	}
	r = nfl_mp_call(ONVM_MP_NF_REGISTER, &req, sizeof(req), self, &rep, sizeof(rep));
	close(self);
	if (r < 0) {
		NF_LOG(ERR, "registration request got no answer from the manager: %s",
		       rte_strerror(rte_errno));
		return -ETIMEDOUT;
	}
	if (rep.result != 0) {
		NF_LOG(ERR, "manager refused registration: %s", rep.reason);
		return rep.result;
	}
	nf->instance_id = rep.instance_id;
	nf->mgr_view_pid = rep.pid;
	nf->slot = &nf->shm->nfs[rep.instance_id];
	nfl_clock_init(nf->slot);
	nf->rx = nf->slot->rx_ring;
	nf->tx = nf->slot->tx_ring;
	nf->alloc = nf->slot->alloc_ring;
	nf->registered = true;
	nfl_crash_prepare(); /* a standby's too: not in its promotion */
	if (!nf->standby) {
		int r;

		nfl_fault_point(nf, NF_FAULT_REGISTERED);
		/* Held until this process is gone: the standby's death signal. */
		r = pthread_mutex_lock(&nf->slot->alive_lock);

		if (r == EOWNERDEAD)
			pthread_mutex_consistent(&nf->slot->alive_lock);
		else if (r != 0)
			NF_LOG(WARNING, "liveness lock: %s (no standby can protect this NF)",
			       strerror(r));
		nf->holds_alive_lock = (r == 0 || r == EOWNERDEAD);
		nfl_crash_arm(nf); /* a crash of ours now wakes the standby at once */
		/* Where the slot's active runs: a promoted standby moves there. */
		{
			cpu_set_t cpus;

			if (pthread_getaffinity_np(pthread_self(), sizeof(cpus), &cpus) != 0)
				CPU_ZERO(&cpus);
			memcpy(&nf->slot->active_cpus, &cpus, sizeof(cpus));
		}
	}
	NF_LOG(INFO, "%s: service %u instance %u (lcore %u) registered%s", nf->name,
	       nf->service_id, nf->instance_id, rte_lcore_id(), nf->standby ? " as standby" : "");
	return 0;
}

int
nf_init(int argc, char **argv, const char *default_name, struct nf_ctx **out)
{
	char *eal_argv[256];
	int first_sep = argc, second_sep = argc, eal_argc, ret, consumed;
	struct nf_ctx *nf;

	nfl_pidns_init();
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
	nfl_fault_env_setup(nf);
	ret = nf_register(nf);
	if (ret < 0)
		goto fail;

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
	return nf->stop || (nf->slot != NULL && __atomic_load_n(&nf->slot->stop, __ATOMIC_ACQUIRE));
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

bool
nf_is_standby(const struct nf_ctx *nf)
{
	return nf->standby;
}

static void
nf_unregister(struct nf_ctx *nf)
{
	struct onvm_mp_unregister_req req = {
		.instance_id = nf->instance_id,
		.generation = nf->slot->generation,
	};

	/* In slices, while the manager lives: one killed may have taken the
	 * request in and will never answer (an NF its death stops, by
	 * PDEATHSIG, used to linger NF_MP_TIMEOUT_S for nothing).  A repeat
	 * to a slow manager is refused: the slot's generation moved on. */
	for (unsigned int waited = 0; waited < NF_MP_TIMEOUT_S * 1000; waited += NF_UNREG_SLICE_MS) {
		if (rte_eal_primary_proc_alive(NULL) == 0) {
			NF_LOG(INFO, "the manager is gone: nothing to unregister from");
			return;
		}
		if (nfl_mp_call_ms(ONVM_MP_NF_UNREGISTER, &req, sizeof(req), -1, NULL, 0,
				   NF_UNREG_SLICE_MS) == 0)
			return;
	}
	NF_LOG(WARNING, "manager did not acknowledge unregistration");
}

void
nf_fini(struct nf_ctx *nf)
{
	if (nf == NULL)
		return;
	if (nf->registered && !nf->standby) {
		/* From here the slot is leaving, not failing: a standby that
		 * finds this process dead (at any point below) must not promote
		 * into a slot the manager is taking down.  Before the request,
		 * so no unregistration can arrive without it. */
		__atomic_store_n(&nf->slot->leaving, 1, __ATOMIC_RELEASE);
		nf_unregister(nf);
		/* No longer routed to: finish what is already queued (unless the
		 * manager itself is going away). */
		while (nf->ops != NULL && !__atomic_load_n(&nf->slot->stop, __ATOMIC_ACQUIRE) &&
		       nfl_loop_poll_once(nf) > 0)
			;
		nfl_store_stop(nf); /* its last updates out (while the store answers) */
		if (nf->ops != NULL && nf->ops->fini != NULL)
			nf->ops->fini(nf);
		NF_LOG(INFO, "%s: rx %" PRIu64 " tx %" PRIu64 " drop %" PRIu64, nf->name,
		       nf->slot->stats.rx, nf->slot->stats.tx, nf->slot->stats.act_drop);
		nfl_fault_point(nf, NF_FAULT_FINI);
		/* Last: a parked standby gets the lock, sees `leaving`, and exits. */
		nfl_crash_disarm();
		if (nf->holds_alive_lock)
			pthread_mutex_unlock(&nf->slot->alive_lock);
	}
	signal_nf = NULL;
	nfl_clock_init(NULL); /* (the slot's memory goes with the segment) */
	if (nf->seg.base != NULL)
		onvm_seg_close(&nf->seg, 0);
	rte_eal_cleanup();
	free(nf);
}
