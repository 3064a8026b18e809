"""The catalog ships in the package, and a user folder extends and overrides it by id."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from railplan.catalog import bundled_catalog_dir, load_catalog, load_catalog_layers
from railplan.catalog.parts import SECTIONS
from railplan.errors import CatalogError
from tests.conftest import EXAMPLES, ROOT

USER = EXAMPLES / "user-catalog"


def test_the_package_carries_the_catalog_it_loads() -> None:
    """railplan/catalogs (shipped as package data) is the repository's catalogs/ folder."""
    inside = ROOT / "railplan" / "catalogs"
    assert inside.is_symlink() and inside.resolve() == (ROOT / "catalogs").resolve()
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"catalogs/*.yaml"' in pyproject  # the package-data rule
    shipped = {p.name for p in (ROOT / "railplan").glob("catalogs/*.yaml")}
    assert {p.name for p in (ROOT / "catalogs").glob("*.yaml")} <= shipped
    assert bundled_catalog_dir().resolve() == (ROOT / "catalogs").resolve()
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert ".ci/wheel_check" in ci  # CI installs the built wheel into a fresh venv


def test_a_one_switch_user_catalog_adds_a_switch(cli, monkeypatch) -> None:
    monkeypatch.delenv("RAILPLAN_CATALOG_DIR", raising=False)
    args = [
        "plan",
        "--gpus",
        "1024",
        "--node",
        "dgx-h100",
        "--switch",
        "qm9790",
        "--topology",
        "roft",
        "--json",
    ]
    res = cli(*args, "--catalog", USER)
    assert res.code == 0, res.err
    plan = json.loads(res.out)
    assert plan["switch_model"] == "qm9790"
    assert (plan["switches"]["leaf"], plan["switches"]["spine"]) == (32, 16)
    assert res.err == ""  # a new id overrides nothing: no note
    monkeypatch.setenv("RAILPLAN_CATALOG_DIR", str(USER))  # the same through the environment
    assert json.loads(cli(*args).out)["switch_model"] == "qm9790"
    monkeypatch.delenv("RAILPLAN_CATALOG_DIR")
    res = cli(*args)
    assert res.code == 2 and "qm9790" in res.err  # not in the bundled catalog


def test_a_user_entry_overrides_the_bundled_one_and_says_so(cli, tmp_path: Path) -> None:
    text = (ROOT / "catalogs" / "switches.yaml").read_text(encoding="utf-8")
    doc = yaml.safe_load(text)
    qm = next(s for s in doc["switches"] if s["id"] == "qm9700")
    qm["price_usd"] = {"value": 31000, "source": "estimate: our quote"}
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump({"switches": [qm]}), encoding="utf-8")
    loaded = load_catalog_layers(tmp_path)
    assert loaded.catalog.switch("qm9700").price_usd.value == 31000
    assert loaded.catalog.switch("cx864e-n") == load_catalog().switch("cx864e-n")
    assert loaded.origins[("switches", "qm9700")] == f"{tmp_path.resolve()}/mine.yaml"
    assert loaded.origins[("nodes", "dgx-h100")] == "bundled nodes.yaml"
    assert loaded.overrides == (
        f"{tmp_path.resolve()}/mine.yaml: switches 'qm9700' overrides the bundled entry "
        "(changed: price_usd)",
    )
    res = cli(
        "plan",
        "--gpus",
        "64",
        "--node",
        "dgx-h100",
        "--topology",
        "roft",
        "--catalog",
        tmp_path,
        "--json",
    )
    assert res.code == 0
    assert res.err == f"railplan: note: {loaded.overrides[0]}\n"


def test_an_identical_copy_of_the_bundled_catalog_overrides_nothing(tmp_path: Path) -> None:
    for file in (ROOT / "catalogs").glob("*.yaml"):
        (tmp_path / file.name).write_bytes(file.read_bytes())
    loaded = load_catalog_layers(tmp_path)
    assert loaded.overrides == () and loaded.catalog == load_catalog()


def test_the_same_id_twice_in_a_user_folder_names_both_files(cli, tmp_path: Path) -> None:
    entry = yaml.safe_load((USER / "switches.yaml").read_text(encoding="utf-8"))
    for name in ("a.yaml", "b.yaml"):
        (tmp_path / name).write_text(yaml.safe_dump(entry), encoding="utf-8")
    with pytest.raises(CatalogError) as info:
        load_catalog(tmp_path)
    assert str(info.value) == (
        f"{tmp_path.resolve()}/b.yaml: switches id 'qm9790' is defined twice "
        f"(also in {tmp_path.resolve()}/a.yaml)"
    )
    res = cli("catalog", "list", "--catalog", tmp_path)
    assert res.code == 2 and "defined twice" in res.err and "Traceback" not in res.err
    res = cli("catalog", "list", "--catalog", tmp_path / "nope")
    assert res.code == 2 and "does not exist" in res.err


def test_catalog_list_shows_every_part_and_its_file(cli) -> None:
    res = cli("catalog", "list", "--catalog", USER, "--json")
    parts = json.loads(res.out)["parts"]
    bundled = load_catalog()
    ids = {(p["section"], p["id"]): p["from"] for p in parts}
    for section in SECTIONS:
        for ident in getattr(bundled, section):
            assert ids.pop((section, ident)).startswith("bundled ")
    assert ids == {("switches", "qm9790"): f"{USER.resolve()}/switches.yaml"}
    text = cli("catalog", "list").out.splitlines()
    assert text[0].split() == ["section", "id", "about", "from"]
    assert len(text) == 1 + sum(len(getattr(bundled, s)) for s in SECTIONS)


def test_catalog_show_prints_an_entry_that_loads_back(cli, tmp_path: Path) -> None:
    res = cli("catalog", "show", "qm9700")
    assert res.code == 0 and res.out.startswith("# switches entry from bundled switches.yaml\n")
    (tmp_path / "copy.yaml").write_text(res.out, encoding="utf-8")
    assert load_catalog_layers(tmp_path).overrides == ()  # the printed entry is the same part
    res = cli("catalog", "show", "qm970")
    assert res.code == 2
    assert res.err == (
        "railplan: error: no catalog part has the id 'qm970'; did you mean qm9700, qm8700? "
        "`railplan catalog list` shows them\n"
    )
