-- describe.lua: read one .t7 file with real Lua Torch (torch.DiskFile + File:readObject, what torch.load
-- does, with the mode, longSize and byte order torch.load does not expose) and write what it returned as a
-- flat graph, for run.py to turn into the canonical description (spec/canonical.md#canonical-t7-values).
--
--   luajit describe.lua FILE BLOBS [mode=binary|ascii] [long=4|8] [order=little|big] [max=N]
--
-- stdout: JSON lines.  One line per composite value Lua returned ({"n": k, "k": kind, ...}), then one last
-- line: {"top": [VALUE...]} when every object of the stream was read, or {"error": msg, "read": n} when
-- readObject raised a Lua error after n objects, or {"decline": why} for a value the description has no
-- form for here.  A VALUE is {"nil":1}, {"b":bool}, {"d":"<16 hex digits: the double's bits>"},
-- {"s":"<hex of the bytes>"} or {"n":k} (node k).  Element bytes (a storage's, a tensor's logical elements
-- through clone()) are written to BLOBS as they are in memory, in the machine's (little) byte order, and
-- named as [offset, length].  Exit 0 in every case the script itself finished: a Lua error of the reader
-- is data, a signal is the reader's crash.
--
-- One file per process (harness/readers.py runs each case in its own process); read_file() and
-- describe() hold no global state, so a loop over requests only needs to call them again.
require 'torch'
for _, m in ipairs({'nn', 'nngraph', 'tds'}) do pcall(require, m) end  -- classes a file may name
local ffi = require 'ffi'

local M = {}

local bits = ffi.new('union { double d; uint8_t b[8]; }')
local function double_hex(x)
  bits.d = x
  local out = {}
  for i = 7, 0, -1 do out[#out + 1] = string.format('%02x', bits.b[i]) end
  return table.concat(out)
end

local function hex(s)
  return (s:gsub('.', function(c) return string.format('%02x', c:byte()) end))
end

local function int(x) return string.format('%d', x) end

-- Read every object of the stream as File:readObject returns them (objects share one reference table, as
-- for any program that calls readObject again on one File).  The stream ends at the end of the file; in
-- ascii, whitespace after the last object is no object, and one NUL byte at the very end is the
-- terminator torch.serialize's MemoryFile leaves (spec/t7.md#t7-serialize).
function M.read_file(path, opts)
  local fh = assert(io.open(path, 'rb'))
  local size = fh:seek('end')
  fh:seek('set', math.max(0, size - 4096))
  local tail = fh:read('*a') or ''
  fh:close()
  local stop = size
  if tail:sub(-1) == '\0' then stop = stop - 1 end
  if opts.mode == 'ascii' then
    local rest = tail:sub(1, #tail - (size - stop))
    local ws = rest:match('[ \t\n\v\f\r]*$')
    stop = stop - #ws
  end
  local objects, n = {}, 0
  local f = torch.DiskFile(path, 'r')
  local ok, err = pcall(function()
    if opts.mode == 'ascii' then f:ascii() else f:binary() end
    if opts.long then f:longSize(opts.long) end
    if opts.order == 'big' then f:bigEndianEncoding() elseif opts.order == 'little' then f:littleEndianEncoding() end
    repeat
      local o = f:readObject()
      n = n + 1
      objects[n] = o
      if opts.max and n >= opts.max then break end
    until f:position() - 1 >= stop  -- position() is 1-based
  end)
  pcall(f.close, f)
  if not ok then return nil, tostring(err), n end
  return objects, n
end

-- The flat graph of what Lua returned (see the header).  ``emit(line)`` writes one JSON line.
function M.describe(objects, count, blobs_path, emit)
  local blobs = assert(io.open(blobs_path, 'wb'))
  local ids, nid, queue, written = {}, 0, {}, 0

  -- a storage's elements as they are in memory (the machine's byte order, what DiskFile read them into)
  local function blob(storage)
    local n = storage:size() * storage:elementSize()
    local at = written
    if n > 0 then blobs:write(ffi.string(storage:data(), n)) end
    written = written + n
    return string.format('[%d,%d]', at, n)
  end

  -- identity: tensors and storages by their C object, tds objects (a new cdata box at every access) by
  -- the address they box, anything else as itself
  local function key_of(v)
    if torch.isTensor(v) or (torch.typename(v) or ''):match('^torch%..*Storage$') then
      return torch.typename(v) .. ':' .. int(torch.pointer(v))
    elseif type(v) == 'cdata' then
      return (torch.typename(v) or 'cdata') .. ':' .. tostring(ffi.cast('void *', v))
    end
    return v
  end

  local value
  local function node(v)
    local k = key_of(v)
    local id = ids[k]
    if not id then
      nid = nid + 1
      id = nid
      ids[k] = id
      queue[#queue + 1] = {id, v}
    end
    return string.format('{"n":%d}', id)
  end

  value = function(v)
    local t = type(v)
    if v == nil then return '{"nil":1}'
    elseif t == 'boolean' then return v and '{"b":true}' or '{"b":false}'
    elseif t == 'number' then return '{"d":"' .. double_hex(v) .. '"}'
    elseif t == 'string' then return '{"s":"' .. hex(v) .. '"}'
    elseif t == 'function' then error('decline: t7-function (a loaded Lua function keeps neither its type code nor its on-disk upvalue records)')
    elseif t == 'table' or t == 'userdata' or t == 'cdata' then return node(v)
    end
    error('decline: a Lua ' .. t)
  end

  local function pairs_of(v)
    local items = {}
    for k, x in pairs(v) do items[#items + 1] = '[' .. value(k) .. ',' .. value(x) .. ']' end
    return table.concat(items, ',')
  end

  local function expand(id, v)
    local tn = torch.typename(v)
    if torch.isTensor(v) then
      local nd = v:dim()
      local size, stride = {}, {}
      for i = 1, nd do size[i] = int(v:size(i)); stride[i] = int(v:stride(i)) end
      local s = v:storage()
      local data = '[0,0]'
      if v:nElement() > 0 then
        local c = v:clone()
        data = blob(c:storage())
      end
      emit(string.format('{"n":%d,"k":"tensor","class":"%s","size":[%s],"stride":[%s],"offset":%s,"storage":%s,"data":%s}',
        id, hex(tn), table.concat(size, ','), table.concat(stride, ','), int(v:storageOffset() - 1),
        s and value(s) or 'null', data))
    elseif tn and tn:match('^torch%..*Storage$') then
      emit(string.format('{"n":%d,"k":"storage","class":"%s","numel":%s,"data":%s}', id, hex(tn), int(v:size()),
        blob(v)))
    elseif tn == 'tds.Hash' then  -- pairs() honours its __pairs (Debian's LuaJIT has Lua 5.2's pairs)
      local items = {}
      for k, x in pairs(v) do items[#items + 1] = '[' .. value(k) .. ',' .. value(x) .. ']' end
      emit(string.format('{"n":%d,"k":"hash","class":"%s","items":[%s]}', id, hex(tn), table.concat(items, ',')))
    elseif tn == 'tds.Vec' then
      local items = {}
      for i = 1, #v do items[i] = value(v[i]) end
      emit(string.format('{"n":%d,"k":"vec","class":"%s","items":[%s]}', id, hex(tn), table.concat(items, ',')))
    elseif type(v) == 'table' and tn then
      nid = nid + 1  -- the fields table: the object's own fields, a table of its own in the file
      local fields = nid
      emit(string.format('{"n":%d,"k":"object","class":"%s","value":{"n":%d}}', id, hex(tn), fields))
      emit(string.format('{"n":%d,"k":"table","items":[%s]}', fields, pairs_of(v)))
    elseif type(v) == 'table' then
      emit(string.format('{"n":%d,"k":"table","items":[%s]}', id, pairs_of(v)))
    else
      error('decline: ' .. (tn or type(v)) .. ' (no canonical form for this object here)')
    end
  end

  local top = {}
  for i = 1, count do top[i] = value(objects[i]) end
  local done = 0
  while done < #queue do
    done = done + 1
    expand(queue[done][1], queue[done][2])
    queue[done] = false
  end
  blobs:close()
  emit('{"top":[' .. table.concat(top, ',') .. ']}')
end

local function parse_args(argv)
  local opts = {}
  for i = 3, #argv do
    local k, v = argv[i]:match('^(%a+)=(.*)$')
    if k == 'mode' then opts.mode = v
    elseif k == 'long' then opts.long = tonumber(v)
    elseif k == 'order' then opts.order = v
    elseif k == 'max' then opts.max = tonumber(v)
    else error('unknown option ' .. argv[i]) end
  end
  return opts
end

-- One request: read ``path`` with ``opts`` and write its lines through ``emit``.
function M.run(path, blobs_path, opts, emit)
  local objects, n_or_err, n = M.read_file(path, opts)
  if not objects then
    emit(string.format('{"error":"%s","read":%d}', hex(n_or_err), n))
    return
  end
  local ok, err = pcall(M.describe, objects, n_or_err, blobs_path, emit)
  if not ok then
    err = tostring(err)
    local why = err:match('decline: (.*)$')
    if why then emit('{"decline":"' .. hex(why) .. '"}')
    else emit(string.format('{"error":"%s","read":%d,"describing":true}', hex(err), n_or_err)) end
  end
end

if arg and arg[0] and arg[0]:match('describe%.lua$') and arg[1] then
  local out = io.stdout
  M.run(arg[1], arg[2], parse_args(arg), function(line) out:write(line, '\n') end)
  out:flush()
  os.exit(0)
end
return M
