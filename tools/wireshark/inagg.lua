-- inagg.lua: a Wireshark / tshark dissector for inagg, in-network aggregation of gradients.
--
-- Install: copy this file into ~/.local/lib/wireshark/plugins/ (Wireshark 3.x and later; see README.md beside it),
-- or load it for one run: tshark -X lua_script:tools/wireshark/inagg.lua -r capture.pcap
--
-- The wire format is docs/wire-format.md (org.inagg.wire.InaggHeader); PARTIAL is org.inagg.p4.esa.EsaWire. Every
-- inagg message is the payload of one UDP datagram: a 20-byte header in network byte order, then Element Count int32
-- lanes (a PARTIAL's Element Count counts its lanes and its worker bitmap words).
--
--   0                   1                   2                   3
--   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
--  +-------+-------+---------------+-------------------------------+
--  |Version| Type  |     Flags     |            Job Id             |  0
--  +-------+-------+---------------+-------------------------------+
--  |           Worker Id           |S|         Slot Index          |  4
--  +-------------------------------+-------------------------------+
--  |                           Sequence                            |  8
--  +-------------------------------+---------------+---------------+
--  |         Element Count         | Block Exponent| Next Exponent | 12
--  +---------------+---------------+---------------+---------------+
--  |   Priority    |    Status     |           Reserved            | 16
--  +---------------+---------------+-------------------------------+
--  |                     Element 0 (int32)                   ...   | 20
--  +---------------------------------------------------------------+
--
-- Registered on UDP ports 47000 (the inagg port of the P4 programs), 9000 (`inagg switch`) and 9100 (`inagg ps`),
-- changeable with the preference inagg.ports (tshark -o inagg.ports:5000,5001); usable with "Decode As" on any port
-- (tshark -d udp.port==5000,inagg); and as a heuristic on every UDP port, accepting a datagram whose version is 1,
-- whose type is known and whose length is exactly 20 + 4 x Element Count.
--
-- Written for the Lua of Wireshark 3.x to 4.x (Lua 5.1 to 5.4): no bit operators, only arithmetic and field masks.

local inagg = Proto("inagg", "inagg: in-network aggregation")

local HEADER_LENGTH = 20
local VERSION = 1
local NO_EXPONENT = -128

-- Type (org.inagg.wire.MessageType, org.inagg.p4.esa.EsaWire.TYPE_PARTIAL)
local AGGREGATE, JOIN, JOIN_ACK, REJECT, PARTIAL = 1, 2, 3, 4, 5
local TYPE_NAMES = {
    [AGGREGATE] = "AGGREGATE",
    [JOIN] = "JOIN",
    [JOIN_ACK] = "JOIN_ACK",
    [REJECT] = "REJECT",
    [PARTIAL] = "PARTIAL",
}
-- Status of a REJECT (org.inagg.wire.RejectReason)
local REJECT_REASONS = {
    [1] = "UNKNOWN_JOB",
    [2] = "WORKER_ID_OUT_OF_RANGE",
    [3] = "WORKER_COUNT_MISMATCH",
    [4] = "STALE_SESSION",
    [5] = "UNSUPPORTED_COLLECTIVE",
}
local REJECT_MEANINGS = {
    [1] = "the switch has no such job",
    [2] = "the worker id is not below the job's worker count",
    [3] = "the worker count differs from the job's on the switch",
    [4] = "the job is in another session (it was restarted)",
    [5] = "the node does not carry this collective or reduce op",
}
-- Status of an AGGREGATE forwarded raw to the parameter server, or of a PARTIAL (org.inagg.p4.esa.EsaWire.REASON_*)
local ESA_REASONS = {
    [1] = "COLLISION",
    [2] = "RETRANSMIT",
    [3] = "TOMBSTONE",
    [4] = "PREEMPTED",
    [5] = "FLUSHED",
    [6] = "COMPLETE",
    [7] = "STALE",
    [8] = "SUBTREE",
}

local f = {
    version = ProtoField.uint8("inagg.version", "Version", base.DEC, nil, 0xF0, "Header version; 1"),
    type = ProtoField.uint8("inagg.type", "Type", base.DEC, TYPE_NAMES, 0x0F, "Message type"),
    flags = ProtoField.uint8("inagg.flags", "Flags", base.HEX, nil, nil, "Flag bits"),
    flags_result = ProtoField.bool("inagg.flags.result", "RESULT", 8,
        { "from the switch (a sum, JOIN_ACK, REJECT)", "not from the switch" }, 0x01,
        "0x01: switch (or parameter server) to worker"),
    flags_retransmit = ProtoField.bool("inagg.flags.retransmit", "RETRANSMIT", 8,
        { "a retransmission", "first transmission" }, 0x02, "0x02: sent again after a timeout"),
    flags_int32 = ProtoField.bool("inagg.flags.int32", "INT32", 8,
        { "raw int32 lanes, no exponents", "fixed-point lanes scaled by the block exponent" }, 0x04,
        "0x04: lanes are raw int32"),
    flags_unused = ProtoField.uint8("inagg.flags.unused", "Unused flag bits", base.HEX, nil, 0xF8,
        "0xF8: no meaning yet; zero"),
    job = ProtoField.uint16("inagg.job", "Job Id", base.DEC, nil, nil, "Job the message belongs to"),
    worker = ProtoField.uint16("inagg.worker", "Worker Id", base.DEC, nil, nil,
        "Sender (worker to switch) or destination (switch to worker)"),
    slot_field = ProtoField.uint16("inagg.slot_field", "Slot field", base.HEX, nil, nil,
        "Shadow copy bit and slot index"),
    copy = ProtoField.uint16("inagg.copy", "Shadow copy (S)", base.DEC, nil, 0x8000,
        "Which of the slot's two copies: consecutive rounds of a slot alternate"),
    slot = ProtoField.uint16("inagg.slot", "Slot Index", base.DEC, nil, 0x7FFF, "Aggregator slot in the job's pool"),
    seq = ProtoField.uint32("inagg.seq", "Sequence", base.DEC, nil, nil,
        "Position of the packet in the job's stream (serial-number arithmetic)"),
    count = ProtoField.uint16("inagg.count", "Element Count", base.DEC, nil, nil,
        "int32 words that follow the header"),
    block_exponent = ProtoField.int8("inagg.block_exponent", "Block Exponent", base.DEC, nil, nil,
        "Agreed exponent the lanes were scaled with; -128 (0x80) NO_EXPONENT"),
    next_exponent = ProtoField.int8("inagg.next_exponent", "Next Exponent", base.DEC, nil, nil,
        "Sender's exponent of the block that next uses this slot (max-reduced); -128 (0x80) NO_EXPONENT"),
    priority = ProtoField.uint8("inagg.priority", "Priority", base.DEC, nil, nil,
        "Scheduling priority for shared switch memory (0 = lowest)"),
    status = ProtoField.uint8("inagg.status", "Status", base.DEC, nil, nil,
        "Reason code: of a REJECT, of a PARTIAL, of an AGGREGATE forwarded to the parameter server"),
    reserved = ProtoField.uint16("inagg.reserved", "Reserved", base.DEC, nil, nil,
        "Session of an AGGREGATE, JOIN, REJECT or PARTIAL; lanes per packet in a JOIN_ACK"),
    session = ProtoField.uint16("inagg.session", "Session", base.DEC, nil, nil,
        "The job's run this message belongs to (AGGREGATE, REJECT, PARTIAL), asks for (JOIN; 0 = any) or grants "
            .. "(JOIN_ACK)"),
    incarnation = ProtoField.uint32("inagg.join.incarnation", "Incarnation", base.HEX, nil, nil,
        "JOIN: the worker process's random number (bytes 14-17); another one for a joined worker id is a restart"),
    credential = ProtoField.uint64("inagg.join.credential", "JOIN credential", base.HEX, nil, nil,
        "JOIN: the worker's secret (its 2 lanes, high word first) that the switch compares (docs/security.md)"),
    stale_cause = ProtoField.int32("inagg.reject.rejoined_worker", "Rejoined worker", base.DEC, nil, nil,
        "REJECT STALE_SESSION: the worker whose rejoin started the current session; -1 = the control plane"),
    join_workers = ProtoField.uint32("inagg.join.workers", "Worker count (as configured)", base.DEC, nil, nil,
        "JOIN: the worker count the worker was started with (Sequence)"),
    ack_workers = ProtoField.uint32("inagg.ack.workers", "Job's worker count", base.DEC, nil, nil,
        "JOIN_ACK: workers in the job (Sequence)"),
    ack_slots = ProtoField.uint16("inagg.ack.slots", "Job's slots (window)", base.DEC, nil, 0x7FFF,
        "JOIN_ACK: slots in the job's pool (Slot Index)"),
    ack_lanes = ProtoField.uint16("inagg.ack.lanes", "Lanes per packet", base.DEC, nil, nil,
        "JOIN_ACK: lanes per packet of the job (Reserved)"),
    reject_reason = ProtoField.uint8("inagg.reject.reason", "Reject reason", base.DEC, REJECT_REASONS, nil,
        "REJECT: why the join was refused (Status)"),
    esa_reason = ProtoField.uint8("inagg.esa.reason", "ESA reason", base.DEC, ESA_REASONS, nil,
        "Why an ESA switch sent this to the parameter server (Status)"),
    bitmap_words = ProtoField.uint16("inagg.partial.bitmap_words", "Bitmap words", base.DEC, nil, nil,
        "PARTIAL: how many of the Element Count words are the worker bitmap (Worker Id)"),
    partial_lanes = ProtoField.uint16("inagg.partial.lanes", "Lanes", base.DEC, nil, nil,
        "PARTIAL: Element Count less the bitmap words (and the Owner word)"),
    partial_owner = ProtoField.uint32("inagg.partial.owner", "Owner", base.DEC, nil, nil,
        "PARTIAL of a REDUCE_SCATTER or ALL_GATHER (Flags bits 3-4 not 0): its last word, the round's Owner"),
    lanes = ProtoField.none("inagg.lanes", "Lanes", "The int32 lanes"),
    lane = ProtoField.int32("inagg.lane", "Lane", base.DEC, nil, nil, "One int32 lane"),
    bitmap = ProtoField.none("inagg.partial.bitmap", "Worker bitmap", "PARTIAL: bit (w mod 32) of word (w / 32)"),
    bitmap_word = ProtoField.uint32("inagg.partial.bitmap_word", "Bitmap word", base.HEX, nil, nil,
        "32 workers: bit i of word k is worker 32k + i"),
    bitmap_worker = ProtoField.uint32("inagg.partial.worker", "Worker", base.DEC, nil, nil,
        "A worker whose contribution the partial holds"),
    trailing = ProtoField.bytes("inagg.trailing", "Bytes past the element count", base.NONE,
        "Bytes after 20 + 4 x Element Count"),
    truncated_header = ProtoField.bytes("inagg.truncated_header", "Truncated header", base.NONE,
        "Fewer than 20 bytes"),
}
inagg.fields = f

local e = {
    truncated = ProtoExpert.new("inagg.malformed.truncated", "Truncated inagg header",
        expert.group.MALFORMED, expert.severity.ERROR),
    version = ProtoExpert.new("inagg.malformed.version", "Unknown inagg version",
        expert.group.MALFORMED, expert.severity.ERROR),
    length = ProtoExpert.new("inagg.malformed.length", "UDP payload length is not 20 + 4 x Element Count",
        expert.group.MALFORMED, expert.severity.ERROR),
    past_frame = ProtoExpert.new("inagg.malformed.count_past_frame", "Element Count reaches past the end of the frame",
        expert.group.MALFORMED, expert.severity.ERROR),
    type = ProtoExpert.new("inagg.malformed.type", "Unknown inagg message type",
        expert.group.MALFORMED, expert.severity.ERROR),
    bitmap = ProtoExpert.new("inagg.malformed.bitmap", "PARTIAL has more bitmap words than Element Count",
        expert.group.MALFORMED, expert.severity.ERROR),
    retransmit = ProtoExpert.new("inagg.retransmission", "Retransmission",
        expert.group.SEQUENCE, expert.severity.NOTE),
    rejected = ProtoExpert.new("inagg.rejected", "Join rejected",
        expert.group.RESPONSE_CODE, expert.severity.WARN),
}
inagg.experts = e

local DEFAULT_PORTS = "47000,9000,9100"
inagg.prefs.ports = Pref.range("UDP ports", DEFAULT_PORTS,
    "UDP ports decoded as inagg: 47000 (the inagg port), 9000 (inagg switch), 9100 (inagg ps)", 65535)
inagg.prefs.max_lanes = Pref.uint("Lanes shown", 4096,
    "Most lanes listed in the tree per message (filters on inagg.lane see only those)")

local function bit_set(value, bit)
    return math.floor(value / 2 ^ bit) % 2 == 1
end

local function name_of(names, value)
    return names[value] or ("unknown " .. value)
end

-- Adds the int32 lanes (count of them from offset) under a subtree.
local function add_lanes(tvb, tree, offset, count, label)
    local available = math.floor((tvb:len() - offset) / 4)
    local shown = math.min(count, available, inagg.prefs.max_lanes)
    if count <= 0 then
        return
    end
    local range = tvb(offset, math.min(count, available) * 4)
    local lanes = tree:add(f.lanes, range)
    lanes:set_text(string.format("%s (%d x int32%s)", label, count,
        shown < count and (", " .. shown .. " shown") or ""))
    for i = 0, shown - 1 do
        local lane = tvb(offset + 4 * i, 4)
        lanes:add(f.lane, lane):set_text(string.format("[%d] %d", i, lane:int()))
    end
end

local function add_bitmap(tvb, tree, offset, words)
    local available = math.floor((tvb:len() - offset) / 4)
    local n = math.min(words, available)
    if n <= 0 then
        return
    end
    local bitmap = tree:add(f.bitmap, tvb(offset, 4 * n))
    local workers = {}
    for k = 0, n - 1 do
        local range = tvb(offset + 4 * k, 4)
        local word = range:uint()
        local item = bitmap:add(f.bitmap_word, range)
        item:set_text(string.format("Word %d (workers %d-%d): 0x%08x", k, 32 * k, 32 * k + 31, word))
        for b = 0, 31 do
            if bit_set(word, b) then
                item:add(f.bitmap_worker, range, 32 * k + b):set_generated()
                workers[#workers + 1] = tostring(32 * k + b)
            end
        end
    end
    bitmap:set_text(string.format("Worker bitmap (%d words): workers %s", n,
        #workers > 0 and table.concat(workers, ", ") or "none"))
end

local function add_exponent(tree, field, range)
    local item = tree:add(field, range)
    if range:int() == NO_EXPONENT then
        item:append_text(" (0x80, NO_EXPONENT: none)")
    end
end

local function dissect(tvb, pinfo, tree)
    local length = tvb:reported_len()
    local captured = tvb:len()
    pinfo.cols.protocol = "inagg"
    local root = tree:add(inagg, tvb())

    if length < HEADER_LENGTH or captured < HEADER_LENGTH then
        root:add(f.truncated_header, tvb())
        root:add_proto_expert_info(e.truncated, string.format(
            "Truncated inagg header: %d bytes, the header is %d", length, HEADER_LENGTH))
        pinfo.cols.info = string.format("inagg truncated header (%d bytes) [Malformed]", length)
        return captured
    end

    local version = tvb(0, 1):bitfield(0, 4)
    local mtype = tvb(0, 1):bitfield(4, 4)
    root:add(f.version, tvb(0, 1))
    if version ~= VERSION then
        root:add(f.type, tvb(0, 1))
        root:add_proto_expert_info(e.version, string.format(
            "Unknown inagg version %d (expected %d): the other fields are not decoded", version, VERSION))
        pinfo.cols.info = string.format("inagg version %d [Malformed]", version)
        return captured
    end
    local type_item = root:add(f.type, tvb(0, 1))

    local flags_range = tvb(1, 1)
    local flags = flags_range:uint()
    local flags_item = root:add(f.flags, flags_range)
    flags_item:add(f.flags_result, flags_range)
    flags_item:add(f.flags_retransmit, flags_range)
    flags_item:add(f.flags_int32, flags_range)
    flags_item:add(f.flags_unused, flags_range)
    local flag_names = {}
    if bit_set(flags, 0) then flag_names[#flag_names + 1] = "RESULT" end
    if bit_set(flags, 1) then flag_names[#flag_names + 1] = "RETRANSMIT" end
    if bit_set(flags, 2) then flag_names[#flag_names + 1] = "INT32" end
    if flags >= 8 then flag_names[#flag_names + 1] = string.format("0x%02x", flags - flags % 8) end
    flags_item:append_text(#flag_names > 0 and (" (" .. table.concat(flag_names, ", ") .. ")") or " (none)")

    local job = tvb(2, 2):uint()
    root:add(f.job, tvb(2, 2))
    local worker = tvb(4, 2):uint()
    local worker_item = root:add(f.worker, tvb(4, 2))
    local slot_range = tvb(6, 2)
    local copy = slot_range:bitfield(0, 1)
    local slot = slot_range:bitfield(1, 15)
    local slot_item = root:add(f.slot_field, slot_range)
    slot_item:append_text(string.format(" (slot %d, copy %d)", slot, copy))
    slot_item:add(f.copy, slot_range)
    slot_item:add(f.slot, slot_range)
    local sequence = tvb(8, 4):uint()
    local seq_item = root:add(f.seq, tvb(8, 4))
    local count = tvb(12, 2):uint()
    local count_item = root:add(f.count, tvb(12, 2))
    local block_exponent = tvb(14, 1):int()
    local next_exponent = tvb(15, 1):int()
    add_exponent(root, f.block_exponent, tvb(14, 1))
    add_exponent(root, f.next_exponent, tvb(15, 1))
    root:add(f.priority, tvb(16, 1))
    local status = tvb(17, 1):uint()
    local status_item = root:add(f.status, tvb(17, 1))
    local reserved = tvb(18, 2):uint()
    local reserved_item = root:add(f.reserved, tvb(18, 2))

    local expected = HEADER_LENGTH + 4 * count
    if expected ~= length then
        count_item:add_proto_expert_info(e.length, string.format(
            "UDP payload is %d bytes but 20 + 4 x Element Count (%d) = %d", length, count, expected))
    end
    if expected > length then
        count_item:add_proto_expert_info(e.past_frame, string.format(
            "Element Count %d reaches past the end of the frame: room for %d int32 words",
            count, math.floor((length - HEADER_LENGTH) / 4)))
    end

    local type_name = TYPE_NAMES[mtype]
    local info = string.format("%s job=%d", type_name or ("type " .. mtype), job)
    if mtype == AGGREGATE then
        info = info .. string.format(" worker=%d slot=%d copy=%d seq=%d n=%d", worker, slot, copy, sequence, count)
        if count > 0 and block_exponent ~= NO_EXPONENT and not bit_set(flags, 2) then
            info = info .. string.format(" exp=%d", block_exponent)
        end
        if next_exponent ~= NO_EXPONENT then
            info = info .. string.format(" next=%d", next_exponent)
        end
        if status ~= 0 then
            status_item:add(f.esa_reason, tvb(17, 1))
            info = info .. " raw:" .. name_of(ESA_REASONS, status)
        end
        reserved_item:add(f.session, tvb(18, 2))
        info = info .. string.format(" session=%d", reserved)
        add_lanes(tvb, root, HEADER_LENGTH, count, "Lanes")
    elseif mtype == JOIN then
        seq_item:add(f.join_workers, tvb(8, 4))
        reserved_item:add(f.session, tvb(18, 2))
        root:add(f.incarnation, tvb(14, 4))
        info = info .. string.format(" worker=%d workers=%d session=%d", worker, sequence, reserved)
        if count == 2 and tvb:len() >= HEADER_LENGTH + 8 then
            root:add(f.credential, tvb(HEADER_LENGTH, 8))
            info = info .. " credential"
        end
        add_lanes(tvb, root, HEADER_LENGTH, count, "Elements")
    elseif mtype == JOIN_ACK then
        seq_item:add(f.ack_workers, tvb(8, 4))
        slot_item:add(f.ack_slots, slot_range)
        reserved_item:add(f.ack_lanes, tvb(18, 2))
        root:add(f.session, tvb(16, 2))
        info = info .. string.format(" worker=%d workers=%d slots=%d lanes=%d session=%d", worker, sequence, slot,
            reserved, tvb(16, 2):uint())
        add_lanes(tvb, root, HEADER_LENGTH, count, "Elements")
    elseif mtype == REJECT then
        status_item:add(f.reject_reason, tvb(17, 1))
        reserved_item:add(f.session, tvb(18, 2))
        if status == 4 then
            seq_item:add(f.stale_cause, tvb(8, 4))
        end
        root:add_proto_expert_info(e.rejected, string.format("Worker %d of job %d rejected: %s (%s)",
            worker, job, name_of(REJECT_REASONS, status), REJECT_MEANINGS[status] or "unknown reason code"))
        info = info .. string.format(" worker=%d reason=%s session=%d", worker, name_of(REJECT_REASONS, status),
            reserved)
        add_lanes(tvb, root, HEADER_LENGTH, count, "Elements")
    elseif mtype == PARTIAL then
        -- Worker Id holds the bitmap's word count, Reserved the session of the block's job (EsaWire).
        worker_item:add(f.bitmap_words, tvb(4, 2))
        status_item:add(f.esa_reason, tvb(17, 1))
        reserved_item:add(f.session, tvb(18, 2))
        -- A REDUCE_SCATTER or ALL_GATHER PARTIAL (collective, Flags bits 3-4, not 0) ends with its Owner word.
        local owner_words = (math.floor(flags / 8) % 4 ~= 0) and 1 or 0
        local lanes = count - worker - owner_words
        if lanes < 0 then
            worker_item:add_proto_expert_info(e.bitmap, string.format(
                "%d bitmap words but Element Count is %d", worker, count))
            lanes = 0
        end
        root:add(f.partial_lanes, tvb(12, 2), lanes):set_generated()
        info = info .. string.format(" session=%d slot=%d copy=%d seq=%d lanes=%d reason=%s", reserved, slot,
            copy, sequence, lanes, name_of(ESA_REASONS, status))
        add_lanes(tvb, root, HEADER_LENGTH, lanes, "Lane sums")
        add_bitmap(tvb, root, HEADER_LENGTH + 4 * lanes, math.min(worker, count))
        local owner_at = HEADER_LENGTH + 4 * (count - 1)
        if owner_words == 1 and count > worker and owner_at + 4 <= tvb:len() then
            root:add(f.partial_owner, tvb(owner_at, 4))
        end
    else
        type_item:add_proto_expert_info(e.type, string.format(
            "Unknown inagg message type %d (known: 1 AGGREGATE, 2 JOIN, 3 JOIN_ACK, 4 REJECT, 5 PARTIAL)", mtype))
        add_lanes(tvb, root, HEADER_LENGTH, count, "Elements")
    end
    if expected < length and captured > expected then
        root:add(f.trailing, tvb(expected, captured - expected))
    end

    if #flag_names > 0 then
        info = info .. " [" .. table.concat(flag_names, ",") .. "]"
    end
    if bit_set(flags, 1) then
        flags_item:add_proto_expert_info(e.retransmit, string.format(
            "Retransmission of job %d slot %d seq %d", job, slot, sequence))
    end
    if expected ~= length or not type_name or (mtype == PARTIAL and worker > count) then
        info = info .. " [Malformed]"
    end
    pinfo.cols.info = info
    root:append_text(string.format(", %s, job %d", type_name or ("type " .. mtype), job))
    return captured
end

function inagg.dissector(tvb, pinfo, tree)
    return dissect(tvb, pinfo, tree)
end

-- Heuristic on any UDP port: version 1, a known type, and exactly 20 + 4 x Element Count bytes.
local function heuristic(tvb, pinfo, tree)
    if tvb:len() < HEADER_LENGTH then
        return false
    end
    local first = tvb(0, 1):uint()
    local mtype = first % 16
    if math.floor(first / 16) ~= VERSION or TYPE_NAMES[mtype] == nil then
        return false
    end
    if tvb:reported_len() ~= HEADER_LENGTH + 4 * tvb(12, 2):uint() then
        return false
    end
    dissect(tvb, pinfo, tree)
    return true
end
inagg:register_heuristic("udp", heuristic)

local udp_port = DissectorTable.get("udp.port")
local registered_ports = DEFAULT_PORTS
udp_port:add(registered_ports, inagg)
udp_port:add_for_decode_as(inagg)

function inagg.prefs_changed()
    if inagg.prefs.ports ~= registered_ports then
        udp_port:remove(registered_ports, inagg)
        registered_ports = inagg.prefs.ports
        udp_port:add(registered_ports, inagg)
    end
end
