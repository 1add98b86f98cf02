#!/usr/bin/python3
"""Chain throughput of the platform vs dpdk-testpmd, measured in one run.

Set-ups (all 64-byte packets, every process started with --no-pci):

  null_testpmd       testpmd io-forwarding between net_null0 and net_null1 on one
                     lcore (CPU 1): the physical-limit reference for the node.
                     Packets forwarded per second, both directions summed.
  null_testpmd_copy  the same with net_null copy=1 (the PMD touches packet data).
  null_csmp          the peer: DPDK's own multi-process client/server example
                     (examples/multi_process/client_server_mp from the dpdk-doc
                     package, built here at the project's -O level), the design
                     OpenNetVM descends from.  mp_server polls net_null0 and
                     net_null1 on CPU 0 (its display lcore sleeps on CPU 1),
                     one mp_client on CPU 1 forwards each port's packets to the
                     other and transmits itself.  Packets forwarded per second,
                     both directions summed (its ports' tx).
  null_chain k       onvm_mgr (all units on CPU 0) polls net_null0 "gen" (which
                     generates packets as fast as it is polled), k simple_forward
                     NFs share CPU 1, the chain exits on net_null1 "sink" (which
                     frees them).  Throughput = delta of sink tx over the window.
                     Its ratio to null_csmp of the same round: ratio_vs_peer.
  memif_testpmd      closed loop over two memif links: testpmd "A" (client,
                     io mode, seeded with `start tx_first N`) <-> testpmd "B"
                     (server, io mode) forwarding a->b and b->a.
  memif_chain k      the same loop with onvm_mgr in place of testpmd B: chain
                     a -> k NFs -> b and chain b -> the same NFs -> a.
                     Throughput = packets testpmd A receives per second.

The net_null set-ups have exactly two busy pollers (SPEC section 8); the memif
chains cannot (testpmd A + manager + NFs), see bench/README.md.  Rounds are
interleaved (ref, copy, k1, k2, k3, memif ref, memif k1..k3, then again) and
the median over the repeats is reported.

usage: bench/chain_tput.py [--build DIR] [--window S] [--repeats N]
                           [--warmup S] [--out DIR] [--chains 1,2,3]
                           [--memif-chains 1,2,3] [--memif-nf-cpus C]
                           [--tx-first N] [--no-memif] [--no-peer] [--no-plot]
                           [--quiet-wait S] [--quiet-wait-each S]

Writes OUT/chain_tput.csv (one row per measurement plus median rows),
OUT/chain_tput_detail.csv (manager counters: where packets were dropped),
OUT/chain_tput_summary.txt, OUT/chain_tput.png and OUT/machine.txt.
"""
import argparse, os, shutil, signal, statistics, subprocess, sys, time, types

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from onvm import report, tput  # noqa: E402
from onvm.noise import XCoreProbe  # noqa: E402
from onvm.noise import steady as probes_agree  # noqa: E402  ("steady" is a local below)
from onvm.report import log  # noqa: E402
from onvm.telemetry import Telemetry, socket_path  # noqa: E402
from onvm.tput import (TESTPMD, BenchError, Manager, Testpmd, build_csmp,  # noqa: E402
                       foreign_dpdk, null_cfg, run_main, run_null_testpmd, wait_quiet)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DROP_REASONS = ["nf_action", "no_chain", "no_instance", "bad_service", "bad_port", "bad_action",
                "chain_end", "ring_full", "port_tx_full", "nf_gone"]


# ---- the manager's counters over a window ----------------------------------------------------

def manager_detail(setup, k, rep, s0, s1, in_port, out_port):
    dt = s1["t"] - s0["t"]
    p0, p1 = s0["/onvm/ports"], s1["/onvm/ports"]
    row = {"setup": setup, "chain_len": k, "repeat": rep, "window_s": round(dt, 3),
           "in_rx_mpps": (p1[in_port]["rx"] - p0[in_port]["rx"]) / dt / 1e6,
           "out_tx_mpps": (p1[out_port]["tx"] - p0[out_port]["tx"]) / dt / 1e6,
           "port_tx_drop": sum(p1[n]["tx_drop"] - p0[n]["tx_drop"] for n in p1)}
    for r in DROP_REASONS:
        row["drop_" + r] = s1["/onvm/drops"].get(r, 0) - s0["/onvm/drops"].get(r, 0)
    n0, n1 = s0["/onvm/nfs"], s1["/onvm/nfs"]
    keys = sorted(n1, key=int)
    for f in ("rx", "enqueue_drops", "tx_wait", "wakeups"):
        row["nf_" + f] = "/".join(str(n1[i][f] - n0.get(i, {}).get(f, 0)) for i in keys)
    row["nf_rx_ring_end"] = "/".join(str(n1[i]["rx_ring_count"]) for i in keys)
    row["nf_tx_ring_end"] = "/".join(str(n1[i]["tx_ring_count"]) for i in keys)
    row["pool_in_use_end"] = s1["/onvm/pool"]["in_use"]
    return row


# ---- the set-ups --------------------------------------------------------------------------

def run_null_csmp(lab, a):
    prefix = lab.prefix()
    log_path = os.path.join(lab.workdir, f"{prefix}.log")
    out = open(log_path, "w")
    srv = lab.popen([a.csmp["mp_server"], "-l", "0,1", f"--file-prefix={prefix}", "--no-pci",
                     "--vdev", "net_null0,size=64", "--vdev", "net_null1,size=64",
                     "--", "-p", "0x3", "-n", "1"],
                    stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    cli = None
    tel = Telemetry(socket_path(prefix))
    try:
        deadline = time.monotonic() + 30
        while True:  # its ports are up once its telemetry answers for them
            try:
                tel.query("/ethdev/stats,1")
                break
            except (OSError, ValueError):
                tel.close()
                if srv.poll() is not None or time.monotonic() > deadline:
                    raise BenchError(f"mp_server {prefix} did not start:\n"
                                     + open(log_path).read()[-2000:])
                time.sleep(0.1)
        cli = lab.popen(["taskset", "-c", "1", a.csmp["mp_client"], "-l", "1",
                         "--proc-type=secondary", f"--file-prefix={prefix}", "--no-pci",
                         "--", "-n", "0"],
                        stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

        def tx():
            t = time.monotonic()
            n = 0
            for port in (0, 1):
                n += tel.query(f"/ethdev/stats,{port}")["opackets"]
            return n, (t + time.monotonic()) / 2

        time.sleep(a.warmup)
        if cli.poll() is not None:
            raise BenchError(f"mp_client {prefix} exited:\n" + open(log_path).read()[-2000:])
        n0, t0 = tx()
        lab.window(a.window)
        n1, t1 = tx()
        if n1 == n0:
            raise BenchError(f"client_server_mp {prefix} forwarded nothing")
        return (n1 - n0) / (t1 - t0) / 1e6, None
    finally:
        tel.close()
        if cli is not None:
            lab.stop(cli)
        # SIGTERM: mp_server's SIGINT handler calls exit() from the signal
        # handler and now and then hangs in it (then 15 s to the SIGKILL).
        lab.cleanup_one(srv, prefix, sig=signal.SIGTERM)
        out.close()


def run_null_chain(lab, a, k, rep, split=False):
    prefix = lab.prefix()
    m = Manager(lab, a.build, prefix, null_cfg(prefix, k, split))
    try:
        m.wait_ready(60)
        time.sleep(a.warmup)
        s0 = m.snapshot()
        lab.window(a.window)
        s1 = m.snapshot()
        det = manager_detail("null_chain_split" if split else "null_chain", k, rep, s0, s1,
                             "gen", "sink")
        return det["out_tx_mpps"], det
    finally:
        m.close()
        lab.cleanup_one(m.p, prefix, manager=True)


def memif_client(lab, prefix, sa, sb):
    # main lcore on CPU 0 (sleeps in the command line), forwarding lcore on CPU 1
    tp = Testpmd(lab, prefix, "0-1",
                 [f"net_memif0,role=client,socket={sa},id=0",
                  f"net_memif1,role=client,socket={sb},id=0"],
                 args=["--forward-mode=io"])
    tp.nports = 2
    return tp


def memif_measure(lab, tp, a):
    tp.wait_for(r"testpmd> ", 30)
    tp.cmd(f"start tx_first {a.tx_first}")
    time.sleep(a.warmup)
    tp.show_stats()
    lab.window(a.window)
    st = tp.show_stats()
    return sum(s["rx_pps"] for s in st.values()) / 1e6


def run_memif_testpmd(lab, a):
    pb = lab.prefix()
    sa, sb = lab.sock(pb, "a"), lab.sock(pb, "b")
    # testpmd B stands in for the node: forwarding lcore on CPU 0, main lcore on CPU 1
    b = Testpmd(lab, pb, "0-1", [f"net_memif0,role=server,socket={sa},id=0",
                                 f"net_memif1,role=server,socket={sb},id=0"],
                main_lcore=1, args=["--forward-mode=io"])
    b.nports = 2
    pa = None
    tp = None
    try:
        b.wait_for(r"testpmd> ", 30)
        b.cmd("start")
        pa = lab.prefix()
        tp = memif_client(lab, pa, sa, sb)
        mpps = memif_measure(lab, tp, a)
        tp.quit()
        b.quit()
        return mpps, None
    finally:
        if tp is not None:
            lab.cleanup_one(tp.p, pa)
        lab.cleanup_one(b.p, pb, (sa, sb))


def memif_cfg(prefix, k, sa, sb, nf_cpus):
    svc = list(range(1, k + 1))
    return {"node": {"name": "tput", "file_prefix": prefix, "lcores": "0@0"},
            "pool": {"mbufs": 32767}, "nf_defaults": {"cpus": nf_cpus},
            "startup": {"link_wait_ms": 20000},
            "ports": [{"name": "a", "dev": f"net_memif0,role=server,socket={sa},id=0"},
                      {"name": "b", "dev": f"net_memif1,role=server,socket={sb},id=0"}],
            "nfs": [{"binary": "simple_forward", "service": i} for i in svc],
            "chains": [{"name": "ab", "services": svc, "ingress_port": "a", "exit_port": "b"},
                       {"name": "ba", "services": svc, "ingress_port": "b", "exit_port": "a"}],
            "stats": {"interval_ms": 0}}


def run_memif_chain(lab, a, k, rep):
    pm = lab.prefix()
    sa, sb = lab.sock(pm, "a"), lab.sock(pm, "b")
    m = Manager(lab, a.build, pm, memif_cfg(pm, k, sa, sb, a.memif_nf_cpus))
    pa = None
    tp = None
    try:
        m.wait_log("port 1 'b'", 30)  # memif sockets are abstract: no file to wait for
        pa = lab.prefix()
        tp = memif_client(lab, pa, sa, sb)
        m.wait_ready(30)
        tp.wait_for(r"testpmd> ", 30)
        tp.cmd(f"start tx_first {a.tx_first}")
        time.sleep(a.warmup)
        tp.show_stats()
        s0 = m.snapshot()
        lab.window(a.window)
        st = tp.show_stats()
        s1 = m.snapshot()
        tp.quit()
        det = manager_detail("memif_chain", k, rep, s0, s1, "a", "b")
        # both directions: a->b and b->a
        p0, p1, dt = s0["/onvm/ports"], s1["/onvm/ports"], s1["t"] - s0["t"]
        det["in_rx_mpps"] = sum(p1[n]["rx"] - p0[n]["rx"] for n in p1) / dt / 1e6
        det["out_tx_mpps"] = sum(p1[n]["tx"] - p0[n]["tx"] for n in p1) / dt / 1e6
        return sum(s["rx_pps"] for s in st.values()) / 1e6, det
    finally:
        m.close()
        if tp is not None:
            lab.cleanup_one(tp.p, pa)
        lab.cleanup_one(m.p, pm, (sa, sb), manager=True)


# ---- output -------------------------------------------------------------------------------

REFS = {"null_testpmd": None, "null_testpmd_copy": "null_testpmd", "null_csmp": "null_testpmd",
        "null_chain": "null_testpmd", "null_chain_split": "null_testpmd", "memif_testpmd": None,
        "memif_chain": "memif_testpmd"}
CHAINS = ("null_chain", "null_chain_split")  # compared with the peer


NEAR_NS = 150  # cross-CPU round trip below this: the host's near placement


def write_outputs(a, results, details, noise, elapsed, probe_rows=None):
    """results: {(setup, k): {rep: mpps}}; probe_rows: {(setup, k, rep): (cross-CPU
    round trip before the window, after)}.  A chain's ratio to the peer of the same
    round counts only if the four probes around the two windows agree (steady: one
    placement of our vCPUs for both); all pairs if none was steady."""
    probe_rows = probe_rows or {}

    def steady_pair(setup, k, rep):
        pr, pp = probe_rows.get((setup, k, rep)), probe_rows.get(("null_csmp", 0, rep))
        return bool(pr and pp and probes_agree(list(pr) + list(pp)))
    os.makedirs(a.out, exist_ok=True)
    results = {key: reps for key, reps in results.items() if reps}
    rows = []
    med = {}
    for (setup, k), reps in results.items():
        ref = REFS[setup]
        ratios = []
        for rep in sorted(reps):
            mpps = reps[rep]
            rmpps = results.get((ref, 0), {}).get(rep) if ref else None
            ratio = mpps / rmpps if rmpps else None
            copy = results.get(("null_testpmd_copy", 0), {}).get(rep)
            rc = mpps / copy if setup in CHAINS and copy else None
            peer = results.get(("null_csmp", 0), {}).get(rep)
            rp = mpps / peer if setup in CHAINS and peer else None
            if ratio is not None:
                ratios.append(ratio)
            rows.append((setup, k, rep, mpps, ref or "", rmpps, ratio, rc)
                        + noise.get((setup, k, rep), (None, None)) + (rp,)
                        + probe_rows.get((setup, k, rep), (None, None))
                        + (steady_pair(setup, k, rep) if setup in CHAINS else None,))
        vals = list(reps.values())
        mref = statistics.median(results[(ref, 0)].values()) if ref and (ref, 0) in results \
            else None
        mcopy = results.get(("null_testpmd_copy", 0))
        mrc = (statistics.median([reps[r] / mcopy[r] for r in reps if r in mcopy])
               if setup in CHAINS and mcopy else None)
        mpeer = results.get(("null_csmp", 0))
        paired = [r for r in reps if mpeer and r in mpeer]
        steady = [r for r in paired if steady_pair(setup, k, r)]
        mrp = (statistics.median([reps[r] / mpeer[r] for r in (steady or paired)])
               if setup in CHAINS and paired else None)
        m = (setup, k, "median", statistics.median(vals), ref or "", mref,
             statistics.median(ratios) if ratios else None, mrc,
             max((noise.get((setup, k, r), (0.0, 0.0))[0] for r in reps), default=None),
             max((noise.get((setup, k, r), (0.0, 0.0))[1] for r in reps), default=None),
             mrp, len(steady) if setup in CHAINS and paired else None)
        med[(setup, k)] = (m, min(vals), max(vals))
        rows.append(m)

    def f(x, nd=3):
        return "" if x is None else (f"{x:.{nd}f}" if isinstance(x, float) else str(x))

    with open(os.path.join(a.out, "chain_tput.csv"), "w") as fh:
        fh.write("setup,chain_len,repeat,mpps,reference,reference_mpps,ratio,ratio_vs_copy_ref,"
                 "other_cpu_pct,steal_pct,ratio_vs_peer,xcore_before_ns,xcore_after_ns,"
                 "steady_vs_peer\n")
        for r in rows:
            extra = r[11:] if len(r) > 12 and r[2] != "median" else (None, None, None)
            fh.write(",".join([r[0], str(r[1]), str(r[2]), f(r[3]), r[4], f(r[5]), f(r[6], 4),
                               f(r[7], 4), f(r[8], 1), f(r[9], 1), f(r[10], 4),
                               f(extra[0], 0), f(extra[1], 0),
                               "" if extra[2] is None else str(int(extra[2]))]) + "\n")
    if details:
        cols = list(details[0].keys())
        with open(os.path.join(a.out, "chain_tput_detail.csv"), "w") as fh:
            fh.write(",".join(cols) + "\n")
            for d in details:
                fh.write(",".join(f(d.get(c)) for c in cols) + "\n")
    summary = ["setup              k  median_mpps  (min..max)        ratio (median of per-round)"]
    for (setup, k), (m, lo, hi) in med.items():
        summary.append(f"{setup:<19}{k:<3}{m[3]:>10.3f}  ({lo:.3f}..{hi:.3f})"
                       f"{'':>6}{'' if m[6] is None else f'{m[6]:.4f}'}"
                       f"{'' if m[7] is None else f'  (vs copy=1 ref {m[7]:.4f})'}"
                       f"{'' if m[10] is None else f'  (vs client_server_mp {m[10]:.4f}, {m[11]} steady pairs)'}"
                       f"   [others' CPU up to {m[8]:.0f}%, steal up to {m[9]:.0f}%]")
    rounds = sorted({(r[2], r[11], r[12]) for r in rows if r[2] != "median" and len(r) > 12
                     and r[0] == "null_csmp"}, key=lambda x: x[0])
    if rounds:
        summary.append("the peer's windows (cross-CPU round trip before -> after): " + ", ".join(
            f"round {rep}: {'near' if (p0 or 1e9) < NEAR_NS else 'far'} {f(p0, 0)} -> {f(p1, 0)} ns"
            for rep, p0, p1 in rounds))
    summary.append(f"total run time {elapsed:.0f}s")
    with open(os.path.join(a.out, "chain_tput_summary.txt"), "w") as fh:
        fh.write("\n".join(summary) + "\n")
    print("\n".join(summary))
    if not a.no_plot:
        plot(a, med)


def plot(a, med):
    plt = report.pyplot()
    import matplotlib.ticker

    groups = [("net_null: node is its own generator and sink",
               [("null_testpmd", 0, "testpmd io\n(reference)"),
                ("null_testpmd_copy", 0, "testpmd io\ncopy=1"),
                ("null_csmp", 0, "client_server\n_mp (peer)"),
                ("null_chain", 1, "chain\n1 NF"), ("null_chain", 2, "chain\n2 NFs"),
                ("null_chain", 3, "chain\n3 NFs")] +
               [("null_chain_split", k, f"chain {k} NF{'s' if k > 1 else ''},\nTX unit\non CPU 1")
                for k in a.split_chains]),
              ("memif loop: testpmd generator <-> node",
               [("memif_testpmd", 0, "testpmd\n<-> testpmd\n(reference)")] +
               [("memif_chain", k, f"testpmd\n<-> chain\n{k} NF{'s' if k > 1 else ''}")
                for k in a.memif_chains])]
    groups = [(t, [b for b in bars if (b[0], b[1]) in med]) for t, bars in groups]
    groups = [g for g in groups if g[1]]
    fig, axes = plt.subplots(1, len(groups), figsize=(6.5 * len(groups), 5.2), squeeze=False,
                             gridspec_kw={"width_ratios": [len(g[1]) for g in groups]})
    for ax, (title, bars) in zip(axes[0], groups):
        xs = range(len(bars))
        meds = [med[(s, k)][0][3] for s, k, _ in bars]
        los = [m - med[(s, k)][1] for (s, k, _), m in zip(bars, meds)]
        his = [med[(s, k)][2] - m for (s, k, _), m in zip(bars, meds)]
        colors = ["#7f7f7f" if "testpmd" in s else "#ff7f0e" if s == "null_csmp" else "#1f77b4"
                  for s, _, _ in bars]
        ax.bar(xs, meds, yerr=[los, his], capsize=4, color=colors)
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_xticks(list(xs))
        ax.set_xticklabels([b[2] for b in bars], fontsize=9)
        ax.set_title(title, fontsize=10)
        ax.set_ylabel("Mpps (64 B), log scale")
        ax.set_ylim(max(min(meds), 0.01) / 3, max(med[(s, k)][2] for s, k, _ in bars) * 4)
        for x, (s, k, _), m in zip(xs, bars, meds):
            r = med[(s, k)][0][6]
            label = f"{m:.2f}" + (f"\n{100 * r:.1f}% of ref" if r is not None else "")
            ax.text(x, med[(s, k)][2] * 1.12, label, ha="center", va="bottom", fontsize=8)
        ax.grid(axis="y", which="both", alpha=0.3)
    fig.suptitle(f"REINFORCE-NFV chain throughput vs dpdk-testpmd, 2 shared vCPUs "
                 f"(median of {a.repeats}, bars: min..max; {time.strftime('%Y-%m-%d')})",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(a.out, "chain_tput.png"), dpi=110)
    plt.close(fig)


def measure(lab, a, setup, k, rep):
    if setup == "null_testpmd":
        return run_null_testpmd(lab, a, copy=False)
    if setup == "null_testpmd_copy":
        return run_null_testpmd(lab, a, copy=True)
    if setup == "null_csmp":
        return run_null_csmp(lab, a)
    if setup == "null_chain":
        return run_null_chain(lab, a, k, rep)
    if setup == "null_chain_split":
        return run_null_chain(lab, a, k, rep, split=True)
    if setup == "memif_testpmd":
        return run_memif_testpmd(lab, a)
    return run_memif_chain(lab, a, k, rep)


# ---- main -----------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--window", type=float, default=5.0, help="measured seconds per run")
    ap.add_argument("--warmup", type=float, default=2.0, help="seconds before the window")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(REPO, "bench", "results"))
    ap.add_argument("--chains", default="1,2,3", help="net_null chain lengths")
    ap.add_argument("--memif-chains", default="1,2,3", help="memif chain lengths")
    ap.add_argument("--split-chains", default="1,2,3",
                    help="net_null chain lengths with the TX unit on the NFs' CPU")
    ap.add_argument("--memif-nf-cpus", default="0",
                    help="nf_defaults.cpus in the memif set-up (testpmd polls CPU 1)")
    ap.add_argument("--tx-first", type=int, default=16,
                    help="bursts of 32 packets per port seeding the memif loop")
    ap.add_argument("--no-memif", action="store_true")
    ap.add_argument("--no-peer", action="store_true",
                    help="leave out client_server_mp (needs the dpdk-doc package)")
    ap.add_argument("--no-plot", action="store_true")
    ap.add_argument("--quiet-wait", type=float, default=60,
                    help="seconds to wait for an idle machine before starting")
    ap.add_argument("--quiet-wait-each", type=float, default=0,
                    help="seconds to wait for an idle machine before each measurement "
                         "(default 0: no check)")
    a = ap.parse_args()
    a.build = os.path.abspath(a.build)
    a.chains = [int(x) for x in a.chains.split(",") if x]
    a.split_chains = [int(x) for x in a.split_chains.split(",") if x]
    a.memif_chains = [] if a.no_memif else [int(x) for x in a.memif_chains.split(",") if x]
    if not os.access(os.path.join(a.build, "onvm_mgr", "onvm_mgr"), os.X_OK):
        raise SystemExit(f"no onvm_mgr in {a.build}; build with ninja -C {a.build}")

    workdir, lab = tput.start("chain_tput")
    if not a.no_peer:
        build_csmp(a)
    plan = ([("null_testpmd", 0), ("null_testpmd_copy", 0)]
            + ([] if a.no_peer else [("null_csmp", 0)]) + [("null_chain", k) for k in a.chains]
            + [("null_chain_split", k) for k in a.split_chains])
    if a.memif_chains:
        plan += [("memif_testpmd", 0)] + [("memif_chain", k) for k in a.memif_chains]
    results = {s: {} for s in plan}
    probe_rows = {}  # (setup, k, rep): (cross-CPU round trip before the window, after)
    details = []
    noise = {}
    t_start = time.monotonic()
    ok = False
    try:
        busy, others = wait_quiet(lab, a.quiet_wait)
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "machine.txt"), "w") as fh:
            fh.write(report.machine_txt(
                a.build, TESTPMD, busy, others,
                f"window {a.window}s, warm-up {a.warmup}s, repeats {a.repeats}, "
                f"memif tx_first {a.tx_first}, memif NF cpus {a.memif_nf_cpus}"))
        probe = XCoreProbe(types.SimpleNamespace(
            path=lambda name: os.path.join(workdir, name)))
        for rep in range(1, a.repeats + 1):
            # The host moves our vCPUs between placements whose cross-CPU
            # latency differs ~5x, and every set-up here is bound by it: a
            # probe between windows tells which one each window had, and a
            # chain's ratio to the peer counts only if the probes around both
            # windows agree (write_outputs).
            probes = [probe()]
            for setup, k in plan:
                if a.quiet_wait_each > 0:
                    wait_quiet(lab, a.quiet_wait_each, sample=0.5, say=False)
                others = foreign_dpdk(lab)
                t0 = time.monotonic()
                try:
                    mpps, det = measure(lab, a, setup, k, rep)
                except BenchError as e:
                    log(f"round {rep} {setup} k={k} FAILED: {e}")
                    probes.append(probe())
                    continue
                probes.append(probe())
                results[(setup, k)][rep] = mpps
                probe_rows[(setup, k, rep)] = (probes[-2], probes[-1])
                noise[(setup, k, rep)] = (lab.last_foreign_cpu, lab.last_steal)
                if det is not None:
                    det["other_dpdk"] = " ".join(others)
                    details.append(det)
                log(f"round {rep} {setup} k={k}: {mpps:.3f} Mpps ({time.monotonic() - t0:.1f}s, "
                    f"steal {lab.last_steal:.0f}%, "
                    f"other processes used {lab.last_foreign_cpu:.0f}% of a core meanwhile"
                    + (f": {lab.last_foreign_top})" if lab.last_foreign_top else ")")
                    + (f"  [other DPDK runtime dirs: {' '.join(others)}]" if others else "")
                    + f"  [cross-CPU round trip {report.fmt(probes[-2], 0)} -> "
                      f"{report.fmt(probes[-1], 0)} ns]")
        ok = True
    finally:
        lab.cleanup_all()
        shutil.rmtree(workdir, ignore_errors=True) if ok else log(f"logs kept in {workdir}")
    write_outputs(a, results, details, noise, time.monotonic() - t_start, probe_rows)


if __name__ == "__main__":
    run_main(main)
