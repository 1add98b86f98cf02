-- SPDX-License-Identifier: BSD-3-Clause
-- Copyright(c) 2026 REINFORCE-NFV authors
--
-- Wireshark dissector for REINFORCE-NFV's remote resiliency (docs/wire-format.md):
--   EtherType 0x88B5: the logical-timestamp shim (then the inner EtherType's
--                     dissector takes the rest of the packet); version 2:
--                     FTC's piggyback (logs, records, commit vector);
--                     version 3: FTC's state transfer (FETCH, PIECE, END, RESYNC)
--                     version 4: a flow move between nodes (COPY, BUFFERED,
--                     HANDOFF, RETURN with the packet; SYNC, STATE, LOG, STATUS)
--   EtherType 0x88B6: RSync messages (header, per-type payload, HMAC)
--
--   tshark -X lua_script:tools/reinforce.lua -r capture.pcapng
--   wireshark -X lua_script:tools/reinforce.lua capture.pcapng
--
-- Display filters: reinforce_shim, reinforce_shim.ts == 42, reinforce_rsync,
-- reinforce_rsync.type == 2 (VOTE), reinforce_rsync.txid, reinforce_rsync.meta.cut_ts ...,
-- reinforce_ftc, reinforce_ftc.log.instance == 3, reinforce_ftc.commit.seq ...
-- reinforce_xmove, reinforce_xmove.type == 18 (LOG), reinforce_xmove.service == 9,
-- reinforce_xmove.slot == 5 || reinforce_xmove.tag.slot == 5, reinforce_xmove.gen ...

local ethertype = DissectorTable.get("ethertype")

---------------------------------------------------------------- 0x88B5 shim
local shim = Proto("reinforce_shim", "REINFORCE timestamp shim")
local sf = {
	version = ProtoField.uint8("reinforce_shim.version", "Version"),
	flags = ProtoField.uint8("reinforce_shim.flags", "Flags", base.HEX),
	replay = ProtoField.bool("reinforce_shim.flags.replay", "Replayed", 8, nil, 0x01),
	inner = ProtoField.uint16("reinforce_shim.inner_type", "Inner EtherType", base.HEX),
	ts = ProtoField.uint64("reinforce_shim.ts", "Logical timestamp"),
}
shim.fields = { sf.version, sf.flags, sf.replay, sf.inner, sf.ts }

---------------------------------------------------------------- 0x88B5 v2: FTC
local ftc = Proto("reinforce_ftc", "REINFORCE FTC piggyback")
local ff = {
	version = ProtoField.uint8("reinforce_ftc.version", "Version"),
	flags = ProtoField.uint8("reinforce_ftc.flags", "Flags", base.HEX),
	propagate = ProtoField.bool("reinforce_ftc.flags.propagate", "Propagating (no packet)", 8,
		nil, 0x01),
	inner = ProtoField.uint16("reinforce_ftc.inner_type", "Inner EtherType", base.HEX),
	section = ProtoField.uint16("reinforce_ftc.section_len", "Section length"),
	n_logs = ProtoField.uint8("reinforce_ftc.logs", "Logs"),
	n_commits = ProtoField.uint8("reinforce_ftc.commits", "Commits"),
	instance = ProtoField.uint16("reinforce_ftc.log.instance", "NF instance"),
	part = ProtoField.uint8("reinforce_ftc.log.part", "Part"),
	parts = ProtoField.uint8("reinforce_ftc.log.parts", "Parts"),
	data_len = ProtoField.uint32("reinforce_ftc.log.len", "Data length"),
	seq = ProtoField.uint64("reinforce_ftc.log.seq", "Sequence number"),
	region = ProtoField.uint16("reinforce_ftc.record.region", "Region"),
	rec_len = ProtoField.uint16("reinforce_ftc.record.len", "Length"),
	offset = ProtoField.uint32("reinforce_ftc.record.offset", "Offset"),
	bytes = ProtoField.bytes("reinforce_ftc.record.bytes", "Bytes"),
	c_instance = ProtoField.uint16("reinforce_ftc.commit.instance", "NF instance"),
	c_kind = ProtoField.uint8("reinforce_ftc.commit.kind", "Kind", base.DEC,
		{ [0] = "held", [1] = "need", [2] = "void", [3] = "applied" }),
	c_reserved = ProtoField.uint8("reinforce_ftc.commit.span", "Span (void) / reserved"),
	c_seq = ProtoField.uint64("reinforce_ftc.commit.seq", "Committed up to"),
}
ftc.fields = { ff.version, ff.flags, ff.propagate, ff.inner, ff.section, ff.n_logs, ff.n_commits,
	ff.instance, ff.part, ff.parts, ff.data_len, ff.seq, ff.region, ff.rec_len, ff.offset,
	ff.bytes, ff.c_instance, ff.c_kind, ff.c_reserved, ff.c_seq }

-- After the EtherType: version 2, flags, inner EtherType, section length,
-- log count, commit count, the section, then the packet (ftc/ftc_wire.h).
local function dissect_ftc(tvb, pinfo, tree)
	if tvb:len() < 8 then
		return 0
	end
	local sec = tvb(4, 2):uint()
	local stop = math.min(tvb:len(), 8 + sec)
	local t = tree:add(ftc, tvb(0, stop))
	t:add(ff.version, tvb(0, 1))
	t:add(ff.flags, tvb(1, 1)):add(ff.propagate, tvb(1, 1))
	t:add(ff.inner, tvb(2, 2))
	t:add(ff.section, tvb(4, 2))
	t:add(ff.n_logs, tvb(6, 1))
	t:add(ff.n_commits, tvb(7, 1))
	local pos = 8
	for _ = 1, tvb(6, 1):uint() do
		if pos + 16 > stop then
			return tvb:len()
		end
		local dl = tvb(pos + 4, 4):uint()
		local lt = t:add(ftc, tvb(pos, math.min(16 + dl, stop - pos)), "Log")
		lt:add(ff.instance, tvb(pos, 2))
		lt:add(ff.part, tvb(pos + 2, 1))
		lt:add(ff.parts, tvb(pos + 3, 1))
		lt:add(ff.data_len, tvb(pos + 4, 4))
		lt:add(ff.seq, tvb(pos + 8, 8))
		lt:append_text(string.format(": instance %d, seq %s", tvb(pos, 2):uint(),
			tvb(pos + 8, 8):uint64()))
		local r, rend = pos + 16, math.min(pos + 16 + dl, stop)
		while r + 8 <= rend do
			local rl = tvb(r + 2, 2):uint()
			local rt = lt:add(ftc, tvb(r, math.min(8 + rl, rend - r)), "Record")
			rt:add(ff.region, tvb(r, 2))
			rt:add(ff.rec_len, tvb(r + 2, 2))
			rt:add(ff.offset, tvb(r + 4, 4))
			if rl > 0 and r + 8 + rl <= rend then
				rt:add(ff.bytes, tvb(r + 8, rl))
			end
			r = r + 8 + rl
		end
		pos = pos + 16 + dl
	end
	for _ = 1, tvb(7, 1):uint() do
		if pos + 12 > stop then
			return tvb:len()
		end
		local ct = t:add(ftc, tvb(pos, 12), "Commit")
		ct:add(ff.c_instance, tvb(pos, 2))
		ct:add(ff.c_kind, tvb(pos + 2, 1))
		ct:add(ff.c_reserved, tvb(pos + 3, 1))
		ct:add(ff.c_seq, tvb(pos + 4, 8))
		ct:append_text(string.format(": instance %d %s %s", tvb(pos, 2):uint(),
			({ [0] = "held up to", [1] = "needs up to", [2] = "recovered from",
			   [3] = "applied by the group so far up to" })[tvb(pos + 2, 1):uint()] or "?",
			tvb(pos + 4, 8):uint64()))
		pos = pos + 12
	end
	local inner = tvb(2, 2):uint()
	if inner ~= 0 and tvb:len() > 8 + sec then
		ethertype:try(inner, tvb(8 + sec):tvb(), pinfo, tree)
	end
	return tvb:len()
end

---------------------------------------------------------------- 0x88B5 v3: FTC state transfer
local xfer = Proto("reinforce_ftc_xfer", "REINFORCE FTC state transfer")
local xops = { [1] = "FETCH", [2] = "PIECE", [3] = "END", [4] = "RESYNC" }
local xf = {
	version = ProtoField.uint8("reinforce_ftc_xfer.version", "Version"),
	op = ProtoField.uint8("reinforce_ftc_xfer.op", "Op", base.DEC, xops),
	chain = ProtoField.uint16("reinforce_ftc_xfer.chain", "FTC chain"),
	from = ProtoField.uint8("reinforce_ftc_xfer.from", "From position"),
	instance = ProtoField.uint8("reinforce_ftc_xfer.instance", "NF instance"),
	nonce = ProtoField.uint32("reinforce_ftc_xfer.nonce", "Nonce", base.HEX),
	seq = ProtoField.uint64("reinforce_ftc_xfer.seq", "Applied up to"),
	index = ProtoField.uint32("reinforce_ftc_xfer.index", "Index / pieces"),
	region = ProtoField.uint16("reinforce_ftc_xfer.region", "Region"),
	len = ProtoField.uint16("reinforce_ftc_xfer.len", "Length"),
	offset = ProtoField.uint32("reinforce_ftc_xfer.offset", "Offset"),
	bytes = ProtoField.bytes("reinforce_ftc_xfer.bytes", "Bytes"),
	high = ProtoField.uint64("reinforce_ftc_xfer.high", "Highest number seen"),
}
xfer.fields = { xf.version, xf.op, xf.chain, xf.from, xf.instance, xf.nonce, xf.seq, xf.index,
	xf.region, xf.len, xf.offset, xf.bytes, xf.high }

-- After the EtherType: version 3, op, chain, from, instance, nonce, seq,
-- index (22 bytes); a PIECE then region, length, offset and its bytes.
local function dissect_xfer(tvb, pinfo, tree)
	if tvb:len() < 22 then
		return 0
	end
	local t = tree:add(xfer, tvb())
	local op = tvb(1, 1):uint()
	t:add(xf.version, tvb(0, 1))
	t:add(xf.op, tvb(1, 1))
	t:add(xf.chain, tvb(2, 2))
	t:add(xf.from, tvb(4, 1))
	t:add(xf.instance, tvb(5, 1))
	t:add(xf.nonce, tvb(6, 4))
	t:add(xf.seq, tvb(10, 8))
	t:add(xf.index, tvb(18, 4))
	if op == 3 and tvb:len() >= 30 then
		t:add(xf.high, tvb(22, 8))
	end
	if op == 2 and tvb:len() >= 30 then
		local n = tvb(24, 2):uint()
		t:add(xf.region, tvb(22, 2))
		t:add(xf.len, tvb(24, 2))
		t:add(xf.offset, tvb(26, 4))
		if tvb:len() >= 30 + n and n > 0 then
			t:add(xf.bytes, tvb(30, n))
		end
	end
	pinfo.cols.protocol = "FTC-XFER"
	pinfo.cols.info = string.format("%s chain %d from %d instance %d seq %s", xops[op] or "?",
		tvb(2, 2):uint(), tvb(4, 1):uint(), tvb(5, 1):uint(), tvb(10, 8):uint64())
	return tvb:len()
end

---------------------------------------------------------------- 0x88B5 v4: a flow move between nodes
local xmove = Proto("reinforce_xmove", "REINFORCE flow move between nodes")
local xm_types = {
	[1] = "COPY", [2] = "BUFFERED", [3] = "HANDOFF", [4] = "RETURN",
	[16] = "SYNC", [17] = "STATE", [18] = "LOG", [19] = "STATUS",
}
local xm_actions = { [0] = "drop", [1] = "next", [2] = "to NF", [3] = "out" }
local xm_methods = { [0] = "reprocess", [1] = "buffer" }
local xm_states = {
	[0] = "free", [1] = "started", [2] = "exported", [3] = "imported", [4] = "flipping",
	[5] = "flipped", [6] = "done", [7] = "failed",
}
local xm_fails = {
	[0] = "none", [1] = "src_gone", [2] = "dst_gone", [3] = "timeout", [4] = "copy_lost",
	[5] = "ring_full", [6] = "export_too_big", [7] = "import_refused", [8] = "dst_wait",
	[9] = "log_overrun", [10] = "nf_cannot_move", [11] = "src_failover", [12] = "peer_lost",
	[13] = "peer_refused",
}
local xm = {
	version = ProtoField.uint8("reinforce_xmove.version", "Version"),
	type = ProtoField.uint8("reinforce_xmove.type", "Type", base.DEC, xm_types),
	-- data frames
	service = ProtoField.uint16("reinforce_xmove.service", "Service"),
	inst = ProtoField.uint16("reinforce_xmove.inst", "Instance (on the receiving node)"),
	chain_id = ProtoField.uint16("reinforce_xmove.chain_id", "Chain id"),
	chain_index = ProtoField.uint8("reinforce_xmove.chain_index", "Chain index"),
	action = ProtoField.uint8("reinforce_xmove.action", "Action", base.DEC, xm_actions),
	destination = ProtoField.uint16("reinforce_xmove.destination", "Destination"),
	flags = ProtoField.uint8("reinforce_xmove.flags", "Flags", base.HEX),
	nd = ProtoField.bool("reinforce_xmove.flags.nd", "Non-deterministic", 8, nil, 0x01),
	in_port = ProtoField.uint8("reinforce_xmove.in_port", "In port"),
	egress_port = ProtoField.uint8("reinforce_xmove.egress_port", "Egress port"),
	reserved = ProtoField.uint32("reinforce_xmove.reserved", "Reserved"),
	flow_hash = ProtoField.uint32("reinforce_xmove.flow_hash", "Flow hash", base.HEX),
	tag = ProtoField.uint64("reinforce_xmove.tag", "Move tag", base.HEX),
	tag_is = ProtoField.bool("reinforce_xmove.tag.is", "Tagged", 16, nil, 0x8000),
	tag_slot = ProtoField.uint16("reinforce_xmove.tag.slot", "Slot", base.DEC, nil, 0x7fff),
	tag_gen = ProtoField.uint8("reinforce_xmove.tag.gen", "Gen (low 8 bits)"),
	tag_seq = ProtoField.uint64("reinforce_xmove.tag.seq", "Sequence number"),
	-- control frames: the move
	slot = ProtoField.uint8("reinforce_xmove.slot", "Slot (at the src node)"),
	gen = ProtoField.uint32("reinforce_xmove.gen", "Gen"),
	-- SYNC
	method = ProtoField.uint8("reinforce_xmove.method", "Method", base.DEC, xm_methods),
	move_state = ProtoField.uint8("reinforce_xmove.move_state", "Move state", base.DEC,
		xm_states),
	fail = ProtoField.uint8("reinforce_xmove.fail", "Fail", base.DEC, xm_fails),
	s_flags = ProtoField.uint8("reinforce_xmove.sync.flags", "Flags", base.HEX),
	s_start_out = ProtoField.bool("reinforce_xmove.sync.flags.start_out", "START out", 8, nil,
		0x01),
	s_end_out = ProtoField.bool("reinforce_xmove.sync.flags.end_out", "END out", 8, nil, 0x02),
	s_src_gone = ProtoField.bool("reinforce_xmove.sync.flags.src_gone", "src gone", 8, nil,
		0x04),
	s_exported = ProtoField.bool("reinforce_xmove.sync.flags.exported", "Exported", 8, nil,
		0x08),
	copies = ProtoField.uint64("reinforce_xmove.sync.copies", "Copies sent"),
	state_len = ProtoField.uint64("reinforce_xmove.sync.state_len", "STATE length"),
	included = ProtoField.uint32("reinforce_xmove.sync.included", "Included tags"),
	buckets = ProtoField.bytes("reinforce_xmove.sync.buckets", "Buckets (bitmap)"),
	n_buckets = ProtoField.uint16("reinforce_xmove.sync.n_buckets", "Buckets moved"),
	-- STATE
	st_offset = ProtoField.uint32("reinforce_xmove.state.offset", "Offset"),
	st_total = ProtoField.uint32("reinforce_xmove.state.total", "Total"),
	st_len = ProtoField.uint16("reinforce_xmove.state.len", "Length"),
	st_bytes = ProtoField.bytes("reinforce_xmove.state.bytes", "Bytes"),
	-- LOG
	l_first = ProtoField.uint64("reinforce_xmove.log.first", "First sequence number"),
	l_count = ProtoField.uint8("reinforce_xmove.log.count", "Entries"),
	l_seq = ProtoField.uint64("reinforce_xmove.log.seq", "Sequence number"),
	l_flags = ProtoField.uint32("reinforce_xmove.log.flags", "Flags", base.HEX),
	l_included = ProtoField.bool("reinforce_xmove.log.flags.included", "Included", 32, nil,
		0x1),
	l_dropped = ProtoField.bool("reinforce_xmove.log.flags.dropped", "Dropped", 32, nil, 0x2),
	l_nd_over = ProtoField.bool("reinforce_xmove.log.flags.nd_overflow", "ND overflow", 32,
		nil, 0x4),
	l_n_nd = ProtoField.uint32("reinforce_xmove.log.n_nd", "ND values"),
	l_nd = ProtoField.uint64("reinforce_xmove.log.nd", "ND value", base.HEX),
	l_unused = ProtoField.uint64("reinforce_xmove.log.unused", "Unused ND value", base.HEX),
	-- STATUS
	mirror_slot = ProtoField.uint8("reinforce_xmove.status.mirror_slot", "Mirror slot"),
	nd_short = ProtoField.uint32("reinforce_xmove.status.nd_short", "ND values drawn afresh"),
	t_flags = ProtoField.uint8("reinforce_xmove.status.flags", "Flags", base.HEX),
	t_open = ProtoField.bool("reinforce_xmove.status.flags.open", "Open", 8, nil, 0x01),
	t_imported = ProtoField.bool("reinforce_xmove.status.flags.imported", "Imported", 8, nil,
		0x02),
	t_lossy = ProtoField.bool("reinforce_xmove.status.flags.lossy", "Lossy", 8, nil, 0x04),
	padding = ProtoField.bytes("reinforce_xmove.padding", "Padding"),
}
local xm_counters = {
	{ "state_acked", "STATE bytes received in order" },
	{ "log_next", "First LOG entry not received" },
	{ "copies_rcvd", "Copies received" },
	{ "dst_seen", "Tagged packets seen at dst" },
	{ "imported_flows", "Flows imported" },
	{ "reprocessed", "Reprocessed" },
	{ "skipped_included", "Skipped as included" },
	{ "nd_replayed", "ND values replayed" },
	{ "dropped", "Dropped" },
	{ "copies_lost", "Copies lost" },
}
for _, c in ipairs(xm_counters) do
	xm["c_" .. c[1]] = ProtoField.uint64("reinforce_xmove.status." .. c[1], c[2])
end
local xm_short = ProtoExpert.new("reinforce_xmove.short", "Frame cut short",
	expert.group.MALFORMED, expert.severity.ERROR)
local xm_list = {}
for _, f in pairs(xm) do
	table.insert(xm_list, f)
end
xmove.fields = xm_list
xmove.experts = { xm_short }

local eth_inner = Dissector.get("eth_withoutfcs")

-- The buckets (1024 bits, 16 big-endian 64-bit words, bucket b bit b % 64
-- of word b / 64) as ranges, and how many.
local function xm_buckets(r)
	local set, runs, first, last = 0, {}, nil, nil
	for w = 0, 15 do
		for bit = 0, 63 do
			local byte = r(w * 8 + 7 - math.floor(bit / 8), 1):uint()
			if math.floor(byte / 2 ^ (bit % 8)) % 2 == 1 then
				local b = w * 64 + bit
				set = set + 1
				if last and b == last + 1 then
					last = b
				else
					if first then
						table.insert(runs, first == last and tostring(first) or
							first .. "-" .. last)
					end
					first, last = b, b
				end
			end
		end
	end
	if first then
		table.insert(runs, first == last and tostring(first) or first .. "-" .. last)
	end
	if #runs > 16 then
		runs = { table.concat(runs, ",", 1, 16), "..." }
	end
	return set, table.concat(runs, ",")
end

local function xm_tag_text(tag)
	if tag == UInt64(0) then
		return "none"
	end
	return string.format("slot %d gen %d seq %s", tag:rshift(48):band(0x7fff):tonumber(),
		tag:rshift(40):band(0xff):tonumber(), tag:band(UInt64(0xffffffff, 0xff)))
end

-- After the EtherType: version 4, type, then 26 bytes of fields and the
-- packet from its MACs on (data), or slot, reserved, gen and the type's
-- fields (control) -- common/onvm_xmove_wire.c.
local function dissect_xmove(tvb, pinfo, tree)
	local len = tvb:len()
	if len < 2 then
		return 0
	end
	local mtype = tvb(1, 1):uint()
	local name = xm_types[mtype] or string.format("type %d", mtype)
	pinfo.cols.protocol = "XMOVE"
	if mtype >= 1 and mtype <= 4 then
		local t = tree:add(xmove, tvb(0, math.min(len, 28)))
		t:add(xm.version, tvb(0, 1))
		t:add(xm.type, tvb(1, 1))
		t:append_text(", " .. name)
		if len < 28 then
			t:add_proto_expert_info(xm_short)
			pinfo.cols.info = name .. " (cut short)"
			return len
		end
		t:add(xm.service, tvb(2, 2))
		t:add(xm.inst, tvb(4, 2))
		t:add(xm.chain_id, tvb(6, 2))
		t:add(xm.chain_index, tvb(8, 1))
		t:add(xm.action, tvb(9, 1))
		t:add(xm.destination, tvb(10, 2))
		t:add(xm.flags, tvb(12, 1)):add(xm.nd, tvb(12, 1))
		t:add(xm.in_port, tvb(13, 1))
		t:add(xm.egress_port, tvb(14, 1))
		t:add(xm.reserved, tvb(15, 1))
		t:add(xm.flow_hash, tvb(16, 4))
		local tag = tvb(20, 8):uint64()
		local tt = t:add(xm.tag, tvb(20, 8))
		if tag ~= UInt64(0) then
			-- top bit, slot (15), gen (8), sequence number (40)
			tt:add(xm.tag_is, tvb(20, 2))
			tt:add(xm.tag_slot, tvb(20, 2))
			tt:add(xm.tag_gen, tvb(22, 1))
			tt:add(xm.tag_seq, tvb(23, 5))
		end
		local info
		if mtype == 4 then
			info = string.format("RETURN service %d chain %d index %d action %s dest %d",
				tvb(2, 2):uint(), tvb(6, 2):uint(), tvb(8, 1):uint(),
				xm_actions[tvb(9, 1):uint()] or "?", tvb(10, 2):uint())
		else
			info = string.format("%s service %d inst %d chain %d index %d", name,
				tvb(2, 2):uint(), tvb(4, 2):uint(), tvb(6, 2):uint(), tvb(8, 1):uint())
		end
		if tag ~= UInt64(0) then
			info = info .. ", tag " .. xm_tag_text(tag)
		end
		t:append_text(string.format(": service %d, tag %s", tvb(2, 2):uint(), xm_tag_text(tag)))
		if len > 42 then
			eth_inner:call(tvb(28):tvb(), pinfo, tree)
			-- after the inner packet's dissectors, which set the columns too
			pinfo.cols.protocol = "XMOVE"
			pinfo.cols.info:prepend(info .. ": ")
			return len
		end
		if len >= 42 then
			-- an Ethernet header and nothing after: no payload to hand on
			tree:add(tvb(28), string.format("Packet: Ethernet header only, %s -> %s, type 0x%04x",
				tostring(tvb(34, 6):ether()), tostring(tvb(28, 6):ether()), tvb(40, 2):uint()))
		else
			t:add_proto_expert_info(xm_short)
			info = info .. " (cut short)"
		end
		pinfo.cols.info = info
		return len
	end

	-- control: slot, reserved (8, 16), gen, then the type's fields
	local body = ({ [16] = 160, [17] = 12, [18] = 16, [19] = 88 })[mtype]
	local need = 10 + (body or 0)
	if mtype == 17 and len >= 22 then
		need = need + tvb(18, 2):uint()
	elseif mtype == 18 and len >= 19 then
		need = need + 40 * tvb(18, 1):uint()
	end
	local t = tree:add(xmove, tvb(0, math.min(len, need)))
	t:add(xm.version, tvb(0, 1))
	t:add(xm.type, tvb(1, 1))
	t:append_text(", " .. name)
	pinfo.cols.info = name
	if len < 10 then
		t:add_proto_expert_info(xm_short)
		pinfo.cols.info:append(" (cut short)")
		return len
	end
	t:add(xm.slot, tvb(2, 1))
	t:add(xm.reserved, tvb(3, 1))
	t:add(xm.reserved, tvb(4, 2))
	t:add(xm.gen, tvb(6, 4))
	local slot, gen = tvb(2, 1):uint(), tvb(6, 4):uint()
	t:append_text(string.format(": slot %d gen %d", slot, gen))
	pinfo.cols.info:append(string.format(" slot %d gen %d", slot, gen))
	if not body then
		if len > 10 then
			t:add(tvb(10), "Data of an unknown type")
		end
		return len
	end
	if len < need then
		t:add_proto_expert_info(xm_short)
		pinfo.cols.info:append(" (cut short)")
		return len
	end
	if mtype == 16 then
		t:add(xm.service, tvb(10, 2))
		t:add(xm.inst, tvb(12, 2))
		t:add(xm.method, tvb(14, 1))
		t:add(xm.move_state, tvb(15, 1))
		local ft = t:add(xm.s_flags, tvb(16, 1))
		ft:add(xm.s_start_out, tvb(16, 1))
		ft:add(xm.s_end_out, tvb(16, 1))
		ft:add(xm.s_src_gone, tvb(16, 1))
		ft:add(xm.s_exported, tvb(16, 1))
		t:add(xm.fail, tvb(17, 1))
		t:add(xm.copies, tvb(18, 8))
		t:add(xm.state_len, tvb(26, 8))
		t:add(xm.included, tvb(34, 4))
		t:add(xm.reserved, tvb(38, 4))
		local n, runs = xm_buckets(tvb(42, 128))
		t:add(xm.buckets, tvb(42, 128)):append_text(" (set: " .. (n > 0 and runs or "none") .. ")")
		t:add(xm.n_buckets, tvb(42, 128), n):set_generated()
		pinfo.cols.info:append(string.format(
			" service %d inst %d %s %s fail %s copies %s, %d buckets", tvb(10, 2):uint(),
			tvb(12, 2):uint(), xm_methods[tvb(14, 1):uint()] or "?",
			xm_states[tvb(15, 1):uint()] or "?", xm_fails[tvb(17, 1):uint()] or "?",
			tvb(18, 8):uint64(), n))
	elseif mtype == 17 then
		local n = tvb(18, 2):uint()
		t:add(xm.st_offset, tvb(10, 4))
		t:add(xm.st_total, tvb(14, 4))
		t:add(xm.st_len, tvb(18, 2))
		t:add(xm.reserved, tvb(20, 2))
		if n > 0 then
			t:add(xm.st_bytes, tvb(22, n))
		end
		pinfo.cols.info:append(string.format(" offset %d len %d of %d", tvb(10, 4):uint(), n,
			tvb(14, 4):uint()))
	elseif mtype == 18 then
		local first, count = tvb(10, 8):uint64(), tvb(18, 1):uint()
		t:add(xm.l_first, tvb(10, 8))
		t:add(xm.l_count, tvb(18, 1))
		t:add(xm.reserved, tvb(19, 3))
		t:add(xm.reserved, tvb(22, 4))
		for i = 0, count - 1 do
			local e = 26 + 40 * i
			local n_nd = tvb(e + 4, 4):uint()
			local seq = first + i
			local et = t:add(tvb(e, 40), string.format("Entry %s", seq))
			et:add(xm.l_seq, tvb(e, 40), seq):set_generated()
			local ft = et:add(xm.l_flags, tvb(e, 4))
			ft:add(xm.l_included, tvb(e, 4))
			ft:add(xm.l_dropped, tvb(e, 4))
			ft:add(xm.l_nd_over, tvb(e, 4))
			et:add(xm.l_n_nd, tvb(e + 4, 4))
			local vals = {}
			for k = 0, 3 do
				if k < n_nd then
					et:add(xm.l_nd, tvb(e + 8 + 8 * k, 8))
					table.insert(vals, tostring(tvb(e + 8 + 8 * k, 8):uint64()))
				else
					et:add(xm.l_unused, tvb(e + 8 + 8 * k, 8))
				end
			end
			local fl = tvb(e, 4):uint()
			local what = {}
			if fl % 2 == 1 then table.insert(what, "included") end
			if math.floor(fl / 2) % 2 == 1 then table.insert(what, "dropped") end
			if math.floor(fl / 4) % 2 == 1 then table.insert(what, "ND overflow") end
			et:append_text(string.format(": %s, ND [%s]",
				#what > 0 and table.concat(what, ", ") or "-", table.concat(vals, ", ")))
		end
		pinfo.cols.info:append(string.format(" entries %s..%s", first, first + count - 1))
	else
		local mt = t:add(xm.mirror_slot, tvb(10, 1))
		if tvb(10, 1):uint() == 255 then
			mt:append_text(" (refused)")
		end
		t:add(xm.move_state, tvb(11, 1))
		t:add(xm.fail, tvb(12, 1))
		local ft = t:add(xm.t_flags, tvb(13, 1))
		ft:add(xm.t_open, tvb(13, 1))
		ft:add(xm.t_imported, tvb(13, 1))
		ft:add(xm.t_lossy, tvb(13, 1))
		t:add(xm.nd_short, tvb(14, 4))
		for i, c in ipairs(xm_counters) do
			t:add(xm["c_" .. c[1]], tvb(18 + 8 * (i - 1), 8))
		end
		local ms = tvb(10, 1):uint()
		pinfo.cols.info:append(string.format(" mirror %s %s fail %s, %s bytes, log next %s",
			ms == 255 and "refused" or tostring(ms), xm_states[tvb(11, 1):uint()] or "?",
			xm_fails[tvb(12, 1):uint()] or "?", tvb(18, 8):uint64(), tvb(26, 8):uint64()))
	end
	if len > need then
		t:add(xm.padding, tvb(need))
	end
	return len
end

function shim.dissector(tvb, pinfo, tree)
	if tvb:len() >= 1 and tvb(0, 1):uint() == 2 then
		return dissect_ftc(tvb, pinfo, tree)
	end
	if tvb:len() >= 1 and tvb(0, 1):uint() == 3 then
		return dissect_xfer(tvb, pinfo, tree)
	end
	if tvb:len() >= 1 and tvb(0, 1):uint() == 4 then
		return dissect_xmove(tvb, pinfo, tree)
	end
	if tvb:len() < 12 then
		return 0
	end
	local t = tree:add(shim, tvb(0, 12))
	t:add(sf.version, tvb(0, 1))
	local ft = t:add(sf.flags, tvb(1, 1))
	ft:add(sf.replay, tvb(1, 1))
	t:add(sf.inner, tvb(2, 2))
	t:add(sf.ts, tvb(4, 8))
	t:append_text(string.format(", ts %s", tvb(4, 8):uint64()))
	local inner = tvb(2, 2):uint()
	if tvb:len() > 12 then
		ethertype:try(inner, tvb(12):tvb(), pinfo, tree)
	end
	return tvb:len()
end

---------------------------------------------------------------- 0x88B6 RSync
local rsync = Proto("reinforce_rsync", "REINFORCE RSync")
local types = {
	[1] = "PREPARE", [2] = "VOTE", [3] = "COMMIT", [4] = "ACK", [5] = "ABORT",
	[6] = "CHECKPOINT", [7] = "LOG_TRIM", [8] = "REPLAY_START", [9] = "REPLAY_END",
	[10] = "HEARTBEAT", [11] = "REPLAY_ACK", [12] = "REPLAY_CANCEL", [13] = "PROTECT",
}
local roles = { [1] = "predecessor", [2] = "primary", [3] = "standby" }
local regions = { [0xFFFF] = "META", [0xFFFE] = "TxTs", [512] = "window layout" }
local rf = {
	version = ProtoField.uint8("reinforce_rsync.version", "Version"),
	type = ProtoField.uint8("reinforce_rsync.type", "Type", base.DEC, types),
	flags = ProtoField.uint8("reinforce_rsync.flags", "Flags", base.HEX),
	f_hmac = ProtoField.bool("reinforce_rsync.flags.hmac", "HMAC", 8, nil, 0x01),
	f_retrans = ProtoField.bool("reinforce_rsync.flags.retrans", "Retransmission", 8, nil, 0x02),
	f_full = ProtoField.bool("reinforce_rsync.flags.full", "Full cut", 8, nil, 0x04),
	f_resync = ProtoField.bool("reinforce_rsync.flags.resync", "Resync asked", 8, nil, 0x08),
	key_id = ProtoField.uint8("reinforce_rsync.key_id", "Key id"),
	chain = ProtoField.uint16("reinforce_rsync.chain", "Chain id"),
	len = ProtoField.uint16("reinforce_rsync.len", "Payload length"),
	epoch = ProtoField.uint32("reinforce_rsync.epoch", "Epoch"),
	crc = ProtoField.uint32("reinforce_rsync.crc", "CRC32C", base.HEX),
	txid = ProtoField.uint64("reinforce_rsync.txid", "Transaction id"),
	seq = ProtoField.uint16("reinforce_rsync.frag_seq", "Fragment sequence"),
	count = ProtoField.uint16("reinforce_rsync.frag_count", "Fragment count"),
	region = ProtoField.uint16("reinforce_rsync.region", "Region", base.DEC, regions),
	role = ProtoField.uint8("reinforce_rsync.role", "Sender role", base.DEC, roles),
	reserved = ProtoField.uint8("reinforce_rsync.reserved", "Reserved"),
	offset = ProtoField.uint64("reinforce_rsync.offset", "Offset"),
	sender_run = ProtoField.uint64("reinforce_rsync.sender_run", "Sender run", base.HEX),
	receiver_run = ProtoField.uint64("reinforce_rsync.receiver_run", "Receiver run", base.HEX),
	prev = ProtoField.uint64("reinforce_rsync.meta.prev_txid", "Previous transaction"),
	cut_id = ProtoField.uint64("reinforce_rsync.meta.cut_id", "Cut id"),
	cut_ts = ProtoField.uint64("reinforce_rsync.meta.cut_ts", "Cut timestamp"),
	nd_cut = ProtoField.uint64("reinforce_rsync.meta.nd_cut", "Cut awaited (ND)"),
	entries = ProtoField.uint32("reinforce_rsync.meta.txts_entries", "TxTs entries"),
	state_frags = ProtoField.uint32("reinforce_rsync.meta.state_frags", "State fragments"),
	state_bytes = ProtoField.uint64("reinforce_rsync.meta.state_bytes", "State bytes"),
	pkts = ProtoField.uint32("reinforce_rsync.meta.pkts", "Packets"),
	meta_reserved = ProtoField.uint32("reinforce_rsync.meta.reserved", "Reserved"),
	clock = ProtoField.uint64("reinforce_rsync.meta.clock", "Chain clock (ns)"),
	t_src = ProtoField.ipv4("reinforce_rsync.txts.src", "Source"),
	t_dst = ProtoField.ipv4("reinforce_rsync.txts.dst", "Destination"),
	t_sport = ProtoField.uint16("reinforce_rsync.txts.sport", "Source port"),
	t_dport = ProtoField.uint16("reinforce_rsync.txts.dport", "Destination port"),
	t_proto = ProtoField.uint8("reinforce_rsync.txts.proto", "Protocol"),
	t_ts = ProtoField.uint64("reinforce_rsync.txts.ts", "Highest released timestamp"),
	rec_region = ProtoField.uint16("reinforce_rsync.rec.region", "Region", base.DEC, regions),
	rec_len = ProtoField.uint16("reinforce_rsync.rec.len", "Length"),
	rec_offset = ProtoField.uint64("reinforce_rsync.rec.offset", "Offset in the region"),
	state = ProtoField.bytes("reinforce_rsync.state", "State bytes"),
	through = ProtoField.uint64("reinforce_rsync.abort.through", "Through transaction"),
	watermark = ProtoField.uint64("reinforce_rsync.trim.watermark", "Watermark"),
	after_ts = ProtoField.uint64("reinforce_rsync.replay.after_ts", "Replay after timestamp"),
	newest_ts = ProtoField.uint64("reinforce_rsync.replay.newest_ts", "Newest logged timestamp"),
	last_ts = ProtoField.uint64("reinforce_rsync.replay.last_ts", "Last replayed timestamp"),
	rcount = ProtoField.uint64("reinforce_rsync.replay.count", "Packets replayed"),
	hb_txid = ProtoField.uint64("reinforce_rsync.heartbeat.txid", "Transaction"),
	hb_cut = ProtoField.uint64("reinforce_rsync.heartbeat.cut_ts", "Cut timestamp"),
	ack_next = ProtoField.uint64("reinforce_rsync.replay_ack.next_ts", "Next timestamp expected"),
	ack_gap = ProtoField.uint64("reinforce_rsync.replay_ack.gap_ts", "Gap seen at"),
	hmac = ProtoField.bytes("reinforce_rsync.hmac", "HMAC-SHA256"),
}
local list = {}
for _, f in pairs(rf) do
	table.insert(list, f)
end
rsync.fields = list

local function payload(t, p, mtype, region)
	local len = p:len()
	if mtype == 1 and region == 0xFFFF and len >= 64 then
		t:add(rf.prev, p(0, 8))
		t:add(rf.cut_id, p(8, 8))
		t:add(rf.cut_ts, p(16, 8))
		t:add(rf.nd_cut, p(24, 8))
		t:add(rf.entries, p(32, 4))
		t:add(rf.state_frags, p(36, 4))
		t:add(rf.state_bytes, p(40, 8))
		t:add(rf.pkts, p(48, 4))
		t:add(rf.meta_reserved, p(52, 4))
		t:add(rf.clock, p(56, 8))
	elseif mtype == 1 and region == 0xFFFE then
		for off = 0, len - 24, 24 do
			local e = t:add(p(off, 24), "TxTs entry")
			e:add(rf.t_src, p(off, 4))
			e:add(rf.t_dst, p(off + 4, 4))
			e:add(rf.t_sport, p(off + 8, 2))
			e:add(rf.t_dport, p(off + 10, 2))
			e:add(rf.t_proto, p(off + 12, 1))
			e:add(rf.t_ts, p(off + 16, 8))
		end
	elseif mtype == 6 and len > 0 then
		-- state records: region (2), length (2), offset (8), bytes
		local off = 0
		while off + 12 <= len do
			local n = p(off + 2, 2):uint()
			local r = t:add(p(off, math.min(len - off, 12 + n)), "State record")
			r:add(rf.rec_region, p(off, 2))
			r:add(rf.rec_len, p(off + 2, 2))
			r:add(rf.rec_offset, p(off + 4, 8))
			if n > 0 and off + 12 + n <= len then
				r:add(rf.state, p(off + 12, n))
			end
			off = off + 12 + n
		end
	elseif mtype == 5 and len >= 8 then
		t:add(rf.through, p(0, 8))
	elseif mtype == 7 and len >= 8 then
		t:add(rf.watermark, p(0, 8))
	elseif mtype == 8 and len >= 16 then
		t:add(rf.after_ts, p(0, 8))
		t:add(rf.newest_ts, p(8, 8))
	elseif mtype == 9 and len >= 16 then
		t:add(rf.last_ts, p(0, 8))
		t:add(rf.rcount, p(8, 8))
	elseif mtype == 10 and len >= 16 then
		t:add(rf.hb_txid, p(0, 8))
		t:add(rf.hb_cut, p(8, 8))
	elseif mtype == 11 and len >= 16 then
		t:add(rf.ack_next, p(0, 8))
		t:add(rf.ack_gap, p(8, 8))
	end
end

function rsync.dissector(tvb, pinfo, tree)
	local hlen = 56
	if tvb:len() < hlen then
		return 0
	end
	pinfo.cols.protocol = "RSync"
	local mtype = tvb(1, 1):uint()
	local flags = tvb(2, 1):uint()
	local plen = tvb(6, 2):uint()
	local region = tvb(28, 2):uint()
	local t = tree:add(rsync, tvb(0, math.min(tvb:len(), hlen + plen)))
	t:add(rf.version, tvb(0, 1))
	t:add(rf.type, tvb(1, 1))
	local ft = t:add(rf.flags, tvb(2, 1))
	ft:add(rf.f_hmac, tvb(2, 1))
	ft:add(rf.f_retrans, tvb(2, 1))
	ft:add(rf.f_full, tvb(2, 1))
	ft:add(rf.f_resync, tvb(2, 1))
	t:add(rf.key_id, tvb(3, 1))
	t:add(rf.chain, tvb(4, 2))
	t:add(rf.len, tvb(6, 2))
	t:add(rf.epoch, tvb(8, 4))
	t:add(rf.crc, tvb(12, 4))
	t:add(rf.txid, tvb(16, 8))
	t:add(rf.seq, tvb(24, 2))
	t:add(rf.count, tvb(26, 2))
	t:add(rf.region, tvb(28, 2))
	t:add(rf.role, tvb(30, 1))
	t:add(rf.reserved, tvb(31, 1))
	t:add(rf.offset, tvb(32, 8))
	t:add(rf.sender_run, tvb(40, 8))
	t:add(rf.receiver_run, tvb(48, 8))
	local name = types[mtype] or "unknown"
	pinfo.cols.info = string.format("%s from %s chain %d epoch %d txid %s frag %d/%d", name,
		roles[tvb(30, 1):uint()] or "?", tvb(4, 2):uint(), tvb(8, 4):uint(),
		tvb(16, 8):uint64(), tvb(24, 2):uint(), tvb(26, 2):uint())
	t:append_text(", " .. name)
	if tvb:len() >= hlen + plen and plen > 0 then
		payload(t, tvb(hlen, plen):tvb(), mtype, region)
	end
	if flags % 2 == 1 and tvb:len() >= hlen + plen + 32 then
		t:add(rf.hmac, tvb(hlen + plen, 32))
	end
	return tvb:len()
end

ethertype:add(0x88B5, shim)
ethertype:add(0x88B6, rsync)
