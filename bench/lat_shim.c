/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * lat_shim.c -- per-packet latency through a DPDK node, for benchmarks.
 *
 * An LD_PRELOAD library that turns a net_null port into a paced, stamping
 * generator and another port into a latency-measuring sink, with the same
 * code in every system measured (onvm_mgr, DPDK's client_server_mp,
 * testpmd): the benchmark compares systems, so the measurement must not
 * belong to either.  It interposes two EAL/ethdev calls and installs ethdev
 * RX/TX callbacks (RTE_ETHDEV_RXTX_CALLBACKS, on in Debian's 22.11):
 *
 *   rte_eth_dev_start(port)  after the real one: LAT_GEN_PORT gets the
 *                            generator callback on RX queue 0, LAT_MUTE_PORT
 *                            a callback that frees all it receives, and with
 *                            LAT_TX_IN=start LAT_SINK_PORT gets the sink
 *                            callback on every TX queue.  The process that
 *                            starts a port is the primary that polls it.
 *   rte_eal_init()           after the real one, in a secondary with
 *                            LAT_TX_IN=secondary: the sink callback on every
 *                            TX queue of LAT_SINK_PORT (client_server_mp's
 *                            clients transmit themselves).  Callbacks are
 *                            per-process function pointers, so each process
 *                            installs its own.
 *
 * Generator (RX callback).  net_null hands out a burst of fresh mbufs every
 * time it is polled.  Packets "arrive" on a schedule, one every
 * 1/rate seconds from the first poll (rate: the control line of the file,
 * initially LAT_RATE_PPS; 0 = unpaced: everything polled is kept); a poll
 * keeps as many packets as have arrived and not been taken yet, frees the
 * rest (rte_pktmbuf_free_bulk) and returns only the kept ones.  Arrivals not
 * yet taken form an emulated NIC RX ring of LAT_RING (1024) descriptors: past
 * that they are counted lost (ring_overflow), as a NIC drops them.  Each kept
 * packet is stamped: magic + the TSC at the callback (its rx time), and the
 * cycles it waited in the emulated ring since its scheduled arrival.
 *
 * Sink (TX callback).  For every packet offered to tx_burst that carries the
 * magic: latency = TSC now - stamp, into histogram 0 (rx_burst return ->
 * tx_burst call, "node") and, with the ring wait added, histogram 1
 * ("offered": from the scheduled arrival, what a generator behind a NIC with
 * that ring would see); the magic is cleared, so an mbuf reused later is not
 * measured twice.  Packets without it are counted (unstamped) and left alone.
 *
 * Where the stamp lives.  In two mbuf dynamic fields ("lat_shim_stamp",
 * 8 bytes: magic in bits 63..48, TSC bits 47..0; "lat_shim_wait", 4 bytes),
 * not in the packet data: they sit in the mbuf's second cache line, which the
 * allocation at RX (rte_pktmbuf_reset writes m->next) and the free after TX
 * (reads m->next) touch anyway, so stamping adds no cache line moving between
 * CPUs -- a stamp in the payload would add one cross-core miss per packet to
 * a system whose RX and TX run on different CPUs (client_server_mp) and none
 * to one that does both on one CPU (onvm_mgr's units), and it would be
 * visible to NFs.  onvm_mgr's 24-byte packet metadata leaves exactly 8 + 4
 * bytes of the 36-byte dynfield area, hence the 48-bit TSC (wraps after ~26 h
 * at 3 GHz; differences are taken modulo 2^48).  All processes read the same
 * TSC here (constant_tsc, nonstop_tsc); a stamp from the future is counted
 * (negative), not histogrammed.
 *
 * Single writers.  The generator's counters are written only by the process
 * that polls LAT_GEN_PORT's queue 0, the sink's counters and histograms only
 * by the one thread that transmits on LAT_SINK_PORT, the control line only
 * by the benchmark; each group has its own cache line(s).  Writes are
 * relaxed atomic stores of a plain sum (no locked instructions); a reader
 * sees every 8-byte value whole.  The benchmark reads the file before and
 * after a window and takes differences.
 *
 * File layout (LAT_HIST, created and sized by the first process that maps it,
 * little endian, every offset fixed; bench/latency.py parses it):
 *
 *   0     64 B  struct lat_file_hdr  magic "LATSHIM", version, bucket scheme,
 *                                    tsc_hz, ring depth
 *   64    64 B  struct lat_ctl       rate_pps (written by the benchmark)
 *   128   64 B  struct lat_rx_side   generator counters
 *   192   64 B  struct lat_tx_side   sink counters
 *   256         uint64_t hist[2][LAT_N_BUCKETS]: 0 node, 1 offered
 *
 * Buckets: [10 ns * i, 10 ns * (i + 1)) for i < 10000 (0 .. 100 us), then
 * 100 per decade, bucket 10000 + j = [100 us * 10^(j/100), 100 us *
 * 10^((j+1)/100)) for j < 300 (100 us .. 100 ms), then one overflow bucket.
 *
 * What is measured: from the generator port's rx_burst return to the sink
 * port's tx_burst call, inside the node.  No NIC, no wire, no TX queue: a
 * real NIC adds its own DMA and queueing at both ends (histogram 1 models
 * only the RX ring's queueing).
 *
 * Cost on the data path: the RX callback, a double multiply per poll and a
 * store per kept packet; the TX callback, a load, a store, two histogram
 * increments and a log10 only above 100 us, per packet.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#define LAT_FILE_MAGIC	   "LATSHIM"
#define LAT_VERSION	   1
#define LAT_STAMP_MAGIC	   0xa7e5ULL /* bits 63..48 of a stamp */
#define LAT_TSC_BITS	   48
#define LAT_TSC_MASK	   ((1ULL << LAT_TSC_BITS) - 1)
#define LAT_LIN_WIDTH_NS   10
#define LAT_LIN_BUCKETS	   10000
#define LAT_LIN_LIMIT_NS   ((uint64_t)LAT_LIN_WIDTH_NS * LAT_LIN_BUCKETS)
#define LAT_LOG_BUCKETS	   300
#define LAT_LOG_PER_DECADE 100
#define LAT_N_BUCKETS	   (LAT_LIN_BUCKETS + LAT_LOG_BUCKETS + 1)
#define LAT_N_HIST	   2
#define LAT_RING_DEFAULT   1024

struct lat_file_hdr {
	char magic[8];		 /* LAT_FILE_MAGIC, NUL-padded; written last */
	uint32_t version;	 /* LAT_VERSION */
	uint32_t hdr_bytes;	 /* offset of hist[0] */
	uint32_t n_hist;	 /* LAT_N_HIST */
	uint32_t n_buckets;	 /* per histogram, overflow bucket included */
	uint32_t lin_width_ns;	 /* LAT_LIN_WIDTH_NS */
	uint32_t lin_buckets;	 /* LAT_LIN_BUCKETS */
	uint32_t log_buckets;	 /* LAT_LOG_BUCKETS */
	uint32_t log_per_decade; /* LAT_LOG_PER_DECADE */
	uint64_t tsc_hz;	 /* rte_get_tsc_hz() of the process that created the file */
	uint32_t ring_depth;	 /* emulated RX ring, packets */
	uint32_t reserved[3];
};

/* Written by the benchmark only. */
struct lat_ctl {
	uint64_t rate_pps; /* 0: unpaced */
	uint64_t reserved[7];
};

/* Written by the generator's process only. */
struct lat_rx_side {
	uint64_t polls;		/* rx_burst calls on the generator queue */
	uint64_t kept;		/* packets stamped and handed to the application */
	uint64_t paced_out;	/* polled packets freed by the pacer (not yet due) */
	uint64_t ring_overflow; /* scheduled arrivals lost: the emulated ring was full */
	uint64_t muted;		/* packets freed at LAT_MUTE_PORT */
	uint64_t pid;
	uint64_t reserved[2];
};

/* Written by the sink's transmitting thread only. */
struct lat_tx_side {
	uint64_t measured;  /* stamped packets seen at the sink */
	uint64_t unstamped; /* packets without the magic (not measured) */
	uint64_t negative;  /* stamps from the future (TSC not shared?) */
	uint64_t sum_ns;    /* of histogram 0's samples */
	uint64_t pid;
	uint64_t reserved[3];
};

struct lat_file {
	struct lat_file_hdr hdr;
	struct lat_ctl ctl __rte_cache_aligned;
	struct lat_rx_side rx __rte_cache_aligned;
	struct lat_tx_side tx __rte_cache_aligned;
	uint64_t hist[LAT_N_HIST][LAT_N_BUCKETS] __rte_cache_aligned;
};

/* The layout bench/latency.py parses: a change here is a new LAT_VERSION. */
_Static_assert(sizeof(struct lat_file_hdr) == 64, "header is 64 bytes");
_Static_assert(offsetof(struct lat_file, ctl) == 64, "control line at 64");
_Static_assert(offsetof(struct lat_file, rx) == 128, "generator counters at 128");
_Static_assert(offsetof(struct lat_file, tx) == 192, "sink counters at 192");
_Static_assert(offsetof(struct lat_file, hist) == 256, "histograms at 256");
_Static_assert(sizeof(struct lat_rx_side) == 64 && sizeof(struct lat_tx_side) == 64,
	       "one cache line per writer");

enum lat_tx_in { LAT_TX_IN_START, LAT_TX_IN_SECONDARY };

/* Process-local configuration (environment) and state. */
static struct {
	bool active; /* LAT_HIST set */
	const char *path;
	int gen_port, sink_port, mute_port; /* -1: none */
	enum lat_tx_in tx_in;
	uint64_t rate0;
	uint32_t ring_depth;
	int logtype;
	struct lat_file *f;
	int stamp_off, wait_off; /* dynfield offsets */
	bool gen_done, sink_done, mute_done;
	double ns_per_cycle;
} lat = {.gen_port = -1, .sink_port = -1, .mute_port = -1, .logtype = -1};

/* The generator's schedule: arrival i at t0 + i * cycles_per_pkt. */
static struct {
	uint64_t rate; /* the rate the schedule was made for */
	uint64_t t0;
	uint64_t next; /* index of the first arrival not taken yet */
	double cycles_per_pkt, pkts_per_cycle;
} pacer;

#define LAT_LOG(level, fmt, ...)                                                                   \
	rte_log(RTE_LOG_##level, lat.logtype >= 0 ? (uint32_t)lat.logtype : RTE_LOGTYPE_USER1,     \
		"lat_shim: " fmt "\n", ##__VA_ARGS__)

static inline void
cnt_add(uint64_t *c, uint64_t n)
{
	__atomic_store_n(c, *c + n, __ATOMIC_RELAXED);
}

static int
env_int(const char *name, long dflt, long max)
{
	const char *v = getenv(name);
	char *end;
	long x;

	if (v == NULL || *v == '\0')
		return (int)dflt;
	errno = 0;
	x = strtol(v, &end, 0);
	if (errno != 0 || *end != '\0' || x < -1 || x > max) {
		fprintf(stderr, "lat_shim: %s=%s is not a number, ignored\n", name, v);
		return (int)dflt;
	}
	return (int)x;
}

/* Read the environment before main(); DPDK is not initialised yet, so
 * nothing here may call it. */
__attribute__((constructor)) static void
lat_read_env(void)
{
	const char *tx_in = getenv("LAT_TX_IN");
	const char *rate = getenv("LAT_RATE_PPS");

	lat.path = getenv("LAT_HIST");
	lat.active = lat.path != NULL && *lat.path != '\0';
	lat.gen_port = env_int("LAT_GEN_PORT", -1, RTE_MAX_ETHPORTS - 1);
	lat.sink_port = env_int("LAT_SINK_PORT", -1, RTE_MAX_ETHPORTS - 1);
	lat.mute_port = env_int("LAT_MUTE_PORT", -1, RTE_MAX_ETHPORTS - 1);
	lat.ring_depth = (uint32_t)env_int("LAT_RING", LAT_RING_DEFAULT, 1L << 24);
	if (lat.ring_depth == 0)
		lat.ring_depth = 1;
	lat.rate0 = rate != NULL ? strtoull(rate, NULL, 0) : 0;
	lat.tx_in = tx_in != NULL && strcmp(tx_in, "secondary") == 0 ? LAT_TX_IN_SECONDARY
								     : LAT_TX_IN_START;
}

/* Map LAT_HIST (creating and sizing it if needed) and register the stamp's
 * dynamic fields.  Slow path, once per process; 0 or -1 (logged). */
static int
lat_setup(void)
{
	static const struct rte_mbuf_dynfield stamp_desc = {
	    .name = "lat_shim_stamp", .size = sizeof(uint64_t), .align = __alignof__(uint64_t)};
	static const struct rte_mbuf_dynfield wait_desc = {
	    .name = "lat_shim_wait", .size = sizeof(uint32_t), .align = __alignof__(uint32_t)};
	struct lat_file *f;
	struct stat st;
	int fd;

	if (lat.f != NULL)
		return 0;
	if (lat.logtype < 0) {
		lat.logtype = rte_log_register("bench.lat_shim");
		if (lat.logtype >= 0)
			rte_log_set_level((uint32_t)lat.logtype, RTE_LOG_INFO);
	}
	lat.stamp_off = rte_mbuf_dynfield_register(&stamp_desc);
	lat.wait_off = rte_mbuf_dynfield_register(&wait_desc);
	if (lat.stamp_off < 0 || lat.wait_off < 0) {
		LAT_LOG(ERR, "cannot register the mbuf stamp fields: %s", rte_strerror(rte_errno));
		return -1;
	}
	fd = open(lat.path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || fstat(fd, &st) < 0) {
		LAT_LOG(ERR, "%s: %s", lat.path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if ((size_t)st.st_size < sizeof(*f) && ftruncate(fd, sizeof(*f)) < 0) {
		LAT_LOG(ERR, "sizing %s: %s", lat.path, strerror(errno));
		close(fd);
		return -1;
	}
	f = mmap(NULL, sizeof(*f), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (f == MAP_FAILED) {
		LAT_LOG(ERR, "mapping %s: %s", lat.path, strerror(errno));
		return -1;
	}
	/* Two processes may both find the file new: they write the same values. */
	if (memcmp(f->hdr.magic, LAT_FILE_MAGIC, sizeof(LAT_FILE_MAGIC)) != 0) {
		f->hdr.version = LAT_VERSION;
		f->hdr.hdr_bytes = offsetof(struct lat_file, hist);
		f->hdr.n_hist = LAT_N_HIST;
		f->hdr.n_buckets = LAT_N_BUCKETS;
		f->hdr.lin_width_ns = LAT_LIN_WIDTH_NS;
		f->hdr.lin_buckets = LAT_LIN_BUCKETS;
		f->hdr.log_buckets = LAT_LOG_BUCKETS;
		f->hdr.log_per_decade = LAT_LOG_PER_DECADE;
		f->hdr.tsc_hz = rte_get_tsc_hz();
		f->hdr.ring_depth = lat.ring_depth;
		__atomic_store_n(&f->ctl.rate_pps, lat.rate0, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_RELEASE);
		memcpy(f->hdr.magic, LAT_FILE_MAGIC, sizeof(LAT_FILE_MAGIC));
	} else if (f->hdr.version != LAT_VERSION) {
		LAT_LOG(ERR, "%s has layout version %u, this shim writes %u", lat.path,
			f->hdr.version, LAT_VERSION);
		munmap(f, sizeof(*f));
		return -1;
	}
	lat.ns_per_cycle = 1e9 / (double)rte_get_tsc_hz();
	lat.f = f;
	return 0;
}

static inline uint64_t *
stamp_of(struct rte_mbuf *m)
{
	return RTE_MBUF_DYNFIELD(m, lat.stamp_off, uint64_t *);
}

static inline uint32_t *
wait_of(struct rte_mbuf *m)
{
	return RTE_MBUF_DYNFIELD(m, lat.wait_off, uint32_t *);
}

static void
pacer_reset(uint64_t rate, uint64_t now)
{
	pacer.rate = rate;
	pacer.t0 = now;
	pacer.next = 0;
	if (rate != 0) {
		pacer.cycles_per_pkt = (double)rte_get_tsc_hz() / (double)rate;
		pacer.pkts_per_cycle = 1.0 / pacer.cycles_per_pkt;
	}
}

static uint16_t
lat_rx_gen(uint16_t port, uint16_t queue, struct rte_mbuf *pkts[], uint16_t nb_pkts,
	   uint16_t max_pkts, void *arg)
{
	struct lat_rx_side *rx = &lat.f->rx;
	uint64_t now = rte_rdtsc();
	uint64_t rate = __atomic_load_n(&lat.f->ctl.rate_pps, __ATOMIC_RELAXED);
	uint16_t keep = nb_pkts;
	uint16_t i;

	RTE_SET_USED(port);
	RTE_SET_USED(queue);
	RTE_SET_USED(max_pkts);
	RTE_SET_USED(arg);
	if (unlikely(rate != pacer.rate))
		pacer_reset(rate, now);
	cnt_add(&rx->polls, 1);
	if (rate == 0) {
		for (i = 0; i < keep; i++) {
			*stamp_of(pkts[i]) =
			    (LAT_STAMP_MAGIC << LAT_TSC_BITS) | (now & LAT_TSC_MASK);
			*wait_of(pkts[i]) = 0;
		}
	} else {
		/* arrivals with a time <= now: indices 0 .. due - 1 */
		uint64_t due = (uint64_t)((double)(now - pacer.t0) * pacer.pkts_per_cycle) + 1;
		uint64_t avail;

		if (due - pacer.next > lat.ring_depth) {
			cnt_add(&rx->ring_overflow, due - lat.ring_depth - pacer.next);
			pacer.next = due - lat.ring_depth;
		}
		avail = due - pacer.next;
		if (avail < keep)
			keep = (uint16_t)avail;
		for (i = 0; i < keep; i++) {
			uint64_t at =
			    pacer.t0 + (uint64_t)((double)(pacer.next + i) * pacer.cycles_per_pkt);
			uint64_t wait = now > at ? now - at : 0;

			*stamp_of(pkts[i]) =
			    (LAT_STAMP_MAGIC << LAT_TSC_BITS) | (now & LAT_TSC_MASK);
			*wait_of(pkts[i]) = wait > UINT32_MAX ? UINT32_MAX : (uint32_t)wait;
		}
		pacer.next += keep;
		if (keep < nb_pkts) {
			rte_pktmbuf_free_bulk(&pkts[keep], nb_pkts - keep);
			cnt_add(&rx->paced_out, nb_pkts - keep);
		}
	}
	cnt_add(&rx->kept, keep);
	return keep;
}

static uint16_t
lat_rx_mute(uint16_t port, uint16_t queue, struct rte_mbuf *pkts[], uint16_t nb_pkts,
	    uint16_t max_pkts, void *arg)
{
	RTE_SET_USED(port);
	RTE_SET_USED(queue);
	RTE_SET_USED(max_pkts);
	RTE_SET_USED(arg);
	if (nb_pkts != 0) {
		rte_pktmbuf_free_bulk(pkts, nb_pkts);
		cnt_add(&lat.f->rx.muted, nb_pkts);
	}
	return 0;
}

static inline uint32_t
bucket_of(uint64_t ns)
{
	double j;

	if (ns < LAT_LIN_LIMIT_NS)
		return (uint32_t)(ns / LAT_LIN_WIDTH_NS);
	j = log10((double)ns / (double)LAT_LIN_LIMIT_NS) * LAT_LOG_PER_DECADE;
	if (j >= LAT_LOG_BUCKETS)
		return LAT_N_BUCKETS - 1;
	return LAT_LIN_BUCKETS + (uint32_t)j;
}

static uint16_t
lat_tx_sink(uint16_t port, uint16_t queue, struct rte_mbuf *pkts[], uint16_t nb_pkts, void *arg)
{
	struct lat_file *f = lat.f;
	uint64_t now = rte_rdtsc();
	uint64_t measured = 0, unstamped = 0, negative = 0, sum = 0;
	uint16_t i;

	RTE_SET_USED(port);
	RTE_SET_USED(queue);
	RTE_SET_USED(arg);
	for (i = 0; i < nb_pkts; i++) {
		uint64_t *sp = stamp_of(pkts[i]);
		uint64_t s = *sp, d, ns, ns_q;
		uint32_t b;

		if (s >> LAT_TSC_BITS != LAT_STAMP_MAGIC) {
			unstamped++;
			continue;
		}
		*sp = 0;
		d = (now - s) & LAT_TSC_MASK;
		if (unlikely(d > LAT_TSC_MASK / 2)) {
			negative++;
			continue;
		}
		ns = (uint64_t)((double)d * lat.ns_per_cycle);
		ns_q = (uint64_t)((double)(d + *wait_of(pkts[i])) * lat.ns_per_cycle);
		b = bucket_of(ns);
		cnt_add(&f->hist[0][b], 1);
		b = bucket_of(ns_q);
		cnt_add(&f->hist[1][b], 1);
		sum += ns;
		measured++;
	}
	if (measured != 0) {
		cnt_add(&f->tx.measured, measured);
		cnt_add(&f->tx.sum_ns, sum);
	}
	if (unstamped != 0)
		cnt_add(&f->tx.unstamped, unstamped);
	if (negative != 0)
		cnt_add(&f->tx.negative, negative);
	return nb_pkts;
}

/* Every TX queue of the sink port gets the sink callback (the writer is this
 * process's one transmitting thread). */
static void
lat_attach_sink(void)
{
	struct rte_eth_dev_info info;
	uint16_t port = (uint16_t)lat.sink_port;
	uint16_t q;

	if (lat.sink_done || lat_setup() < 0)
		return;
	if (!rte_eth_dev_is_valid_port(port) || rte_eth_dev_info_get(port, &info) != 0) {
		LAT_LOG(ERR, "sink port %u does not exist in this process", port);
		return;
	}
	for (q = 0; q < info.nb_tx_queues; q++)
		if (rte_eth_add_tx_callback(port, q, lat_tx_sink, NULL) == NULL) {
			LAT_LOG(ERR, "TX callback on port %u queue %u: %s", port, q,
				rte_strerror(rte_errno));
			return;
		}
	__atomic_store_n(&lat.f->tx.pid, (uint64_t)getpid(), __ATOMIC_RELAXED);
	lat.sink_done = true;
	LAT_LOG(INFO, "sink on port %u (%u TX queues), pid %d", port, info.nb_tx_queues,
		(int)getpid());
}

static void
lat_attach_rx(uint16_t port, bool gen)
{
	struct rte_eth_dev_info info;
	uint16_t q, nq;

	if (lat_setup() < 0 || rte_eth_dev_info_get(port, &info) != 0)
		return;
	nq = gen ? 1 : info.nb_rx_queues;
	for (q = 0; q < nq; q++)
		if (rte_eth_add_rx_callback(port, q, gen ? lat_rx_gen : lat_rx_mute, NULL) ==
		    NULL) {
			LAT_LOG(ERR, "RX callback on port %u queue %u: %s", port, q,
				rte_strerror(rte_errno));
			return;
		}
	if (gen) {
		__atomic_store_n(&lat.f->rx.pid, (uint64_t)getpid(), __ATOMIC_RELAXED);
		lat.gen_done = true;
	} else {
		lat.mute_done = true;
	}
	LAT_LOG(INFO, "%s on port %u, pid %d", gen ? "generator" : "muted RX", port, (int)getpid());
}

int
rte_eth_dev_start(uint16_t port_id)
{
	static int (*real)(uint16_t);
	int ret;

	if (real == NULL) {
		real = (int (*)(uint16_t))dlsym(RTLD_NEXT, "rte_eth_dev_start");
		if (real == NULL) {
			fprintf(stderr, "lat_shim: no rte_eth_dev_start after the shim: %s\n",
				dlerror());
			abort();
		}
	}
	ret = real(port_id);
	if (ret != 0 || !lat.active)
		return ret;
	if (port_id == lat.gen_port && !lat.gen_done)
		lat_attach_rx(port_id, true);
	if (port_id == lat.mute_port && !lat.mute_done)
		lat_attach_rx(port_id, false);
	if (port_id == lat.sink_port && lat.tx_in == LAT_TX_IN_START)
		lat_attach_sink();
	return ret;
}

int
rte_eal_init(int argc, char **argv)
{
	static int (*real)(int, char **);
	int ret;

	if (real == NULL) {
		real = (int (*)(int, char **))dlsym(RTLD_NEXT, "rte_eal_init");
		if (real == NULL) {
			fprintf(stderr, "lat_shim: no rte_eal_init after the shim: %s\n",
				dlerror());
			abort();
		}
	}
	ret = real(argc, argv);
	if (ret >= 0 && lat.active && lat.tx_in == LAT_TX_IN_SECONDARY && lat.sink_port >= 0 &&
	    rte_eal_process_type() == RTE_PROC_SECONDARY)
		lat_attach_sink();
	return ret;
}
