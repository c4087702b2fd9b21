-- wrk script: POSTs ingest events with random UUIDv4 ids, as real clients send.
-- Environment: BATCH (events per request, default 1), KEY (ingest key), AGE_DAYS (when set,
-- every event says it happened that many days ago: late events, as offline phones send),
-- DELAY_MS (when set, each connection waits that long between an answer and its next request).
-- Prints the RESULT line of wrk_common.lua at the end.

local batch = tonumber(os.getenv("BATCH") or "1")
local key = os.getenv("KEY") or ""
dofile("ops/bench/wrk_common.lua")

function init(args)
  init_post(key)
end

local random = math.random
local format = string.format

local kinds = { "click", "click", "click", "click", "fallback", "install", "open" }
local agents = {
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1",
  "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.43 Mobile Safari/537.36",
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36",
}

local delay_ms = tonumber(os.getenv("DELAY_MS") or "0")
if delay_ms > 0 then
  function delay() return delay_ms end
end

local age_days = tonumber(os.getenv("AGE_DAYS") or "")
local function timestamp()
  if not age_days then return "" end
  return format(',"timestamp":%d', (os.time() - age_days * 86400) * 1000)
end

local function event()
  return format('{"id":"%s","type":"%s","ref":"r%05d","campaign":"c%03d","source":"email","user_agent":"%s","ip":"203.0.%d.%d"%s}',
    uuid4(), kinds[random(1, #kinds)], random(0, 9999), random(0, 99), agents[random(1, #agents)],
    random(0, 255), random(1, 254), timestamp())
end

function request()
  local body
  if batch == 1 then
    body = event()
  else
    local parts = {}
    for i = 1, batch do parts[i] = event() end
    body = "[" .. table.concat(parts, ",") .. "]"
  end
  return wrk.format(nil, nil, nil, body)
end
