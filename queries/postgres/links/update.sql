-- update: writes every field of a link that is not deleted; its ref and creation time stay.
-- Answers the ref when the link was there to change.
-- Parameters: $1 ref, $2 app, $3 url, $4 campaign, $5 source, $6 medium, $7 deep_link,
-- $8 ios_url, $9 android_url, $10 desktop_url, $11 ios_preview, $12 social_title,
-- $13 social_description, $14 social_image, $15 expires_at_ms, $16 updated_at_ms.
-- Idempotent: yes.
UPDATE lp_links SET
    app = $2, url = $3, campaign = $4, source = $5, medium = $6, deep_link = $7,
    ios_url = $8, android_url = $9, desktop_url = $10, ios_preview = $11,
    social_title = $12, social_description = $13, social_image = $14,
    expires_at_ms = $15, updated_at_ms = $16
WHERE ref = $1 AND deleted_at_ms IS NULL
RETURNING ref
