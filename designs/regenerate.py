"""Regenerate designs/<example>/ from every examples/*.yaml (run after a deliberate change)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    from railplan.cli import main as cli

    for spec in sorted((ROOT / "examples").glob("*.yaml")):
        out = ROOT / "designs" / spec.stem
        try:
            cli(["plan", str(spec), "-o", str(out), "--json"])
        except SystemExit as exc:
            if exc.code:
                sys.exit(exc.code)


if __name__ == "__main__":
    main()
