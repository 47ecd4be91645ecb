-- Version 15: the forum of every post (issue 35): with several FEEDS each "where posted"
-- names its forum, and lists and search filter by it. The writer stores
-- shared.discourse.forum_of(post_url) with every post, and posts stored before get the
-- same from their post URL here: its host, lower-cased, with the port when one is written.
ALTER TABLE discourse_posts ADD COLUMN forum TEXT NOT NULL DEFAULT '';
UPDATE discourse_posts SET forum = lower(substr(rest, 1, instr(rest || '/', '/') - 1))
FROM (
    SELECT id AS post_id,
           replace(replace(substr(post_url, instr(post_url, '://') + 3), '?', '/'), '#', '/')
               AS rest
    FROM discourse_posts WHERE instr(post_url, '://') > 0
) WHERE discourse_posts.id = post_id;
CREATE INDEX discourse_posts_forum ON discourse_posts (forum);
