"""A big cable schedule's second half rendered in a forked child: the halves joined are the
schedule's CSV byte for byte, the child did render it, and without fork the parent does."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import railplan.render.cables_csv as cables_csv
from tests.test_link_arrays import DESIGNS, laid_out


@pytest.fixture
def split_all(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cables_csv, "SPLIT_FROM_CABLES", 1)


@pytest.mark.parametrize("name", DESIGNS)
def test_the_halves_joined_are_the_whole_schedule(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    design = laid_out(name)
    whole = "".join(cables_csv.render_pieces(design))  # below the threshold: one process
    monkeypatch.setattr(cables_csv, "SPLIT_FROM_CABLES", 1)
    assert "".join(cables_csv.render_pieces(design)) == whole
    assert whole.count("\n") > 1


def test_the_child_renders_the_second_half(
    split_all: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    design = laid_out("plant")
    log = tmp_path / "renderers"
    real = cables_csv._rows

    def noted(d, ordered):
        with open(log, "a") as out:
            out.write(f"{os.getpid()} {ordered[0].cable.id}\n")
        yield from real(d, ordered)

    monkeypatch.setattr(cables_csv, "_rows", noted)
    text = "".join(cables_csv.render_pieces(design))
    by = dict(line.split()[::-1] for line in log.read_text().splitlines())
    ordered = cables_csv.schedule(design)
    second = ordered[len(ordered) // 2].cable.id
    assert int(by[ordered[0].cable.id]) == os.getpid()  # the parent: the first half
    assert int(by[second]) != os.getpid()  # a child: the second half
    assert text.splitlines()[0] == ",".join(cables_csv.COLUMNS)


def test_without_fork_the_parent_renders_both(
    split_all: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    design = laid_out("plant")
    monkeypatch.setattr(cables_csv, "SPLIT_FROM_CABLES", 10**9)
    whole = cables_csv.render(design)
    monkeypatch.setattr(cables_csv, "SPLIT_FROM_CABLES", 1)

    def no_fork() -> int:
        raise OSError("no fork here")

    monkeypatch.setattr(os, "fork", no_fork)
    assert "".join(cables_csv.render_pieces(design)) == whole
