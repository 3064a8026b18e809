"""Broken and hostile specs, catalogs and flags: one sentence naming the problem, exit 2, and the
runaway inputs refused before they cost time or memory."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
import yaml

from railplan.catalog import load_catalog
from railplan.errors import CatalogError, SpecError
from railplan.identifiers import is_id, shorten
from railplan.safe_load import MAX_DEPTH, MAX_INT_DIGITS, load_json, load_yaml
from railplan.spec import spec_from_dict
from railplan.spec.labels import parse_label_template
from tests.conftest import EXAMPLES, ROOT

SPEC = "cluster:\n  gpus: 64\n  node: dgx-h100\n"


def alias_bomb(levels: int = 9) -> str:
    """The "billion laughs" document: each level lists the one below nine times."""
    lines = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels + 1):
        refs = ",".join([f"*l{i - 1}"] * 9)
        lines.append(f"l{i}: &l{i} [{refs}]")
    return "\n".join(lines) + "\n"


def refused(text: str | bytes) -> str:
    with pytest.raises(SpecError) as info:
        load_yaml(text, "x.yaml", SpecError)
    message = str(info.value)
    assert message.startswith("x.yaml") and "\n" not in message
    return message


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("a: !!set {x, y}\n", "YAML tag !!set is not supported"),
        ("a: !!binary aGk=\n", "YAML tag !!binary"),
        ("a: !!python/object/apply:os.system [ls]\n", "!!python/object/apply:os.system"),
        ("a: !custom 1\n", "YAML tag !custom"),
        ("a: &x [1, *x]\n", "refers to itself (a recursive alias)"),
        ("a: *nope\n", "the alias *nope has no anchor"),
        ("a: 1\n---\nb: 2\n", "more than one YAML document"),
        ("a: 1\na: 2\n", "the key 'a' appears twice"),
        ("a: " + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5) + "\n", "nested more than 64"),
        ("a: " + "9" * 5000 + "\n", f"more than {MAX_INT_DIGITS} digits"),
        ("a: .nan\n", ".nan is not a finite number"),
        ("a: -.inf\n", "not a finite number"),
        ("a: 1.0e+999\n", "not a finite number"),
        ("a: b\x00\n", "control character #x0000"),
        (b"a: \xff\xfe\n", "not UTF-8 text (byte 0xff at offset 3)"),
        ("a: [1, 2\n", "not valid YAML"),
    ],
)
def test_the_reader_names_what_it_refuses(text: str | bytes, needle: str) -> None:
    assert needle in refused(text)


def test_plain_yaml_reads_as_before() -> None:
    text = "a: 2024-01-01\nb: 3:1\nc: =\nd: !!str 42\nbase: &b {x: 1}\ne:\n  <<: *b\n  y: 2\n"
    assert load_yaml(text, "x.yaml", SpecError) == {
        "a": "2024-01-01",  # a date stays the string it was written as
        "b": 181,  # YAML 1.1 base 60, read back by the spec's oversubscription field
        "c": "=",
        "d": "42",
        "base": {"x": 1},
        "e": {"x": 1, "y": 2},
    }
    for file in sorted((ROOT / "catalogs").glob("*.yaml")) + sorted(EXAMPLES.glob("*.yaml")):
        text = file.read_text(encoding="utf-8")
        assert load_yaml(text, file.name, SpecError) == yaml.safe_load(text), file.name


def test_an_alias_bomb_is_refused_before_anything_is_built(monkeypatch) -> None:
    """The refusal comes from the event stream: PyYAML never composes or constructs a node."""
    import railplan.safe_load as safe

    def never(*_args: object, **_kw: object) -> None:
        raise AssertionError("a node was constructed")

    monkeypatch.setattr(safe._Loader, "construct_document", never)
    monkeypatch.setattr(safe._Loader, "construct_object", never)
    started = time.perf_counter()
    message = refused(alias_bomb())
    assert "through its aliases (an alias bomb?)" in message and "line 6" in message
    assert time.perf_counter() - started < 5  # generous; bench/bench_limits.py measures it


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('{"a": ' + "1" * 5000 + "}", "more than 40 digits"),
        ('{"a": NaN}', "NaN is not a finite number"),
        ('{"a": 1e999}', "not a finite number"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{"a": ', "not valid JSON"),
    ],
)
def test_json_gets_the_same_number_rules(text: str, needle: str) -> None:
    with pytest.raises(SpecError, match=r"x\.json") as info:
        load_json(text, "x.json", SpecError)
    assert needle in str(info.value)


def one_error(cli, *args: object) -> str:
    result = cli("plan", "--no-layout", *args)
    assert result.code == 2, (result.out, result.err)
    assert "Traceback" not in result.err and result.out == ""
    lines = result.err.strip().splitlines()
    assert all(line.startswith("railplan: error: ") for line in lines)
    return result.err


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        ("a: !!binary aGk=\n", "YAML tag !!binary"),
        ("name: &n [x, *n]\n", "recursive alias"),
        ("cluster:\n  gpus: 8\n", "the key 'cluster' appears twice"),
        ("layout:\n  label_template: '{rack.__class__}'\n", "attribute or index access"),
        ("layout:\n  label_template: '{rack:999999999}'\n", "a width over 32"),
        ("layout:\n  label_template: '{u!r}'\n", "conversions are not allowed"),
        ("layout:\n  label_template: '{}-{0}'\n", "fields must be named"),
        ("layout:\n  label_template: '{rack:d}'\n", "rack is text"),
        ("layout:\n  rack_width_m: .nan\n", "not a finite number"),
        ("layout:\n  network_rack_power_w: 1.0e+400\n", "not a finite number"),
        ("layout:\n  network_rack_power_w: 10000000\n", "layout.network_rack_power_w"),
        ("layout:\n  placement:\n    random_seed: 99999999999999999999\n", "2147483647"),
        ("layout:\n  node_u: [-4, 20]\n", "layout.node_u.0"),
        ("layout:\n  nodes_per_rack: 2\n  node_u: [1, 40]\n", "above the 42U rack"),
        ("layout:\n  node_first_u: 400\n", "layout.node_first_u"),
        ("layout:\n  network_rack_count: 100000000\n", "a count from 1 to 4096"),
        (
            "layout:\n  trays:\n    routing: graph\n    points:\n      - {id: a, x_m: 1.0e+300, y_m: 0}\n",
            "layout.trays.points.0.x_m",
        ),
        ("fabric:\n  routing:\n    adaptive_classes: [99]\n", "fabric.routing.adaptive_classes.0"),
        ("name: '-rf'\n", "name: not a safe name"),
    ],
)
def test_bad_spec_fields_give_one_sentence(cli, tmp_path: Path, extra: str, needle: str) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC + extra, encoding="utf-8")
    assert needle in one_error(cli, spec)


def test_spec_file_not_utf8_dates_and_huge_numbers(cli, tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_bytes(SPEC.encode() + b"name: caf\xe9\n")
    assert "not UTF-8 text" in one_error(cli, spec)
    spec.write_text(SPEC + "name: 2024-01-01\n", encoding="utf-8")
    assert cli("plan", spec, "--no-layout", "--json").code == 0  # a date is a plain string
    spec.write_text("cluster:\n  gpus: " + "9" * 5000 + "\n  node: dgx-h100\n", encoding="utf-8")
    assert "more than 40 digits" in one_error(cli, spec)
    spec.write_text(alias_bomb(), encoding="utf-8")
    assert "alias bomb" in one_error(cli, spec)


def test_set_values_and_flags_are_checked_like_the_file(cli) -> None:
    base = ["--gpus", "64", "--node", "dgx-h100"]
    assert "not a finite number" in one_error(cli, *base, "--set", "layout.slack_m=.nan")
    assert "YAML tag !!set" in one_error(cli, *base, "--set", "name=!!set {a}")
    assert "is not a catalog id" in one_error(cli, "--gpus", "64", "--node", "$(reboot)")
    long_id = "x" * 50_000
    err = one_error(cli, "--gpus", "64", "--node", long_id)
    assert len(err) < 400  # the message quotes the id shortened, never 50 kB of it


def test_repeated_switch_ids_count_once() -> None:
    spec = spec_from_dict(
        {"cluster": {"gpus": 64, "node": "dgx-h100"}, "fabric": {"switches": ["qm9700"] * 5000}}
    )
    assert spec.fabric.switches == ["qm9700"]


def test_label_templates_render_fields_only() -> None:
    template = parse_label_template("{rack}-U{u:02d}-{device:>4}-{port:<5s}|{rail:3d}")
    assert (
        template.render(
            rack="R0101", u=7, device="LF0", port="P1/2", cable="C1", link="L1", plane=0, rail=3
        )
        == "R0101-U07- LF0-P1/2 |  3"
    )
    for bad in ("{rack.upper}", "{rack[0]}", "{rack:{u}}", "{rack:,}", "{nope}", "{", "x" * 201):
        with pytest.raises(ValueError):
            parse_label_template(bad)


def test_messages_quote_long_values_shortened() -> None:
    assert shorten("x" * 10_000) == "x" * 57 + "..."
    assert is_id("node0001") and is_id("p0-leaf-su01-r0")
    assert not any(is_id(v) for v in ("", "-o", ".x", "a/b", "a b", "a\nb", "$(x)", "x" * 81))


def catalog_copy(tmp_path: Path) -> Path:
    folder = tmp_path / "catalog"
    shutil.copytree(ROOT / "catalogs", folder)
    return folder


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        (lambda t: t.replace("{typical: 25000,", "{typical: .nan,", 1), ".nan is not a finite"),
        (lambda t: t.replace("{value: 450,", "{value: .inf,", 1), ".inf is not a finite"),
        (lambda t: t.replace("asic_tbps: 12.8", "asic_tbps: -.Inf", 1), "-.Inf is not a finite"),
        (lambda t: t.replace("asic_tbps: 12.8", "asic_tbps: 1.0e+999", 1), "not a finite"),
        (lambda t: t + "switches: []\n", "the key 'switches' appears twice"),
        (lambda t: t.replace("- id: qm9700", "- id: qm9700/../x", 1), "is not a safe id"),
        (lambda t: t.replace("asic_tbps: 25.6", "asic_tbps: !!float 25.6", 1), "YAML tag !!float"),
        (lambda t: alias_bomb(), "alias bomb"),
        (lambda t: t + "---\n", "more than one YAML document"),
    ],
)
def test_bad_catalogs_are_refused_with_the_file_named(tmp_path: Path, edit, needle) -> None:
    folder = catalog_copy(tmp_path)
    file = folder / "switches.yaml"
    before = file.read_text(encoding="utf-8")
    assert edit(before) != before  # the edit found its place (the catalog's format may move)
    file.write_text(edit(before), encoding="utf-8")
    with pytest.raises(CatalogError) as info:
        load_catalog(folder)
    assert needle in str(info.value) and "switches.yaml" in str(info.value)


def test_catalog_not_utf8(tmp_path: Path) -> None:
    folder = catalog_copy(tmp_path)
    (folder / "nodes.yaml").write_bytes(b"nodes: []\n# \xff\n")
    with pytest.raises(CatalogError, match=r"nodes.yaml: not UTF-8 text"):
        load_catalog(folder)


def test_option_checks_come_before_any_planning(cli, tmp_path: Path, monkeypatch) -> None:
    """-o on a file, analyze --seed -1, testplan --devices , fail before a design is built."""
    import railplan.pipeline.source as source

    def no_build(*_a: object, **_k: object) -> None:
        raise AssertionError("planned before checking the options")

    monkeypatch.setattr(source, "build", no_build)
    monkeypatch.setattr(source, "read_design", no_build)
    spec = EXAMPLES / "seed000-2node.yaml"
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    cases = [
        (["plan", spec, "-o", a_file], "is a file, not a folder"),
        (["plan", spec, "-o", a_file / "sub"], "is a file, not a folder"),
        (["testplan", spec, "-o", a_file], "is a file, not a folder"),
        (["sheets", spec, "-o", a_file], "is a file, not a folder"),
        (["cables", spec, "--format", "netbox", "-o", a_file], "is a file, not a folder"),
        (["cables", spec, "--design-out", tmp_path], "is a folder; give a file name"),
        (["analyze", spec, "--csv", tmp_path], "is a folder; give a file name"),
        (["analyze", spec, "--seed", "-1"], "--seed"),
        (["analyze", spec, "--seed", str(2**64)], "--seed"),
        (["testplan", spec, "--devices", ","], "list one RDMA device per node port"),
        (["testplan", spec, "--devices", "mlx5_0,$(touch x)"], "is not a device name"),
        (["testplan", spec, "--revision", "B\ntouch x"], "--revision"),
        (["sheets", spec, "--revision", "B;reboot"], "--revision"),
    ]
    for args, needle in cases:
        result = cli(*args)
        assert result.code == 2 and needle in result.err, (args, result.err)
        assert "Traceback" not in result.err


def test_csv_cells_that_look_like_formulas_are_neutralised(cli, tmp_path: Path) -> None:
    """OWASP "CSV Injection": a label template starting with = would run in a spreadsheet."""
    import csv
    import io

    from railplan.render.cables_csv import neutralise

    data = yaml.safe_load((EXAMPLES / "seed000-2node.yaml").read_text(encoding="utf-8"))
    data["layout"]["label_template"] = "=1+{u}-{device}"
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(data), encoding="utf-8")
    result = cli("cables", spec, "--naive")
    assert result.code == 0, result.err
    rows = list(csv.DictReader(io.StringIO(result.out)))
    assert rows and all(r["label_a"].startswith("'=1+") for r in rows)
    assert all(r["a_u"].isdigit() and not r["length_m"].startswith("'") for r in rows)
    assert [neutralise(v) for v in ("-5", "+3.5e2", "@x", "\tx", "-x", "x=1", 7)] == [
        "-5",
        "+3.5e2",
        "'@x",
        "'\tx",
        "'-x",
        "x=1",
        7,
    ]


def test_tool_outputs_with_huge_numbers_are_parse_errors() -> None:
    """Python refuses int() of more than 4,300 digits; each parser names the file and line."""
    import re

    from railplan.field import ParseError
    from tests.test_parsers_fuzz import FIX, PARSERS

    for name, (parse, samples) in sorted(PARSERS.items()):
        for sample in samples:
            text = (FIX / sample).read_text(encoding="utf-8")
            for m in list(re.finditer(r"\d+", text))[:12]:
                try:
                    parse(text[: m.start()] + "9" * 5000 + text[m.end() :])
                except ParseError as exc:
                    assert "fuzz" in str(exc), (name, str(exc))
