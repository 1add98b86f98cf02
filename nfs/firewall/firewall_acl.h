/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * firewall_acl.h -- the firewall's rules compiled into a DPDK rte_acl
 * context: the same answers as fw_match_linear(), in time that does not grow
 * with the number of rules.
 *
 * rte_acl returns, per category, the matching rule with the HIGHEST priority
 * (DPDK programmer's guide, "Packet Classification and Access Control"; equal
 * priorities give an undefined pick).  Rule i of n gets priority
 * FW_MAX_RULES - i, so the first matching rule in file order wins, and
 * userdata i + 1 (0 is rte_acl's "no match").  One category.  The key has a
 * sixth field, "has ports", that every rule with a port field requires: a
 * non-first fragment (no ports) then skips exactly those rules.
 *
 * The context lives in the node's EAL heap, shared by every process of the
 * node, under a name that must be unique in the node: an NF and its standby
 * each build one, so the name carries the pid.  rte_acl_create() hands back
 * an EXISTING context of the same name instead of a new one, so a name left
 * behind by a dead process (pid reuse) is freed first.  Needs a running EAL.
 */
#ifndef FIREWALL_ACL_H
#define FIREWALL_ACL_H

#include <stddef.h>
#include <stdint.h>

#include "firewall_core.h"

#ifdef __cplusplus
extern "C" {
#endif

struct fw_acl;

/* Build a context named `name` (1..27 characters) for c's rules.  NULL with
 * a sentence in err on failure.  A config without rules needs no context:
 * the result then answers FW_NO_MATCH for everything. */
struct fw_acl *fw_acl_build(const struct fw_config *c, const char *name, char *err, size_t errlen);

/* out[i] = index of the first rule matching t[i], or FW_NO_MATCH. */
void fw_acl_classify(const struct fw_acl *a, const struct fw_tuple *t, uint32_t n, int32_t *out);

const char *fw_acl_name(const struct fw_acl *a);
void fw_acl_free(struct fw_acl *a);

/* Free the context of that name if one exists (one a dead process left).
 * Returns 1 if one was freed, 0 if there was none. */
int fw_acl_free_stale(const char *name);

#ifdef __cplusplus
}
#endif
#endif /* FIREWALL_ACL_H */
