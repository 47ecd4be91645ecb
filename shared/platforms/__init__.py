"""Platform posts: one post shape for every platform (`post`), and per platform the chain
of steps that gets a link's post (API first, the browser's page last), each step ending
with a typed outcome (`outcome`: present with the post, gone with the platform's own
evidence, unknown). The capture hooks (`plugins/<platform>/`) and the liveness checks call
the same steps."""
