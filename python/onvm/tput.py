# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""onvm.tput -- the pieces of the null-port throughput and latency
benchmarks (bench/chain_tput.py, latency.py, pkt_sizes.py and the node of
local_resiliency.py): processes started under unique DPDK file prefixes and
always cleaned up (Procs), dpdk-testpmd driven through its command line,
a manager started by hand (its config written, its READY line and its
telemetry), DPDK's client_server_mp built as the peer, the node configs on
net_null ports, and the wait for a quiet machine.

Procs is not onvm.lab.Lab: the benchmarks start testpmd and
client_server_mp as well as managers, stop each one themselves with the
signal it needs (mp_server SIGTERM, the others SIGINT; 15 s, then
SIGKILL), keep their logs when a run fails, and name their prefixes
ct<pid>_<n>, so that a window's noise (onvm.noise.CpuNoise, which Procs
is) and the quiet check tell their processes from everyone else's.
Everything runs with --no-pci, at most two busy pollers (CPU 0 and 1).
"""
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

from onvm.noise import CpuNoise, cpu_busy_fraction
from onvm.report import log
from onvm.telemetry import RUNTIME_ROOT, Telemetry, socket_path

HUGE = "/dev/hugepages"
TESTPMD = shutil.which("dpdk-testpmd") or "/usr/bin/dpdk-testpmd"
CSMP_SRC = "/usr/share/dpdk/examples/multi_process/client_server_mp"


class BenchError(Exception):
    pass


# ---- process and resource bookkeeping --------------------------------------------------

class Procs(CpuNoise):
    """Starts processes under unique file prefixes and always cleans up after them;
    window() sleeps through a measurement window noting others' CPU and the steal
    time (CpuNoise: the processes started here and their NFs are ours)."""

    def __init__(self, workdir):
        super().__init__(f"ct{os.getpid()}")  # self.procs: Popen objects we started
        self.n = 0
        self.workdir = workdir
        self.extra_pids = []  # NF pids learnt from the manager's telemetry
        self.prefixes = []
        self.paths = []

    def prefix(self):
        self.n += 1
        p = f"{self.tag}_{self.n}"
        self.prefixes.append(p)
        return p

    def sock(self, prefix, name):
        path = f"/tmp/{prefix}-{name}.sock"
        self.paths.append(path)
        return path

    def popen(self, argv, **kw):
        p = subprocess.Popen(argv, **kw)
        self.procs.append(p)
        return p

    @staticmethod
    def stop(p, timeout=15, sig=signal.SIGINT):
        """SIG by pid, then SIGKILL if it does not exit."""
        if p.poll() is not None:
            return p.returncode
        try:
            p.send_signal(sig)
            return p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            log(f"pid {p.pid} ignored {signal.Signals(sig).name} for {timeout}s, killing it")
            p.kill()
            return p.wait(timeout=10)

    @staticmethod
    def pid_alive(pid):
        try:
            os.kill(pid, 0)
            return True
        except ProcessLookupError:
            return False

    def cleanup_one(self, p, prefix, paths=(), manager=False, sig=signal.SIGINT):
        self.stop(p, sig=sig)
        if manager:
            self.reap_extra()
        self.remove_files(prefix, paths)

    def reap_extra(self, grace=5.0):
        """NFs are the manager's children; after the manager exits they should be gone
        too (they may still be finishing their own exit for a moment)."""
        deadline = time.monotonic() + grace
        while any(self.pid_alive(p) and not self.zombie(p) for p in self.extra_pids) and \
                time.monotonic() < deadline:
            time.sleep(0.05)
        for pid in self.extra_pids:
            if self.pid_alive(pid):
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as f:
                        cmd = f.read()
                except OSError:
                    continue
                if b"--file-prefix=" + self.tag.encode() not in cmd:
                    continue  # pid reused by someone else
                log(f"NF pid {pid} still running {grace}s after its manager exited, killing it")
                os.kill(pid, signal.SIGKILL)
        self.extra_pids = [p for p in self.extra_pids if self.pid_alive(p)]

    @staticmethod
    def zombie(pid):
        try:
            with open(f"/proc/{pid}/stat") as f:
                return f.read().rsplit(")", 1)[1].split()[0] in "ZX"
        except OSError:
            return True

    @staticmethod
    def remove_files(prefix, paths=()):
        shutil.rmtree(os.path.join(RUNTIME_ROOT, prefix), ignore_errors=True)
        for f in glob.glob(os.path.join(HUGE, f"{prefix}map_*")):
            try:
                os.unlink(f)
            except OSError:
                pass
        for f in paths:
            try:
                os.unlink(f)
            except OSError:
                pass

    def cleanup_all(self):
        for p in reversed(self.procs):
            try:
                self.stop(p, timeout=10)
            except Exception as e:  # keep cleaning
                log(f"cleanup of pid {p.pid}: {e}")
        self.reap_extra()
        for pre in self.prefixes:
            self.remove_files(pre)
        for f in self.paths:
            try:
                os.unlink(f)
            except OSError:
                pass


# ---- testpmd ----------------------------------------------------------------------------

class Testpmd:
    """dpdk-testpmd in interactive mode driven through a stdin pipe (stdout line-buffered
    with stdbuf so its answers arrive while it runs)."""

    def __init__(self, lab, prefix, lcores, vdevs, extra=(), main_lcore=None, interactive=True,
                 args=()):
        argv = ["stdbuf", "-oL", TESTPMD, "-l", lcores, "--no-pci", "--file-prefix", prefix]
        if main_lcore is not None:
            argv += ["--main-lcore", str(main_lcore)]
        for v in vdevs:
            argv += ["--vdev", v]
        argv += list(extra) + ["--"] + (["-i"] if interactive else []) + list(args)
        self.argv = argv
        self.prefix = prefix
        self.lines = []
        self.cv = threading.Condition()
        self.p = lab.popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, bufsize=0)
        threading.Thread(target=self._reader, daemon=True).start()

    def _reader(self):
        # raw reads: the "testpmd> " prompt has no newline
        fd = self.p.stdout.fileno()
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            with self.cv:
                self.lines.append(chunk.decode(errors="replace"))
                self.cv.notify_all()
        with self.cv:
            self.cv.notify_all()

    def text(self):
        with self.cv:
            return "".join(self.lines)

    def wait_for(self, pattern, timeout, count=1):
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        with self.cv:
            while True:
                if len(rx.findall("".join(self.lines))) >= count:
                    return
                if self.p.poll() is not None:
                    raise BenchError(f"testpmd {self.prefix} exited (rc {self.p.returncode}):\n"
                                     + "".join(self.lines[-15:]))
                left = deadline - time.monotonic()
                if left <= 0:
                    raise BenchError(f"testpmd {self.prefix}: no '{pattern}' after {timeout}s:\n"
                                     + "".join(self.lines[-15:]))
                self.cv.wait(min(left, 0.2))

    def cmd(self, c):
        self.p.stdin.write((c + "\n").encode())
        self.p.stdin.flush()

    def show_stats(self):
        """Send `show port stats all`, wait for the answer, return per-port dicts of the
        last answer (pps fields are 'since last show', timed by testpmd's TSC)."""
        n = len(re.findall(r"Tx-pps:", self.text()))
        nports = self.nports
        self.cmd("show port stats all")
        self.wait_for(r"Tx-pps:", 10, count=n + nports)
        txt = self.text()
        blocks = re.findall(r"NIC statistics for port (\d+).*?RX-packets:\s+(\d+).*?"
                            r"TX-packets:\s+(\d+).*?Rx-pps:\s+(\d+).*?Tx-pps:\s+(\d+)", txt, re.S)
        last = blocks[-nports:]
        return {int(b[0]): {"rx": int(b[1]), "tx": int(b[2]), "rx_pps": int(b[3]),
                            "tx_pps": int(b[4])} for b in last}

    def quit(self):
        try:
            self.cmd("stop")
            self.cmd("quit")
            self.p.stdin.close()
            self.p.wait(timeout=20)
        except (OSError, subprocess.TimeoutExpired, ValueError):
            pass


# ---- the manager ------------------------------------------------------------------------

class Manager:
    def __init__(self, lab, build, prefix, cfg):
        self.prefix = prefix
        self.cfg_path = os.path.join(lab.workdir, f"{prefix}.json")
        with open(self.cfg_path, "w") as f:
            json.dump(cfg, f, indent=1)
        self.out_path = os.path.join(lab.workdir, f"{prefix}.log")
        self.out = open(self.out_path, "w")
        self.p = lab.popen([os.path.join(build, "onvm_mgr", "onvm_mgr"), "--config",
                            self.cfg_path, "--quiet"], stdout=self.out, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL)
        self.tel = Telemetry(socket_path(prefix))
        self.lab = lab

    def wait_ready(self, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with open(self.out_path) as f:
                txt = f.read()
            if "ONVM_MGR_READY" in txt:
                nfs = self.tel.query("/onvm/nfs")
                self.lab.extra_pids += [n["pid"] for n in nfs.values() if n.get("pid")]
                return
            if self.p.poll() is not None:
                raise BenchError(f"onvm_mgr {self.prefix} exited (rc {self.p.returncode}):\n"
                                 + txt[-2000:])
            time.sleep(0.05)
        raise BenchError(f"onvm_mgr {self.prefix} not ready after {timeout}s")

    def wait_log(self, text, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with open(self.out_path) as f:
                txt = f.read()
            if text in txt:
                return
            if self.p.poll() is not None:
                raise BenchError(f"onvm_mgr {self.prefix} exited (rc {self.p.returncode}):\n"
                                 + txt[-2000:])
            time.sleep(0.05)
        raise BenchError(f"onvm_mgr {self.prefix}: no '{text}' in its log after {timeout}s")

    def snapshot(self):
        t = time.monotonic()
        d = {c: self.tel.query(c) for c in ("/onvm/ports", "/onvm/drops", "/onvm/nfs",
                                            "/onvm/pool")}
        d["t"] = (t + time.monotonic()) / 2
        return d

    def close(self):
        self.tel.close()
        self.out.close()


# ---- set-ups both chain_tput.py and the others use ---------------------------------------

def foreign_dpdk(lab):
    try:
        return sorted(d for d in os.listdir(RUNTIME_ROOT) if not d.startswith(lab.tag))
    except OSError:
        return []


def run_null_testpmd(lab, a, copy, size=64):
    prefix = lab.prefix()
    dev = f"size={size}" + (",copy=1" if copy else "")
    tp = Testpmd(lab, prefix, "0-1", [f"net_null0,{dev}", f"net_null1,{dev}"],
                 args=["--forward-mode=io"])
    tp.nports = 2
    try:
        tp.wait_for(r"testpmd> ", 30)
        tp.cmd("start")
        time.sleep(a.warmup)
        tp.show_stats()
        lab.window(a.window)
        st = tp.show_stats()
        tp.quit()
        return sum(s["tx_pps"] for s in st.values()) / 1e6, None
    finally:
        lab.cleanup_one(tp.p, prefix)


def build_csmp(a):
    """client_server_mp's mp_server and mp_client, built from dpdk-doc's sources into
    BUILD/bench-csmp at the optimisation level of the project's build."""
    if not os.path.isdir(CSMP_SRC):
        raise SystemExit(f"no {CSMP_SRC}: apt-get install dpdk-doc (or --no-peer)")
    opt = "2"
    try:
        opts = json.loads(subprocess.run(["meson", "introspect", a.build, "--buildoptions"],
                                         capture_output=True, text=True, check=True).stdout)
        opt = next(o["value"] for o in opts if o["name"] == "optimization")
    except (OSError, subprocess.CalledProcessError, StopIteration, ValueError):
        log(f"cannot read the build's optimization level: -O{opt}")
    out = os.path.join(a.build, "bench-csmp")
    shutil.copytree(CSMP_SRC, out, dirs_exist_ok=True)
    dpdk = subprocess.run(["pkg-config", "--cflags", "libdpdk"], capture_output=True, text=True,
                          check=True).stdout.strip()
    # client_server_mp's own headers sit in its shared/ folder.
    cflags = f"-O{opt} -I{os.path.join(out, 'shared')} {dpdk} -DALLOW_EXPERIMENTAL_API"
    for app in ("mp_server", "mp_client"):
        r = subprocess.run(["make", "-s", "-C", os.path.join(out, app), f"CFLAGS={cflags}"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"building {app} failed:\n{r.stdout}{r.stderr}")
    a.csmp = {app: os.path.join(out, app, "build", app) for app in ("mp_server", "mp_client")}
    log(f"client_server_mp built at -O{opt} in {out}")


def null_cfg(prefix, k, split=False):
    """split: the TX unit on an lcore of its own on the NFs' CPU 1 (it and
    the NFs yield to each other while idle, units.c), the RX unit on CPU 0 --
    the placement of client_server_mp, whose client transmits itself."""
    cfg = {"node": {"name": "tput", "file_prefix": prefix,
                    "lcores": "0@0,1@1" if split else "0@0"},
            "pool": {"mbufs": 32767}, "nf_defaults": {"cpus": "1"},
            "ports": [{"name": "gen", "dev": "net_null0,size=64"},
                      {"name": "sink", "dev": "net_null1,size=64", "rx": False}],
            "nfs": [{"binary": "simple_forward", "service": i} for i in range(1, k + 1)],
            "chains": [{"name": "c", "services": list(range(1, k + 1)), "ingress_port": "gen",
                        "exit_port": "sink"}],
            "stats": {"interval_ms": 0}}
    if split:
        cfg["units"] = {"rx": 0, "tx": 1}
        cfg["idle"] = {"share_nf_cpus": True}
    return cfg


def stateful_cfg(test_nf, mode, extra_args=()):
    """local_resiliency.py's node: the manager on CPU 0 polls net_null0 "gen"
    (64-byte packets as fast as it is polled) and transmits on net_null1
    "sink", one stateful NF on CPU 1 (`test_nf` -S: a libnf state region
    updated for every packet) with "resiliency" `mode`."""
    return {
        "node": {"lcores": "0@0"},
        "pool": {"mbufs": 32767},
        "nf_defaults": {"cpus": "1"},
        "ports": [{"name": "gen", "dev": "net_null0,size=64"},
                  {"name": "sink", "dev": "net_null1,size=64", "rx": False}],
        "nfs": [{"binary": test_nf, "service": 1, "resiliency": mode,
                 "args": ["-S", *extra_args]}],
        "chains": [{"name": "c", "services": [1], "ingress_port": "gen", "exit_port": "sink"}],
    }


# ---- the quiet check, the run ----------------------------------------------------------

def wait_quiet(lab, max_wait, sample=1.0, say=True):
    deadline = time.monotonic() + max_wait
    while True:
        busy = cpu_busy_fraction(sample)
        others = foreign_dpdk(lab)
        if busy < 0.15:  # idle managers of other runs are fine, busy ones are not
            return busy, others
        if time.monotonic() > deadline:
            if say:
                log(f"WARNING: machine not quiet (CPU {100 * busy:.0f}% busy, other DPDK "
                    f"runtime dirs: {others}); numbers will be noisy")
            return busy, others
        if say:
            log(f"waiting for a quiet machine (CPU {100 * busy:.0f}% busy, other DPDK: {others})")
        time.sleep(2)


def start(name, procs_class=None):
    """(workdir, procs): a Procs (or `procs_class`) working in /tmp/NAME.PID;
    SIGTERM and SIGHUP end the run as Ctrl-C does (everything started is
    stopped and cleaned up)."""
    workdir = os.path.join("/tmp", f"{name}.{os.getpid()}")
    os.makedirs(workdir, exist_ok=True)

    def on_signal(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    return workdir, (procs_class or Procs)(workdir)


def run_main(main):
    """Run a benchmark's main; Ctrl-C, SIGTERM or SIGHUP (start) end it cleanly."""
    try:
        main()
    except KeyboardInterrupt as e:
        log(f"interrupted ({e or 'SIGINT'}); everything started was stopped and cleaned up")
        sys.exit(130)
