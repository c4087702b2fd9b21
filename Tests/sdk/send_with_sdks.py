#!/usr/bin/env python3
"""Sends link lifecycle events to a Linkpulse daemon through a real analytics SDK.

Used by SegmentSDKTests: the SDK is configured the way an app team would point it at Linkpulse
(its host, the ingest key as write key), and fills messages the way a mobile SDK does. Prints one
JSON object: the errors the SDK reported (status and message), so the test can check them.

Usage: send_with_sdks.py --sdk segment|rudder --host URL --key KEY --prefix P --ref R
                         [--gzip] [--repeat N]
"""
import argparse
import json
import sys
import uuid
from datetime import datetime, timedelta, timezone


def client_for(args, errors):
    def on_error(error, batch):
        errors.append({"status": getattr(error, "status", None), "message": str(error), "messages": len(batch)})

    if args.sdk == "segment":
        from segment.analytics import Client
        return Client(write_key=args.key, host=args.host, gzip=args.gzip, on_error=on_error, max_retries=2, upload_interval=0.1)
    from rudderstack.analytics import Client
    return Client(write_key=args.key, host=args.host, gzip=args.gzip, on_error=on_error, max_retries=2, upload_interval=0.1)


def mobile_context(device, os_name, ip):
    """Roughly what analytics-swift / analytics-kotlin put in `context` on a phone."""
    return {
        "app": {"name": "Shop", "version": "2.1.0", "build": "210", "namespace": "com.example.shop"},
        "device": {"id": device, "manufacturer": "Apple" if os_name == "iOS" else "Google", "model": "phone", "type": os_name.lower()},
        "os": {"name": os_name, "version": "17.2" if os_name == "iOS" else "14"},
        "library": {"name": "analytics-swift" if os_name == "iOS" else "analytics-kotlin", "version": "1.5.0"},
        "locale": "en-US", "timezone": "Europe/Berlin", "network": {"wifi": True, "cellular": False},
        "screen": {"width": 390, "height": 844}, "ip": ip,
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sdk", choices=["segment", "rudder"], required=True)
    parser.add_argument("--host", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--ref", required=True)
    parser.add_argument("--gzip", action="store_true")
    parser.add_argument("--repeat", type=int, default=1, help="send the same messages (same ids) this many times")
    args = parser.parse_args()

    errors = []
    client = client_for(args, errors)
    now = datetime.now(timezone.utc)
    p, ref = args.prefix, args.ref
    for _ in range(args.repeat):
        # The landing page (analytics.js) reports the tap on the link.
        client.track(
            anonymous_id=f"{p}-browser", event="Deep Link Clicked", message_id=f"{p}-click",
            timestamp=now - timedelta(minutes=10),
            properties={"url": f"https://go.example.com/{ref}?utm_campaign=launch&utm_source=newsletter&utm_medium=email"},
            context={"userAgent": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148",
                     "ip": "203.0.113.77"})
        # The app, installed from that link, starts for the first time.
        context = mobile_context(f"{p}-device", "iOS", "203.0.113.77")
        client.track(
            anonymous_id=f"{p}-device", event="Application Installed", message_id=f"{p}-install",
            timestamp=now - timedelta(minutes=5), properties={"version": "2.1.0", "build": "210", "ref": ref}, context=context)
        client.track(
            anonymous_id=f"{p}-device", event="Application Opened", message_id=f"{p}-open",
            timestamp=now - timedelta(minutes=5),
            properties={"from_background": False, "version": "2.1.0", "build": "210",
                        "url": f"https://go.example.com/{ref}", "referring_application": "com.apple.mobilesafari"},
            context=context)
        # What else an SDK sends: accepted, not stored.
        client.screen(anonymous_id=f"{p}-device", name="Home", message_id=f"{p}-screen", context=context)
        client.identify(anonymous_id=f"{p}-device", user_id=f"{p}-user", traits={"plan": "free"}, message_id=f"{p}-identify")
        client.track(anonymous_id=f"{p}-device", event="Product Viewed", properties={"sku": "A-1"}, message_id=f"{p}-viewed")
        client.flush()
    client.join()
    print(json.dumps({"errors": errors}))


if __name__ == "__main__":
    sys.exit(main())
