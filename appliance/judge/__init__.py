"""Werewolf's judge: pure game logic over a frozen state, no I/O.

- :mod:`~appliance.judge.state` — roles, phases, actions, the frozen ``GameState``.
- :mod:`~appliance.judge.events` — the event log: one frozen dataclass per kind, dispatched with ``match``.
- :mod:`~appliance.judge.rules` — the rules: ``new_game``, ``next_turn``, ``act``, ``advance``.
- :mod:`~appliance.judge.tools` — the turn tool's JSON schema / GBNF and argument checks.
- :mod:`~appliance.judge.views` — what each seat may know, rendered as its prompt text (and back).
- :mod:`~appliance.judge.isolation` — audit of views and prompts for leaked private facts.
- :mod:`~appliance.judge.transcript` — the user seat's transcript → action, failing closed.
- :mod:`~appliance.judge.recap` — a spoken recap question and its answer from the asking seat's own view.
- :mod:`~appliance.judge.strategy` — the rules and role strategies as a seat's prompt states them.
- :mod:`~appliance.judge.claims` — what a day speech claims (seer claims, accusations, defences).
- :mod:`~appliance.judge.beliefs` — one seat's facts, public record and suspicion, from its own view.
- :mod:`~appliance.judge.policy` — role strategies in code: beliefs + the legal tool → action, speech position.
- :mod:`~appliance.judge.selfplay` — whole games in code (code policy or random baseline) and their rates.

Running a game (bus, seats, recording, the voice mode) is :mod:`appliance.werewolf`; its
envelope types are :mod:`appliance.protocol.werewolf`.
"""
