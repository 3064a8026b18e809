"""`railplan examples [DIR]` copies every bundled example out of the package, byte for byte."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import EXAMPLES, ROOT


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def test_examples_copies_the_bundled_folder_whole(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    res = cli("examples", tmp_path / "ex")
    assert res.code == 0 and res.out == ""
    assert res.err.startswith(f"wrote {tmp_path / 'ex' / 'examples'}/ (")
    copied = _tree(tmp_path / "ex" / "examples")
    assert copied == _tree(EXAMPLES)
    assert {"h100-1k.yaml", "field/design.json", "user-catalog/switches.yaml"} <= set(copied)
    assert any(rel.startswith("field/results/") for rel in copied)


def test_the_copied_examples_run_the_readme_commands(cli, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    assert cli("examples").code == 0  # DIR defaults to here
    assert cli("plan", "examples/seed000-2node.yaml", "--no-layout", "--json").code == 0
    res = cli("catalog", "show", "qm9790", "--catalog", "examples/user-catalog")
    assert res.code == 0 and "qm9790" in res.out
    res = cli("grade", "examples/field/design.json", "--results", "examples/field/results/")
    assert res.code == 0, res.err


def test_examples_refuses_to_overwrite(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "mine.yaml").write_text("name: mine\n")
    res = cli("examples", tmp_path)
    assert res.code == 2
    assert res.err == (
        f"railplan: error: {tmp_path / 'examples'} already exists; pick another DIR "
        "(railplan examples NEW_DIR) or remove it\n"
    )
    assert (tmp_path / "examples" / "mine.yaml").read_text() == "name: mine\n"
    (tmp_path / "afile").write_text("x")
    res = cli("examples", tmp_path / "afile")
    assert res.code == 2 and "is a file, not a folder" in res.err


def test_the_package_links_to_the_examples_folder() -> None:
    """railplan/examples is the repository's examples/ (one copy), shipped as package data."""
    link = ROOT / "railplan" / "examples"
    assert link.is_symlink() and link.resolve() == EXAMPLES.resolve()
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"examples/**/*"' in pyproject
