-- insert: stores a new link unless its ref is taken (by a link, deleted or not). Answers the
-- ref when a row was added.
-- Parameters: $1 ref, $2 app, $3 url, $4 campaign, $5 source, $6 medium, $7 deep_link,
-- $8 ios_url, $9 android_url, $10 desktop_url, $11 ios_preview, $12 social_title,
-- $13 social_description, $14 social_image, $15 expires_at_ms, $16 created_at_ms,
-- $17 updated_at_ms. Idempotent: yes.
INSERT INTO lp_links (ref, app, url, campaign, source, medium, deep_link, ios_url, android_url, desktop_url, ios_preview,
                      social_title, social_description, social_image, expires_at_ms, created_at_ms, updated_at_ms)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
ON CONFLICT (ref) DO NOTHING
RETURNING ref
