"""How a compile worker process ended, in the words its error messages use."""

from __future__ import annotations

import signal


def describe_exit(exitcode: int | None) -> str:
    """Say how a process ended from its exit code: negative codes are the signal that killed
    it (named where the platform knows it), None an exit status no one could read."""
    if exitcode is None:
        return "its exit status is unknown"
    if exitcode < 0:
        try:
            return f"killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exit status {exitcode}"
