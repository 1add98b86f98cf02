#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""Registration requests libnf never sends are refused, each with its reason.

The manager learns who registers from the pidfd libnf attaches to the request
(the pid in the message is only the NF's own view of itself), so that pidfd is
outside input like any other.  mp_register_probe, a DPDK secondary of the
node, sends: no descriptor, a descriptor that is not a pidfd, two
descriptors, a request one byte short, and the pidfd of a process that has
exited.  Asserted, per case: a refusal (-errno) whose reason says what was
wrong; the manager counts each (nf_registrations_refused), logs each, takes
no slot, and keeps none of the descriptors it was sent (its open-descriptor
count is what it was before); and a real NF still registers afterwards.
"""
import os
import subprocess

import lab

PROBE = os.path.join(lab.BUILD, "tests", "mp_register_probe")
CASES = {
    "nofd": "carries 0 file descriptors",
    "notpidfd": "not a pidfd",
    "twofds": "carries 2 file descriptors",
    "badsize": "bad registration message size",
    "exited": "has exited or is not visible",
}


def open_fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def test(L):
    node = L.node("registration", {
        "ports": [{"name": "p", "dev": "net_null0", "rx": False}],
        "nfs": [],
        "chains": [],
    }).start()
    mgr_pid = node.info()["pid"]
    before = open_fds(mgr_pid)
    r = subprocess.run([PROBE, "--proc-type=secondary", f"--file-prefix={node.prefix}",
                        "--lcores=60@0", "--no-pci", "--log-level=lib.eal:warning", "--",
                        *CASES], capture_output=True, text=True, timeout=60)
    L.expect(r.returncode == 0, f"probe exit {r.returncode}: {r.stderr[-400:]}")
    answers = {}
    for line in r.stdout.splitlines():
        case, result, reason = line.split(" ", 2)
        answers[case] = (int(result), reason)
    for case, want in CASES.items():
        got = answers.get(case)
        L.expect(got is not None, f"{case}: no answer")
        if got:
            L.expect(got[0] < 0 and want in got[1], f"{case}: {got}, expected a refusal "
                     f"saying '{want}'")
    info = node.info()
    L.expect(info["nf_registrations_refused"] == len(CASES),
             f"nf_registrations_refused {info['nf_registrations_refused']}, "
             f"{len(CASES)} refusals sent")
    L.expect(not node.nfs(), f"a refused request took a slot: {node.nfs()}")
    after = open_fds(mgr_pid)
    L.expect(after == before, f"the manager has {after} descriptors open, {before} before the "
             "probe (a descriptor sent with a refused request kept)")
    log = node.log()
    L.expect(log.count("refused") >= len(CASES), "not every refusal is in the manager's log")
    nf = L.spawn("fwd", [lab.nf_binary("simple_forward"), "--proc-type=secondary",
                         f"--file-prefix={node.prefix}", "--lcores=61@0", "--no-pci", "--",
                         "-r", "7"])
    lab.wait_until(lambda: node.nf_by(service=7), 60, "a real NF registering after the probe",
                   alive=node.assert_running)
    rc = node.stop()
    L.expect(rc == 0, f"manager exit status {rc}")
    try:
        L.expect(nf.wait(30) == 0, "the NF did not stop cleanly with the node")
    except subprocess.TimeoutExpired:
        raise lab.TestFailure("the NF did not stop with the node")
    print(f"registration: {len(CASES)} malformed requests refused with their reasons, "
          f"no slot or descriptor kept")


if __name__ == "__main__":
    lab.Lab("registration").run(test)
