# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""onvm.lab -- the harness of the integration tests and of the benchmarks
that start nodes: real onvm_mgr nodes on DPDK vdevs.

A test is a function taking a Lab; lab.run(test) runs it and turns the outcome
into an exit status (0 pass, 1 fail, 77 skip), printing the tail of every log
it collected when something went wrong.  The Lab owns everything a test starts
-- managers, hand-started NFs, temporary files -- and tears it all down in a
`finally` (and again from atexit and on SIGTERM, which is how meson ends a test
that ran out of time), so a failing test leaves no process, no
/var/run/dpdk/<prefix> directory and no hugepage file behind.

Only processes the lab started itself or learned from its own managers (the
"launched NF ... pid N" log line, /onvm/nfs) are ever signalled, and a learned
pid is killed only while its command line still names the node's file prefix.

Waiting is always polling with a deadline (50-100 ms steps), never spinning.

Captures, the tree's traces, container NFs and the telemetry client are
modules of their own in this package (its __init__.py lists them).
"""
import atexit
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback

from onvm.telemetry import RUNTIME_ROOT, Telemetry, socket_path

HERE = os.path.dirname(os.path.abspath(__file__))  # python/onvm in the source tree
SRC = os.environ.get("ONVM_SRC") or os.path.dirname(os.path.dirname(HERE))
BUILD = os.environ.get("ONVM_BUILD") or os.path.join(SRC, "build")
MGR = os.path.join(BUILD, "onvm_mgr", "onvm_mgr")
TEST_NF = os.path.join(BUILD, "tests", "test_nf")
READY_RE = re.compile(r"^ONVM_MGR_READY prefix=(\S+) pid=(\d+)", re.M)
LAUNCHED_RE = re.compile(r"launched NF '[^']*' \(.*\) pid (\d+)")
SKIP = 77


def _sanitized():
    """True if the build under test has ASan/UBSan (slower: timing bounds
    that catch a class of bug, not a figure, scale with it)."""
    try:
        with open(os.path.join(BUILD, "meson-info", "intro-buildoptions.json")) as f:
            opts = {o["name"]: o["value"] for o in json.load(f)}
        return opts.get("b_sanitize", "none") != "none"
    except (OSError, ValueError, KeyError):
        return False


SANITIZED = _sanitized()
SLOWDOWN = 4 if SANITIZED else 1  # for loose timing bounds in tests
if SANITIZED:  # DPDK's own leaks (tests/lsan.supp), for every process started
    os.environ.setdefault("LSAN_OPTIONS",
                          "suppressions=" + os.path.join(SRC, "tests", "lsan.supp"))


def nf_binary(name):
    """Path of a production NF in the build tree."""
    return os.path.join(BUILD, "nfs", name, name)


class TestFailure(Exception):
    pass


class TestSkip(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise TestFailure(msg)


def wait_until(pred, timeout, what, interval=0.05, alive=None):
    """Poll pred() until it returns a true value (returned) or the deadline passes.
    `alive`, if given, is called each round and may raise to end the wait early."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        last = pred()
        if last:
            return last
        if alive is not None:
            alive()
        if time.monotonic() > deadline:
            raise TestFailure(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


def read_json(path, timeout=10):
    """The JSON document at `path`, once it is there (an NF writes its export at exit)."""
    wait_until(lambda: os.path.exists(path), timeout, f"{path} to be written")
    with open(path) as f:
        return json.load(f)


# ---- nodes --------------------------------------------------------------------------

def pid_alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def pid_cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().decode(errors="replace").split("\0")
    except OSError:
        return []


def thread_states(pid):
    """[(name, state, kernel wait channel, top of its kernel stack)] of each
    thread of `pid` (a process that does not exit may be stuck in the
    kernel's teardown, not in its own code)."""
    out = []
    for tdir in sorted(glob.glob(f"/proc/{pid}/task/*")):
        def rd(name):
            try:
                with open(os.path.join(tdir, name)) as f:
                    return f.read().strip()
            except OSError:
                return "?"
        stat = rd("stat")
        state = stat.rsplit(")", 1)[1].split()[0] if ")" in stat else "?"
        stack = [ln.split()[-1] for ln in rd("stack").splitlines()[:4] if ln.strip()]
        out.append((rd("comm"), state, rd("wchan"), "<".join(stack)))
    return out


def threads_where(pid):
    return "; ".join(":".join(t) for t in thread_states(pid)) or "gone"


def remove_runtime(prefix):
    """The runtime directory and hugepage files of DPDK file prefix `prefix`."""
    shutil.rmtree(os.path.join(RUNTIME_ROOT, prefix), ignore_errors=True)
    for d in hugetlbfs_mounts():
        for p in glob.glob(os.path.join(d, glob.escape(prefix) + "map_*")):
            try:
                os.unlink(p)
            except OSError:
                pass


def hugepages_free_bytes():
    """Free memory in the default-size hugepage pool (/proc/meminfo)."""
    v = {}
    with open("/proc/meminfo") as f:
        for line in f:
            k, _, rest = line.partition(":")
            v[k] = int(rest.split()[0])
    return v.get("HugePages_Free", 0) * v.get("Hugepagesize", 0) * 1024


def hugepage_bytes(prefix):
    """Hugepage memory the files of DPDK file prefix `prefix` hold."""
    n = 0
    for d in hugetlbfs_mounts():
        for p in glob.glob(os.path.join(d, glob.escape(prefix) + "map_*")):
            try:
                n += os.stat(p).st_size
            except OSError:
                pass
    return n


def hugetlbfs_mounts():
    dirs = []
    try:
        with open("/proc/mounts") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 3 and parts[2] == "hugetlbfs":
                    dirs.append(parts[1])
    except OSError:
        pass
    return dirs or ["/dev/hugepages"]


class Node:
    """One onvm_mgr process with its config, log and telemetry."""

    def __init__(self, lab, name, config, netns=None, env=None, time_ns=None):
        self.lab = lab
        self.name = name
        self.env = env or {}  # extra environment of the manager and its NFs
        self.netns = netns  # run the manager inside this network namespace
        self.time_ns = time_ns  # ... and this time namespace (Lab.time_namespace)
        self.prefix = lab.new_prefix()
        cfg = json.loads(json.dumps(config))
        node = cfg.setdefault("node", {})
        node.setdefault("name", name)
        node["file_prefix"] = self.prefix
        node.setdefault("lcores", "0")
        cfg.setdefault("stats", {"interval_ms": 0})
        self.config = cfg
        self.uses_containers = any("container" in nf for nf in cfg.get("nfs", []))
        # ".node.json": a test's own f"{name}.json" (rules, exports) never collides.
        self.config_path = os.path.join(lab.tmp, f"{name}.node.json")
        with open(self.config_path, "w") as f:
            json.dump(cfg, f, indent=2)
        self.log_path = os.path.join(lab.tmp, f"{name}.log")
        self.proc = None
        self.pid = None
        self.tel = Telemetry(socket_path(self.prefix))
        self.nf_pids = set()
        self.exit_code = None
        self.leftover_nfs = []

    def take_prefix(self, other):
        """Run under `other`'s file prefix (a dead node's: the same
        machine's manager started again on another configuration, which its
        agent finds at the same telemetry socket)."""
        self.prefix = other.prefix
        self.config["node"]["file_prefix"] = self.prefix
        self.save_config()
        self.tel = Telemetry(socket_path(self.prefix))
        return self

    def save_config(self):
        """Write `config` again, after a test changed it (before start)."""
        with open(self.config_path, "w") as f:
            json.dump(self.config, f, indent=2)
        return self

    # -- life cycle
    def start(self, wait=True, timeout=60):
        self._log = open(self.log_path, "ab")
        env = dict(os.environ, BUILD=BUILD, **self.env)
        argv = [MGR, "--config", self.config_path]
        if self.time_ns:  # (its NFs, its children, inherit it)
            argv = ["nsenter", f"--time={self.time_ns}"] + argv
        if self.netns:
            argv = in_netns(self.netns, argv)  # nsenter execs it: same pid
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                     stdout=self._log, stderr=subprocess.STDOUT, env=env)
        if self not in self.lab.nodes:  # (a node may be started again)
            self.lab.nodes.append(self)
        if wait:
            self.wait_ready(timeout)
        return self

    def log(self):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def _learn_pids_from_log(self, text=None):
        for m in LAUNCHED_RE.finditer(text if text is not None else self.log()):
            self.nf_pids.add(int(m.group(1)))

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def assert_running(self):
        if not self.running():
            raise TestFailure(f"node {self.name}: onvm_mgr exited with status "
                              f"{self.proc.returncode if self.proc else None}")

    def wait_ready(self, timeout=60):
        def ready():
            text = self.log()
            self._learn_pids_from_log(text)
            # a restarted node's log holds its earlier runs' lines too
            mine = [m for m in READY_RE.finditer(text) if int(m.group(2)) == self.proc.pid]
            return mine[-1] if mine else None
        m = wait_until(ready, timeout, f"node {self.name}: ONVM_MGR_READY",
                       alive=self.assert_running)
        check(m.group(1) == self.prefix, f"node {self.name}: READY names prefix {m.group(1)}, "
                                         f"want {self.prefix}")
        self.pid = int(m.group(2))
        check(self.pid == self.proc.pid, f"node {self.name}: READY pid {self.pid} is not "
                                         f"the manager's {self.proc.pid}")

    def wait_exit(self, timeout=60):
        """Wait for the manager to exit on its own; returns its exit status."""
        try:
            self.exit_code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise TestFailure(f"node {self.name}: onvm_mgr still running after {timeout} s")
        self.leftover_nfs = self._reap_nfs()
        return self.exit_code

    def wait_telemetry(self, timeout=30):
        """Wait until the /onvm/ commands answer (the socket exists before
        they are registered; until then a command's value is null)."""
        def up():
            if not os.path.exists(self.tel.path):
                return False
            try:
                return self.query("/onvm/info") is not None
            except OSError:
                return False
        wait_until(up, timeout, f"node {self.name}: /onvm/ telemetry", alive=self.assert_running)

    def stop(self, timeout=30, sig=signal.SIGINT):
        """Stop the manager; returns its exit status (None if it had to be SIGKILLed)."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            try:
                self.nfs()  # learn every NF pid before they go
            except Exception:
                pass
            self._learn_pids_from_log()
            self.proc.send_signal(sig)
            try:
                self.exit_code = self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.exit_code = self._wait_reaper_in_kernel(timeout)
            if self.exit_code is False:
                print(f"lab: node {self.name}: onvm_mgr did not stop in {timeout} s: SIGKILL; "
                      f"its threads: {threads_where(self.proc.pid)}", file=sys.stderr)
                self.proc.kill()
                self.proc.wait()
                self.exit_code = None
        else:
            self.exit_code = self.proc.returncode
        self.tel.close()
        self.leftover_nfs = self._reap_nfs()
        return self.exit_code

    def _wait_reaper_in_kernel(self, waited):
        """A manager done but for its NF reaper thread, still in the kernel
        reaping a dead NF (release_task can spin in shrink_dcache_parent()
        for a minute: docs/design/nf-lifecycle.md), is the kernel's
        slowness, not a hang of its own: wait for it, 90 s more.  Returns
        the exit status, or False (not that, or not done then)."""
        live = [t for t in thread_states(self.proc.pid) if t[1] != "Z"]
        if not live or any(t[0] != "onvm-reap" for t in live):
            return False
        print(f"lab: node {self.name}: exit held {waited} s by its NF reaper in the kernel "
              f"({threads_where(self.proc.pid)}): waiting 90 s more", file=sys.stderr)
        try:
            return self.proc.wait(90)
        except subprocess.TimeoutExpired:
            return False

    def crash(self):
        """The whole node dies at once: SIGKILL to the manager and to every
        NF it launched, waiting for nothing (stop() reaps them later).  For a
        test that times something from the failure: stop(sig=SIGKILL) waits
        for the manager's exit, then up to 3 s for its NFs, and an NF told
        by its PDEATHSIG to stop may spend NF_MP_TIMEOUT_S (5 s) asking the
        dead manager to unregister it, so whatever a test does after stop()
        (asking for a failover) comes seconds after the failure.  Returns
        the CLOCK_MONOTONIC ns of the manager's kill (None: not running)."""
        if not self.running():
            return None
        self._learn_pids_from_log()  # (its log names what it launched: no query)
        t = time.monotonic_ns()
        self.proc.kill()
        for p in sorted(self.nf_pids):
            if f"--file-prefix={self.prefix}" in pid_cmdline(p) and pid_alive(p):
                try:
                    os.kill(p, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        return t

    def _reap_nfs(self):
        """NFs of this node still alive after the manager is gone: give them a
        moment (PDEATHSIG), then SIGKILL.  Returns those that had to be killed."""
        self._learn_pids_from_log()
        mine = lambda p: f"--file-prefix={self.prefix}" in pid_cmdline(p) and pid_alive(p)
        try:
            wait_until(lambda: not any(mine(p) for p in self.nf_pids), 3,
                       "NFs to exit", interval=0.1)
            return []
        except TestFailure:
            pass
        killed = []
        for p in sorted(self.nf_pids):
            if mine(p):
                os.kill(p, signal.SIGKILL)
                killed.append(p)
        # Until they are gone their hugepages are not free: a node started
        # again at once could lack memory for its EAL (the kernel may take
        # seconds to tear a killed DPDK process down).
        try:
            wait_until(lambda: not any(mine(p) for p in killed), 30,
                       "NFs killed to be gone", interval=0.1)
        except TestFailure:
            print(f"lab: node {self.name}: NFs {[p for p in killed if mine(p)]} still there "
                  f"30 s after SIGKILL", file=sys.stderr)
        return killed

    def runtime_leftovers(self):
        """Runtime files the node left behind."""
        left = []
        rdir = os.path.join(RUNTIME_ROOT, self.prefix)
        if os.path.exists(rdir):
            left.append(rdir)
        for d in hugetlbfs_mounts():
            left += glob.glob(os.path.join(d, glob.escape(self.prefix) + "map_*"))
        return left

    def remove_runtime(self):
        remove_runtime(self.prefix)

    # -- telemetry
    def query(self, cmd):
        return self.tel.query(cmd)

    def info(self):
        return self.query("/onvm/info")

    def pool(self):
        return self.query("/onvm/pool")

    def ports(self):
        return self.query("/onvm/ports")

    def port(self, name):
        p = self.ports()
        check(name in p, f"node {self.name}: no port '{name}' in /onvm/ports: {sorted(p)}")
        return p[name]

    def drops(self):
        return self.query("/onvm/drops")

    def nfs(self):
        d = self.query("/onvm/nfs") or {}
        for v in d.values():
            if v.get("pid", 0) > 0 and v.get("launched"):
                self.nf_pids.add(v["pid"])
        return d

    def nf_by(self, **match):
        """The /onvm/nfs entries whose fields equal `match` (a list)."""
        return [v for v in self.nfs().values() if all(v.get(k) == x for k, x in match.items())]

    def bfd(self, session=None):
        """/onvm/bfd, or one session's entry of it."""
        d = self.query("/onvm/bfd")
        if session is None:
            return d
        check(session in d, f"node {self.name}: no BFD session '{session}' in /onvm/bfd")
        return d[session]

    def wait_bfd(self, session, state, timeout=60):
        """Wait until the BFD session is in `state`; returns its entry."""
        last = {}

        def reached():
            last.clear()
            last.update(self.bfd(session))
            return dict(last) if last["state"] == state else None
        try:
            return wait_until(reached, timeout, f"node {self.name}: BFD {session} {state}",
                              interval=0.01, alive=self.assert_running)
        except TestFailure as e:
            raise TestFailure(f"{e} (last: {last})")

    def link_up(self, port_id):
        return self.query(f"/ethdev/link_status,{port_id}").get("status") == "UP"

    def wait_port(self, port, field, value, timeout=60):
        """Wait until /onvm/ports[port][field] >= value; returns the port's counters."""
        last = {}

        def reached():
            last.update(self.port(port))
            return last if last[field] >= value else None
        try:
            return wait_until(reached, timeout, f"node {self.name}: port {port} {field} >= {value}",
                              alive=self.assert_running)
        except TestFailure as e:
            raise TestFailure(f"{e} (last: {field} = {last.get(field)}; port: {last})")


# ---- network namespaces and FRR's bfdd -----------------------------------------------

BFDD = "/usr/lib/frr/bfdd"
VTYSH = "/usr/bin/vtysh"


def in_netns(ns, argv):
    """argv run inside network namespace `ns`.  nsenter, not `ip netns exec`:
    the latter also remounts /sys, which fails where / is no mount point
    (a chroot, some containers)."""
    return ["nsenter", f"--net=/run/netns/{ns}"] + list(argv)


# Sends every frame of a capture (argv: interface, file) in order.
# (on one CPU: a veth hands each frame to the backlog of the CPU that sent
# it, and two CPUs' backlogs drain independently -- a sender moved between
# two sends may overtake itself)
_SEND_FRAMES = ("import os, socket, struct, sys\n"
                "os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})\n"
                "d = open(sys.argv[2], 'rb').read(); off = 24\n"
                "s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW); s.bind((sys.argv[1], 0))\n"
                "while off + 16 <= len(d):\n"
                "    n = struct.unpack_from('<I', d, off + 8)[0]\n"
                "    s.send(d[off + 16:off + 16 + n]); off += 16 + n\n")


def send_frames(ns, ifname, path, frames=None):
    """Send the frames of the capture `path` -- written first from `frames`
    if given -- into interface `ifname` of network namespace `ns`, in order
    (a DPDK port reading the veth's other end live takes them)."""
    if frames is not None:
        from onvm import pcap  # (pcap imports this module)
        pcap.write_pcap(path, frames)
    run_cmd(in_netns(ns, ["/usr/bin/python3", "-c", _SEND_FRAMES, ifname, path]))


def run_cmd(argv):
    r = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if r.returncode != 0:
        raise TestFailure(f"{' '.join(argv)}: exit {r.returncode}: {r.stderr.strip()}")
    return r.stdout


class Bfdd:
    """FRR's bfdd run standalone (no zebra) in a network namespace, with one
    single-hop peer (docs/spec.md section 7).  Its files belong to user frr."""

    def __init__(self, lab, name, netns, local, peer, interval_ms=10, mult=3):
        if not (os.access(BFDD, os.X_OK) and os.access(VTYSH, os.X_OK)):
            raise TestSkip(f"{BFDD} or {VTYSH} missing (Debian package frr)")
        self.lab, self.name, self.netns = lab, name, netns
        self.dir = lab.path(f"bfdd-{name}")
        os.makedirs(os.path.join(self.dir, "vty"), exist_ok=True)
        self.conf = os.path.join(self.dir, "bfdd.conf")
        with open(self.conf, "w") as f:
            f.write(f"bfd\n peer {peer} local-address {local}\n"
                    f"  receive-interval {interval_ms}\n  transmit-interval {interval_ms}\n"
                    f"  detect-multiplier {mult}\n !\n!\n")
        self.pidfile = os.path.join(self.dir, "bfdd.pid")
        self.log_path = os.path.join(self.dir, "bfdd.log")
        self.peer = peer
        self.pid = None
        os.chmod(lab.tmp, 0o711)  # bfdd runs as user frr: let it reach its directory
        for root, dirs, files in os.walk(self.dir):
            for x in [root] + [os.path.join(root, y) for y in dirs + files]:
                shutil.chown(x, "frr", "frr")
        lab.bfdds.append(self)

    def start(self):
        if os.path.exists(self.pidfile):
            os.unlink(self.pidfile)
        run_cmd(in_netns(self.netns, [BFDD, "-f", self.conf, "-N", self.name,
                 "-i", self.pidfile, "--bfdctl", os.path.join(self.dir, "bfdd.sock"),
                 "--vty_socket", os.path.join(self.dir, "vty"),
                 "-z", os.path.join(self.dir, "zserv.api"),
                 "--log", f"file:{self.log_path}", "-d"]))

        def pid():
            try:
                with open(self.pidfile) as f:
                    p = int(f.read().strip() or 0)
            except (OSError, ValueError):
                return None
            return p if p and self.conf in pid_cmdline(p) else None
        self.pid = wait_until(pid, 30, f"bfdd {self.name} to write its pid file")
        wait_until(lambda: self._query_ok(), 30, f"bfdd {self.name} to answer vtysh")
        return self

    def _query_ok(self):
        try:
            return self.peers() is not None
        except TestFailure:
            return False

    def running(self):
        return self.pid is not None and pid_alive(self.pid) and self.conf in pid_cmdline(self.pid)

    def kill(self, sig=signal.SIGKILL):
        """Signal our bfdd (checked by its command line) and wait until it is gone."""
        if not self.running():
            return
        os.kill(self.pid, sig)
        wait_until(lambda: not pid_alive(self.pid), 30, f"bfdd {self.name} to exit", interval=0.01)
        self.pid = None

    def peers(self):
        out = run_cmd(in_netns(self.netns, [VTYSH, "--vty_socket",
                                            os.path.join(self.dir, "vty"), "-c",
                                            "show bfd peers json"]))
        return json.loads(out)

    def peer_state(self):
        for p in self.peers():
            if p.get("peer") == self.peer:
                return p
        raise TestFailure(f"bfdd {self.name}: no peer {self.peer} in 'show bfd peers'")

    def wait_status(self, status, timeout=60):
        last = {}

        def reached():
            last.clear()
            last.update(self.peer_state())
            return dict(last) if last.get("status") == status else None
        try:
            return wait_until(reached, timeout, f"bfdd {self.name}: peer {self.peer} {status}",
                              interval=0.05)
        except TestFailure as e:
            raise TestFailure(f"{e} (last: {last})")


# ---- the lab ------------------------------------------------------------------------

class Lab:
    def __init__(self, name):
        self.name = name
        self.tmp = tempfile.mkdtemp(prefix=f"onvm-it-{name}-")
        self.nodes = []
        self.procs = []  # (name, Popen, log path) of hand-started processes
        self.prefixes = []  # their own DPDK file prefixes
        self.extra_paths = []
        self.extra_dirs = []  # removed (with what they hold) at clean-up
        self.failures = []
        self.namespaces = []
        self.bfdds = []
        self._n = 0
        self._cleaned = False
        atexit.register(self.cleanup)

    def new_prefix(self):
        self._n += 1
        return f"it{os.getpid()}_{self._n}"

    def path(self, name):
        return os.path.join(self.tmp, name)

    def node(self, name, config, netns=None, env=None, time_ns=None):
        """A manager; `env` adds to its environment (inherited by the NFs
        it launches), e.g. {"ONVM_NF_FAULT": "dpi:committed:300"};
        `time_ns`: a time namespace of time_namespace() to run it in."""
        return Node(self, name, config, netns, env, time_ns)

    def time_namespace(self, offset_s):
        """A time namespace whose CLOCK_MONOTONIC and CLOCK_BOOTTIME are
        `offset_s` seconds off this host's -- another host's clocks, for a
        node started in it (node(time_ns=...)) and the NFs it launches.
        Returns its path; a sleeping process holds it until clean-up."""
        p = self.spawn(f"time_ns{len(self.procs)}",
                       ["unshare", "--time", f"--monotonic={offset_s}", f"--boottime={offset_s}",
                        "--fork", "--kill-child", "sleep", "infinity"])

        def child():
            try:
                with open(f"/proc/{p.pid}/task/{p.pid}/children") as f:
                    kids = f.read().split()
            except OSError:
                return None
            return kids[0] if kids else None
        return f"/proc/{wait_until(child, 10, 'the time namespace')}/ns/time"

    def netns(self, tag):
        """A fresh network namespace (deleted at cleanup) with loopback up
        and IPv6 off for every interface made in it: a bridge's own
        duplicate address probe once reached a chain's input and the sink
        (the lab's links carry the tests' frames and 198.18.0.0/15 only)."""
        name = f"onvm{os.getpid()}{tag}"
        run_cmd(["ip", "netns", "add", name])
        self.namespaces.append(name)
        for conf in ("all", "default"):
            run_cmd(in_netns(name, ["sysctl", "-qw", f"net.ipv6.conf.{conf}.disable_ipv6=1"]))
        run_cmd(in_netns(name, ["ip", "link", "set", "lo", "up"]))
        return name

    def veth(self, ns_a, if_a, ns_b, if_b, addr_b=None, mtu=None):
        """A veth pair between two namespaces, both ends up, IPv6 off (no
        router solicitations on the wire); `mtu` when frames longer than
        1514 bytes (a trace's, with a shim) must pass.  `addr_b` (198.18.0.0/15 only)
        goes on b's end: a's end belongs to a DPDK af_packet port, so the
        kernel must not own an address there.  The kernel's end sends with
        UDP checksum offload off: a veth hands frames on with a partial
        checksum (CHECKSUM_PARTIAL), which a real wire never carries and
        af_packet delivers as is."""
        tmp_a, tmp_b = f"v{os.getpid()}a{self._n}", f"v{os.getpid()}b{self._n}"
        self._n += 1
        run_cmd(["ip", "link", "add", tmp_a, "type", "veth", "peer", "name", tmp_b])
        run_cmd(["ip", "link", "set", tmp_a, "netns", ns_a, "name", if_a])
        run_cmd(["ip", "link", "set", tmp_b, "netns", ns_b, "name", if_b])
        for ns, ifn in ((ns_a, if_a), (ns_b, if_b)):
            run_cmd(in_netns(ns, ["sysctl", "-qw", f"net.ipv6.conf.{ifn}.disable_ipv6=1"]))
            if mtu:
                run_cmd(in_netns(ns, ["ip", "link", "set", ifn, "mtu", str(mtu)]))
            run_cmd(in_netns(ns, ["ip", "link", "set", ifn, "up"]))
        if addr_b:
            check(addr_b.startswith("198.18.") or addr_b.startswith("198.19."),
                  f"lab addresses must be in 198.18.0.0/15, not {addr_b}")
            run_cmd(in_netns(ns_b, ["ip", "addr", "add", addr_b, "dev", if_b]))
            run_cmd(in_netns(ns_b, ["ethtool", "-K", if_b, "tx", "off"]))

    def bfdd(self, name, netns, local, peer, interval_ms=10, mult=3):
        return Bfdd(self, name, netns, local, peer, interval_ms, mult)

    def expect(self, cond, msg):
        """A soft check: recorded, reported at the end, test continues."""
        if not cond:
            self.failures.append(msg)
            print(f"MISMATCH: {msg}", file=sys.stderr)
        return cond

    def spawn(self, name, argv, env=None, stdin=subprocess.DEVNULL, prefix=None):
        """Start a helper process (a hand-started NF, a testpmd); its output goes to
        a log.  `prefix`: its own DPDK file prefix, whose runtime files go at
        clean-up once it is stopped."""
        log_path = self.path(f"{name}.log")
        logf = open(log_path, "ab")
        p = subprocess.Popen(argv, stdin=stdin, stdout=logf, stderr=subprocess.STDOUT,
                             env=dict(os.environ, **(env or {})))
        logf.close()  # (the child has its own copy)
        self.procs.append((name, p, log_path))
        if prefix is not None:
            self.prefixes.append(prefix)
        return p

    def proc_log(self, p):
        for _, q, path in self.procs:
            if q is p:
                with open(path, errors="replace") as f:
                    return f.read()
        return ""

    def gate_nf(self, name, real_binary):
        """An NF binary that waits for a gate file before it execs `real_binary`.

        The manager starts its ports only once every launched NF has registered,
        so a gate NF in a config holds the node's traffic until the test opens
        the gate: something can happen first (a hand-started NF registering)
        without racing the trace replay.  exec keeps the pid, so the manager
        watches the real NF."""
        gate = self.path(f"{name}.gate")
        script = self.path(f"{name}.sh")
        with open(script, "w") as f:
            f.write("#!/bin/sh\n"
                    f"while [ ! -e '{gate}' ]; do sleep 0.05; done\n"
                    f"exec '{real_binary}' \"$@\"\n")
        os.chmod(script, 0o755)
        return script, gate

    @staticmethod
    def open_gate(gate):
        with open(gate, "w"):
            pass

    def dump_logs(self, lines=60):
        for n in self.nodes:
            text = n.log().splitlines()
            print(f"----- node {n.name} (prefix {n.prefix}) log, last {lines} of {len(text)} "
                  f"lines: {n.log_path}", file=sys.stderr)
            for line in text[-lines:]:
                print("  " + line, file=sys.stderr)
        for name, _, path in self.procs:
            with open(path, errors="replace") as f:
                text = f.read().splitlines()
            print(f"----- {name} log, last {lines} lines", file=sys.stderr)
            for line in text[-lines:]:
                print("  " + line, file=sys.stderr)

    def cleanup(self):
        if self._cleaned:
            return
        self._cleaned = True
        for n in self.nodes:
            try:
                if n.running():
                    n.stop(timeout=30)
                else:
                    n.leftover_nfs = n._reap_nfs()
            except Exception as e:
                print(f"lab: stopping node {n.name}: {e}", file=sys.stderr)
        for b in self.bfdds:
            try:
                b.kill()
            except Exception as e:
                print(f"lab: stopping bfdd {b.name}: {e}", file=sys.stderr)
        for name, p, _ in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(5)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        for n in self.nodes:
            if n.uses_containers:
                from onvm import containers  # (not at the top: it imports this module)
                if shutil.which(containers.CTR_RUNTIME):
                    containers.remove_node_containers(n.prefix)
            n.remove_runtime()
        for prefix in self.prefixes:
            remove_runtime(prefix)
        for ns in self.namespaces:  # its veth ends go with it
            subprocess.run(["ip", "netns", "del", ns], stdin=subprocess.DEVNULL,
                           capture_output=True)
        for p in self.extra_paths:
            try:
                os.unlink(p)
            except OSError:
                pass
        for d in self.extra_dirs:
            shutil.rmtree(d, ignore_errors=True)
        if os.environ.get("ONVM_IT_KEEP"):
            print(f"lab: keeping {self.tmp}", file=sys.stderr)
        else:
            shutil.rmtree(self.tmp, ignore_errors=True)

    def run(self, test):
        """Run test(lab); exit 0 on pass, 1 on failure, 77 on skip."""
        def on_term(sig, frame):
            raise KeyboardInterrupt(f"signal {sig}")
        signal.signal(signal.SIGTERM, on_term)
        t0 = time.monotonic()
        rc = 0
        try:
            test(self)
            if self.failures:
                raise TestFailure(f"{len(self.failures)} mismatch(es):\n  " +
                                  "\n  ".join(self.failures))
        except TestSkip as e:
            print(f"SKIP {self.name}: {e}")
            rc = SKIP
        except TestFailure as e:
            msg = str(e)
            if self.failures and not msg.endswith("\n  ".join(self.failures)):
                msg += "\nearlier mismatches:\n  " + "\n  ".join(self.failures)
            print(f"FAIL {self.name}: {msg}", file=sys.stderr)
            self.dump_logs()
            rc = 1
        except BaseException:
            traceback.print_exc()
            self.dump_logs()
            rc = 1
        finally:
            self.cleanup()
        if rc == 0:
            print(f"PASS {self.name} in {time.monotonic() - t0:.1f} s")
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(rc)


def run(name, test):
    Lab(name).run(test)
