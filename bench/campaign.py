#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""A randomized fault campaign across the four nodes of remote resiliency.

Episodes of the four-node lab (python/onvm/remote_lab.py), each with a
seeded random schedule of faults injected while a paced, tagged input
streams through the protected chain, and the oracle after each: the kinds
of fault, the episode and the oracle are in python/onvm/campaign.py (its
opening comment).  Runs episodes 0, 1, 2, ... of --seed until --faults
faults were injected; `--episode E` replays one episode's decisions (the
set-up and the schedule; not the machine's timing).

usage: bench/campaign.py [--faults N] [--seed S] [--episode E] [--rate FPS]
                         [--lock FILE] [--out DIR] [--keep DIR] [--no-plot]
                         [--build DIR] [--snapshot]
Writes campaign.csv (a row per fault), campaign_summary.txt (faults by
kind, violations, loss per failover, time, commit) and campaign.png into
--out (default bench/results/); a violating episode's schedule, findings
and node logs go to --keep (default /tmp/onvm-campaign/).  Exit status 1
if anything was violated.
"""
import argparse
import fcntl
import os
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))


def snapshot(build, to):
    """The manager and the NFs of `build` copied to `to` (they link the
    tree's libraries statically): a rebuild during the campaign changes
    nothing under it."""
    import shutil
    for rel in ["onvm_mgr/onvm_mgr"] + [f"nfs/{n}/{n}" for n in
                                          os.listdir(os.path.join(build, "nfs"))]:
        src = os.path.join(build, rel)
        if os.path.isfile(src):
            os.makedirs(os.path.dirname(os.path.join(to, rel)), exist_ok=True)
            shutil.copy2(src, os.path.join(to, rel))
    return to


def early_args():
    """--build/--snapshot, before onvm.lab reads ONVM_BUILD."""
    build = os.environ.get("ONVM_BUILD") or os.path.join(HERE, "..", "build")
    if "--build" in sys.argv:
        build = sys.argv[sys.argv.index("--build") + 1]
    build = os.path.abspath(build)
    if "--snapshot" in sys.argv:
        import atexit
        import shutil
        build = snapshot(build, f"/tmp/onvm-campaign-build-{os.getpid()}")
        atexit.register(shutil.rmtree, build, True)
    os.environ["ONVM_BUILD"] = build


early_args()
from onvm import campaign, report  # noqa: E402

RESULTS = os.path.join(HERE, "results")


def plot(results, path):
    try:
        plt = report.pyplot()
    except ImportError:
        print("matplotlib missing: no plot", file=sys.stderr)
        return
    rows = [r for res in results for r in res["rows"]]
    kinds = [k for k in campaign.ALL_KINDS if any(r["kind"] == k for r in rows)]
    losses = [r["loss"] for r in rows if r["loss"] != ""]
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    a.barh(kinds, [sum(r["kind"] == k for r in rows) for k in kinds])
    a.tick_params(axis="y", labelsize=7)
    a.set_xlabel("faults injected")
    a.set_title(f"{len(rows)} faults, {len(results)} episodes", fontsize=9)
    if losses:
        b.hist(losses, bins=30)
    b.set_xlabel("frames lost per failover (the dead primary's tail)")
    b.set_ylabel("failovers")
    b.axvline(campaign.TAIL_BOUND, color="r", linestyle="--", linewidth=1)
    b.set_title(f"bound {campaign.TAIL_BOUND} (stages x packets + 2 bursts)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    def on_term(sig, frame):  # the episode's lab is cleaned up on the way out
        raise KeyboardInterrupt(f"signal {sig}")
    signal.signal(signal.SIGTERM, on_term)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--faults", type=int, default=1000, help="faults to inject, at least")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--episode", type=int, default=None,
                    help="replay this episode of --seed only (prints its schedule)")
    ap.add_argument("--first-episode", type=int, default=0)
    ap.add_argument("--rate", type=int, default=campaign.RATE, help="input frames per second")
    ap.add_argument("--lock", default=None,
                    help="flock this file around each episode (one lab at a time on a "
                         "shared machine), e.g. /tmp/onvm-lab.lock")
    ap.add_argument("--out", default=RESULTS)
    ap.add_argument("--keep", default="/tmp/onvm-campaign",
                    help="where a violating episode's schedule and logs are kept")
    ap.add_argument("--no-plot", action="store_true")
    ap.add_argument("--build", default=None, help="the build tree (default ONVM_BUILD or build/)")
    ap.add_argument("--snapshot", action="store_true",
                    help="run a copy of the build's manager and NFs, taken at the start "
                         "(a rebuild during a long campaign then changes nothing)")
    a = ap.parse_args()
    lockf = open(a.lock, "a") if a.lock else None
    episodes = [a.episode] if a.episode is not None else None
    results, t0 = [], time.monotonic()
    commit = report.repo_state() + f"; binaries: {os.environ['ONVM_BUILD']}"
    ep = a.first_episode
    while True:
        if episodes is not None:
            if not episodes:
                break
            ep = episodes.pop()
            print(campaign.describe(campaign.plan(a.seed, ep)), flush=True)
        elif sum(len(r["rows"]) for r in results) >= a.faults:
            break
        if lockf:
            fcntl.flock(lockf, fcntl.LOCK_EX)
        try:
            res = campaign.run_episode(a.seed, ep, a.rate, a.keep)
        finally:
            if lockf:
                fcntl.flock(lockf, fcntl.LOCK_UN)
        results.append(res)
        for cat, msg in res["violations"]:
            report.log(f"VIOLATION seed {a.seed} episode {ep} [{cat}] {msg}")
        report.log(f"episode {ep}: {len(res['rows'])} faults in {res['seconds']} s, "
                   f"{len(res['violations'])} violation(s); total "
                   f"{sum(len(r['rows']) for r in results)} faults")
        ep += 1
        if a.episode is None:  # the files as they stand, after every episode
            os.makedirs(a.out, exist_ok=True)
            report.write_csv(os.path.join(a.out, "campaign.csv"), campaign.CSV_FIELDS,
                             [r for res in results for r in res["rows"]])
            args_line = (f"bench/campaign.py --faults {a.faults} --seed {a.seed} --rate "
                         f"{a.rate}" + (f" --first-episode {a.first_episode}"
                                        if a.first_episode else ""))
            with open(os.path.join(a.out, "campaign_summary.txt"), "w") as f:
                f.write(campaign.summarize(results, commit, time.monotonic() - t0, args_line))
    if a.episode is None and not a.no_plot:
        plot(results, os.path.join(a.out, "campaign.png"))
    text = campaign.summarize(results, commit, time.monotonic() - t0,
                              " ".join(["bench/campaign.py"] + sys.argv[1:]))
    print(text)
    return 1 if any(res["violations"] for res in results) else 0


if __name__ == "__main__":
    sys.exit(main())
