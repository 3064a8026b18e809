"""`railplan cables` plans once and bills nothing: its schedule is the one `plan -o` cables."""

from __future__ import annotations

from railplan import design_from_json
from railplan.render import cables_csv


def test_cables_plans_once_and_builds_no_bill(cli, tmp_path, monkeypatch):
    import railplan.physical.bom as bom_module
    import railplan.pipeline.build as build_module

    plans = []
    real_plan = build_module.plan

    def counted(*args, **kwargs):
        plans.append(1)
        return real_plan(*args, **kwargs)

    def no_bill(*args, **kwargs):
        raise AssertionError("cables billed the design")

    monkeypatch.setattr(build_module, "plan", counted)
    monkeypatch.setattr(bom_module, "bom", no_bill)
    quick = ("--gpus", "256", "--node", "dgx-h100", "--switch", "qm9700", "--topology", "roft")
    out = tmp_path / "cables.csv"
    result = cli("cables", *quick, "-o", out, "--design-out", tmp_path / "design.json")
    assert result.code == 0, result.err
    assert plans == [1]
    design = design_from_json((tmp_path / "design.json").read_text())
    assert out.read_text() == cables_csv.render(design)
    assert len(out.read_text().splitlines()) == len(design.cables) + 1
