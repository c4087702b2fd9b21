-- all: every link, deleted ones included, oldest first (linkpulse copy carries them all).
-- Parameters: none. Idempotent: yes (read-only).
SELECT ref, app, url, campaign, source, medium, deep_link, ios_url, android_url, desktop_url, ios_preview,
       social_title, social_description, social_image, expires_at_ms, created_at_ms, updated_at_ms, deleted_at_ms
FROM links
ORDER BY created_at_ms, ref
