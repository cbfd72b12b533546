-- wrk script: a partner's realistic mix of calls against clients `user-0` ..
-- `user-<users-1>` and their seeded events `evt_seed_<i>` (seed_clients.ts).
-- Arguments after `--`: run prefix (keeps repeated runs' new clients and
-- Idempotency-Keys apart), number of seeded users, `mix` or one route's name
-- (that route alone), and, read by partner_mix_paced.lua only, a pause in ms
-- before each request.
--
-- Per-route figures inside one mixed run: wrk's own latency histogram and
-- done() see every request alike, and a response callback is not told which
-- request it answers (a thread's connections answer out of order). So every
-- request carries `X-Request-Id: <route>.<thread>.<n>`, which the service
-- echoes, and the script keeps the monotonic clock at request() (wrk calls it
-- just before it stamps and writes the request) against that id; response()
-- looks the id up and files the latency under its route. The clock comes
-- from clock_gettime through LuaJIT's FFI, since wrk's Lua offers no timer
-- finer than os.time(). Latencies go into a histogram of 2 % wide buckets
-- (so p50 and p99 are exact to 2 %) kept in plain numeric globals: done()
-- reads the threads' globals through thread:get, and wrk 4.1 corrupts
-- copies of tables that way. done() prints one `MIX` line per route.

local ffi = require("ffi")
ffi.cdef [[
  typedef struct { long tv_sec; long tv_nsec; } mix_timespec;
  int clock_gettime(int clock_id, mix_timespec *tp);
]]
local CLOCK_MONOTONIC = 1
local timespec = ffi.new("mix_timespec")
local function now_us()
  ffi.C.clock_gettime(CLOCK_MONOTONIC, timespec)
  return tonumber(timespec.tv_sec) * 1e6 + tonumber(timespec.tv_nsec) / 1e3
end

local BUCKET = math.log(1.02)

local function record(name, us)
  local bucket = math.max(0, math.floor(math.log(math.max(us, 1)) / BUCKET))
  local key = "h_" .. name .. "_" .. bucket
  _G[key] = (_G[key] or 0) + 1
  _G["lo_" .. name] = math.min(_G["lo_" .. name] or bucket, bucket)
  _G["hi_" .. name] = math.max(_G["hi_" .. name] or bucket, bucket)
end

local function setup_body(leverage)
  return '{"providerId":"VENUE_A","mode":"REAL","enabled":false,"leverage":' .. leverage ..
      ',"orderSizeUsd":100,"maxConcurrentTrades":1,"maxMarginPerTradeUsd":50,"maxDailyLossUsd":50}'
end

-- name, share of the mix in %, and the request for a random seeded user `u`.
local ROUTES = {
  { "status", 35, function(u) return "GET", "/v1/users/" .. u .. "/status" end },
  { "automation", 10, function(u) return "GET", "/v1/users/" .. u .. "/automation" end },
  { "setup", 5, function(u) return "GET", "/v1/users/" .. u .. "/setup?providerId=VENUE_A" end },
  { "performance", 10, function(u) return "GET", "/v1/users/" .. u .. "/performance" end },
  { "statements", 5, function(u) return "GET", "/v1/users/" .. u .. "/statements" end },
  { "create", 10, function(_, id) return "POST", "/v1/users", '{"externalUserId":"mix-' .. id .. '"}', true end },
  { "setup_put", 10, function(u) return "PUT", "/v1/users/" .. u .. "/setup", setup_body(math.random(1, 5)), true end },
  { "events", 15, function() return "GET", "/v1/events?limit=100" .. (cursor and ("&after=" .. cursor) or "") end },
}

local threads = {}
local thread_count = 0

function setup(thread)
  thread:set("thread_id", thread_count)
  thread_count = thread_count + 1
  table.insert(threads, thread)
end

function init(args)
  run_prefix = args[1] or tostring(os.time())
  users = tonumber(args[2] or "1")
  only = args[3] or "mix"
  pause_ms = tonumber(args[4] or "0")
  math.randomseed(os.time() + thread_id * 7919)
  schedule = {}
  for _, route in ipairs(ROUTES) do
    local name, share = route[1], route[2]
    for _ = 1, (only == "mix" and share or (only == name and 1 or 0)) do table.insert(schedule, route) end
    _G["n_" .. name], _G["err_" .. name] = 0, 0
  end
  -- A fixed shuffle per thread, so the routes interleave instead of coming in runs of one kind.
  for i = #schedule, 2, -1 do
    local j = math.random(1, i)
    schedule[i], schedule[j] = schedule[j], schedule[i]
  end
  counter, unmatched, started = 0, 0, {}
  cursor = users > 0 and ("evt_seed_" .. math.random(0, users - 1)) or nil
end

function request()
  counter = counter + 1
  local route = schedule[(counter - 1) % #schedule + 1]
  local id = string.format("%s.%d.%d", route[1], thread_id, counter)
  local user = "user-" .. math.random(0, math.max(users, 1) - 1)
  local method, path, body, keyed = route[3](user, run_prefix .. "-" .. thread_id .. "-" .. counter)
  wrk.headers["x-request-id"] = id
  wrk.headers["content-type"] = body and "application/json" or nil
  wrk.headers["idempotency-key"] = keyed and ("ik-" .. run_prefix .. "-" .. id) or nil
  started[id] = now_us()
  return wrk.format(method, path, nil, body)
end

function response(status, headers, body)
  local id = headers["x-request-id"] or headers["X-Request-Id"]
  local t0 = id and started[id]
  if not t0 then
    unmatched = unmatched + 1
    return
  end
  started[id] = nil
  local name = id:match("^([%w_]+)%.")
  record(name, now_us() - t0)
  _G["n_" .. name] = _G["n_" .. name] + 1
  if status >= 400 then
    _G["err_" .. name] = _G["err_" .. name] + 1
    if not first_error then first_error = name .. " " .. status .. " " .. body:sub(1, 200) end
  end
  if name == "events" then
    -- Page on like a partner reading the feed; at its end, resume from another point (a reader catching up).
    local next = body:match('"next":"([^"]*)"')
    if next == nil or next == "" or next == cursor then
      cursor = users > 0 and ("evt_seed_" .. math.random(0, users - 1)) or nil
    else
      cursor = next
    end
  end
end

-- The routes' histograms summed over the threads: bucket -> count.
local function merged(name)
  local buckets = {}
  for _, thread in ipairs(threads) do
    local lo, hi = thread:get("lo_" .. name), thread:get("hi_" .. name)
    for bucket = lo or 1, hi or 0 do
      buckets[bucket] = (buckets[bucket] or 0) + (thread:get("h_" .. name .. "_" .. bucket) or 0)
    end
  end
  return buckets
end

-- Nearest rank, in ms at the middle of its bucket.
local function percentile(buckets, count, q)
  local rank, seen, last = math.max(1, math.ceil(q * count)), 0, 0
  local order = {}
  for bucket in pairs(buckets) do order[#order + 1] = bucket end
  table.sort(order)
  for _, bucket in ipairs(order) do
    seen, last = seen + buckets[bucket], bucket
    if seen >= rank then break end
  end
  return math.exp((last + 0.5) * BUCKET) / 1000
end

function done(summary)
  local lost = 0
  for _, thread in ipairs(threads) do
    lost = lost + thread:get("unmatched")
    local problem = thread:get("first_error")
    if problem then print("MIX first error: " .. problem) end
  end
  for _, route in ipairs(ROUTES) do
    local name, count, errors = route[1], 0, 0
    for _, thread in ipairs(threads) do
      count = count + thread:get("n_" .. name)
      errors = errors + thread:get("err_" .. name)
    end
    if count > 0 then
      local buckets = merged(name)
      print(string.format("MIX route=%s requests=%d errors=%d p50=%.3f p99=%.3f", name, count, errors,
        percentile(buckets, count, 0.5), percentile(buckets, count, 0.99)))
    end
  end
  print(string.format("MIX duration_us=%d unmatched=%d", summary.duration, lost))
end
