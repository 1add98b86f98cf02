#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
#
# run_smoke.sh FUZZER SEED_DIR [LIBFUZZER_FLAGS...]
#
# A short libFuzzer run for `meson test --suite fuzz`.  libFuzzer writes the
# inputs it finds into the FIRST corpus directory it is given, so that is a
# fresh temporary directory; the committed seed directory comes second and is
# only read.  Crash/leak/timeout inputs go to $FUZZ_ARTIFACTS (default: the
# current directory, which meson sets to the build directory), never into the
# source tree.  The temporary corpus is removed afterwards.
set -eu

fuzzer=$1
seeds=$2
shift 2

work=$(mktemp -d "${TMPDIR:-/tmp}/onvm-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

artifacts=${FUZZ_ARTIFACTS:-$PWD}
mkdir -p "$artifacts"
name=$(basename "$fuzzer")

status=0
"$fuzzer" -artifact_prefix="$artifacts/$name-" "$@" "$work" "$seeds" || status=$?
echo "run_smoke: $name exit status $status; $(ls "$work" | wc -l) new corpus inputs (discarded)"
# libFuzzer reports a crash with exit status 77 (-error_exitcode), which meson
# would count as SKIP: turn every failure into 1.
[ "$status" -eq 0 ] || exit 1
