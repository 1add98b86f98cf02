-- onvm_flows.lua -- what the MoonGen scripts of this directory share: UDP test frames between
-- the generator's two subnets, and a load loop that spreads them over `flows` source ports
-- (the node hashes flows to NF instances). libmoon puts a script's own directory on
-- package.path, in the master and in every task, so `require "onvm_flows"` finds this file.
local memory = require "memory"
local mg     = require "moongen"

local mod = {}

mod.SRC_IP        = "10.0.0.1"
mod.DST_IP        = "10.1.0.1"
mod.SRC_PORT_BASE = 1024
mod.CRC           = 4  -- bytes of a frame's size the NIC adds (sizes here include it)
mod.WIRE          = 20 -- preamble, SFD and inter-frame gap, per frame on the wire

-- Fill `buf` as a UDP frame of `len` bytes (no CRC) from `queue`'s port to `dstMac`.
function mod.fillUdp(buf, queue, dstMac, len, srcPort, dstPort)
	buf:getUdpPacket():fill{
		ethSrc = queue,
		ethDst = dstMac,
		ip4Src = mod.SRC_IP,
		ip4Dst = mod.DST_IP,
		udpSrc = srcPort,
		udpDst = dstPort,
		pktLength = len,
	}
end

-- Send UDP frames of `size` bytes (with CRC) to `dstPort` on `queue`, the source port cycling
-- over `flows` values, until the TSC time `stopAt` (mg.getTime()) or MoonGen stops.
function mod.sendFlows(queue, size, flows, dstMac, dstPort, stopAt)
	local pktLen = size - mod.CRC
	local mem = memory.createMemPool(function(buf)
		mod.fillUdp(buf, queue, dstMac, pktLen, mod.SRC_PORT_BASE, dstPort)
	end)
	local bufs = mem:bufArray()
	local flow = 0
	while mg.running() and mg.getTime() < stopAt do
		bufs:alloc(pktLen)
		for _, buf in ipairs(bufs) do
			buf:getUdpPacket().udp:setSrcPort(mod.SRC_PORT_BASE + flow)
			flow = flow + 1
			if flow == flows then
				flow = 0
			end
		end
		bufs:offloadUdpChecksums()
		queue:send(bufs)
	end
end

return mod
