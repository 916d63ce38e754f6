"""``python -m appliance.cli``: the ``appliance`` console script."""

import sys

from appliance.cli import main

sys.exit(main())
