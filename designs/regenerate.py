"""Regenerate designs/<example>/ from every examples/*.yaml (run after a deliberate change).

Small examples keep their whole ``design.json``, compared byte for byte by the tests. Large
ones (a design.json over ``FULL_LIMIT_BYTES``) keep ``summary.json`` (what ``railplan plan
--json`` prints: counts, bill, solver report) and ``design.sha256`` (the hash of the full cabled
design.json and of its topology alone), so the repository stays small while a drift still
shows.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: designs larger than this are stored as summary + hashes instead of the whole file
FULL_LIMIT_BYTES = 1_000_000


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def main() -> None:
    sys.path.insert(0, str(ROOT))
    from railplan import load_spec, plan
    from railplan.design import design_to_json
    from tests.cli_outputs import run

    for spec in sorted((ROOT / "examples").glob("*.yaml")):
        out = ROOT / "designs" / spec.stem
        code, stdout, stderr = run(["plan", str(spec), "-o", str(out), "--json"])
        if code:
            sys.exit(f"{spec.name}: {stderr}")
        design = out / "design.json"
        text = design.read_text(encoding="utf-8")
        if len(text.encode("utf-8")) <= FULL_LIMIT_BYTES:
            for stale in ("summary.json", "design.sha256"):
                (out / stale).unlink(missing_ok=True)
            continue
        topology = design_to_json(plan(load_spec(spec)))
        (out / "summary.json").write_text(stdout, encoding="utf-8")
        (out / "design.sha256").write_text(
            f"{sha256(text)}  design.json\n{sha256(topology)}  topology\n", encoding="utf-8"
        )
        design.unlink()


if __name__ == "__main__":
    main()
