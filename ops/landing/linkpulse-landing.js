// Linkpulse landing-page kit: no dependencies, one global (LinkpulseLanding).
//
// On the page a link sends people to (hosted by your link service), it:
//   1. records the click (`POST /v1/events` with navigator.sendBeacon) under a click id made
//      here, a UUID;
//   2. when the person taps "Open in app":
//      - Android: opens the Play Store with `referrer=lp_click=<click id>&utm_…`; the app reads
//        it back on first launch with the Play Install Referrer API and sends it as
//        `install_referrer` to `POST /v1/resolve` (exact);
//      - iOS: copies the link with `cp_url=true&lp_click=<click id>` to the pasteboard (inside
//        the tap, as browsers require), then opens the App Store; the app reads the pasteboard
//        once on first launch and sends `click_id` with `click_id_source: "pasteboard"` (exact);
//      - elsewhere: records a `fallback` and goes to the web page.
//   Without either, `/v1/resolve` can still match by fingerprint (same address, platform and OS
//   version within the attribution window): a guess, and said to be one.
//
// Usage:
//   <script src="linkpulse-landing.js"></script>
//   <script>
//     const landing = LinkpulseLanding.start({
//       endpoint: "https://links.example.com", ingestKey: "lpi_…", ref: "ab12cd", campaign: "spring",
//       source: "newsletter", medium: "email",
//       properties: { deep_link_value: "shoe-123" },
//       androidPackage: "com.example.shop", appStoreURL: "https://apps.apple.com/app/id123456789",
//       webURL: "https://shop.example.com/shoe-123",
//     });
//     document.querySelector("#open").addEventListener("click", () => landing.openInApp());
//   </script>
(function (global) {
  "use strict";

  function uuid() {
    if (global.crypto && typeof global.crypto.randomUUID === "function") return global.crypto.randomUUID();
    const bytes = new Uint8Array(16);
    global.crypto.getRandomValues(bytes);
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }

  /** ios, android or other, from the user agent (iPadOS 13+ says Macintosh but has touch). */
  function platformOf(nav) {
    const agent = nav.userAgent || "";
    if (/Android/i.test(agent)) return "android";
    if (/iPhone|iPad|iPod/i.test(agent) || (/Macintosh/.test(agent) && nav.maxTouchPoints > 1)) return "ios";
    return "other";
  }

  function send(options, event) {
    const url = `${options.endpoint.replace(/\/$/, "")}/v1/events?key=${encodeURIComponent(options.ingestKey)}`;
    const body = JSON.stringify(event);
    // sendBeacon survives the page being left at once (the store redirect); fetch otherwise.
    if (global.navigator.sendBeacon && global.navigator.sendBeacon(url, body)) return;
    global.fetch(url, { method: "POST", body, keepalive: true, headers: { "Content-Type": "application/json" } }).catch(() => {});
  }

  function linkFields(options) {
    const fields = { ref: options.ref };
    for (const name of ["campaign", "source", "medium"]) if (options[name]) fields[name] = options[name];
    return fields;
  }

  /** The referrer string the Play Store hands back to the app: the click id, then utm values. */
  function installReferrer(options, clickId) {
    const pairs = [["lp_click", clickId]];
    if (options.source) pairs.push(["utm_source", options.source]);
    if (options.medium) pairs.push(["utm_medium", options.medium]);
    if (options.campaign) pairs.push(["utm_campaign", options.campaign]);
    return pairs.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join("&");
  }

  function start(options) {
    if (!options || !options.endpoint || !options.ingestKey || !options.ref) {
      throw new Error("LinkpulseLanding.start needs endpoint, ingestKey and ref");
    }
    const clickId = uuid();
    const platform = platformOf(global.navigator);
    const page = global.location.href;
    send(options, Object.assign({
      id: clickId, type: "click", platform, url: page,
      referrer: global.document.referrer || undefined,
      properties: options.properties || undefined,
    }, linkFields(options)));

    const landing = {
      clickId,
      platform,
      /** The Play Store URL carrying the click id in its `referrer` parameter. */
      playStoreURL() {
        return `https://play.google.com/store/apps/details?id=${encodeURIComponent(options.androidPackage || "")}` +
          `&referrer=${encodeURIComponent(installReferrer(options, clickId))}`;
      },
      /** What goes on the iOS pasteboard: this page's link with the marker and the click id. */
      pasteboardText() {
        const url = new URL(page);
        url.searchParams.set("cp_url", "true");
        url.searchParams.set("lp_click", clickId);
        return url.toString();
      },
      /** Call from the "Open in app" tap. */
      openInApp() {
        if (platform === "android" && options.androidPackage) {
          global.location.href = landing.playStoreURL();
        } else if (platform === "ios" && options.appStoreURL) {
          const go = () => { global.location.href = options.appStoreURL; };
          const clipboard = global.navigator.clipboard;
          if (clipboard && clipboard.writeText) clipboard.writeText(landing.pasteboardText()).then(go, go);
          else go();
        } else {
          send(options, Object.assign({ id: uuid(), type: "fallback", platform, url: page, click_id: clickId }, linkFields(options)));
          if (options.webURL) global.location.href = options.webURL;
        }
      },
    };
    return landing;
  }

  global.LinkpulseLanding = { start, platformOf, installReferrer };
})(typeof window !== "undefined" ? window : globalThis);
