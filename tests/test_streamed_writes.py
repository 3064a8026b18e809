"""Files written a piece at a time: the same bytes as the whole text, written while the next piece
is made, into a temp file renamed into place (none left behind on a failure)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from railplan import design_from_json, design_to_json
from railplan.design import io
from railplan.errors import DesignFileError
from railplan.render import atomic, cables_csv
from railplan.safe_text import column_pieces

DESIGNS = sorted((Path(__file__).resolve().parent.parent / "designs").glob("*/design.json"))
_PIECE = 1 << 16  # bigger than the file buffer: each piece reaches the file when written


def _temp_size(folder: Path) -> int:
    temps = list(folder.glob(f"{atomic.TEMP_PREFIX}*"))
    return sum(t.stat().st_size for t in temps if t.is_file())


def test_pieces_are_written_while_the_next_are_made(tmp_path: Path) -> None:
    seen: list[int] = []

    def pieces() -> Iterator[bytes]:
        for i in range(40):
            seen.append(_temp_size(tmp_path))
            yield bytes([65 + i % 26]) * _PIECE

    target = tmp_path / "big.bin"
    atomic.write_atomic(target, pieces())
    assert target.read_bytes() == b"".join(bytes([65 + i % 26]) * _PIECE for i in range(40))
    # at the 20th piece, all but the few queued or in hand were already in the temp file
    queued = atomic._QUEUED + 2
    assert all(size >= (i - queued) * _PIECE for i, size in enumerate(seen))
    assert seen[-1] > 0
    assert not list(tmp_path.glob(f"{atomic.TEMP_PREFIX}*"))


def test_a_failing_maker_leaves_the_old_file_and_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "x.csv"
    target.write_text("old\n")

    def pieces() -> Iterator[str]:
        yield "a" * _PIECE
        raise DesignFileError("design x has no cables")

    with pytest.raises(DesignFileError):
        atomic.write_atomic(target, pieces())
    assert target.read_text() == "old\n"
    assert not list(tmp_path.glob(f"{atomic.TEMP_PREFIX}*"))


def test_a_set_with_a_file_in_pieces_is_written_whole(tmp_path: Path) -> None:
    out = tmp_path / "plan"
    atomic.write_set(out, {"a.json": iter(["{", '"x":1', "}\n"]), "b.yaml": "b: 1\n"})
    assert (out / "a.json").read_text() == '{"x":1}\n'
    assert (out / "b.yaml").read_text() == "b: 1\n"


@pytest.mark.parametrize("path", DESIGNS, ids=lambda p: p.parent.name)
def test_design_json_pieces_are_the_design_json(path: Path, monkeypatch) -> None:
    text = path.read_text()
    design = design_from_json(text)
    monkeypatch.setattr(io, "_BLOCK_ROWS", 7)  # many blocks even in a small design
    pieces = list(io.design_json_chunks(design))
    assert "".join(pieces) == text
    assert len(pieces) > 10
    assert design_to_json(design) == text


@pytest.mark.parametrize("path", DESIGNS, ids=lambda p: p.parent.name)
def test_cables_csv_pieces_are_the_whole_schedule(path: Path) -> None:
    design = design_from_json(path.read_text())
    if not design.cables:
        with pytest.raises(DesignFileError):
            cables_csv.render_pieces(design)  # refused before a piece is made
        return
    whole = cables_csv.render(design)  # the rows' text: tests/test_cables_csv_columns.py
    columns = cables_csv.schedule_columns(design)
    small = list(column_pieces(cables_csv.COLUMNS, columns, block=5))
    assert "".join(small) == whole
    assert len(small) == 1 + -(-len(columns[0]) // 5)


def test_the_cables_command_streams_and_plan_writes_design_json_in_pieces(
    cli, tmp_path, monkeypatch
) -> None:
    monkeypatch.setattr(io, "_BLOCK_ROWS", 100)
    written: list[int] = []
    real = atomic._write_pieces

    def counted(fh, pieces):  # type: ignore[no-untyped-def]
        def passing() -> Iterator[str | bytes]:
            for piece in pieces:
                written.append(len(piece))
                yield piece

        real(fh, passing())

    monkeypatch.setattr(atomic, "_write_pieces", counted)
    quick = ("--gpus", "256", "--node", "dgx-h100", "--switch", "qm9700", "--topology", "roft")
    result = cli("plan", *quick, "-o", tmp_path / "p")
    assert result.code == 0, result.err
    text = (tmp_path / "p" / "design.json").read_text()
    design = design_from_json(text)
    assert design_to_json(design) == text
    assert len(written) > len(design.links) // 100  # design.json went in blocks of rows
    json.loads(text)
    written.clear()
    result = cli("cables", text_path := tmp_path / "p" / "design.json", "-o", tmp_path / "c.csv")
    assert result.code == 0, result.err
    assert (tmp_path / "c.csv").read_text() == cables_csv.render(design_from_json(text))
    assert written and sum(written) == len((tmp_path / "c.csv").read_bytes())
    assert text_path.exists()


def _schedule_port_by_port(design):  # type: ignore[no-untyped-def]
    """The schedule as it was built before the port names were memoised: the oracle."""
    links = {lk.id: lk for lk in design.links}
    where = {p.device: p for p in design.placements}
    order = {r.id: (r.row, r.position) for r in design.racks}
    switches = design.switch_by_id()
    rows = []
    for cable in design.cables:
        link = links[cable.link_id]
        ends = []
        for dev, port in ((link.a_device, link.a_port), (link.b_device, link.b_port)):
            p = where[dev]
            ends.append(
                cables_csv.CableEnd(p.rack, p.u, dev, design.port_name(dev, port, switches))
            )
        rows.append(cables_csv.ScheduleRow(cable, link, ends[0], ends[1]))
    return sorted(
        rows,
        key=lambda r: (order.get(r.a.rack, (0, 0)), -r.a.u, r.a.device, r.link.a_port, r.cable.id),
    )


@pytest.mark.parametrize("path", DESIGNS, ids=lambda p: p.parent.name)
def test_the_schedule_is_the_port_by_port_schedule(path: Path) -> None:
    design = design_from_json(path.read_text())
    if design.cables:
        assert cables_csv.schedule(design) == _schedule_port_by_port(design)


def test_a_failing_write_is_one_sentence_and_leaves_no_temp(tmp_path: Path, monkeypatch) -> None:
    def full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic.os, "fsync", full)
    target = tmp_path / "design.json"
    with pytest.raises(atomic.OutputError, match="No space left on device"):
        atomic.write_atomic(target, (b"x" * _PIECE for _ in range(20)))
    assert not target.exists()
    assert not list(tmp_path.glob(f"{atomic.TEMP_PREFIX}*"))
