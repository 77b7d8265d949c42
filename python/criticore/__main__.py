"""`python -m criticore` runs the CLI (how the runtime starts `criticore load` in a venv)."""

from criticore.cli import main

main()
