-- wrk script: POSTs batches of link lifecycle events, either to /v1/events in Linkpulse's own
-- shape (MODE=events) or to /v1/batch as a mobile Segment SDK sends them (MODE=segment): the
-- same events (a click, an install and an open per person, random ids), only the wire shape differs.
-- Environment: MODE, BATCH (events per request, default 100), KEY (ingest key).
-- Prints the RESULT line of wrk_common.lua at the end.

local mode = os.getenv("MODE") or "events"
local batch = tonumber(os.getenv("BATCH") or "100")
local key = os.getenv("KEY") or ""
dofile("ops/bench/wrk_common.lua")

function init(args)
  init_post(key)
  wrk.path = mode == "segment" and "/v1/batch" or "/v1/events"
end

local random, format = math.random, string.format
local function iso(t) return os.date("!%Y-%m-%dT%H:%M:%S.000Z", t) end

local ua = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148"
local names = { click = "Deep Link Clicked", install = "Application Installed", open = "Application Opened" }
local kinds = { "click", "install", "open" }

local function linkpulse_event(kind, id, ref, device, ip)
  if kind == "click" then
    return format('{"id":"%s","type":"click","ref":"%s","campaign":"launch","source":"newsletter","medium":"email",' ..
      '"url":"https://go.example.com/%s","user_agent":"%s","ip":"%s","device_id":"%s-web"}', id, ref, ref, ua, ip, device)
  end
  return format('{"id":"%s","type":"%s","ref":"%s","platform":"ios","os_version":"17.2","app_version":"2.1.0",' ..
    '"device_id":"%s","ip":"%s","properties":{"build":"210","from_background":false}}', id, kind, ref, device, ip)
end

-- A Segment SDK stamps each message when it happens (`timestamp`) and the batch when it sends it
-- (`sentAt`): here a second or two before the request, so the daemon sees current events.
local function segment_message(kind, id, ref, device, ip, clicked_at, opened_at)
  if kind == "click" then
    return format('{"type":"track","event":"%s","messageId":"%s","anonymousId":"%s-web","timestamp":"%s",' ..
      '"properties":{"url":"https://go.example.com/%s?ref=%s&utm_campaign=launch&utm_source=newsletter&utm_medium=email"},' ..
      '"context":{"userAgent":"%s","ip":"%s","library":{"name":"analytics.js","version":"5.2.0"}}}',
      names[kind], id, device, clicked_at, ref, ref, ua, ip)
  end
  return format('{"type":"track","event":"%s","messageId":"%s","anonymousId":"%s","timestamp":"%s",' ..
    '"properties":{"ref":"%s","build":"210","from_background":false},' ..
    '"context":{"app":{"name":"Shop","version":"2.1.0","build":"210","namespace":"com.example.shop"},' ..
    '"device":{"id":"%s","manufacturer":"Apple","model":"iPhone15,2","type":"ios"},"os":{"name":"iOS","version":"17.2"},' ..
    '"library":{"name":"analytics-swift","version":"1.5.0"},"locale":"en-US","timezone":"Europe/Berlin",' ..
    '"network":{"wifi":true},"screen":{"width":390,"height":844},"ip":"%s"}}',
    names[kind], id, device, opened_at, ref, device, ip)
end

function request()
  local parts = {}
  local now = os.time()
  local clicked_at, opened_at = iso(now - 2), iso(now - 1)
  for i = 1, batch do
    local kind = kinds[(i - 1) % 3 + 1]
    local device = "d" .. random(1, 1000000)
    local ref = "r" .. random(1, 10000)
    local ip = format("203.0.%d.%d", random(0, 255), random(1, 254))
    if mode == "segment" then
      parts[i] = segment_message(kind, uuid4(), ref, device, ip, clicked_at, opened_at)
    else
      parts[i] = linkpulse_event(kind, uuid4(), ref, device, ip)
    end
  end
  local body
  if mode == "segment" then
    body = '{"batch":[' .. table.concat(parts, ",") .. '],"sentAt":"' .. iso(now) .. '"}'
  else
    body = "[" .. table.concat(parts, ",") .. "]"
  end
  return wrk.format(nil, nil, nil, body)
end
