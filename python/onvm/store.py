# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""A real redis-server for stateless chains' tests and benchmarks: on a Unix
socket in the lab's directory (no TCP port, no persistence unless asked),
started, killed and restarted by PID, and a minimal RESP client to look at
what it holds (no Python package needed)."""
import os
import shutil
import signal
import socket
import subprocess
import time

from onvm import lab

REDIS = shutil.which("redis-server") or "/usr/bin/redis-server"


class Redis:
    def __init__(self, L, name="redis", persist=False, extra=None):
        self.L, self.name = L, name
        self.dir = L.path(f"{name}.d")
        os.makedirs(self.dir, exist_ok=True)
        self.sock = os.path.join(self.dir, "redis.sock")
        self.persist, self.extra = persist, extra or []
        self.proc = None

    @property
    def addr(self):
        return f"unix:{self.sock}"

    def start(self):
        lab.check(os.path.exists(REDIS), "redis-server is not installed (scripts/setup.sh)")
        argv = [REDIS, "--port", "0", "--unixsocket", self.sock, "--unixsocketperm", "700",
                "--dir", self.dir, "--daemonize", "no", "--save", "",
                "--appendonly", "yes" if self.persist else "no",
                "--appendfsync", "always", "--loglevel", "warning"] + self.extra
        self.proc = self.L.spawn(self.name, argv)
        lab.wait_until(lambda: self.ping(), 10, f"{self.name} answering on {self.sock}")
        return self

    def ping(self):
        try:
            return self.cmd("PING") == "PONG"
        except OSError:
            return False

    def kill(self, sig=signal.SIGKILL):
        """The server we started, by PID."""
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, sig)
            self.proc.wait(10)
        self.proc = None
        try:
            os.unlink(self.sock)
        except OSError:
            pass

    def stop(self, sig=signal.SIGSTOP):
        """SIGSTOP/SIGCONT: a store that hangs."""
        os.kill(self.proc.pid, sig)

    def cmd(self, *args, timeout=5):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(self.sock)
            s.sendall(encode(args))
            return Reader(s).reply()


def encode(args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        b = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(b), b))
    return b"".join(out)


class Reader:
    def __init__(self, s):
        self.s, self.buf = s, b""

    def line(self):
        while b"\r\n" not in self.buf:
            d = self.s.recv(65536)
            if not d:
                raise OSError("redis closed the connection")
            self.buf += d
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def exact(self, n):
        while len(self.buf) < n + 2:
            d = self.s.recv(65536)
            if not d:
                raise OSError("redis closed the connection")
            self.buf += d
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def reply(self):
        line = self.line()
        t, rest = line[:1], line[1:]
        if t == b"+":
            return rest.decode()
        if t == b"-":
            raise RuntimeError(rest.decode())
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            return None if n < 0 else self.exact(n)
        if t == b"*":
            n = int(rest)
            return None if n < 0 else [self.reply() for _ in range(n)]
        raise OSError(f"not RESP: {line[:40]!r}")


def store_cfg(addr, mode="async", cache=True, flush_packets=32, **kw):
    """A stateless chain's "store" object."""
    d = {"address": addr, "mode": mode, "cache": cache, "flush_packets": flush_packets}
    d.update(kw)
    return d


MODES = [("sync", False), ("async", False), ("sync", True), ("async", True)]


def mode_name(mode, cache):
    return f"{mode}{'+cache' if cache else ''}"


def wait_store(node, chain, pred, timeout, what):
    return lab.wait_until(lambda: (lambda d: d if d and pred(d) else None)(
        node.query(f"/onvm/store,{chain}")), timeout, what)


def now_ms():
    return time.monotonic() * 1000
