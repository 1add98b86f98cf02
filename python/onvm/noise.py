# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""onvm.noise -- what else moved a benchmark's numbers: the host's placement
of our two vCPUs, other processes' CPU and the hypervisor's steal time.

On this KVM host the throughput of the same node flips between two levels
(about 10 and 4 Mpps) for tens of seconds at a time, with both pollers at
100 % CPU, no other process running and no steal.  What flips is the time a
cache line takes to travel between CPU 0 and CPU 1 (about 60 vs 350 ns per
round trip): the host moves our vCPUs between physical placements, and the
data path (rings and mbufs handed between the manager on CPU 0 and the NF on
CPU 1) is bound by that latency.  A pair whose probes before, between and
after its two windows disagree straddles such a change.

XCoreProbe measures that round trip (a cache-line ping-pong between a
process on CPU 0 and one on CPU 1, compiled with cc at start); steady()
says whether probes around a measurement agree.  CpuNoise notes, over a
window, the CPU used by processes that are not the benchmark's (its own
pid, the processes it was given, and any whose command line holds its tag)
and the steal time; cpu_busy_fraction() is the whole machine's.
"""
import os
import subprocess
import time

from onvm.report import log

PROBE_C = r"""
#define _GNU_SOURCE
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
/* Cache-line ping-pong between a process on CPU 0 and one on CPU 1: mean
 * round trip in ns. */
static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}
static void pin(int c)
{
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(c, &s);
	sched_setaffinity(0, sizeof(s), &s);
}
int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	_Atomic long *v = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			       -1, 0);
	double t0, t1;
	pid_t p;

	if (v == MAP_FAILED)
		return 1;
	*v = 0;
	p = fork();
	if (p == 0) {
		pin(1);
		for (long i = 0; i < n; i++) {
			while (atomic_load(v) != 2 * i + 1)
				;
			atomic_store(v, 2 * i + 2);
		}
		_exit(0);
	}
	pin(0);
	t0 = now();
	for (long i = 0; i < n; i++) {
		atomic_store(v, 2 * i + 1);
		while (atomic_load(v) != 2 * i + 2)
			;
	}
	t1 = now();
	waitpid(p, NULL, 0);
	printf("%.1f\n", (t1 - t0) / n * 1e9);
	return 0;
}
"""


class XCoreProbe:
    """Compiled into the lab's temporary directory at start (cc); None values
    when there is no compiler."""

    def __init__(self, L):
        src, self.exe = L.path("xcore_probe.c"), L.path("xcore_probe")
        with open(src, "w") as f:
            f.write(PROBE_C)
        r = subprocess.run(["cc", "-O2", "-o", self.exe, src], capture_output=True, text=True)
        if r.returncode != 0:
            log(f"no cross-CPU probe (cc failed: {r.stderr.strip()[:200]})")
            self.exe = None

    def __call__(self):
        if self.exe is None:
            return None
        r = subprocess.run([self.exe, "100000"], capture_output=True, text=True, timeout=30)
        return float(r.stdout) if r.returncode == 0 else None


def steady(probes, factor=1.5):
    """The host kept one placement through a pair: its probes agree within factor."""
    v = [p for p in probes if p]
    return bool(v) and len(v) == len(probes) and max(v) <= factor * min(v)


def cpu_busy_fraction(seconds=1.0):
    def sample():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return sum(v), v[3] + v[4]
    t0, i0 = sample()
    time.sleep(seconds)
    t1, i1 = sample()
    return 1.0 - (i1 - i0) / max(1, t1 - t0)


class CpuNoise:
    """Others' CPU and the steal time over a window, in percent of one core.
    Processes are ours when they are this one, in `procs` (Popen objects), or
    have `tag` in their command line (a DPDK file prefix names our NFs)."""

    def __init__(self, tag, procs=()):
        self.tag = tag
        self.procs = list(procs)
        self.last_foreign_cpu = None
        self.last_foreign_top = ""
        self.last_steal = None

    def window(self, seconds):
        """Sleep through a measurement window and note how much CPU processes that are not
        ours used meanwhile (percent of one core): the noise indicator of that run."""
        st0, t0, s0 = self.steal_ticks(), time.monotonic(), self.foreign_ticks()
        time.sleep(seconds)
        self.note_noise(st0, t0, s0, self.steal_ticks(), time.monotonic(), self.foreign_ticks())

    def note_noise(self, st0, t0, s0, st1, t1, s1):
        """From steal and others' CPU ticks at both ends of a window: last_steal,
        last_foreign_cpu (percent of one core) and last_foreign_top."""
        hz = os.sysconf("SC_CLK_TCK")
        self.last_steal = 100.0 * (st1 - st0) / hz / (t1 - t0)
        used = {p: 100.0 * (v[0] - s0.get(p, (0, ""))[0]) / hz / (t1 - t0) for p, v in s1.items()}
        self.last_foreign_cpu = sum(used.values())
        top = sorted(((u, s1[p][1]) for p, u in used.items() if u >= 5), reverse=True)[:3]
        self.last_foreign_top = ", ".join(f"{n} {u:.0f}%" for u, n in top)

    @staticmethod
    def steal_ticks():
        """Time the hypervisor gave our vCPUs to someone else (all CPUs, in ticks)."""
        with open("/proc/stat") as f:
            return int(f.readline().split()[8])

    def foreign_ticks(self):
        out = {}
        mine = {os.getpid()} | {p.pid for p in self.procs}
        tag = self.tag.encode()
        for d in os.listdir("/proc"):
            if not d.isdigit() or int(d) in mine:
                continue
            try:
                with open(f"/proc/{d}/cmdline", "rb") as f:
                    if tag in f.read():
                        continue
                with open(f"/proc/{d}/stat") as f:
                    head, tail = f.read().rsplit(")", 1)
                fields = tail.split()
                out[int(d)] = (int(fields[11]) + int(fields[12]), head.split("(", 1)[1])
            except (OSError, IndexError, ValueError):
                pass
        return out
