#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""A manager asked for telemetry while it exits exits cleanly.

An agent, an exporter or an operator's script may query a manager at any
moment, also while it stops; DPDK's telemetry thread then runs the
command's callback while the manager frees what it reads (its config, its
ports, the hugepage memory at rte_eal_cleanup).  Seen as a SIGSEGV at the
exit of a node whose agent polled it every 50 ms.  The manager now closes
its commands first (mgr_telemetry_close: the callbacks under way finish,
the rest are refused).

Five runs: a manager with a port and no NF, two threads querying three of
its commands without a pause, the manager stopped by SIGINT: its exit
status is 0 every time.  (Before the fix: -11 in every run here.)
"""
import threading
import time

from onvm import lab, telemetry

RUNS = 5


def test(L):
    for i in range(RUNS):
        node = L.node(f"exitq{i}", {"ports": [{"name": "in", "dev": f"net_null{i}"}]}).start()
        stop = threading.Event()

        def hammer():
            t = telemetry.Telemetry(telemetry.socket_path(node.prefix))
            while not stop.is_set():
                try:
                    for cmd in ("/onvm/shared", "/onvm/nfs", "/onvm/ports"):
                        t.query(cmd)
                except (OSError, ValueError):
                    time.sleep(0.001)
            t.close()
        threads = [threading.Thread(target=hammer, daemon=True) for _ in range(2)]
        for th in threads:
            th.start()
        time.sleep(0.3)
        rc = node.stop()
        stop.set()
        for th in threads:
            th.join(5)
        print(f"run {i}: exit status {rc}")
        L.expect(rc == 0, f"run {i}: the manager exited with {rc} under telemetry queries")


if __name__ == "__main__":
    lab.Lab("exit_queries").run(test)
