"""design.json's links encoded in a forked child while the layout runs (``rows_text_beside``):
the same bytes as the writer's own encoding, taken only by a design holding that very tuple,
and the parent's encoding again when no child can do it."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

import railplan.design.io as design_io
from railplan import design_to_json
from railplan.catalog import load_catalog
from railplan.design import Design
from railplan.pipeline.build import build
from railplan.spec import spec_from_dict

SPEC = {
    "cluster": {"gpus": 256, "node": "dgx-h100"},
    "fabric": {"switches": ["qm9700"], "topology": "roft"},
}
QUICK = ("--gpus", "256", "--node", "dgx-h100", "--switch", "qm9700", "--topology", "roft")


@pytest.fixture(scope="module")
def design() -> Design:
    return build(spec_from_dict(SPEC), load_catalog()).design


@pytest.fixture
def every_list(monkeypatch: pytest.MonkeyPatch) -> None:
    """Encode beside from the first row (the bundled examples are far below the threshold)."""
    monkeypatch.setattr(design_io, "BESIDE_FROM_ROWS", 1)


@pytest.fixture
def forks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The pids of the children forked while the test runs (recorded in the parent)."""
    pids: list[int] = []
    real = os.fork

    def fork() -> int:
        pid = real()
        if pid:
            pids.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", fork)
    return pids


@pytest.fixture
def encoders(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A file where every process that encodes a row list notes its pid and the list's id (the
    forked child writes to it too: its objects have the parent's ids)."""
    log = tmp_path / "encoders"
    real = design_io._row_blocks

    def noted(items):
        with open(log, "a") as out:
            out.write(f"{os.getpid()} {id(items)}\n")
        yield from real(items)

    monkeypatch.setattr(design_io, "_row_blocks", noted)
    return log


def test_the_child_encodes_the_links_the_writer_takes(
    design: Design, every_list: None, encoders: Path
) -> None:
    plain = design_to_json(design)
    encoders.unlink()
    design_io.rows_text_beside(design.links)
    assert design_to_json(design) == plain
    assert not design_io._BESIDE  # taken once
    by = [line.split() for line in encoders.read_text().splitlines()]
    links = {int(pid) for pid, ident in by if int(ident) == id(design.links)}
    assert links and os.getpid() not in links  # only the child encoded them


def test_another_tuple_is_encoded_by_the_writer(
    design: Design, every_list: None, forks: list[int]
) -> None:
    plain = design_to_json(design)
    design_io.rows_text_beside(tuple(list(design.links)))  # equal rows, another object
    assert design_to_json(design) == plain
    assert design_io._BESIDE  # not taken: it was not this design's tuple
    design_io.release_beside()
    assert not design_io._BESIDE
    _reaped(forks)


def test_without_fork_the_parent_encodes(
    design: Design, every_list: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = design_to_json(design)

    def no_fork() -> int:
        raise OSError("no fork here")

    monkeypatch.setattr(os, "fork", no_fork)
    design_io.rows_text_beside(design.links)
    assert design_to_json(design) == plain
    assert not design_io._BESIDE


def test_a_short_list_is_left_to_the_writer(design: Design) -> None:
    design_io.rows_text_beside(design.links)
    assert not design_io._BESIDE and len(design.links) < design_io.BESIDE_FROM_ROWS


def test_plan_out_writes_the_links_encoded_beside(
    cli, tmp_path: Path, every_list: None, encoders: Path
) -> None:
    done = cli("plan", *QUICK, "-o", tmp_path / "d")
    assert done.code == 0, done.err
    expected = design_to_json(build(spec_from_dict(SPEC), load_catalog()).design)
    assert (tmp_path / "d" / "design.json").read_text() == expected
    pids = [int(p) for p, _ in (ln.split() for ln in encoders.read_text().splitlines())]
    assert any(p != os.getpid() for p in pids)  # a child encoded a list
    assert not design_io._BESIDE


def test_the_same_rows_as_a_replaced_design(design: Design, every_list: None) -> None:
    """A laid-out design made by ``dataclasses.replace`` keeps the planned tuple: taken."""
    laid = dataclasses.replace(design, name=design.name)
    assert laid.links is design.links
    design_io.rows_text_beside(design.links)
    assert design_to_json(laid) == design_to_json(design)
    assert not design_io._BESIDE


def test_a_refused_layout_leaves_no_encoding_child(
    cli, tmp_path: Path, every_list: None, encoders: Path, forks: list[int]
) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "cluster: {gpus: 256, node: dgx-h100}\n"
        "fabric: {switches: [qm9700], topology: roft}\n"
        "layout: {network_rack_power_w: 500}\n"
    )
    result = cli("plan", spec, "-o", tmp_path / "out")
    assert result.code == 2 and "layout.network_rack_power_w" in result.err
    assert not (tmp_path / "out").exists()
    assert any(
        int(p) != os.getpid() for p, _ in map(str.split, encoders.read_text().split("\n")[:-1])
    )
    assert not design_io._BESIDE
    _reaped(forks)


def _reaped(pids: list[int]) -> None:
    """Every child forked during the test was waited for (none is left running or a zombie)."""
    assert pids
    for pid in pids:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
