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
 * fits in the input and the table's load limit; an early stop names a
 * reason; every key of the imported records is found, with its value;
 * exporting the table whole and importing that into a fresh table gives
 * the same count with nothing refused; and remove_if() of every other
 * key leaves exactly the rest findable.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "onvm_flow_table.h"

#include "fuzz_check.h"

static bool
odd_src(void *arg, const struct onvm_flow_key *k)
{
	(void)arg;
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
	vsize = vsizes[data[0] % 3];
	cap = (data[0] & 0x80) ? 64 : 16;
	limit = cap - cap / 4;
	rec = sizeof(struct onvm_ft_record) + vsize;
	len = size - 1;
	buf = malloc(len ? len : 1);
	CHECK(buf != NULL);
	memcpy(buf, data + 1, len);
	mem = table(&ft, cap, vsize);

	n = onvm_ft_import(&ft, buf, len, &err);
	CHECK(n <= len / rec);
	CHECK(onvm_ft_count(&ft) <= limit && onvm_ft_count(&ft) <= n);
	CHECK(err == ONVM_FT_IMPORT_OK ? (size_t)n * rec == len : (size_t)n * rec < len);
	CHECK(strcmp(onvm_ft_import_error_str(err), "unknown") != 0);
	/* each imported record's key is there; the last record of a key has
	 * its value */
	for (uint32_t i = 0; i < n; i++) {
		struct onvm_ft_record r;
		const uint8_t *v;

		memcpy(&r, buf + i * rec, sizeof(r));
		v = onvm_ft_lookup(&ft, &r.key);
		CHECK(v != NULL);
		bool later = false;

		for (uint32_t j = i + 1; j < n; j++) {
			struct onvm_ft_record q;

			memcpy(&q, buf + j * rec, sizeof(q));
			later |= memcmp(&q.key, &r.key, sizeof(r.key)) == 0;
		}
		if (!later)
			CHECK(memcmp(v, buf + i * rec + sizeof(r), vsize) == 0);
	}
	/* the whole table out and into a fresh one: the same flows */
	out = malloc(cap * rec);
	CHECK(out != NULL);
	elen = onvm_ft_export(&ft, NULL, NULL, &cursor, out, cap * rec, &nexp);
	CHECK(cursor == cap && nexp == onvm_ft_count(&ft) && elen == (size_t)nexp * rec);
	mem2 = table(&again, cap, vsize);
	CHECK(onvm_ft_import(&again, out, elen, &err) == nexp && err == ONVM_FT_IMPORT_OK);
	CHECK(onvm_ft_count(&again) == nexp);
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
