"""The bundled demo forms, their specs and the simulated persons' profiles.

- :mod:`~appliance.demo.site` — the demo site (aiohttp on 127.0.0.1) with its submission
  record, and ``demo:NAME`` → URL.
- :mod:`~appliance.demo.spec` — per page: which profile key each field takes and the value the page must hold.
- :mod:`~appliance.demo.profile` — profiles: YAML with semantic keys (``profiles/NAME.yaml``).
- ``pages/``, ``specs/``, ``profiles/`` — the data files.
"""
