"""``python -m abridged``: the command line."""

from abridged.cli.app import main

main()
