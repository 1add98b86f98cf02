# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""onvm.etcd_lab -- a real etcd cluster for a test: `members` etcd
processes (Debian's etcd-server, 3.4) on loopback, each with its own data
directory in the lab's folder and free ports, started and stopped by the
lab (killed by PID at clean-up, even on failure).  A member is killed with
SIGKILL and restarted on its data directory, rejoining as it was.
"""
import os
import shutil
import signal
import socket
import time

from onvm import lab

try:
    from onvm import cluster
    MISSING = None
except ImportError as e:  # (python3-etcd3 missing: scripts/setup.sh installs it)
    cluster = None
    MISSING = str(e)

ETCD = shutil.which("etcd") or "/usr/bin/etcd"


def _free_ports(n):
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


def require():
    """The cluster module, or TestSkip when etcd or its client is missing."""
    if cluster is None:
        raise lab.TestSkip(f"no etcd client library: {MISSING}")
    if not os.access(ETCD, os.X_OK):
        raise lab.TestSkip("no etcd (Debian's etcd-server)")
    return cluster


class EtcdCluster:
    def __init__(self, L, members=3, tag="etcd"):
        self.L, self.tag = L, tag
        ports = _free_ports(2 * members)
        self.names = [f"{tag}{i}" for i in range(members)]
        self.client_ports = ports[0::2]
        self.peer_ports = ports[1::2]
        self.procs = [None] * members
        self.initial = ",".join(f"{n}=http://127.0.0.1:{p}"
                                for n, p in zip(self.names, self.peer_ports))

    @property
    def endpoints(self):
        return [f"127.0.0.1:{p}" for p in self.client_ports]

    def _argv(self, i, state):
        return [ETCD, "--name", self.names[i],
                "--data-dir", self.L.path(f"{self.names[i]}.data"),
                "--listen-client-urls", f"http://127.0.0.1:{self.client_ports[i]}",
                "--advertise-client-urls", f"http://127.0.0.1:{self.client_ports[i]}",
                "--listen-peer-urls", f"http://127.0.0.1:{self.peer_ports[i]}",
                "--initial-advertise-peer-urls", f"http://127.0.0.1:{self.peer_ports[i]}",
                "--initial-cluster", self.initial,
                "--initial-cluster-token", f"{self.tag}-{os.getpid()}",
                "--initial-cluster-state", state,
                # two shared cores: a slower heartbeat than the 100 ms default
                # keeps a busy test from costing a leader election
                "--heartbeat-interval", "100", "--election-timeout", "1000",
                "--logger", "zap", "--log-level", "warn"]

    def start(self, timeout=30):
        for i in range(len(self.names)):
            self._spawn(i, "new")
        self.wait_healthy(timeout)
        return self

    def _spawn(self, i, state):
        self.procs[i] = self.L.spawn(f"{self.names[i]}-{int(time.monotonic() * 1000)}",
                                     self._argv(i, state))

    def kill(self, i):
        """SIGKILL member i (the lab's own process, by PID)."""
        p = self.procs[i]
        if p is not None and p.poll() is None:
            os.kill(p.pid, signal.SIGKILL)
            p.wait(10)
        self.procs[i] = None

    def restart(self, i):
        """Member i again, on its data directory: it rejoins as it was."""
        self._spawn(i, "existing")

    def stop(self):
        for i, p in enumerate(self.procs):
            if p is not None and p.poll() is None:
                p.terminate()
                try:
                    p.wait(10)
                except Exception:
                    self.kill(i)

    def client(self, timeout=1.0):
        return cluster.Cluster(self.endpoints, timeout=timeout)

    def wait_healthy(self, timeout=30):
        """Until a write commits (a leader and a quorum)."""
        c = self.client()

        def ok():
            try:
                c.call(lambda e: e.put("/health", "ok"))
                return True
            except cluster.Unavailable:
                return False
        try:
            lab.wait_until(ok, timeout, "etcd to take a write", interval=0.1)
        finally:
            c.close()
