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
#
# The budget comes from the -max_total_time in meson.build unless the
# environment sets one: FUZZ_SECONDS_<fuzzer name> (e.g. FUZZ_SECONDS_fuzz_bfd)
# for one target, else FUZZ_SECONDS for all of them.  It is passed last, and
# libFuzzer's last flag wins.  0 means no fuzzing: the seeds are run once
# (-runs=0), as a regression check.
set -eu

fuzzer=$1
seeds=$2
shift 2

work=$(mktemp -d "${TMPDIR:-/tmp}/onvm-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

artifacts=${FUZZ_ARTIFACTS:-$PWD}
mkdir -p "$artifacts"
name=$(basename "$fuzzer")

budget=$(printenv "FUZZ_SECONDS_$name" || printenv FUZZ_SECONDS || true)
case "$budget" in
"") ;;
*[!0-9]*)
	echo "run_smoke: FUZZ_SECONDS(_$name)='$budget' is not a number of seconds" >&2
	exit 1
	;;
*)
	# (libFuzzer reads -max_total_time=0 as "no limit")
	if [ "$budget" -eq 0 ]; then
		set -- "$@" -runs=0
	else
		set -- "$@" -max_total_time="$budget"
	fi
	;;
esac

status=0
"$fuzzer" -artifact_prefix="$artifacts/$name-" "$@" "$work" "$seeds" || status=$?
echo "run_smoke: $name exit status $status; $(ls "$work" | wc -l) new corpus inputs (discarded)"
# libFuzzer reports a crash with exit status 77 (-error_exitcode), which meson
# would count as SKIP: turn every failure into 1.
[ "$status" -eq 0 ] || exit 1
