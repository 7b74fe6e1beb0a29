-- oltplab's runtime for sysbench 1.0 Lua scripts: the sysbench API that scripts see, written
-- for oltplab on top of the engine's functions (`host`, from Rust). It is not sysbench's code.
--
-- It runs once per Lua state. Every sysbench thread gets an environment of its own (a table
-- whose misses fall through to this state's globals), and its coroutine's thread environment
-- is set to it, so the shared functions below find the calling thread with getfenv(0).
-- Returns the table the Rust side drives: new_env, load_script, run_thread, call and friends.

local host, info = ...

local G = _G
local ffi = require("ffi")
local getfenv, setfenv, setmetatable, getmetatable = getfenv, setfenv, setmetatable, getmetatable
local rawget, rawset, type, error, pcall, select, tostring, unpack = rawget, rawset, type, error, pcall, select, tostring, unpack
local format = string.format

-- env -> its thread context (Rust userdata); env -> the modules its `require` loaded.
local ctx_of = setmetatable({}, { __mode = "k" })
local loaded_of = setmetatable({}, { __mode = "k" })

local function here()
  local env = getfenv(0)
  return env, ctx_of[env]
end

-- A namespace whose unknown names fail with one line naming them.
local function namespace(name, t)
  return setmetatable(t, {
    __index = function(_, key)
      error(format("%s.%s is not provided by oltplab (nor by sysbench 1.0.20)", name, tostring(key)), 2)
    end,
  })
end

-- sysbench's C types that scripts name in their own declarations (sb_counter_type in
-- `void sb_counter_inc(int, sb_counter_type)`) or read constants of (ffi.C.SB_CNT_ERROR).
ffi.cdef [[
typedef enum { SB_CNT_OTHER, SB_CNT_READ, SB_CNT_WRITE, SB_CNT_TRX, SB_CNT_ERROR, SB_CNT_RECONNECT,
               SB_CNT_MAX } sb_counter_type;
typedef enum { DB_ERROR_NONE, DB_ERROR_IGNORABLE, DB_ERROR_FATAL } sql_error_t;
typedef enum { SQL_TYPE_NONE, SQL_TYPE_TINYINT, SQL_TYPE_SMALLINT, SQL_TYPE_INT, SQL_TYPE_BIGINT,
               SQL_TYPE_FLOAT, SQL_TYPE_DOUBLE, SQL_TYPE_TIME, SQL_TYPE_DATE, SQL_TYPE_DATETIME,
               SQL_TYPE_TIMESTAMP, SQL_TYPE_CHAR, SQL_TYPE_VARCHAR } sql_bind_type_t;
typedef enum { SB_ARG_TYPE_NULL, SB_ARG_TYPE_BOOL, SB_ARG_TYPE_INT, SB_ARG_TYPE_SIZE,
               SB_ARG_TYPE_DOUBLE, SB_ARG_TYPE_STRING, SB_ARG_TYPE_LIST, SB_ARG_TYPE_FILE,
               SB_ARG_TYPE_MAX } sb_arg_type_t;
]]

-------------------------------------------------------------------------------------------
-- sysbench.rand
-------------------------------------------------------------------------------------------
-- The draws in [a, b] are C functions of the engine (script/rand.rs) called through the ffi,
-- as sysbench's scripts call sysbench's (`uint32_t sb_rand_uniform(uint32_t, uint32_t)`):
-- LuaJIT compiles these calls, and converts the arguments as sysbench's ffi calls do.
local draw_t = ffi.typeof("uint32_t (*)(const void *, uint32_t, uint32_t)")
local rand_state = ffi.cast("const void *", host.rand_state)
local function draw(name)
  local f = ffi.cast(draw_t, host.rand_draws[name])
  return function(a, b)
    return f(rand_state, a, b)
  end
end

-- sysbench returns a uint64_t cdata; the engine gives the draw's two halves.
local uint64_t = ffi.typeof("uint64_t")
local function uniform_uint64()
  local hi, lo = host.rand_uniform_uint64()
  return uint64_t(hi) * 4294967296 + lo
end
local rand = namespace("sysbench.rand", {
  uniform_uint64 = uniform_uint64,
  default = draw("default"),
  uniform = draw("uniform"),
  gaussian = draw("gaussian"),
  special = draw("special"),
  pareto = draw("pareto"),
  unique = host.rand_unique,
  string = host.rand_string,
  uniform_double = host.rand_uniform_double,
})

-------------------------------------------------------------------------------------------
-- sysbench.sql: drivers, connections, statements and results
-------------------------------------------------------------------------------------------
local sql_type = {
  NONE = 0, TINYINT = 1, SMALLINT = 2, INT = 3, BIGINT = 4, FLOAT = 5, DOUBLE = 6, TIME = 7,
  DATE = 8, DATETIME = 9, TIMESTAMP = 10, CHAR = 11, VARCHAR = 12,
}
local sql_error = { NONE = 0, IGNORABLE = 1, FATAL = 2 }
-- A bound parameter, and a statement's call of the engine (script/execute_call.rs: ParamSlot,
-- Call): C memory that `set` writes and the engine reads when the statement executes (below).
ffi.cdef [[
typedef struct { int32_t tag; int32_t kind; double number; size_t text_len; char text[?]; } oltplab_param;
typedef struct { void *stmt; uint32_t n; oltplab_param *params[?]; } oltplab_call;
]]
local param_t, call_t = ffi.typeof("oltplab_param"), ffi.typeof("oltplab_call")
local NIL, NUMBER, STRING = 0, 1, 2
local RESTART_EVENT = 1

local driver_methods, connection_methods, statement_methods, result_methods = {}, {}, {}, {}
local driver_mt = { __index = namespace("sql_driver", driver_methods), __tostring = function() return "<sql_driver>" end }
local connection_mt = { __index = namespace("sql_connection", connection_methods),
                        __tostring = function() return "<sql_connection>" end }
local statement_mt = { __index = namespace("sql_statement", statement_methods),
                       __tostring = function() return "<sql_statement>" end }
local result_mt = { __index = namespace("sql_result", result_methods), __tostring = function() return "<sql_result>" end }

-- The error level of the script's code that called into this runtime (the first Lua frame
-- outside it): its file:line starts the message, as sysbench's errors do.
local getinfo = debug.getinfo
local function caller_level()
  for level = 3, 20 do
    local frame = getinfo(level, "S")
    if frame == nil then
      break
    end
    if frame.what ~= "C" and frame.what ~= "tail" and frame.source ~= "=[oltplab]" then
      return level - 1 -- as error() counts: 1 is the function that calls it
    end
  end
  return 0
end

-- The engine's asynchronous functions (`host.started`, script/resume.rs) start their operation
-- and return its outcome when it is done at once: `true, results...`, or `false, message` for
-- an error of the script's line. They return nil when it is not: the coroutine then yields to
-- the engine, which awaits the operation and resumes it with that outcome.
local yield = G.coroutine.yield
local function resumed(ok, ...)
  if ok then
    return ...
  end
  if ok == nil then
    return resumed(yield())
  end
  error((...), caller_level())
end
for name, start in G.pairs(host.started) do
  host[name] = function(...)
    return resumed(start(...))
  end
end

-- A failed statement, as sysbench's check_error() treats it: an ignorable error (or a fatal one
-- the sql_error_ignorable hook downgrades) restarts the event with an error descriptor; any
-- other is fatal, naming the script's line.
local function failed(con, query, class, errno, state, message)
  local errdesc = { connection = con, query = query, sql_errno = errno, sql_state = state, sql_errmsg = message }
  local hooks = con._sysbench.hooks
  local hook = hooks and hooks.sql_error_ignorable
  if class == sql_error.IGNORABLE or (type(hook) == "function" and hook(errdesc)) then
    errdesc.errcode = RESTART_EVENT
    error(errdesc, 0)
  end
  error(format("SQL error, errno = %d, state = '%s': %s", errno, state, message), caller_level())
end

-- What a statement answered: the connection's result set for a result set, nil otherwise. A
-- connection has one result set, which its next statement reuses, as sysbench's has (its `rs`:
-- a result is read before the next statement): no garbage per statement for the collector.
local function answer(con, query, nrows, nfields, rows, class, errno, state, message)
  if class ~= nil then
    return failed(con, query, class, errno, state, message)
  end
  if rows == nil then
    return nil
  end
  local rs = con._rs
  if not rs then
    rs = setmetatable({ nrows = 0, nfields = 0, _rows = false, _next = 1 }, result_mt)
    con._rs = rs
  end
  rs.nrows, rs.nfields, rs._rows, rs._next = nrows, nfields, rows, 1
  return rs
end

local function new_driver(sb, name)
  local drv = host.driver(name)
  return setmetatable({ _sysbench = sb, _name = drv }, driver_mt)
end

function driver_methods.connect(self)
  local _, ctx = here()
  local h = host.connect(ctx)
  return setmetatable({ _h = h, _sysbench = self._sysbench, _driver = self, _rs = false }, connection_mt)
end

function driver_methods.name(self)
  return self._name
end

function connection_methods.query(self, query)
  return answer(self, query, host.query(self._h, query))
end

function connection_methods.query_row(self, query)
  local rs = self:query(query)
  if rs == nil or rs.nrows == 0 then
    return nil
  end
  return unpack(rs:fetch_row(), 1, rs.nfields)
end

function connection_methods.prepare(self, query)
  local h, address_or_class, errno, state, message = host.prepare(self._h, query)
  if h == nil then
    return failed(self, query, address_or_class, errno, state, message)
  end
  -- `_h` keeps the engine's statement alive; `_call` holds its address for execute_call.
  local call = call_t(0)
  call.stmt = address_or_class
  return setmetatable({ _h = h, connection = self, _params = false, _call = call }, statement_mt)
end

function connection_methods.bulk_insert_init(self, query)
  host.bulk_insert_init(self._h, query)
  return true
end

function connection_methods.bulk_insert_next(self, row)
  local _, _, _, class, errno, state, message = host.bulk_insert_next(self._h, row)
  if class ~= nil then
    return failed(self, "<bulk insert>", class, errno, state, message)
  end
  return true
end

function connection_methods.bulk_insert_done(self)
  local _, _, _, class, errno, state, message = host.bulk_insert_done(self._h)
  if class ~= nil then
    return failed(self, "<bulk insert>", class, errno, state, message)
  end
  return true
end

function connection_methods.disconnect(self)
  host.disconnect(self._h)
  return true
end

function connection_methods.reconnect(self)
  host.reconnect(self._h)
  return true
end

-- A bound parameter is an `oltplab_param` (cdata, no Lua table), as sysbench's is a C buffer:
-- `set` writes a number, or copies a string's first `kind` bytes into its text buffer, with no
-- call into the engine. `kind` is the type host.bind_create checked: -1 an integer, -2 a
-- double, else a text's maximum length (the buffer's size).
local param_methods = {}
ffi.metatype(param_t, { __index = namespace("sql_param", param_methods),
                        __tostring = function() return "<sql_param>" end })

local function set_text(self, value)
  local len = #value
  if len > self.kind then
    len = self.kind
  end
  ffi.copy(self.text, value, len)
  self.tag, self.text_len = STRING, len
end

function param_methods.set(self, value)
  local t = type(value)
  if t == "number" then
    self.tag, self.number = NUMBER, value
  elseif t == "string" and self.kind >= 0 then
    set_text(self, value)
  elseif t == "nil" then
    self.tag = NIL
  else
    error(format("cannot bind a %s to this parameter", t), caller_level())
  end
end

function param_methods.set_rand_str(self, fmt)
  if self.kind < 0 then
    error("Unsupported argument type: set_rand_str() needs a CHAR or VARCHAR", caller_level())
  end
  set_text(self, host.rand_string(fmt))
end

function statement_methods.bind_create(self, btype, max_len)
  local kind = host.bind_create(btype, max_len)
  local param = param_t(kind > 0 and kind or 0)
  param.kind = kind
  return param
end

function statement_methods.bind_param(self, ...)
  local n = select("#", ...)
  if n < 1 then
    return nil
  end
  local params = { ... }
  local call = call_t(n)
  call.stmt, call.n = self._call.stmt, n
  for i = 1, n do
    if not ffi.istype(param_t, params[i]) then
      error(format("bind_param: argument %d is not a parameter of bind_create()", i), caller_level())
    end
    call.params[i - 1] = params[i]
  end
  -- `_params` keeps the parameters that `_call` points to alive.
  self._params, self._call = params, call
  return 0
end

-- execute_call's answers (script/execute_call.rs), and where it writes a result set's counts:
-- read right after the call, which nothing can run between.
local execute_call = ffi.cast("int32_t (*)(const oltplab_call *, double *)", host.execute_call)
local DONE_RESULT_SET, DONE = 1, 0
local counts = ffi.new("double[2]")
local PREPARED = "<prepared statement>"

-- A C call that LuaJIT compiles into the event's trace; what it does not finish at once (a
-- statement not done, an error, a closed statement) it leaves to `host.execute`.
function statement_methods.execute(self)
  local done = execute_call(self._call, counts)
  if done == DONE_RESULT_SET then
    return answer(self.connection, PREPARED, counts[0], counts[1], false)
  elseif done == DONE then
    return nil
  end
  return answer(self.connection, PREPARED, host.execute(self._h))
end

function statement_methods.close(self)
  host.close(self._h)
  return 0
end

-- Values come back as strings, NULL as nil, as sysbench's fetch_row gives them.
function result_methods.fetch_row(self)
  local rows = self._rows
  if rows == false then -- a result without rows (a prepared statement's: script/sql.rs, answer)
    return nil
  end
  local row = host.fetch_row(rows, self._next)
  if row ~= nil then
    self._next = self._next + 1
  end
  return row
end

function result_methods.free(self)
  self._rows = nil
  return true
end

local sql = namespace("sysbench.sql", {
  driver = function(name)
    local env = here()
    return new_driver(env.sysbench, name)
  end,
  type = sql_type,
  error = sql_error,
})

-------------------------------------------------------------------------------------------
-- Reports: sysbench's three formats, for report hooks
-------------------------------------------------------------------------------------------
local opt = {} -- every option's value, filled by the Rust side before init()

local function qps(stat)
  return stat.reads + stat.writes + stat.other
end

local function report_default(stat)
  local s = stat.time_interval
  G.print(format("[ %.0fs ] thds: %u tps: %4.2f qps: %4.2f (r/w/o: %4.2f/%4.2f/%4.2f) lat (ms,%u%%): %4.2f " ..
                 "err/s %4.2f reconn/s: %4.2f", stat.time_total, stat.threads_running, stat.events / s,
                 qps(stat) / s, stat.reads / s, stat.writes / s, stat.other / s, opt.percentile,
                 stat.latency_pct * 1000, stat.errors / s, stat.reconnects / s))
end

local function report_csv(stat)
  local s = stat.time_interval
  G.print(format("%.0f,%u,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f", stat.time_total,
                 stat.threads_running, stat.events / s, qps(stat) / s, stat.reads / s, stat.writes / s,
                 stat.other / s, stat.latency_pct * 1000, stat.errors / s, stat.reconnects / s))
end

-- JSON objects in one array: "[" before the first, "]" when the run ends (host.at_exit).
local json_started = false
local function report_json(stat)
  if not json_started then
    json_started = true
    G.io.write("[\n")
    host.at_exit(function() G.io.write("\n]\n") end)
  else
    G.io.write(",\n")
  end
  local s = stat.time_interval
  G.io.write(format('  {\n    "time": %4.0f,\n    "threads": %u,\n    "tps": %4.2f,\n    "qps": {\n' ..
                    '      "total": %4.2f,\n      "reads": %4.2f,\n      "writes": %4.2f,\n' ..
                    '      "other": %4.2f\n    },\n    "latency": %4.2f,\n    "errors": %4.2f,\n' ..
                    '    "reconnects": %4.2f\n  }', stat.time_total, stat.threads_running, stat.events / s,
                    qps(stat) / s, stat.reads / s, stat.writes / s, stat.other / s,
                    stat.latency_pct * 1000, stat.errors / s, stat.reconnects / s))
end

-------------------------------------------------------------------------------------------
-- sysbench.cmdline
-------------------------------------------------------------------------------------------
local cmdline_shared = {
  ARG_NULL = 0, ARG_BOOL = 1, ARG_INT = 2, ARG_SIZE = 3, ARG_DOUBLE = 4, ARG_STRING = 5,
  ARG_LIST = 6, ARG_FILE = 7, ARG_MAX = 8,
  PARALLEL_COMMAND = true,
  argv = info.argv,
  command = info.command,
  script_path = info.script_path,
}

function cmdline_shared.command_defined(name)
  local commands = getfenv(0).sysbench.cmdline.commands
  return type(commands) == "table" and commands[name] ~= nil and commands[name][1] ~= nil
end

function cmdline_shared.command_parallel(name)
  return cmdline_shared.command_defined(name)
    and getfenv(0).sysbench.cmdline.commands[name][2] == cmdline_shared.PARALLEL_COMMAND
end

function cmdline_shared.call_command(name)
  if not cmdline_shared.command_defined(name) then
    return false
  end
  local rc = getfenv(0).sysbench.cmdline.commands[name][1]()
  return rc == nil or (rc and true or false)
end

function cmdline_shared.print_test_options()
  host.print_test_options()
end

-------------------------------------------------------------------------------------------
-- The legacy API: sysbench.db.* and the globals of sysbench 1.0's compat layer. They use one
-- implicit connection per thread, as sysbench's per-thread Lua state does.
-------------------------------------------------------------------------------------------
local legacy_con = setmetatable({}, { __mode = "k" }) -- env -> its implicit connection

local function implicit()
  local env = here()
  local con = legacy_con[env]
  if con == nil then
    local drv = new_driver(env.sysbench)
    rawset(env, "db_driver", drv:name())
    con = drv:connect()
    legacy_con[env] = con
  end
  return con
end

local DB_ERROR_NONE, DB_ERROR_RESTART_TRANSACTION, DB_ERROR_FAILED = 0, 1, 2

local db = {
  DB_ERROR_NONE = DB_ERROR_NONE,
  DB_ERROR_RESTART_TRANSACTION = DB_ERROR_RESTART_TRANSACTION,
  DB_ERROR_FAILED = DB_ERROR_FAILED,
}

function db.connect()
  implicit()
end

function db.disconnect()
  local env = here()
  local con = legacy_con[env]
  if con ~= nil then
    con:disconnect()
    legacy_con[env] = nil
  end
end

function db.query(query)
  local rs = implicit():query(query)
  if rs ~= nil then
    rs:free()
  end
end

function db.bulk_insert_init(query)
  implicit():bulk_insert_init(query)
end

function db.bulk_insert_next(row)
  implicit():bulk_insert_next(row)
end

function db.bulk_insert_done()
  implicit():bulk_insert_done()
end

-- Legacy statements bind a table of example values (numbers: INT, strings: CHAR) and read the
-- current values of that same table at each execute.
local legacy_stmt_mt = { __index = {} }

function db.prepare(query)
  return setmetatable({ stmt = implicit():prepare(query) }, legacy_stmt_mt)
end

function db.bind_param(ls, values)
  local params, keys = {}, {}
  for key, value in G.pairs(values) do
    keys[#keys + 1] = key
  end
  G.table.sort(keys)
  for i, key in G.ipairs(keys) do
    local v = values[key]
    params[i] = type(v) == "number" and ls.stmt:bind_create(sql_type.BIGINT)
      or ls.stmt:bind_create(sql_type.VARCHAR, 65535)
  end
  ls.stmt:bind_param(unpack(params))
  ls.values, ls.keys, ls.params = values, keys, params
end

function db.bind_result()
  error("sysbench.db.bind_result is not provided by oltplab: read rows with con:query() and rs:fetch_row()", 2)
end

function db.execute(ls)
  if ls.params then
    for i, key in G.ipairs(ls.keys) do
      ls.params[i]:set(ls.values[key])
    end
  end
  local rs = ls.stmt:execute()
  return rs
end

function db.close(ls)
  ls.stmt:close()
end

function db.store_results() end

function db.free_results(rs)
  if rs ~= nil then
    rs:free()
  end
end

-------------------------------------------------------------------------------------------
-- sysbench's C functions that scripts call through ffi.C, and the blocking libc calls they
-- use for think time, turned into sleeps that let the other connections run.
-------------------------------------------------------------------------------------------
local provided_c = {
  sb_more_events = function(tid) return host.more_events(ctx_of[getfenv(0)], tid) end,
  sb_event_start = function(tid) host.event_start(ctx_of[getfenv(0)], tid) end,
  sb_event_stop = function(tid) host.event_stop(ctx_of[getfenv(0)], tid) end,
  sb_counter_inc = function(tid, counter) host.counter_inc(ctx_of[getfenv(0)], tid, counter) end,
  sb_counter_val = function(tid, counter) return host.counter_val(ctx_of[getfenv(0)], tid, counter) end,
  sb_rand_uniform_uint64 = uniform_uint64,
  sb_rand_default = rand.default,
  sb_rand_uniform = rand.uniform,
  sb_rand_gaussian = rand.gaussian,
  sb_rand_special = rand.special,
  sb_rand_pareto = rand.pareto,
  sb_rand_unique = host.rand_unique,
  sb_rand_uniform_double = host.rand_uniform_double,
  sb_rand_str = function(fmt, buf)
    local s = host.rand_string(ffi.string(fmt))
    ffi.copy(buf, s, #s)
  end,
  usleep = function(us)
    host.sleep(G.tonumber(us) / 1e6)
    return 0
  end,
  sleep = function(s)
    host.sleep(G.tonumber(s))
    return 0
  end,
  nanosleep = function(req, _)
    host.sleep(G.tonumber(req.tv_sec) + G.tonumber(req.tv_nsec) / 1e9)
    return 0
  end,
}

-- sysbench's other exported C functions: its internals, which oltplab does not have.
local sysbench_c = {}
for name in G.string.gmatch("db_create db_destroy db_connection_create db_connection_close " ..
    "db_connection_reconnect db_connection_free db_bulk_insert_init db_bulk_insert_next " ..
    "db_bulk_insert_done db_query db_fetch_row db_prepare db_bind_param db_bind_result db_execute " ..
    "db_close db_free_results sb_lua_set_test_args sb_print_test_options sb_histogram_new " ..
    "sb_histogram_delete sb_histogram_update sb_histogram_print", "%S+") do
  sysbench_c[name] = true
end

local C_real = ffi.C
local C = setmetatable({}, {
  __index = function(_, name)
    local f = provided_c[name]
    if f ~= nil then
      return f
    end
    if sysbench_c[name] then
      error(format("ffi.C.%s (a function of sysbench's C core) is not provided by oltplab; use the Lua API " ..
                   "(sysbench.sql, sysbench.rand) instead", name), 2)
    end
    return C_real[name]
  end,
})

-- Declarations are per state, and LuaJIT refuses to declare an enum or a named struct twice:
-- each distinct text is declared once, whichever thread gives it first.
local declared = {}
local ffi_proxy = setmetatable({
  C = C,
  cdef = function(text)
    if not declared[text] then
      declared[text] = true
      ffi.cdef(text)
    end
  end,
}, { __index = ffi })

-------------------------------------------------------------------------------------------
-- require: per thread, as sysbench's state per thread gives it. A module is compiled once per
-- state and run once per environment, with that environment.
-------------------------------------------------------------------------------------------
local compiled = {} -- path -> function returning a fresh closure of the file's main chunk
local passthrough = { ffi = ffi_proxy, bit = G.bit, jit = G.jit, string = G.string, table = G.table,
                      math = G.math, io = G.io, os = G.os, coroutine = G.coroutine, debug = G.debug,
                      package = G.package }

-- The chunk of a Lua file, compiled once: a main chunk that can be instantiated per environment.
local function compile(path, name)
  local maker = compiled[path]
  if maker == nil then
    local err
    maker, err = host.compile(path, name)
    if maker == nil then
      error(err, 0)
    end
    compiled[path] = maker
  end
  return maker
end

local function instantiate(maker, env)
  setfenv(maker, env)
  return maker()
end

local function require_in_env(name)
  local env = getfenv(0)
  local loaded = loaded_of[env]
  local have = loaded[name]
  if have ~= nil then
    return have
  end
  local builtin = passthrough[name]
  if builtin ~= nil then
    return builtin
  end
  local path, why = G.package.searchpath(name, G.package.path)
  if path == nil then
    local fallback = G.package.loaded[name]
    if fallback ~= nil then
      return fallback
    end
    error(format("module '%s' not found:%s", name, why), 2)
  end
  local result = instantiate(compile(path, "@" .. path), env)(name)
  if result == nil then
    result = loaded[name] == nil and true or loaded[name]
  end
  loaded[name] = result
  return result
end

-------------------------------------------------------------------------------------------
-- sysbench.histogram: sysbench's bounded histograms on a log scale (its sb_histogram.c),
-- `size` buckets from range_min to range_max; one per state, as in sysbench
-------------------------------------------------------------------------------------------
local histogram_methods = {}

function histogram_methods:update(value)
  local i = G.math.floor((G.math.log(value) - self.deduct) * self.mult + 0.5)
  i = G.math.max(0, G.math.min(i, self.size - 1))
  self.counts[i] = self.counts[i] + 1
end

-- sysbench prints the buckets that counted something, with bars scaled to the fullest.
function histogram_methods:print()
  local counts, most = self.counts, 0
  for i = 0, self.size - 1 do
    most = G.math.max(most, counts[i])
  end
  if most == 0 then
    return
  end
  local out = { "       value  ------------- distribution ------------- count\n" }
  for i = 0, self.size - 1 do
    local n = counts[i]
    if n > 0 then
      local bar = G.string.rep("*", G.math.floor(n * 40 / most + 0.5))
      out[#out + 1] = format("%12.3f |%-40s %d\n", G.math.exp(i / self.mult + self.deduct), bar, n)
    end
  end
  G.io.write(G.table.concat(out))
end

local histogram_mt = { __index = namespace("sb_histogram", histogram_methods),
                       __tostring = function() return "<sb_histogram>" end }

local histogram = namespace("sysbench.histogram", {
  new = function(size, range_min, range_max)
    local deduct = G.math.log(range_min)
    local counts = {}
    for i = 0, size - 1 do
      counts[i] = 0
    end
    local mult = (size - 1) / (G.math.log(range_max) - deduct)
    return setmetatable({ size = size, deduct = deduct, mult = mult, counts = counts }, histogram_mt)
  end,
})

-------------------------------------------------------------------------------------------
-- The shared globals every environment reads through, and the environments themselves
-------------------------------------------------------------------------------------------
local sysbench_shared = {
  version = info.version,
  version_string = "sysbench " .. info.version,
  rand = rand,
  sql = sql,
  db = db,
  error = { NONE = 0, RESTART_EVENT = RESTART_EVENT },
  report_default = report_default,
  report_csv = report_csv,
  report_json = report_json,
  histogram = histogram,
}
local sysbench_mt = { __index = sysbench_shared }
local cmdline_mt = { __index = cmdline_shared }
local opt_mt = { __index = opt }

G.ffi = ffi_proxy
G.package.loaded.ffi = ffi_proxy
G.require = require_in_env
G.print = function(...)
  local parts = {}
  for i = 1, select("#", ...) do
    parts[i] = tostring((select(i, ...)))
  end
  host.write(G.table.concat(parts, "\t") .. "\n")
end
G.io.write = function(...)
  for i = 1, select("#", ...) do
    local v = select(i, ...)
    host.write(type(v) == "number" and format("%.14g", v) or v)
  end
  return G.io.stdout
end
-- sysbench 1.0's compat globals that do not depend on the thread.
G.sb_rand = rand.default
G.sb_rand_str = rand.string
G.sb_rand_uniform = rand.uniform
G.sb_rand_gaussian = rand.gaussian
G.sb_rand_special = rand.special
G.sb_rnd = function() return G.tonumber(rand.uniform_uint64() % 4294967296) end
G.sb_rand_uniq = function(a, b)
  a, b = a or 0, b or 4294967295
  local v
  repeat
    v = rand.unique()
  until v >= a and v <= b
  return v
end
for name, f in G.pairs(db) do
  if type(f) == "function" then
    G["db_" .. name] = f
  end
end
G.DB_ERROR_NONE, G.DB_ERROR_RESTART_TRANSACTION, G.DB_ERROR_FAILED = DB_ERROR_NONE, DB_ERROR_RESTART_TRANSACTION,
  DB_ERROR_FAILED
G.mysql_table_engine = "innodb"
G.myisam_max_rows = 1000000

local env_mt = { __index = G }

local M = {}

-- A new environment for sysbench thread `tid`, with its thread context.
function M.new_env(ctx, tid)
  local sb = setmetatable({ tid = tid, hooks = {}, cmdline = setmetatable({}, cmdline_mt) }, sysbench_mt)
  local env = setmetatable({ sysbench = sb, thread_id = tid, test = info.script_path }, env_mt)
  env._G = env
  ctx_of[env] = ctx
  loaded_of[env] = {}
  return env
end

-- The script's main chunk, compiled once per state.
function M.script(path, name)
  return compile(path, name)
end

-- Runs the script's top level in `env` (inside the thread's coroutine: it may connect).
function M.load_script(env, maker)
  setfenv(0, env)
  instantiate(maker, env)()
end

-- sysbench exports the options after the top level ran: sysbench.opt, and for a script that
-- declares no options of its own, every option as a global as well.
-- sysbench's validator of option `name` (`def[4]`), given the value typed (nil: a bare
-- `--name`): whether it takes it. sysbench passes C strings, which ffi.string reads; these are
-- Lua strings, which ffi.string reads too.
function M.validate_option(env, name, value)
  local def = env.sysbench.cmdline.options[name]
  local check = type(def) == "table" and def[4] or nil
  if type(check) ~= "function" then
    return true
  end
  return check(name, value) and true or false
end

function M.export_options(env, legacy)
  env.sysbench.opt = setmetatable({}, opt_mt)
  if legacy then
    for name, value in G.pairs(opt) do
      if type(rawget(env, name)) ~= "function" then
        rawset(env, name, value)
      end
    end
  end
end

function M.set_option(name, value)
  opt[name] = value
end

-- The script's declared options: name -> {description, default text, type, validator}.
function M.declared_options(env)
  local options = env.sysbench.cmdline.options
  if options == nil then
    return nil
  end
  if type(options) ~= "table" then
    error("wrong type for sysbench.cmdline.options: " .. type(options), 0)
  end
  local out = {}
  for name, def in G.pairs(options) do
    if type(name) ~= "string" or type(def) ~= "table" then
      error("wrong table structure in sysbench.cmdline.options", 0)
    end
    if def[1] == nil then
      error("nil description for option " .. name, 0)
    end
    local default, kind = def[2], def[3]
    local text
    if type(default) == "table" then
      text = G.table.concat(default, ",")
      kind = kind or cmdline_shared.ARG_LIST
    elseif type(default) == "boolean" then
      text = default and "on" or "off"
      kind = kind or cmdline_shared.ARG_BOOL
    elseif type(default) == "number" then
      text = tostring(default)
      kind = kind or cmdline_shared.ARG_DOUBLE
    else
      text = default
      kind = kind or cmdline_shared.ARG_STRING
    end
    out[name] = { tostring(def[1]), text, kind, def[4] }
  end
  return out
end

-- The custom commands: name -> parallel (boolean).
function M.commands(env)
  local commands = env.sysbench.cmdline.commands
  local out = {}
  if type(commands) == "table" then
    for name, def in G.pairs(commands) do
      if type(def) == "table" and def[1] ~= nil then
        out[name] = def[2] == cmdline_shared.PARALLEL_COMMAND
      end
    end
  end
  return out
end

-- Whether the script defines a global function `name`, or the hook `sysbench.hooks.name`.
function M.has_function(env, name)
  return type(rawget(env, name)) == "function"
end

function M.has_hook(env, name)
  return type(env.sysbench.hooks[name]) == "function"
end

-- Calls global function `name` of `env` (`thread_init`, `prepare`, ...), if defined.
function M.call(env, name, ...)
  setfenv(0, env)
  local f = rawget(env, name)
  if f == nil then
    return nil
  end
  return f(...)
end

function M.call_hook(env, name, ...)
  setfenv(0, env)
  local f = env.sysbench.hooks[name]
  if type(f) == "function" then
    return f(...)
  end
end

function M.call_command(env, name)
  setfenv(0, env)
  return cmdline_shared.call_command(name)
end

-- next_call's answer when it started the next event (script/next_call.rs).
local next_call = ffi.cast("int32_t (*)(const void *)", host.next_call)
local STARTED = 1

-- The thread's loop: the script's own thread_run if it has one, else sysbench's: events until
-- the engine says stop, an event restarted after an error that asks for it (an ignorable SQL
-- error), after the before_restart_event hook; an event that returns a true value ends it.
function M.run_thread(env, tid)
  setfenv(0, env)
  local own = rawget(env, "thread_run")
  if type(own) == "function" then
    return own(tid)
  end
  local ctx = ctx_of[env]
  local next_event = host.next_event -- sb_event_stop (after the first), sb_more_events, sb_event_start
  -- A pointer cdata, not the light userdata: LuaJIT compiles no call that converts one.
  local at = ffi.cast("const void *", host.ctx_address(ctx)) -- kept alive by `ctx`
  local hooks = env.sysbench.hooks
  local ran = false
  -- After an event, the C call ends it and starts the next when that need not wait; else (or
  -- for the first event) host.next_event does, yielding to the engine. The loop has no inner
  -- loop on its usual path (a restart's is entered only after an error), so that LuaJIT
  -- compiles it, the event inlined, as one trace.
  while (ran and next_call(at) == STARTED) or next_event(ctx, tid, ran) do
    ran = true
    local ok, ret = pcall(env.event, tid)
    while not ok do
      if type(ret) == "table" and ret.errcode == RESTART_EVENT then
        host.event_restart(ctx, tid)
        local hook = hooks.before_restart_event
        if hook then
          hook(ret)
        end
      else
        error(ret, 0)
      end
      ok, ret = pcall(env.event, tid)
    end
    if ret then
      break -- without sb_event_stop, as sysbench's loop
    end
  end
end

return M
