-- wrk script: taps on hosted links, GET /<ref> on the link domain with a random ref of the
-- LINKS stored ones (l0000000 … ), half from desktops (a redirect to the web page), half from
-- Android phones (an intent URL with the Play Store fallback); each stores a click.
-- Environment: LINKS (how many links there are), HOST (the link domain, default go.example.com),
-- METHOD (GET, or HEAD: the link read and the answer, with no click stored).
-- Prints the RESULT line of wrk_common.lua at the end (a 302 is an answered tap).

local links = tonumber(os.getenv("LINKS") or "100000")
local host = os.getenv("HOST") or "go.example.com"
local method = os.getenv("METHOD") or "GET"
dofile("ops/bench/wrk_common.lua")

local agents = {
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36",
  "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.43 Mobile Safari/537.36",
}

function init(args)
  math.randomseed(os.time() * 1000 + (thread_id or 0) * 7919 + math.floor(os.clock() * 1e6))
end

function request()
  local headers = { ["Host"] = host, ["User-Agent"] = agents[math.random(1, #agents)] }
  return wrk.format(method, string.format("/l%07d", math.random(0, links - 1)), headers)
end
