"""The media worker: runs the media plugins (yt-dlp) on `job.media`; scale out freely."""
