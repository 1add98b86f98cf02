/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 REINFORCE-NFV authors
 */

/*
 * store_scripts.c -- the server-side scripts of stateless resiliency
 * (onvm_store.h says what each takes and returns).  Redis runs a script
 * atomically: no other client's command runs in the middle of one, so a
 * version check and the writes it guards are one step.
 *
 * Lua 5.1 numbers are doubles, exact below 2^53: epochs and sequence
 * numbers are compared as numbers, and a field is always read back by the
 * string it was written under (tostring() prints 1e+14 for 10^14).
 */
#include "onvm_store.h"

/* A sorted set's member at exactly `epoch` ("<epoch>:<rest>"): <rest>. */
#define LUA_AT_EPOCH                                                                   \
	"local function at_epoch(k, e)\n"                                                \
	"  local v = redis.call('ZRANGEBYSCORE', k, e, e, 'LIMIT', 0, 1)[1]\n"            \
	"  if v then return string.sub(v, string.find(v, ':', 1, true) + 1) end\n"        \
	"  return nil\n"                                                                 \
	"end\n"

static const char fence_lua[] =
	LUA_AT_EPOCH
	"local run = KEYS[1]\n"
	"if redis.call('HGET', run, 'token') == ARGV[1] then\n"
	"  local r = redis.call('HMGET', run, 'gen', 'epoch', 'state', 'ts')\n"
	"  return {tonumber(r[1]), tonumber(r[2]), tonumber(r[3]), r[4] or '0'}\n"
	"end\n"
	"local want = tonumber(ARGV[2]) - 1\n"
	"local n = (#KEYS - 1) / 2\n"
	"local e, have, miss, base, maxgen = nil, 0, 0, 0, 0\n"
	"for i = 1, n do\n"
	"  local m = redis.call('HMGET', KEYS[2 * i], 'closed', 'base', 'gen')\n"
	"  if m[1] then have = have + 1 else miss = miss + 1 end\n"
	"  local v = tonumber(m[1]) or 0\n"
	"  if e == nil or v < e then e = v end\n"
	"  base = math.max(base, tonumber(m[2]) or 0)\n"
	"  maxgen = math.max(maxgen, tonumber(m[3]) or 0)\n"
	"end\n"
	/* No E given: below the lowest closed, the newest epoch every NF
	 * closed itself (each one's newest close at or below it, until they
	 * agree; an NF with no close recorded there does not lower it). */
	"if have == n and have > 0 and want < 0 then\n"
	"  local moved = true\n"
	"  while moved do\n"
	"    moved = false\n"
	"    for i = 1, n do\n"
	"      local r = redis.call('ZREVRANGEBYSCORE', KEYS[2 * i + 1], e, '-inf', 'WITHSCORES', 'LIMIT', 0, 1)\n"
	"      if r[2] and tonumber(r[2]) < e then e, moved = tonumber(r[2]), true end\n"
	"    end\n"
	"  end\n"
	"end\n"
	"local gen = redis.call('HINCRBY', run, 'gen', 1)\n"
	"if gen <= maxgen then\n"
	"  gen = maxgen + 1\n"
	"  redis.call('HSET', run, 'gen', gen)\n"
	"end\n"
	"local state = 1\n"
	"if have == 0 then\n"
	"  state, e = 0, 0\n"
	"  if want > 0 then state = 3 end\n"
	"elseif miss > 0 then state, e = 2, 0\n"
	"else\n"
	"  if want >= 0 then\n"
	"    if want <= e then e = want else state = 3 end\n"
	"  end\n"
	"  if e < base then state, e = 3, 0 end\n"
	"end\n"
	/* (a timestamp may be above 2^53: kept as the string it came as) */
	"local ts = '0'\n"
	"for i = 1, n do\n"
	"  local t = at_epoch(KEYS[2 * i + 1], e)\n"
	"  if t then ts = t break end\n"
	"end\n"
	"for i = 1, n do\n"
	"  redis.call('HSET', KEYS[2 * i], 'gen', gen, 'epoch', e, 'seq', 0, 'closed', e, 'base', 0)\n"
	"  redis.call('ZREMRANGEBYSCORE', KEYS[2 * i + 1], e, '+inf')\n"
	"  redis.call('ZADD', KEYS[2 * i + 1], e, e .. ':' .. ts)\n"
	"end\n"
	"redis.call('HSET', run, 'token', ARGV[1], 'epoch', e, 'state', state, 'ts', ts)\n"
	"return {gen, e, state, ts}\n";

static const char load_lua[] =
	"local m = redis.call('HMGET', KEYS[1], 'gen', 'layout')\n"
	"if tonumber(m[1]) ~= tonumber(ARGV[1]) then return {-1, tonumber(m[1]) or 0} end\n"
	"if m[2] and m[2] ~= ARGV[3] then return {-3} end\n"
	"redis.call('HSET', KEYS[1], 'layout', ARGV[3])\n"
	"local out = {1}\n"
	"for i = 2, #KEYS do\n"
	"  redis.call('ZREMRANGEBYSCORE', KEYS[i], '(' .. ARGV[2], '+inf')\n"
	"  local v = redis.call('ZREVRANGEBYSCORE', KEYS[i], ARGV[2], '-inf', 'LIMIT', 0, 1)[1]\n"
	"  if v then out[#out + 1] = string.sub(v, string.find(v, ':', 1, true) + 1)\n"
	"  else out[#out + 1] = false end\n"
	"end\n"
	"return out\n";

/* The version check, then the writes.  Within a generation an NF's
 * updates are numbered 1, 2, ... with no gap: a gap means the store lost
 * some it had acknowledged (restarted from an older snapshot), answered
 * "lost" like a missing record, and the NF re-seeds. */
#define WRITE_HEAD                                                                     \
	"local m = redis.call('HMGET', KEYS[1], 'gen', 'epoch', 'seq')\n"                \
	"local fl = tonumber(ARGV[4])\n"                                                 \
	"local seed = fl >= 2\n"                                                         \
	"local ue, us = tonumber(ARGV[2]), tonumber(ARGV[3])\n"                          \
	"if not m[1] then\n"                                                             \
	"  if not seed then return {-2} end\n"                                           \
	"  redis.call('HSET', KEYS[1], 'gen', ARGV[1], 'epoch', 0, 'seq', us - 1, 'base', ARGV[2])\n" \
	"  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', '(' .. ARGV[2])\n"              \
	"  m = {ARGV[1], '0', tostring(us - 1)}\n"                                        \
	"end\n"                                                                         \
	"local g, e, s = tonumber(m[1]), tonumber(m[2]), tonumber(m[3])\n"
#define WRITE_CHECK                                                                    \
	"if tonumber(ARGV[1]) ~= g then return {-1, g} end\n"                            \
	"if us <= s then return {0, e, s} end\n"                                         \
	"if us ~= s + 1 then\n"                                                          \
	"  if not seed then return {-2} end\n"                                           \
	"  redis.call('HSET', KEYS[1], 'base', ARGV[2])\n"                                \
	"  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', '(' .. ARGV[2])\n"              \
	"end\n"
#define WRITE_BODY                                                                     \
	"local floor = tonumber(ARGV[5])\n"                                              \
	"local function trim(k)\n"                                                       \
	"  if floor <= 0 then return end\n"                                              \
	"  local r = redis.call('ZREVRANGEBYSCORE', k, ARGV[5], '-inf', 'WITHSCORES', 'LIMIT', 0, 1)\n" \
	"  if r[2] then redis.call('ZREMRANGEBYSCORE', k, '-inf', '(' .. r[2]) end\n"      \
	"end\n"                                                                          \
	"local nk = #KEYS - 3\n"                                                         \
	"for i = 1, nk do\n"                                                             \
	"  local k = KEYS[i + 3]\n"                                                      \
	"  redis.call('ZREMRANGEBYSCORE', k, ARGV[2], ARGV[2])\n"                         \
	"  redis.call('ZADD', k, ARGV[2], ARGV[2] .. ':' .. ARGV[i + 6])\n"               \
	"  trim(k)\n"                                                                    \
	"end\n"                                                                          \
	"for i = nk + 7, #ARGV do redis.call('SADD', KEYS[2], ARGV[i]) end\n"            \
	"if fl % 2 == 1 then\n"                                                         \
	"  redis.call('HSET', KEYS[1], 'epoch', ue, 'seq', us, 'closed', ue)\n"           \
	"  redis.call('ZREMRANGEBYSCORE', KEYS[3], ARGV[2], ARGV[2])\n"                   \
	"  redis.call('ZADD', KEYS[3], ARGV[2], ARGV[2] .. ':' .. ARGV[6])\n"             \
	"  trim(KEYS[3])\n"                                                              \
	"else\n"                                                                         \
	"  redis.call('HSET', KEYS[1], 'epoch', ue, 'seq', us)\n"                         \
	"end\n"                                                                          \
	"return {1, ue, us}\n"

static const char write_lua[] = WRITE_HEAD WRITE_CHECK WRITE_BODY;
static const char write_unchecked_lua[] = WRITE_HEAD WRITE_BODY;

static const char *const texts[ONVM_STORE_NSCRIPTS] = {
	[ONVM_STORE_FENCE] = fence_lua,
	[ONVM_STORE_LOAD] = load_lua,
	[ONVM_STORE_WRITE] = write_lua,
};

static const char *const names[ONVM_STORE_NSCRIPTS] = {
	[ONVM_STORE_FENCE] = "fence",
	[ONVM_STORE_LOAD] = "load",
	[ONVM_STORE_WRITE] = "write",
};

const char *
onvm_store_script_text(enum onvm_store_script s)
{
	return (unsigned int)s < ONVM_STORE_NSCRIPTS ? texts[s] : NULL;
}

const char *
onvm_store_script_text_unchecked(enum onvm_store_script s)
{
	if (s == ONVM_STORE_WRITE)
		return write_unchecked_lua;
	return onvm_store_script_text(s);
}

const char *
onvm_store_script_name(enum onvm_store_script s)
{
	return (unsigned int)s < ONVM_STORE_NSCRIPTS ? names[s] : "?";
}
