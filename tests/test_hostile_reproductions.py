"""Every reproduction of issue 35 (tests/fixtures/issue35/reproductions.json) as a regression test:
refused with one sentence that names the file and the JSON path at fault, or handled without
output onto a device; the resource bounds asserted structurally (time is measured, never
asserted, by ``python bench/bench_reproductions.py``):

- the 40 MB and 4 MB list bombs are refused by the byte count, before the JSON is parsed;
- a device, a FIFO or a 100 MB capture is refused after reading at most its byte limit (the
  bytes read are counted), a FIFO without blocking;
- every case's Python allocations stay under 200 MB (``tracemalloc`` peak, in-process).
"""

from __future__ import annotations

import copy
import json
import os
import tracemalloc
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "issue35"
CASES: list[dict[str, Any]] = json.loads((FIXTURES / "reproductions.json").read_text())["cases"]
#: the issue's memory bound for one reproduction
MAX_BYTES = 200 * 1024 * 1024


@cache
def _base(path: str) -> dict[str, Any]:
    return json.loads((ROOT / path).read_text(encoding="utf-8"))


def _put(data: dict[str, Any], where: str, value: Any) -> None:
    *head, last = where.split(".")
    node: Any = data
    for key in head:
        node = node[int(key)] if key.isdigit() else node[key]
    node[int(last) if last.isdigit() else last] = value


def _topology_only(tmp: Path) -> dict[str, Any]:
    from railplan.cli.app import _run

    out = tmp / "topology-only"
    assert (
        _run(["plan", str(ROOT / "examples" / "seed001-64gpu.yaml"), "--no-layout", "-o", str(out)])
        == 0
    )
    return json.loads((out / "design.json").read_text(encoding="utf-8"))


def _list_bomb(base: dict[str, Any]) -> bytes:
    """The issue's 40 MB design: 20 million list items in one list."""
    raw = json.dumps({**base, "shape": {**base["shape"], "port_plane": []}}).encode()
    at = raw.index(b'"port_plane": [') + len(b'"port_plane": [')
    return raw[:at] + b"0," * 20_000_000 + b"0" + raw[at:]


def prepare(case: dict[str, Any], tmp: Path) -> tuple[list[str], Path | None]:
    """The command line of a reproduction and its input file, written (or made) under ``tmp``."""
    generate = case.get("generate")
    suffix = case.get("suffix", ".json")
    made = tmp / f"{case['input']}{suffix}"
    path: Path | None = made
    if case["input"] == "design":
        if generate == "dev-zero":
            made.symlink_to("/dev/zero")
        elif generate == "list-items-20M":
            made.write_bytes(_list_bomb(_base(case["base"])))
        elif generate == "rows-2M":
            made.write_bytes(b'{"nodes":[' + b",".join([b'{"a":1}'] * 2_000_000) + b"]}")
        else:
            data = (
                _topology_only(tmp)
                if generate == "topology-only"
                else copy.deepcopy(_base(case["base"]))
            )
            if "tamper" in case:
                from tests.test_hostile_files import TAMPERS

                edit = next(e for name, e, _ in TAMPERS if name == case["tamper"])
                edit(data)
            for where, value in case.get("edits", []):
                _put(data, where, value)
            made.write_text(json.dumps(data), encoding="utf-8")
    elif generate == "dev-zero":
        made.symlink_to("/dev/zero")
    elif generate == "fifo":
        os.mkfifo(made)
    elif generate == "sparse-100M":
        with made.open("wb") as f:  # a sparse file: 100 MB long, no disk written
            f.truncate(100 * 1024 * 1024)
    elif "file" in case:
        path = FIXTURES / case["file"]
    else:
        path = None
    output = tmp / "out.csv"
    if generate == "fifo-output":
        os.mkfifo(output)
    argv = []
    for arg in case["argv"]:
        arg = arg.replace("{input}", str(path)).replace("{tmp}", str(tmp))
        arg = arg.replace("{output}", str(output))
        argv.append(str(ROOT / arg) if arg.startswith(("examples/", "designs/")) else arg)
    return argv, path


def needle(case: dict[str, Any]) -> str:
    if "tamper" in case:
        from tests.test_hostile_files import TAMPERS

        return next(n for name, _, n in TAMPERS if name == case["tamper"])
    return str(case["needle"])


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_a_reproduction_is_refused_naming_its_path(cli, tmp_path: Path, monkeypatch, case) -> None:
    import railplan.pipeline.source as source
    import railplan.safe_load as safe_load

    argv, path = prepare(case, tmp_path)
    if case.get("before_parse"):  # refused by the byte count: the JSON is never parsed

        def never(*_a: object, **_k: object) -> None:
            raise AssertionError("the design was parsed before its bytes were counted")

        monkeypatch.setattr(source, "load_json", never)
    read = [0]
    if case.get("bounded_read"):
        real = os.read

        def counting(fd: int, n: int) -> bytes:
            data = real(fd, n)
            read[0] += len(data)
            return data

        monkeypatch.setattr(safe_load.os, "read", counting)
    tracemalloc.start()
    try:
        result = cli(*argv)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.code == 2, (result.code, result.out[-500:], result.err[-2000:])
    lines = result.err.strip().splitlines()
    assert lines and all(line.startswith("railplan: error: ") for line in lines), result.err
    assert "Traceback" not in result.err and "Input should" not in result.err
    assert needle(case) in result.err, result.err
    if path is not None and case["input"] != "output":  # the file at fault is named first
        assert path.name in lines[0] or str(path) in lines[0], lines[0]
    if case["input"] == "design" and case.get("generate") != "dev-zero":
        assert names_a_json_path(lines[0]), lines[0]
    assert peak < MAX_BYTES, f"{peak / 2**20:.0f} MiB allocated"
    if case.get("bounded_read"):  # at most the limit of the largest input read, never 100 MB
        assert read[0] < 16 * 1024 * 1024, read[0]
    if case.get("generate") == "fifo-output":
        assert (tmp_path / "out.csv").is_fifo()  # the FIFO is left as it was
    if case["argv"][-1] == "/dev/null":
        assert Path("/dev/null").is_char_device()


def names_a_json_path(line: str) -> bool:
    """A design refusal names a JSON path (``links[3].rail``, ``sizing.radix``), or says what
    of the whole file is wrong (its byte counts, its embedded spec's absence)."""
    import re

    body = line.split(": ", 2)[-1] if line.count(": ") >= 2 else line
    path = re.search(r"(?:^|[\s(])[a-z_]+(?:\[\d+\]|\.[a-z_]+)+|\b(?:spec|topology|gpus)\b", line)
    return bool(path) or "JSON values" in body or "JSON objects" in body


def test_every_issue_item_has_a_reproduction() -> None:
    items = {c["issue"] for c in CASES}
    assert items == {"1", "2", "3", "5", "6"}  # 4 (formulas, escapes) is tests/test_safe_text.py
    assert len({c["id"] for c in CASES}) == len(CASES)
    for case in CASES:  # the kept files are small; large inputs are generated at test time
        if "file" in case:
            assert (FIXTURES / case["file"]).stat().st_size < 64 * 1024
