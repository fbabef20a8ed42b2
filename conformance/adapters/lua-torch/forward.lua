-- forward.lua: does a slimmed nn model compute what the original computes?  Each stdin line is
--   ORIGINAL <tab> SLIMMED <tab> MODE (binary|ascii)
-- Both are read with torch.load and put in evaluate mode; a fixed input (torch.manualSeed(0)) is built from
-- the first module with a weight (nn.Linear: 2 x inputSize, a SpatialConvolution: 1 x nInputPlane x side
-- x side for a few sides, nn.LookupTable: indices, a BatchNormalization: 4 x nFeatures, ...) and the original's forward tried
-- on each candidate until one runs.  One stdout line per request: "same N" (N output elements, bit-equal),
-- "differs <what>", or "norun <why>" (the original runs on no candidate input).
require 'torch'
for _, m in ipairs({'nn', 'nngraph', 'tds'}) do pcall(require, m) end

local function first_weight(m)
  for _, x in ipairs(m:listModules()) do
    if torch.isTensor(rawget(x, 'weight')) and x.weight:nElement() > 0 then return x end
  end
end

local function candidates(m)
  local out = {}
  local w = first_weight(m)
  local function add(t) out[#out + 1] = w and t:type(w.weight:type()) or t end
  if w then
    local tn, s = torch.typename(w), w.weight:size()
    if tn:match('LookupTable') then out[#out + 1] = torch.LongTensor({{1, 2, 3}})
    elseif tn:match('Spatial') and rawget(w, 'nInputPlane') then
      for _, side in ipairs({12, 32, 64, 96}) do add(torch.randn(1, w.nInputPlane, side, side)) end
    elseif tn:match('BatchNormalization') then add(torch.randn(4, s[1])); add(torch.randn(2, s[1], 4, 4))
    elseif w.weight:dim() == 2 then add(torch.randn(2, s[2])); add(torch.randn(s[2])) end
  end
  for _, shape in ipairs({{2, 10}, {1, 3, 12, 12}, {2, 4}}) do add(torch.randn(unpack(shape))) end
  return out
end

local function flatten(y, acc)
  acc = acc or {}
  if torch.isTensor(y) then acc[#acc + 1] = y
  elseif type(y) == 'table' then for _, v in ipairs(y) do flatten(v, acc) end end
  return acc
end

local function compare(a, b)
  local ya, yb = flatten(a), flatten(b)
  if #ya ~= #yb then return 'differs: ' .. #ya .. ' outputs against ' .. #yb end
  local n = 0
  for i = 1, #ya do
    if not ya[i]:isSameSizeAs(yb[i]) then return 'differs: output ' .. i .. ' has another size' end
    local da, db = ya[i]:double(), yb[i]:double()
    local bad = da:ne(db):cmul(da:eq(da)):sum()  -- NaN in both places counts as equal
    if bad > 0 then return string.format('differs: %d elements of output %d', bad, i) end
    n = n + da:nElement()
  end
  return 'same ' .. n
end

for line in io.stdin:lines() do
  local a, b, mode = line:match('^([^\t]*)\t([^\t]*)\t(%a+)$')
  local ok, result = pcall(function()
    local m1, m2 = torch.load(a, mode), torch.load(b, mode)
    m1:evaluate(); m2:evaluate()
    torch.manualSeed(0)
    for _, x in ipairs(candidates(m1)) do
      torch.manualSeed(0)
      local ran, y1 = pcall(function() return m1:forward(x) end)
      if ran then
        torch.manualSeed(0)
        local ran2, y2 = pcall(function() return m2:forward(x) end)
        if not ran2 then return 'differs: the slimmed model fails: ' .. tostring(y2):sub(1, 200) end
        return compare(y1, y2)
      end
    end
    return 'norun: the original runs on no candidate input'
  end)
  io.stdout:write((ok and result or ('norun: ' .. tostring(result):gsub('\n', ' '):sub(1, 200))), '\n')
  io.stdout:flush()
end
