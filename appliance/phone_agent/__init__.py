"""The phone agent: interviews the person by voice, one field at a time, and never waits on the browser.

- :mod:`~appliance.phone_agent.agent` — the loop: speak, listen, send typed payloads.
- :mod:`~appliance.phone_agent.interview` — the interview as pure functions over a frozen
  ``Interview`` (bus messages in, the next step out).
- :mod:`~appliance.phone_agent.fields` — per field kind: the question, the read-back, parsing the answer.
- :mod:`~appliance.phone_agent.candidates` — the page's close matches: asking which one, reading the pick.
- :mod:`~appliance.phone_agent.normalise` — spoken → written (digits, dates, e-mails, spelling alphabet).
- :mod:`~appliance.phone_agent.words` — written → spoken numbers and dates for the read-back.
"""
