#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""bench/lat_shim.so (the latency benchmark's LD_PRELOAD library) paces, stamps and
measures, read through the benchmark's parser of its file (onvm.latshim).

dpdk-testpmd io-forwards between net_null0 and net_null1 (one forwarding lcore) with
the shim preloaded: port 0 is the generator (paced at 200 kpps), port 1 the sink, and
port 1's own RX is muted, so everything port 1 transmits was stamped at port 0.
Asserted over a 1 s window, and again after the benchmark's control line set the rate
to 50 kpps:
  - the rate kept at the generator is within 10 % of the rate asked for, and the rest
    of what net_null produced was freed by the pacer;
  - the sink measured what the generator kept (io forwarding loses nothing here),
    every packet it transmitted carried a stamp, none from the future;
  - the latency histogram holds as many samples as were measured (give or take the
    burst being written while the file was copied), and its median is
    sane (above 0, below 1 ms: testpmd forwards a burst in well under a microsecond,
    the rest is this shared machine); the "offered" histogram (the emulated RX ring's
    wait added) is never below it.
"""
import os
import shutil
import subprocess
import time

from onvm import lab, latshim

TESTPMD = shutil.which("dpdk-testpmd")
SNAP_SLACK = 64  # two bursts of 32


def window(lf, seconds):
    s0 = lf.parse(lf.snapshot())
    time.sleep(seconds)
    return latshim.diff(s0, lf.parse(lf.snapshot()))


def check_window(L, lf, d, rate, what):
    rx, tx = d["rx"], d["tx"]
    kept_rate = rx["kept"] / d["dt"]
    count = sum(d["node"])
    p50 = latshim.percentile(d["node"], lf.edges, 50)
    off50 = latshim.percentile(d["offered"], lf.edges, 50)
    print(f"{what}: kept {kept_rate:.0f}/s (asked {rate}), paced out {rx['paced_out']}, "
          f"ring overflow {rx['ring_overflow']}, measured {tx['measured']}, unstamped "
          f"{tx['unstamped']}, negative {tx['negative']}, histogram {count}, p50 {p50} us, "
          f"offered p50 {off50} us, muted {rx['muted']}")
    L.expect(abs(kept_rate - rate) <= 0.1 * rate,
             f"{what}: kept {kept_rate:.0f} packets/s, asked for {rate}")
    L.expect(rx["paced_out"] > 0, f"{what}: the pacer freed nothing")
    L.expect(rx["muted"] > 0, f"{what}: nothing freed at the muted port")
    L.expect(abs(tx["measured"] - rx["kept"]) <= max(64, 0.01 * rx["kept"]),
             f"{what}: sink measured {tx['measured']}, generator kept {rx['kept']}")
    L.expect(tx["unstamped"] == 0, f"{what}: {tx['unstamped']} unstamped packets at the sink")
    L.expect(tx["negative"] == 0, f"{what}: {tx['negative']} stamps from the future")
    # A snapshot is a copy taken while the sink writes: the two histograms and the
    # counter may disagree by the burst being recorded at either end of the window.
    L.expect(abs(count - tx["measured"]) <= SNAP_SLACK,
             f"{what}: histogram {count} samples, measured {tx['measured']}")
    L.expect(abs(sum(d["offered"]) - count) <= SNAP_SLACK,
             f"{what}: offered histogram {sum(d['offered'])}, node histogram {count}")
    L.expect(p50 is not None and 0 < p50 < 1000, f"{what}: median latency {p50} us")
    L.expect(p50 is not None and off50 is not None and off50 >= p50,
             f"{what}: offered median {off50} us below the node median {p50} us")


def main(L):
    shim = os.path.join(lab.BUILD, "bench", "lat_shim.so")
    if TESTPMD is None:
        raise lab.TestSkip("dpdk-testpmd is not installed")
    lab.check(os.path.exists(shim), f"{shim} is not built")
    prefix = L.new_prefix()
    hist = L.path("lat.hist")
    env = dict(LD_PRELOAD=shim, LAT_HIST=hist, LAT_GEN_PORT="0", LAT_SINK_PORT="1",
               LAT_MUTE_PORT="1", LAT_RATE_PPS="200000", LAT_TX_IN="start")
    # Non-interactive testpmd forwards until a line arrives on its stdin; if
    # the test fails first, the lab stops it and removes its runtime files.
    p = L.spawn("testpmd", [TESTPMD, "-l", "0,1", "--no-pci", "--file-prefix", prefix,
                            "--vdev", "net_null0,size=64", "--vdev", "net_null1,size=64",
                            "--", "--forward-mode=io"],
                env=env, stdin=subprocess.PIPE, prefix=prefix)
    lf = latshim.LatFile(hist)
    try:
        lab.wait_until(lambda: lf.try_open() and lf.measured() > 0, 30,
                       "stamped packets at the sink", alive=lambda: lab.check(
                           p.poll() is None, f"testpmd exited ({p.returncode})"))
        time.sleep(0.2)
        check_window(L, lf, window(lf, 1.0), 200000, "200 kpps")
        lf.set_rate(50000)
        time.sleep(0.1)
        check_window(L, lf, window(lf, 1.0), 50000, "50 kpps (set through the file)")
        p.stdin.write(b"\n")
        p.stdin.flush()
        try:
            L.expect(p.wait(20) == 0, f"testpmd exit status {p.returncode}")
        except subprocess.TimeoutExpired:
            L.expect(False, "testpmd did not quit on its newline")
    finally:
        lf.close()


if __name__ == "__main__":
    lab.run("lat_shim", main)
