#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""A protected chain across four nodes (rsync_unit.c, plog_unit.c).

  pred:    port "src" (net_pcap, the input) -> stamped and logged -> "to_m"
           (or "to_s" after a failover)
  primary: "from_p" -> simple_forward -> "out", latched until the standby
           votes; RSync on "to_s"
  standby: "from_p" -> simple_forward -> "out" (nothing leaves before a
           takeover); RSync on "to_m"
  sink:    "in_m" -> capture sink-m.pcap, "in_s" -> capture sink-s.pcap

Every link is a veth pair with both ends on DPDK af_packet ports, inside a
network namespace the test made (no address, no route: the kernel never
forwards a frame).  The input is a trace repeated, each frame tagged with a
unique number in its source MAC (no NF here reads MACs), so duplicates and
order can be checked at the sink.

Usage: test_remote_chain.py steady | switchover | kill | bfd | linkdown | linkdown_bfd |
                           syncfaults | stateful | nd_heavy | multi | standby_lost
  steady:     no failure.  The sink gets every frame once, in order, from
              the primary; every one was latched and released on a vote;
              stateless checkpoints trimmed the predecessor's log; the
              standby applied the TxTs.
  switchover: then an operator failover (/onvm/remote/failover): the
              predecessor replays its untrimmed log to the standby, which
              takes over and suppresses every replayed packet the primary
              released (TxTs): nothing reaches the sink twice.  The old
              primary is fenced by the new epoch.
  kill:       ONVM_REMOTE_KILLS rounds (default 20; seeds from ONVM_SEED,
              default 1): the primary's manager (and its NF) are SIGKILLed
              at a seeded point of the stream, then the operator fails over.
              Oracle: nothing reaches the sink twice, each capture in input
              order, per flow the standby's frames all after the primary's,
              and the only frames missing are the dead primary's tail
              (stages voted but not released -- presumed commit -- and its
              port buffers): all after the primary's last, per flow between
              the primary's frames and the standby's, at most
              stages x stage_packets + 64.
  bfd:        5 rounds as kill, but no operator: the predecessor's BFD
              session to the primary (10 ms x 3) goes Down and fails the
              chain over.
  linkdown:   5 rounds: the predecessor -> primary link is set down
              mid-stream (at the predecessor's end or, every other round, at
              the primary's: the predecessor's interface then loses its
              carrier) while the primary keeps running (a false suspicion);
              the predecessor sees its link go down (link_watch.c) and fails
              the chain over at once.  The old primary must end fenced by
              the new epoch, holding and releasing nothing more after the
              link comes back; the oracle as for kill, and nothing lost: the
              input the down link refused was logged, and is replayed.
  linkdown_bfd: 3 rounds as linkdown with link_failover off: BFD's Down
              fails the chain over.
  stateful:   5 rounds as kill, with the issue's chain on primary and
              standby -- basic_monitor -> vlan_tagger -> load_balancer, all
              with state, the balancer drawing each new flow's backend at
              random (ND) -- over an input of 400 flows, paced so that the
              kill lands mid-stream.  Checkpoints are consistent cuts
              (markers); the standby's NFs are parked with the primary's
              committed state written into their blocks, and promoted at the
              takeover.  Oracle: every output is its input frame, VLAN-tagged
              and sent to a backend, once, in order, per flow the standby after
              the primary, each flow on one backend across both nodes; losses
              only the dead primary's tail; the promoted basic_monitor and
              load_balancer counted every input packet exactly once per flow
              (the cut plus the replay after it), and the balancer's table
              holds each flow's backend as the capture shows it.
  nd_heavy:   3 rounds as stateful, with nondet (count:1: every packet it
              handles draws a random number, stored in its flow's entry, and
              is marked ND) in vlan_tagger's place: every stage waits for the
              cut of a marker after its last packet before it is released.
              Oracle as for stateful (no VLAN tag), and the promoted nondet
              counted every input packet once with exactly one draw each.
  multi:      3 rounds as stateful, with two instances of basic_monitor
              and of load_balancer on both nodes: a flow hashes to the same
              rank on both, every rank has a state window of its own, and
              markers are aligned across the instances (marker_align.c).
              Oracle as for stateful, and every flow's state in exactly one
              instance of each service.
  standby_restart: the stateful chain; the standby node is SIGKILLed
              mid-stream and started again: it must rejoin (a full cut, then
              the cut after it) and recover the primary's later death
              exactly; the loss is what the primary dropped, counted, while
              it had no standby.
  dpi:        ONVM_REMOTE_KILLS rounds (default 2) of basic_monitor -> dpi
              (nDPI: its detection module and flows, full of pointers, in a
              region heap mapped at the same address on both nodes) over
              eight traces; the primary SIGKILLed mid-stream; per flow the
              promoted dpi names the same protocol after the same packets as
              a run without a failure, and counts every packet once.
  latch_full: the stateful chain, its input unpaced (about 47 500 frames,
              1 000 flows): the latch falls behind the input and outputs
              wait for room in it; the primary is SIGKILLed while they do
              (5 rounds).  The oracle as for `stateful`, and each loss at
              most the packets the standby presumed committed at the
              takeover plus two bursts: an output waiting for the latch is
              never covered by a cut the standby applies.
  primary_restart: the stateful chain; the primary node dies and is
              started again at once (a new run, no state): the predecessor
              fails over by itself on hearing the new run, the standby
              having refused the new run's transactions; the oracle as for
              `stateful`.
  slow_replay: a stateless chain whose NF is slow on the standby (300 us a
              packet), cuts 2 s apart, the primary killed 60 % of the way:
              every replayed packet the standby admitted reaches its NF.
  pred_restart_after_failover: the operator fails the chain over, the old
              primary dies, then the predecessor restarts (its epoch and
              log lost): it follows the standby's epoch, input resumes.
  pred_restart_then_failover: as pred_restart_after_failover, but the
              restarted predecessor, its link to the standby down, is
              asked to fail over before it hears the standby: every frame
              its new run stamped reaches the sink.
  pred_restart_after_given_up: the predecessor's run cancels epoch 2 at
              the standby (a failover given up), then restarts and, the
              primary killed, offers epoch 2 again: the standby takes it.
  pred_restart_in_replay: the predecessor dies mid-replay (the standby's
              NF slow) and restarts: the standby gives the rest of the
              range up, the new run's input comes through it.
  release_burst: no failure, the primary's exit link paced at 100 Mbit/s
              (a TX ring of 64 frames): whole stages released at once wait
              for the port; nothing is lost.
  clock:      the stateful chain with its standby node in a time
              namespace: its CLOCK_MONOTONIC 100 000 s ahead of the
              primary's, then 3 000 s behind; the primary SIGKILLed
              mid-stream.  The restored flows keep their age: none expires
              early, every one expires on time (clock_skew()).
  standby_lost: the stateful chain; once the standby holds state, its
              basic_monitor is SIGKILLed (not relaunched: no local
              resiliency).  The standby's copy of the state is lost: it
              says so, goes on voting -- the healthy primary releases every
              frame, none aborted -- and refuses the operator's failover
              (nothing leaves it), rather than run on state that is not
              the cut it claims.
  syncfaults: the sync link between primary and standby goes through
              faulty_link.py (this kernel has no netem), which drops,
              duplicates, reorders and delays RSync frames (seeded by
              ONVM_SEED); votes time out (2 ms x 3 tries) and stages abort,
              their packets dropped and counted.  No lazy checkpoints, so
              the operator's switch-over at the end replays the whole input:
              every packet the primary released must be in the standby's
              committed TxTs (a stage released without a vote would reach
              the sink twice), nothing arrives twice or out of order, and
              what is missing is at most what the primary counted as
              aborted or dropped.
  reprotect_restarts: as reprotect, but once re-protected the predecessor
              restarts (it must follow the primary on its standby link) and
              the second failure is the new primary back at once on its
              standby configuration (the predecessor fails over by itself);
              then the predecessor restarts again (it must follow the node
              that took over, not the empty standby at a newer epoch).
  reprotect:  the stateful chain; the primary node is SIGKILLed and the
              operator fails over; the dead node comes back as the chain's
              new standby (at the new epoch) and the predecessor's
              /onvm/remote/protect makes the node that took over its
              primary again: the new standby joins late, syncs by a full
              cut, and then that primary is SIGKILLed too and the chain
              fails over a second time, back to the first node.  The
              oracle over the three nodes' outputs in turn, and the
              promoted NFs counted every input packet once.
"""
import json
import os
import random
import re
import signal
import struct
import sys
import time

from onvm import flowtable, lab, pcap, traces
from onvm.wire import REPLAY_CANCEL, rsync_frame
from onvm.remote_lab import (BACKENDS, NODES, STAGE_PACKETS, STAGES, build, check_exports,
                             check_sink, check_stateful, dump, instances_merged, new_flows, quiet,
                             remote, set_relay, source_progress, start_all, start_source, tag_of,
                             tagged_input)


def main(L, scenario):
    try:
        run(L, scenario)
    except lab.TestFailure:
        dump(NODES)
        raise


def run(L, scenario):
    trace = traces.trace("smtp.pcap")
    # standby_restart: long enough (about 9 s paced) for a node's restart
    # (about 4 s here) and traffic after it; 2400 flows (the tables hold 3072)
    copies = {"steady": 40, "switchover": 40, "syncfaults": 100,
              "standby_restart": 1200, "latch_full": 500, "reprotect": 420,
              "reprotect_restarts": 420,
              "pred_restart_after_failover": 400, "pred_restart_then_failover": 400,
              "pred_restart_after_given_up": 400,
              "pred_restart_in_replay": 400}.get(scenario, 200)
    # syncfaults: many flows, so that a packet released without a vote is
    # usually its flow's last, which the standby's TxTs must then hold
    # nd_heavy: new flows every 32 frames -- the balancer draws a backend
    # for each (ND), so a draw released without its cut is soon drawn again
    # (about 2400 flows: the NFs' tables hold 4096)
    frames = tagged_input(trace, copies,
                          flows_per_copy=scenario in ("syncfaults", "stateful", "multi",
                                                      "standby_lost", "standby_restart",
                                                      "latch_full", "primary_restart", "reprotect",
                                                      "reprotect_restarts"),
                          flows_every=32 if scenario == "nd_heavy" else 0)
    if scenario == "syncfaults":
        syncfaults(L, frames)
        return
    if scenario == "standby_lost":
        standby_lost(L, frames)
        return
    if scenario == "standby_restart":
        standby_restart(L, frames)
        return
    if scenario == "reprotect":
        reprotect(L, frames)
        return
    if scenario == "reprotect_restarts":
        reprotect(L, frames, restarts=True)
        return
    if scenario == "clock":
        clock_skew(L, trace)
        return
    if scenario == "primary_restart":
        primary_restart(L, frames)
        return
    if scenario == "slow_replay":
        slow_replay(L, frames)
        return
    if scenario == "release_burst":
        release_burst(L, frames)
        return
    if scenario == "pred_restart_in_replay":
        pred_restart_in_replay(L, frames)
        return
    if scenario == "pred_restart_after_failover":
        pred_restart_after_failover(L, frames)
        return
    if scenario == "pred_restart_then_failover":
        pred_restart_then_failover(L, frames)
        return
    if scenario == "pred_restart_after_given_up":
        pred_restart_after_given_up(L, frames)
        return
    if scenario == "dpi":
        dpi_scenario(L, dpi_input(), int(os.environ.get("ONVM_REMOTE_KILLS", "2")),
                     int(os.environ.get("ONVM_SEED", "1")))
        return
    if scenario == "multi":
        layout_mismatch(L, frames)
    if scenario not in FAILURES:
        one_round(L, scenario, frames, None, "")
        return
    kills = int(os.environ.get("ONVM_REMOTE_KILLS", str(FAILURES[scenario])))
    seed = int(os.environ.get("ONVM_SEED", "1"))
    lost = []
    for k in range(kills):
        rnd = random.Random(seed * 1000 + k)
        lost.append(one_round(L, scenario, frames, rnd, f"r{k}"))
    print(f"{scenario}: {kills} rounds (seed {seed}), lost per round {lost}")


FAILURES = {"kill": 20, "bfd": 5, "agent": 2, "linkdown": 5, "linkdown_bfd": 3,
            "stateful": 5, "nd_heavy": 3, "multi": 3, "latch_full": 5}  # scenario: rounds
STATEFUL = ("stateful", "nd_heavy", "multi", "latch_full")
LINKDOWN = ("linkdown", "linkdown_bfd")


def layout_mismatch(L, frames):
    """A primary with two basic_monitors and one load_balancer, a standby
    with one and two: as many state windows, laid out otherwise (the
    standby's second is vlan_tagger's, the primary's a basic_monitor's), so
    the standby refuses every cut (layout_mismatch) and applies no state --
    never a piece of one NF's state in another NF -- and the primary,
    without votes for its cuts, releases nothing with a cut."""
    sink, standby, primary, pred = build(L, frames, "-mismatch", stateful=True, multi=(2, 1),
                                         standby_multi=(1, 2))
    start_all(sink, standby, primary, pred)
    lab.wait_until(lambda: remote(standby)["layout_mismatch"] > 0 and
                   remote(primary)["aborts_no_vote"] > 0, 60, "the standby refusing cuts")
    st_s, st_m = remote(standby), remote(primary)
    print(f"layout mismatch: standby refused {st_s['layout_mismatch']} cuts, applied "
          f"{st_s['state_bytes_applied']} state bytes; primary aborted {st_m['out_aborted']}, "
          f"released {st_m['out_released']}")
    L.expect(st_s["state_bytes_applied"] == 0 and st_s["applied_cut_ts"] == 0,
             f"a standby laid out otherwise applied state: {st_s}")
    for node in (pred, standby, primary, sink):
        node.stop()


FAULTS = ["--drop", "0.15", "--dup", "0.05", "--reorder", "0.05", "--delay", "0.05",
          "--delay-us", "3000"]


def syncfaults(L, frames):
    n = len(frames)
    seed = int(os.environ.get("ONVM_SEED", "1"))
    sink, standby, primary, pred = build(L, frames, faults=FAULTS + ["--seed", str(seed)])
    start_all(sink, standby, primary, pred)
    # every packet released, or dropped and counted
    counted = lambda st: st["out_aborted"] + st["out_latch_full"] + st["out_refused"]
    lab.wait_until(lambda: (lambda st: st["out_released"] + counted(st) >= n and
                            st["stages_busy"] == 0)(remote(primary)), 180,
                   "every packet released or aborted")
    st_m = remote(primary)
    drops = sum(primary.drops().values())
    print(f"primary: released {st_m['out_released']}, aborted {st_m['out_aborted']} (aborts "
          f"no vote {st_m['aborts_no_vote']}, cascade {st_m['aborts_cascade']}), latch full "
          f"{st_m['out_latch_full']}, refused {st_m['out_refused']}, retrans "
          f"{st_m['frags_retrans']}, votes {st_m['votes']}, node drops {drops}")
    L.expect(st_m["out_released"] + counted(st_m) == n, f"primary: {st_m}")
    L.expect(st_m["out_aborted"] == 0 or st_m["aborts_no_vote"] > 0,
             f"packets aborted without an abort counted: {st_m}")
    L.expect(st_m["stages_released"] <= st_m["votes"], f"released without votes: {st_m}")
    rep = pred.query("/onvm/remote/failover,web")
    L.expect(rep.get("status") == "ok", f"failover: {rep}")
    lab.wait_until(lambda: remote(standby)["state"] == "active", 60, "replay ended")
    lab.wait_until(lambda: remote(primary)["state"] == "fenced", 30, "old primary fenced")
    lab.wait_until(lambda: quiet(standby, sink), 30, "the standby's output drained")
    st_s, st_p = remote(standby), remote(pred)
    print(f"standby: replayed {st_p['replayed']} from ts {st_p['replay_from_ts']}, passed "
          f"{st_s['out_passed']}, dup (suppressed by TxTs) {st_s['out_dup']}, gaps "
          f"{st_s['ingress_gaps']}; ctl refused: " + ", ".join(
              f"{k} {v}" for k, v in st_s.items() if k.startswith("ctl_") and v))
    L.expect(st_p["replay_from_ts"] == st_p["first_ts"] - 1 and
             st_p["replay_newest"] == st_p["first_ts"] + n - 1 and st_p["replayed"] >= n and
             st_s["ingress_replayed"] == n,
             f"no trim, so the whole input is replayed, and admitted once: {st_p} / {st_s}")
    pred.relay.send_signal(signal.SIGTERM)
    L.expect(pred.relay.wait(10) == 0, "faulty_link exit status")
    with open(L.path("faults.json")) as f:
        faults = json.load(f)
    print(f"faulty_link: {faults}")
    for kind in ("dropped", "duplicated", "reordered", "delayed"):
        L.expect(all(d[kind] > 0 for d in faults.values()), f"no frame {kind}: {faults}")
    for node in (pred, standby, primary, sink):
        L.expect(node.stop() == 0, f"{node.name}: manager exit status")
    got_m = pcap.read_capture_out(L.path("sink-m.pcap"))
    got_s = pcap.read_capture_out(L.path("sink-s.pcap"))
    lost = check_sink(L, frames, got_m, got_s, allow_loss=counted(st_m) + drops,
                      tail_only=False)
    print(f"syncfaults: {n} frames, primary {len(got_m)}, standby {len(got_s)}, lost {lost} "
          f"(counted at the primary {counted(st_m)} + {drops})")


def standby_lost(L, frames):
    n = len(frames)
    # unpaced: the primary is never killed, so a paced link's tail would stay
    # in the predecessor's TX ring (see build())
    sink, standby, primary, pred = build(L, frames, stateful=True, paced=False)
    start_all(sink, standby, primary, pred)
    lab.wait_until(lambda: remote(standby)["state_bytes_applied"] > 0 and
                   remote(primary)["out_released"] >= n // 4, 120, "state at the standby")
    (mon,) = standby.nf_by(name="mon")
    os.kill(mon["pid"], signal.SIGKILL)
    # unpaced, the input overruns the latch's wait queue: those drops are
    # counted (out_latch_full), and are not what this checks
    lab.wait_until(lambda: (lambda st: st["out_released"] + st["out_latch_full"] == n)(
        remote(primary)), 120, "every frame released by the primary, or counted")
    st_m = remote(primary)
    L.expect(st_m["out_aborted"] == 0 and st_m["aborts_no_vote"] == 0,
             f"the primary lost votes to the standby's lost state: {st_m}")
    sink.wait_port("in_m", "rx", st_m["out_released"])
    rep = pred.query("/onvm/remote/failover,web")
    L.expect(rep.get("status") == "ok", f"failover: {rep}")
    lab.wait_until(lambda: remote(standby)["takeovers_refused"] >= 1, 30, "takeover refused")
    time.sleep(0.3)
    st_s = remote(standby)
    L.expect(st_s["state_lost"] == 1, f"state_lost: {st_s}")
    L.expect(st_s["takeovers"] == 0 and st_s["state"] == "standby" and
             st_s["out_passed"] == 0 and sink.port("in_s")["rx"] == 0,
             f"the standby took over on lost state: {st_s}")
    # The service comes back: the predecessor gives the refused failover up
    # and goes on with the primary, at its epoch (not fenced), and may fail
    # over again later.
    lab.wait_until(lambda: remote(pred)["state"] == "primary", 30, "the failover given up")
    st_p, st_m = remote(pred), remote(primary)
    L.expect(st_p["failovers_refused"] == 1 and st_p["epoch"] == 1 and st_m["state"] == "primary"
             and st_m["epoch"] == 1, f"after the refusal: {st_p} / {st_m}")
    rep = pred.query("/onvm/remote/failover,web")
    L.expect(rep.get("status") == "ok", f"second failover: {rep}")
    lab.wait_until(lambda: remote(pred)["failovers_refused"] == 2, 30, "second failover refused")
    lab.wait_until(lambda: remote(pred)["state"] == "primary", 30, "given up again")
    L.expect(remote(primary)["state"] == "primary", "the primary was fenced by a refused epoch")
    print(f"standby_lost: primary released {st_m['out_released']} of {n}, aborted "
          f"{st_m['out_aborted']}; standby refused {st_s['takeovers_refused']} takeover(s), "
          f"the predecessor gave {remote(pred)['failovers_given_up']} failovers up")
    for node in (pred, standby, primary, sink):
        node.stop()


def standby_restart(L, frames):
    """The standby node dies mid-stream and is started again: a new
    incarnation, its NFs fresh, none of the state the primary's cuts are
    deltas over.  It must rejoin -- vote on, ask for a full cut, be in sync
    after the next cut -- and then recover the primary's death exactly."""
    n = len(frames)
    sink, standby, primary, pred = build(L, frames, stateful=True)
    start_all(sink, standby, primary, pred)
    lab.wait_until(lambda: remote(standby)["state_bytes_applied"] > 0 and
                   remote(primary)["out_released"] >= n // 20, 120, "state at the standby")
    t0 = time.monotonic()
    standby.stop(sig=signal.SIGKILL)
    standby.remove_runtime()
    down = remote(primary)
    standby.start(wait=False)
    standby.wait_ready(120)
    t1 = time.monotonic()
    lab.wait_until(lambda: remote(standby)["synced"] == 1, 60, "the new standby in sync")
    st_s, st_m = remote(standby), remote(primary)
    print(f"standby_restart: down {t1 - t0:.2f} s, in sync {time.monotonic() - t1:.2f} s later")
    print(f"standby_restart: killed at {down['out_released']} released; in sync at "
          f"{st_m['out_released']}: joins {st_s['joins']}, resync votes {st_s['resync_votes']}, "
          f"full cuts applied {st_s['full_applied']}, state skipped {st_s['state_skipped']} B; "
          f"primary asked {st_m['resyncs_asked']}, full cuts {st_m['full_cuts']}, aborted "
          f"{st_m['out_aborted']}, latch full {st_m['out_latch_full']}")
    L.expect(st_s["joins"] == 1 and st_s["full_applied"] >= 1 and st_m["full_cuts"] >= 1,
             f"the new standby did not rejoin by a full cut: {st_s}")
    # more traffic through the resynchronised pair, then the primary dies
    lab.wait_until(lambda: remote(primary)["out_released"] >= st_m["out_released"] + n // 10,
                   120, "traffic after the rejoin")
    before = remote(primary)
    primary.stop(sig=signal.SIGKILL)
    primary.remove_runtime()
    rep = pred.query("/onvm/remote/failover,web")
    L.expect(rep.get("status") == "ok", f"failover: {rep}")
    lab.wait_until(lambda: remote(pred)["state"] == "standby" and
                   remote(pred)["stamped"] == n, 180, "the replay and the input done")
    lab.wait_until(lambda: remote(standby)["state"] == "active", 60, "replay ended")
    lab.wait_until(lambda: quiet(standby, sink), 30, "the standby's output drained")
    st_s = remote(standby)
    L.expect(st_s["takeovers"] == 1 and st_s["ingress_gaps"] == 0 and
             st_s["out_before_takeover"] == 0, f"standby: {st_s}")
    for node in (pred, standby, sink):
        rc = node.stop()
        L.expect(rc == 0, f"{node.name}: manager exit status {rc}")
    got_m = pcap.read_capture_out(L.path("sink-m.pcap"))
    got_s = pcap.read_capture_out(L.path("sink-s.pcap"))
    # Lost: what the primary dropped, counted, while it had no standby
    # (stages aborted without a vote, the latch's overflow), and the dead
    # primary's tail.
    dropped = before["out_aborted"] + before["out_latch_full"]
    lost, backend = check_stateful(L, frames, got_m, got_s,
                                   dropped + STAGES * STAGE_PACKETS + 2 * 32, tail=False)
    # The promoted NFs counted every input packet once: the primary's NFs
    # processed the dropped ones too, and the full cut brought all of it.
    check_exports(L, frames, lab.read_json(L.path("standby-mon.json")),
                  lab.read_json(L.path("standby-lb.json")), backend)
    print(f"standby_restart: lost {lost} (primary dropped {dropped} without a standby); "
          f"{len(backend)} flows on their backends")


def source_done(pred):
    """build(source=...)'s paced input ended."""
    return source_progress(pred)[1] is not None


def reprotect(L, frames, restarts=False):
    """The primary dies, the chain fails over, the dead node comes back as
    the standby of the node that took over, made primary again by the
    predecessor's PROTECT (re-protection); then that one dies and the chain
    fails over a second time.  Exactly once, in order, per flow each node
    after the one before, every flow on one backend, the second promoted
    NFs' counts exact.  `restarts`: once re-protected, the predecessor
    restarts (its configuration knows nothing of the swap: it must follow
    the primary it hears on its standby link), and the second failure is
    the new primary's restart on its standby configuration, which the
    predecessor must take for a restarted primary and fail over from by
    itself; the input sent while the predecessor was down is lost."""
    n, rate = len(frames), 3000
    # The input paced at its source (about 13 s): a replay goes at the
    # links' speed, and the input goes on through both failures.
    sink, standby, primary, pred = build(L, frames, stateful=True, reprotect=True, source=rate)
    start_all(sink, standby, primary, pred)
    start_source(L, pred)
    lab.wait_until(lambda: remote(standby)["state_bytes_applied"] > 0 and
                   remote(primary)["out_released"] >= rate, 120, "state at the standby")
    primary.stop(sig=signal.SIGKILL)
    primary.remove_runtime()
    t_kill = time.monotonic()
    L.expect(pred.query("/onvm/remote/failover,web").get("status") == "ok", "failover")
    lab.wait_until(lambda: remote(standby)["state"] == "active", 60, "the first replay ended")
    first = sink.port("in_m")["rx"]  # the first primary's outputs, all in
    # The dead node comes back, empty, as the new standby at the new epoch.
    again = primary.as_standby(remote(pred)["epoch"])
    NODES[:] = [pred, again, standby, sink]
    again.start(wait=False)
    again.wait_ready(120)
    rep = pred.query("/onvm/remote/protect,web")
    L.expect(rep.get("status") == "ok", f"protect: {rep}")
    lab.wait_until(lambda: remote(pred)["protects"] == 1, 30, "PROTECT echoed")
    lab.wait_until(lambda: remote(again)["synced"] == 1, 60, "the new standby in sync")
    t_sync = time.monotonic()
    st_b, st_a, st_p = remote(standby), remote(again), remote(pred)
    print(f"reprotect: protected again {t_sync - t_kill:.2f} s after the kill; the new "
          f"primary: role {st_b['role']}, full cuts {st_b['full_cuts']}, resyncs asked "
          f"{st_b['resyncs_asked']}, released {st_b['out_released']}; "
          f"the new standby: joins {st_a['joins']}, full applied "
          f"{st_a['full_applied']}; predecessor: ports {st_p['primary_port']}/"
          f"{st_p['standby_port']}, trims {st_p['trims']}")
    L.expect(st_b["role"] == "primary" and st_b["promoted_ns"] > 0 and st_a["joins"] == 1 and
             st_a["full_applied"] >= 1 and st_p["swapped"] == 1 and
             st_p["state"] == "primary", "re-protection")
    lab.wait_until(lambda: remote(standby)["out_released"] >= st_b["out_released"] + rate,
                   120, "traffic through the new pair")
    if restarts:
        pred.crash()
        pred.stop()
        pred.remove_runtime()
        pred.start()
        lab.wait_until(lambda: remote(pred)["sides_adopted"] == 1 and
                       remote(pred)["epoch"] == 2, 30, "the restarted predecessor following "
                       "the primary on its standby link")
        released = remote(standby)["out_released"]
        lab.wait_until(lambda: remote(standby)["out_released"] >= released + rate // 2, 60,
                       "the restarted predecessor's input through the protected pair")
        st_p = remote(pred)
        L.expect(st_p["state"] == "primary" and st_p["swapped"] == 1 and
                 remote(standby)["pred_restarts"] >= 1, f"after the restart: {st_p}")
    before = remote(standby)
    L.expect(remote(pred)["stamped"] < n, "the input ended before the second failure")
    standby.stop(sig=signal.SIGKILL)
    standby.remove_runtime()
    if restarts:  # back at once on its standby configuration, empty
        back = standby.as_standby(2)
        back.start(wait=False)
        lab.wait_until(lambda: remote(pred)["failovers"] == 1, 60,
                       "the predecessor failing over on the restarted primary")
        L.expect(remote(pred)["failover_trigger"] == "primary_restart",
                 f"failed over on {remote(pred)['failover_trigger']}")
        back.wait_ready(120)
        NODES[:] = [pred, again, back, sink]
    else:
        L.expect(pred.query("/onvm/remote/failover,web").get("status") == "ok",
                 "second failover")
    lab.wait_until(lambda: remote(pred)["state"] == "standby" and
                   remote(pred)["stamped"] >= (1 if restarts else n) and
                   source_done(pred), 180, "the replay and the input done")
    lab.wait_until(lambda: remote(again)["state"] == "active", 60, "the second replay ended")
    if restarts:
        # The predecessor restarts again: the chain runs on the standby of
        # its configured primary link (a takeover), the node on its
        # standby link is an empty standby at a newer epoch than its
        # configuration's -- it must follow the one that runs the chain.
        passed = remote(again)["out_passed"]
        pred.crash()
        pred.stop()
        pred.remove_runtime()
        pred.start()
        lab.wait_until(lambda: remote(pred)["state"] == "standby" and
                       remote(pred)["epoch"] == 3, 30, "the restarted predecessor following "
                       "the node that took over")
        lab.wait_until(lambda: remote(again)["out_passed"] >= passed + rate // 2 or
                       source_done(pred), 60, "its input through the node that took over")
        L.expect(remote(pred)["sides_adopted"] == 1 and remote(back)["state"] == "standby",
                 f"after the second restart: {remote(pred)}")

    def drained():
        a = remote(again)["out_passed"]
        time.sleep(0.2)
        return remote(again)["out_passed"] == a and sink.port("in_m")["rx"] >= first + a
    lab.wait_until(drained, 30, "the last node's output drained")
    st_a = remote(again)
    L.expect(st_a["takeovers"] == 1 and st_a["epoch"] == 3 and st_a["ingress_gaps"] == 0 and
             st_a["out_before_takeover"] == 0, f"the second takeover: {st_a}")
    for node in (pred, again, sink) + ((back,) if restarts else ()):
        rc = node.stop()
        L.expect(rc == 0, f"{node.name}: manager exit status {rc}")
    got_m = pcap.read_capture_out(L.path("sink-m.pcap"))
    got_s = pcap.read_capture_out(L.path("sink-s.pcap"))
    # Lost: the two dead primaries' tails, and what the second dropped
    # while its new standby was not voting yet (counted); with `restarts`,
    # the input sent while the predecessor was down too (on the wire).
    dropped = before["out_aborted"] + before["out_latch_full"]
    lost, backend = check_stateful(L, frames, got_m[:first], got_s,
                                   n if restarts else
                                   dropped + 2 * (STAGES * STAGE_PACKETS + 2 * 32), tail=False,
                                   then=[got_m[first:]])
    if not restarts:  # (the input lost at the predecessor reached no NF)
        check_exports(L, frames, lab.read_json(L.path("primary-mon.json")),
                      lab.read_json(L.path("primary-lb.json")), backend)
    print(f"reprotect: {len(got_m[:first])} + {len(got_s)} + {len(got_m[first:])} frames "
          f"out of {n}; lost {lost} (the second primary dropped {dropped}); "
          f"{len(backend)} flows on their backends")


def primary_restart(L, frames):
    """The primary node dies and comes straight back, as a new run with no
    state (no BFD here, and its links never go down: nothing but the runs
    tells the restart).  The standby refuses the new run's transactions
    (peer_restarted), so it releases nothing; the predecessor, hearing the
    new run in its HEARTBEATs, fails the chain over to the standby by
    itself (trigger primary_restart).  Then the restarted node is killed
    too, which changes nothing.  The oracle as for the other kills: nothing
    twice, in order, only the first run's tail lost."""
    n = len(frames)
    sink, standby, primary, pred = build(L, frames, stateful=True)
    start_all(sink, standby, primary, pred)
    lab.wait_until(lambda: remote(primary)["out_released"] >= n // 3, 120,
                   "a third of the input released")
    first = remote(primary)
    primary.crash()
    primary.stop()
    primary.remove_runtime()
    primary.start()
    lab.wait_until(lambda: remote(pred)["failovers"] == 1, 30, "the predecessor fails over")
    st_p = remote(pred)
    L.expect(st_p["failover_trigger"] == "primary_restart" and st_p["primary_restarts"] >= 1,
             f"predecessor: {st_p}")
    lab.wait_until(lambda: remote(pred)["state"] == "standby" and
                   remote(pred)["stamped"] == n, 180, "the replay and the input done")
    lab.wait_until(lambda: remote(standby)["state"] == "active", 60, "replay ended")
    lab.wait_until(lambda: quiet(standby, sink), 30, "the standby's output drained")
    st_s, st_m = remote(standby), remote(primary)
    print(f"primary_restart: first run released {first['out_released']}; the second released "
          f"{st_m['out_released']} ({st_m['frags_sent']} fragments sent, refused by the "
          f"standby as a restarted primary's {st_s['ctl_peer_restarted']}x, as stale "
          f"{st_s['ctl_stale_epoch']}x), state {st_m['state']}")
    # (whether its fragments reach the standby before the takeover or after
    # is a race: refused either way, and nothing it latched is released)
    L.expect(st_m["out_released"] == 0 and st_m["state"] == "fenced" and
             st_s["ctl_peer_restarted"] + st_s["ctl_stale_epoch"] >= min(1, st_m["frags_sent"]),
             f"the restarted primary: {st_m} / {st_s}")
    primary.crash()
    for node in (pred, standby, sink, primary):
        node.stop()
    primary.remove_runtime()
    got_m = pcap.read_capture_out(L.path("sink-m.pcap"))
    got_s = pcap.read_capture_out(L.path("sink-s.pcap"))
    lost, backend = check_stateful(L, frames, got_m, got_s, STAGES * STAGE_PACKETS + 2 * 32)
    check_exports(L, frames, lab.read_json(L.path("standby-mon.json")),
                  lab.read_json(L.path("standby-lb.json")), backend)
    print(f"primary_restart: lost {lost}; {len(backend)} flows on their backends")


def slow_replay(L, frames):
    """A replay faster than the standby's NF: a stateless chain whose NF
    takes 300 us a packet on the standby (test_nf -d 300), no cut for 2 s
    (a long replay), the primary killed 60 % of the way.  The standby
    admits a replayed packet only when its NF can take it (its port held,
    however long: the predecessor sends again what the port's ring
    dropped): every replayed packet it admitted reaches its NF -- it used
    to give the port up after 20 ms and drop admitted, acknowledged packets
    on the NF's full ring.  The oracle: nothing twice, in order, the tail's
    loss only."""
    n = len(frames)
    nfs = ([{"name": "fwd", "binary": lab.TEST_NF, "service": 1}], [1])
    sink, standby, primary, pred = build(L, frames, nfs=nfs, checkpoint_ms=2000, paced=True)
    standby.config["nfs"][0]["args"] = ["-d", "300"]
    standby.save_config()
    start_all(sink, standby, primary, pred)
    lab.wait_until(lambda: remote(primary)["out_released"] >= n * 0.6, 120, "0.6 released")
    primary.crash()
    L.expect(pred.query("/onvm/remote/failover,web").get("status") == "ok", "failover")
    lab.wait_until(lambda: remote(pred)["state"] == "standby" and
                   remote(pred)["stamped"] == n, 300, "the replay and the input done")
    lab.wait_until(lambda: remote(standby)["state"] == "active", 300, "replay ended")
    lab.wait_until(lambda: quiet(standby, sink), 60, "the standby's output drained")
    st_s, st_p = remote(standby), remote(pred)
    (fwd,) = standby.nf_by(name="fwd")
    rng = st_p["replay_newest"] - st_p["replay_from_ts"]
    print(f"slow_replay: replayed {st_p['replayed']} (range {rng}), sent again "
          f"{st_p['replay_rewinds']}+"
          f"{st_p['replay_timeouts']}x; standby admitted {st_s['ingress_admitted']}, past a "
          f"gap {st_s['replay_gap_drops']}, its NF got {fwd['rx']}")
    L.expect(fwd["rx"] == st_s["ingress_admitted"] - st_s["ingress_replay_covered"],
             f"the standby's NF got {fwd['rx']} of the {st_s['ingress_admitted']} admitted")
    for node in (pred, standby, sink, primary):
        node.stop()
    primary.remove_runtime()
    got_m = pcap.read_capture_out(L.path("sink-m.pcap"))
    got_s = pcap.read_capture_out(L.path("sink-s.pcap"))
    lost = check_sink(L, frames, got_m, got_s, allow_loss=STAGES * STAGE_PACKETS + 2 * 32)
    print(f"slow_replay: lost {lost}")


def release_burst(L, frames):
    """Released packets wait for their port: a failure-free run whose
    primary's exit link is paced (100 Mbit/s, the input 40) and its port's
    TX ring 64 frames -- a vote releases whole stages (64 packets each,
    several at once), more than the port takes at a time.  Nothing may be lost: what the port refuses waits in
    the release queue (it used to be dropped, and a released packet is in
    the standby's TxTs: a failover would never make it again)."""
    n = len(frames)
    sink, standby, primary, pred = build(L, frames, paced=True, relay=True)
    # the exit link paced at 100 Mbit/s (the input at 40) by a token bucket
    # the port's frames go through: its 64 ring slots are taken until the
    # bucket lets them go, and a release is often more
    for port in primary.config["ports"]:
        if port["name"] == "out":
            port["dev"] = port["dev"].replace("framecnt=4096", "framecnt=64,qdisc_bypass=0")
    primary.save_config()
    lab.run_cmd(lab.in_netns(primary.ns, ["tc", "qdisc", "add", "dev", "m_k", "root", "tbf",
                                          "rate", "100mbit", "burst", "8kb", "limit", "256mb"]))
    start_all(sink, standby, primary, pred)
    # votes 20 ms late: each one releases a few hundred packets at once
    set_relay(pred, delay=1.0, delay_us=20000)
    lab.wait_until(lambda: (lambda st: st["out_released"] + st["out_latch_full"] == n and
                            st.get("out_release_waiting", 0) == 0)(remote(primary)), 120,
                   "every frame released and sent")
    st_m = remote(primary)
    sink.wait_port("in_m", "rx", n, timeout=30)
    out = primary.port("out")
    print(f"release_burst: released {st_m['out_released']}, latch full {st_m['out_latch_full']}, "
          f"release queue drops {st_m.get('out_release_drops')}; exit port tx {out['tx']}, "
          f"tx_drop {out['tx_drop']}")
    L.expect(st_m["out_latch_full"] == 0 and st_m.get("out_release_drops", 0) == 0 and
             out["tx_drop"] == 0, f"released packets dropped: {st_m} / {out}")
    for node in (pred, standby, primary, sink):
        L.expect(node.stop() == 0, f"{node.name}: exit status")
    got_m = pcap.read_capture_out(L.path("sink-m.pcap"))
    L.expect(len(got_m) == n, f"sink: {len(got_m)} of {n}")
    check_sink(L, frames, got_m, [], allow_loss=0)


def failed_over_then_pred_down(L, frames, rate):
    """The chain fed at `rate` frames/s, failed over by the operator once a
    second of it is released, then the old primary and the predecessor
    killed (the predecessor's runtime files gone, for its restart).
    Returns (sink, standby, primary, pred, the source's process)."""
    sink, standby, primary, pred = build(L, frames, source=rate)
    start_all(sink, standby, primary, pred)
    source = start_source(L, pred)
    lab.wait_until(lambda: remote(primary)["out_released"] >= rate, 60, "a second released")
    rep = pred.query("/onvm/remote/failover,web")
    L.expect(rep.get("status") == "ok", f"failover: {rep}")
    lab.wait_until(lambda: remote(standby)["state"] == "active", 60, "the standby took over")
    primary.crash()
    pred.crash()
    pred.stop()
    pred.remove_runtime()
    return sink, standby, primary, pred, source


def pred_restart_after_failover(L, frames):
    """The predecessor restarts after a failover: its log, and the epoch it
    failed the chain over to, are gone with it, and its configuration still
    names the old primary.  The standby's HEARTBEATs name the newer epoch it
    runs the chain at: the predecessor adopts it and sends to the standby,
    stamping above what the standby admitted -- the input sent once it runs
    again reaches the sink through the standby, none of it twice."""
    rate = 2000
    sink, standby, primary, pred, _ = failed_over_then_pred_down(L, frames, rate)
    time.sleep(0.3)
    pred.start()
    t_up = time.monotonic()
    before = sink.port("in_s")["rx"]
    lab.wait_until(lambda: sink.port("in_s")["rx"] >= before + rate, 30,
                   "a second of input through the standby after the predecessor's restart")
    st_p, st_s = remote(pred), remote(standby)
    print(f"pred_restart_after_failover: the restarted predecessor at epoch {st_p['epoch']} "
          f"({st_p['state']}), epochs adopted {st_p['epochs_adopted']}, resent "
          f"{st_p['resent']}, ts raised {st_p['ts_raised']}; the standby passed "
          f"{st_s['out_passed']} ({sink.port('in_s')['rx'] - before} in "
          f"{time.monotonic() - t_up:.1f} s since the restart)")
    L.expect(st_p["state"] == "standby" and st_p["epoch"] == st_s["epoch"] and
             st_p["epochs_adopted"] == 1, f"predecessor: {st_p}")
    for node in (pred, standby, primary, sink):
        node.stop()
    # (a starting node's af_packet ports take every frame of their
    # namespace until bound to their interface: the predecessor's input
    # port, a HEARTBEAT or two of the others -- not the input, dropped here)
    got_m, got_s = ([x for x in pcap.read_capture_out(L.path(f"sink-{k}.pcap"))
                     if x[6:8] == b"\x02\x00"] for k in "ms")
    # lost: what the source sent while the predecessor was down (on the
    # wire), and what was in flight to the old primary when it died
    check_sink(L, frames, got_m, got_s, allow_loss=len(frames), tail_only=False)
    L.expect(len(got_s) >= rate, f"the standby passed {len(got_s)}")


def pred_restart_then_failover(L, frames):
    """The predecessor restarts after a failover and, before it hears the
    standby (its link to it down meanwhile), is asked to fail over again:
    it offers the epoch the standby already runs the chain at.  What the
    new run stamped until then went to the dead primary only, and is in
    its log: the standby, taking the REPLAY_START for a copy of the one
    it took, must acknowledge only the input it has -- the new run's log
    is replayed, and every frame the new run stamped reaches the sink
    (before, the standby acknowledged the whole range and the predecessor
    dropped it from its log unsent)."""
    rate = 2000
    sink, standby, primary, pred, source = failed_over_then_pred_down(L, frames, rate)
    link_p_s = lambda up: lab.run_cmd(lab.in_netns(pred.netns, [
        "ip", "link", "set", "dev", "p_s", "up" if up else "down"]))
    link_p_s(False)  # no HEARTBEAT of the standby heard: its epoch unknown
    try:
        before = sink.port("in_s")["rx"]
        pred.start()
        lab.wait_until(lambda: remote(pred)["stamped"] >= rate // 2, 30,
                       "the new run's input logged (sent to the dead primary)")
        rep = pred.query("/onvm/remote/failover,web")
        L.expect(rep.get("status") == "ok", f"failover after the restart: {rep}")
        time.sleep(0.05)
    finally:
        link_p_s(True)
    lab.wait_until(lambda: remote(pred)["state"] == "standby", 30,
                   "the predecessor sending to the standby")
    lab.wait_until(lambda: sink.port("in_s")["rx"] >= before + rate, 30,
                   "a second of input through the standby")
    source.terminate()
    source.wait(10)
    stamped = lab.wait_until(
        lambda: (lambda st, got: st["stamped"] if got >= st["stamped"] else None)(
            remote(pred), sink.port("in_s")["rx"] - before), 30,
        "every frame the new run stamped at the sink", )
    st_p, st_s = remote(pred), remote(standby)
    got = sink.port("in_s")["rx"] - before
    print(f"pred_restart_then_failover: the new run stamped {stamped}, the sink got {got} "
          f"through the standby; predecessor: followed {st_p['failovers_followed']}, "
          f"adopted {st_p['epochs_adopted']}, replayed {st_p['replayed']}, log trimmed to "
          f"{st_p['log_trimmed_to']}; standby: {st_s['out_passed']} passed")
    L.expect(got == stamped, f"the sink got {got} of the {stamped} frames the new run stamped")
    for node in (pred, standby, primary, sink):
        node.stop()


def pred_restart_after_given_up(L, frames):
    """The predecessor's run gives a failover to epoch 2 up, and its
    REPLAY_CANCEL reaches the standby (sent here into the link, as that run
    would send it: a failover given up for real needs a standby that
    cannot answer yet can hear).  Then the predecessor restarts; its new
    run counts its attempts from its configured epoch again, and offers
    epoch 2 once the primary dies.  The standby must take it: the cancel
    was the old run's (before, it refused the epoch for good, silently,
    and the chain stayed down)."""
    rate = 2000
    sink, standby, primary, pred = build(L, frames, source=rate)
    start_all(sink, standby, primary, pred)
    start_source(L, pred)
    lab.wait_until(lambda: remote(primary)["out_released"] >= rate, 60, "a second released")
    st_p, st_s = remote(pred), remote(standby)
    mac = lambda ns, ifn: bytes.fromhex(lab.run_cmd(lab.in_netns(ns, [
        "ip", "-br", "link", "show", "dev", ifn])).split()[2].replace(":", ""))
    cancel = rsync_frame(REPLAY_CANCEL, 7, st_p["epoch"] + 1, sender_run=st_p["run_id"],
                         receiver_run=st_s["run_id"])
    cancel = mac(standby.netns, "s_p") + mac(pred.netns, "p_s") + cancel[12:]
    lab.send_frames(pred.netns, "p_s", L.path("cancel.pcap"), [cancel] * 3)
    lab.wait_until(lambda: remote(standby)["ctl_ok"] >= st_s["ctl_ok"] + 3, 10,
                   "the REPLAY_CANCELs taken")
    pred.crash()
    pred.stop()
    pred.remove_runtime()
    pred.start()
    lab.wait_until(lambda: remote(pred)["stamped"] >= rate // 4, 30, "the new run's input")
    primary.crash()
    rep = pred.query("/onvm/remote/failover,web")
    L.expect(rep.get("status") == "ok", f"failover of the new run: {rep}")
    lab.wait_until(lambda: remote(standby)["state"] in ("replaying", "active"), 10,
                   f"the standby taking epoch {st_p['epoch'] + 1} over from the new run")
    st_p, st_s = remote(pred), remote(standby)
    print(f"pred_restart_after_given_up: the new run offered {st_p['epoch_offered']}, the "
          f"standby took {st_s['epoch']} over")
    L.expect(st_s["epoch"] == st_p["epoch_offered"] == 2, f"{st_p} / {st_s}")
    for node in (pred, standby, primary, sink):
        node.stop()


def pred_restart_in_replay(L, frames):
    """The predecessor dies in the middle of a replay and restarts: its log,
    and with it what the standby's replayed range still lacks, are gone.
    The standby, hearing its new run, gives the rest of the range up
    (counted, replay_lost) and runs the chain on; the new run adopts the
    standby's epoch and its input comes through (before, the standby waited
    for the range for ever and dropped every new frame as past a gap).  The
    standby's NF is slow (test_nf -d 2000) and no cut for 10 s: a replayed
    range of about 12 000 frames, of which the predecessor sends 2 048 past
    the acknowledged ones at a time, killed as soon as the replay starts."""
    rate = 2000
    nfs = ([{"name": "fwd", "binary": lab.TEST_NF, "service": 1}], [1])
    sink, standby, primary, pred = build(L, frames, nfs=nfs, checkpoint_ms=10000, source=rate)
    standby.config["nfs"][0]["args"] = ["-d", "2000"]
    standby.save_config()
    start_all(sink, standby, primary, pred)
    start_source(L, pred)
    lab.wait_until(lambda: remote(primary)["out_released"] >= 6 * rate, 60, "6 s released")
    primary.crash()
    L.expect(pred.query("/onvm/remote/failover,web").get("status") == "ok", "failover")
    lab.wait_until(lambda: remote(standby)["state"] == "replaying", 30, "the replay under way",
                   interval=0.005)
    pred.crash()
    pred.stop()
    pred.remove_runtime()
    pred.start()
    lab.wait_until(lambda: remote(standby)["state"] == "active", 30,
                   "the standby running the chain without the rest of its range")
    before = sink.port("in_s")["rx"]
    lab.wait_until(lambda: sink.port("in_s")["rx"] >= before + 500, 60,
                   "the restarted predecessor's input through the standby")
    st_s, st_p = remote(standby), remote(pred)
    print(f"pred_restart_in_replay: the standby replayed {st_s['ingress_replayed']}, lost "
          f"{st_s.get('replay_lost')} of its range; the new predecessor at epoch "
          f"{st_p['epoch']} ({st_p['state']}), epochs adopted {st_p['epochs_adopted']}")
    L.expect(st_s.get("replay_lost", 0) > 0 and st_p["epochs_adopted"] == 1,
             f"standby {st_s} / predecessor {st_p}")
    for node in (pred, standby, primary, sink):
        node.stop()
    got_m, got_s = ([x for x in pcap.read_capture_out(L.path(f"sink-{k}.pcap"))
                     if x[6:8] == b"\x02\x00"] for k in "ms")
    check_sink(L, frames, got_m, got_s, allow_loss=len(frames), tail_only=False)


def clock_input(trace, copies):
    """The trace `copies` times, tagged as tagged_input() tags: the odd
    copies with the trace's own flows (they go on across a failover), the
    even ones each with new flows (done long before it)."""
    frames, out = pcap.read_pcap(trace), []
    for c in range(copies):
        for f in frames:
            f = new_flows(f, c + 1) if c % 2 == 0 else f
            out.append(f[:6] + b"\x02\x00" + struct.pack(">I", len(out) + 1) + f[12:])
    return out


def clock_skew(L, trace):
    """The standby on another clock: its manager and NFs in a time namespace
    whose CLOCK_MONOTONIC is +100 000 s, then -3 000 s (less on a host up
    for less: a clock set below 0 is refused), off the primary's (two hosts
    booted at other times).  The primary dies mid-stream; the
    restored flows must keep their age.  Ahead by 100 000 s, with flows
    forgotten after 8 s idle: none may expire within the run (an entry
    stamped by the primary's clock looked 100 000 s idle to a standby that
    compared it with its own: expired at the next sweep, and the flow's next
    packet would draw another backend).  Behind by 3 000 s, with 2 s: every
    flow must be gone 4 s after the end (compared with a clock 3 000 s
    behind, a restored flow never expired)."""
    frames = clock_input(trace, 400)
    n = len(frames)
    with open(L.path("vlan-policy.json"), "w") as f:
        json.dump({"default": {"vlan": 42, "pcp": 3},
                   "rules": [{"proto": "tcp", "dport": 25, "vlan": 25}],
                   "idle_timeout_ms": 3600000, "flows": 4096}, f)
    # (behind: by less than this host's clocks read, or the kernel refuses
    # the namespace with ERANGE -- a machine booted minutes ago)
    up = min(time.monotonic(), time.clock_gettime(time.CLOCK_BOOTTIME))
    behind = min(3000, int(up) - 120)
    lab.check(behind >= 60, f"this host is up for {up:.0f} s: too little for a clock "
              "60 s behind")
    for rnd, (offset, idle_ms) in enumerate(((100000, 8000), (-behind, 2000))):
        tag = f"c{rnd}"
        with open(L.path("lb.json"), "w") as f:
            json.dump({"backends": [{"ip": ip, "mac": mac} for ip, mac in BACKENDS],
                       "idle_timeout_ms": idle_ms, "flows": 4096}, f)
        sink, standby, primary, pred = build(L, frames, tag, stateful=True)
        NODES[:] = [pred, primary, standby, sink]
        standby.time_ns = L.time_namespace(offset)
        start_all(sink, standby, primary, pred)
        lab.wait_until(lambda: remote(primary)["out_released"] >= n * 0.4, 120,
                       "0.4 of the input released")
        primary.stop(sig=signal.SIGKILL)
        primary.remove_runtime()
        L.expect(pred.query("/onvm/remote/failover,web").get("status") == "ok", "failover")
        lab.wait_until(lambda: remote(pred)["state"] == "standby" and
                       remote(pred)["stamped"] == n, 180, "the replay and the input done")
        lab.wait_until(lambda: remote(standby)["state"] == "active", 60, "replay ended")
        lab.wait_until(lambda: quiet(standby, sink), 30, "the standby's output drained")
        if offset < 0:
            time.sleep(4)  # every flow idle for 2 s, and swept (twice per idle time-out)
        for node in (pred, standby, sink):
            L.expect(node.stop() == 0, f"{node.name}: manager exit status")
        got_m = pcap.read_capture_out(L.path(f"sink-m{tag}.pcap"))
        got_s = pcap.read_capture_out(L.path(f"sink-s{tag}.pcap"))
        lost, backend = check_stateful(L, frames, got_m, got_s, STAGES * STAGE_PACKETS + 2 * 32)
        lb = lab.read_json(L.path(f"standby{tag}-lb.json"))
        print(f"clock {offset:+d} s: lost {lost}, {len(backend)} flows; the promoted balancer "
              f"expired {lb['expired']}, {lb['active_flows']} still in its table, "
              f"{lb['new_flows']} new flows drawn")
        if offset > 0:  # (no flow was idle for 8 s)
            L.expect(lb["expired"] == 0,
                     f"clock {offset:+d} s: {lb['expired']} flows expired before their time")
        else:
            L.expect(lb["active_flows"] == 0,
                     f"clock {offset:+d} s: {lb['active_flows']} flows idle for 4 s not expired")


DPI_TRACES = ["dns.pcap", "ftp.pcap", "http-manipulated.pcap", "quic.pcap", "smtp.pcap",
              "ssh.pcap", "webex.pcap", "wireguard.pcap"]


def dpi_flows(doc):
    return {(f["a"], f["b"], f["proto"], f["aport"], f["bport"]):
            (f["protocol"], f["state"], f["detect_pkts"], f["packets"], f["bytes"])
            for f in doc["flows"]}


def dpi_input(copies=5):
    """Several traces one after another, `copies` times (each copy's flows
    new ones), each frame tagged: nDPI names DNS, FTP, HTTP, QUIC, SMTP,
    SSH, ... flows.  Long enough, paced, for a kill mid-stream."""
    out = []
    for c in range(copies):
        for name in DPI_TRACES:
            for f in pcap.read_pcap(traces.trace(name)):
                if len(f) > 1600:
                    continue  # (af_packet's ring slots are 2 KB: larger frames are dropped)
                f = new_flows(f, c + 1)
                out.append(f[:6] + b"\x02\x00" + struct.pack(">I", len(out) + 1) + f[12:])
    return out


FILLER_TYPE = 0x88B7  # IEEE OUI-extended EtherType: no NF here reads it


def with_filler(frames, count=4200):
    """`frames`, then `count` small non-IPv4 frames, tagged on: a paced
    link's last 4096 frames wait in the sender's ring for a send that never
    comes, so the filler is what waits there (no oracle reads it)."""
    out = list(frames)
    for _ in range(count):
        out.append(b"\xff" * 6 + b"\x02\x00" + struct.pack(">IH", len(out) + 1, FILLER_TYPE) +
                   bytes(46))
    return out


def dpi_scenario(L, frames, rounds, seed):
    """nDPI's state -- its detection module, automata and per-flow structures,
    full of pointers, in a region heap -- across nodes: the standby's dpi
    maps its regions at the primary's addresses, gets the cuts written into
    them, and is promoted when the primary is SIGKILLed mid-stream.  Per
    flow it must name the same protocol, after the same number of packets,
    as a run without a failure (the same frames through the same lab, the
    primary stopped at the end), and count every packet once."""
    # The run without a failure: the same lab, the primary stopped at the
    # end (its dpi exports then).
    n = len(frames)
    stream = with_filler(frames)
    real = lambda got: [f for f in got if tag_of(f) <= n]
    sink, standby, primary, pred = build(L, stream, "r", stateful=True, dpi=True)
    start_all(sink, standby, primary, pred)
    lab.wait_until(lambda: remote(primary)["out_released"] >= n, 180, "the reference run")
    L.expect(remote(primary)["ingress_gaps"] == 0, f"reference run: {remote(primary)}")
    for node in (pred, primary, standby, sink):
        L.expect(node.stop() == 0, f"{node.name}: manager exit status")
    ref_json = L.path("primaryr-dpi.json")
    want = dpi_flows(lab.read_json(ref_json))
    names = sorted({v[0] for v in want.values()})
    print(f"dpi: {n} frames, {len(want)} flows: {', '.join(names)}")
    L.expect(lab.read_json(ref_json)["packets"] >= n, "the reference dpi missed packets")
    for k in range(rounds):
        rnd, tag = random.Random(seed * 1000 + k), f"d{k}"
        sink, standby, primary, pred = build(L, stream, tag, stateful=True, dpi=True)
        start_all(sink, standby, primary, pred)
        share = rnd.uniform(0.1, 0.7)  # (a paced link's last 4096 frames wait for a send)
        lab.wait_until(lambda: remote(primary)["out_released"] >= n * share, 120,
                       f"{share:.2f} of the input released")
        time.sleep(rnd.uniform(0, 0.02))
        before = remote(primary)
        L.expect(before["cuts_with_state"] > 0 and before["out_aborted"] == 0,
                 f"primary before the kill: {before}")
        primary.stop(sig=signal.SIGKILL)
        primary.remove_runtime()
        rep = pred.query("/onvm/remote/failover,web")
        L.expect(rep.get("status") == "ok", f"failover: {rep}")
        lab.wait_until(lambda: remote(pred)["state"] == "standby" and
                       remote(pred)["stamped"] == len(stream), 180,
                       "the replay and the input done")
        lab.wait_until(lambda: remote(standby)["state"] == "active", 60, "replay ended")
        lab.wait_until(lambda: quiet(standby, sink), 30, "the standby's output drained")
        st_s = remote(standby)
        for node in (pred, standby, sink):
            L.expect(node.stop() == 0, f"{node.name}: manager exit status")
        got_m = real(pcap.read_capture_out(L.path(f"sink-m{tag}.pcap")))
        got_s = real(pcap.read_capture_out(L.path(f"sink-s{tag}.pcap")))
        lost = check_sink(L, frames, got_m, got_s, allow_loss=STAGES * STAGE_PACKETS + 2 * 32)
        got = lab.read_json(L.path(f"standby{tag}-dpi.json"))
        diff = flowtable.diff_flows(dpi_flows(got), want)
        L.expect(not diff, f"{tag}: nDPI's flows after the failover differ from a run without "
                 "one:\n    " + "\n    ".join(diff))
        L.expect(got["packets"] == len(stream),
                 f"{tag}: the promoted dpi counted {got['packets']} of {len(stream)}")
        print(f"dpi{tag} (kill at {share:.2f}): standby applied "
              f"{st_s['state_bytes_applied']} state bytes, replayed "
              f"{st_s['ingress_replayed']}, lost {lost}; {len(want)} flows identical")


def one_round(L, scenario, frames, rnd, rnd_tag):
    n = len(frames)
    remote_applied, remote_before = {}, {}
    stateful = scenario in STATEFUL
    sink, standby, primary, pred = build(L, frames, rnd_tag,
                                         bfd=scenario in ("bfd", "agent") + LINKDOWN,
                                         failover_by="agent" if scenario == "agent" else None,
                                         link_failover=scenario != "linkdown_bfd",
                                         stateful=stateful, nd_heavy=scenario == "nd_heavy",
                                         multi=scenario == "multi",
                                         paced=False if scenario == "latch_full" else None)
    NODES[:] = [pred, primary, standby, sink]
    sink.start(wait=False)
    standby.start(wait=False)
    primary.start(wait=False)
    for node in (sink, standby, primary):
        node.wait_ready(120)
    if scenario in FAILURES:
        if scenario not in ("kill",) + STATEFUL:
            pred.start(wait=False)
            pred.wait_ready(120)
            # hold the input until BFD is Up (the trace is read at once)
            pred.wait_bfd("to_m", "Up", timeout=60)
            primary.wait_bfd("to_p", "Up", timeout=60)
        else:
            if scenario == "latch_full":
                # the standby in sync first: the input comes at once
                lab.wait_until(lambda: remote(standby)["synced"] == 1, 60, "standby in sync")
            pred.start(wait=False)
            pred.wait_ready(120)
        # a seeded point of the stream: a share released, then a few ms
        share = rnd.uniform(0.05, 0.9)
        if scenario == "latch_full":
            # unpaced: the latch falls behind, and the kill lands while
            # outputs wait for room in it
            # (polled closely: a latch that falls behind only for a
            # moment must not be missed)
            first_release = {}

            def waiting():
                st = remote(primary)
                if st["out_released"] > 0 and not first_release:
                    first_release.update(st)
                return st["out_waiting"] >= 256
            lab.wait_until(waiting, 120, "outputs waiting for the latch", interval=0.002)
            fr = first_release
            print(f"{rnd_tag}: first release seen: released {fr.get('out_released')} in "
                  f"{fr.get('stages_released')} stages, released cut {fr.get('released_cut_id')} "
                  f"(ts {fr.get('released_cut_ts')}), chain cut {fr.get('chain_cut_id')}, ND seen "
                  f"{fr.get('nd_seen')}, ND waits {fr.get('nd_waits')}, stages {fr.get('stages')}")
        else:
            lab.wait_until(lambda: remote(primary)["out_released"] >= n * share, 120,
                           f"{share:.2f} of the input released")
            time.sleep(rnd.uniform(0, 0.02))
        before = remote(primary)
        remote_before.update(before)
        print(f"{rnd_tag}: primary before the failure: released {before['out_released']}, "
              f"aborts {before['aborts_no_vote']}+{before['aborts_cascade']}, "
              f"aborted {before['out_aborted']}, waiting {before['out_waiting']}, before a "
              f"cut {before.get('out_before_cut')}, latch full {before['out_latch_full']}")
        L.expect(before["out_aborted"] == 0,
                 f"the primary aborted stages before the failure (no vote in time: a "
                 f"stalled standby?): {before}")
        L.expect(before["out_latch_full"] == 0,
                 f"the primary's wait queue overflowed before the failure: {before}")
        if scenario == "multi":  # the cuts were aligned across both instances
            info = primary.query("/onvm/info")
            print(f"{rnd_tag}: markers aligned {info['markers_aligned']}, given up "
                  f"{info['align_given_up']}, stale {info['markers_stale']}, refused "
                  f"{info['markers_refused']}, cuts with state {before['cuts_with_state']}")
            L.expect(info["markers_aligned"] > 0 and info["markers_refused"] == 0 and
                     before["cuts_with_state"] > 0, f"primary: {info} / {before}")
        if scenario in LINKDOWN:
            # The primary lives on, cut off from the predecessor only: the
            # predecessor's end set down, or the primary's (the
            # predecessor's then loses its carrier).
            down_ns, down_if = ((pred.ns, "p_m") if rnd.random() < 0.5 else
                                (primary.ns, "m_p"))
            lab.run_cmd(lab.in_netns(down_ns, ["ip", "link", "set", down_if, "down"]))
        else:
            primary.stop(sig=signal.SIGKILL)
        if scenario in ("kill",) + STATEFUL:
            rep = pred.query("/onvm/remote/failover,web")
            L.expect(rep.get("status") == "ok", f"failover: {rep}")
        elif scenario == "agent":
            # BFD sees the primary go, and only asks: nothing moves until
            # the node's agent names the epoch the cluster agreed
            lab.wait_until(lambda: remote(pred)["failover_wanted"] == "bfd", 30,
                           "BFD's Down asking for a failover")
            time.sleep(0.3)
            st = remote(pred)
            L.expect(st["failovers"] == 0 and st["state"] == "primary" and
                     st["failover_requests"] >= 1 and remote(standby)["state"] == "standby",
                     f"failed over without the agent: {st}")
            rep = pred.query("/onvm/remote/failover,web,1")
            L.expect(rep.get("status") == "error" and "stale" in rep.get("reason", ""),
                     f"the chain's own epoch offered again: {rep}")
            rep = pred.query("/onvm/remote/failover,web")
            L.expect(rep.get("status") == "error" and "agent" in rep.get("reason", ""),
                     f"a failover without the cluster's epoch: {rep}")
            rep = pred.query("/onvm/remote/failover,web,7")
            L.expect(rep.get("status") == "ok", f"the agent's failover at epoch 7: {rep}")
            lab.wait_until(lambda: remote(pred)["failovers"] == 1, 30, "failover")
            st = remote(pred)
            L.expect(st["failover_trigger"] == "agent" and st["epoch_offered"] == 7 and
                     st["failover_wanted"] == "", f"the agent's failover: {st}")
            rep = pred.query("/onvm/remote/failover,web,7")
            L.expect(rep.get("status") == "error", f"a second request at epoch 7: {rep}")
        else:  # BFD sees the primary go, or the predecessor its link
            lab.wait_until(lambda: remote(pred)["failovers"] == 1, 30, "failover")
            trigger = remote(pred)["failover_trigger"]
            L.expect(trigger == ("link" if scenario == "linkdown" else "bfd"),
                     f"failover triggered by {trigger!r}")
            if scenario != "linkdown":
                L.expect(pred.bfd("to_m")["state"] == "Down", f"BFD: {pred.bfd('to_m')}")
        lab.wait_until(lambda: remote(pred)["state"] == "standby" and
                       remote(pred)["stamped"] == n, 180, "the replay and the input done")
        lab.wait_until(lambda: remote(standby)["state"] == "active", 60, "replay ended")
        lab.wait_until(lambda: quiet(standby, sink), 30, "the standby's output drained")
        st_p, st_s = remote(pred), remote(standby)
        if scenario == "agent":
            L.expect(st_s["epoch"] == 7 and st_p["epoch"] == 7,
                     f"the chain runs the cluster's epoch 7: standby {st_s['epoch']}, "
                     f"predecessor {st_p['epoch']}")
        remote_applied.update(st_s)
        print(f"{rnd_tag} (kill at {share:.2f}): pred replayed {st_p['replayed']} from ts "
              f"{st_p['replay_from_ts']}, trigger {st_p['failover_trigger']}, fell behind "
              f"{st_p['behind_events']}x (resent {st_p['resent']}); standby admitted {st_s['ingress_admitted']}, gaps "
              f"{st_s['ingress_gaps']}, stale {st_s['ingress_stale']}, covered "
              f"{st_s['ingress_replay_covered']}, passed {st_s['out_passed']}, dup "
              f"{st_s['out_dup']}, before takeover {st_s['out_before_takeover']}")
        L.expect(st_s["ingress_gaps"] == 0 and st_s["out_before_takeover"] == 0,
                 f"standby: {st_s}")
        if scenario in LINKDOWN:
            # False suspicion: the old primary still runs, and is fenced --
            # nothing it holds is released any more.
            lab.wait_until(lambda: remote(primary)["state"] == "fenced", 30,
                           "the cut-off primary fenced")
            lab.run_cmd(lab.in_netns(down_ns, ["ip", "link", "set", down_if, "up"]))
            rel = remote(primary)["out_released"]
            time.sleep(0.3)
            st_m = remote(primary)
            print(f"{rnd_tag}: old primary admitted {st_m['ingress_admitted']}, gaps "
                  f"{st_m['ingress_gaps']}, released {st_m['out_released']}, aborted "
                  f"{st_m['out_aborted']}, refused {st_m['out_refused']}; sink in_m "
                  f"{sink.port('in_m')['rx']}; out port {primary.port('out')}")
            L.expect(st_m["out_released"] == rel and st_m["stages_busy"] == 0,
                     f"fenced primary released more or holds stages: {st_m}")
    else:
        pred.start()
        lab.wait_until(lambda: remote(primary)["out_released"] == n, 120,
                       "every frame released by the primary")
        sink.wait_port("in_m", "rx", n)
        st_m, st_s, st_p = remote(primary), remote(standby), remote(pred)
        L.expect(st_m["out_latched"] == n and st_m["votes"] > 0 and
                 st_m["aborts_no_vote"] == 0 and st_m["out_latch_full"] == 0,
                 f"primary: {st_m}")
        lab.wait_until(lambda: remote(pred)["log_trimmed"] > 0, 30, "LOG_TRIM applied")
        # Markers cross the NF's rings but are not packets: the NF's
        # counters tell them apart, and add up (once none is in flight).
        fwd = lab.wait_until(lambda: (lambda f: f if f["enqueued"] == f["rx"] + f["markers"]
                                      else None)(primary.nf_by(name="fwd")[0]), 10,
                             "the NF's counters at rest")
        L.expect(fwd["markers"] > 0 and fwd["rx"] == n and
                 fwd["enqueued"] == fwd["rx"] + fwd["markers"] and fwd["cut_failed"] == 0,
                 f"the primary's NF: rx {fwd['rx']}, markers {fwd['markers']}, enqueued "
                 f"{fwd['enqueued']}, cut_failed {fwd['cut_failed']}")
        L.expect(st_s["state"] == "standby" and st_s["votes"] >= st_m["stages_released"] and
                 st_s["out_before_takeover"] == 0, f"standby: {st_s}")
        if scenario == "switchover":
            trimmed_to = remote(pred)["log_trimmed_to"]
            rep = pred.query("/onvm/remote/failover,web")
            L.expect(rep.get("status") == "ok", f"failover: {rep}")
            lab.wait_until(lambda: remote(standby)["state"] == "active", 60, "replay ended")
            lab.wait_until(lambda: remote(primary)["state"] == "fenced", 30,
                           "old primary fenced")
            lab.wait_until(lambda: remote(pred)["end_echoed"] == 1, 30, "REPLAY_END echoed")
            st_s, st_p = remote(standby), remote(pred)
            L.expect(st_s["takeovers"] == 1 and st_s["epoch"] == 2, f"standby: {st_s}")
            replay_range = st_p["replay_newest"] - st_p["replay_from_ts"]
            L.expect(st_s["out_dup"] == replay_range == st_s["ingress_replayed"] and
                     st_s["out_passed"] == 0,
                     f"every replayed packet was released already: {st_s} / {st_p}")
            L.expect(st_p["replay_from_ts"] >= trimmed_to and
                     st_p["replay_newest"] == st_p["last_ts"], f"replayed past the trim: {st_p}")
    for node in (pred, standby, primary, sink):
        killed = node is primary and scenario in ("kill", "bfd", "agent") + STATEFUL
        rc = node.stop()
        if killed:
            node.remove_runtime()  # its hugepage files: 20 rounds would fill the pages
        else:
            L.expect(rc == 0, f"{node.name}: manager exit status {rc}")
            L.expect(not node.leftover_nfs, f"{node.name}: NFs left running")
            # every mbuf back in the pool: latched, waiting and control ones too
            m = re.search(r"pool in use at exit: (\d+) \(at start (\d+)\)", node.log())
            L.expect(m is not None and m.group(1) == m.group(2),
                     f"{node.name}: {m.group(0) if m else 'no pool line at exit'}")
    got_m = pcap.read_capture_out(L.path(f"sink-m{rnd_tag}.pcap"))
    got_s = pcap.read_capture_out(L.path(f"sink-s{rnd_tag}.pcap"))
    # Presumed commit: a stage voted but not released when the primary died
    # is applied at the takeover, so its packets are lost, never doubled.
    # (A failure-free run loses nothing: steady and switchover assert it.)
    # Plus what it had released into its port buffers (a burst each way).
    # A primary cut off but alive (linkdown) releases every stage voted for
    # before the takeover (the votes precede the fencing HEARTBEAT on the
    # sync link), and input its down link refused was logged and replayed:
    # nothing may be lost.
    if stateful:
        nd_heavy = scenario == "nd_heavy"
        # Presumed commit loses the stages voted and not released (the
        # standby counts their packets) -- with outputs waiting for the
        # latch too -- and what the dead primary had in its port buffers.
        presumed = remote_applied.get("takeover_presumed_pkts", 0)
        print(f"{scenario}{rnd_tag}: presumed committed at the takeover: {presumed} packets "
              f"({remote_applied.get('takeover_applied')} transactions; "
              f"{remote_applied.get('takeover_unreleasable')} could not have been released)")
        # (what to read should a released frame come out twice: how far the
        # standby had applied, what it refused, what the primary sent)
        refused = ", ".join(f"{k} {v}" for k, v in sorted(remote_applied.items())
                            if k.startswith("ctl_") and k != "ctl_ok" and v)
        print(f"{scenario}{rnd_tag}: standby applied txid {remote_applied.get('applied_txid')}"
              f", took over at {remote_applied.get('takeover_txid')}, refused "
              f"{refused or 'nothing'}; primary before: stages released "
              f"{remote_before.get('stages_released')}, commits sent "
              f"{remote_before.get('commits_sent')}, votes {remote_before.get('votes')}")
        allow = presumed + 2 * 32 if scenario == "latch_full" else STAGES * STAGE_PACKETS + 2 * 32
        lost, backend = check_stateful(L, frames, got_m, got_s, allow,
                                       vlan=not nd_heavy, per_flow=scenario == "multi")
        doc = lambda nf: lab.read_json(L.path(f"standby{rnd_tag}-{nf}.json"))
        if scenario == "multi":
            mon, lb = (instances_merged(L, [doc(f"{nf}{i}") for i in range(2)], nf)
                       for nf in ("mon", "lb"))
        else:
            mon, lb = doc("mon"), doc("lb")
        check_exports(L, frames, mon, lb, backend, doc("nd") if nd_heavy else None)
        if nd_heavy:
            # the ND path ran: stages waited for the cut after their ND packets
            L.expect(remote_before["nd_waits"] > 0, f"primary: no ND waits: {remote_before}")
        print(f"{scenario}{rnd_tag}: {len(backend)} flows on their backends; standby "
              f"applied {remote_applied.get('state_bytes_applied')} state bytes; primary "
              f"cuts with state {remote_before.get('cuts_with_state')}")
        return lost
    lost = check_sink(L, frames, got_m, got_s,
                      allow_loss=0 if scenario in LINKDOWN else STAGES * STAGE_PACKETS + 2 * 32)
    if scenario not in FAILURES:
        L.expect(len(got_m) == n and not got_s, f"sink: {len(got_m)} + {len(got_s)} of {n}")
    print(f"{scenario}{rnd_tag}: {n} frames, primary {len(got_m)}, standby {len(got_s)}, "
          f"lost {lost}")
    return lost


if __name__ == "__main__":
    SCENARIOS = (("steady", "switchover", "kill", "bfd", "agent", "syncfaults", "standby_lost",
                  "standby_restart", "reprotect", "reprotect_restarts", "primary_restart", "slow_replay", "release_burst",
                  "pred_restart_after_failover", "pred_restart_then_failover",
                  "pred_restart_after_given_up",
                  "pred_restart_in_replay", "clock", "dpi") +
                 LINKDOWN + STATEFUL)
    if len(sys.argv) != 2 or sys.argv[1] not in SCENARIOS:
        sys.exit(f"usage: {sys.argv[0]} {'|'.join(SCENARIOS)}")
    lab.run(f"remote_chain_{sys.argv[1]}", lambda L: main(L, sys.argv[1]))
