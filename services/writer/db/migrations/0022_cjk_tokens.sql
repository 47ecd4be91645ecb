-- Chinese, Japanese and Korean text is searched by its characters (shared/content/cjk.py): the
-- full-text indexes hold a zero-width space between each such character and the next, which
-- the writer puts in every text from now on (linkstore.set_fts). The texts already there get
-- them here (cjk_segmented and cjk_has are registered by services/writer/db/migrate.py).
UPDATE link_text_fts SET
    title = cjk_segmented(title),
    extracted_text = cjk_segmented(extracted_text),
    media_text = cjk_segmented(media_text),
    post_text = cjk_segmented(post_text)
WHERE cjk_has(title) OR cjk_has(extracted_text) OR cjk_has(media_text) OR cjk_has(post_text);
UPDATE link_text_history SET text = cjk_segmented(text) WHERE cjk_has(text);
