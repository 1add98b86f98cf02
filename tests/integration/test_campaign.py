#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""A short randomized fault campaign across the four nodes of remote
resiliency (bench/campaign.py's, python/onvm/campaign.py): episodes of
seed ONVM_SEED (default 7) until about ONVM_CAMPAIGN_FAULTS faults (default
50) were injected, or ONVM_CAMPAIGN_S seconds (default 140) went by -- node
and NF kills and restarts, sync-link loss, duplication, reordering, delay
and stalls, link flaps, pauses, then a failover (a killed, restarted or
cut-off primary, an operator's switch-over), raced by an operator's request
and stalls of the standby's links.  Fails on any violation the oracle
records (campaign.check_episode: nothing twice, order, loss explained and
bounded, the NFs' state), printing each with its seed and episode:
`bench/campaign.py --seed S --episode E` replays that episode.

`test_campaign.py restart_then_kill` runs fixed episodes instead: the
predecessor, then the standby, killed and restarted mid-stream and the
primary killed after it, on the stateful and the ND chain.

First, the oracle must not be vacuous: a canary episode loses frames where
no node counts them (the link to the sink set down a moment), and the
oracle must call that loss unexplained.
"""
import os
import sys
import time

from onvm import campaign, lab


def restart_then_kill(L):
    """Each role's restart, then the primary killed: the predecessor (its
    log lost, its timestamps from a new base) and the standby (rejoined by
    a full cut) on the stateful and the ND chain, the oracle after each."""
    for role in ("pred", "standby"):
        for chain in ("stateful", "nd"):
            res = campaign.run_episode(1, -2, p=campaign.restart_then_kill_plan(role, chain))
            fo = res.get("failover") or {}
            print(f"{role} restart then kill, {chain} chain: {len(res['rows'])} faults, lost "
                  f"{res['lost']}, violations {len(res['violations'])}")
            for cat, msg in res["violations"]:
                L.expect(False, f"{role} restart then kill ({chain}) [{cat}] {msg}")
            L.expect(any(r["kind"] == "primary_kill" and r["loss"] != "" for r in res["rows"]),
                     f"{role} restart then kill ({chain}): no failover measured: "
                     f"{[(r['kind'], r['outcome']) for r in res['rows']]} {fo}")


def main(L):
    if sys.argv[1:] == ["restart_then_kill"]:
        restart_then_kill(L)
        return
    seed = int(os.environ.get("ONVM_SEED", "7"))
    target = int(os.environ.get("ONVM_CAMPAIGN_FAULTS", "50"))
    budget = float(os.environ.get("ONVM_CAMPAIGN_S", "140")) * lab.SLOWDOWN
    keep = L.path("kept")
    t0 = time.monotonic()
    canary = campaign.run_episode(seed, -1, keep_dir=None, p=campaign.canary_plan(seed))
    cats = {c for c, _ in canary["violations"]}
    print(f"canary: {len(canary['rows'])} faults, lost {canary['lost']}: "
          f"{canary['violations'][:2]}")
    L.expect("loss" in cats and cats <= {"loss"},
             f"the canary's unexplained loss (the sink's link down) was not caught as such: "
             f"{canary['violations']}")
    results, faults, ep = [], 0, 0
    while faults < target and time.monotonic() - t0 < budget:
        res = campaign.run_episode(seed, ep, keep_dir=keep)
        results.append(res)
        faults += len(res["rows"])
        for cat, msg in res["violations"]:
            L.expect(False, f"seed {seed} episode {ep} [{cat}] {msg}")
        ep += 1
    text = campaign.summarize(results, "", time.monotonic() - t0,
                              f"test_campaign.py: seed {seed}, {faults} faults")
    print(text)
    if L.failures:
        print(f"schedules and logs of the violating episodes: {keep} "
              "(ONVM_IT_KEEP=1 keeps them)", file=sys.stderr)
        for res in results:
            if res["violations"]:
                print(campaign.describe(res["plan"]), file=sys.stderr)
    L.expect(faults >= min(target, 20), f"only {faults} faults injected in {budget:.0f} s")


if __name__ == "__main__":
    lab.run("campaign" + ("_" + sys.argv[1] if sys.argv[1:] else ""), main)
