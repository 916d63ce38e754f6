"""The form-filling feature: both agents wired on one bus, on the page and on the terminal.

- :mod:`~appliance.forms.session` — one form task: the computer agent and the phone agent on
  the bus ``cfg.bus`` names (fixed or autonomous launch; or one agent per process on a Redis
  stream), every envelope kept; the person's side of it (``PageSide``: the live preview,
  typed values, a Submit from the page).
- :mod:`~appliance.forms.typed` — a value the person typed (page or terminal) → the
  confirmed value both agents get.
- :mod:`~appliance.forms.mode` — the page's "Fill a form by voice": the voice server's ``form`` mode.
- :mod:`~appliance.cli.forms` — ``appliance demo`` and ``appliance form`` (``--agent`` for one process each).
"""
