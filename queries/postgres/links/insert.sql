-- insert: stores a new link unless its ref is taken (by a link, deleted or not). Answers the
-- ref when a row was added.
-- Parameters: :ref, :app, :url, :campaign, :source, :medium, :deep_link,
-- :ios_url, :android_url, :desktop_url, :ios_preview, :social_title,
-- :social_description, :social_image, :expires_at_ms, :created_at_ms,
-- :updated_at_ms. Idempotent: yes.
INSERT INTO lp_links (ref, app, url, campaign, source, medium, deep_link, ios_url, android_url, desktop_url, ios_preview,
                      social_title, social_description, social_image, expires_at_ms, created_at_ms, updated_at_ms)
VALUES (:ref, :app, :url, :campaign, :source, :medium, :deep_link, :ios_url, :android_url, :desktop_url, :ios_preview,
        :social_title, :social_description, :social_image, :expires_at_ms, :created_at_ms, :updated_at_ms)
ON CONFLICT (ref) DO NOTHING
RETURNING ref
