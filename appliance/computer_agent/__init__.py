"""The computer agent: drives one headless Chromium through a form, filling what the person says.

- :mod:`~appliance.computer_agent.agent` — the loop: perceive → name new fields → fill what
  arrives → verify → advance; the final submit only after ``submit_authorized``.
- :mod:`~appliance.computer_agent.fieldbook` — what it knows about each field, pure functions
  over a frozen ``FieldBook`` (naming, announcements, values, the page's verdicts).
- :mod:`~appliance.computer_agent.page` — the page as a compact indexed field list (one
  ``evaluate``), and filling one field by its ref, read back.
- :mod:`~appliance.computer_agent.mapper` — naming fields: autocomplete tokens and common
  labels first, then one constrained LLM call per page state.
- :mod:`~appliance.computer_agent.decide` — the autonomous launch decision (call the phone agent or finish).
- :mod:`~appliance.computer_agent.browser` — Playwright's Chromium with a guaranteed clean stop.
"""
