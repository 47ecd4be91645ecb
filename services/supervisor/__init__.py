"""`dla`: starts the embedded infrastructure and every service on one machine."""
