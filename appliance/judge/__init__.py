"""Werewolf: a judge in plain code, per-seat views, one legal turn tool at a time.

Pure game logic (no I/O):

- :mod:`~appliance.judge.state` — roles, phases, actions, events, the frozen ``GameState``.
- :mod:`~appliance.judge.rules` — the rules: ``new_game``, ``next_turn``, ``act``, ``advance``.
- :mod:`~appliance.judge.tools` — the turn tool's JSON schema / GBNF and argument checks.
- :mod:`~appliance.judge.views` — what each seat may know, rendered as its prompt text.
- :mod:`~appliance.judge.isolation` — audit of views and prompts for leaked private facts.
- :mod:`~appliance.judge.transcript` — the user seat's transcript → action, failing closed.

Running a game:

- :mod:`~appliance.judge.protocol` — the judge ⇄ seat envelope types on the bus.
- :mod:`~appliance.judge.seats` — AI seats: role strategies, one LLM slot per seat.
- :mod:`~appliance.judge.game` — the judge on the bus, recording, ``run_game``.
- :mod:`~appliance.judge.trace`, :mod:`~appliance.judge.voices` — prompt trace; seat voices.
- The simulated user seat lives in :mod:`appliance.simulate.werewolf_user`.
- :mod:`~appliance.judge.page_mode` — the human user seat: the voice server's ``werewolf`` mode.
"""
