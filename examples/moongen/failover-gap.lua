-- SPDX-License-Identifier: BSD-3-Clause
-- Copyright(c) 2026 REINFORCE-NFV authors

--- failover-gap.lua -- what a failover of a REINFORCE-NFV chain does to a constant-rate stream.
---
--- What it measures: MoonGen sends UDP packets at a constant --rate (Mpps) for --time seconds.
--- Each packet carries a sequence number and a flow id in its payload. One RX task polls every
--- RX port given and stamps each burst it receives with the TSC. Meanwhile the operator (or
--- --exec, at --at seconds) kills the primary NF or the primary node. At the end the script
--- reports:
---   - the longest gaps between two consecutive arrivals (any RX port): the failover's outage as
---     the wire sees it, with the sequence numbers and ports on either side;
---   - lost sequence numbers, as ranges, including a tail that never arrived;
---   - duplicates (a sequence number received twice: REINFORCE promises none);
---   - reordering: packets that arrived after a later packet of their own flow (in-flow, which
---     REINFORCE's ordering covers) and after any later packet (across flows, which instances of
---     a service may legitimately do).
---
--- Testbeds (examples/moongen/README.md):
---   local failover: MoonGen txDev -> node port A -> a chain with "resiliency": "local" NFs ->
---     node port B -> MoonGen rxDev. Kill the active NF (kill -9 <pid from /onvm/nfs>);
---   remote failover: MoonGen txDev -> the predecessor node's input port; the primary's and the
---     standby's exit ports -> two MoonGen RX ports (give both), or through a switch to one.
---     Kill the primary node, or ask the predecessor for /onvm/remote/failover,<chain>.
---
--- Packets: UDP over IPv4, --size bytes with CRC (64 or more). The source port is
--- SRC_PORT_BASE + flow, where flow = seq % --flows. The payload starts with three 32-bit words
--- in the generator's byte order (little-endian on x86): MAGIC, flow, seq. Rate control: the
--- NIC's per-queue rate limiter (txQueue:setRateMpps) where it has one. The TX task also keeps
--- each --burst to its schedule in software, so the average rate holds on NICs without one.
---
--- Time resolution: arrivals are stamped per received burst with the TSC. A gap is exact to
--- within one poll of the RX loop plus the NIC's batching, a few microseconds. The steady
--- spacing is 1/rate (burst/rate without a hardware limiter), so choose a rate whose spacing is
--- well below the outage you want to see: 1 Mpps gives 1 us.
---
--- Output, with --out as <out> (default failover-gap): the report on stdout; a row appended to
--- <out>.csv (one row per run, so many kills make one table); <out>-gaps.csv (every gap of at
--- least --gap-us: at_s,gap_us,seq_before,seq_after,port_before,port_after) and <out>-lost.csv
--- (first,last,count of every lost range).
---
--- Counterparts in bench/: bench/local_resiliency.py (death -> first packet processed by the
--- promoted NF, stamped inside the node) and bench/remote_failover.py (request -> first packet
--- out of the standby). The longest gap here runs from the last packet out before the failure
--- to the first one out after it, so it also holds detection (if the kill is the trigger) and
--- the path through the node's queues. README.md says how to line them up.
---
--- Usage: MoonGen examples/moongen/failover-gap.lua [options] txDev rxDev [rxDev ...]
---   e.g. MoonGen examples/moongen/failover-gap.lua 0 1 --rate 1 --time 20 \
---          --exec "ssh node kill -9 12345" --at 10
---   where 12345 is the active NF's pid from /onvm/nfs (not pkill by name: the standby runs the
---   same binary).

local mg     = require "moongen"
local memory = require "memory"
local device = require "device"
local stats  = require "stats"
local log    = require "log"
local ffi    = require "ffi"
local eth    = require "proto.ethernet"
local ip4    = require "proto.ip4"

local SRC_IP        = "10.0.0.1"
local DST_IP        = "10.1.0.1"
local SRC_PORT_BASE = 1024
local DST_PORT      = 5002

local MAGIC   = 0x52454946 -- "REIF" read as a hex word
local CRC     = 4
local MIN_LEN = 14 + 20 + 8 + 12 -- Ethernet, IPv4, UDP, the three payload words

local GAPS_KEPT    = 5      -- longest gaps in the report
local RANGES_SHOWN = 10     -- lost ranges in the report (all of them go to the file)
local GAP_ROWS_MAX = 100000 -- rows of the gaps file kept in memory during the run

function configure(parser)
	parser:description("Longest outage, losses, duplicates and reordering of a constant-rate "
		.. "UDP stream across a failover of a REINFORCE-NFV chain.")
	parser:argument("txDev", "MoonGen port cabled to the node's (or predecessor's) input port.")
		:convert(tonumber)
	parser:argument("rxDevs", "MoonGen port(s) cabled to the chain's exit port(s).")
		:args("+"):convert(tonumber)
	parser:option("-r --rate", "Packet rate in Mpps."):default(1):convert(tonumber)
	parser:option("-s --size", "Frame size in bytes, with CRC."):default(64):convert(tonumber)
	parser:option("-t --time", "Sending time, seconds."):default(30):convert(tonumber)
	parser:option("-f --flows", "Number of UDP flows (source ports)."):default(64):convert(tonumber)
	parser:option("-b --burst", "Packets per send."):default(8):convert(tonumber)
	parser:option("-m --mac", "Destination MAC of the packets."):default("02:00:00:00:00:0a")
	parser:option("--drain", "RX keeps receiving this long after TX stops, ms.")
		:default(500):convert(tonumber)
	parser:option("--gap-us", "Gaps of at least this many us go to the gaps file.")
		:default(100):convert(tonumber)
	parser:option("--exec", "Shell command the master runs at --at (e.g. one that kills the "
		.. "primary).")
	parser:option("--at", "When to run --exec, seconds after sending starts (default: --time/2).")
		:convert(tonumber)
	parser:option("-o --out", "Prefix of the output files."):default("failover-gap")
end

-- Sends cfg.maxPkts numbered packets at cfg.rate Mpps from the TSC time cfg.startAt, stopping at
-- cfg.stopAt at the latest.  Returns how many it sent and when it started and stopped.
function txTask(queue, cfg)
	local pktLen = cfg.size - CRC
	local mem = memory.createMemPool(function(buf)
		buf:getUdpPacket():fill{
			ethSrc = queue,
			ethDst = cfg.mac,
			ip4Src = SRC_IP,
			ip4Dst = DST_IP,
			udpSrc = SRC_PORT_BASE,
			udpDst = DST_PORT,
			pktLength = pktLen,
		}
	end)
	local bufs = mem:bufArray(cfg.burst)
	local pps = cfg.rate * 1e6
	local seq = 0
	while mg.running() and mg.getTime() < cfg.startAt do
		-- busy: the first packet leaves on time, and this core has nothing else to do
	end
	local t0 = mg.getTime()
	while mg.running() and seq < cfg.maxPkts do
		local now = mg.getTime()
		if now >= cfg.stopAt then
			break
		end
		if now >= t0 + seq / pps then
			local n = math.min(cfg.burst, cfg.maxPkts - seq)
			if n < bufs.size then
				bufs:resize(n)
			end
			bufs:alloc(pktLen)
			for i, buf in ipairs(bufs) do
				local s = seq + i - 1
				local flow = s % cfg.flows
				local pkt = buf:getUdpPacket()
				pkt.udp:setSrcPort(SRC_PORT_BASE + flow)
				pkt.payload.uint32[0] = MAGIC
				pkt.payload.uint32[1] = flow
				pkt.payload.uint32[2] = s
			end
			bufs:offloadUdpChecksums()
			queue:send(bufs)
			seq = seq + n
		end
	end
	return {sent = seq, startT = t0, stopT = mg.getTime()}
end

-- Keeps the GAPS_KEPT longest gaps, longest first.
local function keepGap(gaps, gap)
	local n = #gaps
	if n == GAPS_KEPT and gap.gap <= gaps[n].gap then
		return
	end
	-- a new slot at the end, or the shortest one's slot when all are taken
	local i = math.min(n + 1, GAPS_KEPT)
	while i > 1 and gaps[i - 1].gap < gap.gap do
		gaps[i] = gaps[i - 1]
		i = i - 1
	end
	gaps[i] = gap
end

-- Lost sequence numbers below the highest one received: ranges to `file`, the first few and the
-- totals returned.  O(maxSeq), once, after the run.
local function lostRanges(seen, maxSeq, file)
	local out = io.open(file, "w")
	if out then
		out:write("first,last,count\n")
	end
	local shown, nRanges, nLost = {}, 0, 0
	local s = 0
	while s <= maxSeq do
		if seen[s] == 0 then
			local first = s
			while s <= maxSeq and seen[s] == 0 do
				s = s + 1
			end
			local count = s - first
			nRanges = nRanges + 1
			nLost = nLost + count
			if #shown < RANGES_SHOWN then
				shown[#shown + 1] = {first = first, last = s - 1, count = count}
			end
			if out then
				out:write(("%d,%d,%d\n"):format(first, s - 1, count))
			end
		else
			s = s + 1
		end
	end
	if out then
		out:close()
	end
	return shown, nRanges, nLost
end

-- Receives from every queue in turn (one task, so arrivals on all ports are in one time order)
-- until the TSC time cfg.stopAt, then returns what it saw.
function rxTask(queues, cfg)
	local n = cfg.maxPkts
	-- One byte per sequence number (times it arrived, saturating), off the Lua heap.
	local seen = memory.alloc("uint8_t*", n)
	ffi.fill(seen, n, 0)
	local flowMax = ffi.new("double[?]", cfg.flows)
	for f = 0, cfg.flows - 1 do
		flowMax[f] = -1
	end
	local r = {received = 0, unique = 0, foreign = 0, outOfRange = 0, dups = 0,
		reorderedFlow = 0, reorderedAny = 0, maxDisplacement = 0, maxSeq = -1, perPort = {}}
	for q = 1, #queues do
		r.perPort[q] = 0
	end
	local gaps, gapRows, gapRowsDropped = {}, {}, 0
	local lastT, lastSeq, lastPort
	local bufs = memory.bufArray()
	while mg.running(cfg.drainMs) and mg.getTime() < cfg.stopAt do
		for q = 1, #queues do
			local rx = queues[q]:tryRecv(bufs, 0)
			if rx > 0 then
				local now = mg.getTime()
				for i = 1, rx do
					local buf = bufs[i]
					local pkt = buf:getUdpPacket()
					-- Ours by the magic word, not by ports or addresses, which NFs may rewrite
					-- (load_balancer, nat).
					if buf:getSize() >= MIN_LEN and pkt.eth:getType() == eth.TYPE_IP
					and pkt.ip4:getProtocol() == ip4.PROTO_UDP
					and pkt.payload.uint32[0] == MAGIC then
						local seq = pkt.payload.uint32[2]
						r.received = r.received + 1
						r.perPort[q] = r.perPort[q] + 1
						if seq >= n then
							r.outOfRange = r.outOfRange + 1
						elseif seen[seq] > 0 then
							r.dups = r.dups + 1
							if seen[seq] < 255 then
								seen[seq] = seen[seq] + 1
							end
						else
							seen[seq] = 1
							r.unique = r.unique + 1
							local flow = seq % cfg.flows
							if seq < flowMax[flow] then
								r.reorderedFlow = r.reorderedFlow + 1
								local d = flowMax[flow] - seq
								if d > r.maxDisplacement then
									r.maxDisplacement = d
								end
							else
								flowMax[flow] = seq
							end
							if seq < r.maxSeq then
								r.reorderedAny = r.reorderedAny + 1
							else
								r.maxSeq = seq
							end
						end
						if lastT then
							local gap = now - lastT
							local long = gap >= cfg.gapThreshold
							if long or #gaps < GAPS_KEPT or gap > gaps[#gaps].gap then
								local row = {t = lastT, gap = gap, before = lastSeq, after = seq,
									portBefore = queues[lastPort].id, portAfter = queues[q].id}
								keepGap(gaps, row)
								if long and #gapRows < GAP_ROWS_MAX then
									gapRows[#gapRows + 1] = row
								elseif long then
									gapRowsDropped = gapRowsDropped + 1
								end
							end
						end
						lastT, lastSeq, lastPort = now, seq, q
					else
						r.foreign = r.foreign + 1
					end
				end
				bufs:free(rx)
			end
		end
	end
	r.lastT, r.lastSeq = lastT, lastSeq
	r.gaps = gaps
	r.gapRowsDropped = gapRowsDropped
	local out = io.open(cfg.gapsFile, "w")
	if out then
		out:write("at_s,gap_us,seq_before,seq_after,port_before,port_after\n")
		for _, g in ipairs(gapRows) do
			out:write(("%.6f,%.3f,%d,%d,%d,%d\n"):format(g.t - cfg.startAt, g.gap * 1e6,
				g.before, g.after, g.portBefore, g.portAfter))
		end
		out:close()
	end
	r.lostShown, r.lostRanges, r.lostBelow = lostRanges(seen, math.min(r.maxSeq, n - 1),
		cfg.lostFile)
	memory.free(seen)
	return r
end

local function waitUntil(t, counters)
	while mg.running() and mg.getTime() < t do
		for _, ctr in ipairs(counters) do
			ctr:update()
		end
		mg.sleepMillisIdle(10)
	end
end

local function appendSummary(file, row)
	local header = "unix_time,rate_mpps,sent,received,unique,lost,lost_ranges,tail_lost,dups,"
		.. "reordered_in_flow,reordered_any,max_gap_us,gap_at_s,gap_seq_before,gap_seq_after,"
		.. "gap_port_before,gap_port_after,gap_start_after_exec_us,nic_rx,not_seen_by_rx_task"
	local exists = io.open(file, "r")
	if exists then
		exists:close()
	end
	local out = io.open(file, "a")
	if not out then
		log:error("cannot write %s", file)
		return
	end
	if not exists then
		out:write(header .. "\n")
	end
	out:write(table.concat(row, ",") .. "\n")
	out:close()
end

local function report(args, tx, rx, exec, nicRx)
	local us = function(s) return s * 1e6 end
	local tail = math.max(tx.sent - (rx.maxSeq + 1), 0)
	local lost = rx.lostBelow + tail
	local elapsed = tx.stopT - tx.startT
	print()
	print(("sent     %d packets in %.3f s (%.4f Mpps, asked %.4f)"):format(tx.sent, elapsed,
		elapsed > 0 and tx.sent / elapsed / 1e6 or 0, args.rate))
	local ports = {}
	for q, id in ipairs(args.rxDevs) do
		ports[#ports + 1] = ("port %d: %d"):format(id, rx.perPort[q])
	end
	print(("received %d of ours (%s), %d unique; %d other frames"):format(rx.received,
		table.concat(ports, ", "), rx.unique, rx.foreign))
	if rx.outOfRange > 0 then
		log:warn("%d packets carried a sequence number this run never sent (another generator "
			.. "on the link, or a corrupted payload)", rx.outOfRange)
	end
	if nicRx > rx.received + rx.foreign then
		log:warn("%d frames reached MoonGen's RX NICs but not the RX task: MoonGen dropped "
			.. "them, and they count as lost below", nicRx - rx.received - rx.foreign)
	end
	print(("lost     %d (%d below the highest received, in %d ranges; %d at the tail)"):format(
		lost, rx.lostBelow, rx.lostRanges, tail))
	for _, g in ipairs(rx.lostShown) do
		print(("           seq %d..%d (%d)"):format(g.first, g.last, g.count))
	end
	if rx.lostRanges > #rx.lostShown then
		print(("           ... all %d ranges in %s-lost.csv"):format(rx.lostRanges, args.out))
	end
	print(("dups     %d"):format(rx.dups))
	print(("reorder  %d within their flow (largest displacement %d seqs), %d across flows"):format(
		rx.reorderedFlow, rx.maxDisplacement, rx.reorderedAny))
	if exec then
		print(("exec     '%s' at %.6f s, returned after %.3f ms"):format(args.exec,
			exec.t0 - tx.startT, (exec.t1 - exec.t0) * 1e3))
	end
	print("longest gaps between arrivals:")
	for _, g in ipairs(rx.gaps) do
		local rel = exec and ("; starts %.1f us after exec"):format(us(g.t - exec.t0)) or ""
		print(("  %10.1f us at %.6f s: seq %d (port %d) -> seq %d (port %d)%s"):format(us(g.gap),
			g.t - tx.startT, g.before, g.portBefore, g.after, g.portAfter, rel))
	end
	if rx.lastT and tx.stopT - rx.lastT > 0.01 then
		print(("no packet arrived in the last %.3f s of sending: the stream did not come back")
			:format(tx.stopT - rx.lastT))
	end
	if rx.gapRowsDropped > 0 then
		log:warn("%d gaps of at least --gap-us not written to %s-gaps.csv (limit %d rows)",
			rx.gapRowsDropped, args.out, GAP_ROWS_MAX)
	end
	local g = rx.gaps[1]
	appendSummary(args.out .. ".csv", {
		os.time(), args.rate, tx.sent, rx.received, rx.unique, lost, rx.lostRanges, tail, rx.dups,
		rx.reorderedFlow, rx.reorderedAny,
		g and ("%.3f"):format(us(g.gap)) or "", g and ("%.6f"):format(g.t - tx.startT) or "",
		g and g.before or "", g and g.after or "", g and g.portBefore or "",
		g and g.portAfter or "",
		(g and exec) and ("%.1f"):format(us(g.t - exec.t0)) or "",
		nicRx, math.max(nicRx - rx.received - rx.foreign, 0),
	})
	log:info("summary appended to %s.csv; gaps in %s-gaps.csv, lost ranges in %s-lost.csv",
		args.out, args.out, args.out)
end

function master(args)
	if args.size < 64 or args.size > 1518 then
		log:fatal("--size must be 64..1518 (bytes with CRC)")
	end
	if args.rate <= 0 or args.time <= 0 or args.burst < 1 or args.burst > 63 then
		log:fatal("--rate and --time must be positive, --burst 1..63")
	end
	if args.flows < 1 or args.flows > 65535 - SRC_PORT_BASE then
		log:fatal("--flows must be 1..%d", 65535 - SRC_PORT_BASE)
	end
	local maxPkts = math.floor(args.rate * 1e6 * args.time)
	if maxPkts >= 2 ^ 32 then
		log:fatal("rate x time is %d packets: more than 32-bit sequence numbers hold", maxPkts)
	end
	local txDev = device.config{port = args.txDev, rxQueues = 1, txQueues = 1}
	local rxDevs, queues = {}, {}
	for i, id in ipairs(args.rxDevs) do
		if id == args.txDev then
			log:fatal("port %d cannot be both the TX and an RX port", id)
		end
		-- Deep RX rings: a frame MoonGen itself drops would look like a loss in the node.
		rxDevs[i] = device.config{port = id, rxQueues = 1, txQueues = 1, rxDescs = 4096}
		queues[i] = rxDevs[i]:getRxQueue(0)
	end
	device.waitForLinks()
	txDev:getTxQueue(0):setRateMpps(args.rate, args.size - CRC)

	-- Counters first (an RX counter clears the NIC's RX totals); read from this task only.
	local counters = {stats:newDevTxCounter("tx", txDev, "plain")}
	for _, dev in ipairs(rxDevs) do
		counters[#counters + 1] = stats:newDevRxCounter(dev, "plain")
	end
	local nicRx0 = 0
	for _, dev in ipairs(rxDevs) do
		nicRx0 = nicRx0 + dev:getRxStats()
	end
	-- One schedule for both tasks, in TSC seconds: a second to set up, then --time of sending,
	-- and the RX task receives --drain ms longer.
	local startAt = mg.getTime() + 1
	local stopAt = startAt + args.time
	local gapThreshold = math.max(args.gap_us / 1e6, 4 * args.burst / (args.rate * 1e6))
	if gapThreshold > args.gap_us / 1e6 then
		log:warn("--gap-us raised to %.1f us: four bursts' spacing", gapThreshold * 1e6)
	end
	local txT = mg.startTask("txTask", txDev:getTxQueue(0), {
		size = args.size, mac = args.mac, burst = args.burst, rate = args.rate,
		flows = args.flows, maxPkts = maxPkts, startAt = startAt, stopAt = stopAt,
	})
	local rxT = mg.startTask("rxTask", queues, {
		maxPkts = maxPkts, flows = args.flows, startAt = startAt,
		stopAt = stopAt + args.drain / 1000, drainMs = args.drain, gapThreshold = gapThreshold,
		gapsFile = args.out .. "-gaps.csv", lostFile = args.out .. "-lost.csv",
	})
	local exec
	if args.exec then
		local at = args.at or args.time / 2
		waitUntil(startAt + at, counters)
		if mg.running() then
			exec = {t0 = mg.getTime()}
			log:info("exec: %s", args.exec)
			os.execute(args.exec)
			exec.t1 = mg.getTime()
		end
	else
		log:info("sending from now+1 s for %g s: fail the primary meanwhile", args.time)
	end
	waitUntil(stopAt + args.drain / 1000, counters)
	local tx = txT:wait()
	local rx = rxT:wait()
	for _, ctr in ipairs(counters) do
		ctr:finalize()
	end
	local nicRx = -nicRx0
	for _, dev in ipairs(rxDevs) do
		nicRx = nicRx + dev:getRxStats()
	end
	if not tx or not rx then
		log:fatal("a task failed (see its error above)")
	end
	report(args, tx, rx, exec, nicRx)
end
