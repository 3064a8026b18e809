"""What a newcomer reads on the less-trodden paths: every refusal names its fix, one sentence,
exit code 2; "wrote ..." lines go to stderr; a file format is not dumped on a terminal."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES


def test_a_value_below_its_bound_names_the_fix(cli) -> None:  # type: ignore[no-untyped-def]
    res = cli("plan", "--gpus", "0", "--node", "dgx-h100")
    assert res.code == 2 and res.out == ""
    assert res.err == "railplan: error: flags: cluster.gpus: 0 is less than 1; use 1 or more\n"


def test_a_json_that_is_not_a_design_says_so(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    other = tmp_path / "package.json"
    other.write_text(json.dumps({"name": "left-pad", "version": "1.3.0"}))
    res = cli("plan", other)
    assert res.code == 2
    assert res.err == (
        f"railplan: error: {other}: this JSON is not a railplan design (it has no "
        '"format" key); give a spec .yaml or a design.json written by railplan plan SPEC -o DIR\n'
    )


def test_grade_on_a_folder_without_results_is_one_sentence(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "notes.txt").write_text("nothing measured yet\n")
    res = cli("grade", EXAMPLES / "field" / "design.json", "--results", tmp_path)
    assert res.code == 2 and res.out == ""
    assert res.err == (
        f"railplan: error: --results {tmp_path}: holds no output of this design's test plan "
        "(1 other file(s)); give the results/ folder the generated scripts "
        "(scripts/run_all.sh) write\n"
    )


def test_a_csv_is_not_dumped_on_a_terminal(cli, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
    res = cli("cables", EXAMPLES / "seed000-2node.yaml", "--naive")
    assert res.code == 2 and res.out == ""
    assert res.err == (
        "railplan: error: --format csv writes a file: give -o FILE (e.g. -o cables.csv), or "
        "--stdout to print it on this terminal\n"
    )
    res = cli("cables", EXAMPLES / "seed000-2node.yaml", "--naive", "--stdout")
    assert res.code == 0 and res.out.startswith("cable_id,")


def test_wrote_lines_go_to_stderr(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    res = cli("plan", EXAMPLES / "seed000-2node.yaml", "--no-layout", "-o", tmp_path / "d")
    assert res.code == 0 and "wrote" not in res.out
    assert res.err.endswith(
        f"wrote {tmp_path / 'd' / 'design.json'} and {tmp_path / 'd' / 'spec.yaml'}\n"
    )
    res = cli(
        "plan", EXAMPLES / "seed000-2node.yaml", "--no-layout", "--json", "-o", tmp_path / "e"
    )
    assert json.loads(res.out)["gpus"] == 16 and "wrote" in res.err
    res = cli("cables", EXAMPLES / "seed000-2node.yaml", "--naive", "-o", tmp_path / "c.csv")
    assert res.code == 0 and res.out == "" and res.err.endswith(f"wrote {tmp_path / 'c.csv'}\n")
