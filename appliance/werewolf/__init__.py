"""The Werewolf feature: the judge on the bus, AI seats, recording, voice mode and CLI.

The rules themselves are pure code in :mod:`appliance.judge`; this package runs them.

- :mod:`~appliance.werewolf.game` — the ``Judge`` on the bus, recording, ``run_game`` (simulated user seat).
- :mod:`~appliance.werewolf.seats` — AI seats: code strategies on their own beliefs; the LLM words speeches (one slot per seat).
- :mod:`~appliance.werewolf.trace` — every seat prompt, one JSONL per seat.
- :mod:`~appliance.werewolf.voices` — the seat voice library (``voices/werewolf.yaml``).
- :mod:`~appliance.werewolf.mode` — the human user seat: the voice server's ``werewolf`` mode.
- :mod:`~appliance.werewolf.commands` — ``appliance werewolf --user sim|human``.
"""
