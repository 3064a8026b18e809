"""Each reproduction of issue 35 as a regression test: a hostile design.json, spec, capture,
flag or output path is refused with one sentence naming the JSON path or the limit, or handled
without output onto a device; and the tamper suite: every invariant of a design broken once,
refused by every command. Memory and time of the same cases: ``python bench/fuzz.py``."""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from railplan.design.limits import check_design_bytes
from railplan.errors import DesignFileError
from railplan.pipeline.source import DesignSource
from tests.conftest import EXAMPLES, ROOT
from tests.test_design_file import assert_refused, commands

SOURCE = ROOT / "designs" / "seed001-64gpu" / "design.json"
RAIL_ONLY = ROOT / "designs" / "seed000-2node" / "design.json"
Edit = Callable[[dict[str, Any]], None]


@cache
def _base(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def written(tmp_path: Path, edit: Edit, source: Path = SOURCE, name: str = "design.json") -> Path:
    data = copy.deepcopy(_base(source))
    edit(data)
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def refusal(path: Path) -> str:
    with pytest.raises(DesignFileError) as caught:
        DesignSource(path).design()
    return str(caught.value)


def put(path: str, value: Any) -> Edit:
    def edit(d: dict[str, Any]) -> None:
        *head, last = path.split(".")
        node: Any = d
        for key in head:
            node = node[int(key)] if key.isdigit() else node[key]
        node[int(last) if last.isdigit() else last] = value

    return edit


# -- 1. tracebacks from values inside a design.json ---------------------------------------

VALUES = [
    ("switches.5.ports_per_cage", 0, "switches[5].ports_per_cage"),
    ("shape.ports_per_cage", 0, "shape.ports_per_cage"),
    ("shape.ports_per_cage", -0.0, "shape.ports_per_cage"),
    *[
        ("sizing.oversubscription", bad, "sizing.oversubscription")
        for bad in ("abc", "", "1:11:11:1", "1:0", "NaN", "Infinity:1", "1e9999999:1", "9" * 5000)
    ],
    ("switches.0.radix", 1e8, "switches[0].radix"),
    ("switches.0.radix", 100_000_000, "switches[0].radix"),
    ("placements.0.height_u", 1e9, "placements[0].height_u"),
    ("placements.0.height_u", 1_000_000_000, "placements[0].height_u"),
    ("routing.policy", "magic", "routing.policy"),
    ("topology", "mesh", "topology"),
    ("switches.0.up_from_port", 4, "switches[0].up_from_port"),
]


@pytest.mark.parametrize(
    ("where", "value", "needle"), VALUES, ids=[f"{v[0]}={v[1]!r}"[:60] for v in VALUES]
)
def test_a_bad_value_is_refused_with_its_json_path(tmp_path: Path, where, value, needle) -> None:
    message = refusal(written(tmp_path, put(where, value)))
    assert needle in message, message
    assert "Input should" not in message and "valid dictionary" not in message


def test_the_cli_says_it_in_one_sentence(cli, tmp_path: Path) -> None:
    result = cli("plan", written(tmp_path, put("switches.5.ports_per_cage", 0)), "--json")
    assert_refused(result, "switches[5].ports_per_cage: must be at least 1, not 0")


# -- 2. memory runaway: lists counted in the raw bytes ------------------------------------


def test_twenty_million_list_items_are_refused_before_parsing() -> None:
    head = _base(SOURCE)
    raw = json.dumps({**head, "shape": {**head["shape"], "port_plane": []}}).encode()
    at = raw.index(b'"port_plane": [') + len(b'"port_plane": [')
    bomb = raw[:at] + b"0," * 20_000_000 + b"0" + raw[at:]
    with pytest.raises(DesignFileError, match="JSON values in"):
        check_design_bytes(bomb, "design.json")


@pytest.mark.parametrize("item", [b"{}", b"[]", b'{"a":1}'])
def test_millions_of_small_rows_are_refused_before_parsing(item: bytes) -> None:
    bomb = b'{"nodes":[' + b",".join([item] * 2_000_000) + b"]}"
    with pytest.raises(DesignFileError, match=r"design\.json: holds"):
        check_design_bytes(bomb, "design.json")


def test_rows_beyond_the_largest_design_are_refused(tmp_path: Path) -> None:
    row = {"id": "fm", "purpose": "fabric-manager", "ports": 2, "ports_per_plane": 2}
    row |= {"port_speed_gbps": 400, "form_factor": "osfp", "index": 0, "rack": 0}
    message = refusal(written(tmp_path, lambda d: d.__setitem__("devices", [row] * 5000)))
    assert "devices: 5,000 rows" in message


def test_every_design_railplan_writes_passes_the_byte_count() -> None:
    for path in sorted((ROOT / "designs").glob("*/design.json")):
        check_design_bytes(path.read_bytes(), str(path))


def test_a_quoted_brace_or_comma_does_not_count() -> None:
    text = {"notes": ["{,,,[[[" * 10_000 + '\\"']}
    check_design_bytes(json.dumps(text).encode(), "x")


# -- 3. tampered designs: every invariant broken once, refused by every command -----------


def _rail(d: dict[str, Any]) -> None:
    link = next(lk for lk in d["links"] if lk["kind"] == "node-leaf")
    link["rail"] = (link["rail"] + 1) % 8


def _shared_physical(d: dict[str, Any]) -> None:
    by_link = {lk["id"]: lk for lk in d["links"]}
    first = d["cables"][0]
    rack_of = {p["device"]: p["rack"] for p in d["placements"]}
    a = by_link[first["link_id"]]
    other = next(
        c for c in d["cables"]
        if rack_of[by_link[c["link_id"]]["a_device"]] != rack_of[a["a_device"]]
        and by_link[c["link_id"]]["b_device"] != a["b_device"]
    )  # fmt: skip
    other["physical"] = first["physical"]


def _spec_switch(d: dict[str, Any]) -> None:
    d["spec"]["fabric"]["switches"] = ["qm9700"]


#: (name, edit, what the refusal names)
TAMPERS: list[tuple[str, Edit, str]] = [
    ("a link's rail changed", _rail, "links["),
    ("sizing.radix", put("sizing.radix", 64), "sizing.radix"),
    ("sizing.leaf_down", put("sizing.leaf_down", 48), "sizing.leaf_down"),
    ("sizing.lower_bound_switches", put("sizing.lower_bound_switches", 1), "lower_bound_switches"),
    ("sizing.oversubscription", put("sizing.oversubscription", "3:1"), "sizing.oversubscription"),
    ("spec of 1,024 GPUs", put("spec.cluster.gpus", 1024), "gpus"),
    ("spec saying matrix", put("spec.fabric.topology", "matrix"), "topology"),
    ("spec with another switch", _spec_switch, "switches"),
    ("a node's rack index 99", put("nodes.0.rack", 99), "nodes[0].rack"),
    ("one physical id in two racks", _shared_physical, "physical"),
    ("embedded spec removed", lambda d: d.pop("spec"), "spec"),
    ("routing policy magic", put("routing.policy", "magic"), "routing.policy"),
    ("routing description", put("routing.description", "[/x] edited"), "routing.description"),
    ("a node's rail", put("shape.port_rail.0", 5), "rail 5"),
    ("a switch's rail", put("switches.0.rail", 3), "rail 3"),
    ("gpus", lambda d: d.update(gpus=128), "GPUs asked"),
    ("spec name", put("spec.name", "other"), "name"),
]


@pytest.mark.parametrize(("name", "edit", "needle"), TAMPERS, ids=[t[0] for t in TAMPERS])
def test_every_tampered_design_is_refused(
    tmp_path: Path, name: str, edit: Edit, needle: str
) -> None:
    message = refusal(written(tmp_path, edit))
    assert needle in message, message


def test_roft_on_a_rail_only_design_is_refused(tmp_path: Path) -> None:
    message = refusal(written(tmp_path, put("topology", "roft"), source=RAIL_ONLY))
    assert "topology" in message


def test_nodes_per_rack_on_a_topology_only_design_is_refused(cli, tmp_path: Path) -> None:
    assert (
        cli("plan", EXAMPLES / "seed001-64gpu.yaml", "--no-layout", "-o", tmp_path / "t").code == 0
    )
    source = tmp_path / "t" / "design.json"
    path = written(tmp_path, put("spec.layout.nodes_per_rack", 1), source=source, name="x.json")
    assert "nodes[" in refusal(path)


@pytest.mark.parametrize("index", [0, 8, 10])
def test_every_command_refuses_a_tampered_design(cli, tmp_path: Path, index: int) -> None:
    _name, edit, needle = TAMPERS[index]
    path = written(tmp_path, edit)
    for command, *rest in commands(tmp_path):
        assert_refused(cli(command, path, *rest), needle)
    assert not (tmp_path / "out").exists()


# -- 4. formulas and escapes from text ----------------------------------------------------


def test_label_templates_and_site_names_plant_no_formula(cli, tmp_path: Path) -> None:
    import csv

    import yaml

    spec = tmp_path / "s.yaml"
    data = yaml.safe_load((EXAMPLES / "seed000-2node.yaml").read_text(encoding="utf-8"))
    data.setdefault("layout", {})["label_template"] = "\r={rack}"
    spec.write_text(yaml.safe_dump(data), encoding="utf-8")
    assert cli("cables", spec, "-o", tmp_path / "c.csv").code == 0
    rows = list(csv.reader((tmp_path / "c.csv").open(newline="", encoding="utf-8")))
    assert all(not c.lstrip("\r\n\t ").startswith("=") for r in rows for c in r)
    assert (
        cli("cables", spec, "--format", "netbox", "--site", "\r=1+1", "-o", tmp_path / "nb").code
        == 0
    )
    for name in ("cables.csv", "devices.csv", "racks.csv"):
        for row in csv.reader((tmp_path / "nb" / name).open(newline="", encoding="utf-8")):
            assert all(not c.lstrip("\r\n\t ").startswith("=") for c in row), row


def test_capture_names_reach_neither_terminal_nor_report_raw(cli, tmp_path: Path) -> None:
    import railplan
    from railplan.design import design_to_json
    from railplan.pipeline.layout import complete
    from railplan.spec import spec_from_dict
    from tests.test_asbuilt import planned_edges, render_ibnetdiscover
    from tests.test_grade import small_roft

    design = small_roft("dmodk")
    design, _ = complete(
        design, spec_from_dict(design.spec), railplan.load_catalog(), method="naive"
    )
    (tmp_path / "design.json").write_text(design_to_json(design))
    capture = render_ibnetdiscover(design, planned_edges(design))
    hostile = "[/x][link=https://evil.example/]x\x1b]8;;https://evil\x07<script>alert(1)</script>"
    first = next(line for line in capture.splitlines() if line.startswith("Ca\t"))
    desc = first.split('# "', 1)[1].rsplit('"', 1)[0]
    capture = capture.replace(f'"{desc}"', f'"{hostile}"')
    (tmp_path / "ib.txt").write_text(capture)
    report = tmp_path / "report.md"
    result = cli(
        "asbuilt",
        tmp_path / "design.json",
        "--ibnetdiscover",
        tmp_path / "ib.txt",
        "--report",
        report,
    )
    assert result.code in (0, 1, 2), result.err
    for stream in (result.out, result.err):
        assert "\x1b" not in stream and "\x07" not in stream
    if report.exists():
        body = report.read_text(encoding="utf-8")
        assert "<script" not in body and "\x1b" not in body


# -- 5. unbounded reads and flags ---------------------------------------------------------


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_a_symlink_to_dev_zero_is_refused(cli, tmp_path: Path, suffix: str) -> None:
    link = tmp_path / f"zero{suffix}"
    link.symlink_to("/dev/zero")
    assert_refused(cli("plan", link, "--json"), "is a device")


def test_a_fifo_spec_is_refused_without_blocking(cli, tmp_path: Path) -> None:
    fifo = tmp_path / "spec.yaml"
    os.mkfifo(fifo)
    assert_refused(cli("plan", fifo, "--json"), "FIFO")


def test_a_capture_larger_than_its_design_can_explain_is_refused(tmp_path: Path) -> None:
    from railplan.field.common import ParseError, bounded_captures, read_text

    big = tmp_path / "lldp.txt"
    big.write_bytes(b"x" * (5 * 1024 * 1024))
    with bounded_captures(10), pytest.raises(ParseError, match="more than the 4 MiB"):
        read_text(big)
    fifo = tmp_path / "fifo.txt"
    os.mkfifo(fifo)
    with pytest.raises(ParseError, match="FIFO"):
        read_text(fifo)


def test_numeric_flags_are_bounded(cli, tmp_path: Path) -> None:
    spec = EXAMPLES / "seed001-64gpu.yaml"
    assert_refused(cli("analyze", spec, "--flows-per-nic", "1000000"), "must be at most 64")
    assert_refused(cli("analyze", spec, "--partners", "1000000"), "--partners")
    assert_refused(
        cli("testplan", spec, "--partners", "1000000", "-o", tmp_path / "t"), "--partners"
    )
    result = cli("testplan", spec, "--partners", "9", "-o", tmp_path / "t")
    assert result.code == 2 and "at most 7 partner(s)" in result.err, result.err
    assert not (tmp_path / "t").exists()


def test_the_digit_rule_covers_every_integer_notation(tmp_path: Path) -> None:
    from railplan.errors import FieldInputError
    from railplan.safe_load import load_yaml

    for text in ("0x" + "F" * 400, "0" + "7" * 400, "0b" + "1" * 400, "1_0" * 100):
        with pytest.raises(FieldInputError, match="digits"):
            load_yaml(f"threshold: {text}\n", "e.yaml", FieldInputError)


# -- 6. paths and interrupts --------------------------------------------------------------


def test_long_output_names_are_refused_with_a_sentence(cli, tmp_path: Path) -> None:
    spec = EXAMPLES / "seed000-2node.yaml"
    assert_refused(cli("plan", spec, "-o", tmp_path / ("x" * 300)), "more than the 255")
    assert cli("plan", spec, "-o", tmp_path / ("y" * 250)).code == 0  # its temp name is cut


def test_device_and_fifo_targets_are_not_replaced(cli, tmp_path: Path) -> None:
    spec = EXAMPLES / "seed000-2node.yaml"
    fifo = tmp_path / "out.csv"
    os.mkfifo(fifo)
    assert_refused(cli("cables", spec, "-o", fifo), "FIFO")
    assert fifo.is_fifo()
    assert_refused(cli("cables", spec, "-o", "/dev/null"), "is a device")
    assert Path("/dev/null").is_char_device()


def test_no_file_is_created_once_a_signal_removes_the_temporaries(tmp_path: Path) -> None:
    import threading

    from railplan.render import atomic

    atomic.discard_temporaries(stop=True)
    try:
        done = threading.Event()

        def writer() -> None:
            try:
                atomic.write_atomic(tmp_path / "late.txt", "x")
            finally:
                done.set()

        threading.Thread(target=writer, daemon=True).start()
        assert not done.wait(0.5)  # it waits for the process to end instead of writing
        assert not list(tmp_path.iterdir())
    finally:
        atomic._stopping.clear()


def _structure(node: object) -> tuple[int, int, int]:
    """Commas, objects and lists of a parsed JSON value, counted from the value itself."""
    if isinstance(node, dict):
        parts = [_structure(v) for v in node.values()]
        own = (max(len(node) - 1, 0), 1, 0)
    elif isinstance(node, list):
        parts = [_structure(v) for v in node]
        own = (max(len(node) - 1, 0), 0, 1)
    else:
        return (0, 0, 0)
    commas, objects, lists = (sum(x) for x in zip(own, *parts, strict=False))
    return commas, objects, lists


_TEXT = st.text(alphabet=st.sampled_from([*'ab,{[]}"\\:', "\u00e9", "\n"]), max_size=8)
_JSON = st.recursive(
    st.none() | st.integers(-5, 5) | _TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(_JSON, st.booleans())
def test_the_byte_count_sees_only_the_structure_outside_strings(value: object, pretty) -> None:
    """The count (quotes paired, escapes dropped, split by window) is the parsed value's own."""
    from railplan.design import limits

    raw = json.dumps(value, indent=1 if pretty else None, ensure_ascii=False).encode()
    assert limits._counted(raw) == _structure(value)
    old = limits._WINDOW
    try:
        limits._WINDOW = 3  # strings across window edges
        assert limits._counted(raw) == _structure(value)
    finally:
        limits._WINDOW = old
