-- serve.lua: many files through one LuaJIT that loaded torch, nn, nngraph and tds once (for the suite's own
-- tools: the .t7 verdicts, the .t7 differential run, the writer's tests; the adapter runs describe.lua per
-- file).  Each request line on stdin is
--   ID <tab> FILE <tab> BLOBS <tab> OUT <tab> SECONDS <tab> BYTES <tab> OPTIONS (describe.lua's, space-separated)
-- and is answered in a forked child under an address-space limit of BYTES and an alarm of SECONDS, which
-- writes describe.lua's lines to OUT; the parent prints "ID <tab> exit N" or "ID <tab> signal N" when the
-- child ends.  A crash or a runaway file only ends its child.
local M = dofile((arg[0]:gsub('serve%.lua$', 'describe.lua')))
local ffi = require 'ffi'
ffi.cdef[[
int fork(void);
int waitpid(int pid, int *status, int options);
void _exit(int status);
unsigned int alarm(unsigned int seconds);
struct torchfmt_rlimit { unsigned long cur, max; };
int setrlimit(int resource, const struct torchfmt_rlimit *rlim);
]]
local RLIMIT_AS = 9  -- Linux

local function options(text)
  local opts = {}
  for word in text:gmatch('%S+') do
    local k, v = word:match('^(%a+)=(.*)$')
    if k == 'long' or k == 'max' then opts[k] = tonumber(v) elseif k then opts[k] = v end
  end
  return opts
end

for line in io.stdin:lines() do
  local id, path, blobs, out, seconds, bytes, opts = line:match('^([^\t]*)\t([^\t]*)\t([^\t]*)\t([^\t]*)\t(%d+)\t(%d+)\t?(.*)$')
  if not id then io.stdout:write('?\tbad request\n'); io.stdout:flush()
  else
    io.stdout:flush()
    local pid = ffi.C.fork()
    if pid == 0 then
      local lim = ffi.new('struct torchfmt_rlimit', tonumber(bytes), tonumber(bytes))
      ffi.C.setrlimit(RLIMIT_AS, lim)
      ffi.C.alarm(tonumber(seconds))
      local ok = pcall(function()
        local f = assert(io.open(out, 'w'))
        M.run(path, blobs, options(opts), function(l) f:write(l, '\n') end)
        f:close()
      end)
      ffi.C._exit(ok and 0 or 3)
    end
    local status = ffi.new('int[1]')
    ffi.C.waitpid(pid, status, 0)
    local s = status[0]
    if bit.band(s, 0x7f) == 0 then
      io.stdout:write(id, '\texit ', bit.rshift(bit.band(s, 0xff00), 8), '\n')
    else
      io.stdout:write(id, '\tsignal ', bit.band(s, 0x7f), '\n')
    end
    io.stdout:flush()
  end
end
