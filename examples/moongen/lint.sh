#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 REINFORCE-NFV authors
#
# The MoonGen scripts' CI check (meson test moongen_lint, suite unit): MoonGen is not packaged
# and builds its own DPDK, so the scripts are never run here. What is checked instead:
#   1. every *.lua here parses as Lua 5.1 (luac5.1 -p: MoonGen's LuaJIT speaks Lua 5.1 plus
#      extensions the scripts do not use; a 5.3 luac would accept //, & and friends, which
#      LuaJIT rejects);
#   2. luacheck with .luacheckrc finds nothing: undefined or misspelt globals, unused variables
#      and arguments, shadowing, unreachable code, lines over 100 columns;
#   3. every task a script starts by name (mg.startTask("name", ...)) is a function the script
#      defines (function name(...)): MoonGen looks it up in the task's globals, and a misspelt
#      name fails only at run time.
#
# usage: lint.sh LUAC LUACHECK, run in this directory (.luacheckrc's per-file entries are
# matched against paths relative to it). An empty LUAC or LUACHECK (meson did not find the
# program) skips the test: exit 77.
set -u

luac=${1:-}
luacheck=${2:-}
if [ -z "$luac" ] || [ -z "$luacheck" ]; then
	echo "skipped: luac5.1 or luacheck not found (Debian packages lua5.1 and lua-check)"
	exit 77
fi

status=0
for f in *.lua; do
	if "$luac" -p "$f"; then
		echo "luac -p $f: ok"
	else
		status=1
	fi
done
"$luacheck" --config .luacheckrc --no-color --codes *.lua || status=1
for f in *.lua; do
	for task in $(sed -n 's/.*startTask("\([A-Za-z_][A-Za-z0-9_]*\)".*/\1/p' "$f" | sort -u); do
		if ! grep -q "^function $task(" "$f"; then
			echo "$f: mg.startTask(\"$task\") but no function $task in the script"
			status=1
		fi
	done
done
exit $status
