"""The poller: watches feeds and publishes every post with its extracted links."""
