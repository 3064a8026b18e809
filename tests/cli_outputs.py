"""Every CLI output on the small examples, hashed: a refactor must leave them byte-identical.

``python -m tests.cli_outputs`` prints the manifest; ``--write`` stores it in
tests/golden/cli_outputs.json (do that only for a deliberate, reviewed change of output).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
MANIFEST = ROOT / "tests" / "golden" / "cli_outputs.json"

#: small examples: every command runs on each in a few seconds
SMALL = ("seed000-2node", "seed001-64gpu", "seed003-matrix", "seed003-roft")
#: (label, argv template); {ex} is the example spec, {out} a fresh output folder
COMMANDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("plan-json", ("plan", "{ex}", "--json")),
    ("plan-topology", ("plan", "{ex}", "--no-layout", "--json")),
    ("plan-out", ("plan", "{ex}", "-o", "{out}")),
    ("cables-csv", ("cables", "{ex}", "-o", "{out}/cables.csv")),
    ("cables-netbox", ("cables", "{ex}", "--format", "netbox", "-o", "{out}")),
    ("cables-p2p", ("cables", "{ex}", "--format", "p2p", "-o", "{out}/p2p.csv")),
    ("cables-ibtopo", ("cables", "{ex}", "--format", "ibtopo", "-o", "{out}/fabric.topo")),
    ("cables-dot", ("cables", "{ex}", "--format", "dot", "-o", "{out}/fabric.dot")),
    ("analyze-pairs", ("analyze", "{ex}", "--json")),
    ("analyze-alltoall", ("analyze", "{ex}", "--pattern", "alltoall", "--json")),
    ("compare", ("compare", "{ex}", "--json")),
    ("sheets", ("sheets", "{ex}", "-o", "{out}")),
    ("testplan", ("testplan", "{ex}", "-o", "{out}")),
)


def run(argv: list[str]) -> tuple[int, str, str]:
    """``railplan ARGV`` in-process: exit code, stdout, stderr."""
    from railplan.cli import main

    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(argv)
        except SystemExit as exc:
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def outputs(example: str, label: str, template: tuple[str, ...]) -> dict[str, str]:
    """Hashes of stdout and of every file one command writes, keyed by name."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        argv = [a.format(ex=EXAMPLES / f"{example}.yaml", out=out) for a in template]
        code, stdout, stderr = run(argv)
        result = {f"{example}/{label}/exit": str(code)}
        if code:
            result[f"{example}/{label}/stderr"] = stderr.strip()
        result[f"{example}/{label}/stdout"] = _digest(stdout.replace(str(out), "OUT").encode())
        for path in sorted(out.rglob("*")) if out.exists() else []:
            if path.is_file():
                rel = path.relative_to(out).as_posix()
                result[f"{example}/{label}/{rel}"] = _digest(path.read_bytes())
        return result


def manifest() -> dict[str, str]:
    found: dict[str, str] = {}
    for example in SMALL:
        for label, template in COMMANDS:
            found.update(outputs(example, label, template))
    _code, stdout, _ = run(["schema"])
    found["schema/stdout"] = _digest(stdout.encode())
    return found


def main() -> None:
    found = manifest()
    text = json.dumps(found, indent=1, sort_keys=True) + "\n"
    if "--write" in sys.argv:
        MANIFEST.write_text(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
