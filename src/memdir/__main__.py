"""``python -m memdir`` runs the command line."""

from memdir.interfaces.cli import main

main()
