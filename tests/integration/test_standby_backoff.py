#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""A standby that fails before parking is retried with back-off, not re-forked
on every pass of the control loop (finding 5 of the hardening review).

A "local" test_nf -S -x FILE: its standbys exit with status 3 before parking
while FILE exists (a standby with a bad config, an EAL that cannot start, a
state layout that does not match).  The node starts protected (no FILE); the
test creates FILE and kills the active, so the promoted standby's
replacements all fail.  Asserted over the next WINDOW_S seconds: at most
MAX_LAUNCHES standbys were launched (100 ms, doubling: six fit in 3.5 s,
where a relaunch per control-loop pass gave dozens), the slot counts the
failures in a row and says why (telemetry standby_failures,
standby_last_failure "... exited with status 3 before parking",
standby_retry_in_ms), the node counts them (nf_standby_failures), and the
manager logs each one.  Then FILE goes away: the next standby parks, the
count resets, and the log says the NF is protected again.
"""
import os
import re
import signal
import time

from onvm import lab, traces

WINDOW_S = 3.5
MAX_LAUNCHES = 7


def launches(node, pid):
    return len(re.findall(rf"launched standby of NF '[^']*' .* pid \d+ for instance {pid}",
                          node.log()))


def test(L):
    path = traces.trace("dns.pcap")
    fail = L.path("standby-fails")
    node = L.node("backoff", {
        "ports": [{"name": "in", "dev": f"net_pcap0,rx_pcap={path},tx_pcap={L.path('out.pcap')}"}],
        "nfs": [{"binary": lab.TEST_NF, "service": 1, "resiliency": "local",
                 "args": ["-S", "-x", fail]}],
        "chains": [{"name": "c", "services": [1], "ingress_port": "in", "exit_port": "in"}],
    }).start()
    nf = node.nf_by(service=1)[0]
    inst = nf["instance"]
    L.expect(nf["standby_parked"] == 1, f"not protected at start: {nf}")
    open(fail, "w").close()
    os.kill(nf["pid"], signal.SIGKILL)
    lab.wait_until(lambda: node.nf_by(service=1)[0]["failovers"] == 1, 30, "the failover")
    before = launches(node, inst)
    t0 = time.monotonic()
    seen_retry = 0
    while time.monotonic() - t0 < WINDOW_S:
        v = node.nf_by(service=1)[0]
        seen_retry = max(seen_retry, v["standby_retry_in_ms"])
        time.sleep(0.05)
    n = launches(node, inst) - before
    v = node.nf_by(service=1)[0]
    info = node.info()
    print(f"{n} standby launches in {WINDOW_S} s; {v['standby_failures']} failures in a row "
          f"({v['standby_last_failure']}); longest retry wait seen {seen_retry} ms")
    L.expect(1 <= n <= MAX_LAUNCHES, f"{n} standby launches in {WINDOW_S} s "
             f"(at most {MAX_LAUNCHES} with back-off)")
    L.expect(v["standby_failures"] >= 3, f"standby_failures {v['standby_failures']}")
    L.expect("exited with status 3 before parking" in v["standby_last_failure"],
             f"standby_last_failure '{v['standby_last_failure']}'")
    L.expect(seen_retry >= 400, f"the retry wait never grew past {seen_retry} ms")
    L.expect(info["nf_standby_failures"] >= v["standby_failures"],
             f"node nf_standby_failures {info['nf_standby_failures']}")
    L.expect(len(re.findall(r"exited with status 3 before parking \(\d+ in a row\); next "
                            r"standby in \d+ ms", node.log())) >= 3,
             "the manager log does not give each failure with its back-off")
    os.unlink(fail)
    v = lab.wait_until(lambda: (lambda x: x if x["standby_parked"] else None)(
        node.nf_by(service=1)[0]), 40, "a standby parked again", alive=node.assert_running)
    # standby_parked is the standby's own flag; the control thread resets
    # the count on its next pass.
    try:
        lab.wait_until(lambda: node.nf_by(service=1)[0]["standby_failures"] == 0, 5,
                       "standby_failures reset after parking")
    except lab.TestFailure:
        L.expect(False, f"standby_failures {node.nf_by(service=1)[0]['standby_failures']} "
                 "5 s after parking")
    L.expect("is protected again after" in node.log(), "no 'protected again' log line")
    rc = node.stop()
    L.expect(rc == 0, f"manager exit status {rc}")


if __name__ == "__main__":
    lab.Lab("standby_backoff").run(test)
