# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""onvm.exporter -- tools/onvm-exporter run for a test or a benchmark: a
free local port, the exporter started by the lab and serving, its /metrics
read back as {(name, labels): value}.
"""
import os
import socket
import urllib.request

from onvm import lab

EXPORTER = os.path.join(lab.SRC, "tools", "onvm-exporter")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def http_get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


def metrics(port):
    """{(name, frozenset(labels)): value} of the exporter's /metrics."""
    out = {}
    for line in http_get(f"http://127.0.0.1:{port}/metrics").splitlines():
        if not line or line.startswith("#"):
            continue
        name_labels, value = line.rsplit(" ", 1)
        if "{" in name_labels:
            name, rest = name_labels.split("{", 1)
            labels = frozenset(tuple(kv.split("=", 1)) for kv in rest.rstrip("}").split(",")
                               if kv)
            labels = frozenset((k, v.strip('"')) for k, v in labels)
        else:
            name, labels = name_labels, frozenset()
        out[(name, labels)] = float(value)
    return out


def metric(m, name, **labels):
    want = set(labels.items())
    vals = [v for (n, ls), v in m.items() if n == name and want <= set(ls)]
    return vals[0] if len(vals) == 1 else None


def start_exporter(L, nodes, port, tag):
    """tools/onvm-exporter naming `nodes` (file prefixes), listening on
    127.0.0.1:`port`, started by the lab (its log: exporter-`tag`); returns
    once it serves /metrics."""
    argv = [EXPORTER, "--listen", f"127.0.0.1:{port}"]
    for n in nodes:
        argv += ["--node", n]
    p = L.spawn(f"exporter-{tag}", argv)

    def serving():
        lab.check(p.poll() is None, "the exporter exited")
        try:
            return http_get(f"http://127.0.0.1:{port}/metrics", 2)
        except OSError:
            return None
    lab.wait_until(serving, 20, "the exporter serving /metrics")
    return p
