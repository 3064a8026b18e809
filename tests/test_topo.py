"""nvidia-smi topo -m: the parser on real captures, the rail pairing of GPUs and NICs, the node
check in every plan, and grade failing a NIC on the wrong socket by name."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from railplan.field.common import ParseError
from railplan.field.grade import grade
from railplan.field.parse_topo import nic_faults, parse_topo, parse_topo_file
from railplan.testplan import expectations
from tests.test_scripts import FAKES
from tests.test_testplan import cabled, example_plan

TOPO = Path(__file__).parent / "fixtures" / "loop" / "topo"
#: NVIDIA/nccl issue #1264 (HGX H100): GPU g's own NIC, by column; NIC3 and NIC4 serve no GPU
H1264_RAILS = ("NIC0", "NIC1", "NIC2", "NIC5", "NIC6", "NIC7", "NIC8", "NIC9")


def topo_text(gpus: int, nics: int) -> str:
    """A matrix in nvidia-smi's layout with NIC k on the PCIe switch of its rail's GPU."""
    head = "\t" + "\t".join([f"GPU{g}" for g in range(gpus)] + [f"NIC{k}" for k in range(nics)])
    rows = [head + "\tCPU Affinity\tNUMA Affinity"]
    for g in range(gpus):
        cells = [" X " if h == g else "NV18" for h in range(gpus)]
        cells += ["PIX" if k * gpus // nics == g else "SYS" for k in range(nics)]
        rows.append("\t".join([f"GPU{g}", *cells, "0-55", "0"]))
    legend = [f"  NIC{k}: mlx5_{k}" for k in range(nics)]
    return "\n".join([*rows, "", "NIC Legend:", "", *legend]) + "\n"


def test_parses_the_hgx_h100_capture_with_nic_columns() -> None:
    m = parse_topo_file(TOPO / "nccl-1264-hgx-h100.txt")
    assert m.gpus == tuple(f"GPU{g}" for g in range(8))
    assert m.nics == tuple(f"NIC{k}" for k in range(10))
    assert [m.path(f"GPU{g}", nic) for g, nic in enumerate(H1264_RAILS)] == ["PIX"] * 8
    assert m.path("GPU0", "GPU5") == "NV18" and m.path("GPU4", "NIC0") == "SYS"
    assert nic_faults(m, H1264_RAILS, 8) == []
    # cabling the rails to NIC0..NIC7 puts NIC3..NIC7 away from GPU3..GPU7: each named
    faults = nic_faults(m, tuple(f"NIC{k}" for k in range(8)), 8)
    assert len(faults) == 5
    assert faults[0] == (
        "NIC3 is SYS from GPU3: on the other socket (across QPI/UPI); GPU3's near NIC is NIC5"
    )


def test_parses_the_dgx2_capture_with_mlx5_columns() -> None:
    m = parse_topo_file(TOPO / "nccl-tests-78-dgx2.txt")
    assert len(m.gpus) == 16 and m.nics == tuple(f"mlx5_{k}" for k in range(10))
    assert m.path("GPU2", "mlx5_1") == "PIX" and m.path("GPU2", "mlx5_0") == "PXB"
    # the rows the post shows (GPU0..GPU3): two NICs, two GPUs each
    assert nic_faults(m, ("mlx5_0", "mlx5_1"), 4) == []
    faults = nic_faults(m, ("mlx5_2", "mlx5_4"), 4)
    assert faults[0].startswith("mlx5_2 is NODE from GPU0: across PCIe host bridges")
    assert faults[1].startswith("mlx5_4 is SYS from GPU2: on the other socket")


def test_nic_legend_renames_columns_and_missing_devices_are_named() -> None:
    text = subprocess.run(["bash", "-c", FAKES["nvidia-smi"]], capture_output=True, text=True)
    m = parse_topo(text.stdout)
    assert m.nics == tuple(f"mlx5_{k}" for k in range(8))
    assert nic_faults(m, ("mlx5_0", "mlx5_9"), 8) == [
        "mlx5_9 is not in the matrix (NIC missing or unnamed)"
    ]


def test_not_a_matrix_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match=r"no 'GPU0 GPU1 \.\.\.' header"):
        parse_topo("NVIDIA-SMI has failed because it couldn't communicate with the driver\n")


@pytest.mark.parametrize("name", ["seed000-2node", "seed001-64gpu", "seed003-roft"])
def test_every_node_test_checks_gpu_nic_affinity(name: str) -> None:
    plan = example_plan(name)
    n = len(dict.fromkeys(plan.devices))
    for test in plan.section("node").tests:
        check = next(c for c in test.checks if c.metric == "nics_near_gpu")
        assert (check.expected, check.threshold, check.better) == (n, n, "equal")
        assert any(c.startswith("nvidia-smi topo -m") for c in test.command)


def test_grade_fails_a_nic_on_the_wrong_socket_naming_it(tmp_path: Path) -> None:
    name = "seed000-2node"
    design, plan = cabled(name), example_plan(name)
    exps = [e for e in expectations(plan) if e.metric == "nics_near_gpu"]
    for far, exp in zip(("", "3"), exps, strict=True):
        script = FAKES["nvidia-smi"].replace("${TOPO_FAR:-}", far)
        out = subprocess.run(["bash", "-c", script], capture_output=True, text=True).stdout
        folder = tmp_path / exp.test_id
        folder.mkdir()
        (folder / "topo.txt").write_text(out)
    report = grade(design, exps, tmp_path)
    ok, bad = report.results
    assert (ok.status, ok.measured) == ("pass", 8.0)
    assert (bad.status, bad.measured) == ("fail", 7.0)
    assert "mlx5_3 is SYS from GPU3: on the other socket" in bad.detail


def test_grade_uses_the_plans_device_names_not_the_defaults(tmp_path: Path) -> None:
    """testplan --devices ibp0..ibp7: the node check looks those names up in the matrix, from
    the plan's expectations and from grade's own default plan given the same devices."""
    from railplan.catalog import load_catalog
    from railplan.testplan import TestPlanOptions, build_testplan

    name = "seed000-2node"
    design = cabled(name)
    names = tuple(f"ibp{k}" for k in range(8))
    plan = build_testplan(design, load_catalog(), TestPlanOptions(devices=names))
    exps = [e for e in expectations(plan) if e.metric == "nics_near_gpu"]
    assert all(e.devices == names for e in exps)
    matrix = topo_text(8, 8).replace("mlx5_", "ibp")
    for exp in exps:
        (tmp_path / exp.test_id).mkdir()
        (tmp_path / exp.test_id / "topo.txt").write_text(matrix)
    report = grade(design, exps, tmp_path)
    assert [(r.status, r.measured) for r in report.results] == [("pass", 8.0)] * 2
    only_topo = {e.test_id for e in exps}
    default = grade(design, None, tmp_path, devices=names)
    mine = [r for r in default.results if r.metric == "nics_near_gpu" and r.test_id in only_topo]
    assert [(r.status, r.measured) for r in mine] == [("pass", 8.0)] * 2
    # without the names, the defaults (mlx5_k) are not in this matrix: every NIC is missing
    plain = grade(design, None, tmp_path)
    missed = [r for r in plain.results if r.metric == "nics_near_gpu"]
    assert [r.status for r in missed] == ["fail"] * 2 and "mlx5_0" in missed[0].detail


def test_grade_cli_devices_option(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """railplan grade --devices: the topo check reads the custom names; a wrong count is exit 2."""
    import json

    from railplan.design import design_to_json

    design = cabled("seed000-2node")
    (tmp_path / "design.json").write_text(design_to_json(design))
    results = tmp_path / "results"
    for node in design.nodes:
        (results / f"NODE-{node.id}").mkdir(parents=True)
        (results / f"NODE-{node.id}" / "topo.txt").write_text(
            topo_text(8, 8).replace("mlx5_", "ibp")
        )
    names = ",".join(f"ibp{k}" for k in range(8))
    out = cli("grade", tmp_path / "design.json", "--results", results, "--devices", names, "--json")
    rows = [r for r in json.loads(out.out)["results"] if r["metric"] == "nics_near_gpu"]
    assert [(r["status"], r["measured"]) for r in rows] == [("pass", 8.0)] * 2
    bad = cli("grade", tmp_path / "design.json", "--results", results, "--devices", "ibp0,ibp1")
    assert bad.code == 2 and "devices" in bad.err and "Traceback" not in bad.err
