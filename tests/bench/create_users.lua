-- wrk script: every request creates a new client (POST /v1/users) with its own
-- externalUserId and Idempotency-Key. The run prefix (first argument) keeps
-- repeated runs on one database from colliding; each thread numbers its own.
local thread_count = 0

function setup(thread)
  thread:set("thread_id", thread_count)
  thread_count = thread_count + 1
end

function init(args)
  run_prefix = args[1] or string.format("%d%d", os.time(), math.floor(os.clock() * 1e6))
  counter = 0
end

function request()
  counter = counter + 1
  local id = string.format("bench-%s-%d-%d", run_prefix, thread_id, counter)
  wrk.headers["content-type"] = "application/json"
  wrk.headers["idempotency-key"] = "ik-" .. id
  return wrk.format("POST", "/v1/users", nil, '{"externalUserId":"' .. id .. '"}')
end
