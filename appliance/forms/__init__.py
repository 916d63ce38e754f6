"""Form filling by voice: the session that runs the computer agent and the phone agent on
one bus (fixed or autonomous launch), its CLI commands, and the small shared LLM helper."""
