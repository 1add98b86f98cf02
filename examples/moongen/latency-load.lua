-- SPDX-License-Identifier: BSD-3-Clause
-- Copyright(c) 2026 REINFORCE-NFV authors

--- latency-load.lua -- a REINFORCE-NFV node's latency under load, with NIC hardware timestamps.
---
--- What it measures: for each load in --rates (Mbit/s of frames with CRC, MoonGen's rate unit)
--- or in --loads (percent of the node's maximum, --max-mpps, as bench/latency.py gives them), a
--- load task sends UDP packets of --size bytes through the node at that rate. Next to it, a
--- timestamping task sends about 1000 PTP-over-UDP probes a second through the same chain. The
--- sending NIC stamps each probe as it leaves and the receiving NIC as it comes back (both clocks
--- synchronised by MoonGen), as MoonGen's examples/l2-load-latency.lua and l3-load-latency.lua do.
--- The difference is the probe's wire-to-wire latency through the node: its NIC and RX queue, the
--- manager's RX unit, the chain's NFs and their rings, the TX unit and the NIC's TX queue. A rate
--- of 0 sends the probes alone (the idle node's latency).
---
--- Testbed (examples/moongen/README.md): MoonGen port txDev is cabled to the node's port A (the
--- chain's ingress_port), and the node's port B (the exit_port) to MoonGen port rxDev. Both MoonGen
--- ports must be of one NIC model with PTP timestamping: MoonGen synchronises their clocks
--- (Intel 82599/X540, X710/XL710 and igb NICs do this; see MoonGen's doc/timestamping.md). The
--- probes use UDP port 319 (PTP), so the node must forward it, as a default chain does.
---
--- Packets: load and probes are UDP over IPv4 from SRC_IP to DST_IP. The source ports run over
--- --flows values, so that the node's 5-tuple hash spreads load and probes over a service's
--- instances alike. Probes are at least 84 B without CRC (MoonGen's minimum for UDP timestamping),
--- so with small load packets they are larger than the load.
---
--- Output, per load: the histogram of probe latencies, "<hist>-<rate>.csv" (ns,count: MoonGen's
--- histogram format), and a line on stdout and a row of --out (CSV):
---   rate_mbit,load_pct,load_tx_mpps,load_rx_mpps,probes,probes_lost,min_us,p50_us,p99_us,
---   p999_us,max_us,avg_us,histogram
--- A lost probe did not come back within 15 ms, or came back without a timestamp.
---
--- Counterpart in bench/: bench/latency.py. It stamps packets with the TSC where the node's
--- software sees them (RX unit to TX unit), on one machine with virtual devices. This script
--- measures wire to wire, so its figures include both NICs, PCIe and the RX/TX descriptor rings.
--- Compare the growth of p50/p99 with load and the tail's shape, not the absolute microseconds.
--- README.md says more.
---
--- Usage: MoonGen examples/moongen/latency-load.lua [options] txDev rxDev
---   e.g. MoonGen examples/moongen/latency-load.lua 0 1 --rates 0,1000,5000,7000 --time 30
---        MoonGen examples/moongen/latency-load.lua 0 1 --max-mpps 9.1 --loads 10,50,90

local mg        = require "moongen"
local device    = require "device"
local ts        = require "timestamping"
local histogram = require "histogram"
local stats     = require "stats"
local timer     = require "timer"
local log       = require "log"
local flowsLib  = require "onvm_flows" -- this directory's shared frames and load loop

local SRC_PORT_BASE = flowsLib.SRC_PORT_BASE
local LOAD_DST_PORT = 5001
local PTP_PORT      = 319 -- the probes' destination port, where the NICs look for PTP

local CRC            = flowsLib.CRC
local PROBE_MIN      = 84    -- bytes without CRC, as in MoonGen's l3-load-latency.lua
local PROBE_INTERVAL = 0.001 -- seconds between probes: about 1000 probes a second

function configure(parser)
	parser:description("Latency of a REINFORCE-NFV node under load (UDP, hardware timestamps).")
	parser:argument("txDev", "MoonGen port cabled to the node's ingress port."):convert(tonumber)
	parser:argument("rxDev", "MoonGen port cabled to the node's exit port."):convert(tonumber)
	parser:option("-r --rates", "Loads in Mbit/s (frames with CRC), comma-separated; 0: no load.")
	parser:option("-l --loads", "Loads in percent of --max-mpps, comma-separated (instead of "
		.. "--rates), as bench/latency.py's --loads.")
	parser:option("--max-mpps", "The node's maximum at --size, e.g. rx_mpps from "
		.. "tput-pkt-size.lua."):convert(tonumber)
	parser:option("-s --size", "Frame size of the load in bytes, with CRC."):default(64)
		:convert(tonumber)
	parser:option("-t --time", "Measuring time per load, seconds."):default(30):convert(tonumber)
	parser:option("-w --warmup", "Load before the probes start, seconds."):default(2)
		:convert(tonumber)
	parser:option("-f --flows", "Number of UDP flows (source ports)."):default(64):convert(tonumber)
	parser:option("-m --mac", "Destination MAC of the packets."):default("02:00:00:00:00:0a")
	parser:option("-o --out", "CSV file for the summary."):default("latency-load.csv")
	parser:option("--hist", "Prefix of the histogram files."):default("latency-hist")
end

local function parseList(str, name)
	local list = {}
	for item in str:gmatch("[^,]+") do
		local v = tonumber(item)
		if not v or v < 0 then
			log:fatal("bad value '%s' in %s: a number, 0 or more", item, name)
		end
		list[#list + 1] = v
	end
	if #list == 0 then
		log:fatal("%s names no value", name)
	end
	return list
end

-- The loads as MoonGen's queue rates (Mbit/s of frames with CRC), each with its percent of
-- --max-mpps if given that way.
local function parseRates(args)
	if args.loads and args.rates then
		log:fatal("give --rates or --loads, not both")
	end
	local rates, pcts = {}, {}
	if args.loads then
		if not args.max_mpps or args.max_mpps <= 0 then
			log:fatal("--loads needs --max-mpps")
		end
		for i, pct in ipairs(parseList(args.loads, "--loads")) do
			pcts[i] = pct
			rates[i] = pct / 100 * args.max_mpps * args.size * 8
		end
	else
		rates = parseList(args.rates or "0,1000,5000", "--rates")
	end
	return rates, pcts
end


-- The load: frames of `size` bytes (with CRC) at the queue's rate until the TSC time `stopAt`.
function loadTask(queue, size, flows, dstMac, stopAt)
	flowsLib.sendFlows(queue, size, flows, dstMac, LOAD_DST_PORT, stopAt)
end

-- The probes: one at a time, each timestamped by both NICs, from `startAt` to `stopAt`.
-- Returns the histogram's figures (ns) and the probes lost.
function timerTask(txQueue, rxQueue, size, flows, dstMac, startAt, stopAt, histFile)
	local timestamper = ts:newUdpTimestamper(txQueue, rxQueue)
	local hist = histogram:new()
	local rateLimit = timer:new(PROBE_INTERVAL)
	local flow, lost = 0, 0
	while mg.running() and mg.getTime() < startAt do
		mg.sleepMillisIdle(1)
	end
	while mg.running() and mg.getTime() < stopAt do
		local lat = timestamper:measureLatency(size, function(buf)
			flowsLib.fillUdp(buf, txQueue, dstMac, size, SRC_PORT_BASE + flow, PTP_PORT)
		end)
		if lat then
			hist:update(lat)
		else
			lost = lost + 1
		end
		flow = flow + 1
		if flow == flows then
			flow = 0
		end
		rateLimit:wait()
		rateLimit:reset()
	end
	local samples = hist:totals()
	if samples == 0 then
		return {samples = 0, lost = lost}
	end
	hist:print()
	hist:save(histFile)
	return {
		samples = samples,
		lost = lost,
		min = hist:min(),
		p50 = hist:percentile(50),
		p99 = hist:percentile(99),
		p999 = hist:percentile(99.9),
		max = hist:max(),
		avg = hist:average(),
	}
end

local function waitUntil(t, txCtr, rxCtr)
	while mg.running() and mg.getTime() < t do
		txCtr:update()
		rxCtr:update()
		mg.sleepMillisIdle(10)
	end
end

local function measureLoad(args, txDev, rxDev, rate, probeSize)
	local loadQueue = txDev:getTxQueue(0)
	local histFile = ("%s-%.0f.csv"):format(args.hist, rate)
	-- Counters first (an RX counter clears the NIC's RX totals); read from this task only.
	local txCtr = stats:newDevTxCounter("load tx", txDev, "plain")
	local rxCtr = stats:newDevRxCounter("load rx", rxDev, "plain")
	local start = mg.getTime()
	local probeStart = start + args.warmup
	local stop = probeStart + args.time
	local loader
	if rate > 0 then
		-- The probes' share of the rate comes off the load's, as l3-load-latency.lua does it.
		local probeMbit = (probeSize + CRC) * 8 / PROBE_INTERVAL / 1e6
		loadQueue:setRate(math.max(rate - probeMbit, 1))
		loader = mg.startTask("loadTask", loadQueue, args.size, args.flows, args.mac, stop)
	end
	local probeTask = mg.startTask("timerTask", txDev:getTxQueue(1), rxDev:getRxQueue(1),
		probeSize, args.flows, args.mac, probeStart, stop, histFile)
	waitUntil(probeStart, txCtr, rxCtr)
	local txA, rxA = txDev:getTxStats(), rxDev:getRxStats()
	local tA = mg.getTime()
	waitUntil(stop, txCtr, rxCtr)
	local txB, rxB = txDev:getTxStats(), rxDev:getRxStats()
	local window = mg.getTime() - tA
	if loader then
		loader:wait()
	end
	local r = probeTask:wait() or {samples = 0, lost = 0}
	txCtr:finalize()
	rxCtr:finalize()
	r.rate = rate
	r.txMpps = (txB - txA) / window / 1e6
	r.rxMpps = (rxB - rxA) / window / 1e6
	r.histFile = r.samples > 0 and histFile or ""
	return r
end

local function us(ns)
	return ns and ns / 1000 or 0 / 0
end

function master(args)
	if args.size < 64 or args.size > 1518 then
		log:fatal("--size must be 64..1518 (bytes with CRC)")
	end
	local rates, pcts = parseRates(args)
	if args.flows < 1 or args.flows > 65535 - SRC_PORT_BASE then
		log:fatal("--flows must be 1..%d", 65535 - SRC_PORT_BASE)
	end
	local probeSize = math.max(args.size - CRC, PROBE_MIN)
	if probeSize > args.size - CRC then
		log:warn("probes are %d B without CRC, the load %d B: MoonGen's UDP timestamping needs %d",
			probeSize, args.size - CRC, PROBE_MIN)
	end
	-- Queue 0 carries the load, queue 1 the probes; on the RX side the timestamper filters the
	-- probes to queue 1, and nothing reads queue 0 (the NIC drops and counts what arrives there).
	local txDev = device.config{port = args.txDev, rxQueues = 2, txQueues = 2}
	local rxDev = device.config{port = args.rxDev, rxQueues = 2, txQueues = 2}
	device.waitForLinks()
	local out = io.open(args.out, "w")
	if not out then
		log:fatal("cannot write %s", args.out)
	end
	out:write("rate_mbit,load_pct,load_tx_mpps,load_rx_mpps,probes,probes_lost,min_us,p50_us,"
		.. "p99_us,p999_us,max_us,avg_us,histogram\n")
	local results = {}
	for i, rate in ipairs(rates) do
		if not mg.running() then
			break
		end
		log:info("load %.1f Mbit/s: %g s warm-up, then %g s of probes", rate, args.warmup,
			args.time)
		local r = measureLoad(args, txDev, rxDev, rate, probeSize)
		results[#results + 1] = r
		out:write(("%.1f,%s,%.4f,%.4f,%d,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%s\n"):format(
			r.rate, pcts[i] or "", r.txMpps, r.rxMpps, r.samples, r.lost, us(r.min), us(r.p50),
			us(r.p99), us(r.p999), us(r.max), us(r.avg), r.histFile))
		out:flush()
	end
	out:close()
	print()
	print("load_Mbit/s  tx_Mpps  rx_Mpps  probes  lost    p50_us    p99_us  p99.9_us    max_us")
	for _, r in ipairs(results) do
		print(("%11.1f  %7.3f  %7.3f  %6d  %4d  %8.2f  %8.2f  %8.2f  %8.2f"):format(
			r.rate, r.txMpps, r.rxMpps, r.samples, r.lost, us(r.p50), us(r.p99), us(r.p999),
			us(r.max)))
	end
	log:info("summary in %s", args.out)
end
