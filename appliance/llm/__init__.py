"""The LLM floor, beneath every agent, seat and simulated person.

- :mod:`~appliance.llm.decision` — one pydantic model per decision → its JSON schema and
  its GBNF grammar (compact JSON, keys in field order).
- :mod:`~appliance.llm.base` — ``LLM``: the protocol every agent, seat and simulated person
  depends on (one constrained JSON answer: ``decide``, ``json``, ``complete``; or a short
  ``text``; ``warm``), its ``Reply`` and ``LLMError``.
- :mod:`~appliance.llm.client` — ``OpenAICompatibleClient``: that LLM on an OpenAI-compatible
  endpoint, pinned to a llama-server slot on the embedded server; transient failures
  retried with doubling backoff.
- :mod:`~appliance.llm.runtime` — ``LLMRuntime``: the one place that decides "embedded or
  remote, slot N"; hands out clients by slot name (``llm("phone")``, ``llm("P3")``).
- :mod:`~appliance.llm.server` — the embedded llama.cpp server in a child process: its log
  off the console, restarted and re-warmed when it exits; endpoint and key resolution.
- :mod:`~appliance.llm.process` — the child's entry point (``python -m appliance.llm.process``).
"""
