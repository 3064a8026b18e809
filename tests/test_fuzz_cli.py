"""Fuzzed specs, flags, catalogs, design.json files and tool outputs through the CLI: every run
ends with exit 0, 1 or 2 and sentences on stderr, never a traceback or an internal error.

The ``cli`` fixture sets RAILPLAN_DEBUG=1, so an unexpected exception (what users would see
as "internal error", exit 70) fails the example with its traceback. Bounded in time: small
designs, few examples per strategy, no deadline; the whole module takes a few tens of seconds.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import json
import os
import shutil
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import railplan
from railplan.design import Design, design_to_json
from railplan.pipeline.layout import complete
from railplan.spec import spec_from_dict
from railplan.testplan import build_testplan, expectations
from tests.conftest import EXAMPLES, ROOT

#: examples per strategy; RAILPLAN_FUZZ_EXAMPLES=500 for a deeper run than CI's
EXAMPLES_PER_TEST = int(os.environ.get("RAILPLAN_FUZZ_EXAMPLES", "20"))


def fuzz(share: float = 1.0) -> settings:
    return settings(
        max_examples=max(1, int(EXAMPLES_PER_TEST * share)),
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )


SPECS = ("seed000-2node.yaml", "seed001-64gpu.yaml", "seed003-matrix.yaml")
_COUNTER = itertools.count()

#: values an attacker or a typo puts anywhere
HOSTILE = st.sampled_from(
    [
        None, True, -1, 0, 1, 3, 10**30, 2**63, -(2**63), 1e308, -1e-9, 0.5,
        float("nan"), float("inf"), "", "x" * 5000, "$(touch x)", "../../etc/passwd", "a/b",
        "-oProxyCommand=x", "{rack.__class__}", "{rack:99999999}", "=HYPERLINK(1)", "\n",
        "2024-01-01", "3:1", "auto", "qm9700", "dgx-h100", [], [1, 2], ["qm9700"] * 3, {},
        {"x": 1},
    ]
)  # fmt: skip


def check_result(result: Any) -> None:
    """Exit 0, 1 or 2; no traceback; a refusal is sentences, each with the railplan prefix."""
    assert result.code in (0, 1, 2), (result.code, result.err[-3000:])
    assert "Traceback" not in result.err and "internal error" not in result.err
    if result.code == 2:
        lines = result.err.strip().splitlines()
        assert lines and all(line.startswith("railplan: error: ") for line in lines), result.err


# -- mutating nested data ---------------------------------------------------------------------


def paths(data: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside nested dicts and lists."""
    out = [prefix] if prefix else []
    if isinstance(data, dict):
        for key, value in data.items():
            out += paths(value, (*prefix, key))
    elif isinstance(data, list):
        for i, value in enumerate(data[:6]):  # the first rows stand for the rest
            out += paths(value, (*prefix, i))
    return out


@st.composite
def mutated(draw: st.DrawFn, data: Any) -> Any:
    """``data`` with one to three values replaced, deleted or given an unknown sibling."""
    data = copy.deepcopy(data)
    for _ in range(draw(st.integers(1, 3))):
        where = paths(data)
        if not where:
            break
        path = draw(st.sampled_from(where))
        parent = data
        for key in path[:-1]:
            parent = parent[key]
        op = draw(st.sampled_from(["replace", "replace", "delete", "extra"]))
        # a fresh copy: a drawn list or dict must not carry one example's edits into the next
        if op == "replace":
            parent[path[-1]] = copy.deepcopy(draw(HOSTILE))
        elif op == "delete":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[draw(st.sampled_from(["bogus", "id", "x_m", "u"]))] = copy.deepcopy(
                draw(HOSTILE)
            )
    return data


JUNK = ["&a ", "*a", "!!set ", "!!binary ", "---\n", "<<: *a\n", "\t", ": :", "- ", "[", "{", "'",
        '"', "\x00", "%YAML 1.1\n", "? ", "9" * 60, ".nan", "~"]  # fmt: skip


def text_mutations(draw: st.DrawFn, text: str) -> str:
    """Characters, YAML syntax and bytes sprinkled into a document, or the document cut."""
    for _ in range(draw(st.integers(1, 3))):
        pos = draw(st.integers(0, len(text)))
        junk = draw(st.sampled_from(JUNK))
        text = text[:pos] + junk + text[pos:]
    if draw(st.booleans()):
        text = text[: draw(st.integers(0, len(text)))]
    return text


def dump_yaml(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


# -- specs and flags --------------------------------------------------------------------------


@cache
def spec_data(name: str) -> Any:
    return yaml.safe_load((EXAMPLES / name).read_text(encoding="utf-8"))


@st.composite
def spec_text(draw: st.DrawFn) -> str:
    name = draw(st.sampled_from(SPECS))
    if draw(st.booleans()):
        return dump_yaml(draw(mutated(spec_data(name))))
    return text_mutations(draw, (EXAMPLES / name).read_text(encoding="utf-8"))


@fuzz()
@given(text=spec_text(), layout=st.booleans())
def test_fuzzed_specs(cli, tmp_path: Path, text: str, layout: bool) -> None:
    spec = tmp_path / f"spec{next(_COUNTER)}.yaml"
    spec.write_text(text, encoding="utf-8")
    check_result(cli("plan", spec, "--json", *(["--naive"] if layout else ["--no-layout"])))


SET_PATHS = [
    "name", "cluster.gpus", "cluster.node", "cluster.nics_per_node", "cluster.port_speed_gbps",
    "fabric.topology", "fabric.planes", "fabric.oversubscription", "fabric.tiers",
    "fabric.matrix.links_per_pair", "fabric.matrix.a_ports", "layout.nodes_per_rack",
    "layout.node_u", "layout.label_template", "layout.network_rack_count", "layout.slack_m",
    "layout.trays.height_m", "layout.placement.random_seed", "cluster", "layout.trays",
]  # fmt: skip
WORDS = st.sampled_from(
    ["1", "0", "-1", "8", "64", "1e999", ".nan", "99999999999999999999999", "true", "[]",
     "[1, 2]", "{}", "roft", "matrix", "fat-tree", "rail-only", "3:1", "1:3", "auto", "x",
     "!!set {a}", "*a", "&a [*a]", "qm9700", "dgx-h100", "'{rack}-{u:02d}'", "=1+1", ""]
)  # fmt: skip


@st.composite
def flag_args(draw: st.DrawFn) -> list[str]:
    """Quick flags, mostly sound (so planning runs) with odd values mixed in."""
    gpus = draw(st.sampled_from(["16", "64", "64", "128", "512", "100", "0", "4194304", "x"]))
    args = ["--gpus", gpus] if draw(st.integers(0, 9)) else []
    node = draw(
        st.sampled_from(["dgx-h100", "dgx-h100", "h20-4x2x200g", "hgx-h100-8x400g", "../x"])
    )
    args += ["--node", node] if draw(st.integers(0, 9)) else []
    for _ in range(draw(st.integers(0, 2))):
        args += ["--switch", draw(st.sampled_from(["qm9700", "cx732q-n", "cx864e-n", "zz"]))]
    if draw(st.booleans()):
        args += ["--topology", draw(st.sampled_from(["roft", "matrix", "fat-tree", "rail-only"]))]
    if draw(st.integers(0, 3)) == 0:
        args += ["--planes", draw(st.sampled_from(["1", "2", "3", "0", "17"]))]
    if draw(st.integers(0, 3)) == 0:
        args += ["--oversubscription", draw(st.sampled_from(["1:1", "3:1", "0:1", "x", "1e9:1"]))]
    for _ in range(draw(st.sampled_from([0, 0, 1, 2]))):
        args += ["--set", f"{draw(st.sampled_from(SET_PATHS))}={draw(WORDS)}"]
    return args


ANALYZE = st.lists(
    st.sampled_from(
        [["--pattern", p] for p in ("pairs", "ring", "alltoall", "pd", "permutation", "x")]
        + [["--routing", r] for r in ("ecmp", "dmodk", "deterministic", "adaptive", "x")]
        + [["--flows-per-nic", n] for n in ("1", "4", "0", "-2", "100000")]
        + [["--seed", n] for n in ("0", "7", "-1", "99999999999999999999")]
        + [["--partners", n] for n in ("1", "3", "0", "-1", "999")]
        + [["--sample", n] for n in ("1", "5", "0", "-4", "10000000")]
        + [["--hash", h] for h in ("crc32", "random", "x")]
    ),
    max_size=4,
)


@fuzz()
@given(args=flag_args(), command=st.sampled_from(["plan", "compare", "analyze"]), extra=ANALYZE)
def test_fuzzed_flags(cli, args: list[str], command: str, extra: list[list[str]]) -> None:
    if command == "plan":
        check_result(cli("plan", *args, "--no-layout", "--json"))
    elif command == "compare":
        check_result(cli("compare", *args, "--no-layout", "--no-traffic", "--json"))
    else:
        base = ["--gpus", "16", "--node", "dgx-h100", "--switch", "qm9700"]
        check_result(cli("analyze", *base, *itertools.chain.from_iterable(extra), "--json"))


# -- catalogs ---------------------------------------------------------------------------------


@cache
def catalog_files() -> dict[str, Any]:
    return {
        p.name: yaml.safe_load(p.read_text(encoding="utf-8"))
        for p in sorted((ROOT / "catalogs").glob("*.yaml"))
    }


@st.composite
def catalog_edit(draw: st.DrawFn) -> tuple[str, str]:
    name = draw(st.sampled_from(sorted(catalog_files())))
    if draw(st.integers(0, 3)):
        return name, dump_yaml(draw(mutated(catalog_files()[name])))
    return name, text_mutations(draw, (ROOT / "catalogs" / name).read_text(encoding="utf-8"))


@fuzz(0.6)
@given(edit=catalog_edit())
def test_fuzzed_catalogs(cli, tmp_path: Path, edit: tuple[str, str]) -> None:
    folder = tmp_path / f"catalog{next(_COUNTER)}"  # a new folder: catalogs are cached by path
    shutil.copytree(ROOT / "catalogs", folder)
    name, text = edit
    (folder / name).write_text(text, encoding="utf-8")
    args = ["--gpus", "64", "--node", "dgx-h100", "--catalog", folder, "--json"]
    check_result(cli("plan", *args, "--naive"))


# -- design.json ------------------------------------------------------------------------------


@cache
def small_design() -> dict[str, Any]:
    return json.loads((ROOT / "designs" / "seed001-64gpu" / "design.json").read_text())


@st.composite
def design_text(draw: st.DrawFn) -> str:
    data = small_design()
    if draw(st.integers(0, 4)):
        data = draw(mutated(data))
        if draw(st.booleans()):  # a whole row duplicated or dropped
            key = draw(st.sampled_from(["nodes", "switches", "links", "racks", "cables"]))
            rows = data.get(key)
            if isinstance(rows, list) and rows:
                i = draw(st.integers(0, len(rows) - 1))
                if draw(st.booleans()):
                    rows.insert(i, rows[i])
                else:
                    rows.pop(i)
        return json.dumps(data)
    text = json.dumps(small_design())
    pos = draw(st.integers(0, len(text)))
    junk = draw(
        st.sampled_from(["]", "{", '"', ",", "NaN", "1e999", "9" * 5000, "\x00", "[" * 3000])
    )
    return text[:pos] + junk + text[pos:]


@fuzz()
@given(text=design_text(), command=st.sampled_from(["plan", "cables", "analyze"]))
def test_fuzzed_design_files(cli, tmp_path: Path, text: str, command: str) -> None:
    path = tmp_path / f"design{next(_COUNTER)}.json"
    path.write_text(text, encoding="utf-8")
    args = ["--json"] if command != "cables" else []
    check_result(cli(command, path, *args))


# -- tool outputs -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def field_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A cabled design, its expectations and the results folder the scripts would collect."""
    from tests.test_asbuilt import planned_edges, render_ibnetdiscover
    from tests.test_grade import scripted_results, small_roft

    catalog = railplan.load_catalog()
    design: Design = small_roft("dmodk")
    design, _ = complete(design, spec_from_dict(design.spec), catalog, method="naive")
    root = tmp_path_factory.mktemp("field")
    (root / "design.json").write_text(design_to_json(design))
    exps = [dataclasses.asdict(e) for e in expectations(build_testplan(design, catalog))]
    (root / "expectations.json").write_text(json.dumps({"expectations": exps}))
    results = root / "results"
    results.mkdir()
    bad = next(lk.id for lk in design.links if lk.kind == "leaf-spine")
    scripted_results(design, results, design.nodes[4].id, bad)
    (root / "ibnetdiscover.txt").write_text(render_ibnetdiscover(design, planned_edges(design)))
    return {"root": root, "results": results}


@st.composite
def broken_output(draw: st.DrawFn, folder: Path) -> tuple[Path, str]:
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    path = draw(st.sampled_from(files))
    text = path.read_text(encoding="utf-8", errors="replace")
    return path, text_mutations(draw, text)


@fuzz(0.5)
@given(data=st.data())
def test_fuzzed_tool_outputs(cli, field_run: dict[str, Path], data: st.DataObject) -> None:
    root, results = field_run["root"], field_run["results"]
    path, text = data.draw(broken_output(results))
    dump = root / "ibnetdiscover.txt"
    target = data.draw(st.sampled_from([path, dump]))
    original = target.read_text(encoding="utf-8")
    target.write_text(text if target == path else text_mutations(data.draw, original))
    try:
        if target == dump:
            check_result(cli("asbuilt", root / "design.json", "--ibnetdiscover", dump, "--json"))
        else:
            exp = root / "expectations.json"
            check_result(
                cli("grade", root / "design.json", "--results", results, "--expectations", exp)
            )
    finally:
        target.write_text(original, encoding="utf-8")
