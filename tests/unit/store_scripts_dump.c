/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * store_scripts_dump -- prints the store's scripts (common/onvm_store.h) for
 * tests/integration/test_store_scripts.py, which runs them on a real
 * redis-server: each as "== NAME" then its text; the WRITE without its
 * version check as "write_unchecked".
 */
#include <stdio.h>

#include "onvm_store.h"

int
main(void)
{
	for (int s = 0; s < ONVM_STORE_NSCRIPTS; s++)
		printf("== %s\n%s", onvm_store_script_name(s), onvm_store_script_text(s));
	printf("== write_unchecked\n%s", onvm_store_script_text_unchecked(ONVM_STORE_WRITE));
	return 0;
}
