/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * fuzz_ft_import.c -- libFuzzer target for onvm_ft_import(): flow-table
 * records that come from another instance or node when flows move
 * (libnf/include/onvm_flow_table.h, docs/design/elastic.md).
 *
 * The first input byte picks the destination's value size (8, 16 or 24
 * bytes) and capacity (16 or 64 slots); the rest is the records, in an
 * exact-size heap buffer, so ASan sees any read past them.
 *
 * Checked (abort() on violation): the records imported are at most what
 * fits in the input, and the table holds exactly their distinct keys; an
 * early stop leaves input unread; every key of the imported records is
 * found, with the value and times of its last record (times put back on
 * the importer's clock, an age beyond it at 0); exporting the table whole
 * and importing that into a fresh table with a clock 5 s ahead gives the
 * same flows, values and ages; and remove_if() of the odd keys leaves
 * exactly the even ones.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "onvm_flow_table.h"

#include "fuzz_check.h"

#define NOW   UINT64_C(1000000000000) /* the importer's clock: 1000 s */
#define AHEAD UINT64_C(5000000000)    /* the second importer's: 5 s ahead */

static bool
odd_src(void *arg, const struct onvm_flow_key *k, uint32_t route)
{
	(void)arg;
	(void)route;
	return (k->src_ip & 1) != 0;
}

static void *
table(struct onvm_ft *ft, uint32_t cap, uint32_t vsize)
{
	size_t len = onvm_ft_mem_size(cap, vsize);
	void *mem = aligned_alloc(64, (len + 63) & ~(size_t)63);
	char err[128];

	CHECK(mem != NULL);
	memset(mem, 0, len);
	CHECK(onvm_ft_open(ft, NULL, mem, len, cap, vsize, err, sizeof(err)) == 0);
	return mem;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t vsizes[] = {8, 16, 24};
	struct onvm_ft ft, again;
	enum onvm_ft_import_error err;
	uint32_t vsize, cap, n, limit, cursor = 0, nexp;
	size_t rec, len, elen;
	uint8_t *buf, *out;
	void *mem, *mem2;

	if (size < 1)
		return 0;
	/* (NOW: the importer's clock; ages beyond it land at 0) */
	vsize = vsizes[data[0] % 3];
	cap = (data[0] & 0x80) ? 64 : 16;
	limit = cap - cap / 4;
	rec = sizeof(struct onvm_ft_record) + vsize;
	len = size - 1;
	buf = malloc(len ? len : 1);
	CHECK(buf != NULL);
	memcpy(buf, data + 1, len);
	mem = table(&ft, cap, vsize);

	n = onvm_ft_import(&ft, buf, len, NOW, &err);
	CHECK(rec == onvm_ft_record_size(&ft));
	CHECK(n <= len / rec);
	CHECK(err == ONVM_FT_IMPORT_OK ? (size_t)n * rec == len : (size_t)n * rec < len);
	/* each imported record's key is there; the last record of a key has
	 * its value and times; the table holds the distinct keys, no more */
	uint32_t distinct = 0;

	for (uint32_t i = 0; i < n; i++) {
		struct onvm_ft_record r;
		const uint8_t *v;
		bool later = false;

		memcpy(&r, buf + i * rec, sizeof(r));
		v = onvm_ft_lookup(&ft, &r.key);
		CHECK(v != NULL);
		for (uint32_t j = i + 1; j < n; j++) {
			struct onvm_ft_record q;

			memcpy(&q, buf + j * rec, sizeof(q));
			later |= memcmp(&q.key, &r.key, sizeof(r.key)) == 0;
		}
		if (later)
			continue;
		distinct++;
		CHECK(memcmp(v, buf + i * rec + sizeof(r), vsize) == 0);
		CHECK(onvm_ft_last_seen(&ft, v) == (r.idle_ns <= NOW ? NOW - r.idle_ns : 0));
		CHECK(onvm_ft_created(&ft, v) == (r.age_ns <= NOW ? NOW - r.age_ns : 0));
		CHECK(((const struct onvm_ft_entry *)v - 1)->route == r.route);
	}
	CHECK(onvm_ft_count(&ft) == distinct && distinct <= limit);
	/* the whole table out and into a fresh one, 5 s ahead: the same
	 * flows, values and ages */
	out = malloc(cap * rec);
	CHECK(out != NULL);
	elen = onvm_ft_export(&ft, NULL, NULL, NOW, &cursor, out, cap * rec, &nexp);
	CHECK(cursor == cap && nexp == onvm_ft_count(&ft) && elen == (size_t)nexp * rec);
	mem2 = table(&again, cap, vsize);
	CHECK(onvm_ft_import(&again, out, elen, NOW + AHEAD, &err) == nexp &&
	      err == ONVM_FT_IMPORT_OK);
	CHECK(onvm_ft_count(&again) == nexp);
	for (uint32_t i = 0; i < nexp; i++) {
		struct onvm_ft_record r;
		const uint8_t *v, *w;

		memcpy(&r, out + i * rec, sizeof(r));
		v = onvm_ft_lookup(&ft, &r.key);
		w = onvm_ft_lookup(&again, &r.key);
		CHECK(v != NULL && w != NULL && memcmp(v, w, vsize) == 0);
		CHECK(r.route == ((const struct onvm_ft_entry *)v - 1)->route &&
		      r.route == ((const struct onvm_ft_entry *)w - 1)->route);
		CHECK(onvm_ft_last_seen(&again, w) == onvm_ft_last_seen(&ft, v) + AHEAD);
		CHECK(onvm_ft_created(&again, w) == onvm_ft_created(&ft, v) + AHEAD);
	}
	/* half of them freed: the other half still found */
	{
		uint32_t odd = 0, removed;

		for (uint32_t i = 0; i < nexp; i++) {
			struct onvm_ft_record r;

			memcpy(&r, out + i * rec, sizeof(r));
			odd += r.key.src_ip & 1;
		}
		removed = onvm_ft_remove_if(&again, odd_src, NULL);
		CHECK(removed == odd && onvm_ft_count(&again) == nexp - odd);
		for (uint32_t i = 0; i < nexp; i++) {
			struct onvm_ft_record r;

			memcpy(&r, out + i * rec, sizeof(r));
			CHECK((onvm_ft_lookup(&again, &r.key) != NULL) == !(r.key.src_ip & 1));
		}
	}
	free(out);
	free(mem2);
	free(mem);
	free(buf);
	return 0;
}
