"""Bad input: one sentence per problem on stderr naming the field, exit code 2, no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

BAD_SPECS = {
    "bad-yaml": ("cluster:\n  gpus: [1, 2\n", "not valid YAML"),
    "no-cluster": ("fabric:\n  topology: roft\n", "cluster: is missing; add it"),
    "zero-gpus": ("cluster:\n  gpus: 0\n  node: dgx-h100\n", "cluster.gpus"),
    "unknown-node": ("cluster:\n  gpus: 64\n  node: dgx-z9\n", "unknown node model 'dgx-z9'"),
    "unknown-switch": (
        "cluster:\n  gpus: 64\n  node: dgx-h100\nfabric:\n  switches: [nx9000]\n",
        "unknown switch 'nx9000'",
    ),
    "bad-topology": (
        "cluster:\n  gpus: 64\n  node: dgx-h100\nfabric:\n  topology: torus\n",
        "fabric.topology",
    ),
    "bad-ratio": (
        "cluster:\n  gpus: 64\n  node: dgx-h100\nfabric:\n  oversubscription: 1:3\n",
        "fabric.oversubscription: must be a ratio",
    ),
    "typo-field": ("cluster:\n  gpus: 64\n  node: dgx-h100\n  gpu_per_node: 8\n", "unknown field"),
    "not-multiple": ("cluster:\n  gpus: 100\n  node: dgx-h100\n", "not a multiple of 8"),
    "too-big": (
        "cluster:\n  gpus: 131072\n  node: dgx-h100\nfabric:\n  switches: [cx732q-n]\n",
        "hold at most",
    ),
    "planes-uneven": (
        "cluster:\n  gpus: 64\n  node: dgx-h100\nfabric:\n  planes: 3\n",
        "fabric.planes",
    ),
    "no-node-shape": ("cluster:\n  gpus: 64\n", "give either node"),
    "speed-unsupported": (
        "cluster:\n  gpus: 64\n  node: dgx-h100\n  port_speed_gbps: 800\nfabric:\n  switches: [qm9700]\n",
        "cannot run 800G",
    ),
}


def _assert_clean_error(result, needle: str) -> None:
    assert result.code == 2, result
    assert needle in result.err
    assert "Traceback" not in result.err and result.out == ""
    for line in result.err.strip().splitlines():
        assert line.startswith("railplan: error: ")


@pytest.mark.parametrize("name", sorted(BAD_SPECS))
def test_bad_spec_files(cli, tmp_path: Path, name: str):
    text, needle = BAD_SPECS[name]
    spec = tmp_path / f"{name}.yaml"
    spec.write_text(text)
    result = cli("plan", spec)
    _assert_clean_error(result, needle)
    assert len(result.err.strip().splitlines()) == 1


BAD_FLAGS = [
    (["plan", "--gpus", "x"], "Invalid value for '--gpus'"),
    (["plan", "--bogus"], "No such option: --bogus"),
    (["plan"], "no cluster given"),
    (
        ["plan", "--gpus", "64", "--node", "dgx-h100", "--set", "fabric.planes"],
        "write it as path=value",
    ),
    (["plan", "--gpus", "64", "--node", "dgx-h100", "--planes", "0"], "fabric.planes"),
    (["plan", "missing.yaml"], "does not exist"),
    (["plan", "spec.txt"], "give a spec .yaml or a design .json"),
    (
        [
            "plan",
            "--gpus",
            "64",
            "--node",
            "dgx-h100",
            "--topology",
            "rail-only",
            "--switch",
            "cx732q-n",
        ],
        None,
    ),
]


@pytest.mark.parametrize("args,needle", BAD_FLAGS)
def test_bad_flags(cli, tmp_path: Path, monkeypatch, args, needle):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "spec.txt").write_text("x")
    result = cli(*args)
    if needle is None:  # the control case: valid flags plan fine
        assert result.code == 0, result.err
        return
    _assert_clean_error(result, needle)


def test_bad_design_file(cli, tmp_path: Path):
    bad = tmp_path / "design.json"
    bad.write_text('{"format": 1}')
    _assert_clean_error(cli("plan", bad), "not a railplan design file")
    bad.write_text("{nope")
    _assert_clean_error(cli("plan", bad), "not valid JSON")


def test_multiple_problems_give_one_line_each(cli, tmp_path: Path):
    spec = tmp_path / "two.yaml"
    spec.write_text("cluster:\n  gpus: -1\n  node: dgx-h100\nfabric:\n  planes: 99\n")
    result = cli("plan", spec)
    assert result.code == 2
    lines = result.err.strip().splitlines()
    assert len(lines) == 2
    assert any("cluster.gpus" in line for line in lines)
    assert any("fabric.planes" in line for line in lines)
