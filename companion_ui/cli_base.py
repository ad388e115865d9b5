"""What every `tabletop` command module shares: the one error a person can fix, and its exit status. A module of its
own so the command modules and `cli.py`, which assembles them, need not import each other."""

from __future__ import annotations

EXIT_USAGE = 2


class CliError(Exception):
    """A problem with what the user asked for; printed as one line, exit status 2."""
