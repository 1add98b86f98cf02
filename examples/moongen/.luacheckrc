-- luacheck configuration for the MoonGen scripts in this directory (examples/moongen/meson.build
-- runs `luacheck --config examples/moongen/.luacheckrc` on them).
--
-- MoonGen runs scripts under LuaJIT (Lua 5.1 plus the `bit`, `ffi` and `jit` modules). It calls
-- a script's configure(parser) and master(args) by name, and each task function by the name
-- given to mg.startTask(): these are globals the script defines on purpose, declared per file
-- below. Everything else (unused variables, shadowing, undefined globals, ...) stays a warning.
std = "luajit"
max_line_length = 100

-- Globals libmoon's utils.lua defines for every script; none is used yet, listed so a script
-- may call them as MoonGen's own examples do.
read_globals = {"printf", "errorf", "parseIPAddress", "parseMacAddress", "incAndWrap"}

files["**/tput-pkt-size.lua"] = {globals = {"configure", "master", "loadTask"}}
files["**/latency-load.lua"] = {globals = {"configure", "master", "loadTask", "timerTask"}}
files["**/failover-gap.lua"] = {globals = {"configure", "master", "txTask", "rxTask"}}
