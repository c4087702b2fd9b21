-- wrk script for ops/bench/overload.sh: the events of events.lua, paced per connection
-- (DELAY_MS between a response and the next request, so that many connections offer a set
-- rate while the daemon answers fast), and a tally of every answer by status: 202 (and the
-- events they accepted), 429 and 503 with and without Retry-After, anything else.
-- Environment: BATCH, KEY (as events.lua), DELAY_MS (default 0).
dofile("ops/bench/events.lua")

local delay_ms = tonumber(os.getenv("DELAY_MS") or "0")
local threads = {}
local base_setup = setup
function setup(thread)
  base_setup(thread)
  table.insert(threads, thread)
end

counts = { s202 = 0, accepted = 0, s429 = 0, s503 = 0, retry_after = 0, other = 0, other_status = "" }

if delay_ms > 0 then
  function delay() return delay_ms end
end

function response(status, headers, body)
  if status == 202 then
    counts.s202 = counts.s202 + 1
    local accepted = tonumber(string.match(body, '"accepted":(%d+)') or "0")
    counts.accepted = counts.accepted + accepted
  elseif status == 429 or status == 503 then
    if status == 429 then counts.s429 = counts.s429 + 1 else counts.s503 = counts.s503 + 1 end
    if headers["Retry-After"] or headers["retry-after"] then counts.retry_after = counts.retry_after + 1 end
  else
    counts.other = counts.other + 1
    counts.other_status = tostring(status)
  end
end

local base_done = done
function done(summary, latency, requests)
  base_done(summary, latency, requests)
  local total = { s202 = 0, accepted = 0, s429 = 0, s503 = 0, retry_after = 0, other = 0 }
  local other_status = ""
  for _, thread in ipairs(threads) do
    local c = thread:get("counts")
    for k, _ in pairs(total) do total[k] = total[k] + c[k] end
    if c.other_status ~= "" then other_status = c.other_status end
  end
  io.write(string.format("TALLY s202=%d accepted=%d s429=%d s503=%d retry_after=%d other=%d other_status=%s\n",
    total.s202, total.accepted, total.s429, total.s503, total.retry_after, total.other, other_status))
end
