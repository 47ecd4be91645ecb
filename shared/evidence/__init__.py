"""Evidence of a capture: its manifest (fingerprint), its WACZ, RFC 3161 timestamps and the
checks `dla verify` runs (docs/architecture.md, "Evidence")."""
