"""The computer agent: drives one headless Chromium through a form, filling what the person says.

- :mod:`~appliance.computer_agent.agent` — the loop: perceive → name new fields → fill what
  arrives → verify → advance; the final submit only after ``submit_authorized``, never for a
  "don't submit" task (review); a step it cannot do is given up out loud (``step_failed``).
- :mod:`~appliance.computer_agent.fieldbook` — what it knows about each field, pure functions
  over a frozen ``FieldBook`` (naming, announcements, values, the page's verdicts).
- :mod:`~appliance.computer_agent.page` — the page as a compact indexed field list (one
  ``evaluate``), and filling one field by its ref, read back.
- :mod:`~appliance.computer_agent.widgets` — one strategy per widget kind, and the ladder of
  different strategies tried before a widget is given up.
- :mod:`~appliance.computer_agent.mapper` — naming fields: autocomplete tokens and common
  labels first, then one constrained LLM call per page state.
- :mod:`~appliance.computer_agent.task` — the person's task in words: submit once allowed, or
  fill and leave it for their review.
- :mod:`~appliance.computer_agent.verdict` — the page's answer to a press (result, refused,
  next step), obstacles only the person can pass (captcha, password), the give-up words.
- :mod:`~appliance.computer_agent.actions` — browser actions counted by kind (fill, click, select, key).
- :mod:`~appliance.computer_agent.preview` — the person's live picture of the browser
  (CDP screencast), the field worked on, their clicks and keys.
- :mod:`~appliance.computer_agent.decide` — the autonomous launch decision (call the phone agent or finish).
- :mod:`~appliance.computer_agent.browser` — Playwright's Chromium with a guaranteed clean stop.
"""
