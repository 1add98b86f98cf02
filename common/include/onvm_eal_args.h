/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * onvm_eal_args.h -- for code that builds an EAL argument vector (the
 * manager's, libnf's): does the caller's vector already give an option, so
 * that the default must not be added?
 */
#ifndef ONVM_EAL_ARGS_H
#define ONVM_EAL_ARGS_H

#include <stdbool.h>
#include <string.h>

/* True if one of argv[0 .. argc) starts with one of `prefixes` (NULL-ended),
 * e.g. {"-l", "--lcores", "-c", NULL}. */
static inline bool
onvm_eal_has_option(int argc, char *const *argv, const char *const *prefixes)
{
	for (int i = 0; i < argc; i++)
		for (const char *const *p = prefixes; *p != NULL; p++)
			if (strncmp(argv[i], *p, strlen(*p)) == 0)
				return true;
	return false;
}

#endif /* ONVM_EAL_ARGS_H */
