"""Simulated users: a person on a form-filling call and a Werewolf user seat.

- :mod:`~appliance.simulate.person` — the form persona: what it is asked, what it answers, its mouth.
- :mod:`~appliance.simulate.hearing` — the person's ear: whether a read-back states its own value.
- :mod:`~appliance.simulate.speech` — the person's words for numbers, dates and codes.
- :mod:`~appliance.simulate.call` — the person on a WebRTC call (Whisper ears, Piper voice).
- :mod:`~appliance.simulate.form_run` — one simulated form session, end to end.
- :mod:`~appliance.simulate.report` — its ``simulate form`` JSON: the site's submissions against
  the spec and profile, the interview's figures from the session's envelopes.
- :mod:`~appliance.simulate.werewolf_user` — the simulated Werewolf user seat.
- :mod:`~appliance.cli.simulate` — ``appliance simulate …``.

The simulation is the forms benchmark's oracle, so nothing here imports the phone agent.
"""
