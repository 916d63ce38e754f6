"""The phone agent: interviews the person for a form's fields, by voice or on a terminal.

- :mod:`~appliance.phone_agent.interview` — the interview as pure functions over a frozen
  state: what to ask next, how (in words, spelled, spelled or typed), confirmations,
  rejections, refusals, give-ups to explain, authorisation, review.
- :mod:`~appliance.phone_agent.confirmation` — each exchange as pure functions that return
  typed steps: a field asked, read back (alone or with the next question), spelled, fields
  asked together, the page's close matches, the summary and the yes to submit; a read-back
  cut off by barge-in confirms nothing.
- :mod:`~appliance.phone_agent.agent` — the thin loop: carries the steps out (speaks, listens,
  sends typed payloads, asks the LLM) and feeds back what came of them.
- :mod:`~appliance.phone_agent.line` — the audio side as text (``Line``), a queue-fed line, and
  ``CallLine``: waits for answers, checks that the person is still there.
- :mod:`~appliance.phone_agent.sayings` — the fixed words: greeting, endings, LLM prompts, "stop".
- :mod:`~appliance.phone_agent.outcome` — how a call ended (``PhoneOutcome``) and its figures.
- :mod:`~appliance.phone_agent.fields` — questions, read-backs, parsing, summaries per field kind.
- :mod:`~appliance.phone_agent.candidates` — the page's close matches: asking which one, reading the pick.
- :mod:`~appliance.phone_agent.spelling` — spelling as people say it → the written value, and back.
- :mod:`~appliance.phone_agent.normalise` — spoken → written values (numbers, dates, e-mails, codes).
- :mod:`~appliance.phone_agent.words` — written → spoken numbers and dates.
"""
