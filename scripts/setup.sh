#!/usr/bin/env bash
# REINFORCE-NFV set-up: install dependencies, reserve hugepages, build, then
# run the demo or the test suite.
#
#   scripts/setup.sh demo [--sanitize]
#   scripts/setup.sh test [--sanitize]
#
# Meant for root on a fresh (even minimal/minbase) Debian 12. Idempotent: a
# second run installs nothing, re-reserves nothing and only rebuilds what
# changed. --sanitize builds with -Db_sanitize=address,undefined into
# build-asan instead of build.
#
# In `test` mode the last line printed is "N passed, N failed" (", N skipped"
# is appended when some were skipped); the exit status is non-zero if any test
# failed or if no test ran.
set -euo pipefail

PY=/usr/bin/python3   # Debian's python: another python3 on PATH may not see Debian packages

usage() {
	echo "usage: $0 {demo|test} [--sanitize]" >&2
	exit 2
}

MODE=""
SANITIZE=0
for arg in "$@"; do
	case "$arg" in
	demo | test)
		[ -z "$MODE" ] || usage
		MODE="$arg"
		;;
	--sanitize) SANITIZE=1 ;;
	-h | --help) usage ;;
	*)
		echo "setup.sh: unknown argument: $arg" >&2
		usage
		;;
	esac
done
[ -n "$MODE" ] || usage

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO_ROOT"

if [ "$SANITIZE" -eq 1 ]; then
	BUILD_DIR=build-asan
	MESON_OPTS=('-Db_sanitize=address,undefined')
else
	BUILD_DIR=build
	MESON_OPTS=()
fi

# Privileged commands: run directly as root, through sudo otherwise.
if [ "$(id -u)" -eq 0 ]; then
	SUDO=()
elif command -v sudo >/dev/null 2>&1; then
	SUDO=(sudo)
else
	echo "setup.sh: must be run as root (or with sudo available)" >&2
	exit 1
fi

T0=$SECONDS
step() { echo "==> [$((SECONDS - T0))s] $*"; }

# ---------------------------------------------------------------------------
# a. Debian packages
# ---------------------------------------------------------------------------
PACKAGES=(
	build-essential pkg-config meson ninja-build
	libdpdk-dev dpdk dpdk-dev
	libjansson-dev libpcap-dev libbsd-dev libcmocka-dev
	python3 python3-scapy python3-matplotlib
	tshark iproute2 procps
)

step "checking Debian packages"
MISSING=()
for p in "${PACKAGES[@]}"; do
	status="$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)"
	if [ "$status" != "installed" ]; then
		MISSING+=("$p")
	fi
done

if [ "${#MISSING[@]}" -gt 0 ]; then
	step "installing: ${MISSING[*]}"
	export DEBIAN_FRONTEND=noninteractive
	APT_OPTS=(-y -q -o DPkg::Lock::Timeout=600 -o Acquire::Retries=3
		-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold)
	# tshark asks whether non-root users may capture; answer it up front.
	echo 'wireshark-common wireshark-common/install-setuid boolean false' |
		"${SUDO[@]}" debconf-set-selections
	# Finish any install an earlier, interrupted run left half done.
	"${SUDO[@]}" dpkg --configure -a
	"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -q -o Acquire::Retries=3 update
	# Recommends are wanted: dpdk recommends its run-time PMD/mempool drivers.
	"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install "${APT_OPTS[@]}" "${MISSING[@]}"
else
	step "all ${#PACKAGES[@]} packages already installed"
fi

# ---------------------------------------------------------------------------
# b. 2 MB hugepages
# ---------------------------------------------------------------------------
HP_WANT=1024
HP_SYS=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
HP_MNT=/dev/hugepages

step "hugepages"
if [ ! -e "$HP_SYS" ]; then
	echo "setup.sh: $HP_SYS does not exist: this kernel has no 2 MB hugepage support (or /sys is not mounted)" >&2
	exit 1
fi
hp_now="$(cat "$HP_SYS")"
if [ "$hp_now" -lt "$HP_WANT" ]; then
	echo "reserving $HP_WANT x 2 MB hugepages (currently $hp_now)"
	echo "$HP_WANT" | "${SUDO[@]}" tee "$HP_SYS" >/dev/null 2>&1 || true
	hp_now="$(cat "$HP_SYS")"
	if [ "$hp_now" -lt "$HP_WANT" ]; then
		# Memory may be too fragmented: compact and try once more.
		echo 1 | "${SUDO[@]}" tee /proc/sys/vm/compact_memory >/dev/null 2>&1 || true
		echo "$HP_WANT" | "${SUDO[@]}" tee "$HP_SYS" >/dev/null 2>&1 || true
		hp_now="$(cat "$HP_SYS")"
	fi
	if [ "$hp_now" -lt "$HP_WANT" ]; then
		echo "setup.sh: ERROR: could not reserve $HP_WANT 2 MB hugepages: only $hp_now reserved." >&2
		echo "  Writing $HP_SYS failed or the kernel lacks contiguous free memory." >&2
		echo "  Free memory or raise it by hand: echo $HP_WANT > $HP_SYS" >&2
		exit 1
	fi
fi
if ! grep -qs "^[^ ]* $HP_MNT hugetlbfs " /proc/mounts; then
	echo "mounting hugetlbfs on $HP_MNT"
	"${SUDO[@]}" mkdir -p "$HP_MNT"
	"${SUDO[@]}" mount -t hugetlbfs nodev "$HP_MNT"
fi
echo "hugepages: $hp_now x 2 MB reserved, $(awk '/HugePages_Free/ {print $2}' /proc/meminfo) free, hugetlbfs on $HP_MNT"

# ---------------------------------------------------------------------------
# c. configure and build
# ---------------------------------------------------------------------------
# A build dir configured from another source tree (e.g. a copied repo) is stale.
if [ -f "$BUILD_DIR/meson-info/meson-info.json" ]; then
	configured_src="$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["directories"]["source"])' \
		"$BUILD_DIR/meson-info/meson-info.json" 2>/dev/null || true)"
	if [ -n "$configured_src" ] && [ "$configured_src" != "$REPO_ROOT" ]; then
		echo "$BUILD_DIR was configured for $configured_src, not $REPO_ROOT: wiping it"
		rm -rf "$BUILD_DIR"
	fi
fi

if [ -f "$BUILD_DIR/build.ninja" ] && [ -f "$BUILD_DIR/meson-private/coredata.dat" ]; then
	step "meson: $BUILD_DIR already configured (ninja re-runs meson if meson.build changed)"
else
	if [ -e "$BUILD_DIR" ]; then
		echo "$BUILD_DIR exists but is not a configured meson build dir (an earlier configure failed?): removing it"
		rm -rf "$BUILD_DIR"
	fi
	step "meson setup $BUILD_DIR ${MESON_OPTS[*]}"
	meson setup "$BUILD_DIR" "${MESON_OPTS[@]}"
fi

step "ninja -C $BUILD_DIR"
ninja -C "$BUILD_DIR"

# ---------------------------------------------------------------------------
# d. demo / test
# ---------------------------------------------------------------------------
if [ "$MODE" = demo ]; then
	if [ ! -f examples/run_demo.sh ]; then
		echo "setup.sh: examples/run_demo.sh not found" >&2
		exit 1
	fi
	step "examples/run_demo.sh $BUILD_DIR"
	bash examples/run_demo.sh "$BUILD_DIR"
	step "demo done"
	exit 0
fi

TESTLOG="$BUILD_DIR/meson-logs/testlog.json"
rm -f "$TESTLOG"
step "meson test -C $BUILD_DIR"
test_rc=0
meson test -C "$BUILD_DIR" --print-errorlogs --num-processes 1 --timeout-multiplier 3 || test_rc=$?
step "meson test exited with $test_rc"

# Prints the summary line and exits 1 on failures or when nothing ran.
"$PY" - "$TESTLOG" "$test_rc" <<'EOF'
import json, os, sys

path, test_rc = sys.argv[1], int(sys.argv[2])
passed = failed = skipped = 0
if os.path.exists(path):
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                result = json.loads(line).get("result")
            except ValueError:
                failed += 1
                continue
            if result in ("OK", "EXPECTEDFAIL"):
                passed += 1
            elif result == "SKIP":
                skipped += 1
            else:
                failed += 1
else:
    print("setup.sh: %s not found: no test ran" % path, file=sys.stderr)

summary = "%d passed, %d failed" % (passed, failed)
if skipped:
    summary += ", %d skipped" % skipped
bad = failed > 0
if passed + failed == 0:
    print("setup.sh: no test ran", file=sys.stderr)
    bad = True
elif test_rc != 0 and not failed:
    print("setup.sh: meson test exited with %d although no test failed" % test_rc, file=sys.stderr)
    bad = True
sys.stderr.flush()
print(summary)
sys.stdout.flush()
sys.exit(1 if bad else 0)
EOF
