-- The partner mix (partner_mix.lua, same arguments) with a pause before each
-- request, its fourth argument in ms: a moderate load (the soak) rather than
-- as much as the connections carry. A separate file, because wrk decides once,
-- before any thread reads its arguments, whether a script paces its requests,
-- and pacing through a zero delay would still cost the benchmark a timer per request.
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(dir .. "partner_mix.lua")

function delay()
  return pause_ms
end
