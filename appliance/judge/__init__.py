"""Werewolf's judge: pure game logic over a frozen state, no I/O.

- :mod:`~appliance.judge.state` — roles, phases, actions, events, the frozen ``GameState``.
- :mod:`~appliance.judge.rules` — the rules: ``new_game``, ``next_turn``, ``act``, ``advance``.
- :mod:`~appliance.judge.tools` — the turn tool's JSON schema / GBNF and argument checks.
- :mod:`~appliance.judge.views` — what each seat may know, rendered as its prompt text.
- :mod:`~appliance.judge.isolation` — audit of views and prompts for leaked private facts.
- :mod:`~appliance.judge.transcript` — the user seat's transcript → action, failing closed.

Running a game (bus, seats, recording, the voice mode) is :mod:`appliance.werewolf`; its
envelope types are :mod:`appliance.protocol.werewolf`.
"""
