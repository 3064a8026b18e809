"""`plan -o` and `cables` check (and `plan` bills) the laid-out design in a forked child while
their files are written: the same outputs as the plain build, and nothing moved into place (or
printed) when the check fails."""

from __future__ import annotations

import json
import os

import pytest

from railplan import design_to_json
from railplan.catalog import load_catalog
from railplan.pipeline.build import build, finish
from railplan.render import cables_csv
from railplan.render.atomic import write_atomic, write_set
from railplan.spec import spec_from_dict

QUICK = ("--gpus", "256", "--node", "dgx-h100", "--switch", "qm9700", "--topology", "roft")
SPEC = {
    "cluster": {"gpus": 256, "node": "dgx-h100"},
    "fabric": {"switches": ["qm9700"], "topology": "roft"},
}


def test_a_deferred_build_finished_is_the_plain_build() -> None:
    spec, catalog = spec_from_dict(SPEC), load_catalog()
    laid = build(spec, catalog, deferred=True)
    assert not laid.finished and laid.bom is None
    done = finish(laid)
    plain = build(spec, catalog)
    assert done.finished and done.bom is not None and plain.bom is not None
    assert done.bom.to_json() == plain.bom.to_json()
    assert design_to_json(done.design) == design_to_json(plain.design)
    assert finish(done) is done  # a finished build comes back as it is


def test_plan_out_prints_and_writes_what_the_plain_plan_does(cli, tmp_path) -> None:
    written = cli("plan", *QUICK, "-o", tmp_path / "d", "--json")
    plain = cli("plan", *QUICK, "--json")
    assert written.code == plain.code == 0, written.err
    assert written.out == plain.out  # the bill worked out in the child, byte for byte
    bill = json.loads(written.out)
    assert bill["totals"] and bill["bom"]
    table = cli("plan", *QUICK, "-o", tmp_path / "e")
    assert table.code == 0 and table.out == cli("plan", *QUICK).out
    spec = spec_from_dict(SPEC)
    expected = design_to_json(build(spec, load_catalog()).design)
    assert (tmp_path / "d" / "design.json").read_text() == expected


@pytest.fixture
def failing_check(monkeypatch):
    """The laid-out check finds a problem (in the child too: it is forked after the patch)."""
    import railplan.pipeline.build as build_module

    real = build_module.check

    def check(design, catalog=None):
        return ["a planted problem"] if design.cables else real(design, catalog)

    monkeypatch.setattr(build_module, "check", check)


def test_plan_out_writes_nothing_when_the_check_fails(cli, tmp_path, failing_check) -> None:
    old = tmp_path / "d"
    old.mkdir()
    (old / "design.json").write_text("the old design")
    with pytest.raises(AssertionError, match="a planted problem"):
        cli("plan", *QUICK, "-o", old)
    assert (old / "design.json").read_text() == "the old design"
    assert not (old / "spec.yaml").exists()
    assert sorted(p.name for p in old.iterdir()) == ["design.json"]  # no staging left
    with pytest.raises(AssertionError, match="a planted problem"):
        cli("plan", *QUICK, "-o", tmp_path / "new")
    assert not (tmp_path / "new").exists()


def test_cables_writes_and_prints_nothing_when_the_check_fails(
    cli, tmp_path, failing_check, capsys
) -> None:
    out = tmp_path / "cables.csv"
    with pytest.raises(AssertionError, match="a planted problem"):
        cli("cables", *QUICK, "-o", out, "--design-out", tmp_path / "design.json")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(AssertionError, match="a planted problem"):
        cli("cables", *QUICK)
    assert capsys.readouterr().out == ""


def test_cables_gives_the_plain_schedule(cli, tmp_path) -> None:
    result = cli("cables", *QUICK)
    assert result.code == 0, result.err
    design = build(spec_from_dict(SPEC), load_catalog(), bill=False).design
    assert result.out == cables_csv.render(design)


def test_a_failing_before_commit_leaves_the_folder_and_file_as_they_were(tmp_path) -> None:
    def refuse() -> None:
        raise RuntimeError("not yet")

    folder = tmp_path / "set"
    folder.mkdir()
    (folder / "a.txt").write_text("old")
    with pytest.raises(RuntimeError):
        write_set(folder, {"a.txt": "new", "b.txt": "new"}, before_commit=refuse)
    assert sorted(os.listdir(folder)) == ["a.txt"] and (folder / "a.txt").read_text() == "old"
    with pytest.raises(RuntimeError):
        write_set(tmp_path / "fresh", {"a.txt": "new"}, before_commit=refuse)
    assert sorted(os.listdir(tmp_path)) == ["set"]
    one = tmp_path / "one.txt"
    one.write_text("old")
    with pytest.raises(RuntimeError):
        write_atomic(one, "new", refuse)
    assert one.read_text() == "old" and sorted(os.listdir(tmp_path)) == ["one.txt", "set"]
    calls: list[int] = []
    write_set(folder, {"a.txt": "new"}, before_commit=lambda: calls.append(1))
    assert calls == [1] and (folder / "a.txt").read_text() == "new"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_the_check_and_the_bill_run_in_a_child(cli, tmp_path, monkeypatch) -> None:
    import railplan.physical.bom as bom_module
    import railplan.pipeline.build as build_module

    seen = tmp_path / "pids"
    real_check, real_bom = build_module.check, bom_module.bom

    def check(design, catalog=None):
        if design.cables:
            with seen.open("a") as f:
                f.write(f"check {os.getpid()}\n")
        return real_check(design, catalog)

    def bom(design, catalog, **kw):
        with seen.open("a") as f:
            f.write(f"bom {os.getpid()}\n")
        return real_bom(design, catalog, **kw)

    monkeypatch.setattr(build_module, "check", check)
    monkeypatch.setattr(bom_module, "bom", bom)
    assert cli("plan", *QUICK, "-o", tmp_path / "d").code == 0
    lines = seen.read_text().split()
    assert lines[0::2] == ["check", "bom"]
    assert {int(p) for p in lines[1::2]} != {os.getpid()} and len(set(lines[1::2])) == 1


@pytest.fixture
def unsound_topology(monkeypatch):
    """The topology's check finds a problem (the laid-out check reads the real rules)."""
    import railplan.pipeline.build as build_module

    real = build_module.check

    def check(design, catalog=None):
        return real(design, catalog) if design.cables else ["a planted wiring problem"]

    monkeypatch.setattr(build_module, "check", check)


def test_a_topology_that_fails_its_check_writes_nothing(cli, tmp_path, unsound_topology) -> None:
    with pytest.raises(AssertionError, match=r"generated design fails check.*planted wiring"):
        cli("plan", *QUICK, "-o", tmp_path / "new")
    assert not (tmp_path / "new").exists()
    with pytest.raises(AssertionError, match="planted wiring"):
        cli("cables", *QUICK)
    spec = spec_from_dict(SPEC)
    laid = build(spec, load_catalog(), deferred=True)
    assert laid.pending is not None
    with pytest.raises(AssertionError, match="planted wiring"):
        finish(laid)


def test_a_layout_that_breaks_on_an_unsound_topology_says_what_the_check_found(
    tmp_path, unsound_topology, monkeypatch
) -> None:
    import railplan.pipeline.layout as layout_module

    def broken(*args, **kwargs):
        raise KeyError("a port the wiring does not have")

    monkeypatch.setattr(layout_module, "complete", broken)
    spec = spec_from_dict(SPEC)
    with pytest.raises(AssertionError, match="planted wiring"):
        build(spec, load_catalog(), deferred=True)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_deferred_build_checks_its_topology_in_a_child(tmp_path, monkeypatch) -> None:
    import railplan.pipeline.build as build_module

    seen = tmp_path / "pids"
    real = build_module.check

    def check(design, catalog=None):
        if not design.cables:
            with seen.open("a") as f:
                f.write(f"{os.getpid()}\n")
        return real(design, catalog)

    monkeypatch.setattr(build_module, "check", check)
    spec = spec_from_dict(SPEC)
    laid = build(spec, load_catalog(), deferred=True)
    done = finish(laid)
    assert done.bom is not None and done.finished
    assert [int(p) for p in seen.read_text().split()] != [os.getpid()]
    assert len(seen.read_text().split()) == 1  # once, in the child: not again in the parent


def test_a_promised_wiring_is_still_checked_in_full() -> None:
    import dataclasses

    from railplan.pipeline.plan import plan
    from railplan.validate import check, promise_sound, settle_promise, wiring_known_sound

    design = plan(spec_from_dict(SPEC), checked=False)
    link = design.links[0]
    broken = dataclasses.replace(
        design, links=(dataclasses.replace(link, b_port=10_000), *design.links[1:])
    )
    promise_sound(broken)
    assert wiring_known_sound(broken)  # the cage structure may take it as sound meanwhile
    assert check(broken)  # but check runs every rule on it
    settle_promise(broken, ["its problem"])
    assert not wiring_known_sound(broken) and check(broken)
    promise_sound(design)
    settle_promise(design, [])
    assert wiring_known_sound(design)  # found sound elsewhere: as if check had found it


def test_a_layout_refused_for_the_users_input_is_a_clear_error(cli, tmp_path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "cluster: {gpus: 256, node: dgx-h100}\n"
        "fabric: {switches: [qm9700], topology: roft}\n"
        "layout: {network_rack_power_w: 500}\n"
    )
    result = cli("plan", spec, "-o", tmp_path / "out")
    assert result.code == 2
    assert "layout.network_rack_power_w" in result.err and "Traceback" not in result.err
    assert not (tmp_path / "out").exists()
    if hasattr(os, "fork"):  # the topology's checking child was waited for: none is left
        with pytest.raises(ChildProcessError):
            os.waitpid(-1, os.WNOHANG)
