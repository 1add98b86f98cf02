/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/* rsync_auth_priv.h -- what rsync_wire.c calls of rsync_auth.c. */
#ifndef RSYNC_AUTH_PRIV_H
#define RSYNC_AUTH_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rsync_wire.h"

uint8_t rsync_auth_key_id(const struct rsync_auth *a);

/* HMAC-SHA256 of the two pieces (header, payload) into `mac`
 * (RSYNC_HMAC_LEN bytes).  0, or -1 if OpenSSL failed. */
int rsync_auth_sign(struct rsync_auth *a, const uint8_t *p1, size_t n1, const uint8_t *p2,
		    size_t n2, uint8_t *mac);

/* Whether `mac` is the HMAC of the two pieces (constant-time compare). */
bool rsync_auth_check(struct rsync_auth *a, const uint8_t *p1, size_t n1, const uint8_t *p2,
		      size_t n2, const uint8_t *mac);

#endif /* RSYNC_AUTH_PRIV_H */
