/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * nDPI in state regions: see dpi_engine.h for the design.
 *
 * nDPI 4.2 hides its module struct unless NDPI_LIB_COMPILATION is defined;
 * we need it to find the per-packet scratch and the LRU cache pointers, so
 * the engine is tied to the nDPI version it is built against (Debian 12's
 * 4.2).  dpi_engine_open() checks the module nDPI allocated has the size we
 * compiled for, and refuses to run otherwise.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NDPI_LIB_COMPILATION
#include <ndpi_api.h>
#undef NDPI_LIB_COMPILATION

#include "dpi_engine.h"
#include "onvm_nf_output.h"
#include "onvm_rule.h"

#define DPI_ROOT_MAGIC UINT64_C(0x44504952544f4f31) /* "DPIRTOO1" */

/* In the heap; the heap's root points here. */
struct dpi_root {
	uint64_t magic;
	uint64_t module_off;
	uint64_t code_addr;   /* where ndpi_detection_process_packet was in the creator */
	uint32_t module_size; /* sizeof(struct ndpi_detection_module_struct) */
	uint32_t flow_size;
};

/* One flow under detection, in the heap: the owner of every block nDPI
 * allocates for the flow, then nDPI's flow struct. */
struct dpi_ctx {
	struct onvm_rh_owner own;
	uint8_t flow[] __attribute__((aligned(16)));
};

/* nDPI's allocator hooks are process-wide: one engine per process. */
static struct onvm_rh *ndpi_heap;

static void *
heap_malloc(size_t size)
{
	return ndpi_heap != NULL ? onvm_rh_alloc(ndpi_heap, size) : NULL;
}

static void
heap_free(void *p)
{
	if (ndpi_heap != NULL)
		onvm_rh_free(ndpi_heap, p);
}

static void
use_libc_allocator(void)
{
	set_ndpi_malloc(malloc);
	set_ndpi_free(free);
	set_ndpi_flow_malloc(malloc);
	set_ndpi_flow_free(free);
}

static void
use_heap_allocator(struct onvm_rh *h)
{
	ndpi_heap = h;
	set_ndpi_malloc(heap_malloc);
	set_ndpi_free(heap_free);
	set_ndpi_flow_malloc(heap_malloc);
	set_ndpi_flow_free(heap_free);
}

static inline void
touch(struct dpi_engine *e, const void *p, size_t len)
{
	if (e->state != NULL)
		nf_state_touch_ptr(e->state, p, len);
}

int
dpi_engine_regions(const struct dpi_config *cfg, struct nf_state_request reqs[3])
{
	size_t ft = onvm_ft_mem_size(cfg->flows, sizeof(struct dpi_flow));

	if (ft == 0 || cfg->heap_mb < DPI_HEAP_MIN_MB || cfg->heap_mb > 1024)
		return -EINVAL;
	reqs[0] = (struct nf_state_request){.name = DPI_REGION_FLOWS, .size = ft};
	reqs[1] = (struct nf_state_request){.name = DPI_REGION_TOTALS,
					    .size = sizeof(struct dpi_totals),
					    .chunk_size = 256};
	reqs[2] = (struct nf_state_request){.name = DPI_REGION_HEAP,
					    .size = (size_t)cfg->heap_mb << 20};
	return 0;
}

/* What we ask nDPI to look for: everything but tinc, whose cache (nDPI's
 * libcache) is a linked structure any flow rewrites -- not trackable. */
static void
set_protocols(struct ndpi_detection_module_struct *nd)
{
	NDPI_PROTOCOL_BITMASK all;

	NDPI_BITMASK_SET_ALL(all);
	NDPI_DEL_PROTOCOL_FROM_BITMASK(all, NDPI_PROTOCOL_TINC);
	ndpi_set_protocol_detection_bitmask2(nd, &all);
}

int
dpi_engine_process_init(struct dpi_engine *e)
{
	struct ndpi_detection_module_struct *tmp;

	use_libc_allocator();
	tmp = ndpi_init_detection_module(ndpi_no_prefs);
	if (tmp == NULL) {
		snprintf(e->err, sizeof(e->err), "nDPI: cannot initialise a detection module");
		return -ENOMEM;
	}
	set_protocols(tmp);
	ndpi_finalize_initialization(tmp);
	ndpi_exit_detection_module(tmp);
	use_heap_allocator(&e->heap);
	return 0;
}

/* The LRU caches any flow may write (tinc's is never created: disabled). */
static int
lru_caches(struct ndpi_detection_module_struct *nd, struct ndpi_lru_cache **out)
{
	struct ndpi_lru_cache *all[] = {nd->ookla_cache,  nd->bittorrent_cache, nd->zoom_cache,
					nd->stun_cache,	  nd->tls_cert_cache,	nd->mining_cache,
					nd->msteams_cache};
	int n = 0;

	for (unsigned int i = 0; i < RTE_DIM(all); i++)
		if (all[i] != NULL && all[i]->entries != NULL)
			out[n++] = all[i];
	return n;
}

/* A promoted standby: the caches may hold writes of a batch that never
 * committed (they are tracked by diff, after the fact); the replica holds
 * them as of the last commit. */
static void
restore_caches(struct dpi_engine *e)
{
	struct ndpi_lru_cache *c[8];
	const uint8_t *canon, *replica;
	int n;

	if (e->state == NULL)
		return;
	canon = nf_state_region_ptr(e->state, e->heap_region);
	replica = nf_state_replica_ptr(e->state, e->heap_region);
	n = lru_caches(e->nd, c);
	for (int i = 0; i < n; i++) {
		uint8_t *p = (uint8_t *)c[i]->entries;

		memcpy(p, replica + (p - canon), c[i]->num_entries * sizeof(c[i]->entries[0]));
	}
}

static int
adopt(struct dpi_engine *e)
{
	struct dpi_root *root = onvm_rh_root(&e->heap);

	if (root == NULL || root->magic != DPI_ROOT_MAGIC) {
		snprintf(e->err, sizeof(e->err), "dpi_heap holds no nDPI module");
		return -EBADMSG;
	}
	if (root->module_size != sizeof(struct ndpi_detection_module_struct) ||
	    root->flow_size != ndpi_detection_get_sizeof_ndpi_flow_struct()) {
		snprintf(e->err, sizeof(e->err), "dpi_heap was built by another nDPI version");
		return -EBADMSG;
	}
	if (root->code_addr != (uint64_t)(uintptr_t)&ndpi_detection_process_packet) {
		/* nDPI's state holds function pointers into this binary. */
		snprintf(e->err, sizeof(e->err),
			 "dpi_heap was built by a process whose code sits elsewhere (%#" PRIx64
			 " vs %p): not the same non-PIE binary",
			 root->code_addr, (void *)&ndpi_detection_process_packet);
		return -EBADMSG;
	}
	e->nd = onvm_rh_ptr(&e->heap, root->module_off);
	restore_caches(e);
	return 0;
}

static int
build(struct dpi_engine *e)
{
	struct dpi_root *root;

	onvm_rh_set_owner(&e->heap, NULL);
	e->nd = ndpi_init_detection_module(ndpi_no_prefs);
	if (e->nd == NULL) {
		snprintf(e->err, sizeof(e->err), "nDPI module does not fit in dpi_heap (%u MB)",
			 e->cfg.heap_mb);
		return -ENOMEM;
	}
	if (onvm_rh_usable(&e->heap, e->nd) < sizeof(struct ndpi_detection_module_struct)) {
		snprintf(e->err, sizeof(e->err),
			 "libndpi's module is larger than the nDPI headers say: version mismatch");
		return -EBADMSG;
	}
	set_protocols(e->nd);
	ndpi_finalize_initialization(e->nd);
	root = onvm_rh_calloc(&e->heap, 1, sizeof(*root));
	if (root == NULL) {
		snprintf(e->err, sizeof(e->err), "dpi_heap full after nDPI set-up");
		return -ENOMEM;
	}
	*root = (struct dpi_root){
		.magic = DPI_ROOT_MAGIC,
		.module_off = onvm_rh_off(&e->heap, e->nd),
		.code_addr = (uint64_t)(uintptr_t)&ndpi_detection_process_packet,
		.module_size = sizeof(struct ndpi_detection_module_struct),
		.flow_size = ndpi_detection_get_sizeof_ndpi_flow_struct(),
	};
	onvm_rh_set_root(&e->heap, root);
	return 0;
}

int
dpi_engine_open(struct dpi_engine *e, const struct dpi_config *cfg, struct nf_state_set *st,
		void *flows, void *totals, void *heap)
{
	char err[200];
	int ret;

	e->cfg = *cfg;
	e->state = st;
	e->t = totals;
	e->heap_region = st != NULL ? nf_state_region_find(st, DPI_REGION_HEAP) : -1;
	ret = onvm_rh_open(&e->heap, st, heap, (size_t)cfg->heap_mb << 20, err, sizeof(err));
	if (ret == 0)
		ret = onvm_ft_open(&e->flows, st, flows,
				   onvm_ft_mem_size(cfg->flows, sizeof(struct dpi_flow)), cfg->flows,
				   sizeof(struct dpi_flow), err, sizeof(err));
	if (ret < 0) {
		snprintf(e->err, sizeof(e->err), "%s", err);
		return ret;
	}
	use_heap_allocator(&e->heap);
	if (onvm_rh_was_formatted(&e->heap))
		return adopt(e);
	if (onvm_ft_count(&e->flows) != 0) {
		snprintf(e->err, sizeof(e->err), "dpi_flows holds flows but dpi_heap is empty");
		return -EBADMSG;
	}
	return build(e);
}

void
dpi_engine_batch_begin(struct dpi_engine *e)
{
	e->ran_ndpi = false;
}

void
dpi_engine_batch_end(struct dpi_engine *e)
{
	struct ndpi_lru_cache *c[8];
	const uint8_t *canon, *replica;
	size_t chunk;
	int n;

	if (!e->ran_ndpi || e->state == NULL)
		return;
	canon = nf_state_region_ptr(e->state, e->heap_region);
	replica = nf_state_replica_ptr(e->state, e->heap_region);
	chunk = e->state->regions[e->heap_region].chunk_size;
	n = lru_caches(e->nd, c);
	for (int i = 0; i < n; i++) {
		const uint8_t *p = (const uint8_t *)c[i]->entries;
		const uint8_t *end = p + c[i]->num_entries * sizeof(c[i]->entries[0]);

		/* Chunk by chunk, aligned to the region's chunks. */
		while (p < end) {
			size_t off = (size_t)(p - canon);
			size_t len = RTE_MIN(chunk - (off & (chunk - 1)), (size_t)(end - p));

			if (memcmp(p, replica + off, len) != 0)
				touch(e, p, len);
			p += len;
		}
	}
}

static inline unsigned int
proto_slot(uint16_t master, uint16_t app)
{
	uint16_t id = app != NDPI_PROTOCOL_UNKNOWN ? app : master;

	return id < DPI_PROTO_SLOTS ? id : 0;
}

/* Record the flow's result and release its nDPI context. */
static void
classify(struct dpi_engine *e, struct dpi_flow *f, ndpi_protocol p, enum dpi_flow_state how,
	 bool guessed)
{
	struct dpi_ctx *ctx = onvm_rh_ptr(&e->heap, f->ctx_off);
	struct dpi_proto_stats *ps;

	onvm_rh_set_owner(&e->heap, NULL);
	if (ctx != NULL) {
		/* nDPI frees the flow's buffers (unlinking them from the owner);
		 * what it does not free (a cache it created for this flow) stays,
		 * owned by nobody. */
		ndpi_free_flow_data((struct ndpi_flow_struct *)ctx->flow);
		onvm_rh_disown(&e->heap, &ctx->own);
		onvm_rh_free(&e->heap, ctx);
	}
	/* f was touched by the caller for this packet. */
	f->ctx_off = 0;
	f->master = p.master_protocol;
	f->app = p.app_protocol;
	f->category = (uint16_t)p.category;
	f->state = (uint8_t)how;
	f->guessed = guessed;
	f->detect_pkts = (uint32_t)f->packets;
	ps = &e->t->proto[proto_slot(f->master, f->app)];
	touch(e, ps, sizeof(*ps));
	touch(e, &e->t->flows_classified, sizeof(e->t->flows_classified));
	ps->flows++;
	ps->packets += f->packets;
	ps->bytes += f->bytes;
	e->t->flows_classified++;
}

/* About to let nDPI work on ctx's flow: cover everything it may write. */
static struct ndpi_flow_struct *
enter_flow(struct dpi_engine *e, struct dpi_ctx *ctx)
{
	if (!e->ran_ndpi) {
		struct ndpi_detection_module_struct *nd = e->nd;

		/* First nDPI call of the batch: nDPI rewrites its per-packet
		 * scratch on every call and creates caches lazily; cover both
		 * until the batch ends (batches without nDPI commit neither). */
		touch(e, &nd->packet, sizeof(nd->packet));
		touch(e, &nd->ookla_cache,
		      (size_t)((uint8_t *)(&nd->msteams_cache + 1) - (uint8_t *)&nd->ookla_cache));
		e->ran_ndpi = true;
	}
	touch(e, ctx, onvm_rh_usable(&e->heap, ctx));
	onvm_rh_touch_owner(&e->heap, &ctx->own);
	onvm_rh_set_owner(&e->heap, &ctx->own);
	return (struct ndpi_flow_struct *)ctx->flow;
}

static void
give_up(struct dpi_engine *e, struct dpi_flow *f)
{
	struct dpi_ctx *ctx = onvm_rh_ptr(&e->heap, f->ctx_off);
	uint8_t guessed = 0;
	ndpi_protocol p = {0};

	if (ctx != NULL) {
		p = ndpi_detection_giveup(e->nd, enter_flow(e, ctx), 1, &guessed);
		onvm_rh_set_owner(&e->heap, NULL);
	}
	classify(e, f, p, DPI_GAVE_UP, guessed != 0);
}

static struct dpi_flow *
new_flow(struct dpi_engine *e, const struct onvm_flow_key *k, uint64_t now_ns)
{
	bool created;
	struct dpi_flow *f = onvm_ft_insert(&e->flows, k, now_ns, &created);
	struct dpi_ctx *ctx;

	if (f == NULL || !created)
		return f;
	f->state = DPI_DETECTING;
	onvm_rh_set_owner(&e->heap, NULL);
	ctx = onvm_rh_calloc(&e->heap, 1, sizeof(*ctx) + ndpi_detection_get_sizeof_ndpi_flow_struct());
	if (ctx == NULL) {
		/* Counted; the flow is tracked but not inspected. */
		touch(e, &e->t->no_memory, sizeof(e->t->no_memory));
		e->t->no_memory++;
		f->state = DPI_GAVE_UP;
		return f;
	}
	f->ctx_off = onvm_rh_off(&e->heap, ctx);
	return f;
}

void
dpi_engine_packet(struct dpi_engine *e, const struct rte_mbuf *m, uint64_t now_ns)
{
	struct dpi_totals *t = e->t;
	uint32_t len = rte_pktmbuf_pkt_len(m);
	struct onvm_pkt_info pi;
	enum onvm_parse_reason r = onvm_pkt_parse(m, &pi);
	struct onvm_flow_key k, ck;
	struct dpi_flow *f;

	touch(e, t, offsetof(struct dpi_totals, malformed) + sizeof(t->malformed));
	t->packets++;
	t->bytes += len;
	if (r == ONVM_PARSE_NOT_IPV4) {
		t->non_ip++;
		return;
	}
	if (r != ONVM_PARSE_OK) {
		t->malformed[r]++;
		return;
	}
	if (pi.fragment) {
		t->fragments++;
		return;
	}
	onvm_flow_key_from_info(&pi, &k);
	onvm_flow_key_canon(&k, &ck);
	f = onvm_ft_lookup(&e->flows, &ck);
	if (f == NULL) {
		f = new_flow(e, &ck, now_ns);
		if (f == NULL) {
			t->untracked++;
			return;
		}
	} else {
		onvm_ft_touch_value(&e->flows, f);
		onvm_ft_seen(&e->flows, f, now_ns);
	}
	f->packets++;
	f->bytes += len;
	if (f->state != DPI_DETECTING) {
		struct dpi_proto_stats *ps = &t->proto[proto_slot(f->master, f->app)];

		touch(e, ps, sizeof(*ps));
		ps->packets++;
		ps->bytes += len;
		return;
	}
	{
		struct dpi_ctx *ctx = onvm_rh_ptr(&e->heap, f->ctx_off);
		/* ip_len <= frame length (parser) and <= 65535: fits scratch. */
		const uint8_t *ip = rte_pktmbuf_read(m, pi.l2_len, pi.ip_len, e->scratch);
		struct ndpi_flow_struct *nf;
		ndpi_protocol p;
		uint32_t budget = pi.proto == IPPROTO_TCP ? e->cfg.max_pkts_tcp
							  : e->cfg.max_pkts_udp;

		if (ip == NULL)
			return; /* cannot happen: the parser checked the lengths */
		nf = enter_flow(e, ctx);
		p = ndpi_detection_process_packet(e->nd, nf, ip, pi.ip_len, now_ns / 1000000);
		onvm_rh_set_owner(&e->heap, NULL);
		if ((p.app_protocol != NDPI_PROTOCOL_UNKNOWN ||
		     p.master_protocol != NDPI_PROTOCOL_UNKNOWN) &&
		    !ndpi_extra_dissection_possible(e->nd, nf))
			classify(e, f, p, DPI_DETECTED, false);
		else if (f->packets >= budget)
			give_up(e, f);
	}
}

static void
evict(void *arg, const struct onvm_flow_key *k, void *value)
{
	struct dpi_engine *e = arg;
	struct dpi_flow *f = value;

	(void)k;
	if (f->state == DPI_DETECTING) {
		onvm_ft_touch_value(&e->flows, f);
		give_up(e, f);
	}
}

void
dpi_engine_expire(struct dpi_engine *e, uint64_t now_ns, uint32_t budget)
{
	onvm_ft_expire(&e->flows, now_ns, e->cfg.idle_ns, budget, evict, e);
}

void
dpi_engine_finish(struct dpi_engine *e)
{
	for (uint32_t i = 0; i < onvm_ft_capacity(&e->flows); i++) {
		struct dpi_flow *f = onvm_ft_slot_value(&e->flows, i);

		if (f != NULL && f->state == DPI_DETECTING) {
			onvm_ft_touch_value(&e->flows, f);
			give_up(e, f);
		}
	}
}

const char *
dpi_engine_proto_name(struct dpi_engine *e, uint16_t master, uint16_t app, char *buf, size_t len)
{
	ndpi_protocol p = {.master_protocol = master, .app_protocol = app};

	return ndpi_protocol2name(e->nd, p, buf, (u_int)len);
}

static const char *const state_names[] = {"", "detecting", "detected", "guessed"};

static int
write_export(FILE *fp, const void *arg)
{
	struct dpi_engine *e = (struct dpi_engine *)arg; /* nDPI's name lookups take it non-const */
	char name[64], s[ONVM_RULE_IPV4_STR_LEN], d[ONVM_RULE_IPV4_STR_LEN];
	const struct dpi_totals *t = e->t;
	bool first = true;

	fprintf(fp,
		"{\n  \"packets\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"non_ip\": %" PRIu64
		", \"fragments\": %" PRIu64 ", \"untracked\": %" PRIu64 ", \"no_memory\": %" PRIu64
		",\n  \"flows_classified\": %" PRIu64 ", \"flows_in_table\": %u,\n  \"malformed\": {",
		t->packets, t->bytes, t->non_ip, t->fragments, t->untracked, t->no_memory,
		t->flows_classified, onvm_ft_count(&e->flows));
	for (int r = ONVM_PARSE_TRUNC_L2; r < ONVM_PARSE_REASON_MAX; r++) {
		if (r == ONVM_PARSE_NOT_IPV4)
			continue;
		fprintf(fp, "%s\"%s\": %" PRIu64, first ? "" : ", ", onvm_parse_reason_str(r),
			t->malformed[r]);
		first = false;
	}
	fprintf(fp, "},\n  \"heap\": {\"used\": %" PRIu64 ", \"live_blocks\": %" PRIu64
		    ", \"failed\": %" PRIu64 "},\n  \"protocols\": {",
		onvm_rh_stats(&e->heap)->peak_used, onvm_rh_stats(&e->heap)->live_blocks,
		onvm_rh_stats(&e->heap)->failed);
	first = true;
	for (unsigned int i = 0; i < DPI_PROTO_SLOTS; i++) {
		const struct dpi_proto_stats *ps = &t->proto[i];

		if (ps->flows == 0 && ps->packets == 0)
			continue;
		fprintf(fp,
			"%s\n    \"%s\": {\"id\": %u, \"flows\": %" PRIu64 ", \"packets\": %" PRIu64
			", \"bytes\": %" PRIu64 "}",
			first ? "" : ",", ndpi_get_proto_name(e->nd, (u_int16_t)i), i, ps->flows,
			ps->packets, ps->bytes);
		first = false;
	}
	fprintf(fp, "\n  },\n  \"flows\": [");
	first = true;
	for (uint32_t i = 0; i < onvm_ft_capacity(&e->flows); i++) {
		const struct dpi_flow *f = onvm_ft_slot_value(&e->flows, i);
		const struct onvm_flow_key *k;

		if (f == NULL)
			continue;
		k = onvm_ft_key(&e->flows, f);
		fprintf(fp,
			"%s\n    {\"a\": \"%s\", \"b\": \"%s\", \"proto\": %u, \"aport\": %u, "
			"\"bport\": %u, \"protocol\": \"%s\", \"master\": %u, \"app\": %u, "
			"\"category\": \"%s\", \"state\": \"%s\", \"detect_pkts\": %u, "
			"\"packets\": %" PRIu64 ", \"bytes\": %" PRIu64 "}",
			first ? "" : ",", onvm_rule_ipv4_str(k->src_ip, s),
			onvm_rule_ipv4_str(k->dst_ip, d), k->proto, k->sport, k->dport,
			dpi_engine_proto_name(e, f->master, f->app, name, sizeof(name)), f->master,
			f->app,
			ndpi_category_get_name(e->nd, (ndpi_protocol_category_t)f->category),
			state_names[f->state <= DPI_GAVE_UP ? f->state : 0], f->detect_pkts,
			f->packets, f->bytes);
		first = false;
	}
	fprintf(fp, "\n  ]\n}\n");
	return ferror(fp) ? -1 : 0;
}

int
dpi_engine_export(struct dpi_engine *e, const char *path)
{
	return nf_write_file(path, write_export, e);
}
