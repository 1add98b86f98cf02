#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""NFs whose manager is SIGKILLed leave at once.

A manager's death stops the NFs it launched (PDEATHSIG); each then asks the
manager to unregister it -- a manager that died may have taken the request
in and never answer, and an NF used to wait the request's whole time-out
(5 s) before it exited, holding its hugepage mappings and, in a lab, making
anything that waited for it late by seconds (an outside review's TCP
"stalls").  Five rounds: a node with two NFs and traffic, its manager
SIGKILLed; asserted that every NF is gone within 1.5 s (times
lab.SLOWDOWN under a sanitizer), with the times printed.
"""
import os
import socket
import struct
import time

from onvm import lab, traces

ROUNDS = 5


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] not in "ZX"
    except (OSError, IndexError):
        return False


def test(L):
    trace = traces.trace("webex.pcap")
    worst = []
    for r in range(ROUNDS):
        node = L.node(f"dies{r}", {
            "ports": [{"name": "a", "dev": f"net_pcap0,rx_pcap={trace},"
                                          f"tx_pcap={L.path(f'out{r}.pcap')}"}],
            "nfs": [{"name": "fwd", "binary": "simple_forward", "service": 1},
                    {"name": "slow", "binary": lab.TEST_NF, "service": 2,
                     "args": ["-d", "100"]}],
            "chains": [{"name": "c", "services": [1, 2], "ingress_port": "a",
                        "exit_port": "a"}],
        }).start()
        lab.wait_until(lambda: node.port("a")["tx"] > 0, 30, "traffic through the NFs")
        pids = [nf["pid"] for nf in node.nfs().values() if isinstance(nf, dict)]
        L.expect(len(pids) == 2, f"round {r}: NFs {pids}")
        t0 = time.monotonic()
        node.proc.kill()  # the manager only
        gone = {}
        while len(gone) < len(pids) and time.monotonic() - t0 < 10:
            for p in pids:
                if p not in gone and not alive(p):
                    gone[p] = time.monotonic() - t0
            time.sleep(0.01)
        node.stop()  # reaps the manager, kills what is left, removes its files
        worst.append(max(gone.values(), default=10.0) if len(gone) == len(pids) else 10.0)
        print(f"round {r}: NFs gone after "
              f"{', '.join(f'{gone.get(p, 10.0):.2f}' for p in pids)} s", flush=True)
    limit = 1.5 * lab.SLOWDOWN
    L.expect(max(worst) <= limit, f"an NF outlived its manager by {max(worst):.2f} s "
             f"(at most {limit} s)")
    stale_unregister(L, trace)


def mp_request(prefix, name, param):
    """One request to the DPDK primary of file prefix `prefix`, as a
    secondary's EAL sends it (struct mp_msg_internal: MP_REQ, then struct
    rte_mp_msg without its fds, which go as SCM_RIGHTS), from a socket of
    our own; the reply is not waited for."""
    msg = struct.pack("i64sii256s", 1, name.encode(), len(param), 0, param)
    me = os.path.join(lab.RUNTIME_ROOT, prefix, f"mp_socket_test_{os.getpid()}")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
        s.bind(me)
        try:
            s.sendto(msg, os.path.join(lab.RUNTIME_ROOT, prefix, "mp_socket"))
        finally:
            os.unlink(me)


def stale_unregister(L, trace):
    """An NF of a manager that died, still leaving (a slow exit on a loaded
    host), asks a manager started meanwhile with the same file prefix to
    unregister it -- sent here as that NF's EAL would send it.  The new
    run's NF in the same slot, same instance id, must not be taken down by
    it: a slot's generations start at random in every run, so the old run's
    does not name it.  (They started at 1 in every run: a restarted standby
    lost an NF that way, no cut could be written there, and it never voted
    again.)"""
    node = L.node("restarted", {
        "ports": [{"name": "a", "dev": f"net_pcap0,rx_pcap={trace},"
                                      f"tx_pcap={L.path('out-r.pcap')}"}],
        "nfs": [{"name": "fwd", "binary": "simple_forward", "service": 1}],
        "chains": [{"name": "c", "services": [1], "ingress_port": "a", "exit_port": "a"}],
    }).start()
    running = lambda: [nf for nf in node.nfs().values()
                       if isinstance(nf, dict) and nf.get("status") == "running"]
    (old,) = lab.wait_until(running, 30, "the NF running")
    node.stop()
    node.remove_runtime()
    node.start()
    (new,) = lab.wait_until(lambda: [nf for nf in running() if nf["pid"] != old["pid"]], 30,
                            "the new run's NF running")
    L.expect(new["instance"] == old["instance"], f"another slot: {old} / {new}")
    mp_request(node.prefix, "onvm_nf_unregister",
               struct.pack("HxxI", old["instance"], old["generation"]))
    time.sleep(0.5)
    nfs = [(nf["pid"], nf.get("status")) for nf in node.nfs().values() if isinstance(nf, dict)]
    L.expect(nfs == [(new["pid"], "running")],
             f"the new run's NF after the old run's unregistration: {nfs}")
    print(f"stale unregistration: generation {old['generation']} then {new['generation']}; "
          f"the new run's NF: {nfs}")
    L.expect(node.stop() == 0, "manager exit status")


if __name__ == "__main__":
    lab.run("mgr_death", test)
