#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""A TCP connection's stall across a remote failover, over many failovers.

The lab of tests/integration/test_remote_tcp.py (python/onvm/tcp_lab.py):
a kernel HTTP server, the protected chain (predecessor, primary or standby
running basic_monitor, sink; each node in its own network namespace, veth
pairs driven by net_af_packet) carrying the server's data, a kernel client
whose ACKs go back on a direct veth.  Each round starts fresh nodes, starts
a download of the file, SIGKILLs the primary's manager and NF when a seeded
share of the file has been released, and at once asks the predecessor to
fail over (the operator's /onvm/remote/failover: detection is not part of
this figure, bench/bfd_detect.py measures BFD's).  Measured per failover,
all on CLOCK_MONOTONIC (the managers' clock; captures are converted):

  stall        the longest gap between two of the client's reads (each
               recv() timestamped) from just before the kill to the end:
               the time the application got no data -- what a user sees;
  wire gap     the longest gap between two data segments reaching the
               client's interface (dumpcap on c0, kernel timestamps);
  failover     the predecessor's failover_req_ns -> replay_end_ns, and the
               standby's first_out_ns (first output passing its TxTs);
  server RTO   the server socket's rto (ss -ti) just before the kill, and
               when the server sent data again after it (dumpcap on s0):
               its first retransmission and the intervals between them.

--hops adds captures on every link the data crosses (m_p into the primary,
p_s into the standby, k_s into the sink, s1: the client's ACKs into the
server), and for each round traces the segment the client lacked during
its stall at each hop (remote_tcp_stall_trace.txt).

--kill compares ways to kill the primary, interleaved round by round with
the same kill points: "node" (the default) SIGKILLs its manager and NF at
once and asks for the failover right after (onvm.lab Node.crash);
"manager" SIGKILLs the manager and reaps its NF before asking (Node.stop,
what test_remote_tcp.py did): an NF whose manager died may wait 5 s to be
unregistered, and Node.stop gives it 3 s, so the failover comes seconds
after the failure.

usage: bench/remote_tcp_stall.py [--rounds 20] [--seed 1] [--size-mb 64]
           [--kill-share 0.2,0.7] [--kill node,manager] [--hops] [--keep]
           [--out DIR] [--replot]
Writes remote_tcp_stall.csv, remote_tcp_stall_summary.txt and
remote_tcp_stall.png into bench/results/ (or --out).  Needs dumpcap (Debian's
tshark) and matplotlib for the plot (python3-matplotlib).
"""
import argparse
import csv
import hashlib
import os
import random
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
from onvm import lab, report  # noqa: E402
from onvm import tcp_lab as tl  # noqa: E402  (the lab's topology, client, captures)

FIELDS = ["round", "seed", "kill", "kill_share", "req_after_kill_ms", "rto_ms", "rtt_ms",
          "stall_ms", "stall_start_ms", "stall_end_ms", "wire_gap_ms", "wire_gap_start_ms",
          "failover_ms", "takeover_ms",
          "first_in_ms", "first_out_ms", "first_retrans_ms", "retrans_after_kill",
          "retrans_times_ms", "download_s", "ok", "replayed", "replay_rewinds",
          "replay_timeouts", "covered", "dup", "passed", "gap_drops", "ingress_gaps",
          "ingress_stale", "behind_events", "cap_dropped"]
HOPS = (("m", "m_p", "into the primary"), ("s", "s_p", "into the standby"),
        ("k", "k_s", "into the sink"), ("cli", "c0", "into the client"))


def ms(t, ref):
    return round((t - ref) / 1e6, 3) if t else ""


def one(L, ns, server_data, want, k, seed, kill, args):
    rnd = random.Random(seed * 1000 + k)
    tag = f"r{k}{kill[0]}"
    sink, standby, primary, pred = tl.nodes(L, ns, tag)
    tl.start(sink, standby, primary, pred)
    for n in (ns["srv"], ns["cli"]):  # no cached ssthresh/RTT from an earlier round
        lab.run_cmd(lab.in_netns(n, ["ip", "tcp_metrics", "flush", "all"]))
    caps = {"c0": tl.Capture(L, ns["cli"], "c0", L.path(f"c0{tag}.pcap"),
                             f"tcp src port {tl.PORT}"),
            "s0": tl.Capture(L, ns["srv"], "s0", L.path(f"s0{tag}.pcap"),
                             f"tcp src port {tl.PORT}")}
    if args.hops:
        for nk, ifn, _ in HOPS[:-1]:
            caps[ifn] = tl.Capture(L, ns[nk], ifn, L.path(f"{ifn}{tag}.pcap"))
        caps["s1"] = tl.Capture(L, ns["srv"], "s1", L.path(f"s1{tag}.pcap"),
                                f"tcp dst port {tl.PORT}")
    log_path = L.path(f"client{tag}.reads")
    client = tl.download(L, ns, want, log_path, name=f"client{tag}")
    share = rnd.uniform(*args.kill_share)
    frames_total = len(server_data) // 1448
    lab.wait_until(lambda: tl_remote(primary)["out_released"] >= share * frames_total or
                   client.poll() is not None, 120, f"{share:.2f} of the file released")
    lab.check(client.poll() is None, "the download ended before the failure")
    sock = tl.socket_info(ns["srv"])
    if kill == "node":  # the node dies whole; the failover is asked for at once
        t_kill = primary.crash()
    else:  # the manager SIGKILLed, its NFs reaped (up to 3 s), then the failover
        t_kill = time.monotonic_ns()
        primary.stop(sig=signal.SIGKILL)
    rep = pred.query("/onvm/remote/failover,web")
    lab.check(rep.get("status") == "ok", f"failover: {rep}")
    primary.stop()  # (reaped: nothing left running)
    try:
        rc = client.wait(120)
    except subprocess.TimeoutExpired:
        rc = None
    out = L.proc_log(client).strip().splitlines()
    p, s = tl_remote(pred), tl_remote(standby)
    for c in caps.values():
        c.stop()
    for node in (pred, standby, sink):
        node.stop()
    primary.remove_runtime()
    ok = rc == 0 and bool(out) and f"sha256 {want} ok True" in out[-1]
    L.expect(ok, f"round {k}: download: exit {rc}: {out[-1:] }")
    off = tl.mono_to_real()
    req = p["failover_req_ns"]
    reads = tl.read_log(log_path) if os.path.exists(log_path) else []
    end = reads[-1][0] if reads else t_kill
    stall, st_from, st_to = tl.gaps([t for t, _ in reads], t_kill - 50_000_000, end)
    c0 = [x for x in caps["c0"].segments(tl.PORT) if x.len > 0]
    wire, w0, _ = tl.gaps([x.t - off for x in c0], t_kill - 50_000_000, end)
    srv = caps["s0"].segments(tl.PORT)
    rtx = [x.t - off for x in tl.retransmissions(srv) if x.t - off >= t_kill]
    row = {"round": k, "seed": seed, "kill": kill, "kill_share": round(share, 3),
           "req_after_kill_ms": ms(req, t_kill),
           "rto_ms": sock.get("rto", ""), "rtt_ms": sock.get("rtt", ""),
           "stall_ms": round(stall / 1e6, 3), "stall_start_ms": ms(st_from, req),
           "stall_end_ms": ms(st_to, req), "wire_gap_ms": round(wire / 1e6, 3),
           "wire_gap_start_ms": ms(w0, req),
           "failover_ms": ms(p["replay_end_ns"], req),
           "takeover_ms": ms(s["replay_start_ns"], req), "first_in_ms": ms(s["first_in_ns"], req),
           "first_out_ms": ms(s["first_out_ns"], req),
           "first_retrans_ms": ms(rtx[0], req) if rtx else "",
           "retrans_after_kill": len(rtx),
           "retrans_times_ms": " ".join(f"{(t - req) / 1e6:.1f}" for t in rtx[:8]),
           "download_s": out[-1].split()[-1] if out else "", "ok": int(ok),
           "replayed": p["replayed"], "replay_rewinds": p["replay_rewinds"],
           "replay_timeouts": p["replay_timeouts"], "covered": s["ingress_replay_covered"],
           "dup": s["out_dup"], "passed": s["out_passed"], "gap_drops": s["replay_gap_drops"],
           "ingress_gaps": s["ingress_gaps"], "ingress_stale": s["ingress_stale"],
           "behind_events": p["behind_events"],
           "cap_dropped": sum(c.dropped or 0 for c in caps.values())}
    if args.hops:
        row["trace"] = trace(caps, off, req, t_kill, st_from, srv, p, s)
    return row


def tl_remote(node):
    return node.query("/onvm/remote")["web"]


def trace(caps, off, req, t_kill, stall_start, srv, p, s):
    """Where the segment that ended the stall -- the first byte the client
    lacked when it began -- was at each hop: every copy of it, in ms after
    the failover request (with the shim's timestamp and R for REPLAY on the
    predecessor's link)."""
    c0 = [x for x in caps["c0"].segments(tl.PORT) if x.len > 0]
    if not stall_start:
        return "no stall"
    seq = tl.rcv_next(c0, stall_start + off)
    rel = lambda x: f"{(x.t - off - req) / 1e6:+.2f}"
    lines = [f"  kill {(t_kill - req) / 1e6:+.2f} ms; the client lacked seq {seq} from "
             f"{(stall_start - req) / 1e6:+.2f} ms"]
    for name, segs in (("server s0 sent", srv),
                       ("primary m_p got", caps["m_p"].segments(tl.PORT)),
                       ("standby s_p got", caps["s_p"].segments(tl.PORT)),
                       ("sink k_s got", caps["k_s"].segments(tl.PORT)),
                       ("client c0 got", c0)):
        hits = [x for x in segs if x.seq == seq and x.len > 0]
        lines.append(f"  {name}: " + (", ".join(
            rel(x) + (f" (ts {x.shim_ts}{' R' if x.replay else ''})" if x.shim_ts else "")
            for x in hits) or "never"))
    acks = [x for x in caps["s1"].segments() if x.dport == tl.PORT and x.flags & 0x10]
    past = next((x for x in acks if x.t - off >= stall_start and x.ack != seq and
                 tl.seq_le(seq, x.ack)), None)
    lines.append(f"  the client's ACK passed it at {rel(past)} ms (ack {past.ack})" if past
                 else "  the client's ACK never passed it")
    lines.append(f"  pred: replayed ts {p['replay_from_ts']}..{p['replay_newest']}; standby: "
                 f"applied cut ts {s.get('applied_cut_ts')}")
    return "\n".join(lines)


KILLS = {"node": "the node killed whole, failover asked for at once (Node.crash)",
         "manager": "the manager killed, its NF reaped, then the failover (Node.stop: "
                    "test_remote_tcp.py before)"}


def summarize(rows, args, made):
    lines = [f"# bench/remote_tcp_stall.py --rounds {args.rounds} --seed {args.seed} "
             f"--size-mb {args.size_mb} --kill-share {args.kill_share[0]},{args.kill_share[1]} "
             f"--kill {','.join(args.kill)}{' --hops' if args.hops else ''}; times in ms; "
             "the stall is the longest gap between the client's reads from 50 ms before the "
             "kill to the end of the download; the failover's times are from its request",
             made]
    for kill in args.kill:
        rs = [r for r in rows if r["kill"] == kill]
        lines.append(f"kill {kill} ({KILLS.get(kill, kill)}), {len(rs)} failovers:")
        for f, what in (("stall_ms", "stall (longest gap between the client's reads)"),
                        ("wire_gap_ms", "wire gap (data segments reaching the client)"),
                        ("req_after_kill_ms", "kill -> failover request"),
                        ("failover_ms", "failover (request -> REPLAY_END)"),
                        ("first_out_ms", "request -> standby's first output"),
                        ("rto_ms", "server socket's RTO before the kill")):
            xs = [float(r[f]) for r in rs if r[f] != ""]
            if xs:
                lines.append(f"  {what:48s} n={len(xs):3d}  p50 {report.pct(xs, 50):9.1f}  "
                             f"p99 {report.pct(xs, 99):9.1f}  max {max(xs):9.1f}")
        st = [float(r["stall_ms"]) for r in rs]
        # The goal: the client waits at most one RTO longer than the
        # failover itself (request -> REPLAY_END) takes.
        over = [x - float(r["failover_ms"] or 0) for x, r in zip(st, rs)]
        within = sum(1 for x, r in zip(over, rs) if x <= float(r["rto_ms"] or 1000))
        lines.append(f"  {'stall less the failover (request -> REPLAY_END)':48s} n={len(over):3d}  "
                     f"p50 {report.pct(over, 50):9.1f}  p99 {report.pct(over, 99):9.1f}  "
                     f"max {max(over):9.1f}")
        early = sum(1 for r in rs if r["retrans_times_ms"] and
                    float(r["retrans_times_ms"].split()[0]) < 0)
        lines.append(f"  stalls within one RTO of the failover: {within} of {len(rs)}; over 1 s: "
                     f"{sum(1 for x in st if x > 1000)}; the server retransmitted before the "
                     f"failover was asked for: {early}; downloads whole and right: "
                     f"{sum(int(r['ok']) for r in rs)} of {len(rs)}")
    return "\n".join(lines)


def plot(rows, kills, path):
    try:
        plt = report.pyplot()
    except ImportError:
        print("matplotlib missing: no plot", file=sys.stderr)
        return
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2),
                                   gridspec_kw={"width_ratios": [2, 1]})
    marks = {"stall_ms": "o", "req_after_kill_ms": "x", "failover_ms": "s", "rto_ms": "_"}
    names = {"stall_ms": "stall", "req_after_kill_ms": "kill -> request",
             "failover_ms": "request -> REPLAY_END", "rto_ms": "server's RTO"}
    for i, kill in enumerate(kills):
        rs = [r for r in rows if r["kill"] == kill]
        for f, mk in marks.items():
            xs = [(r["round"] + 0.15 * i, float(r[f])) for r in rs
                  if r[f] != "" and float(r[f]) > 0]
            if xs:
                ax1.scatter([a for a, _ in xs], [b for _, b in xs], marker=mk, s=20,
                            color=f"C{i}", alpha=0.8 if f == "stall_ms" else 0.5,
                            label=f"{names[f]} ({kill})")
    ax1.set_yscale("log")
    ax1.set_xlabel("round (the same kill point for each way to kill)")
    ax1.set_ylabel("ms")
    ax1.legend(fontsize=6, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.16))
    ax1.set_title("per failover", fontsize=9)
    data = [[float(r["stall_ms"]) for r in rows if r["kill"] == kill] for kill in kills]
    ax2.boxplot(data, labels=[f"stall, kill {k}" for k in kills])
    ax2.set_yscale("log")
    ax2.tick_params(axis="x", labelsize=7)
    ax2.set_title("the client's stall (ms)", fontsize=9)
    fig.suptitle(f"TCP download across a remote failover: {len(rows)} SIGKILLed primaries",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def load(path):
    """The rows of a CSV this script wrote."""
    with open(path) as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        r["round"], r["ok"] = int(r["round"]), int(r["ok"])
    return rows


def write_summary(rows, args, out_dir, made=None):
    """`made`: the run's date and tree (None: a replot, which keeps the
    line the run wrote)."""
    path = os.path.join(out_dir, "remote_tcp_stall_summary.txt")
    if made is None:
        try:
            with open(path) as f:
                made = next((x.rstrip("\n") for x in f if x.startswith("# made ")), "")
        except OSError:
            made = ""
    text = summarize(rows, args, made or "# made: unknown (replotted)")
    print(text)
    with open(path, "w") as f:
        f.write(text + "\n")
    plot(rows, args.kill, os.path.join(out_dir, "remote_tcp_stall.png"))


def main(L, args):
    out_dir = args.out
    os.makedirs(out_dir, exist_ok=True)
    made = f"# made {time.strftime('%Y-%m-%d %H:%M')}, tree {report.repo_state()}"
    ns = tl.topology(L)
    data = random.Random(args.seed).randbytes(args.size_mb << 20)
    want = hashlib.sha256(data).hexdigest()
    server = tl.serve(L, ns, data)
    rows = []
    for k in range(args.rounds):  # the ways to kill interleaved: same kill points
        for kill in args.kill:
            rows.append(one(L, ns, data, want, k, args.seed, kill, args))
            r = rows[-1]
            report.log(f"round {k} ({kill}): stall {r['stall_ms']} ms (wire "
                       f"{r['wire_gap_ms']}), failover "
                       f"{r['failover_ms']} ms after the request {r['req_after_kill_ms']} ms "
                       f"after the kill, rto {r['rto_ms']}, retrans {r['retrans_times_ms']}, "
                       f"dup {r['dup']}, download {r['download_s']} s")
            if "trace" in r:
                print(r["trace"], file=sys.stderr, flush=True)
    server.send_signal(signal.SIGTERM)
    report.write_csv(os.path.join(out_dir, "remote_tcp_stall.csv"), FIELDS,
                     [{f: r[f] for f in FIELDS} for r in rows])
    write_summary(rows, args, out_dir, made)
    if args.hops:
        with open(os.path.join(out_dir, "remote_tcp_stall_trace.txt"), "w") as f:
            for r in rows:
                f.write(f"round {r['round']} ({r['kill']}): stall {r['stall_ms']} ms\n"
                        f"{r['trace']}\n")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=20,
                    help="rounds (default 20): a failover each per way to kill")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--size-mb", type=int, default=64, help="the file downloaded each round")
    ap.add_argument("--kill-share", type=lambda v: tuple(float(x) for x in v.split(",")),
                    default=(0.2, 0.7),
                    help="the primary is killed when a share of the file drawn in this "
                         "range has been released")
    ap.add_argument("--kill", type=lambda v: v.split(","), default=["node"],
                    help="comma-separated, interleaved round by round: node: the "
                         "primary's manager and NF SIGKILLed at once and the failover "
                         "asked for right after (Node.crash); manager: the "
                         "manager SIGKILLed, its NF reaped (Node.stop, up to 3 s), then "
                         "the failover -- what test_remote_tcp.py did before")
    ap.add_argument("--hops", action="store_true",
                    help="capture at every hop and trace the segment ending each stall")
    ap.add_argument("--keep", action="store_true",
                    help="keep the lab's directory (captures, logs): ONVM_IT_KEEP")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--replot", action="store_true",
                    help="the summary and the plot again from the CSV in --out (the other "
                         "options as the run had them), no lab")
    a = ap.parse_args()
    if set(a.kill) - set(KILLS):
        ap.error(f"--kill: {','.join(sorted(set(a.kill) - set(KILLS)))}: not one of "
                 f"{','.join(KILLS)}")
    if a.replot:
        write_summary(load(os.path.join(a.out, "remote_tcp_stall.csv")), a, a.out)
        sys.exit(0)
    if a.keep:
        os.environ["ONVM_IT_KEEP"] = "1"
    lab.run("remote_tcp_stall", lambda L: main(L, a))
