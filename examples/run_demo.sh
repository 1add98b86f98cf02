#!/usr/bin/env bash
# Run the demo node: a trace read by net_pcap goes through
# bridge -> basic_monitor -> simple_forward and is written to a pcap file,
# with console stats.  Usage: examples/run_demo.sh [BUILD_DIR] [SECONDS]
# Env: DEMO_TRACE (default: traces/webex.pcap), DEMO_OUT (default /tmp/onvm-demo),
# DEMO_CONTAINERS=1: every NF in a podman container (demo/node-containers.json;
# the image is built first with scripts/nf-image.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
build=${1:-build}
[[ $build = /* ]] || build="$repo/$build"
secs=${2:-4}
export DEMO_TRACE=${DEMO_TRACE:-$repo/traces/webex.pcap}
export DEMO_OUT=${DEMO_OUT:-/tmp/onvm-demo}
[ -r "$DEMO_TRACE" ] || { echo "demo: trace $DEMO_TRACE not found (set DEMO_TRACE)" >&2; exit 1; }
mkdir -p "$DEMO_OUT"
rm -f "$DEMO_OUT/out.pcap" "$DEMO_OUT/flows.json"

config="$here/demo/node.json"
if [ "${DEMO_CONTAINERS:-0}" = 1 ]; then
	"$repo/scripts/nf-image.sh" -b "$build"
	config="$here/demo/node-containers.json"
fi
"$build/onvm_mgr/onvm_mgr" --config "$config" &
mgr=$!
trap 'kill -INT $mgr 2>/dev/null || true; wait $mgr 2>/dev/null || true' EXIT
sleep "$secs"
kill -INT "$mgr"
status=0
wait "$mgr" || status=$?
trap - EXIT
[ "$status" -eq 0 ] || { echo "demo: onvm_mgr exited with $status" >&2; exit "$status"; }

in=$(tshark -r "$DEMO_TRACE" 2>/dev/null | wc -l)
out=$(tshark -r "$DEMO_OUT/out.pcap" 2>/dev/null | wc -l)
flows=$(/usr/bin/python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["flows"]))' "$DEMO_OUT/flows.json")
echo
echo "demo: $in packets in ($DEMO_TRACE), $out packets out ($DEMO_OUT/out.pcap)"
echo "demo: basic_monitor saw $flows flows; per-flow counters in $DEMO_OUT/flows.json"
[ "$in" -eq "$out" ] || { echo "demo: packet count mismatch" >&2; exit 1; }
