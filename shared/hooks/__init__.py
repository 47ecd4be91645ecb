"""The capture-hook contract: JSONL records printed by hooks, and the runner that executes them."""
