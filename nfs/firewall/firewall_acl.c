/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/* The firewall's rules as an rte_acl context: see firewall_acl.h. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_acl.h>
#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_errno.h>
#include <rte_memory.h>

#include "firewall_acl.h"

/* The search key, in network byte order as rte_acl_classify() wants it.
 * rte_acl reads the first field as one byte and every further input as a
 * group of 4 bytes: proto | src | dst | sport,dport | has_ports. */
struct fw_acl_key {
	uint8_t proto;
	uint8_t pad[3];
	uint32_t src;
	uint32_t dst;
	uint16_t sport;
	uint16_t dport;
	uint32_t has_ports;
};

enum {
	F_PROTO,
	F_SRC,
	F_DST,
	F_SPORT,
	F_DPORT,
	F_HAS_PORTS,
	F_NUM,
};

static const struct rte_acl_field_def key_defs[F_NUM] = {
    {.type = RTE_ACL_FIELD_TYPE_BITMASK,
     .size = sizeof(uint8_t),
     .field_index = F_PROTO,
     .input_index = 0,
     .offset = offsetof(struct fw_acl_key, proto)},
    {.type = RTE_ACL_FIELD_TYPE_MASK,
     .size = sizeof(uint32_t),
     .field_index = F_SRC,
     .input_index = 1,
     .offset = offsetof(struct fw_acl_key, src)},
    {.type = RTE_ACL_FIELD_TYPE_MASK,
     .size = sizeof(uint32_t),
     .field_index = F_DST,
     .input_index = 2,
     .offset = offsetof(struct fw_acl_key, dst)},
    {.type = RTE_ACL_FIELD_TYPE_RANGE,
     .size = sizeof(uint16_t),
     .field_index = F_SPORT,
     .input_index = 3,
     .offset = offsetof(struct fw_acl_key, sport)},
    {.type = RTE_ACL_FIELD_TYPE_RANGE,
     .size = sizeof(uint16_t),
     .field_index = F_DPORT,
     .input_index = 3,
     .offset = offsetof(struct fw_acl_key, dport)},
    {.type = RTE_ACL_FIELD_TYPE_BITMASK,
     .size = sizeof(uint32_t),
     .field_index = F_HAS_PORTS,
     .input_index = 4,
     .offset = offsetof(struct fw_acl_key, has_ports)},
};

RTE_ACL_RULE_DEF(fw_acl_rule, F_NUM);

/* Keys classified per rte_acl_classify() call. */
#define FW_ACL_BURST 64

struct fw_acl {
	struct rte_acl_ctx *ctx; /* NULL: no rules */
	char name[RTE_ACL_NAMESIZE];
};

static void
rule_to_acl(const struct fw_rule *r, uint32_t i, struct fw_acl_rule *a)
{
	memset(a, 0, sizeof(*a));
	a->data.category_mask = 1;
	a->data.priority = (int32_t)(FW_MAX_RULES - i); /* earlier rules win */
	a->data.userdata = i + 1;			/* 0 means "no match" */
	if (r->has_proto) {
		a->field[F_PROTO].value.u8 = r->proto;
		a->field[F_PROTO].mask_range.u8 = 0xff;
	}
	a->field[F_SRC].value.u32 = r->src;
	a->field[F_SRC].mask_range.u32 = r->src_len;
	a->field[F_DST].value.u32 = r->dst;
	a->field[F_DST].mask_range.u32 = r->dst_len;
	a->field[F_SPORT].value.u16 = r->sport_lo;
	a->field[F_SPORT].mask_range.u16 = r->sport_hi;
	a->field[F_DPORT].value.u16 = r->dport_lo;
	a->field[F_DPORT].mask_range.u16 = r->dport_hi;
	if (r->has_sport || r->has_dport) {
		a->field[F_HAS_PORTS].value.u32 = 1;
		a->field[F_HAS_PORTS].mask_range.u32 = 1;
	}
}

int
fw_acl_free_stale(const char *name)
{
	struct rte_acl_ctx *old = rte_acl_find_existing(name);

	if (old == NULL)
		return 0;
	rte_acl_free(old);
	return 1;
}

struct fw_acl *
fw_acl_build(const struct fw_config *c, const char *name, char *err, size_t errlen)
{
	struct rte_acl_param prm = {
	    .name = name,
	    .socket_id = SOCKET_ID_ANY,
	    .rule_size = RTE_ACL_RULE_SZ(F_NUM),
	    .max_rule_num = c->n_rules,
	};
	struct rte_acl_config cfg = {.num_categories = 1, .num_fields = F_NUM};
	struct fw_acl_rule *rules = NULL;
	struct fw_acl *a;
	int ret;

	/* rte_acl_create() names its memory "ACL_<name>" in 32 bytes. */
	if (name == NULL || strlen(name) == 0 || strlen(name) > RTE_ACL_NAMESIZE - 5) {
		snprintf(err, errlen, "ACL context name must be 1..%d characters",
			 RTE_ACL_NAMESIZE - 5);
		return NULL;
	}
	a = calloc(1, sizeof(*a));
	if (a == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	snprintf(a->name, sizeof(a->name), "%s", name);
	if (c->n_rules == 0)
		return a;
	fw_acl_free_stale(name);
	memcpy(cfg.defs, key_defs, sizeof(key_defs));
	a->ctx = rte_acl_create(&prm);
	if (a->ctx == NULL) {
		snprintf(err, errlen, "rte_acl_create(%s): %s", name, rte_strerror(rte_errno));
		goto fail;
	}
	rules = calloc(c->n_rules, sizeof(*rules));
	if (rules == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	for (uint32_t i = 0; i < c->n_rules; i++)
		rule_to_acl(&c->rules[i], i, &rules[i]);
	ret = rte_acl_add_rules(a->ctx, (const struct rte_acl_rule *)rules, c->n_rules);
	if (ret == 0)
		ret = rte_acl_build(a->ctx, &cfg);
	free(rules);
	if (ret != 0) {
		snprintf(err, errlen, "rte_acl_build(%s, %u rules): %s", name, c->n_rules,
			 strerror(-ret));
		goto fail;
	}
	return a;
fail:
	fw_acl_free(a);
	return NULL;
}

void
fw_acl_classify(const struct fw_acl *a, const struct fw_tuple *t, uint32_t n, int32_t *out)
{
	struct fw_acl_key keys[FW_ACL_BURST];
	const uint8_t *data[FW_ACL_BURST];
	uint32_t res[FW_ACL_BURST];

	if (a->ctx == NULL) {
		for (uint32_t i = 0; i < n; i++)
			out[i] = FW_NO_MATCH;
		return;
	}
	for (uint32_t done = 0; done < n;) {
		uint32_t k = RTE_MIN(n - done, (uint32_t)FW_ACL_BURST);

		for (uint32_t i = 0; i < k; i++) {
			const struct fw_tuple *x = &t[done + i];
			struct fw_acl_key *key = &keys[i];

			memset(key, 0, sizeof(*key));
			key->proto = x->proto;
			key->src = rte_cpu_to_be_32(x->src);
			key->dst = rte_cpu_to_be_32(x->dst);
			if (x->has_ports) {
				key->sport = rte_cpu_to_be_16(x->sport);
				key->dport = rte_cpu_to_be_16(x->dport);
				key->has_ports = rte_cpu_to_be_32(1);
			}
			data[i] = (const uint8_t *)key;
		}
		/* Arguments are valid by construction: it cannot fail. */
		rte_acl_classify(a->ctx, data, res, k, 1);
		for (uint32_t i = 0; i < k; i++)
			out[done + i] = res[i] == 0 ? FW_NO_MATCH : (int32_t)(res[i] - 1);
		done += k;
	}
}

const char *
fw_acl_name(const struct fw_acl *a)
{
	return a->name;
}

void
fw_acl_free(struct fw_acl *a)
{
	if (a == NULL)
		return;
	rte_acl_free(a->ctx);
	free(a);
}
