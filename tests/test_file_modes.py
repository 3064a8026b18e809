"""Written files follow the umask: 0644 under umask 022 (scripts 0755), 0600 under 077."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from railplan.render.atomic import write_atomic, write_set
from tests.conftest import EXAMPLES

SPEC = EXAMPLES / "seed000-2node.yaml"


@pytest.fixture
def umask() -> Iterator[object]:
    old = os.umask(0o022)

    def set_to(value: int) -> None:
        os.umask(value)

    yield set_to
    os.umask(old)


def modes(folder: Path) -> dict[str, int]:
    return {
        str(p.relative_to(folder)): stat.S_IMODE(p.stat().st_mode)
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_every_output_of_the_cli_is_0644_under_umask_022(cli, tmp_path: Path, umask) -> None:
    umask(0o022)
    out = tmp_path / "out"
    assert cli("plan", SPEC, "-o", out / "plan").code == 0
    assert cli("cables", SPEC, "--naive", "-o", out / "cables.csv").code == 0
    assert cli("cables", SPEC, "--naive", "--format", "netbox", "-o", out / "netbox").code == 0
    assert cli("sheets", SPEC, "--naive", "-o", out / "sheets").code == 0
    assert cli("testplan", SPEC, "-o", out / "testplan").code == 0
    found = modes(out)
    scripts = {rel for rel in found if (out / rel).read_bytes().startswith(b"#!")}
    assert {"plan/design.json", "plan/spec.yaml", "cables.csv", "sheets/sheets.pdf"} <= set(found)
    assert any(rel.endswith(".sh") for rel in scripts) and any(
        r.startswith("netbox/") for r in found
    )
    assert {rel: m for rel, m in found.items() if rel not in scripts} == {
        rel: 0o644 for rel in found if rel not in scripts
    }
    assert {found[rel] for rel in scripts} == {0o755}
    dirs = {stat.S_IMODE(p.stat().st_mode) for p in out.rglob("*") if p.is_dir()}
    assert dirs == {0o755}


def test_a_private_umask_keeps_files_private(tmp_path: Path, umask) -> None:
    umask(0o077)
    write_atomic(tmp_path / "a.csv", "x\n")
    write_set(tmp_path / "set", {"data.json": "{}", "scripts/run.sh": "#!/bin/sh\n"},
              mode=lambda rel: 0o755 if rel.endswith(".sh") else 0)  # fmt: skip
    assert modes(tmp_path) == {"a.csv": 0o600, "set/data.json": 0o600, "set/scripts/run.sh": 0o700}
    umask(0o002)  # a group-writable umask is honoured too
    write_atomic(tmp_path / "a.csv", "y\n")  # replacing a file gives the new mode
    assert modes(tmp_path)["a.csv"] == 0o664
