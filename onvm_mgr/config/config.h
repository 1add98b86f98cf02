/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * config.h -- the node's JSON configuration, parsed and validated.
 *
 * Loading is all-or-nothing: a config either passes every check and comes
 * back as a plain struct, or the first problem comes back as one message of
 * the form "FILE:LINE:COL: FIELD: what is wrong", and nothing has been
 * touched.  No DPDK here, so the parser is unit-tested without an EAL.
 * The schema, with every default, is in docs/operator-guide.md.
 *
 * The loader's files (meson: mgr_config_sources):
 *   config.c         this API: defaults, load from a file or from memory,
 *                    free, name look-ups; runs the section parsers in order
 *   config_walk.c    the walker and field helpers every section reads JSON
 *                    with; the "FILE:LINE:COL" errors (config_walk.h, private)
 *   config_node.c    "node", the tunables ("pool", "rings", "stats", "idle",
 *                    "nf_defaults", "startup", "state") and "units"
 *   config_ports.c   "ports", and port references by name or index
 *   config_nfs.c     "nfs": NF binaries, services, instances, resiliency
 *   config_chains.c  "chains" and "flow_rules"
 *   config_ftc.c     a chain's "ftc" object: its node's place in an FTC
 *                    chain, the links and tunables
 *   config_bfd.c     "bfd": BFD sessions, timers, authentication
 *   config_remote.c  "remote": this node's role in protected chains, links,
 *                    peers, keys, the RSync and logger tunables
 *   config_walk.h    what the section parsers share (private)
 *   config.h         this API
 *   (CPU lists are common/onvm_cpuset.c's: onvm_cpulist_parse/format; what
 *   a flow rule matches on, prefixes, port ranges and protocols, is read by
 *   common/onvm_rule.c, the parser the NFs' rules use too)
 */
#ifndef MGR_CONFIG_H
#define MGR_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sched.h>

#include "onvm_cpuset.h"
#include "onvm_store.h"

#define MGR_CFG_NAME_LEN 32
#define MGR_CFG_DEV_LEN 512
#define MGR_CFG_MAX_PORTS 16
#define MGR_CFG_MAX_NFS 32
#define MGR_CFG_MAX_CHAINS 32
#define MGR_CFG_MAX_CHAIN_LEN 8
#define MGR_CFG_MAX_RULES 256
#define MGR_CFG_MAX_ARGS 32
#define MGR_CFG_MAX_SERVICE 63
#define MGR_CFG_MAX_INSTANCES 8
#define MGR_CFG_MAX_NF_SLOTS 64 /* == ONVM_MAX_NFS */
#define MGR_CFG_ERR_LEN 512
#define MGR_CFG_MAX_BFD 32	  /* == BFD_NODE_MAX_SESSIONS */
#define MGR_CFG_BFD_KEY_MAX 20	  /* == BFD_AUTH_KEY_MAX (RFC 5880 6.7.4) */
#define MGR_CFG_MAX_REMOTE 8	  /* protected chains a node takes part in */
#define MGR_CFG_REMOTE_KEY_MAX 64 /* == RSYNC_KEY_MAX */

enum mgr_unit_id { MGR_UNIT_RX = 0, MGR_UNIT_TX, MGR_UNIT_CTRL, MGR_UNIT_BFD, MGR_UNIT_MAX };

struct mgr_port_cfg {
	char name[MGR_CFG_NAME_LEN];
	char dev[MGR_CFG_DEV_LEN]; /* EAL --vdev device string */
	bool no_rx;		   /* output-only: the RX unit never polls it */
	bool peer;		   /* a link to a node flows move to and from (move_peer.h) */
};

#define MGR_CFG_IMAGE_LEN 256

/* An NF entry's "container": the NF (and its standby) run in containers of
 * `image` (nf_launch.c). */
struct mgr_nf_container_cfg {
	bool enabled;
	char image[MGR_CFG_IMAGE_LEN];
	char path[PATH_MAX]; /* the NF binary inside the image */
	int nvolumes;
	char *volumes[MGR_CFG_MAX_ARGS]; /* "HOST:CONTAINER[:OPTIONS]" */
	int nargs;
	char *args[MGR_CFG_MAX_ARGS]; /* more arguments of the runtime's `run` */
};

/* "scale": the service scaled by its RX rings' occupancy (elastic/scale.c). */
struct mgr_scale_cfg {
	bool on;
	uint16_t min, max;	 /* instances */
	uint8_t high_pct;	 /* above it (the fullest instance's ring) ... */
	uint8_t low_pct;	 /* below it (every instance's) ... */
	uint32_t up_ms, down_ms; /* ... that long: one instance more, or less */
	uint32_t cooldown_ms;	 /* between two changes */
	uint8_t method;		 /* MGR_SCALE_*: enum onvm_move_method's values */
};
#define MGR_SCALE_REPROCESS 0
#define MGR_SCALE_BUFFER 1

struct mgr_nf_cfg {
	char name[MGR_CFG_NAME_LEN];
	char binary[PATH_MAX];
	uint16_t service;
	uint16_t instances;
	bool local;		/* "resiliency": "local": keep a hot standby */
	int nargs;
	char *args[MGR_CFG_MAX_ARGS];
	struct mgr_nf_container_cfg ctr;
	struct mgr_scale_cfg scale;
	bool peer_only; /* "peer_only": serves only flows other nodes move here */
};

/* "containers": how the node runs container NFs. */
struct mgr_containers_cfg {
	char command[PATH_MAX]; /* the runtime's CLI, Docker-compatible: "podman" */
	char runtime[64];	/* its --runtime ("": the CLI's default) */
	int nulimits;
	char *ulimits[MGR_CFG_MAX_ARGS]; /* each a --ulimit: "nofile=1024:1024" */
	int nargs;
	char *args[MGR_CFG_MAX_ARGS]; /* more `run` arguments, every container NF */
};

#define MGR_FTC_F_MAX 4
#define MGR_FTC_MAX_NF_NODES 15

struct mgr_chain_cfg {
	char name[MGR_CFG_NAME_LEN];
	uint16_t len;
	uint16_t services[MGR_CFG_MAX_CHAIN_LEN];
	int ingress_port; /* -1: none */
	int exit_port;	  /* -1: drop at the end of the chain */
	/* "resiliency": "stateless": the NFs' state in a store (docs/design/
	 * stateless.md); `store` is its "store" object, with defaults. */
	bool stateless;
	struct onvm_store_cfg store;
	/* "predecessor": its input comes stamped from remote resiliency's
	 * predecessor on ingress_port, which fails it over to a spare node:
	 * role 0 none, MGR_SL_PEER_PRIMARY or MGR_SL_PEER_SPARE; id the
	 * predecessor's chain id. */
	uint8_t peer_role;
	uint16_t peer_id;
	/* "resiliency": "ftc": this node's part of an FTC chain spread over
	 * nodes (docs/design/ftc.md); `ftc` is its "ftc" object. */
	bool is_ftc;
	struct mgr_ftc_cfg {
		uint16_t id;	   /* the FTC chain's, the same on every node */
		uint8_t f;	   /* node failures survived, 1..MGR_FTC_F_MAX */
		uint8_t position;  /* this node's place: 0 .. nf_nodes + f - 1 */
		uint8_t nf_nodes;  /* nodes 0 .. nf_nodes - 1 run one NF each */
		int feedback_port; /* the egress -> forwarder link (first, last) */
		uint32_t propagate_us; /* longest wait for a packet to ride on */
		uint32_t retrans_us;   /* an update not held this long: again */
		uint32_t mtu;	       /* frames out carry at most this after
					* their Ethernet header */
		uint32_t log_kb, log_updates; /* the head's log */
		uint32_t replica_mb;	      /* per instance replicated */
		uint32_t window;	      /* updates held out of order */
		uint32_t hold_packets;	      /* the egress buffer */
		int state_port;		      /* the state network (-1: none) */
		/* "recover": this node takes a failed one's place: its NF's
		 * state from the replicas at these positions, its replicas
		 * from whole updates of their heads */
		bool recover;
		uint8_t n_recover_from;
		uint8_t recover_from[MGR_FTC_F_MAX];
	} ftc;
};
#define MGR_SL_PEER_PRIMARY 1
#define MGR_SL_PEER_SPARE 2

struct mgr_rule_cfg {
	uint32_t src_ip, src_mask, dst_ip, dst_mask; /* host byte order */
	uint16_t sport_lo, sport_hi, dport_lo, dport_hi;
	uint8_t proto; /* 0 any */
	int in_port;   /* -1 any */
	int chain;     /* index into chains */
};

/* One BFD session (RFC 5880/5881) on a port; see docs/operator-guide.md. */
struct mgr_bfd_cfg {
	char name[MGR_CFG_NAME_LEN];
	int port;
	uint32_t local_ip, peer_ip; /* host byte order */
	bool peer_mac_static;
	uint8_t peer_mac[6];
	uint32_t desired_min_tx_us;
	uint32_t required_min_rx_us;
	uint8_t detect_mult;
	bool admin_down;
	uint8_t auth_type; /* RFC 5880 numbering: 0 none, 4 keyed SHA1, 5 meticulous */
	uint8_t auth_key_id;
	uint8_t auth_key_len;
	uint8_t auth_key[MGR_CFG_BFD_KEY_MAX];
};

/* Remote resiliency: this node's role for one protected chain (the
 * "remote" section; see docs/operator-guide.md). */
enum mgr_remote_role {
	MGR_REMOTE_PREDECESSOR = 1, /* stamps and logs what enters the chain, replays */
	MGR_REMOTE_PRIMARY,	    /* runs the chain, two-phase commits with the standby */
	MGR_REMOTE_STANDBY,	    /* holds the committed state, takes over */
};

enum mgr_remote_peer { MGR_PEER_PREDECESSOR = 0, MGR_PEER_PRIMARY, MGR_PEER_STANDBY, MGR_PEER_MAX };

struct mgr_remote_cfg {
	char name[MGR_CFG_NAME_LEN];
	uint16_t id;	      /* chain id on the wire, the same on all three nodes */
	uint8_t role;	      /* enum mgr_remote_role */
	uint32_t epoch;
	uint8_t key_len;      /* 0: no HMAC */
	uint8_t key_id;
	uint8_t key[MGR_CFG_REMOTE_KEY_MAX];
	int bfd;	      /* predecessor: index of the BFD session that triggers failover, -1 */
	/* predecessor: the BFD session on the standby link, -1: after a
	 * re-protection the primary's (the sides swap), whose Down then
	 * triggers the failover */
	int standby_bfd;
	bool link_failover;   /* predecessor: link down on primary_port triggers failover */
	/* predecessor: its triggers (BFD, link, a restarted primary) only ask;
	 * the failover starts on /onvm/remote/failover, from the node's agent,
	 * at the epoch the cluster agreed (docs/design/cluster.md) */
	bool failover_by_agent;
	/* standby: after a takeover it may be made the chain's primary again
	 * (the predecessor's PROTECT), with a new standby on its sync link
	 * (primary_port): its latch (the primary's fields) and its NFs' cut
	 * logs are set up at start */
	bool reprotect;
	bool has_mac[MGR_PEER_MAX];
	uint8_t mac[MGR_PEER_MAX][6]; /* peers' MACs on their links (else broadcast) */
	int chain;	      /* primary/standby: the local chain, -1 */
	int primary_port, standby_port, predecessor_port; /* -1 where the role has none */
	/* predecessor */
	uint32_t log_packets;
	uint32_t log_mb;
	uint32_t failover_timeout_ms; /* no answer to REPLAY_START: the failover is given up */
	/* primary */
	uint32_t stages;
	uint32_t stage_packets;
	uint32_t stage_close_us;
	uint32_t retrans_us;
	uint32_t max_tries;
	uint32_t standby_window;
	uint32_t checkpoint_ms;
	uint32_t stage_state_kb;
	/* standby */
	uint32_t window;
	uint32_t max_frags;
	uint32_t txts_flows;
	/* primary and standby: the chain's NFs' state blocks sit at the same
	 * offsets of the state pool on both nodes (pointers in state stay
	 * valid): NF k of the chain at state_base_mb + k * state_window_mb */
	uint32_t state_base_mb;
	uint32_t state_window_mb;
};

struct mgr_config {
	char path[PATH_MAX];
	char dir[PATH_MAX]; /* directory of the config file */
	char node_name[MGR_CFG_NAME_LEN];
	char file_prefix[64];
	char lcores[64];
	int n_eal;
	char *eal_args[MGR_CFG_MAX_ARGS];

	uint32_t nb_mbufs;
	uint32_t mbuf_cache;
	uint32_t nf_ring_size;
	uint32_t port_ring_size;
	uint16_t rx_desc, tx_desc;
	int unit_lcore[MGR_UNIT_MAX]; /* -1: the main lcore */
	uint32_t stats_interval_ms;   /* 0: no console stats */
	uint32_t idle_spin_us;
	uint32_t idle_sleep_max_us;
	/* An lcore on NF CPUs yields to the NFs while idle (units.c); off by
	 * default: many such lcores on a busy host yield to each other
	 * instead of napping. */
	bool idle_share_nf_cpus;
	uint32_t nf_start_timeout_ms;
	/* a process NF that exits before it registers during the node's
	 * start-up is launched again this many times (DPDK's secondary EAL
	 * init can fail transiently) before the start fails */
	uint32_t nf_start_retries;
	uint32_t nf_heartbeat_ms;     /* hung NF: no loop progress for this long; 0 off */
	char nf_cpus[ONVM_CPULIST_MAX];	/* CPU list NFs may run on ("": all) */
	char nf_standby_cpus[ONVM_CPULIST_MAX]; /* CPU list for standbys ("": see onvm_nf_cpus) */
	cpu_set_t nf_cpu_set;	      /* the two lists, parsed (empty: unset) */
	cpu_set_t nf_standby_cpu_set;
	uint32_t link_wait_ms;	      /* wait for port links before RX starts */
	uint32_t state_pool_mb;	      /* memory for NF state blocks */

	int nports;
	struct mgr_port_cfg ports[MGR_CFG_MAX_PORTS];
	int nnfs;
	struct mgr_nf_cfg nfs[MGR_CFG_MAX_NFS];
	struct mgr_containers_cfg containers;
	int nchains;
	struct mgr_chain_cfg chains[MGR_CFG_MAX_CHAINS];
	int nrules;
	struct mgr_rule_cfg rules[MGR_CFG_MAX_RULES];
	int default_chain; /* -1: none */
	int nbfd;
	struct mgr_bfd_cfg bfd[MGR_CFG_MAX_BFD];
	int nremote;
	struct mgr_remote_cfg remote[MGR_CFG_MAX_REMOTE];
};

/* Fill `cfg` with every default (a node with no ports, NFs or chains). */
void mgr_config_defaults(struct mgr_config *cfg);

/* Parse a config file.  On error returns -1 and writes one line to `err`. */
int mgr_config_load_file(const char *path, struct mgr_config *cfg, char *err, size_t errlen);

/* Same for text in memory; `name` is used in messages and for ${CONFIG_DIR}. */
int mgr_config_load_string(const char *text, size_t len, const char *name,
			   struct mgr_config *cfg, char *err, size_t errlen);

void mgr_config_free(struct mgr_config *cfg);

/* Index of the port / chain called `name`, or -1. */
int mgr_config_port_index(const struct mgr_config *cfg, const char *name);
int mgr_config_chain_index(const struct mgr_config *cfg, const char *name);

#endif /* MGR_CONFIG_H */
