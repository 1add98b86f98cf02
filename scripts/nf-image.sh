#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
#
# nf-image.sh -- build ONE local container image holding every NF binary of a
# build tree, with no registry and no base image (no Dockerfile, no pull).
#
#   scripts/nf-image.sh [-b BUILD_DIR] [-t IMAGE_TAG] [-r RUNTIME_CMD] [--extra PATH ...]
#
#   -b BUILD_DIR    meson build tree (default: build/ in the repository;
#                   a relative path is taken from the current directory)
#   -t IMAGE_TAG    default localhost/reinforce-nfv-nfs:latest
#   -r RUNTIME_CMD  podman (default) or another podman-compatible command
#   --extra PATH    one more executable (e.g. build/tests/test_nf), put at
#                   /nf/bin/<basename>; repeatable
#
# `ninja -C build nf-image` runs it on that build tree (meson run_target).
#
# The NFs are DPDK secondaries that run on the host's hugepages next to
# onvm_mgr, so the image is just the binaries and what the dynamic loader
# needs to start them, at the paths the host has them:
#   /nf/bin/<name>       every BUILD_DIR/nfs/<name>/<name>, then the extras
#   /lib..., /usr/lib... each library of their ldd closure, ld.so included,
#                        as a real file at the host's path (cp -L), plus
#                        libgcc_s.so.1: glibc dlopens it for pthread_cancel,
#                        which rte_eal_cleanup uses (without it the NF aborts
#                        at exit, "libgcc_s.so.1 must be installed ...")
#   /tmp (1777), /dev/hugepages, /var/run/dpdk, /etc/passwd, /etc/group
# Nothing else: no shell, no DPDK PMD directory (the NFs use no PMD and EAL
# skips a plugin directory that does not exist).
#
# The image is made by `RUNTIME import` of a tar of that tree and carries the
# label org.reinforce-nfv.content=<sha256 of the tree's file list, modes and
# contents>.  When IMAGE_TAG already has the same label nothing is done, so a
# second run on an unchanged build tree only says the image is up to date.
#
# Exit status: 0 built or up to date, 1 failure, 2 usage or environment error
# (no build tree, no NF binary, no container runtime).
set -euo pipefail

LABEL_KEY=org.reinforce-nfv.content
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

usage() {
	echo "usage: $0 [-b BUILD_DIR] [-t IMAGE_TAG] [-r RUNTIME_CMD] [--extra PATH ...]" >&2
	exit 2
}

die() {
	local code=$1
	shift
	echo "nf-image: $*" >&2
	exit "$code"
}

BUILD_DIR=$ROOT/build
IMAGE_TAG=localhost/reinforce-nfv-nfs:latest
RUNTIME=podman
EXTRAS=()
while [ $# -gt 0 ]; do
	case $1 in
	-b) [ $# -ge 2 ] || usage; BUILD_DIR=$2; shift 2 ;;
	-t) [ $# -ge 2 ] || usage; IMAGE_TAG=$2; shift 2 ;;
	-r) [ $# -ge 2 ] || usage; RUNTIME=$2; shift 2 ;;
	--extra) [ $# -ge 2 ] || usage; EXTRAS+=("$2"); shift 2 ;;
	-h|--help) usage ;;
	*) echo "nf-image: unknown argument: $1" >&2; usage ;;
	esac
done

command -v "$RUNTIME" >/dev/null 2>&1 ||
	die 2 "container runtime '$RUNTIME' not found: install podman (apt-get install podman) or pass -r RUNTIME_CMD"
command -v ldd >/dev/null 2>&1 || die 2 "ldd not found (libc-bin)"
[ -d "$BUILD_DIR" ] || die 2 "build directory '$BUILD_DIR' not found (configure it with: meson setup build)"
BUILD_DIR=$(cd "$BUILD_DIR" && pwd)

# The programs: NAMES in order (the NFs, then the extras), BIN_SRC[name] the
# file each is copied from.
declare -A BIN_SRC=()
NAMES=()
add_bin() {
	local name=$1 path=$2
	[ -z "${BIN_SRC[$name]+x}" ] || die 2 "two binaries named '$name': ${BIN_SRC[$name]} and $path"
	BIN_SRC[$name]=$path
	NAMES+=("$name")
}
if [ -d "$BUILD_DIR/nfs" ]; then
	for dir in "$BUILD_DIR"/nfs/*/; do
		name=$(basename "$dir")
		if [ -f "$dir$name" ] && [ -x "$dir$name" ]; then
			add_bin "$name" "$dir$name"
		fi
	done
fi
[ ${#NAMES[@]} -gt 0 ] || die 2 "no NF binary found as $BUILD_DIR/nfs/<name>/<name> (build first: ninja -C $BUILD_DIR)"
for path in "${EXTRAS[@]}"; do
	{ [ -f "$path" ] && [ -x "$path" ]; } || die 2 "--extra $path: not an executable file"
	add_bin "$(basename "$path")" "$(cd "$(dirname "$path")" && pwd)/$(basename "$path")"
done

TMP=$(mktemp -d "${TMPDIR:-/tmp}/nf-image.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
ROOTFS=$TMP/rootfs
umask 022   # the modes go into the content hash
mkdir -p "$ROOTFS/nf/bin" "$ROOTFS/dev/hugepages" "$ROOTFS/var/run/dpdk" "$ROOTFS/etc"
mkdir -m 1777 "$ROOTFS/tmp"
echo 'root:x:0:0:root:/:/sbin/nologin' >"$ROOTFS/etc/passwd"
echo 'root:x:0:' >"$ROOTFS/etc/group"

# Libraries a program needs, one absolute path a line, from ldd: the
# "soname => /path (addr)" and "/path/ld.so (addr)" lines; linux-vdso has no
# file.  A statically linked program needs none.
libs_of() {
	local out
	if ! out=$(LC_ALL=C ldd "$1" 2>&1); then
		case $out in
		*"not a dynamic executable"*|*"statically linked"*) return 0 ;;
		*) die 1 "ldd $1 failed: $out" ;;
		esac
	fi
	if grep -q '=> not found' <<<"$out"; then
		die 1 "$1: missing libraries: $(grep '=> not found' <<<"$out" | awk '{print $1}' | xargs)"
	fi
	awk '$2 == "=>" && $3 ~ /^\// { print $3; next }
	     $1 ~ /^\// { print $1 }' <<<"$out"
}

LIBS=$TMP/libs
: >"$LIBS"
for name in "${NAMES[@]}"; do
	cp -L --preserve=mode "${BIN_SRC[$name]}" "$ROOTFS/nf/bin/$name"
	libs_of "${BIN_SRC[$name]}" >>"$LIBS"
done

# libgcc_s.so.1 is dlopened, not NEEDED: take the one next to libc.so.6 (the
# same multiarch directory), else ask ldconfig.
libc=$(grep -m1 '/libc\.so\.6$' "$LIBS" || true)
[ -n "$libc" ] || die 1 "no libc.so.6 in the binaries' ldd closure"
gcc_s=$(dirname "$libc")/libgcc_s.so.1
if [ ! -e "$gcc_s" ]; then
	gcc_s=$( (PATH=$PATH:/sbin:/usr/sbin ldconfig -p 2>/dev/null || true) |
		awk '$1 == "libgcc_s.so.1" && /x86-64/ { print $NF; exit }')
fi
{ [ -n "$gcc_s" ] && [ -e "$gcc_s" ]; } || die 1 "libgcc_s.so.1 not found (install libgcc-s1)"
echo "$gcc_s" >>"$LIBS"
libs_of "$gcc_s" >>"$LIBS"

while read -r lib; do
	mkdir -p "$ROOTFS$(dirname "$lib")"
	cp -L --preserve=mode "$lib" "$ROOTFS$lib"
done < <(sort -u "$LIBS")
nlibs=$(sort -u "$LIBS" | wc -l)

# Content hash: every entry's type, mode and path, then every file's digest,
# all in C-locale order (no mtimes: an unchanged rebuild is the same image).
HASH=$(
	cd "$ROOTFS"
	{
		find . -printf '%y %m %p\n' | LC_ALL=C sort
		find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum
	} | sha256sum | cut -d' ' -f1
)

show_size() {
	local bytes
	bytes=$("$RUNTIME" image inspect --format '{{.Size}}' "$IMAGE_TAG")
	echo "nf-image: $IMAGE_TAG: ${#NAMES[@]} binaries (${NAMES[*]}), $nlibs libraries," \
		"$(numfmt --to=si --format=%.1f --suffix=B "$bytes" 2>/dev/null || echo "$bytes bytes")"
}

# The label is read from .Config.Labels: podman 4.3 has it there and at the
# top level (.Labels), docker only there.
if old_id=$("$RUNTIME" image inspect --format '{{.Id}}' "$IMAGE_TAG" 2>/dev/null); then
	old_hash=$("$RUNTIME" image inspect --format "{{index .Config.Labels \"$LABEL_KEY\"}}" "$IMAGE_TAG" || true)
	if [ "$old_hash" = "$HASH" ]; then
		echo "nf-image: $IMAGE_TAG is up to date ($LABEL_KEY=$HASH)"
		show_size
		exit 0
	fi
fi

echo "nf-image: importing $IMAGE_TAG ($LABEL_KEY=$HASH)"
tar -C "$ROOTFS" --numeric-owner --owner=0 --group=0 -c . |
	"$RUNTIME" import --change 'WORKDIR=/' --change "LABEL $LABEL_KEY=$HASH" - "$IMAGE_TAG" >/dev/null

got=$("$RUNTIME" image inspect --format "{{index .Config.Labels \"$LABEL_KEY\"}}" "$IMAGE_TAG")
[ "$got" = "$HASH" ] || die 1 "$IMAGE_TAG was imported but its label $LABEL_KEY is '$got', not $HASH"

# The previous image of this tag is now untagged: drop it unless something
# still uses it (no -f: a container or another tag keeps it).
new_id=$("$RUNTIME" image inspect --format '{{.Id}}' "$IMAGE_TAG")
if [ -n "$old_id" ] && [ "$old_id" != "$new_id" ]; then
	"$RUNTIME" image rm "$old_id" >/dev/null 2>&1 || true
fi
show_size
