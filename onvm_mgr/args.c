/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * args.c -- onvm_mgr's own options (after EAL's, past the "--").
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mgr.h"

void
mgr_args_usage(const char *prog)
{
	printf("Usage: %s [EAL options] -- --config FILE [options]\n"
	       "       %s --config FILE [options]        (EAL options from the config)\n"
	       "\n"
	       "REINFORCE-NFV node manager: owns the node's ports, packet pool and NF rings,\n"
	       "launches the NFs of its config and routes packets along service chains.\n"
	       "\n"
	       "Options:\n"
	       "  -f, --config FILE     node configuration (JSON); see docs/operator-guide.md\n"
	       "  -c, --check           validate the configuration and exit (no EAL, no ports)\n"
	       "  -p, --nf-path DIR     look up NF binaries named without a '/' in DIR first\n"
	       "  -s, --stats-ms MS     console statistics period (0: off; overrides config)\n"
	       "  -q, --quiet           no periodic console statistics\n"
	       "  -h, --help            this text\n"
	       "  -V, --version         print the version\n"
	       "\n"
	       "The manager always adds --no-pci unless an allow-list (-a) is given.\n"
	       "Telemetry: dpdk-telemetry.py -f PREFIX, commands under /onvm/.\n"
	       "Capture:   dpdk-dumpcap --file-prefix PREFIX -i PORT.\n",
	       prog, prog);
}

int
mgr_args_parse(int argc, char **argv, char **config_path)
{
	static const struct option longopts[] = {
		{"config", required_argument, NULL, 'f'},
		{"check", no_argument, NULL, 'c'},
		{"nf-path", required_argument, NULL, 'p'},
		{"stats-ms", required_argument, NULL, 's'},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "f:cp:s:qhV", longopts, NULL)) != -1) {
		switch (opt) {
		case 'f':
			*config_path = optarg;
			break;
		case 'c':
			mgr.check_only = true;
			break;
		case 'p':
			snprintf(mgr.nf_path, sizeof(mgr.nf_path), "%s", optarg);
			break;
		case 's': {
			char *end;
			long v = strtol(optarg, &end, 10);

			if (*end != '\0' || v < 0 || v > 3600000) {
				fprintf(stderr, "onvm_mgr: --stats-ms: '%s' is not 0..3600000\n",
					optarg);
				return -1;
			}
			mgr.stats_ms_override = v;
			break;
		}
		case 'q':
			mgr.quiet = true;
			break;
		case 'h':
			mgr_args_usage(argv[0]);
			return 1;
		case 'V':
			printf("onvm_mgr %s\n", ONVM_VERSION);
			return 1;
		default:
			fprintf(stderr, "Try '%s --help'.\n", argv[0]);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "onvm_mgr: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (*config_path == NULL) {
		fprintf(stderr, "onvm_mgr: --config FILE is required (try --help)\n");
		return -1;
	}
	return 0;
}
