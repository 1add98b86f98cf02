#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""Per-NF throughput with and without local resiliency, measured in one run.

Every NF runs alone in a one-NF chain, once with "resiliency": "none" and
once with "local" (a hot standby, parked on CPU 0), the two measured back to
back as a pair, pairs repeated round by round (the order alternates between
rounds).  libnf commits every batch's dirty state chunks to the replica in
both modes (the mode only decides whether a standby is kept), so the ratio
local/none is the cost of keeping the standby, not of tracking state; the
commit itself is timed by libnf and reported for both modes.

Traffic (at most two busy pollers, SPEC section 8): the manager (all units on
lcore 0, CPU 0) replays real traces from memory in a loop through a net_pcap
port with infinite_rx=1 (DPDK 22.11: the capture is read into a ring of
mbufs when the port is set up; every RX copies the next packet into a fresh
mbuf and puts the original back), the NF runs on CPU 1, the chain exits on a
net_null port that only transmits (frees).  Throughput = packets the sink
port transmitted per second over the window.  The traces (default webex,
bittorrent, quic and tor: about a hundred IPv4 flows) are concatenated into
one capture; frames longer than an mbuf's data room (2048 bytes) are left out,
since infinite_rx cannot hold chained mbufs.  The NFs' configurations (rules,
backends, internal prefixes, VLAN policy) are written for those traces'
addresses so that every NF does its real work and passes most traffic on.

Also recorded per window: the NF's state commits (libnf times each commit:
the latency each packet waits between processing and emission), the CPU the
NF and the manager used and the NF's CPU time per packet, the CPU used by
processes that are not ours and the hypervisor's steal time, and before and
after each window the round trip of a cache line between CPU 0 and CPU 1
(see XCoreProbe: the host moves our vCPUs between placements that differ
2.5x in throughput).  A pair is good when nobody else used the CPUs (clean)
and the probes agree (steady); other pairs are measured again (--retries),
and the ratio reported is the median over the good pairs.  For dpi, the
number of packets nDPI inspected (from its export): once a flow is
classified, dpi stops calling nDPI, so steady-state dpi throughput mostly
measures its flow lookup.

usage: bench/nf_suite.py [--build DIR] [--rounds R] [--window S] [--warmup S]
                         [--nfs a,b,..] [--traces a.pcap,b.pcap] [--nd-every N]
                         [--max-other PCT] [--retries N] [--out DIR]
                         [--quiet-wait S] [--quiet-wait-each S] [--no-plot]

Writes OUT/nf_suite.csv, OUT/nf_suite_summary.txt and OUT/nf_suite.png.
"""
import argparse
import glob
import json
import os
import signal
import statistics
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "python"))
from onvm import report  # noqa: E402
from onvm.noise import CpuNoise, XCoreProbe, cpu_busy_fraction, steady  # noqa: E402
from onvm.report import fmt, log  # noqa: E402

MBUF_DATA_ROOM = 2048  # RTE_MBUF_DEFAULT_DATAROOM: the manager's pool
ALL_NFS = ["basic_monitor", "dpi", "vlan_tagger", "load_balancer", "nat", "firewall", "nondet"]
DEFAULT_TRACES = "webex.pcap,bittorrent.pcap,quic.pcap,tor.pcap"
# Addresses the default traces use on their "inside": webex 10.8.0.1,
# bittorrent/quic/tor 192.168.1.x.  NAT/LB/firewall/vlan configs refer to
# these; every address the NFs write is in 198.18.0.0/15.
INTERNAL = ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"]


# ---- the traffic -------------------------------------------------------------------

def build_trace(names, path):
    """Concatenate the traces, leaving out frames an mbuf cannot hold whole.
    Returns facts about the result for the summary."""
    frames, skipped = [], 0
    for n in names:
        for f in pcap.read_pcap(traces.trace(n)):
            if len(f) > MBUF_DATA_ROOM:
                skipped += 1
            else:
                frames.append(f)
    pcap.write_pcap(path, frames)
    flows, non_ip = set(), 0
    for f in frames:
        off, et = 14, struct.unpack(">H", f[12:14])[0]
        while et in (0x8100, 0x88A8) and len(f) >= off + 4:
            et, off = struct.unpack(">H", f[off + 2:off + 4])[0], off + 4
        if et != 0x0800 or len(f) < off + 20:
            non_ip += 1
            continue
        ihl, proto = (f[off] & 15) * 4, f[off + 9]
        sp = dp = 0
        if proto in (6, 17) and len(f) >= off + ihl + 4:
            sp, dp = struct.unpack(">HH", f[off + ihl:off + ihl + 4])
        a, b = sorted([(f[off + 12:off + 16], sp), (f[off + 16:off + 20], dp)])
        flows.add((a, b, proto))  # a connection, both directions
    return {"frames": len(frames), "skipped_jumbo": skipped, "flows": len(flows),
            "non_ip": non_ip, "mean_len": sum(map(len, frames)) / max(1, len(frames))}


# ---- the NFs and their configs ---------------------------------------------------------

def write_json(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
    return path


def nf_setup(L, name, a):
    """(args, state pool MB, note) of an NF for the replayed traces."""
    if name == "basic_monitor":
        return ["-p", "0"], 128, "per-flow packet/byte counters"
    if name == "dpi":
        return (["-p", "0", "-H", "64", "-e", L.path("ndpi_export-%i.json")], 512,
                "nDPI, 64 MB heap; export read for nDPI's share")
    if name == "vlan_tagger":
        pol = write_json(L.path("vlan_policy.json"), {
            "default": {"vlan": 42, "pcp": 1},
            "rules": [
                {"src": "10.0.0.0/8", "proto": "tcp", "dport": 443, "vlan": 100, "pcp": 4},
                {"dst": "10.0.0.0/8", "proto": "tcp", "sport": 443, "vlan": 101, "pcp": 4},
                {"src": "10.0.0.0/8", "proto": "udp", "vlan": 110, "pcp": 5},
                {"src": "192.168.0.0/16", "proto": "udp", "dport": 443, "vlan": 200, "pcp": 3},
                {"src": "192.168.0.0/16", "proto": "tcp", "vlan": 210},
                {"dst": "192.168.0.0/16", "vlan": 220},
                {"proto": "icmp", "vlan": 300, "pcp": 7},
            ]})
        return ["-p", "0", "-c", pol], 128, "7 rules, default tag"
    if name == "load_balancer":
        cfg = write_json(L.path("lb.json"), {
            "backends": [{"ip": f"198.18.1.{i}", "mac": f"02:00:00:00:01:{i:02x}"}
                         for i in range(1, 5)]})
        return ["-p", "0", "-c", cfg], 128, "transparent mode (every flow), 4 backends"
    if name == "nat":
        cfg = write_json(L.path("nat.json"), {"internal": INTERNAL, "external_ip": "198.18.0.1",
                                              "port_min": 1024, "port_max": 65535})
        return ["-p", "0", "-c", cfg], 128, "SNAT of 10/8, 172.16/12, 192.168/16 to 198.18.0.1"
    if name == "firewall":
        rules = [{"name": "no_telnet", "action": "deny", "proto": "tcp", "dport": 23},
                 {"name": "no_smb", "action": "deny", "proto": "tcp", "dport": [135, 139]},
                 {"name": "no_netbios", "action": "deny", "proto": "udp", "dport": [137, 138]},
                 {"name": "no_ssdp", "action": "deny", "proto": "udp", "dport": 1900},
                 {"name": "dns", "action": "allow", "proto": "udp", "dport": 53},
                 {"name": "dns_replies", "action": "allow", "proto": "udp", "sport": 53}]
        for i, p in enumerate(INTERNAL):
            rules += [{"name": f"out{i}", "action": "allow", "src": p},
                      {"name": f"in{i}", "action": "allow", "dst": p}]
        rules.append({"name": "lab", "action": "allow", "src": "198.18.0.0/15"})
        cfg = write_json(L.path("fw.json"), {"default": "deny", "non_ip": "allow",
                                             "malformed": "deny", "rules": rules})
        return ["-p", "0", "-c", cfg], 128, f"{len(rules)} rules, default deny"
    if name == "nondet":
        return (["-p", "0", "-m", f"count:{a.nd_every}"], 128,
                f"every {a.nd_every}th packet non-deterministic")
    raise ValueError(name)


def node_cfg(lab, nf, args, pool_mb, mode, trace):
    return {
        "node": {"lcores": "0@0"},
        "pool": {"mbufs": 32767},
        "nf_defaults": {"cpus": "1"},
        "state": {"pool_mb": pool_mb},
        "ports": [{"name": "gen", "dev": f"net_pcap0,rx_pcap={trace},infinite_rx=1"},
                  {"name": "sink", "dev": "net_null0,size=64", "rx": False}],
        "nfs": [{"binary": lab.nf_binary(nf), "name": nf, "service": 1, "resiliency": mode,
                 "args": args}],
        "chains": [{"name": "c", "services": [1], "ingress_port": "gen", "exit_port": "sink"}],
    }


# ---- measuring ------------------------------------------------------------------------

def proc_ticks(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, IndexError, ValueError):
        return None


def foreign_nodes(L):
    """Other people's DPDK processes (managers, NFs, testpmd) running now."""
    ours = {os.getpid()} | {n.proc.pid for n in L.nodes if n.proc is not None}
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) in ours:
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if any(x.startswith(OUR_PREFIX) for x in argv):
            continue  # our NFs and standbys
        prog = os.path.basename(argv[0]).decode(errors="replace")
        if prog in ("onvm_mgr", "dpdk-testpmd") or any(x.startswith(b"--file-prefix=")
                                                        for x in argv):
            out.append(f"{prog}[{d}]")
    return out


def wait_quiet(L, max_wait, say=True):
    """Wait until nobody else's DPDK process runs and the CPUs are idle (at
    most max_wait s).  Returns (quiet, busy fraction, foreign processes)."""
    deadline = time.monotonic() + max_wait
    while True:
        busy = cpu_busy_fraction(1.0)
        others = foreign_nodes(L)
        if busy < 0.15 and not others:
            return True, busy, others
        if time.monotonic() > deadline:
            if say:
                log(f"WARNING: machine not quiet after {max_wait:.0f} s (CPU {100 * busy:.0f}% "
                    f"busy, others' DPDK processes: {' '.join(others) or 'none'})")
            return False, busy, others
        if say:
            log(f"waiting for a quiet machine (CPU {100 * busy:.0f}% busy, others' DPDK "
                f"processes: {' '.join(others[:6]) or 'none'})")
        time.sleep(5)


def measure(L, noise, a, nf, mode, rnd, trace):
    args, pool_mb, _ = nf_setup(L, nf, a)
    # a fresh name per node: its log file must not hold an earlier node's lines
    node = L.node(f"{nf}-{mode}-{rnd}-{len(L.nodes) + 1}",
                  node_cfg(lab, nf, args, pool_mb, mode, trace))
    try:
        node.start(timeout=90)
        noise.procs = [node.proc]
        time.sleep(a.warmup)
        nfe = node.nf_by(service=1)[0]
        pid = nfe["pid"]
        foreign = foreign_nodes(L)
        p0, n0, t0 = node.ports(), nfe, time.monotonic()
        c0, m0 = proc_ticks(pid), proc_ticks(node.proc.pid)
        noise.window(a.window)
        p1, n1, t1 = node.ports(), node.nf_by(service=1)[0], time.monotonic()
        c1, m1 = proc_ticks(pid), proc_ticks(node.proc.pid)
        lab.check(n1["pid"] == pid and n1["failovers"] == 0,
                  f"{nf} {mode}: the NF changed during the window (failovers {n1['failovers']})")
        dt = t1 - t0
        hz = os.sysconf("SC_CLK_TCK")
        commits = n1["state_commits"] - n0["state_commits"]
        # libnf keeps the mean over the NF's life: the window's own mean from the sums
        cmean = ((n1["state_commit_mean_ns"] * n1["state_commits"] -
                  n0["state_commit_mean_ns"] * n0["state_commits"]) / commits) if commits else None
        row = {
            "nf": nf, "mode": mode, "round": rnd,
            "mpps": (p1["sink"]["tx"] - p0["sink"]["tx"]) / dt / 1e6,
            "in_mpps": (p1["gen"]["rx"] - p0["gen"]["rx"]) / dt / 1e6,
            "nf_rx_mpps": (n1["rx"] - n0["rx"]) / dt / 1e6,
            "nf_drop_pct": 100.0 * (n1["act_drop"] - n0["act_drop"]) / max(1, n1["rx"] - n0["rx"]),
            "nf_cpu_pct": 100.0 * (c1 - c0) / hz / dt if None not in (c0, c1) else None,
            "mgr_cpu_pct": 100.0 * (m1 - m0) / hz / dt if None not in (m0, m1) else None,
            # the NF's CPU time per packet it received: not moved by other
            # processes taking the CPU away (it is not charged then)
            "nf_ns_per_pkt": (1e9 * (c1 - c0) / hz / (n1["rx"] - n0["rx"])
                              if None not in (c0, c1) and n1["rx"] > n0["rx"] else None),
            "commits_per_s": commits / dt,
            "chunks_per_commit": ((n1["state_chunks_committed"] - n0["state_chunks_committed"]) /
                                  commits) if commits else None,
            "commit_mean_ns": cmean,
            "commit_max_ns": n1["state_commit_max_ns"] if commits else None,
            "nd_per_s": (n1["nd_events"] - n0["nd_events"]) / dt,
            "other_cpu_pct": noise.last_foreign_cpu, "steal_pct": noise.last_steal,
            "foreign": len(foreign),
        }
        rc = node.stop()
        lab.check(rc == 0, f"{nf} {mode}: manager exit status {rc}")
        if nf == "dpi":
            exports = glob.glob(L.path("ndpi_export-*.json"))
            lab.check(len(exports) == 1, f"dpi exports: {exports}")
            with open(exports[0]) as f:
                doc = json.load(f)
            os.unlink(exports[0])
            row["ndpi_pkts"] = sum(f.get("detect_pkts", 0) for f in doc["flows"])
            row["nf_pkts_total"] = doc.get("packets")
        return row
    finally:
        if node.running():
            node.stop()
        node.remove_runtime()


# ---- output ---------------------------------------------------------------------------

COLS = ["nf", "mode", "round", "mpps", "ratio_local_none", "in_mpps", "nf_rx_mpps",
        "nf_drop_pct", "nf_cpu_pct", "mgr_cpu_pct", "nf_ns_per_pkt", "cost_ratio_local_none", "commits_per_s", "chunks_per_commit",
        "commit_mean_ns", "commit_max_ns", "nd_per_s", "ndpi_pkts", "other_cpu_pct",
        "steal_pct", "foreign", "xcore_rtt_before_ns", "xcore_rtt_after_ns", "clean", "steady",
        "attempt"]


def med(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def summarize(rows, nfs):
    """Per NF: medians and the per-round ratios local/none.  The ratio
    reported is the median over the good pairs (clean and steady) when there
    are any, else over all pairs."""
    out = {}
    rtts = [x[k] for x in rows for k in ("xcore_rtt_before_ns", "xcore_rtt_after_ns") if x.get(k)]
    near_max = 2 * min(rtts) if rtts else None  # the host's good placement of our vCPUs

    def near(x):
        return near_max is not None and all(
            x.get(k) and x[k] <= near_max for k in ("xcore_rtt_before_ns", "xcore_rtt_after_ns"))
    for nf in nfs:
        r = [x for x in rows if x["nf"] == nf]
        if not r:
            continue
        by = {m: {x["round"]: x for x in r if x["mode"] == m} for m in ("none", "local")}
        ratios = [(rd, by["local"][rd]["mpps"] / by["none"][rd]["mpps"])
                  for rd in sorted(by["none"]) if rd in by["local"] and by["none"][rd]["mpps"] > 0]
        for rd, q in ratios:
            by["local"][rd]["ratio_local_none"] = q
        costs = [(rd, by["local"][rd]["nf_ns_per_pkt"] / by["none"][rd]["nf_ns_per_pkt"])
                 for rd in sorted(by["none"]) if rd in by["local"] and
                 by["none"][rd]["nf_ns_per_pkt"] and by["local"][rd]["nf_ns_per_pkt"]]
        for rd, q in costs:
            by["local"][rd]["cost_ratio_local_none"] = q
        good = {rd for rd, x in by["local"].items() if x.get("clean") and x.get("steady")}
        s = {"ratios": [q for _, q in ratios], "ratio_all": med(q for _, q in ratios),
             "good": [rd in good for rd, _ in ratios],
             "ratio": med(q for rd, q in ratios if rd in good) if good else
             med(q for _, q in ratios),
             "costs": [q for _, q in costs],
             "cost_ratio": med(q for rd, q in costs if rd in good) if good else
             med(q for _, q in costs)}
        for m in ("none", "local"):
            v = [x["mpps"] for x in by[m].values() if near(x)]
            s[m + "_near"] = med(v)
            s[m + "_near_range"] = (min(v), max(v)) if v else (None, None)
            s[m + "_near_n"] = len(v)
        for m in ("none", "local"):
            v = [x["mpps"] for x in by[m].values()]
            s[m] = (med(v), min(v) if v else None, max(v) if v else None)
            s[m + "_nf_cpu"] = med(x["nf_cpu_pct"] for x in by[m].values())
            s[m + "_mgr_cpu"] = med(x["mgr_cpu_pct"] for x in by[m].values())
            s[m + "_drop"] = med(x["nf_drop_pct"] for x in by[m].values())
            s[m + "_ns_pkt"] = med(x["nf_ns_per_pkt"] for x in by[m].values())
        loc = list(by["local"].values())
        s["commit_mean_ns"] = med(x["commit_mean_ns"] for x in loc)
        s["none_commit_ns"] = med(x["commit_mean_ns"] for x in by["none"].values())
        s["commit_max_ns"] = max((x["commit_max_ns"] for x in loc if x["commit_max_ns"]),
                                 default=None)
        s["chunks_per_commit"] = med(x["chunks_per_commit"] for x in loc)
        s["commits_per_s"] = med(x["commits_per_s"] for x in loc)
        s["nd_per_s"] = med(x["nd_per_s"] for x in r)
        s["ndpi"] = [(x.get("ndpi_pkts"), x.get("nf_pkts_total")) for x in r if "ndpi_pkts" in x]
        s["noisy"] = max((x["other_cpu_pct"] or 0) for x in r), max((x["steal_pct"] or 0)
                                                                      for x in r)
        s["foreign_rows"] = sum(1 for x in r if x["foreign"])
        s["clean_pairs"] = sum(1 for x in by["local"].values() if x.get("clean"))
        s["good_pairs"] = len(good)
        s["pairs"] = len(ratios)
        out[nf] = s
    return out


def write_outputs(a, rows, summ, meta):
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "nf_suite.csv"), "w") as f:
        f.write(",".join(COLS) + "\n")
        for x in rows:
            f.write(",".join(fmt(x.get(c), 4 if "ratio" in c else 3) for c in COLS)
                    + "\n")
        # median rows: the median of each column over the rounds; the ratios
        # are medians of the per-round ratios; noise columns: the largest
        for nf, s in summ.items():
            for m in ("none", "local"):
                r = [x for x in rows if x["nf"] == nf and x["mode"] == m]
                d = {c: med(x.get(c) for x in r) for c in COLS[3:]}
                d.update(nf=nf, mode=m, round="median",
                         ratio_local_none=s["ratio"] if m == "local" else None,
                         cost_ratio_local_none=s["cost_ratio"] if m == "local" else None,
                         commit_max_ns=max((x["commit_max_ns"] or 0 for x in r), default=None),
                         other_cpu_pct=max((x["other_cpu_pct"] or 0 for x in r), default=None),
                         steal_pct=max((x["steal_pct"] or 0 for x in r), default=None),
                         foreign=sum(1 for x in r if x["foreign"]))
                f.write(",".join(fmt(d.get(c), 4 if "ratio" in c else 3) for c in COLS) + "\n")
    lines = [f"nf_suite: {meta['date']}, repo {meta['commit']}, {a.rounds} rounds x "
             f"{a.window:g} s windows after {a.warmup:g} s warm-up, run time {meta['elapsed']:.0f} s",
             f"traffic: {meta['traces']} concatenated, {meta['trace']['frames']} frames "
             f"(mean {meta['trace']['mean_len']:.0f} B, {meta['trace']['skipped_jumbo']} frames "
             f"> {MBUF_DATA_ROOM} B left out), {meta['trace']['flows']} IPv4 flows (connections), "
             f"{meta['trace']['non_ip']} non-IPv4 frames; replayed in a loop from memory "
             f"(net_pcap infinite_rx=1) by the manager (CPU 0), NF on CPU 1, sink net_null",
             f"machine: {meta['quiet_line']}",
             "",
             "throughput (Mpps at the sink: median (min..max) of all rounds; 'near': median of "
             "the windows with the host's good vCPU placement (cross-CPU round trip < 2x the "
             "run's minimum);",
             " local/none: median of the per-round ratios of the good pairs (clean and steady), "
             "'all': of every pair; per round: * = good pair)",
             f"{'NF':<14}{'none':>22}{'local':>22}{'near none/local':>17}  {'local/none':>10}"
             f"{'all':>7}  {'good pairs':>10}  per round",
             ]
    for nf, s in summ.items():
        def mm(t):
            return f"{t[0]:.3f} ({t[1]:.2f}..{t[2]:.2f})" if t[0] is not None else "-"
        lines.append(
            f"{nf:<14}{mm(s['none']):>22}{mm(s['local']):>22}"
            f"{fmt(s['none_near'], 2) + '/' + fmt(s['local_near'], 2):>17}  "
            f"{fmt(s['ratio'], 3):>10}{fmt(s['ratio_all'], 3):>7}  "
            f"{str(s['good_pairs']) + ' of ' + str(s['pairs']):>10}  "
            + " ".join(f"{q:.3f}{'*' if g else ''}" for q, g in zip(s['ratios'], s['good'])))
    lines += ["",
              "cost (NF CPU time per packet, medians; local/none: median of the per-round "
              "ratios; state commit per batch, libnf's timing)",
              f"{'NF':<14}{'ns/pkt none/local':>19}  {'local/none':>10}  {'per round':<22}"
              f"{'commit ns none/local':>21}{'chunks/commit':>14}{'NF CPU% none/local':>20}"]
    for nf, s in summ.items():
        lines.append(
            f"{nf:<14}{fmt(s['none_ns_pkt'], 0) + '/' + fmt(s['local_ns_pkt'], 0):>19}  "
            f"{fmt(s['cost_ratio'], 3):>10}  {' '.join(f'{q:.3f}' for q in s['costs']):<22}"
            f"{fmt(s['none_commit_ns'], 0) + '/' + fmt(s['commit_mean_ns'], 0):>21}"
            f"{fmt(s['chunks_per_commit'], 2):>14}"
            f"{fmt(s['none_nf_cpu'], 0) + '/' + fmt(s['local_nf_cpu'], 0):>20}")
    lines.append("")
    for nf, s in summ.items():
        extra = []
        if s["none_drop"] is not None and (s["none_drop"] > 0.05 or s["local_drop"] > 0.05):
            extra.append(f"dropped by the NF {s['none_drop']:.1f} % / {s['local_drop']:.1f} %")
        if s["nd_per_s"]:
            extra.append(f"{s['nd_per_s'] / 1e3:.0f} k ND events/s")
        if s["commit_max_ns"]:
            extra.append(f"commit max {s['commit_max_ns'] / 1000:.1f} us, "
                         f"{s['commits_per_s'] / 1e3:.0f} k commits/s")
        if s["ndpi"]:
            ins = [p for p, _ in s["ndpi"] if p is not None]
            tot = [t for _, t in s["ndpi"] if t]
            if ins and tot:
                extra.append(f"nDPI inspected {med(ins):.0f} packets per run of "
                             f"{med(tot) / 1e6:.1f} M ({100 * med(ins) / med(tot):.4f} %)")
        extra.append(f"manager CPU {fmt(s['none_mgr_cpu'], 0)}/{fmt(s['local_mgr_cpu'], 0)} %")
        extra.append(f"others' CPU up to {s['noisy'][0]:.0f} %, steal up to {s['noisy'][1]:.0f} %"
                     + (f", others' DPDK processes in {s['foreign_rows']} windows"
                        if s["foreign_rows"] else ""))
        lines.append(f"{nf}: {nf_note(nf, a)}; " + "; ".join(extra))
    for nf, why in meta["skipped"].items():
        lines.append(f"{nf}: NOT MEASURED ({why})")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(a.out, "nf_suite_summary.txt"), "w") as f:
        f.write(text)
    print(text)
    if not a.no_plot and summ:
        plot(a, summ, rows, meta)


def nf_note(nf, a):
    class _L:  # nf_setup's notes only; no files written
        @staticmethod
        def path(x):
            return os.devnull
    try:
        return nf_setup(_L, nf, a)[2]
    except (OSError, ValueError):
        return ""


def plot(a, summ, rows, meta):
    plt = report.pyplot()
    import matplotlib.ticker

    nfs = list(summ)
    fig, (ax, ax2) = plt.subplots(2, 1, figsize=(max(7, 1.5 * len(nfs) + 2), 7.5),
                                  gridspec_kw={"height_ratios": [3, 2]}, sharex=True)
    w = 0.38
    for k, (m, color) in enumerate((("none", "#7f7f7f"), ("local", "#1f77b4"))):
        xs = [i + (k - 0.5) * w for i in range(len(nfs))]
        meds = [summ[n][m + "_near"] or 0 for n in nfs]
        lo = [meds[i] - (summ[n][m + "_near_range"][0] or 0) for i, n in enumerate(nfs)]
        hi = [(summ[n][m + "_near_range"][1] or 0) - meds[i] for i, n in enumerate(nfs)]
        ax.bar(xs, meds, w, yerr=[lo, hi], capsize=3, color=color,
               label=f'"resiliency": "{m}"')
    top = max((summ[n][m + "_near_range"][1] or 0) for n in nfs for m in ("none", "local"))
    for i, n in enumerate(nfs):
        s = summ[n]
        label = f"local/none {s['ratio']:.3f}" if s["ratio"] is not None else ""
        if s["commit_mean_ns"] is not None:
            label += (f"\ncommit ns\n{fmt(s['none_commit_ns'], 0)} / "
                      f"{s['commit_mean_ns']:.0f}")
        ax.text(i, top * 1.04, label, ha="center", va="bottom", fontsize=7.5)
    ax.set_ylim(0, top * 1.5)
    ax.set_ylabel("Mpps at the sink")
    ax.set_title(f"One NF, traces replayed in a loop ({meta['trace']['flows']} flows, "
                 f"mean {meta['trace']['mean_len']:.0f} B). Bars: median (min..max) of the "
                 f"windows with the host's good vCPU placement;\nlocal/none: median of the "
                 f"per-round ratios of the clean, steady pairs of {a.rounds} rounds; commit: "
                 f"libnf's mean per batch, none / local", fontsize=8.5)
    ax.legend(fontsize=8, loc="upper left", ncol=2)
    ax.grid(axis="y", alpha=0.3)
    for i, n in enumerate(nfs):
        qs, gs = summ[n]["ratios"], summ[n]["good"]
        ax2.plot([i] * sum(gs), [q for q, g in zip(qs, gs) if g], "o", color="#1f77b4",
                 alpha=0.7, ms=5, label="clean, steady pair" if i == 0 else None)
        ax2.plot([i] * (len(qs) - sum(gs)), [q for q, g in zip(qs, gs) if not g], "x",
                 color="#d62728", alpha=0.7, ms=5, label="other pair" if i == 0 else None)
        if summ[n]["ratio"] is not None:
            ax2.plot([i - 0.25, i + 0.25], [summ[n]["ratio"]] * 2, color="black", lw=2)
    ax2.axhline(1.0, color="grey", ls=":")
    ax2.set_ylabel("local / none\n(per round; bar: median)")
    ax2.set_yscale("log")
    ax2.set_yticks([0.25, 0.5, 0.75, 1, 1.5, 2, 3])
    ax2.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    ax2.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax2.legend(fontsize=7, loc="upper right")
    ax2.set_xticks(range(len(nfs)))
    ax2.set_xticklabels(nfs, fontsize=9)
    ax2.grid(axis="y", alpha=0.3)
    fig.suptitle(f"REINFORCE-NFV: per-NF throughput with and without local resiliency "
                 f"(2 shared vCPUs, {meta['date'][:10]})", fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(a.out, "nf_suite.png"), dpi=110)
    plt.close(fig)


# ---- main -----------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--window", type=float, default=2.0, help="measured seconds")
    ap.add_argument("--warmup", type=float, default=1.0, help="seconds before the window")
    ap.add_argument("--max-other", type=float, default=10.0,
                    help="a pair is clean if others used at most this %% of a core")
    ap.add_argument("--retries", type=int, default=3,
                    help="re-measurements of a noisy or unsteady pair")
    ap.add_argument("--nfs", default=",".join(ALL_NFS))
    ap.add_argument("--traces", default=DEFAULT_TRACES)
    ap.add_argument("--nd-every", type=int, default=64, help="nondet -m count:N")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--quiet-wait", type=float, default=600,
                    help="seconds to wait for a quiet machine before starting")
    ap.add_argument("--quiet-wait-each", type=float, default=120,
                    help="seconds to wait for a quiet machine before each measurement")
    ap.add_argument("--no-plot", action="store_true")
    ap.add_argument("--replot", action="store_true",
                    help="only redraw OUT/nf_suite.png from OUT/nf_suite.csv")
    a = ap.parse_args()
    a.build = os.path.abspath(a.build)
    os.environ["ONVM_BUILD"] = a.build
    global lab, pcap, traces, OUR_PREFIX
    from onvm import lab, pcap, traces  # (they read ONVM_BUILD, set just above)

    if a.replot:
        return replot(a)
    L = lab.Lab("nf_suite")
    OUR_PREFIX = f"--file-prefix=it{os.getpid()}_".encode()
    noise = CpuNoise(f"it{os.getpid()}_")  # window(): steal, others' CPU
    probe = XCoreProbe(L)

    def on_signal(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)

    skipped, nfs = {}, []
    for nf in [x for x in a.nfs.split(",") if x]:
        if os.access(lab.nf_binary(nf), os.X_OK):
            nfs.append(nf)
        else:
            skipped[nf] = f"no binary {lab.nf_binary(nf)}"
            log(f"{nf}: {skipped[nf]}: left out")
    rows = []
    t_start = time.monotonic()
    try:
        trace = L.path("replay.pcap")
        tinfo = build_trace(a.traces.split(","), trace)
        log(f"replay set: {tinfo}")
        quiet, busy, others = wait_quiet(L, a.quiet_wait)
        quiet_line = (f"{'quiet' if quiet else 'NOT quiet'} at the start (CPU {100 * busy:.0f}% "
                      f"busy, others' DPDK processes: {' '.join(others) or 'none'})")
        failed = {}
        a.retried = 0
        for rnd in range(1, a.rounds + 1):
            for nf in nfs:
                if nf in failed:
                    continue
                modes = ("none", "local") if rnd % 2 else ("local", "none")
                for attempt in range(a.retries + 1):
                    pair = []
                    if a.quiet_wait_each > 0:
                        wait_quiet(L, a.quiet_wait_each, say=False)
                    probes = [probe()]
                    for mode in modes:
                        try:
                            row = measure(L, noise, a, nf, mode, rnd, trace)
                        except (lab.TestFailure, OSError, KeyError, ValueError) as e:
                            log(f"round {rnd} {nf} {mode} FAILED: {e}")
                            tail = "\n".join(L.nodes[-1].log().splitlines()[-15:]) \
                                if L.nodes else ""
                            log(f"manager log tail:\n{tail}")
                            failed[nf] = f"round {rnd} {mode}: {str(e).splitlines()[0]}"
                            break
                        row["attempt"] = attempt + 1
                        probes.append(probe())
                        row["xcore_rtt_before_ns"], row["xcore_rtt_after_ns"] = probes[-2:]
                        pair.append(row)
                        log(f"round {rnd} {nf:<13} {mode:<5}: {row['mpps']:.3f} Mpps "
                            f"(in {row['in_mpps']:.3f}, NF CPU {fmt(row['nf_cpu_pct'], 0)}%, "
                            f"{fmt(row['nf_ns_per_pkt'], 0)} ns/pkt, commit "
                            f"{fmt(row['commit_mean_ns'], 0)} ns, others' CPU "
                            f"{row['other_cpu_pct']:.0f}%, steal {row['steal_pct']:.0f}%"
                            + (f", {row['foreign']} foreign DPDK processes"
                               if row["foreign"] else "") + ")")
                    if nf in failed:
                        break
                    # A pair is clean when nobody else used more than --max-other
                    # percent of a core and no other DPDK process ran in either
                    # window; a noisy pair is measured again (up to --retries).
                    clean = all(x["other_cpu_pct"] <= a.max_other and not x["foreign"]
                                for x in pair)
                    # ... and steady when the host kept our vCPUs' placement
                    stdy = steady(probes)
                    for x in pair:
                        x["clean"], x["steady"] = int(clean), int(stdy)
                    if (clean and stdy) or attempt == a.retries:
                        rows.extend(pair)
                        break
                    a.retried += 1
                    others = "/".join(f"{x['other_cpu_pct']:.0f}" for x in pair)
                    rtts = "/".join(fmt(p, 0) for p in probes)
                    log(f"round {rnd} {nf}: {'noisy' if not clean else 'unsteady'} pair "
                        f"(others' CPU {others} %, cross-CPU round trip {rtts} ns), "
                        f"measuring it again")
        for nf, why in failed.items():
            skipped[nf] = f"failed: {why}"
            rows = [x for x in rows if x["nf"] != nf]
    finally:
        L.cleanup()
    foreign_rows = sum(1 for x in rows if x["foreign"])
    meta = {"date": time.strftime("%Y-%m-%d %H:%M:%S %z"), "elapsed": time.monotonic() - t_start,
            "commit": subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                                     capture_output=True, text=True).stdout.strip(),
            "traces": a.traces.replace(",", " + "), "trace": tinfo, "skipped": skipped,
            "quiet_line": quiet_line + (f"; others' DPDK processes ran in {foreign_rows} of "
                                        f"{len(rows)} windows" if foreign_rows else
                                        "; no other DPDK process in any window") +
            f"; {sum(1 for x in rows if x.get('clean'))} of {len(rows)} windows clean (others "
            f"<= {a.max_other:g} % of a core, no other DPDK process), {a.retried} noisy or unsteady pairs "
            f"measured again"}
    summ = summarize(rows, nfs)
    write_outputs(a, rows, summ, meta)


def replot(a):
    """The plot again from a run's CSV (its per-window rows) and summary."""
    import csv
    import re
    import tempfile
    rows = []
    with open(os.path.join(a.out, "nf_suite.csv")) as f:
        for r in csv.DictReader(f):
            if r["round"] == "median":
                continue
            x = {k: (None if v == "" else v) for k, v in r.items()}
            for k in COLS[2:]:
                if x.get(k) is not None:
                    x[k] = float(x[k]) if "." in x[k] else int(x[k])
            rows.append(x)
    with open(os.path.join(a.out, "nf_suite_summary.txt")) as f:
        head = f.readline()
    a.rounds = max(x["round"] for x in rows)
    nfs = list(dict.fromkeys(x["nf"] for x in rows))
    with tempfile.TemporaryDirectory() as d:
        tinfo = build_trace(a.traces.split(","), os.path.join(d, "t.pcap"))
    meta = {"date": re.match(r"nf_suite: (\S+ \S+)", head).group(1), "trace": tinfo}
    plot(a, summarize(rows, nfs), rows, meta)


lab = pcap = traces = None  # the onvm modules, imported by main() once ONVM_BUILD is set
OUR_PREFIX = b"--file-prefix=it_none_"

if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt as e:
        log(f"interrupted ({e or 'SIGINT'}); everything started was stopped and cleaned up")
        sys.exit(130)
