"""The base of every error a user or operator can fix (bad config, a missing model file,
no audio device...). The CLI prints such an error as one line and exits with status 2."""


class ApplianceError(Exception):
    """An error whose message tells the user what is wrong and how to fix it."""
