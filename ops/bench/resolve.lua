-- wrk script: POSTs first-launch resolves (one install each, a new UUIDv4 id), a third by
-- each path: an install referrer naming one of the CLICKS clicks the bench stored first
-- (ids PREFIX0…, address 198.18.(n/250).(n%250+1)), a fingerprint (the address of such a
-- click, nothing else), and organic (an address no click came from).
-- Environment: KEY (ingest key), CLICKS (how many bench clicks exist, default 10000), PREFIX
-- (the clicks' id prefix, default bc-).
dofile("ops/bench/wrk_common.lua")

local key = os.getenv("KEY") or ""
local clicks = tonumber(os.getenv("CLICKS") or "10000")
local prefix = os.getenv("PREFIX") or "bc-"
local random = math.random
local format = string.format
local agent = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.43 Mobile Safari/537.36"

function init(args)
  init_post(key)
end

local function clickAddress(n)
  return format("198.18.%d.%d", math.floor(n / 250), n % 250 + 1)
end

function request()
  local n = random(0, clicks - 1)
  local mode = random(1, 3)
  local body
  if mode == 1 then
    body = format('{"id":"%s","type":"install","platform":"android","user_agent":"%s","ip":"%s","install_referrer":"lp_click=%s%d&utm_source=google-play"}',
      uuid4(), agent, "203.0.113." .. random(1, 254), prefix, n)
  elseif mode == 2 then
    body = format('{"id":"%s","type":"install","platform":"android","user_agent":"%s","ip":"%s"}', uuid4(), agent, clickAddress(n))
  else
    body = format('{"id":"%s","type":"install","platform":"android","user_agent":"%s","ip":"198.19.%d.%d"}',
      uuid4(), agent, random(0, 255), random(1, 254))
  end
  return wrk.format(nil, nil, nil, body)
end
