-- The partner mix (partner_mix.lua, same arguments) spread over several
-- instances of the service without a proxy in the path: wrk thread i sends
-- every request of its connections to instance i % N, the instances' ports
-- read from MIX_INSTANCE_PORTS ("8081,8082,…"; wrk hands script arguments to
-- init() only, after setup() has chosen the threads' addresses). Run it with
-- a thread count that is a multiple of N, so each instance gets as many
-- connections. A third argument `reads` runs the mix without its two writes
-- (new clients, setup PUTs), the reads in the same proportions. done() adds
-- one `INSTANCE index=<i> requests=<n>` line per instance to the `MIX` lines.
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(dir .. "partner_mix.lua")

local ports = {}
for port in (os.getenv("MIX_INSTANCE_PORTS") or ""):gmatch("%d+") do ports[#ports + 1] = port end

local mix_setup, mix_init, mix_response, mix_done = setup, init, response, done
local WRITES = { create = true, setup_put = true }
local bound = {}

function setup(thread)
  mix_setup(thread)
  if #ports > 0 then
    local instance = #bound % #ports
    thread.addr = wrk.lookup("127.0.0.1", ports[instance + 1])[1]
    thread:set("instance", instance)
  end
  table.insert(bound, thread)
end

function init(args)
  local reads_only = args[3] == "reads"
  if reads_only then args[3] = "mix" end
  mix_init(args)
  if reads_only then
    local reads = {}
    for _, route in ipairs(schedule) do
      if not WRITES[route[1]] then reads[#reads + 1] = route end
    end
    schedule = reads
  end
end

function response(status, headers, body)
  answered = (answered or 0) + 1
  mix_response(status, headers, body)
end

function done(summary, latency, requests)
  mix_done(summary, latency, requests)
  local per_instance = {}
  for _, thread in ipairs(bound) do
    local instance = thread:get("instance") or 0
    per_instance[instance] = (per_instance[instance] or 0) + (thread:get("answered") or 0)
  end
  for instance = 0, math.max(#ports, 1) - 1 do
    print(string.format("INSTANCE index=%d requests=%d", instance, per_instance[instance] or 0))
  end
end
