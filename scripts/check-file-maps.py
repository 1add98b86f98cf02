#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
"""check-file-maps.py -- the per-file maps must name exactly the files there are.

Each component says what each of its files is for, in one place: the opening
comment of its header (as FRR's bfdd/bfd.h does) or the table of its README.
Such a list is kept by hand, so this check keeps it true: every .c and .h
file of the folder is in its map, and the map names no file that is not
there.  The test suite runs it (meson test file_maps).

A header map is a run of lines in the file's first comment of the form
" *   name.c[, name.h ...][:]   what it is for", the names indented by at
most six spaces (continuation lines are indented further).  A README map is
the first column of its table: `name.c`, `include/name.h`, ...

Usage: scripts/check-file-maps.py [SOURCE_ROOT]; exit status 1 when a map
and its folder disagree, with the difference printed.
"""
import os
import re
import sys

# (the file holding the map, the folders it maps, relative to the root)
HEADER_MAPS = [
    ("onvm_mgr/mgr.h", ["onvm_mgr"]),
    ("onvm_mgr/config/config.h", ["onvm_mgr/config"]),
    ("onvm_mgr/nf/nf.h", ["onvm_mgr/nf"]),
    ("onvm_mgr/dataplane/dataplane.h", ["onvm_mgr/dataplane"]),
    ("onvm_mgr/remote/remote.h", ["onvm_mgr/remote"]),
    ("onvm_mgr/stateless/stateless.h", ["onvm_mgr/stateless"]),
    ("onvm_mgr/ftc/ftc.h", ["onvm_mgr/ftc"]),
    ("onvm_mgr/elastic/move.h", ["onvm_mgr/elastic"]),
    ("libnf/src/nf_private.h", ["libnf/src"]),
]
README_MAPS = [
    ("bfd/README.md", ["bfd", "bfd/include"]),
    ("pkt_logger/README.md", ["pkt_logger", "pkt_logger/include"]),
    ("rsync/README.md", ["rsync", "rsync/include"]),
]

NAME = r"[A-Za-z0-9_]+\.[ch]"
HEADER_LINE = re.compile(r"^ \*\s{1,6}(" + NAME + r"(?:,\s*" + NAME + r")*):?(?:\s{2,}|$)")


def sources(root, folders, base):
    """The .c/.h files of `folders`, named relative to `base`."""
    out = set()
    for folder in folders:
        for name in os.listdir(os.path.join(root, folder)):
            if name.endswith((".c", ".h")) and os.path.isfile(os.path.join(root, folder, name)):
                out.add(os.path.relpath(os.path.join(folder, name), base))
    return out


def header_map(text):
    end = text.find("*/", text.find("/*\n"))
    names = set()
    for line in text[:end].splitlines():
        m = HEADER_LINE.match(line)
        if m:
            names.update(n.strip() for n in m.group(1).split(","))
    return names


def readme_map(text):
    names = set()
    for line in text.splitlines():
        if line.startswith("|") and not line.startswith("|---"):
            first = line.split("|")[1]
            names.update(n for n in re.findall(r"`([^`]+)`", first) if n.endswith((".c", ".h")))
    return names


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    bad = 0
    for path, folders, parse in ([(p, f, header_map) for p, f in HEADER_MAPS] +
                                 [(p, f, readme_map) for p, f in README_MAPS]):
        with open(os.path.join(root, path)) as f:
            listed = parse(f.read())
        present = sources(root, folders, os.path.dirname(path))
        if not listed:
            print(f"{path}: no file map found")
            bad += 1
            continue
        for name in sorted(present - listed):
            print(f"{path}: {name} is not in the map")
            bad += 1
        for name in sorted(listed - present):
            print(f"{path}: the map names {name}, which does not exist")
            bad += 1
    print(f"check-file-maps: {len(HEADER_MAPS) + len(README_MAPS)} maps, {bad} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
