# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""onvm -- the Python shared by the integration tests (tests/) and the
benchmarks (bench/): the lab that starts real nodes and cleans up after
them, and the helpers more than one script needs.  A test or a benchmark
imports this package, never another script or a test file
(docs/contributing.md).

Importing the package imports none of its modules.  onvm.lab reads
ONVM_BUILD when it is imported, and so do the modules that import it (pcap,
traces, flowtable, containers, demo_chain, balancer, remote_lab, tcp_lab,
campaign, exporter); a benchmark whose --build should reach them sets ONVM_BUILD
before it imports them (nf_suite.py and pkt_sizes.py do).  Tests get the package from meson
(PYTHONPATH in tests/integration/meson.build); a benchmark puts python/ of
its own tree on sys.path.  Everything here runs on Debian's /usr/bin/python3
and its standard library (tshark, podman and matplotlib only where a caller
asks for them).

Files, one concern each.  The harness and what tests and benchmarks share:
  lab.py         nodes (onvm_mgr), hand-started processes, network
                 namespaces, veths and FRR's bfdd, waits and checks, and the
                 clean-up that leaves no process, runtime directory or
                 hugepage file behind
  telemetry.py   the DPDK telemetry client (the one; tools/onvm-exporter
                 keeps its own, being deployed as a single file)
  pcap.py        capture files read and written (pcap, pcapng), what
                 net_pcap cut (TruncatedFrame), frame lists compared
  traces.py      the captures the tree ships (traces/), several mixed into one
  flowtable.py   flow tables: tshark's of a capture, basic_monitor's export,
                 the differences of two
  containers.py  NFs in podman containers: the NF image, a config with its
                 NFs in containers, a node's containers found and removed
  demo_chain.py  the demo's three-NF chain as a config, and a trace run
                 through it with every check (chain_traces, container_chain)
  balancer.py    load_balancer killed mid-trace and its output checked frame
                 by frame (nf_load_balancer, container_failover)
  wire.py        remote resiliency's frames built from the documented
                 layout (RSync messages, the EtherTypes)
  remote_lab.py  the four-node lab of remote resiliency and its
                 external-synchrony oracle (remote_chain, remote benchmarks)
  campaign.py    randomized fault campaigns over that lab: the fault kinds,
                 seeded episode plans, the episode and its oracle
                 (bench/campaign.py, remote_campaign)
  tcp_lab.py     a kernel TCP download through the protected chain: its
                 lab, a client timestamping its reads, kernel captures
                 (dumpcap) read back as TCP segments (remote_tcp,
                 remote_tcp_stall.py)
  exporter.py    tools/onvm-exporter started for a test or benchmark, its
                 /metrics read back
  store.py       a real redis-server for stateless chains, and a minimal
                 RESP client to look at what it holds
  ftc_lab.py     the FTC lab: the stateful chain spread one NF a node, with
                 replica-only nodes after it
  etcd_lab.py    a three-member etcd on loopback, its members killed and
                 restarted by PID
  cluster_lab.py the remote lab run by its control plane: agents, onvmctl,
                 the --on-standby hook served (cluster_agent, the cluster
                 benchmarks)
The control plane's (tools/onvm-agent, tools/onvmctl; no onvm.lab in them):
  cluster.py     the cluster's state in etcd: registrations, chains, roles
                 and epochs changed by transactions, placement
  cluster_config.py
                 a node's onvm_mgr configuration for a chain's role,
                 rendered from its own part and the chain's declared config
The benchmarks' own (no onvm.lab in them):
  report.py      what benchmarks write: log lines, CSV, figures (matplotlib),
                 percentiles, the machine and tree a run was made on
  noise.py       what else moved a benchmark's numbers: the host's placement
                 of our vCPUs (XCoreProbe), others' CPU and steal (CpuNoise)
  tput.py        the null-port throughput and latency benchmarks' pieces:
                 processes under their own prefixes (Procs), testpmd, a
                 manager started by hand, client_server_mp, node configs
  latshim.py     bench/lat_shim.so's histogram file: mapped, diffed, read as
                 percentiles (latency.py, lat_shim)
"""
