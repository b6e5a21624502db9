"""`python -m kb` runs the command line."""

from kb.cli import main

main()
