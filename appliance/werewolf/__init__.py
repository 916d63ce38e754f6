"""The Werewolf feature: the judge on the bus, AI seats, recording, voice mode and CLI.

The rules themselves are pure code in :mod:`appliance.judge`; this package runs them.

- :mod:`~appliance.werewolf.game` — the ``Judge`` on the bus, recording, ``run_game``/``play_game`` (simulated user seat).
- :mod:`~appliance.werewolf.seats` — AI seats: code strategies on their own beliefs; the LLM words speeches (one slot per seat).
- :mod:`~appliance.werewolf.trace` — every seat prompt, one JSONL per seat.
- :mod:`~appliance.werewolf.voices` — the seat voice library (``voices/werewolf.yaml``).
- :mod:`~appliance.werewolf.mode` — the human user seat: the voice server's ``werewolf`` mode.
- :mod:`~appliance.werewolf.table_voice` — what the person hears: seats' speeches in their voices, the narrator.
- :mod:`~appliance.bench.werewolf` — ``appliance bench werewolf``: seeded games vs the random baseline.
- :mod:`~appliance.werewolf.replay` — ``appliance replay`` of a game: re-run from seed and bus log, first difference.
- :mod:`~appliance.cli.werewolf` — ``appliance werewolf --user sim|human``, ``bench werewolf``, the replay hook.
"""
