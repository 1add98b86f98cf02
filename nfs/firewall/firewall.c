/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * firewall -- ordered allow/deny rules on IPv4 prefixes, protocols and port
 * ranges; allowed packets go on (NEXT), denied ones are dropped.
 *
 * The rules file (-c, JSON; README.md) is parsed by firewall_core.c and
 * compiled into a DPDK rte_acl context (firewall_acl.c), which classifies
 * each burst in one call.  Matching is stateless; the only state is the
 * counters (per rule, per policy, per malformed reason) in the libnf state
 * region "fw_counters", so that after a failover the standby carries on
 * counting exactly where the packets that left stopped.
 *
 * The rte_acl context lives in the node's shared EAL heap.  Active and
 * standby each build their own, named after their pid.  The serving
 * process's context name is kept in the state region; a promoted standby
 * frees the one its dead predecessor left (on its first tick), and every
 * process frees its own on a clean exit, so failovers leak nothing.
 *
 * Output: a summary every -p seconds on stdout, and with -e FILE a JSON
 * export on exit ("%i" in FILE becomes the instance id).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "onvm_nf_output.h"
#include "onvm_nflib.h"
#include "onvm_pkt_helper.h"

#include "firewall_acl.h"
#include "firewall_core.h"

struct firewall {
	struct nf_ctx *nf;
	struct fw_config cfg;
	struct fw fw;
	struct fw_acl *acl;
	const char *rules_path;
	const char *export_path;
	uint32_t print_s;
	uint64_t last_print_ns;
	bool serving;		      /* state claimed: this process is the active */
	char stale_acl[FW_NAME_SIZE]; /* predecessor's context, freed on the next tick */
};

static int export_failed;

static void
report(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, fmt, a, b);
	fputc('\n', stderr);
	fflush(stderr);
}

/*
 * Become the process that serves: make sure the counters belong to this rule
 * set, and record this process's context name.  Runs at start-up for the
 * active, and on the first burst or tick after a standby's promotion (the
 * state is the committed one by then).
 */
static void
firewall_claim(struct firewall *f)
{
	char err[256];
	int r = fw_state_open(&f->fw, &f->cfg, nf_state(f->nf), f->fw.st,
			      fw_state_size(f->cfg.n_rules), true, err, sizeof(err));

	if (r == -ESTALE) {
		/* Only when the rules file changed after this standby checked it
		 * (the active formatted the region later).  Counting on would
		 * credit packets to the wrong rules. */
		report("firewall: %s: %s; counters reset", f->rules_path, err);
		fw_state_format(&f->fw);
	}
	fw_state_set_owner(&f->fw, fw_acl_name(f->acl), f->stale_acl, sizeof(f->stale_acl));
	if (strcmp(f->stale_acl, fw_acl_name(f->acl)) == 0)
		f->stale_acl[0] = '\0';
	f->serving = true;
}

static void
firewall_batch(struct rte_mbuf **pkts, uint16_t n, struct nf_ctx *nf)
{
	struct firewall *f = nf_user(nf);
	struct fw_pkt p[ONVM_BURST];
	struct fw_tuple t[ONVM_BURST];
	int32_t match[ONVM_BURST];
	uint16_t idx[ONVM_BURST];

	if (unlikely(!f->serving))
		firewall_claim(f);
	for (uint16_t base = 0; base < n; base += ONVM_BURST) {
		uint16_t k = RTE_MIN(n - base, ONVM_BURST), nip = 0;

		for (uint16_t i = 0; i < k; i++) {
			fw_pkt_parse(pkts[base + i], &p[i]);
			match[i] = FW_NO_MATCH;
			if (p[i].kind == FW_KIND_IPV4) {
				t[nip] = p[i].t;
				idx[nip++] = i;
			}
		}
		if (nip > 0) {
			int32_t m[ONVM_BURST];

			fw_acl_classify(f->acl, t, nip, m);
			for (uint16_t j = 0; j < nip; j++)
				match[idx[j]] = m[j];
		}
		for (uint16_t i = 0; i < k; i++)
			if (fw_account(&f->fw, &p[i], match[i]) == FW_DENY)
				nf_pkt_drop(nf_pkt_meta(pkts[base + i]));
	}
}

static void
print_summary(const struct firewall *f)
{
	const struct fw_state_hdr *st = f->fw.st;
	struct fw_counter allowed, denied;

	fw_totals(&f->fw, &allowed, &denied);
	printf("%s: %" PRIu64 " pkts: allowed %" PRIu64 ", denied %" PRIu64 " (default %" PRIu64
	       ", non-ip %" PRIu64 ", malformed %" PRIu64 ")",
	       nf_name(f->nf), allowed.packets + denied.packets, allowed.packets, denied.packets,
	       st->deflt.packets, st->non_ip.packets, st->malformed.packets);
	for (uint32_t i = 0; i < f->cfg.n_rules && i < 16; i++)
		printf("%s%s %" PRIu64, i == 0 ? "; rules: " : ", ", f->cfg.rules[i].name,
		       st->rule[i].packets);
	printf("%s\n", f->cfg.n_rules > 16 ? ", ..." : "");
	fflush(stdout);
}

/* The dead predecessor's context: nobody uses it any more.  Freed from the
 * tick (or at exit), off the packet path. */
static void
free_stale_acl(struct firewall *f)
{
	if (f->stale_acl[0] == '\0')
		return;
	if (fw_acl_free_stale(f->stale_acl) > 0) {
		printf("%s: freed ACL context %s of the previous process\n", nf_name(f->nf),
		       f->stale_acl);
		fflush(stdout);
	}
	f->stale_acl[0] = '\0';
}

static void
firewall_tick(struct nf_ctx *nf, uint64_t now_ns)
{
	struct firewall *f = nf_user(nf);

	if (unlikely(!f->serving))
		firewall_claim(f);
	free_stale_acl(f);
	if (f->print_s == 0 || now_ns - f->last_print_ns < f->print_s * 1000000000ULL)
		return;
	f->last_print_ns = now_ns;
	print_summary(f);
}

/* After the last packet (nf_fini drains the queue first), state still mapped. */
static void
firewall_fini(struct nf_ctx *nf)
{
	struct firewall *f = nf_user(nf);

	if (!f->serving)
		firewall_claim(f);
	free_stale_acl(f);
	print_summary(f);
	if (f->export_path != NULL &&
	    fw_export_file(&f->fw, f->export_path, f->rules_path, "rte_acl") < 0) {
		fprintf(stderr, "firewall: cannot write %s\n", f->export_path);
		export_failed = 1;
	}
	fw_acl_free(f->acl);
	f->acl = NULL;
}

static void
usage(const char *prog)
{
	fprintf(stderr, "usage: %s [EAL] -- -r SVC -- -c RULES.json [-e FILE] [-p SECS]\n", prog);
}

int
main(int argc, char **argv)
{
	static char export_buf[4096];
	static struct firewall f = {.print_s = 5};
	struct nf_ops ops = {
	    .batch = firewall_batch,
	    .tick = firewall_tick,
	    .tick_ms = 100,
	    .fini = firewall_fini,
	};
	char err[512], acl_name[FW_NAME_SIZE];
	struct nf_ctx *nf;
	bool ran = false;
	int n, opt, ret = 0;

	n = nf_init(argc, argv, "firewall", &nf);
	if (n < 0)
		return 1;
	argc -= n;
	argv += n;
	while ((opt = getopt(argc, argv, "c:e:p:h")) != -1) {
		char *end;

		switch (opt) {
		case 'c':
			f.rules_path = optarg;
			break;
		case 'e':
			f.export_path = optarg;
			break;
		case 'p':
			errno = 0;
			f.print_s = strtoul(optarg, &end, 10);
			if (*end != '\0' || end == optarg || errno != 0 || f.print_s > 86400) {
				fprintf(stderr, "firewall: -p wants seconds (0..86400)\n");
				ret = 2;
				goto out;
			}
			break;
		default:
			usage(argv[0]);
			ret = 2;
			goto out;
		}
	}
	if (f.rules_path == NULL || optind != argc) {
		usage(argv[0]);
		ret = 2;
		goto out;
	}
	if (f.export_path != NULL && nf_expand_instance(f.export_path, nf_instance_id(nf), export_buf,
						     sizeof(export_buf)) < 0) {
		fprintf(stderr, "firewall: -e path too long\n");
		ret = 2;
		goto out;
	}
	if (f.export_path != NULL)
		f.export_path = export_buf;
	if (fw_config_load(&f.cfg, f.rules_path, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		ret = 1;
		goto out;
	}
	f.nf = nf;
	if (nf_state_declare(nf, FW_STATE_REGION, fw_state_size(f.cfg.n_rules), 64) < 0 ||
	    nf_state_map(nf) < 0) {
		fprintf(stderr, "firewall: no state memory for %u rules\n", f.cfg.n_rules);
		ret = 1;
		goto out;
	}
	f.fw.st = nf_state_ptr(nf, FW_STATE_REGION);
	/* A standby checks the counters it may take over now, when it can
	 * still refuse to start; the region may not be formatted yet. */
	ret = fw_state_open(&f.fw, &f.cfg, nf_state(nf), f.fw.st, fw_state_size(f.cfg.n_rules),
			    !nf_is_standby(nf), err, sizeof(err));
	if (ret == -ESTALE || ret == -ENOSPC) {
		fprintf(stderr, "firewall: %s: %s\n", f.rules_path, err);
		ret = 1;
		goto out;
	}
	ret = 0;
	/* Unique in the node: active and standby of one instance both build one. */
	snprintf(acl_name, sizeof(acl_name), "fw%u.%u.%d", nf_service_id(nf), nf_instance_id(nf),
		 (int)getpid());
	f.acl = fw_acl_build(&f.cfg, acl_name, err, sizeof(err));
	if (f.acl == NULL) {
		fprintf(stderr, "firewall: %s: %s\n", f.rules_path, err);
		ret = 1;
		goto out;
	}
	if (!nf_is_standby(nf))
		firewall_claim(&f);
	printf("%s: %u rules from %s (default %s, non_ip %s, malformed %s)%s\n", nf_name(nf),
	       f.cfg.n_rules, f.rules_path, fw_action_str(f.cfg.def), fw_action_str(f.cfg.non_ip),
	       fw_action_str(f.cfg.malformed), nf_is_standby(nf) ? ", standby" : "");
	fflush(stdout);
	ran = true;
	nf_run(nf, &ops, &f);
out:
	/* fini (export, free the context) runs inside nf_fini() for the process
	 * that served; a standby that never took over frees its context here,
	 * while the EAL is still up. */
	if (f.acl != NULL && (!ran || nf_is_standby(nf))) {
		fw_acl_free(f.acl);
		f.acl = NULL;
	}
	nf_fini(nf);
	fw_config_free(&f.cfg);
	return ret != 0 ? ret : export_failed;
}
