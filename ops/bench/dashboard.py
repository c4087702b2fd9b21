#!/usr/bin/env python3
"""Times the dashboard in headless Chromium (WebDriver through chromedriver, stdlib only).

Usage: dashboard.py PORT READ_KEY [RUNS]

Against a running daemon: loads /dashboard/ (last 90 days, UTC) RUNS times and reads the page's
own Performance API measure `lp:first-render` (navigation start → everything drawn); then makes
filter changes (drill into the top campaign, back to all campaigns, include bots, back) and
reads `lp:update` (click → redrawn). Baseline, same run: the six API requests of the same view,
sent in parallel from Python, timed end to end (what the page cannot go below).
"""
import json
import statistics
import subprocess
import sys
import threading
import time
import urllib.request

PORT, KEY = sys.argv[1], sys.argv[2]
RUNS = int(sys.argv[3]) if len(sys.argv) > 3 else 10
BASE = f"http://127.0.0.1:{PORT}"
DRIVER_PORT = 19515


def call(method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{DRIVER_PORT}{path}", data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.load(response)["value"]


def script(session, source, *args):
    return call("POST", f"/session/{session}/execute/sync", {"script": source, "args": list(args)})


def wait(session, condition, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if script(session, f"return Boolean({condition});"):
            return
        time.sleep(0.01)
    raise RuntimeError(f"timed out waiting for {condition}")


def click(session, css):
    element = call("POST", f"/session/{session}/element", {"using": "css selector", "value": css})
    call("POST", f"/session/{session}/element/{list(element.values())[0]}/click", {})


def generation(session):
    return script(session, "return Number(document.body.dataset.generation || 0);")


def change(session, css):
    before = generation(session)
    click(session, css)
    wait(session, f"document.body.dataset.state === 'ready' && Number(document.body.dataset.generation) > {before}")
    return script(session, "const m = performance.getEntriesByName('lp:update'); return m[m.length - 1].duration;")


def api_baseline():
    """The six requests of the 90-day view, in parallel, as the page sends them."""
    import datetime
    today = datetime.datetime.now(datetime.timezone.utc).date()
    current = f"from={today - datetime.timedelta(days=89)}&to={today}&tz=UTC&include_bots=false"
    previous = f"from={today - datetime.timedelta(days=179)}&to={today - datetime.timedelta(days=90)}&tz=UTC&include_bots=false"
    paths = [f"/v1/stats/summary?{current}", f"/v1/stats/summary?{previous}", f"/v1/stats/timeseries?{current}&interval=day",
             f"/v1/stats/breakdown?{current}&by=campaign&sort=clicks&order=desc&limit=50&offset=0",
             f"/v1/stats/breakdown?{current}&by=platform&limit=10", f"/v1/stats/breakdown?{current}&by=source&limit=10"]

    def get(path):
        request = urllib.request.Request(BASE + path, headers={"Authorization": f"Bearer {KEY}"})
        with urllib.request.urlopen(request) as response:
            response.read()

    start = time.time()
    threads = [threading.Thread(target=get, args=(p,)) for p in paths]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return (time.time() - start) * 1000


def summary(label, values):
    values = sorted(values)
    print(f"   {label:44s} p50 {statistics.median(values):7.0f} ms   max {values[-1]:7.0f} ms   (n={len(values)})")


driver = subprocess.Popen(["chromedriver", f"--port={DRIVER_PORT}", "--allowed-ips=127.0.0.1"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    for _ in range(100):
        try:
            if call("GET", "/status")["ready"]:
                break
        except OSError:
            time.sleep(0.1)
    session = call("POST", "/session", {"capabilities": {"alwaysMatch": {
        "browserName": "chrome",
        "goog:chromeOptions": {"binary": "/usr/bin/chromium", "args": [
            "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1440,1000"]},
    }}})["sessionId"]
    call("POST", f"/session/{session}/url", {"url": f"{BASE}/dashboard/#key={KEY}"})
    wait(session, "document.body.dataset.state === 'ready'")

    first, updates, drill, baseline = [], [], [], []
    for _ in range(RUNS):
        call("POST", f"/session/{session}/url", {"url": f"{BASE}/dashboard/?range=90d&tz=UTC"})
        wait(session, "document.body.dataset.state === 'ready' && Number(document.body.dataset.generation) >= 1")
        first.append(script(session, "return performance.getEntriesByName('lp:first-render')[0].duration;"))
        drill.append(change(session, "#table button.row-link"))          # into the top campaign (its refs)
        updates.append(change(session, "#crumbs button.crumb"))          # back to all campaigns
        updates.append(change(session, "#bots"))                        # include bots
        updates.append(change(session, "#bots"))                        # and not
        baseline.append(api_baseline())
    refs = script(session, "return document.querySelectorAll('#table tbody tr').length;")
    print(f"== dashboard in headless Chromium, last 90 days, UTC ({RUNS} page loads)")
    summary("first full render (navigation → drawn)", first)
    summary("drill into a campaign (click → its refs drawn)", drill)
    summary("filter changes (crumb back, bots on, bots off)", updates)
    summary("baseline: the view's 6 API requests, parallel", baseline)
    print(f"   ratio first render / API requests alone: {statistics.median(first) / statistics.median(baseline):.2f}")
    print(f"   rows in the campaign table: {refs}")
    call("DELETE", f"/session/{session}")
finally:
    driver.terminate()
