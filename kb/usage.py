"""UsageProblem: bad input a user gave below the command line (an environment setting).

Modules that are no part of the command line raise it; `kb.cli.main` prints the
message and exits 2, as for a bad option, never as an internal error.
"""

from __future__ import annotations


class UsageProblem(Exception):
    """Input the user controls (e.g. $KB_EQ_BUDGET) is invalid; kb stops with exit 2."""
