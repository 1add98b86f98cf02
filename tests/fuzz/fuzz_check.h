/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/* fuzz_check.h -- the fuzz targets' invariant check: a violated invariant is
 * a finding, so it aborts with the condition, and libFuzzer saves the input. */
#ifndef FUZZ_CHECK_H
#define FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                                          \
	do {                                                                                 \
		if (!(cond)) {                                                               \
			fprintf(stderr, "%s:%d: invariant violated: %s\n", __FILE__,         \
				__LINE__, #cond);                                            \
			abort();                                                             \
		}                                                                            \
	} while (0)

#endif /* FUZZ_CHECK_H */
