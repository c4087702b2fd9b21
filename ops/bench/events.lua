-- wrk script: POSTs ingest events with random UUIDv4 ids, as real clients send.
-- Environment: BATCH (events per request, default 1), KEY (ingest key).
-- At the end prints one machine-readable line:
--   RESULT requests=N seconds=S rps=R p50_ms=A p99_ms=B errors=E non2xx=X

local batch = tonumber(os.getenv("BATCH") or "1")
local key = os.getenv("KEY") or ""
local threads = {}
local counter = 0

function setup(thread)
  counter = counter + 1
  thread:set("thread_id", counter)
  table.insert(threads, thread)
end

function init(args)
  math.randomseed(os.time() * 1000 + (thread_id or 0) * 7919 + math.floor(os.clock() * 1e6))
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Authorization"] = "Bearer " .. key
end

local random = math.random
local format = string.format

local function uuid4()
  return format("%08x-%04x-4%03x-%04x-%04x%08x",
    random(0, 0xffffffff), random(0, 0xffff), random(0, 0xfff),
    random(0, 0x3fff) + 0x8000, random(0, 0xffff), random(0, 0xffffffff))
end

local kinds = { "click", "click", "click", "click", "fallback", "install", "open" }
local agents = {
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1",
  "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.43 Mobile Safari/537.36",
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36",
}

local function event()
  return format('{"id":"%s","type":"%s","ref":"r%05d","campaign":"c%03d","source":"email","user_agent":"%s","ip":"203.0.%d.%d"}',
    uuid4(), kinds[random(1, #kinds)], random(0, 9999), random(0, 99), agents[random(1, #agents)],
    random(0, 255), random(1, 254))
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

function done(summary, latency, requests)
  local errors = summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout
  io.write(format("RESULT requests=%d seconds=%.3f rps=%.1f p50_ms=%.3f p99_ms=%.3f errors=%d non2xx=%d\n",
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, errors, summary.errors.status))
end
