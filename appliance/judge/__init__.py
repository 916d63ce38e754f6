"""Werewolf: a judge in plain code, per-seat views, one legal turn tool at a time.

- :mod:`~appliance.judge.state` — roles, phases, actions, events, the frozen ``GameState``.
- :mod:`~appliance.judge.rules` — pure rules: ``new_game``, ``next_turn``, ``act``, ``advance``.
- :mod:`~appliance.judge.tools` — the turn tool's JSON schema / GBNF and argument checks.
- :mod:`~appliance.judge.views` — what each seat may know, rendered as its prompt text.
- :mod:`~appliance.judge.isolation` — audit of views and prompts for leaked private facts.
- :mod:`~appliance.judge.transcript` — the user seat's transcript → action, failing closed.
"""
