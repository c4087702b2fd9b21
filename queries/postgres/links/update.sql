-- update: writes every field of a link that is not deleted; its ref and creation time stay.
-- Answers the ref when the link was there to change.
-- Parameters: :ref, :app, :url, :campaign, :source, :medium, :deep_link,
-- :ios_url, :android_url, :desktop_url, :ios_preview, :social_title,
-- :social_description, :social_image, :expires_at_ms, :updated_at_ms.
-- Idempotent: yes.
UPDATE lp_links SET
    app = :app, url = :url, campaign = :campaign, source = :source, medium = :medium, deep_link = :deep_link,
    ios_url = :ios_url, android_url = :android_url, desktop_url = :desktop_url, ios_preview = :ios_preview,
    social_title = :social_title, social_description = :social_description, social_image = :social_image,
    expires_at_ms = :expires_at_ms, updated_at_ms = :updated_at_ms
WHERE ref = :ref AND deleted_at_ms IS NULL
RETURNING ref
