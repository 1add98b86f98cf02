#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""Local resiliency, measured: failover time over many kills, the cost of
`local` mode against no resiliency (same run), and the standby's CPU use.

Set-up (at most two busy pollers, SPEC §8): the manager on CPU 0 with two
net_null ports (its RX generates 64-byte packets, its TX frees them), one
stateful NF on CPU 1: test_nf -S, which touches and updates a packet/byte
counter region for every packet, so every batch commits one chunk.

1. Throughput: the same node with "resiliency": "none" and "local",
   interleaved rounds, Mpps from the sink port's tx over a window.  Added
   latency: in local mode every packet waits for its batch's state commit
   between processing and emitting; libnf times each commit (TSC) and the
   NF's telemetry gives mean and max.
2. Failover: with "local" and traffic flowing, crash the active N times, at
   random moments once a fresh standby is parked, alternating two deaths: on
   SIGUSR1 the test NF SIGKILLs itself mid-batch (the kernel wakes the standby
   once the process is gone), on SIGUSR2 it writes through NULL there (a bug:
   libnf's SIGSEGV handler fences the process and wakes the standby at once);
   either way it records the time just before (test_nf -F processed:usr1 -D
   FILE).  For each crash: the standby's wake-up and its first packet after
   promotion minus the time of death, all CLOCK_MONOTONIC.
3. Standby CPU: /proc accounting of the parked standby over a window while
   the active runs at full load.
3b. Standby relaunch: the parked standby is SIGKILLed and the manager starts
   a fresh one (fork/exec); the sink's longest pause between TX bursts over a
   window around it, against the same window without a relaunch.
4. Kernel floor, same run: bench/robust_wake (no DPDK) -- robust-mutex wake
   and pidfd readiness after SIGKILL of a plain process, 0 and 256 MB of
   hugetlbfs mapped.

usage: bench/local_resiliency.py [--build DIR] [--kills N] [--window S] [--rounds R]
Writes bench/results/local_failover.csv, local_tput.csv, local_commit.csv,
local_floor.csv, local_relaunch.csv, local_summary.txt and local_resiliency.png.
"""
import argparse
import os
import random
import signal
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
from onvm import containers, lab  # noqa: E402  (the harness: nodes, clean-up; container NFs)
from onvm.report import pct, pyplot  # noqa: E402
from onvm.tput import stateful_cfg  # noqa: E402  (the node)


# How the active dies, alternately: SIGKILL (the kernel's robust-list walk at
# exit wakes the standby) and its own bug, SIGSEGV (libnf's handler does).
DEATHS = ("sigkill", "sigsegv")


def mpps(node, window):
    a = node.port("sink")["tx"]
    t0 = time.monotonic()
    time.sleep(window)
    b = node.port("sink")["tx"]
    return (b - a) / (time.monotonic() - t0) / 1e6


def proc_cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(L, a):
    tput, commit = [], []
    for r in range(a.rounds):
        for mode in ("none", "local"):
            node = L.node(f"tput-{mode}-{r}", stateful_cfg(lab.TEST_NF, mode)).start()
            time.sleep(2)
            v = mpps(node, a.window)
            nf = node.nf_by(service=1)[0]
            node.stop()
            tput.append((mode, r, v))
            if mode == "local":
                commit.append((nf["state_commit_mean_ns"], nf["state_commit_max_ns"]))
            print(f"round {r} {mode}: {v:.3f} Mpps", flush=True)

    kills, standby_cpu, info = [], None, {}
    # the kills, split over the placements and runtimes
    per = -(-a.kills // (len(a.placements) * len(a.runtimes)))
    for placement in a.placements:
        for runtime in a.runtimes:
            rows, cpu, info = failovers(L, a, placement, per, standby_cpu is None, runtime)
            kills += rows
            standby_cpu = cpu if standby_cpu is None else standby_cpu
    relaunch = relaunch_gaps(L, a)
    floor = kernel_floor(a)
    return tput, commit, standby_cpu, kills, info, floor, relaunch


def failovers(L, a, placement, n, measure_standby_cpu, runtime="process"):
    """n crashes of the active (alternating DEATHS) with its standby parked on
    `placement` ("": the default standby_cpus, the CPUs the actives do not
    use; else a CPU list, e.g. the active's own); the NF and its standby as
    processes, or (runtime "container") each in a podman container of the NF
    image (docs/operator-guide.md, "NFs in containers")."""
    # On tmpfs: test_nf stores the time of death into the file mapped, and a
    # store into an ext4 page that writeback has cleaned takes a
    # write-protect fault into the file system (~30 us), counted as failover.
    # In a directory: a container NF gets it as its volume.
    death_dir = f"/dev/shm/onvm-bench-death-{os.getpid()}"
    death_file = os.path.join(death_dir, "t")
    os.makedirs(death_dir, exist_ok=True)
    L.extra_dirs.append(death_dir)  # removed at clean-up
    cfg = stateful_cfg(lab.TEST_NF, "local", ["-F", "processed:usr1", "-D", death_file])
    if placement:
        cfg["nf_defaults"]["standby_cpus"] = placement
    if runtime == "container":
        cfg = containers.containerize(cfg, containers.nf_image(),
                                      volumes={0: [f"{death_dir}:{death_dir}"]})
        cfg["nfs"][0]["container"]["path"] = "/nf/bin/test_nf"
    node = L.node(f"failover-{runtime}-sb{placement or 'default'}", cfg).start()
    where = placement or "default"

    def nf():
        return node.nf_by(service=1)[0]

    time.sleep(1)
    standby_cpu = None
    if measure_standby_cpu:
        sb = nf()["standby_pid"]
        c0 = proc_cpu_s(sb)
        t0 = time.monotonic()
        time.sleep(a.window)
        standby_cpu = 100.0 * (proc_cpu_s(sb) - c0) / (time.monotonic() - t0)
        print(f"parked standby: {standby_cpu:.2f} % of a core while the active runs",
              flush=True)

    kills = []
    rng = random.Random(a.seed)
    for k in range(n):
        death = DEATHS[k % len(DEATHS)]
        cur = lab.wait_until(lambda: (lambda v: v if v["standby_parked"] and
                                      v["failovers"] == k else None)(nf()),
                             60, f"standby parked before kill {k + 1}")
        # At a random moment of the traffic, not right after the standby
        # parked (a fresh standby's start-up still loads the machine).
        time.sleep(rng.uniform(0.05, 0.3))
        # The active crashes itself in the middle of its next batch and
        # stores the time just before: the time of death on the NF's own
        # CPU, as for a real crash.  A kill() from here would add however
        # long the victim waits to be scheduled to receive it.
        os.kill(cur["pid"], signal.SIGUSR1 if death == "sigkill" else signal.SIGUSR2)
        after = lab.wait_until(lambda: (lambda v: v if v["failovers"] == k + 1 and
                                        v["failover_first_pkt_ns"] > v["failover_wake_ns"]
                                        else None)(nf()),
                               30, f"failover {k + 1}")
        t_death = int(open(death_file).read())
        handed = after["crash_handoffs"] - cur["crash_handoffs"]
        if handed != (1 if death == "sigsegv" else 0):
            raise RuntimeError(f"kill {k + 1} ({death}): {handed} crash hand-overs")
        kills.append((k + 1, death, (after["failover_wake_ns"] - t_death) / 1000,
                      (after["failover_first_pkt_ns"] - t_death) / 1000,
                      (after["crash_handoff_ns"] - t_death) / 1000 if handed else 0.0, where,
                      runtime))
    info = node.info()
    node.stop()
    return kills, standby_cpu, info


def relaunch_gaps(L, a):
    """What a standby relaunch costs forwarding.  The parked standby is
    SIGKILLed and the manager starts a fresh one (fork/exec, no failover);
    over a window around it: the manager's data lcore's longest pass over its
    units (/onvm/lcores: a fork or any other blocking call made by the data
    path shows there) and the sink's longest pause between TX bursts, against
    the same window without a relaunch, in turn.  Standbys start and park on
    CPU 1 here, with the NF, so that CPU 0 runs the manager's data lcore alone
    and what is measured is the data path, not the scheduler sharing CPU 0
    with a starting standby (the default placement does share it)."""
    cfg = stateful_cfg(lab.TEST_NF, "local")
    if a.relaunch_standby_cpus:
        cfg["nf_defaults"]["standby_cpus"] = a.relaunch_standby_cpus
    node = L.node("relaunch", cfg).start()
    rows = []

    def window():
        node.query("/onvm/ports/gap_reset")
        return time.monotonic()

    def read():
        return node.query("/onvm/lcores")["0"], node.port("sink")["tx_gap_max_us"]

    time.sleep(1)
    for k in range(a.relaunches):
        v = lab.wait_until(lambda: (lambda x: x if x["standby_parked"] else None)(
            node.nf_by(service=1)[0]), 60, f"standby parked before relaunch {k + 1}")
        time.sleep(0.2)
        window()
        time.sleep(RELAUNCH_WINDOW_S)
        quiet = read()
        window()
        os.kill(v["standby_pid"], signal.SIGKILL)
        # The manager forks the new standby as soon as it sees the old one
        # exit (its pidfd): a short window from the kill covers that.
        time.sleep(RELAUNCH_WINDOW_S)
        busy = read()
        lab.wait_until(lambda: (lambda x: x["standby_parked"] and
                                x["standby_pid"] != v["standby_pid"])(node.nf_by(service=1)[0]),
                       60, f"relaunched standby {k + 1} parked", interval=0.01)
        rows.append((k + 1, quiet[0], busy[0], quiet[1], busy[1]))
        print(f"relaunch {k + 1}: lcore pass max {busy[0] / 1000:.2f} ms (without: "
              f"{quiet[0] / 1000:.2f}), sink pause {busy[1] / 1000:.2f} ms (without: "
              f"{quiet[1] / 1000:.2f})", flush=True)
    node.stop()
    return rows


RELAUNCH_WINDOW_S = 0.05


def standby_cpu_of(placement):
    """The CPU a standby parks on: the default standby_cpus on this 2-CPU
    bench are the CPUs the actives (CPU 1) do not use."""
    return int(placement.split(",")[0].split("-")[0]) if placement else 0


def kernel_floor(a):
    """The kernel's own floor on this host, same run, robust_wake (no DPDK,
    a plain holder on CPU 1, see bench/robust_wake.c), keyed (mode, waiter
    CPU, hugetlbfs MB): "kill" -- this process SIGKILLs a sleeping holder, a
    waiter on CPU 0, with and without hugetlbfs; "self-kill" and "crash" --
    libnf's two paths, a busy holder killing itself or faulting into a
    handler that wakes the waiter (at SCHED_FIFO), for each standby CPU."""
    tool = os.path.join(os.environ["ONVM_BUILD"], "bench", "robust_wake")
    runs = [("kill", 0, 0), ("kill", 0, 256)]
    for w in sorted({standby_cpu_of(p) for p in a.placements}):
        runs += [("self-kill", w, 0), ("crash", w, 0)]
    rows = {}
    for mode, w, mb in runs:
        out = subprocess.run([tool, str(a.kills), str(mb), "1", str(w), mode], check=True,
                             capture_output=True, text=True).stdout.splitlines()[1:]
        rows[(mode, w, mb)] = [tuple(map(float, line.split(",")[1:])) for line in out]
    return rows


def relaunch_line(rows):
    def ms(col, p):
        v = [r[col] / 1000 for r in rows]
        return f"p50 {pct(v, 50):.2f} ms, max {max(v):.2f} ms"
    return (f"standby relaunch ({len(rows)} times, {RELAUNCH_WINDOW_S * 1000:.0f} ms windows): "
            f"data lcore's longest pass {ms(2, 50)} (without a relaunch {ms(1, 50)}); "
            f"sink's longest pause {ms(4, 50)} (without {ms(3, 50)})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    ap.add_argument("--kills", type=int, default=100,
                    help="crashes in all, split over the placements")
    ap.add_argument("--placements", default=";1",
                    help="standby_cpus of the failover runs, comma-separated in a list "
                         "split by ';' ('' = the default: CPUs the actives do not use); "
                         "default ';1': the default, then the active's own CPU")
    ap.add_argument("--window", type=float, default=5.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1, help="kill-time randomness")
    ap.add_argument("--relaunches", type=int, default=60, help="standby relaunches measured")
    ap.add_argument("--relaunch-standby-cpus", default="1",
                    help="standby CPUs in the relaunch phase (\"\": the default placement)")
    ap.add_argument("--tag", default="", help="suffix of local_relaunch<TAG>.csv (e.g. -before)")
    ap.add_argument("--runtimes", default="process,container",
                    help="how the failover runs' NF and standby run: process, container "
                         "(podman, the NF image), or both (the default: same run)")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    a = ap.parse_args()
    a.placements = a.placements.split(";")
    a.runtimes = [r for r in a.runtimes.split(",") if r]
    os.environ["ONVM_BUILD"] = os.path.abspath(a.build)
    result = {}

    def body(L):
        result["r"] = run(L, a)

    L = lab.Lab("bench_local")
    L.run_quiet = True
    try:
        body(L)
    finally:
        L.cleanup()
    tput, commit, standby_cpu, kills, info, floor, relaunch = result["r"]
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "local_tput.csv"), "w") as f:
        f.write("mode,round,mpps\n")
        for mode, r, v in tput:
            f.write(f"{mode},{r},{v:.4f}\n")
    with open(os.path.join(a.out, "local_commit.csv"), "w") as f:
        f.write("round,commit_mean_ns,commit_max_ns\n")
        for r, (c, m) in enumerate(commit):
            f.write(f"{r},{c},{m}\n")
    with open(os.path.join(a.out, "local_floor.csv"), "w") as f:
        f.write("mode,waiter_cpu,hugetlbfs_mb,kill,mutex_wake_us,pidfd_us\n")
        for (mode, wcpu, mb), r in floor.items():
            for k, (w, q) in enumerate(r):
                f.write(f"{mode},{wcpu},{mb},{k + 1},{w:.1f},{q:.1f}\n")
    with open(os.path.join(a.out, f"local_relaunch{a.tag}.csv"), "w") as f:
        f.write("relaunch,lcore_pass_without_us,lcore_pass_with_us,sink_gap_without_us,"
                "sink_gap_with_us\n")
        for row in relaunch:
            f.write(",".join(map(str, row)) + "\n")
    with open(os.path.join(a.out, "local_failover.csv"), "w") as f:
        f.write("kill,death,standby_cpus,runtime,wake_us,first_packet_us,handoff_us\n")
        for k, d, w, p, h, where, runtime in kills:
            f.write(f"{k},{d},{where},{runtime},{w:.1f},{p:.1f},{h:.1f}\n")
    none = [v for m, _, v in tput if m == "none"]
    local = [v for m, _, v in tput if m == "local"]
    ratios = [l / n for (m1, r1, n), (m2, r2, l) in zip(tput[0::2], tput[1::2]) if n > 0]
    floor_p50 = {key: pct([w for w, _ in r], 50) for key, r in floor.items()}

    def failover_lines(death, where, runtime):
        rows = [k for k in kills if k[1] == death and k[5] == where and k[6] == runtime]
        if not rows:
            return []
        wake, first = [k[2] for k in rows], [k[3] for k in rows]
        how = ("SIGKILL: the kernel wakes the standby at exit" if death == "sigkill" else
               "SIGSEGV in the NF: libnf's handler wakes the standby")
        mode = "self-kill" if death == "sigkill" else "crash"
        fl = floor_p50[(mode, standby_cpu_of("" if where == "default" else where), 0)]
        return [
            f"failover, {'NF and standby in containers' if runtime == 'container' else 'processes'}"
            f", standby on CPU {standby_cpu_of('' if where == 'default' else where)} "
            f"(standby_cpus {where}), {len(rows)} crashes by {how} (death -> ...): "
            f"wake p50 {pct(wake, 50):.1f} us, p99 {pct(wake, 99):.1f} us, "
            f"max {max(wake):.1f} us",
            f"  first packet processed by the promoted NF: p50 {pct(first, 50):.1f} us, "
            f"p99 {pct(first, 99):.1f} us, max {max(first):.1f} us, mean "
            f"{statistics.mean(first):.1f} us; / floor ({mode}, same CPUs) p50 {fl:.1f} us: "
            f"{pct(first, 50) / fl:.2f}x",
        ]

    summary = [
        f"throughput (64 B, Mpps, median of {a.rounds}): none {statistics.median(none):.3f}, "
        f"local {statistics.median(local):.3f}, ratio local/none (median of per-round) "
        f"{statistics.median(ratios):.4f}",
        *[line for where in dict.fromkeys(k[5] for k in kills) for rt in a.runtimes
          for d in DEATHS for line in failover_lines(d, where, rt)],
        f"added latency of local mode (each packet waits for its batch's state commit): "
        f"mean {statistics.median(c for c, _ in commit):.0f} ns (median of rounds), "
        f"max {max(m for _, m in commit) / 1000:.1f} us",
        f"parked standby CPU while the active runs at full load: {standby_cpu:.2f} % of a core",
        *[f"kernel floor, plain process, {mode}, waiter on CPU {w}, {mb} MB hugetlbfs "
          f"(robust_wake, {len(r)} kills): robust-mutex wake p50 "
          f"{pct([x for x, _ in r], 50):.1f} us, p99 {pct([x for x, _ in r], 99):.1f} us; "
          f"pidfd p50 {pct([q for _, q in r], 50):.1f} us"
          for (mode, w, mb), r in floor.items()],
        f"node counters: nf_deaths {info['nf_deaths']}, nf_failovers {info['nf_failovers']}",
        relaunch_line(relaunch),
    ]
    with open(os.path.join(a.out, "local_summary.txt"), "w") as f:
        f.write("\n".join(summary) + "\n")
    print("\n".join(summary))
    try:
        plt = pyplot()
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
        for where in dict.fromkeys(k[5] for k in kills):
            for rt in a.runtimes:
                for death, style in zip(DEATHS, ("-", "--") if rt == "process" else ("-.", ":")):
                    s = sorted(k[3] for k in kills
                               if k[1] == death and k[5] == where and k[6] == rt)
                    if s:
                        ax1.plot(s, [(i + 1) / len(s) for i in range(len(s))], style,
                                 label=f"{death}, {rt}, standby_cpus {where}: first packet")
        for (mode, w, mb), r in floor.items():
            if mode != "kill" and mb == 0:
                s = sorted(x for x, _ in r)
                ax1.plot(s, [(i + 1) / len(s) for i in range(len(s))], ":",
                         label=f"floor: plain process, {mode}, waiter on CPU {w}")
        ax1.set_xscale("log")
        ax1.set_xlabel("µs after the NF died (mid-batch: SIGKILL, or SIGSEGV of its own)")
        ax1.set_ylabel("fraction of failovers")
        ax1.set_title(f"local failover, {len(kills)} kills under load")
        ax1.axvline(56, color="grey", ls=":", label="REINFORCE mean 56 µs")
        ax1.axvline(114, color="grey", ls="--", label="REINFORCE max 114 µs")
        ax1.legend(fontsize=8)
        ax2.bar(["none", "local"], [statistics.median(none), statistics.median(local)],
                color=["grey", "tab:blue"])
        ax2.errorbar(["none", "local"], [statistics.median(none), statistics.median(local)],
                     yerr=[[statistics.median(none) - min(none), statistics.median(local) - min(local)],
                           [max(none) - statistics.median(none), max(local) - statistics.median(local)]],
                     fmt="none", color="black", capsize=4)
        ax2.set_ylabel("Mpps (64 B)")
        ax2.set_title(f"stateful NF, local/none = {statistics.median(ratios):.3f} (median of rounds)")
        fig.tight_layout()
        fig.savefig(os.path.join(a.out, "local_resiliency.png"), dpi=110)
    except ImportError:
        print("matplotlib missing: no plot")


if __name__ == "__main__":
    main()
