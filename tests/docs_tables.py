"""Markdown tables the docs show, printed from the commands' own ``--json`` (docs_outputs runs it).

    PYTHONPATH=$PWD python -m tests.docs_tables analyze   # the "What it predicts" table

Each row runs ``railplan analyze ... --json`` in a fresh process and reads its figures, so the
table in docs/tutorials/roft-vs-matrix.md is what today's analyzer predicts.
"""

from __future__ import annotations

import json
import subprocess
import sys

#: (design column, pattern column, arguments after ``railplan analyze``)
ANALYZE_ROWS: list[tuple[str, str, list[str]]] = [
    ("`fat-tree-1k` (per-rack, InfiniBand: D-mod-k)", "pairs", ["fat-tree-1k"]),
    (
        "`fat-tree-1k --routing ecmp` (hashed, as RoCE)",
        "pairs",
        ["fat-tree-1k", "--routing", "ecmp", "--flows-per-nic", "1"],
    ),
    (
        "`fat-tree-1k --routing ecmp`",
        "pairs",
        ["fat-tree-1k", "--routing", "ecmp", "--flows-per-nic", "2"],
    ),
    (
        "`fat-tree-1k --routing ecmp`",
        "pairs",
        ["fat-tree-1k", "--routing", "ecmp", "--flows-per-nic", "4"],
    ),
    (
        "`fat-tree-1k --routing ecmp`",
        "pairs",
        ["fat-tree-1k", "--routing", "ecmp", "--flows-per-nic", "8"],
    ),
    ("`h100-1k` (ROFT, D-mod-k)", "pairs", ["h100-1k"]),
    ("`h100-1k` (ROFT, D-mod-k)", "alltoall", ["h100-1k", "--pattern", "alltoall"]),
    (
        "`h100-1k --routing ecmp`",
        "alltoall",
        ["h100-1k", "--routing", "ecmp", "--pattern", "alltoall"],
    ),
    (
        "`h100-1k --topology matrix` (single-port NICs, independent)",
        "alltoall",
        ["h100-1k", "--topology", "matrix", "--pattern", "alltoall"],
    ),
    ("`seed003-matrix` (4 nodes, bonded)", "pairs", ["seed003-matrix"]),
    ("`seed003-matrix`", "pairs", ["seed003-matrix", "--flows-per-nic", "1"]),
    ("`matrix-4k` (4,096 GPUs, bonded)", "pairs", ["matrix-4k"]),
    ("`matrix-4k`", "alltoall", ["matrix-4k", "--pattern", "alltoall"]),
    ("`matrix-4k`", "pd (`spread`, `all`)", ["matrix-4k", "--pattern", "pd"]),
    (
        "`matrix-4k`",
        "pd `--placement split`",
        ["matrix-4k", "--pattern", "pd", "--placement", "split"],
    ),
    ("`matrix-4k`", "pd `--mapping one`", ["matrix-4k", "--pattern", "pd", "--mapping", "one"]),
    (
        "`matrix-4k`",
        "alltoall `--fail p0-leafA-r0-01` (bonded)",
        ["matrix-4k", "--pattern", "alltoall", "--fail", "p0-leafA-r0-01"],
    ),
    (
        "`matrix-4k`",
        "same, `--set cluster.bonding=independent`",
        [
            "matrix-4k",
            "--pattern",
            "alltoall",
            "--fail",
            "p0-leafA-r0-01",
            "--set",
            "cluster.bonding=independent",
        ],
    ),
    (
        "`matrix-4k`",
        "alltoall `--fail LL000001` (one A-B cable)",
        ["matrix-4k", "--pattern", "alltoall", "--fail", "LL000001"],
    ),
]


def percent(x: float) -> str:
    """A share as the docs print it: whole percent, one decimal below 1% (never 0% for > 0)."""
    p = 100 * x
    if 0 < p < 1:
        return f"{p:.1f}%"
    if 99 < p < 100:
        return f"{int(p)}%"  # 99.6% is not 100%
    return f"{p:.0f}%"


def _analyze(args: list[str]) -> dict[str, object]:
    name, rest = args[0], args[1:]
    out = subprocess.run(
        [sys.executable, "-m", "railplan", "analyze", f"examples/{name}.yaml", *rest, "--json"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    report: dict[str, object] = json.loads(out)
    return report


def analyze_table() -> str:
    lines = [
        "| design | pattern | flows per NIC | pairs at full rate | pairs at half or less "
        "| mean | pace |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for design, pattern, args in ANALYZE_ROWS:
        r = _analyze(args)
        bw = r["bandwidth"]
        assert isinstance(bw, dict)
        pace = r.get("collective_fraction")
        pace_cell = "" if pace is None else f"{pace:.2f}"
        failure = r.get("failure")
        if isinstance(failure, dict) and failure.get("cut_off_nodes") and pace == 0:
            pace_cell = f"0 ({failure['cut_off_nodes']} nodes cut off)"
        lines.append(
            f"| {design} | {pattern} | {r['flows_per_nic']} | {percent(float(r['fraction_full']))} "  # type: ignore[arg-type]
            f"| {percent(float(r['fraction_half_or_less']))} | {bw['mean']:.2f} | {pace_cell} |"  # type: ignore[arg-type]
        )
    return "\n".join(lines) + "\n"


TABLES = {"analyze": analyze_table}

if __name__ == "__main__":
    sys.stdout.write(TABLES[sys.argv[1]]())
