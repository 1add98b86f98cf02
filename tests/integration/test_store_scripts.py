#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""The store's scripts (common/onvm_store_scripts.c) on a real redis-server,
driven directly: what FENCE, LOAD and WRITE do with versions, generations,
trimming and recovery points, as onvm_store.h says.  Then the same late
update -- a dead incarnation's, arriving after the recovery -- against the
WRITE without its version check: it lands and the next recovery loads it,
which is what the check is for.
"""
import os

from onvm import lab, store

C = "t"


def versions(r, k):
    """{epoch: bytes} of a chunk's sorted set of versions."""
    out = {}
    for m in r.cmd("ZRANGE", k, 0, -1):
        e, v = m.split(b":", 1)
        out[int(e)] = v
    return out


def key(kind, svc=None, rc=None):
    if kind == "run":
        return f"onvm:{{{C}}}:run"
    if kind == "c":
        return f"onvm:{{{C}}}:s{svc}:c:{rc}"
    return f"onvm:{{{C}}}:s{svc}:{kind}"


def test(L):
    r = store.Redis(L).start()
    build = os.environ.get("ONVM_BUILD", "build")
    sha = {n: r.cmd("SCRIPT", "LOAD", t).decode() for n, t in store.scripts(build).items()}

    def fence(token, svcs=(1, 2), want=None):
        # (the manager sends 1 + E; 0: E not known)
        return r.cmd("EVALSHA", sha["fence"], 1 + 2 * len(svcs), key("run"),
                     *[k for s in svcs for k in (key("m", s), key("k", s))], token,
                     0 if want is None else want + 1)

    def write(svc, gen, epoch, seq, close, floor, chunks, new=(), script="write"):
        keys = [key("m", svc), key("i", svc), key("k", svc)] + [key("c", svc, rc)
                                                                  for rc in chunks]
        # close: False/True, or the flags (1 close, 2 seed); a close's marker
        # is stamped 100 x its epoch here (FENCE gives it back)
        return r.cmd("EVALSHA", sha[script], len(keys), *keys, gen, epoch, seq,
                     int(close), floor, str(100 * epoch) if int(close) & 1 else 0,
                     *chunks.values(), *new)

    def load(svc, gen, epoch, rcs, layout="L1"):
        return r.cmd("EVALSHA", sha["load"], 1 + len(rcs), key("m", svc),
                     *[key("c", svc, rc) for rc in rcs], gen, epoch, layout)

    # A fresh chain: generation 1, recovery point 0, state "fresh";
    # the same token gives the same answer, a new one the next generation.
    L.expect(fence("A") == [1, 0, 0, b"0"], "fresh fence")
    L.expect(fence("A") == [1, 0, 0, b"0"], "the same token, the same answer")
    L.expect(load(1, 1, 0, ["0.0"]) == [1, None], "nothing to load")
    # Versions: applied once, a retry is "not newer", an older one too.
    L.expect(write(1, 1, 1, 1, False, 0, {"0.0": b"a1"}, ["0.0"]) == [1, 1, 1], "first write")
    L.expect(write(1, 1, 1, 1, False, 0, {"0.0": b"XX"}) == [0, 1, 1], "a retry is not newer")
    L.expect(versions(r, key("c", 1, "0.0")) == {1: b"a1"}, "a retry changed nothing")
    L.expect(write(1, 1, 1, 2, True, 0, {"0.0": b"a2"}) == [1, 1, 2], "close epoch 1")
    L.expect(write(1, 1, 1, 1, False, 0, {"0.0": b"XX"}) == [0, 1, 2], "older: not newer")
    L.expect(r.cmd("SMEMBERS", key("i", 1)) == [b"0.0"], "the index")
    L.expect(write(1, 7, 2, 3, False, 0, {"0.0": b"XX"}) == [-1, 1], "another generation")
    # NF 2 closes epoch 1 too; NF 1 runs ahead to epochs 2 and 3.
    L.expect(write(2, 1, 1, 1, True, 0, {"0.0": b"b1"}, ["0.0"]) == [1, 1, 1], "nf2 closes 1")
    L.expect(write(1, 1, 2, 3, True, 1, {"0.0": b"a3"}) == [1, 2, 3], "nf1 closes 2")
    L.expect(write(1, 1, 3, 4, False, 1, {"0.0": b"a4"}) == [1, 3, 4], "nf1 writes in 3")
    L.expect(sorted(versions(r, key("c", 1, "0.0"))) == [1, 2, 3],
             "versions above the floor and the newest at or below it kept")
    L.expect(write(1, 1, 3, 5, True, 2, {"0.0": b"a5"}) == [1, 3, 5], "nf1 closes 3, floor 2")
    L.expect(sorted(versions(r, key("c", 1, "0.0"))) == [2, 3], "trimmed below 2")

    # Recovery: E = the lowest epoch closed (nf2's 1)... but nf1 trimmed
    # its epoch-1 version (floor 2 said every NF had closed 2: a lie here,
    # to see LOAD take the newest version at or below E, or nothing).
    L.expect(fence("B") == [2, 1, 1, b"100"],
             "recovery point: the lowest closed epoch, and its marker's timestamp")
    # (the manager names E -- the newest marker its exit released -- with the
    # same token; an E above what an NF closed: the store lost state, state 3)
    L.expect(fence("B") == [2, 1, 1, b"100"], "idempotent")
    L.expect(load(2, 2, 1, ["0.0"]) == [1, b"b1"], "nf2's state at 1")
    # (an epoch whose decimal tostring() would print as 1e+14, and a value
    # with the separator in it, come back as written)
    L.expect(write(3, 0, 1, 1, 2, 0, {"0.0": b"x"}) == [1, 1, 1], "nf3 seeded")
    L.expect(write(3, 0, 10 ** 14, 2, 1, 0, {"0.0": b"big:epoch:bytes"}) == [1, 10 ** 14, 2],
             "a big epoch")
    L.expect(load(3, 0, 10 ** 14 + 5, ["0.0"]) == [1, b"big:epoch:bytes"], "loaded at 1e14")
    L.expect(load(1, 2, 1, ["0.0"]) == [1, None], "nf1 has no version at or below 1 left")
    L.expect(versions(r, key("c", 1, "0.0")) == {}, "versions above E deleted at load")
    L.expect(load(1, 2, 1, ["0.0"], layout="L2") == [-3], "another layout refused")
    L.expect(load(1, 1, 1, ["0.0"]) == [-1, 2], "an old generation may not load")

    # The dead generation's update, late (it sat in a socket buffer): the
    # version check refuses it ...
    L.expect(write(1, 1, 2, 9, True, 0, {"0.0": b"zombie"}) == [-1, 2], "fenced")
    L.expect(versions(r, key("c", 1, "0.0")) == {}, "nothing of it stored")
    # ... without the check, it lands, and the next recovery loads it.
    write(1, 1, 2, 9, True, 0, {"0.0": b"zombie"}, script="write_unchecked")
    L.expect(write(2, 2, 2, 1, True, 0, {}) == [1, 2, 1], "nf2 closes 2 (new generation)")
    fence("C")
    got = load(1, 3, 2, ["0.0"])
    L.expect(got == [1, b"zombie"], f"unchecked: the recovery loads the dead run's update {got}")

    # The manager's E: taken when every NF closed it, else "lost" (3) and
    # the lowest closed.
    L.expect(write(1, 3, 5, 1, True, 0, {}) == [1, 5, 1], "nf1 closes 5")
    L.expect(write(2, 3, 4, 1, True, 0, {}) == [1, 4, 1], "nf2 closes 4")
    L.expect(fence("C2", want=3) == [4, 3, 1, b"0"],
             "E 3, as the manager says (no NF closed 3 itself: no timestamp)")
    L.expect(write(1, 4, 6, 1, True, 0, {}) == [1, 6, 1] and
             write(2, 4, 6, 1, True, 0, {}) == [1, 6, 1], "both close 6")
    L.expect(fence("C3", want=7) == [5, 6, 3, b"600"], "E 7 above what they closed: lost, E 6")
    # The store lost an NF's record (a restart without persistence).
    r.cmd("DEL", key("m", 2))
    L.expect(write(2, 3, 3, 1, True, 0, {}) == [-2], "lost")
    L.expect(fence("D") == [6, 0, 2, b"0"], "partial: E 0")
    # Re-seeded: a WRITE flagged SEED (2) makes the record anew, its epoch
    # the NF's base; there is no cut until every NF closed past every base.
    r.cmd("FLUSHALL")
    L.expect(write(1, 4, 10, 1, False, 0, {"0.0": b"s1"}) == [-2], "lost, not seeding")
    L.expect(write(1, 4, 10, 1, 2, 0, {"0.0": b"s1"}, ["0.0"]) == [1, 10, 1], "seeded at 10")
    L.expect(write(1, 4, 10, 2, 1, 0, {}) == [1, 10, 2], "nf1 closes 10")
    L.expect(write(2, 4, 12, 1, 3, 0, {"0.0": b"t1"}, ["0.0"]) == [1, 12, 1],
             "nf2 seeded and closed at 12")
    # (FLUSHALL took the chain's run key: generations start again at 1)
    L.expect(fence("E") == [5, 0, 3, b"0"], "no cut: nf1 closed 10, below nf2's base 12 (and the "
             "generation above every record's, though the run key is gone)")
    # the same without a recovery in between
    r.cmd("FLUSHALL")
    L.expect(write(1, 4, 10, 1, 2, 0, {"0.0": b"s1"}, ["0.0"]) == [1, 10, 1], "seeded again")
    L.expect(write(2, 4, 12, 1, 3, 0, {"0.0": b"t1"}, ["0.0"]) == [1, 12, 1], "nf2 again")
    L.expect(write(1, 4, 13, 2, 1, 0, {"0.0": b"s2"}) == [1, 13, 2], "nf1 closes 13")
    L.expect(write(2, 4, 13, 2, 1, 0, {}) == [1, 13, 2], "nf2 closes 13")
    L.expect(fence("F") == [5, 13, 1, b"1300"], "a cut at 13, past every base")
    L.expect(load(1, 5, 13, ["0.0"]) == [1, b"s2"] and load(2, 5, 13, ["0.0"]) == [1, b"t1"],
             "the re-seeded state at 13")
    # A store rolled back to an older snapshot: a gap in an NF's updates is
    # "lost" (it re-seeds), and a known E over an empty store is state 3.
    L.expect(write(1, 5, 14, 1, True, 0, {"0.0": b"s3"}) == [1, 14, 1], "nf1 seq 1")
    L.expect(write(1, 5, 15, 3, True, 0, {"0.0": b"s4"}) == [-2], "seq 3 after 1: a gap")
    L.expect(write(1, 5, 15, 3, 3, 0, {"0.0": b"s4"}) == [1, 15, 3], "re-seeded over the gap")
    L.expect(r.cmd("HGET", key("m", 1), "base") == b"15", "its base moved to 15")
    r.cmd("FLUSHALL")
    L.expect(fence("G", want=5) == [1, 0, 3, b"0"], "E 5 known, the store empty: lost")
    r.cmd("FLUSHALL")
    L.expect(fence("H", want=0) == [1, 0, 0, b"0"], "E 0 known, the store empty: fresh")
    # A marker dropped on a full ring: nf2 never saw marker 2, so its close
    # of 3 holds epoch 2's packets too, and it has no version at 2.  With no
    # E given (a node's first start, or its loss), the lowest closed epoch
    # (2: nf1 has not closed 3 yet) would load nf1 at 2 and nf2 at 1; the
    # recovery point is the newest epoch both closed, 1.
    r.cmd("FLUSHALL")
    L.expect(write(1, 1, 1, 1, True, 0, {"0.0": b"a1"}, ["0.0"]) == [-2], "no record yet")
    L.expect(fence("I") == [1, 0, 0, b"0"], "fresh")
    L.expect(write(1, 1, 1, 1, True, 0, {"0.0": b"a1"}, ["0.0"]) == [1, 1, 1], "nf1 closes 1")
    L.expect(write(2, 1, 1, 1, True, 0, {"0.0": b"b1"}, ["0.0"]) == [1, 1, 1], "nf2 closes 1")
    L.expect(write(1, 1, 2, 2, True, 1, {"0.0": b"a2"}) == [1, 2, 2], "nf1 closes 2")
    L.expect(write(2, 1, 3, 2, True, 1, {"0.0": b"b3"}) == [1, 3, 2], "nf2 closes 3, not 2")
    got = fence("J")
    L.expect(got == [2, 1, 1, b"100"], f"the newest epoch both closed: 1, not 2 ({got})")
    L.expect(load(1, 2, 1, ["0.0"]) == [1, b"a1"] and load(2, 2, 1, ["0.0"]) == [1, b"b1"],
             "both loaded at 1")
    # A marker's timestamp above 2^53 (a predecessor's: the wall clock in
    # ns) comes back exactly as written, not as Lua's double.
    big = 1795993393714265631
    L.expect(r.cmd("EVALSHA", sha["write"], 3, key("m", 1), key("i", 1), key("k", 1), 2, 2, 1, 1,
                   0, str(big)) == [1, 2, 1], "nf1 closes 2, its marker at a big timestamp")
    L.expect(r.cmd("EVALSHA", sha["write"], 3, key("m", 2), key("i", 2), key("k", 2), 2, 2, 1, 1,
                   0, str(big)) == [1, 2, 1], "nf2 too")
    L.expect(fence("K") == [3, 2, 1, str(big).encode()], f"the big timestamp: {fence('K')}")
    # The recovery's closes: 2, for every NF, whatever they had above it.
    L.expect(r.cmd("ZRANGE", key("k", 2), 0, -1)[-1:] == [f"2:{big}".encode()],
             "nf2's closes after the recovery")
    r.kill()


if __name__ == "__main__":
    lab.Lab("store_scripts").run(test)
