#!/usr/bin/python3
"""Idle CPU of a node: onvm_mgr + the demo's 3 NFs, measured from /proc over a
window after the trace has been forwarded.  Prints one CSV line per process
and the total, as percent of one core.

usage: bench/idle_cpu.py [BUILD_DIR] [SECONDS] [CSV_OUT]
"""
import os, signal, subprocess, sys, time

repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(repo, "build")
window = float(sys.argv[2]) if len(sys.argv) > 2 else 10.0
csv_out = sys.argv[3] if len(sys.argv) > 3 else None
hz = os.sysconf("SC_CLK_TCK")

def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime

def children(pid):
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True)
    return [int(x) for x in out.stdout.split()]

env = dict(os.environ)
env.setdefault("DEMO_TRACE", os.path.join(repo, "traces", "smtp.pcap"))
env.setdefault("DEMO_OUT", "/tmp/onvm-idle")
os.makedirs(env["DEMO_OUT"], exist_ok=True)
mgr = subprocess.Popen([os.path.join(build, "onvm_mgr", "onvm_mgr"), "--config",
                        os.path.join(repo, "examples", "demo", "node.json"), "--quiet"],
                       env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
try:
    deadline = time.time() + 60
    for line in mgr.stdout:
        if line.startswith("ONVM_MGR_READY"):
            break
        if time.time() > deadline:
            raise SystemExit("manager did not start")
    time.sleep(2.0)  # trace forwarded, NFs back to sleep
    pids = [mgr.pid] + children(mgr.pid)
    names = {p: open(f"/proc/{p}/comm").read().strip() for p in pids}
    t0 = {p: cpu_ticks(p) for p in pids}
    time.sleep(window)
    rows = [(names[p], 100.0 * (cpu_ticks(p) - t0[p]) / hz / window) for p in pids]
finally:
    mgr.send_signal(signal.SIGINT)
    mgr.wait(timeout=30)
total = sum(r[1] for r in rows)
lines = ["process,cpu_percent_of_one_core"] + [f"{n},{v:.2f}" for n, v in rows] + [f"total,{total:.2f}"]
print("\n".join(lines))
if csv_out:
    with open(csv_out, "w") as f:
        f.write("\n".join(lines) + "\n")
