"""The import graph read from the source: stages import only earlier stages, and no cycles.

Every import counts, at module level or inside a function (a lazy import that hides a cycle is
still a cycle); ``if TYPE_CHECKING:`` imports count too. The layer order is the pipeline of
docs/ARCHITECTURE.md.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import networkx as nx
import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "railplan"

#: stage packages (and root modules) from first to last; each imports only earlier layers
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "version", "gc_pause", "array_groups", "forked", "slot_init"),
    ("identifiers", "safe_load"),
    ("sentences", "safe_text"),
    ("spec", "catalog"),
    ("design",),
    ("topology",),
    ("validate",),
    ("physical", "traffic"),
    ("costs",),
    ("solve",),
    ("pipeline",),
    ("change", "advise"),
    ("testplan",),
    ("field",),
    ("render",),
    ("tui",),
    ("cli",),
    ("__main__",),
)
LAYER_OF = {name: i for i, names in enumerate(LAYERS) for name in names}


def module_name(path: Path, root: Path = PACKAGE) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(path: Path, known: set[str]) -> set[str]:
    """railplan modules ``path`` imports (``from pkg import mod`` resolves to the module)."""
    out: set[str] = set()
    for module, names in _railplan_imports(path.read_text(encoding="utf-8")):
        if not names:
            out.add(module)
        for name in names:
            sub = f"{module}.{name}"
            out.add(sub if sub in known else module)
    return out


@cache
def _railplan_imports(source: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(module, names imported from it; none for ``import module``) of every railplan import
    in one module's text. Every test here reads the same sources: each is parsed once."""
    out: list[tuple[str, tuple[str, ...]]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out += [(a.name, ()) for a in node.names if a.name.split(".")[0] == "railplan"]
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.level == 0
            and node.module.split(".")[0] == "railplan"
        ):
            out.append((node.module, tuple(a.name for a in node.names)))
    return tuple(out)


def import_graph(root: Path = PACKAGE) -> nx.DiGraph:
    files = {module_name(p, root): p for p in root.rglob("*.py")}
    graph = nx.DiGraph()
    graph.add_nodes_from(files)
    for name, path in files.items():
        for target in imported_modules(path, set(files)):
            graph.add_edge(name, target)
    return graph


def stage(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def direction_violations(graph: nx.DiGraph) -> list[str]:
    out = []
    for src, dst in sorted(graph.edges):
        a, b = stage(src), stage(dst)
        if src == "railplan":  # the facade re-exports the public API from any stage
            continue
        if dst == "railplan":
            out.append(f"{src} imports the railplan facade; import the stage module instead")
        elif a != b and LAYER_OF[b] >= LAYER_OF[a]:
            out.append(f"{src} ({a}) imports {dst} ({b}), a later or sibling stage")
    return out


def test_every_stage_has_a_layer():
    stages = {stage(m) for m in import_graph().nodes} - {""}
    assert stages <= set(LAYER_OF), f"add {sorted(stages - set(LAYER_OF))} to LAYERS"


def test_stages_import_only_earlier_stages():
    assert direction_violations(import_graph()) == []


def test_no_import_cycles_between_modules():
    graph = import_graph()
    graph.remove_node("railplan")
    cycles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert cycles == []


@pytest.mark.parametrize(
    ("module", "body"),
    [
        ("design/extra.py", "def f():\n    from railplan.pipeline.build import build\n"),
        ("validate/extra.py", "import railplan.physical.media\n"),
        ("traffic/extra.py", "from railplan.physical import media\n"),
    ],
)
def test_a_reverse_import_is_caught(tmp_path, module, body):
    """The checker itself: a later-stage import added anywhere (even lazily) is reported."""
    root = tmp_path / "railplan"
    for path in PACKAGE.rglob("*.py"):
        target = root / path.relative_to(PACKAGE)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    (root / module).write_text('"""extra"""\n' + body, encoding="utf-8")
    found = direction_violations(import_graph(root))
    assert any(f"railplan.{module[:-3].replace('/', '.')} " in v for v in found), found
