/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * ftc_parts.c -- an update cut into parts that fit a frame (ftc_parts.h).
 * One walk deals the records into parts; ftc_parts_count() runs it to the
 * end, ftc_part_build() writes what falls in the part asked for.
 */
#include <string.h>

#include "ftc_parts.h"
#include "onvm_wire.h"

/* Walk the update; with `out`, write part `want`'s records there.  Returns
 * the parts counted (0: refused), and part `want`'s length in *got. */
static unsigned int
deal(const uint8_t *data, uint32_t len, uint32_t budget, unsigned int want, uint8_t *out,
     uint32_t *got)
{
	const struct ftc_log l = {.part = 0, .parts = 1, .len = len, .seq = 1, .data = data};
	unsigned int part = 0;
	uint32_t pos = 0, fill = 0;
	struct ftc_record r;

	*got = 0;
	if (len == 0 || budget < FTC_PART_BUDGET_MIN || budget > FTC_RECORD_MAX)
		return 0;
	while (pos < len) {
		uint32_t off, rem;

		if (len - pos < FTC_RECORD_HEAD_LEN || !ftc_record_next(&l, &pos, &r) ||
		    r.len == 0 || pos > len)
			return 0;
		off = r.offset;
		rem = r.len;
		while (rem > 0) {
			uint32_t take;

			if (budget - fill < FTC_PART_BUDGET_MIN) {
				part++;
				fill = 0;
			}
			take = budget - fill - FTC_RECORD_HEAD_LEN;
			if (take > rem)
				take = rem;
			if (out != NULL && part == want) {
				uint8_t *w = out + fill;

				onvm_put_be16(w, r.region);
				onvm_put_be16(w + 2, (uint16_t)take);
				onvm_put_be32(w + 4, off);
				memcpy(w + FTC_RECORD_HEAD_LEN, r.bytes + (r.len - rem), take);
				*got = fill + FTC_RECORD_HEAD_LEN + take;
			}
			fill += FTC_RECORD_HEAD_LEN + take;
			off += take;
			rem -= take;
		}
	}
	return part + 1 > 255 ? 0 : part + 1;
}

unsigned int
ftc_parts_count(const uint8_t *data, uint32_t len, uint32_t budget)
{
	uint32_t got;

	return deal(data, len, budget, 0, NULL, &got);
}

int
ftc_part_build(const uint8_t *data, uint32_t len, uint32_t budget, unsigned int k, uint8_t *out)
{
	uint32_t got;
	unsigned int n = deal(data, len, budget, k, out, &got);

	return n == 0 || k >= n ? -1 : (int)got;
}
