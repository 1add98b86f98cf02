-- SPDX-License-Identifier: BSD-3-Clause
-- Copyright(c) 2026 REINFORCE-NFV authors

--- tput-pkt-size.lua -- a REINFORCE-NFV node's throughput by packet size, on the wire.
---
--- What it measures: for each frame size in --sizes (Ethernet frames with CRC, as RFC 2544
--- counts them: 64, 128, 256, 512, 1024 and 1518 B by default), MoonGen sends UDP packets into
--- the node's ingress port at --rate Mbit/s (0: as fast as the link takes them). It sends them for
--- --warmup seconds and then for a window of --time seconds. The NICs' own counters give what left
--- one MoonGen port and what came back on the other. The node's throughput at that size is the
--- received rate over the window. Loss is sent minus received over the whole run, warm-up and a
--- short drain included.
---
--- Testbed (examples/moongen/README.md): MoonGen port txDev is cabled to the node's port A (the
--- chain's ingress_port), and the node's port B (the chain's exit_port) to MoonGen port rxDev. The
--- node's ports run promiscuous, so the destination MAC needs no particular value (--mac sets it).
---
--- Packets: UDP over IPv4 from SRC_IP to DST_IP. The source port runs over --flows values
--- (SRC_PORT_BASE + i, round robin), so that the node's direction-independent 5-tuple hash
--- spreads the flows over a service's instances. UDP checksums are offloaded to the NIC.
---
--- Output: for each size, a line on stdout and a row of --out (CSV):
---   size_B,window_s,tx_mpps,rx_mpps,rx_gbps,rx_gbps_wire,line_mpps,rx_pct_line,
---   tx_pkts,rx_pkts,loss_pkts,loss_pct
--- rx_gbps counts frame bytes with CRC. rx_gbps_wire adds the 20 B of preamble, SFD and
--- inter-frame gap each frame takes on the wire. line_mpps is what the link carries at this size.
---
--- Counterparts in bench/: bench/pkt_sizes.py (the same sweep, one machine, virtual devices)
--- and bench/chain_tput.py (64 B packets). Compare Mpps per size, and the shape of the curve
--- (where it turns from packet-bound to link-bound), not the absolute numbers. README.md says
--- why. Sizes differ by the CRC: a 64 B frame here is a 60 B mbuf in the node, and bench/'s
--- 64 B net_null packets are 64 B mbufs (68 B frames).
---
--- Usage: MoonGen examples/moongen/tput-pkt-size.lua [options] txDev rxDev
---   e.g. MoonGen examples/moongen/tput-pkt-size.lua 0 1 --sizes 64,512,1518 --time 10

local mg     = require "moongen"
local device = require "device"
local stats  = require "stats"
local log    = require "log"
local flowsLib = require "onvm_flows" -- this directory's shared frames and load loop

-- Addresses: the node forwards whatever its chain's ingress port receives, so these only need
-- to match the node's flow_rules, if it has any.
local SRC_PORT_BASE = flowsLib.SRC_PORT_BASE
local DST_PORT      = 5001

local DEFAULT_SIZES = "64,128,256,512,1024,1518"

local WIRE = flowsLib.WIRE

function configure(parser)
	parser:description("Throughput of a REINFORCE-NFV node by packet size (UDP, hardware counters).")
	parser:argument("txDev", "MoonGen port cabled to the node's ingress port."):convert(tonumber)
	parser:argument("rxDev", "MoonGen port cabled to the node's exit port."):convert(tonumber)
	parser:option("-s --sizes", "Frame sizes in bytes, with CRC, comma-separated.")
		:default(DEFAULT_SIZES)
	parser:option("-r --rate", "Transmit rate in Mbit/s (frames with CRC); 0: as fast as possible.")
		:default(0):convert(tonumber)
	parser:option("-t --time", "Measuring window per size, seconds."):default(10):convert(tonumber)
	parser:option("-w --warmup", "Warm-up per size before the window, seconds.")
		:default(2):convert(tonumber)
	parser:option("-f --flows", "Number of UDP flows (source ports)."):default(64):convert(tonumber)
	parser:option("-m --mac", "Destination MAC of the packets."):default("02:00:00:00:00:0a")
	parser:option("-o --out", "CSV file for the results."):default("tput-pkt-size.csv")
end

local function parseSizes(str)
	local sizes = {}
	for item in str:gmatch("[^,]+") do
		local size = tonumber(item)
		if not size or size < 64 or size > 1518 or size % 1 ~= 0 then
			log:fatal("bad frame size '%s': an integer 64..1518 (bytes with CRC)", item)
		end
		sizes[#sizes + 1] = size
	end
	if #sizes == 0 then
		log:fatal("--sizes names no size")
	end
	return sizes
end

-- Sends frames of `size` bytes (with CRC) until the TSC time `stopAt` (mg.getTime()).
function loadTask(queue, size, flows, dstMac, stopAt)
	flowsLib.sendFlows(queue, size, flows, dstMac, DST_PORT, stopAt)
end

-- The master's wait until the TSC time t: it only reads the NIC counters (one line a second per
-- counter) while the load task sends.
local function waitUntil(t, txCtr, rxCtr)
	while mg.running() and mg.getTime() < t do
		txCtr:update()
		rxCtr:update()
		mg.sleepMillisIdle(10)
	end
end

local function measureSize(args, txDev, rxDev, size)
	local queue = txDev:getTxQueue(0)
	-- The counters are created first: creating an RX counter clears the NIC's RX totals, and the
	-- window's figures below are differences of those totals (read from this task only: several
	-- NICs' registers are clear-on-read).
	local txCtr = stats:newDevTxCounter("tx " .. size .. "B", txDev, "plain")
	local rxCtr = stats:newDevRxCounter("rx " .. size .. "B", rxDev, "plain")
	local tx0, rx0 = txDev:getTxStats(), rxDev:getRxStats()
	local start = mg.getTime()
	local winStart = start + args.warmup
	local winEnd = winStart + args.time
	local task = mg.startTask("loadTask", queue, size, args.flows, args.mac, winEnd)
	waitUntil(winStart, txCtr, rxCtr)
	local txA, rxA = txDev:getTxStats(), rxDev:getRxStats()
	local tA = mg.getTime()
	waitUntil(winEnd, txCtr, rxCtr)
	local txB, rxB = txDev:getTxStats(), rxDev:getRxStats()
	local tB = mg.getTime()
	task:wait()
	-- Let what is still in the node's rings and queues come out before the loss count.
	mg.sleepMillis(200)
	local txEnd, rxEnd = txDev:getTxStats(), rxDev:getRxStats()
	txCtr:finalize()
	rxCtr:finalize()
	local window = tB - tA
	local txMpps = (txB - txA) / window / 1e6
	local rxMpps = (rxB - rxA) / window / 1e6
	local speed = rxDev:getLinkStatus().speed -- Mbit/s
	local lineMpps = speed / ((size + WIRE) * 8)
	local txPkts, rxPkts = txEnd - tx0, rxEnd - rx0
	return {
		size = size,
		window = window,
		txMpps = txMpps,
		rxMpps = rxMpps,
		rxGbps = rxMpps * size * 8 / 1000,
		rxGbpsWire = rxMpps * (size + WIRE) * 8 / 1000,
		lineMpps = lineMpps,
		rxPctLine = lineMpps > 0 and 100 * rxMpps / lineMpps or 0,
		txPkts = txPkts,
		rxPkts = rxPkts,
		lossPkts = txPkts - rxPkts,
		lossPct = txPkts > 0 and 100 * (txPkts - rxPkts) / txPkts or 0,
	}
end

function master(args)
	local sizes = parseSizes(args.sizes)
	if args.flows < 1 or args.flows > 65535 - SRC_PORT_BASE then
		log:fatal("--flows must be 1..%d", 65535 - SRC_PORT_BASE)
	end
	local txDev = device.config{port = args.txDev, rxQueues = 1, txQueues = 1}
	local rxDev = device.config{port = args.rxDev, rxQueues = 1, txQueues = 1}
	device.waitForLinks()
	if args.rate > 0 then
		txDev:getTxQueue(0):setRate(args.rate)
	end
	local out = io.open(args.out, "w")
	if not out then
		log:fatal("cannot write %s", args.out)
	end
	out:write("size_B,window_s,tx_mpps,rx_mpps,rx_gbps,rx_gbps_wire,line_mpps,rx_pct_line,"
		.. "tx_pkts,rx_pkts,loss_pkts,loss_pct\n")
	local results = {}
	for _, size in ipairs(sizes) do
		if not mg.running() then
			break
		end
		log:info("size %d B: %g s warm-up, %g s window, %s", size, args.warmup, args.time,
			args.rate > 0 and args.rate .. " Mbit/s" or "as fast as possible")
		local r = measureSize(args, txDev, rxDev, size)
		results[#results + 1] = r
		out:write(("%d,%.3f,%.4f,%.4f,%.4f,%.4f,%.4f,%.1f,%d,%d,%d,%.4f\n"):format(
			r.size, r.window, r.txMpps, r.rxMpps, r.rxGbps, r.rxGbpsWire, r.lineMpps,
			r.rxPctLine, r.txPkts, r.rxPkts, r.lossPkts, r.lossPct))
		out:flush()
	end
	out:close()
	print()
	print("size_B   tx_Mpps   rx_Mpps   rx_Gbit/s  % of line   loss %")
	for _, r in ipairs(results) do
		print(("%6d  %8.3f  %8.3f  %9.3f  %9.1f  %7.3f"):format(
			r.size, r.txMpps, r.rxMpps, r.rxGbps, r.rxPctLine, r.lossPct))
	end
	log:info("results in %s", args.out)
end
