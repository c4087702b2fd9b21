-- insert: stores a new link, unless its ref is taken (by a link, deleted or not: then no row
-- changes).
-- Parameters: every column but deleted_at_ms. Idempotent: yes.
INSERT INTO links (ref, app, url, campaign, source, medium, deep_link, ios_url, android_url, desktop_url, ios_preview,
                   social_title, social_description, social_image, expires_at_ms, created_at_ms, updated_at_ms)
VALUES (:ref, :app, :url, :campaign, :source, :medium, :deep_link, :ios_url, :android_url, :desktop_url, :ios_preview,
        :social_title, :social_description, :social_image, :expires_at_ms, :created_at_ms, :updated_at_ms)
ON CONFLICT (ref) DO NOTHING
