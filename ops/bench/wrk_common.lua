-- What the wrk scripts share (loaded with dofile from the repository root, where the bench
-- scripts run wrk): per-thread random seeds, authenticated JSON POSTs, UUIDv4 ids, and the one
-- machine-readable line every script prints at the end:
--   RESULT requests=N seconds=S rps=R offered_rps=O p50_ms=A p99_ms=B errors=E non2xx=X
-- rps counts only the answers that took the work (status below 400): a refused request (a 503
-- under overload, say) is in requests, offered_rps and non2xx, never in rps. The latency
-- percentiles are wrk's, over every answer.

local counter = 0

function setup(thread)
  counter = counter + 1
  thread:set("thread_id", counter)
end

-- init_post(key): seeds this thread's random numbers and makes every request an authenticated
-- JSON POST. Call it from the script's init().
function init_post(key)
  math.randomseed(os.time() * 1000 + (thread_id or 0) * 7919 + math.floor(os.clock() * 1e6))
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Authorization"] = "Bearer " .. key
end

function uuid4()
  local random = math.random
  return string.format("%08x-%04x-4%03x-%04x-%04x%08x",
    random(0, 0xffffffff), random(0, 0xffff), random(0, 0xfff),
    random(0, 0x3fff) + 0x8000, random(0, 0xffff), random(0, 0xffffffff))
end

function done(summary, latency, requests)
  local errors = summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout
  local seconds = summary.duration / 1e6
  io.write(string.format("RESULT requests=%d seconds=%.3f rps=%.1f offered_rps=%.1f p50_ms=%.3f p99_ms=%.3f errors=%d non2xx=%d\n",
    summary.requests, seconds, (summary.requests - summary.errors.status) / seconds, summary.requests / seconds,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, errors, summary.errors.status))
end
