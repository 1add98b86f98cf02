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


if __name__ == "__main__":
    lab.run("mgr_death", test)
