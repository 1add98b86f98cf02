#!/bin/bash
# Check the Spin model of remote resiliency's protocol (rsync.pml): safety
# properties P1..P6 (assertions) and invalid end states, by an exhaustive
# search of each scenario below.  Compiles and runs in a temporary
# directory, never in the source tree.  docs/design/model.md tells what the
# model covers, the bounds and the figures.
#
#   run_model.sh                       every scenario of the real model
#   run_model.sh --scenario NAME       one of them
#   run_model.sh --broken NAME --expect-violation
#                                      a deliberately broken variant: Spin
#                                      must find the violation (exit 0 only
#                                      then); without --expect-violation it
#                                      exits non-zero on the violation, as
#                                      for the real model
#   run_model.sh --list                the scenarios and broken variants
#   run_model.sh --trail ...           replay a counterexample step by step
#   run_model.sh --keep ...            keep the temporary directory
#
# Exits non-zero on any error Spin reports, on an incomplete search (depth
# or memory limit) and on a missing tool.
set -eu

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
MODEL="$HERE/rsync.pml"
SPIN="${SPIN:-spin}"
CC="${CC:-gcc}"
MEMLIM_MB="${MEMLIM_MB:-2048}" # per search: pan stops (and this fails) above it

# Scenarios: name, then the -D bounds and features (see rsync.pml's head).
# Each is searched exhaustively; together about 100 s of search and as much
# compiling on two cores.  Faults on every link at once with every feature
# on is beyond an exhaustive search (over 38 million states, over 10 GB).
SCENARIOS=(
	"base -DLINKS_FAULTY=0"
	"prepare_loss -DNPKT=2 -DMAXTX=3 -DLINKS_FAULTY=4"
	"vote_loss -DNPKT=2 -DMAXTX=3 -DLINKS_FAULTY=8"
	"echo_loss -DNPKT=2 -DMAXTX=3 -DLINKS_FAULTY=32"
	"nd_crash -DNPKT=2 -DMAXTX=3 -DLINKS_FAULTY=0 -DND -DPRI_CRASH -DPRI_RESTART"
	"restarts -DNPKT=2 -DMAXTX=3 -DLINKS_FAULTY=0 -DSBY_RESTART -DPRED_RESTART"
)

# Broken variants: name (rsync.pml's BROKEN_<name>), the property it
# breaks, and the scenario flags it is searched in.
BROKEN=(
	"RELEASE_ON_TIMEOUT P1 -DNPKT=2 -DLINKS_FAULTY=12"
	"NO_SUPPRESS P2 -DLINKS_FAULTY=0"
	"TRIM_ON_VOTE P3 -DNPKT=2 -DMAXTX=3 -DLINKS_FAULTY=4"
	"NO_ABORT P4 -DNPKT=2 -DMAXTX=3 -DLINKS_FAULTY=12"
	"ADMIT_TWICE P5 -DNPKT=2 -DLINKS_FAULTY=1"
	"ADMIT_BELOW_CUT P5 -DLINKS_FAULTY=0"
	"ND_NO_WAIT P6 -DLINKS_FAULTY=0 -DND"
)

usage() {
	sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
}

broken=""
only=""
expect=0
trail=0
keep=0
while [ $# -gt 0 ]; do
	case "$1" in
	--broken) [ $# -ge 2 ] || usage; broken="$2"; shift ;;
	--scenario) [ $# -ge 2 ] || usage; only="$2"; shift ;;
	--expect-violation) expect=1 ;;
	--trail) trail=1 ;;
	--keep) keep=1 ;;
	--list)
		echo "scenarios:"
		printf '  %s\n' "${SCENARIOS[@]}"
		echo "broken variants (name, property, flags):"
		printf '  %s\n' "${BROKEN[@]}"
		exit 0 ;;
	-h|--help) usage ;;
	*) echo "run_model.sh: unknown argument '$1'" >&2; usage ;;
	esac
	shift
done

for tool in "$SPIN" "$CC"; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "run_model.sh: $tool not found (Debian: apt-get install spin gcc)" >&2
		exit 1
	fi
done

WORK="$(mktemp -d "${TMPDIR:-/tmp}/rsync-model.XXXXXX")"
cleanup() {
	if [ "$keep" = 1 ]; then
		echo "kept: $WORK"
	else
		rm -rf "$WORK"
	fi
}
trap cleanup EXIT

# search NAME FLAGS...: compile and run one exhaustive search.  Prints its
# figures; returns 0 if clean, 1 on a violation, 2 if the search failed
# (incomplete, out of memory, did not build).
search() {
	local name="$1" dir="$WORK/$1" rc=0
	shift
	mkdir -p "$dir"
	cp "$MODEL" "$dir/rsync.pml"
	(cd "$dir" && "$SPIN" -a "$@" rsync.pml >spin.out 2>&1) || {
		cat "$dir/spin.out" >&2
		return 2
	}
	# SAFETY: assertions and invalid end states only (no cycles).
	# COLLAPSE: the state vector compressed; still exhaustive.
	(cd "$dir" && "$CC" -O2 -w -DSAFETY -DNOFAIR -DNOBOUNDCHECK -DCOLLAPSE \
		-DMEMLIM="$MEMLIM_MB" -DVECTORSZ=2048 -o pan pan.c) || return 2
	(cd "$dir" && ./pan -m20000 -w22 -c1 >pan.out 2>&1) || true
	local out="$dir/pan.out"
	local states depth errs mem secs
	states="$(awk '/states, stored/ { print $1; exit }' "$out")"
	depth="$(sed -n 's/.*depth reached \([0-9]*\).*/\1/p' "$out" | head -1)"
	errs="$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$out" | head -1)"
	mem="$(awk '/total actual memory usage/ { print $1; exit }' "$out")"
	secs="$(sed -n 's/^pan: elapsed time \([0-9.e+]*\).*/\1/p' "$out" | head -1)"
	printf '%-20s states %10s  depth %5s  memory %8s MB  time %6s s  errors %s\n' \
		"$name" "${states:-?}" "${depth:-?}" "${mem:-?}" "${secs:-?}" "${errs:-?}"
	if grep -q 'max search depth too small' "$out"; then
		echo "  incomplete: the depth bound (-m) was reached" >&2
		rc=2
	fi
	if grep -qE 'out of memory|memory limit' "$out"; then
		echo "  incomplete: out of memory (MEMLIM_MB=$MEMLIM_MB)" >&2
		rc=2
	fi
	if [ -z "$errs" ]; then
		sed 's/^/  pan: /' "$out" | tail -20 >&2
		return 2
	fi
	if [ "$errs" != 0 ]; then
		grep -m1 -E '^pan:[0-9]+:' "$out" | sed 's/^/  /'
		if [ -f "$dir/rsync.pml.trail" ]; then
			echo "  counterexample: $(wc -l <"$dir/rsync.pml.trail") steps"
			if [ "$trail" = 1 ]; then
				(cd "$dir" && "$SPIN" -t -p -g -l "$@" rsync.pml) | sed 's/^/  /'
			fi
		fi
		return 1
	fi
	return "$rc"
}

echo "$("$SPIN" -V | head -1); $("$CC" --version | head -1)"
if [ -n "$broken" ]; then
	entry=""
	for b in "${BROKEN[@]}"; do
		[ "${b%% *}" = "$broken" ] && entry="$b"
	done
	if [ -z "$entry" ]; then
		echo "run_model.sh: no broken variant '$broken' (--list)" >&2
		exit 2
	fi
	read -r _ prop flags <<<"$entry"
	echo "broken variant $broken: must violate $prop"
	rc=0
	# shellcheck disable=SC2086 # flags are words
	search "broken_$broken" -DBROKEN_"$broken" $flags || rc=$?
	if [ "$rc" = 1 ]; then
		if [ "$expect" = 1 ]; then
			echo "violation found, as expected"
			exit 0
		fi
		echo "FAIL: violation found"
		exit 1
	fi
	if [ "$rc" = 0 ] && [ "$expect" = 1 ]; then
		echo "FAIL: the broken variant $broken passed: the model does not catch it"
	fi
	[ "$rc" = 0 ] && [ "$expect" = 0 ] && exit 0
	exit 1
fi

failed=0
violated=0
ran=0
for s in "${SCENARIOS[@]}"; do
	name="${s%% *}"
	flags="${s#* }"
	[ -n "$only" ] && [ "$name" != "$only" ] && continue
	ran=$((ran + 1))
	rc=0
	# shellcheck disable=SC2086 # flags are words
	search "$name" $flags || rc=$?
	[ "$rc" = 1 ] && violated=1
	[ "$rc" = 2 ] && failed=1
done
if [ "$ran" = 0 ]; then
	echo "run_model.sh: no scenario '$only' (--list)" >&2
	exit 2
fi
if [ "$failed" != 0 ]; then
	echo "FAIL: a search did not complete"
	exit 1
fi
if [ "$violated" != 0 ]; then
	if [ "$expect" = 1 ]; then
		echo "violation found, as expected"
		exit 0
	fi
	echo "FAIL"
	exit 1
fi
if [ "$expect" = 1 ]; then
	echo "FAIL: no violation found"
	exit 1
fi
echo "no errors"
