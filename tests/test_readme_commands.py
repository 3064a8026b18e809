"""Every shell command in the README and the docs runs from a clean copy of the repository.

The commands of every ```bash block of README.md and of every page under docs/ run in a copy of the checkout (tracked and new files only,
no build output) with ``railplan`` on PATH running this tree; each must exit 0, or 1 where its
comment says "exit 1". A ``$ command`` line in a plain block is an error example: it must exit
2 and print exactly the lines under it on stderr. The run takes minutes, so it needs
``RAILPLAN_SLOW=1`` (.ci/run sets it); the fast test checks that every command is either run or
named below with the reason it is not, and that every example file a command names exists.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
#: the README, then every page of the documentation site, in a fixed order
PAGES = [README, *sorted((ROOT / "docs").rglob("*.md"))]
#: commands not run here, each with where it is checked instead
NOT_RUN = {
    "python3 -m pip install": "installs into the running environment; .ci/run and .ci/wheel_check",
    "python3 -m pytest": "the suite itself; .ci/run",
    "ruff check": "lint; .ci/run",
    "railplan tui": "interactive; tests/test_tui.py drives it with Textual's pilot",
    "python bench/": "benchmarks print tables and take minutes; never gate CI",
}
SLOW = os.environ.get("RAILPLAN_SLOW") == "1"


def readme_commands() -> list[tuple[str, int, str]]:
    """(command, expected exit code, expected stderr or "") in page order, README first."""
    text = "\n".join(page.read_text(encoding="utf-8") for page in PAGES)
    out: list[tuple[str, int, str]] = []
    for lang, body in re.findall(r"^```(\w*)\n(.*?)^```", text, re.S | re.M):
        lines = body.splitlines()
        if lang in ("bash", "sh"):
            for line in lines:
                command = line.split("  #", 1)[0].strip()
                if command and not command.startswith("#"):
                    out.append((command, 1 if "exit 1" in line else 0, ""))
        elif lang == "":
            for i, line in enumerate(lines):
                if line.startswith("$ "):
                    err = []
                    for follow in lines[i + 1 :]:
                        if follow.startswith("$ "):
                            break
                        err.append(follow)
                    out.append((line[2:], 2, "\n".join(err) + "\n"))
    return out


def skipped(command: str) -> str:
    return next((why for start, why in NOT_RUN.items() if command.startswith(start)), "")


def test_every_readme_command_is_run_or_explained() -> None:
    commands = readme_commands()
    assert len(commands) >= 40
    run = [c for c, _, _ in commands if not skipped(c)]
    assert len(run) >= 35 and any(c.startswith("railplan grade") for c in run)
    for command, _, _ in commands:
        for word in shlex.split(command.replace("|", " ").replace(">", " ")):
            if word.startswith("examples/"):
                assert (ROOT / word).exists(), f"{command}: {word} is not in the repository"


def clean_copy(dest: Path) -> Path:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, check=True,
    ).stdout.decode().split("\0")  # fmt: skip
    for rel in filter(None, listed):
        src = ROOT / rel
        if not src.exists() and not src.is_symlink():
            continue  # deleted in the work tree
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            (dest / rel).symlink_to(os.readlink(src))
        else:
            shutil.copy2(src, dest / rel)
    return dest


@pytest.mark.skipif(not SLOW, reason="RAILPLAN_SLOW=1: runs every README command (minutes)")
def test_readme_commands_run_from_a_clean_checkout(tmp_path: Path) -> None:
    repo = clean_copy(tmp_path / "repo")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "railplan"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m railplan "$@"\n', encoding="utf-8")
    shim.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "PYTHONPATH": str(repo)}
    env.pop("RAILPLAN_CATALOG_DIR", None)
    failures = []
    for command, code, err in readme_commands():
        if skipped(command):
            continue
        if command.startswith("railplan plan examples/h100-1k.yaml --json | jq") and not (
            shutil.which("jq")
        ):
            command = command.split(" | jq", 1)[0]  # jq is optional on this machine
        res = subprocess.run(
            ["bash", "-o", "pipefail", "-c", command],
            cwd=repo, env=env, capture_output=True, text=True, timeout=900,
        )  # fmt: skip
        if res.returncode != code or (err and res.stderr != err) or "Traceback" in res.stderr:
            failures.append(f"{command}: exit {res.returncode} (want {code}): {res.stderr[-600:]}")
    assert not failures, "\n".join(failures)


def test_the_field_example_is_current() -> None:
    """examples/field/ is what tests/field_example.py makes from today's code."""
    from tests import field_example

    assert field_example.main([]) == 0, "run: python -m tests.field_example --write"
