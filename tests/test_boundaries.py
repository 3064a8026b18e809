"""Architecture boundaries: which packages may import ortools, reportlab and textual."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "railplan"
ALLOWED = {"ortools": "solve", "reportlab": "render", "textual": "tui"}


@cache
def _tree(path: Path) -> ast.Module:
    """The parsed module, once per file for all the checks here (parsing is their cost)."""
    return ast.parse(path.read_text(encoding="utf-8"))


@cache
def _imports(path: Path) -> set[str]:
    tree = _tree(path)
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_heavy_libraries_stay_in_their_packages():
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        sub = path.relative_to(PACKAGE).parts[0]
        for lib, home in ALLOWED.items():
            if lib in _imports(path) and sub != home:
                offenders.append(f"{path.relative_to(PACKAGE)} imports {lib}")
    assert offenders == []


def test_core_never_prints_or_exits():
    core = [
        p
        for p in PACKAGE.rglob("*.py")
        if p.relative_to(PACKAGE).parts[0] not in ("cli", "tui", "__main__.py")
    ]
    offenders = []
    for path in core:
        tree = _tree(path)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("print", "exit")
            ):
                offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno} calls {node.func.id}")
            if (
                isinstance(node, ast.Attribute)
                and node.attr == "exit"
                and isinstance(node.value, ast.Name)
                and node.value.id == "sys"
            ):
                offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno} calls sys.exit")
    assert offenders == []


def test_every_module_starts_with_a_docstring():
    missing = [
        str(p.relative_to(PACKAGE))
        for p in PACKAGE.rglob("*.py")
        if ast.get_docstring(_tree(p)) is None
    ]
    assert missing == []


def test_library_cites_public_sources_not_internal_notes():
    """Users cannot open the project's seed notes, its domain primer or its issue tracker."""
    internal = re.compile(r"seed[ -]?0\d\d|DOMAIN\.md|\bissue #?\d+", re.IGNORECASE)
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if internal.search(line) and "nccl-tests issue" not in line:
                offenders.append(f"{path.relative_to(PACKAGE)}:{number}: {line.strip()}")
    assert offenders == []
