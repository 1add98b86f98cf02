#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""Real traces through bridge -n -> basic_monitor -> simple_forward come out
unchanged and in order, and the monitor's per-flow counts equal tshark's.

For each trace, one node with one net_pcap port (read the trace, write a
capture) and the three-NF chain from the port back to itself.  Asserted:
  - the output capture holds exactly the input frames, byte for byte, in order;
  - /onvm/ports: rx == tx == frames, rx_bytes == tx_bytes == the trace's
    bytes, no TX drops, not_ipv4 == tshark's non-IPv4 count, no parse errors;
    no drop of any reason in /onvm/drops;
  - each NF received and sent every frame;
  - basic_monitor's export: packets/bytes totals, non_ip, no malformed, no
    untracked, and per directional 5-tuple packets and bytes equal to what
    tshark computes from the same file;
  - the pool is back to its idle level, and the manager exits 0 on SIGINT
    leaving no runtime files.
The traces cover TCP, UDP, QinQ + PPPoE (dns), jumbo frames (webex), pcapng
input (ssh, dns) and LLC/STP frames (tor).

The run and its checks are onvm.demo_chain's (test_container_chain.py makes
the same with every NF in a container).
"""
from onvm import demo_chain, lab

TRACES = ["smtp.pcap", "ssh.pcap", "webex.pcap", "dns.pcap", "quic.pcap", "tor.pcap"]


def main(L):
    for name in TRACES:
        demo_chain.run_trace(L, name)


if __name__ == "__main__":
    lab.run("chain_traces", main)
