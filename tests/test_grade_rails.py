"""A capture with one rail at half rate fails grading with the rail named; the healthy one passes.

The half-rate capture is built at test time from the bundled healthy results
(examples/field/results, the 2-node example's test plan run on a healthy fabric): one node
port's rail runs at 200 Gb/s where the plan has 400. What that does to each output:

- ib_write_bw on that rail: half the bandwidth and message rate;
- ibstat: that device's ``Rate: 200`` on every node; lldpd: the host port's MAU at 200G;
- a collective over every rail (NCCL rings, one channel per NIC, each carrying an equal share
  of the data): it ends with the slowest channel, so its time doubles and its busbw halves;
- all-to-all over every rail: each GPU sends half its data off the node through its own NIC
  (49.0 GB/s payload) and 7/16 over NVLink (450 GB/s, H100 datasheet); the GPU on the slow rail
  sends at 24.5 GB/s and every rank waits for it, so the time grows by
  (0.5 / 24.5 + 0.4375 / 450) / (0.5 / 49.0 + 0.4375 / 450) = 1.91 x;
- the per-rail run (NCCL_TESTS_SPLIT="MOD 8": one communicator per rail, run side by side):
  nccl-tests reports the time averaged over every rank (src/common.cu, ``-a 1`` default), so
  with 2 of 16 ranks twice as slow the time is (14 + 2 x 2) / 16 = 1.125 x.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from railplan.design import Design, design_from_json
from tests.conftest import EXAMPLES

FIELD = EXAMPLES / "field"
RESULTS = FIELD / "results"
DESIGN = FIELD / "design.json"


def _design() -> Design:
    return design_from_json(DESIGN.read_text(encoding="utf-8"))


def _scale_perftest(path: Path, factor: float) -> None:
    """Divide the bandwidth columns (peak, average, message rate) of perftest rows."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        cols = line.split()
        if len(cols) == 5 and cols[0].isdigit():
            peak, avg, rate = (float(c) / factor for c in cols[2:])
            line = (
                f" {cols[0]:<10} {cols[1]:<16} {peak:.2f}             {avg:.2f}  \t\t   {rate:.6f}"
            )
        out.append(line)
    path.write_text("\n".join(out) + "\n", encoding="utf-8")


def _scale_nccl(path: Path, factor: float) -> None:
    """Time x factor, algbw and busbw / factor on every nccl-tests row and the average."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        cols = line.split()
        if len(cols) == 13 and cols[0].isdigit():
            for t, alg, bus in ((5, 6, 7), (9, 10, 11)):
                cols[t] = f"{float(cols[t]) * factor:.1f}"
                cols[alg] = f"{float(cols[alg]) / factor:.2f}"
                cols[bus] = f"{float(cols[bus]) / factor:.2f}"
            line = "  " + "  ".join(cols)
        elif m := re.match(r"(#\s*Avg bus bandwidth\s*:\s*)(\S+)", line):
            line = f"{m.group(1)}{float(m.group(2)) / factor:.4f}"
        out.append(line)
    path.write_text("\n".join(out) + "\n", encoding="utf-8")


def half_rate_capture(dst: Path, design: Design, port: int) -> None:
    """The bundled healthy results with node port ``port``'s rail at half rate."""
    shutil.copytree(RESULTS, dst)
    device = f"mlx5_{port}"  # the plan's default RDMA device of node port ``port``
    nic = design.shape.port_name(port)
    for path in dst.glob(f"BW-*-{nic}.txt"):
        _scale_perftest(path, 2.0)
    for path in dst.glob("NODE-*/ibstat.txt"):
        blocks = re.split(r"(?m)^(?=CA ')", path.read_text(encoding="utf-8"))
        path.write_text(
            "".join(
                b.replace("Rate: 400", "Rate: 200") if b.startswith(f"CA '{device}'") else b
                for b in blocks
            ),
            encoding="utf-8",
        )
    for path in dst.glob("asbuilt/hosts/*.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        for itf in data["lldp"][0]["interface"]:
            if itf["name"] == f"ens{port + 1}f0np0":  # the example's host interface names
                for an in itf["port"][0]["auto-negotiation"]:
                    an["current"][0]["value"] = "200GbaseCR4 - copper"
        path.write_text(json.dumps(data), encoding="utf-8")
    ports = design.shape.ports
    for test in ("PAIR-0001", "NCCL-AR-2N-same-leaf"):
        _scale_nccl(dst / test / "nccl.log", 2.0)
    nic_gbs, nvlink_gbs, off, on = 400 * 0.9804 / 8, 450.0, 0.5, 7 / 16
    slow = (off / (nic_gbs / 2) + on / nvlink_gbs) / (off / nic_gbs + on / nvlink_gbs)
    _scale_nccl(dst / "NCCL-A2A-2N-same-leaf" / "nccl.log", slow)
    _scale_nccl(dst / "NCCL-AR-RAILS" / "nccl.log", (ports - 1 + 2.0) / ports)


def _grade(cli, folder: Path, *extra: str):
    return cli("grade", str(DESIGN), "--results", str(folder), *extra)


def test_healthy_capture_passes(cli):
    r = _grade(cli, RESULTS, "--json")
    assert r.code == 0, r.out[-2000:]
    out = json.loads(r.out)
    assert out["ok"] and out["rail_faults"] == []
    assert out["counts"]["pass"] == len(out["results"])


@pytest.mark.parametrize("port", [3, 7])
def test_one_rail_at_half_rate_fails_with_the_rail_named(cli, tmp_path, port):
    design = _design()
    half = tmp_path / "half"
    half_rate_capture(half, design, port)
    r = _grade(cli, half, "--json")
    assert r.code == 1
    out = json.loads(r.out)
    failed = {(x["test_id"], x["metric"]) for x in out["results"] if x["status"] == "fail"}
    nic = design.shape.port_name(port)
    nodes = sorted(n.id for n in design.nodes)
    # the rail's own tests and every collective over all rails fail; the other rails pass
    assert (f"BW-same-leaf-{nic}", "bw_avg_gbps") in failed
    assert {(f"NODE-{n}", "ports_at_rate") for n in nodes} <= failed
    assert ("CAB-p0-rail-all", "below_rate") in failed
    for test in ("PAIR-0001", "NCCL-AR-2N-same-leaf", "NCCL-A2A-2N-same-leaf", "NCCL-AR-RAILS"):
        assert (test, "avg_busbw_gbs") in failed
    for other in range(design.shape.ports):
        if other != port:
            bw = f"BW-same-leaf-{design.shape.port_name(other)}"
            assert (bw, "bw_avg_gbps") not in failed
    # exactly one rail named, with its port, device, switch, nodes and cables
    (rail,) = out["rail_faults"]
    assert rail["rail"] == port and rail["label"] == f"rail {port}"
    assert rail["node_ports"] == [nic] and rail["devices"] == [f"mlx5_{port}"]
    assert rail["switches"] == ["p0-rail-all"] and rail["nodes"] == nodes and rail["rail_wide"]
    links = {lk.id: lk for lk in design.links}
    want = sorted(
        (c.id, c.label_a, c.label_b)
        for c in design.cables
        if links[c.link_id].kind == "node-leaf" and links[c.link_id].a_port == port
    )
    assert sorted((c["id"], c["label_a"], c["label_b"]) for c in rail["cables"]) == want
    assert len(want) == len(nodes)
    # a rail-wide fault is not two node faults ("check ACS"): the rail explains the ports
    assert out["diagnosis"]["node_faults"] == []
    suspects = {s["label"] for s in out["diagnosis"]["fabric_suspects"]}
    assert suspects == {c for c, _, _ in want}
    text = _grade(cli, half)
    assert text.code == 1
    line = next(ln for ln in text.out.splitlines() if ln.startswith("rail fault:"))
    assert f"rail {port} ({nic}" in line and all(c in text.out for c, _, _ in want)
