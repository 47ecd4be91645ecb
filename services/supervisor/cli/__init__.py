"""The `dla` command: `dla up` and the owner's subcommands (they talk to the running stack)."""
