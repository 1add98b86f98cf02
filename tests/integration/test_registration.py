#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""Registration requests libnf never sends are refused, each with its reason.

The manager learns who registers from the pidfd libnf attaches to the request
(the pid in the message is only the NF's own view of itself), so that pidfd is
outside input like any other.  mp_register_probe, a DPDK secondary of the
node, sends: no descriptor, a descriptor that is not a pidfd, two
descriptors, a request one byte short, and the pidfd of a process that has
exited (reaped, and a zombie whose pid the kernel still reports), and the
pidfd of another live process.  Asserted, per case: a refusal (-errno) whose reason says what was
wrong; the manager counts each (nf_registrations_refused), logs each, takes
no slot, and keeps none of the descriptors it was sent (its open-descriptor
count is what it was before); and a real NF still registers afterwards.

DPDK receives descriptors without close-on-exec, and the manager keeps the
pidfd of an NF started by hand as its watch: a process the manager forks
afterwards (here the new standby of a configured "local" NF whose active is
killed) must not inherit it.
"""
import os
import subprocess

from onvm import lab

PROBE = os.path.join(lab.BUILD, "tests", "mp_register_probe")
CASES = {
    "nofd": "carries 0 file descriptors",
    "notpidfd": "not a pidfd",
    "twofds": "carries 2 file descriptors",
    "badsize": "bad registration message size",
    "exited": "has exited",
    "zombie": "has exited",
    "other": "not of the sender",
}


def open_fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def pidfd_targets(pid):
    """The pids the pidfds process `pid` holds refer to."""
    out = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") != "anon_inode:[pidfd]":
                continue
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                out += [int(l.split()[1]) for l in f if l.startswith("Pid:")]
        except OSError:
            pass
    return out


def test(L):
    node = L.node("registration", {
        "ports": [{"name": "p", "dev": "net_null0", "rx": False}],
        "nfs": [{"binary": lab.TEST_NF, "name": "launched", "service": 2,
                 "resiliency": "local"}],
        "chains": [],
    }).start()

    def protected():
        v = node.nf_by(service=2)
        return v[0] if v and v[0]["status"] == "running" and v[0]["standby_parked"] else None

    launched = lab.wait_until(protected, 60, "the configured NF protected")
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
    L.expect(len(node.nfs()) == 1, f"a refused request took a slot: {node.nfs()}")
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
    os.kill(launched["pid"], 9)
    sb = lab.wait_until(lambda: (lambda v: v if v and v["pid"] != launched["pid"] else None)(
        protected()), 60, "the configured NF protected again by a new standby")
    held = pidfd_targets(sb["standby_pid"])
    L.expect(nf.pid not in held, f"the standby launched after NF pid {nf.pid} registered holds "
             f"a pidfd of it (pidfds of pids {held}): inherited from the manager")
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
