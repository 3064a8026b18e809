"""``python -m railplan``: the same as the ``railplan`` command."""

from railplan.cli import main

main()
