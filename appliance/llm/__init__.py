"""The LLM floor, beneath every agent, seat and simulated person.

- :mod:`~appliance.llm.client` — ``LLM``: one constrained JSON (or short text) answer from an
  OpenAI-compatible endpoint, pinned to a llama-server slot on the embedded server.
- :mod:`~appliance.llm.server` — the embedded llama.cpp server (xllamacpp) on 127.0.0.1,
  endpoint and key resolution for ``openai_compatible``, prompt warming.
"""
