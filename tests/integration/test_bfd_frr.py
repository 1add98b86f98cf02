#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""BFD interoperability with FRR's bfdd (RFC 5880/5881, 10 ms x 3).

  netns M: onvm_mgr, port "link" = net_af_packet on veth end "bfa" (no
           kernel address), BFD session "frr" 198.18.1.1 -> 198.18.1.2
  netns F: FRR's bfdd standalone (no zebra) on veth end "bfb", 198.18.1.2/24

Asserted, in order:
 1. ARP: bfdd's kernel resolves 198.18.1.1 through the manager (it answers),
    the manager learns bfdd's MAC from ARP; the session comes Up on both
    sides (the manager's and bfdd's "show bfd peers").
 2. Detection, DETECT_TRIALS times: SIGKILL bfdd -> the manager declares Down
    with diag 1 (control detection time expired) within the detection time
    (30 ms) plus MARGIN_MS, timed from just before the kill to the Down
    event's own timestamp (last_down_ns, CLOCK_MONOTONIC); restarting bfdd
    brings the session Up again on both sides.  (Detection times over many
    trials are measured by bench/bfd_detect.py, not asserted here.)
 3. AdminDown through /onvm/bfd/admin: bfdd reports the peer down with
    remote diagnostic "administratively down" (diag 7); bfdd's packets
    meanwhile are discarded (RFC 5880 6.8.6), counted as rx_drop_admin_down
    and not as received; back up -> Up.
 4. A timer change through /onvm/bfd/timers while Up (20 ms TX, 30 ms RX,
    multiplier 4) runs a Poll Sequence that bfdd answers with a Final: bfdd
    shows the new remote intervals and multiplier, the manager counts the
    poll as completed, and the session never went down for it.
 5. Nothing was dropped for a bad frame: UDP/IP/TTL/auth counters all zero.
 6. The manager exits 0 and leaves nothing behind.
"""
import signal
import time

from onvm import lab

DETECT_TRIALS = 3
MARGIN_MS = 70  # a shared 2-vCPU host: scheduling, not protocol, sets this


def bad_frame_drops(sess):
    # no_session and admin_down are drops of well-formed packets.
    return {k: v for k, v in sess.items()
            if k.startswith("rx_drop_") and v
            and k not in ("rx_drop_no_session", "rx_drop_admin_down")}


def main(L):
    ns_m, ns_f = L.netns("m"), L.netns("f")
    L.veth(ns_m, "bfa", ns_f, "bfb", addr_b="198.18.1.2/24")
    bfdd = L.bfdd("frr", ns_f, local="198.18.1.2", peer="198.18.1.1", interval_ms=10, mult=3)
    node = L.node("mgr", {
        "ports": [{"name": "link", "dev": "net_af_packet0,iface=bfa"}],
        "bfd": {"sessions": [{"name": "frr", "port": "link", "local": "198.18.1.1",
                              "peer": "198.18.1.2", "desired_min_tx_us": 10000,
                              "required_min_rx_us": 10000, "detect_mult": 3}]},
    }, netns=ns_m)
    bfdd.start()
    node.start()

    # 1. Up on both sides, through ARP.
    sess = node.wait_bfd("frr", "Up", timeout=60)
    peer = bfdd.wait_status("up", timeout=30)
    top = node.bfd()
    L.expect(sess["peer_mac_source"] == "arp" and sess["peer_mac"],
             f"peer MAC not learned by ARP: {sess['peer_mac_source']} {sess['peer_mac']}")
    L.expect(top["arp_requests"] >= 1 and top["arp_learned"] >= 1,
             f"no ARP request sent or nothing learned: {top}")
    # The kernel learnt our MAC from our own request; make it ask.
    replied = top["arp_replied"]
    lab.run_cmd(lab.in_netns(ns_f, ["ip", "neigh", "flush", "dev", "bfb"]))
    lab.wait_until(lambda: node.bfd()["arp_replied"] > replied, 30,
                   "the manager to answer bfdd's kernel's ARP request")
    L.expect(node.bfd("frr")["state"] == "Up", "the session left Up while ARP was re-resolved")
    L.expect(peer["remote-id"] == sess["local_discr"] and sess["remote_discr"] == peer["id"],
             f"discriminators do not match: bfdd id {peer['id']} remote-id {peer['remote-id']}, "
             f"ours {sess['local_discr']} remote {sess['remote_discr']}")
    L.expect(sess["detect_time_us"] == 30000, f"detection time {sess['detect_time_us']} us")
    print(f"Up on both sides (ARP: peer MAC {sess['peer_mac']}; "
          f"discriminators {sess['local_discr']} / {peer['id']})")

    # 2. bfdd dies -> Down within the detection time (+ margin); back -> Up.
    for trial in range(DETECT_TRIALS):
        before = node.bfd("frr")
        t0 = time.monotonic_ns()
        bfdd.kill(signal.SIGKILL)
        sess = node.wait_bfd("frr", "Down", timeout=10)
        took_ms = (sess["last_down_ns"] - t0) / 1e6
        print(f"trial {trial + 1}: bfdd SIGKILLed, Down after {took_ms:.1f} ms "
              f"(diag {sess['last_down_diag']})")
        L.expect(sess["last_down_ns"] > t0, "the session went down before bfdd was killed")
        L.expect(took_ms <= 30 + MARGIN_MS,
                 f"trial {trial + 1}: Down {took_ms:.1f} ms after the kill, "
                 f"want <= 30 + {MARGIN_MS} ms")
        L.expect(sess["last_down_diag"] == 1 and sess["local_diag"] == 1,
                 f"down diag {sess['last_down_diag']}, want 1 (control detection time expired)")
        L.expect(sess["down_events"] == before["down_events"] + 1,
                 f"down events {before['down_events']} -> {sess['down_events']}")
        bfdd.start()
        node.wait_bfd("frr", "Up", timeout=60)
        bfdd.wait_status("up", timeout=30)

    # 3. AdminDown: bfdd sees diag 7.
    r = node.query("/onvm/bfd/admin,frr,down")
    L.expect(r.get("status") == "ok", f"/onvm/bfd/admin: {r}")
    sess = node.wait_bfd("frr", "AdminDown", timeout=10)
    L.expect(sess["local_diag"] == 7, f"AdminDown with diag {sess['local_diag']}")
    peer = bfdd.wait_status("down", timeout=10)
    L.expect(peer["remote-diagnostic"] == "administratively down",
             f"bfdd's remote diagnostic: {peer['remote-diagnostic']!r}")
    held = node.bfd("frr")  # AdminDown since the query returned
    lab.wait_until(lambda: node.bfd("frr")["rx_drop_admin_down"] > held["rx_drop_admin_down"],
                   10, "a packet from bfdd to be discarded while AdminDown")
    sess = node.bfd("frr")
    L.expect(sess["rx"] == held["rx"],
             f"packets received while AdminDown: rx {held['rx']} -> {sess['rx']}")
    print(f"AdminDown: bfdd reports {peer['status']}, remote diagnostic "
          f"{peer['remote-diagnostic']!r}; {sess['rx_drop_admin_down']} of its packets "
          f"discarded meanwhile")
    node.query("/onvm/bfd/admin,frr,up")
    node.wait_bfd("frr", "Up", timeout=60)
    bfdd.wait_status("up", timeout=30)

    # 4. Poll/Final timer change.
    before = node.bfd("frr")
    r = node.query("/onvm/bfd/timers,frr,20000,30000,4")
    L.expect(r.get("status") == "ok", f"/onvm/bfd/timers: {r}")

    def poll_done():
        s = node.bfd("frr")
        return s["polls_completed"] > before["polls_completed"] and not s["poll_active"]
    lab.wait_until(poll_done, 10, "the Poll Sequence to end with a Final")

    def bfdd_has_new_timers():
        p = bfdd.peer_state()
        return p if (p["remote-transmit-interval"] == 20 and p["remote-receive-interval"] == 30
                     and p["remote-detect-multiplier"] == 4) else None
    peer = lab.wait_until(bfdd_has_new_timers, 10, "bfdd to show the new timers")
    time.sleep(0.5)
    sess = node.bfd("frr")
    L.expect(sess["state"] == "Up" and peer["status"] == "up",
             f"after the timer change: ours {sess['state']}, bfdd {peer['status']}")
    L.expect(sess["down_events"] == before["down_events"],
             "the session went down during the timer change")
    L.expect(sess["tx_interval_us"] == 20000 and sess["detect_mult"] == 4,
             f"our timers now: tx {sess['tx_interval_us']} us x {sess['detect_mult']}")
    print(f"timer change: bfdd sees tx {peer['remote-transmit-interval']} ms, "
          f"rx {peer['remote-receive-interval']} ms x {peer['remote-detect-multiplier']}; "
          f"polls completed {before['polls_completed']} -> {sess['polls_completed']}")

    # 5. No bad frames on either direction of a healthy link.
    L.expect(not bad_frame_drops(sess), f"frames dropped: {bad_frame_drops(sess)}")
    L.expect(sess["tx_no_mac"] <= 1 and sess["tx_fail"] == 0,
             f"tx_no_mac {sess['tx_no_mac']} tx_fail {sess['tx_fail']}")
    link = node.port("link")
    L.expect(link["ctrl_rx"] > 0 and link["ctrl_tx"] > 0,
             f"link ctrl_rx {link['ctrl_rx']} ctrl_tx {link['ctrl_tx']}")

    # 6. Clean exit.
    rc = node.stop()
    L.expect(rc == 0, f"manager exit status {rc}")
    L.expect(not node.runtime_leftovers(), f"runtime files left: {node.runtime_leftovers()}")


if __name__ == "__main__":
    lab.run("bfd_frr", main)
