#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""How long tools/onvm-exporter takes to scrape a node with 64 NFs.

A node with every NF slot in use (8 services x 8 instances of
simple_forward, 64 processes, idle: no traffic) and the exporter naming it;
/metrics is fetched N times, one a second.  Per scrape: the exporter's own
measure of the node's part (onvm_exporter_scrape_seconds: 7 + 64 telemetry
commands and the mapping) and the whole HTTP GET as Prometheus sees it.
Goal (issue 15): < 50 ms.

    bench/exporter_scrape.py [--build DIR] [--scrapes N] [--out DIR]

Writes exporter_scrape.csv and exporter_scrape.txt.
"""
import argparse
import os
import statistics
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
from onvm import exporter, lab  # noqa: E402
from onvm.report import pct  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    ap.add_argument("--scrapes", type=int, default=60)
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    a = ap.parse_args()
    os.environ["ONVM_BUILD"] = os.path.abspath(a.build)
    rows = []

    def body(L):
        node = L.node("scrape64", {
            "nf_defaults": {"cpus": "1", "start_timeout_ms": 180000},
            "nfs": [{"binary": "simple_forward", "service": s, "instances": 8}
                    for s in range(1, 9)],
        }).start(timeout=240)
        ids = node.query("/onvm/nf/ids")
        lab.check(len(ids) == 64, f"{len(ids)} NFs registered, want 64")
        port = exporter.free_port()
        exporter.start_exporter(L, [node.prefix], port, "bench")
        for k in range(a.scrapes):
            t0 = time.monotonic()
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
                text = r.read().decode()
            http = time.monotonic() - t0
            own = [float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                   if line.startswith("onvm_exporter_scrape_seconds{")][0]
            nfs = sum(1 for line in text.splitlines() if line.startswith("onvm_nf_running{"))
            lab.check(nfs == 64, f"scrape {k}: {nfs} NFs in /metrics, want 64")
            rows.append((k + 1, own, http, len(text)))
            time.sleep(1)
        node.stop()

    L = lab.Lab("bench_exporter")
    try:
        body(L)
    finally:
        L.cleanup()
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "exporter_scrape.csv"), "w") as f:
        f.write("scrape,node_part_s,http_get_s,bytes\n")
        for r in rows:
            f.write(f"{r[0]},{r[1]:.6f},{r[2]:.6f},{r[3]}\n")
    own = [r[1] * 1e3 for r in rows]
    http = [r[2] * 1e3 for r in rows]
    line = (f"node with 64 NFs, {len(rows)} scrapes ({rows[0][3]} bytes of metrics): "
            f"the node's part p50 {pct(own, 50):.1f} ms, p99 {pct(own, 99):.1f} ms, "
            f"max {max(own):.1f} ms; the whole GET p50 {pct(http, 50):.1f} ms, "
            f"p99 {pct(http, 99):.1f} ms, max {max(http):.1f} ms, mean "
            f"{statistics.mean(http):.1f} ms (goal < 50 ms)")
    with open(os.path.join(a.out, "exporter_scrape.txt"), "w") as f:
        f.write(line + "\n")
    print(line)


if __name__ == "__main__":
    main()
