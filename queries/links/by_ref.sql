-- by_ref: one link, deleted ones included (no row: no such ref). The hot path of GET /<ref>.
-- Parameters: :ref. Idempotent: yes (read-only).
SELECT ref, app, url, campaign, source, medium, deep_link, ios_url, android_url, desktop_url, ios_preview,
       social_title, social_description, social_image, expires_at_ms, created_at_ms, updated_at_ms, deleted_at_ms
FROM links
WHERE ref = :ref
