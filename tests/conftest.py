"""Shared fixtures: the bundled catalog, spec builders and an in-process CLI runner."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from railplan.catalog import Catalog, load_catalog
from railplan.cli.app import main
from railplan.spec import Spec, spec_from_dict

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return load_catalog()


def make_spec(gpus: int, node: str = "hgx-h100-8x400g", **fabric: Any) -> Spec:
    """A spec of ``gpus`` on ``node``; a ROFT unless ``topology`` says otherwise (the spec's
    own default, ``auto``, is asked for with ``topology="auto"``)."""
    fabric.setdefault("topology", "roft")
    data: dict[str, Any] = {"cluster": {"gpus": gpus, "node": node}, "fabric": fabric}
    return spec_from_dict(data)


@dataclass
class CliResult:
    code: int
    out: str
    err: str


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Run ``railplan ARGS`` in-process; returns exit code, stdout and stderr.

    RAILPLAN_DEBUG=1: an internal error (exit 70 for users) raises here, so the test fails on it
    with its traceback.
    """
    monkeypatch.setenv("RAILPLAN_DEBUG", "1")

    def run(*args: str) -> CliResult:
        capsys.readouterr()
        try:
            main([str(a) for a in args])
            code = 0
        except SystemExit as exc:
            code = int(exc.code or 0)
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


def write_scripts(plan: Any, design: Any, root: Path) -> Path:
    """The test plan's runnable scripts written under ``root`` as `testplan -o` lays them out
    (executables marked executable); returns ``root``."""
    import stat

    from railplan.render.scripts import executable, render_scripts

    for rel, text in render_scripts(plan, design).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        if executable(rel):
            path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return root
