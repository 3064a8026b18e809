"""railplan's command line: a thin shell over the library, one module per command."""

from __future__ import annotations

from railplan.cli.app import app, main

__all__ = ["app", "main"]
