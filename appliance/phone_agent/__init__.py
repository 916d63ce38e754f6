"""The phone agent: interviews the person for a form's fields, by voice or on a terminal.

- :mod:`~appliance.phone_agent.interview` — the interview as pure functions over a frozen
  state: what to ask next, how (in words, spelled, spelled or typed), confirmations,
  rejections, refusals, give-ups to explain, authorisation, review.
- :mod:`~appliance.phone_agent.agent` — the thin loop: speaks, listens, sends typed payloads.
- :mod:`~appliance.phone_agent.fields` — questions, read-backs, parsing, summaries per field kind.
- :mod:`~appliance.phone_agent.candidates` — the page's close matches: asking which one, reading the pick.
- :mod:`~appliance.phone_agent.spelling` — spelling as people say it → the written value, and back.
- :mod:`~appliance.phone_agent.normalise` — spoken → written values (numbers, dates, e-mails, codes).
- :mod:`~appliance.phone_agent.words` — written → spoken numbers and dates.
"""
