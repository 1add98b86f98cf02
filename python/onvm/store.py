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


def scripts(build):
    """{name: Lua text} of the store's scripts, from the build tree's
    store_scripts_dump (common/onvm_store_scripts.c); "write_unchecked" is
    WRITE without its version check."""
    exe = os.path.join(build, "tests", "unit", "store_scripts_dump")
    out = subprocess.run([exe], check=True, capture_output=True, text=True).stdout
    texts, name = {}, None
    for line in out.splitlines(keepends=True):
        if line.startswith("== "):
            name = line[3:].strip()
            texts[name] = ""
        else:
            texts[name] += line
    return texts


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


class Proxy:
    """A Unix-socket proxy in front of a Redis, to make the path to the store
    misbehave on purpose: `hold(ms)` keeps what the connections open now
    send for `ms` before passing it on (their process may be dead by then:
    a late update from a dead incarnation), `garbage()` answers the next
    command of every connection with a reply the protocol never gives,
    `cut()` closes every connection.  New connections pass normally."""

    def __init__(self, L, upstream, name="proxy"):
        import threading
        self.upstream = upstream
        self.sock = L.path(f"{name}.sock")
        self.lock = threading.Lock()
        self.conns = []  # {cl, up, until: hold until, buf: held bytes}
        self.garbage_due = False
        self.garbage_sent = 0
        self.held_total = 0
        self.stopped = False
        self.srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.srv.bind(self.sock)
        self.srv.listen(64)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    @property
    def addr(self):
        return f"unix:{self.sock}"

    def hold(self, ms):
        with self.lock:
            until = time.monotonic() + ms / 1000
            for c in self.conns:
                c["until"] = until

    def garbage(self):
        with self.lock:
            self.garbage_due = True

    def cut(self):
        with self.lock:
            for c in self.conns:
                for k in ("cl", "up"):
                    try:
                        if c[k] is not None:
                            c[k].shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass

    def close(self):
        self.stopped = True
        self.cut()
        self.srv.close()

    def _run(self):
        import select
        while not self.stopped:
            with self.lock:
                conns = list(self.conns)
            rl = [self.srv] + [s for c in conns for s in (c["cl"], c["up"]) if s is not None]
            try:
                r, _, _ = select.select(rl, [], [], 0.005)
            except (OSError, ValueError):
                r = []
            now = time.monotonic()
            if self.srv in r:
                try:
                    cl, _ = self.srv.accept()
                    up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                    up.connect(self.upstream)
                    with self.lock:
                        self.conns.append({"cl": cl, "up": up, "until": 0.0, "buf": b""})
                except OSError:
                    pass
            for c in conns:
                done = False
                if c["cl"] is not None and c["cl"] in r:
                    d = self._recv(c["cl"])
                    if d is None:
                        c["cl"].close()
                        c["cl"] = None
                    elif c["until"] > now:
                        c["buf"] += d
                        self.held_total += len(d)
                    else:
                        done = not self._send(c["up"], c["buf"] + d)
                        c["buf"] = b""
                if c["buf"] and c["until"] <= now:
                    done = not self._send(c["up"], c["buf"])
                    c["buf"] = b""
                if c["up"] in r:
                    d = self._recv(c["up"])
                    if d is None:
                        done = True
                    elif c["cl"] is not None:
                        with self.lock:
                            g, self.garbage_due = self.garbage_due, False
                        if g:
                            d = b":42\r\n" * 3
                            self.garbage_sent += 1
                        done = not self._send(c["cl"], d)
                if done or (c["cl"] is None and not c["buf"]):
                    for k in ("cl", "up"):
                        if c[k] is not None:
                            c[k].close()
                    with self.lock:
                        if c in self.conns:
                            self.conns.remove(c)

    @staticmethod
    def _recv(s):
        try:
            d = s.recv(65536)
        except OSError:
            return None
        return d or None

    @staticmethod
    def _send(s, d):
        try:
            s.sendall(d)
            return True
        except OSError:
            return False
