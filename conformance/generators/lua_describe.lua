-- luajit lua_describe.lua FILE MODE LONGSIZE ORDER
-- Reads FILE with the real Lua Torch reader (torch.DiskFile + File:readObject, with the mode, long size and
-- byte order given: ascii|binary, 4|8, little|big), every object until the end of the file, as a program
-- calling readObject repeatedly does (torch.load reads the first), and prints what it loaded as one JSON
-- line for conformance/generators/t7_questions.py, which turns it into the canonical description.  Raw
-- facts only: strings and element bytes as hex, numbers as %.17g, sizes as integers, each table, torch
-- object and function with an identity key (a later reach is {"t":"ref"}).  Prints "ERROR <message>" and
-- exits 1 when Lua Torch refuses the file.
require 'torch'
for _, m in ipairs({'nn', 'tds'}) do pcall(require, m) end
local ffi = require 'ffi'

local path, mode, longsize, order = arg[1], arg[2] or 'binary', tonumber(arg[3] or '8'), arg[4] or 'little'

local function hex(s)
  return (s:gsub('.', function(c) return string.format('%02x', c:byte()) end))
end

local function num(x)
  if x ~= x then return 'nan' end
  if x == math.huge then return 'inf' end
  if x == -math.huge then return '-inf' end
  return string.format('%.17g', x)
end

local function int64(c) return (tostring(c):gsub('[UL]+$', '')) end

local keys, nkeys = {}, 0
local storages, nstorages, storage_keys = {}, 0, {}
local function key_of(o)
  if not keys[o] then nkeys = nkeys + 1; keys[o] = nkeys; return nkeys, true end
  return keys[o], false
end

local function storage_bytes(s)
  local n = s:size()
  if n == 0 then return '' end
  return ffi.string(torch.data(s), n * s:elementSize())
end

local function storage_key(s)
  local p = torch.pointer(s)
  if not storage_keys[p] then
    nstorages = nstorages + 1
    storage_keys[p] = nstorages
    table.insert(storages, string.format('"%d":{"class":"%s","n":%d,"hex":"%s"}', nstorages,
      torch.typename(s), s:size(), hex(storage_bytes(s))))
  end
  return storage_keys[p]
end

local describe
local function items(f, s, k0)
  local out = {}
  for k, v in f, s, k0 do table.insert(out, '[' .. describe(k) .. ',' .. describe(v) .. ']') end
  return '[' .. table.concat(out, ',') .. ']'
end

function describe(v)
  local tv = type(v)
  if v == nil then return '{"t":"nil"}' end
  if tv == 'boolean' then return '{"t":"bool","v":' .. tostring(v) .. '}' end
  if tv == 'number' then return '{"t":"num","v":"' .. num(v) .. '"}' end
  if tv == 'string' then return '{"t":"str","hex":"' .. hex(v) .. '"}' end
  local tn = torch.typename(v)
  if tn and tn:match('^torch%.%a*Storage$') then
    return string.format('{"t":"storage","storage":%d}', storage_key(v))
  end
  local k, new = key_of(v)
  if not new then return string.format('{"t":"ref","key":%d}', k) end
  if tv == 'function' then
    local ups, i = {}, 1
    while true do
      local name, value = debug.getupvalue(v, i)
      if name == nil then break end
      table.insert(ups, describe(value))
      i = i + 1
    end
    return string.format('{"t":"function","key":%d,"upvalues":[%s]}', k, table.concat(ups, ','))
  end
  if tn and torch.isTensor(v) then
    local c = v:cdata()
    local sizes, strides = {}, {}
    for d = 0, c.nDimension - 1 do
      table.insert(sizes, int64(c.size[d])); table.insert(strides, int64(c.stride[d]))
    end
    local s = v:storage()
    local elements = ''
    if v:nElement() > 0 then
      local cont = v:contiguous()
      elements = ffi.string(torch.data(cont), cont:nElement() * cont:elementSize())
    end
    return string.format('{"t":"tensor","key":%d,"class":"%s","size":[%s],"stride":[%s],"offset":%s,'
      .. '"storage":%s,"hex":"%s"}', k, tn, table.concat(sizes, ','), table.concat(strides, ','),
      int64(c.storageOffset), s and tostring(storage_key(s)) or 'null', hex(elements))
  end
  if tn and tn:match('^tds%.') then
    if tn == 'tds.Vec' then
      local out = {}
      for i = 1, #v do table.insert(out, describe(v[i])) end
      return string.format('{"t":"obj","key":%d,"class":"%s","list":[%s]}', k, tn, table.concat(out, ','))
    end
    return string.format('{"t":"obj","key":%d,"class":"%s","items":%s}', k, tn, items(pairs(v)))
  end
  if tn then
    -- a generic torch object: its fields table, as readObject set it (rawpairs: no __index magic)
    return string.format('{"t":"obj","key":%d,"class":"%s","items":%s}', k, tn, items(next, v, nil))
  end
  return string.format('{"t":"table","key":%d,"items":%s}', k, items(next, v, nil))
end

local ok, result = pcall(function()
  local raw = assert(io.open(path, 'rb')):read('*a')
  local f = torch.DiskFile(path, 'r')
  if mode == 'ascii' then f:ascii() else f:binary() end
  f:longSize(longsize)
  if order == 'big' then f:bigEndianEncoding() end
  local objects = {}
  local function rest_is_end()
    -- the stream ends where only whitespace (ascii) and one final NUL (torch.serialize) are left
    local rest = raw:sub(f:position())  -- position() is 1-based
    if mode == 'ascii' then rest = rest:gsub('^[ \t\n\v\f\r]*', '') end
    return rest == '' or rest == '\0'
  end
  local loaded, n = {}, 0
  while not rest_is_end() do
    n = n + 1
    loaded[n] = f:readObject()
  end
  f:close()
  -- loaded: describing may still fail (a view outside its storage reads memory it does not own)
  io.stderr:write('LOADED ' .. n .. '\n')
  for k = 1, n do table.insert(objects, describe(loaded[k])) end
  return '{"objects":[' .. table.concat(objects, ',') .. '],"storages":{' .. table.concat(storages, ',') .. '}}'
end)
if not ok then print('ERROR ' .. tostring(result):gsub('\n', ' ')); os.exit(1) end
print(result)
os.exit(0)
