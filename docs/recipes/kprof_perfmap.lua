-- kprof_perfmap.lua: a perf map of LuaJIT's traces for a LuaJIT built without
-- LUAJIT_USE_PERFTOOLS (Debian's and most distributions' luajit), so that kprof and perf name
-- the JIT code instead of showing addresses.
--
--   LUA_PATH="/usr/local/share/kprof/?.lua;;" luajit -l kprof_perfmap app.lua
--
-- As the C code of such a build does (lj_trace.c, perftools_addtrace): each trace compiled
-- adds a line "START SIZE TRACE_N::CHUNK:LINE" to /tmp/perf-PID.map, written at once (line
-- buffered), CHUNK:LINE where the trace starts. A trace flushed and its machine code reused is
-- named by the later line, as perf reads a map. Through jit.attach's "trace" events and
-- jit.util.tracemc, both in every LuaJIT 2.x (tested with Debian 12's 2.1.0-beta3 by
-- tests/integration/test_luajit.sh).
local jutil = require("jit.util")

local stat = assert(io.open("/proc/self/stat")) -- LuaJIT has no getpid
local pid = stat:read("*n")
stat:close()
local map = assert(io.open("/tmp/perf-" .. pid .. ".map", "w"))
map:setvbuf("line")

local start = {} -- trace number -> where it started (jit.util.funcinfo)
jit.attach(function(what, tr, func, pc)
	if what == "start" then
		start[tr] = jutil.funcinfo(func, pc)
	elseif what == "stop" then
		local mcode, addr = jutil.tracemc(tr)
		local fi = start[tr] or {}
		if addr then
			map:write(string.format("%x %x TRACE_%d::%s:%d\n", addr, #mcode, tr,
				fi.source or "?", fi.currentline or 0))
		end
		start[tr] = nil
	else -- abort, flush
		start[tr] = nil
	end
end, "trace")
