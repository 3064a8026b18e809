"""The as-built loop against the real InfiniBand tools: ibsim simulates the planned fabric.

railplan's ibsim network file (railplan/render/ibsim_net.py) is loaded into Debian's ibsim, the
real ``ibnetdiscover`` and ``iblinkinfo`` read the simulated fabric through ``libumad2sim.so``
(LD_PRELOAD, as ``ibsim-run`` does), and ``asbuilt`` judges the capture: nothing on a healthy
fabric, exactly the injected swap, move, removal and foreign host otherwise. Skips when
ibsim-utils / infiniband-diags are absent (``.ci/run`` installs them) or ibsim cannot start.
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import railplan
from railplan.design import Design
from railplan.field.asbuilt import check_asbuilt
from railplan.render import ibsim_net
from railplan.render.ibsim_net import NetCable, NetEnd

ROOT = Path(__file__).resolve().parent.parent
UMAD2SIM = Path("/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so")
TOOLS = ("ibsim", "ibnetdiscover", "iblinkinfo")
_missing = [t for t in TOOLS if shutil.which(t) is None and not Path(f"/usr/sbin/{t}").exists()]
pytestmark = pytest.mark.skipif(
    bool(_missing) or not UMAD2SIM.exists(),
    reason=f"needs Debian's ibsim-utils and infiniband-diags ({', '.join(_missing) or UMAD2SIM})",
)
_count = itertools.count()


def _tool(name: str) -> str:
    return shutil.which(name) or f"/usr/sbin/{name}"


def capture(tmp: Path, net: str, size: tuple[int, int, int]) -> tuple[Path, Path]:
    """Run ibsim on ``net``; (ibnetdiscover, iblinkinfo) output files of the simulated fabric."""
    tag = f"rp{os.getpid()}-{next(_count)}"
    (tmp / f"{tag}.net").write_text(net)
    nodes, switches, ports = size
    env = {**os.environ, "IBSIM_SOCKNAME": tag}
    log = (tmp / f"{tag}.log").open("w")
    limits = ["-N", str(nodes + 8), "-S", str(switches + 1), "-P", str(ports + 16)]
    sim = subprocess.Popen(
        [_tool("ibsim"), "-s", "-n", *limits, f"{tag}.net"],
        cwd=tmp,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 20
        while "Network simulator ready" not in (tmp / f"{tag}.log").read_text():
            if sim.poll() is not None or time.monotonic() > deadline:
                text = (tmp / f"{tag}.log").read_text()
                pytest.skip(f"ibsim could not start: {text.strip().splitlines()[-1:]}")
            time.sleep(0.05)
        env["LD_PRELOAD"] = str(UMAD2SIM)
        out = []
        for tool in ("ibnetdiscover", "iblinkinfo"):
            path = tmp / f"{tag}.{tool}"
            with path.open("w") as fh:
                subprocess.run(
                    [_tool(tool)],
                    env=env,
                    stdout=fh,
                    stderr=subprocess.DEVNULL,
                    timeout=60,
                    check=True,
                )
            out.append(path)
        return out[0], out[1]
    finally:
        sim.terminate()
        sim.wait(timeout=10)
        log.close()


def plan(spec: dict[str, object] | Path) -> Design:
    source = railplan.load_spec(spec) if isinstance(spec, Path) else railplan.spec_from_dict(spec)
    return railplan.plan(source)


def _ib(gpus: int, tiers: int | str) -> dict[str, object]:
    return {
        "name": f"ib{gpus}",
        "cluster": {"gpus": gpus, "gpus_per_node": 8, "nics_per_node": 8, "port_speed_gbps": 400},
        "fabric": {"switches": ["qm9700"], "topology": "roft", "tiers": tiers},
    }


FABRICS = {
    "roft-64": lambda: plan(_ib(64, 2)),
    "superpod-ufm": lambda: plan(ROOT / "examples" / "superpod-h100-4su.yaml"),
    "three-tier-256": lambda: plan(_ib(256, 3)),
}


@pytest.fixture(scope="module", params=sorted(FABRICS))
def fabric(request: pytest.FixtureRequest) -> Design:
    return FABRICS[request.param]()


def findings(design: Design, ibnd: Path | None = None, ibli: Path | None = None) -> set[tuple]:
    report = check_asbuilt(design, ibnetdiscover=ibnd, iblinkinfo=ibli)
    return {(f.kind, tuple(sorted(f.links))) for f in report.findings}


def test_a_healthy_capture_has_no_findings(fabric: Design, tmp_path: Path) -> None:
    catalog = railplan.load_catalog()
    ibnd, ibli = capture(tmp_path, ibsim_net.render(fabric, catalog), ibsim_net.limits(fabric))
    assert findings(fabric, ibnd) == set()
    assert findings(fabric, ibli=ibli) == set()
    report = check_asbuilt(fabric, ibnetdiscover=ibnd)
    assert {c.status for c in report.links} == {"ok"} and len(report.links) == len(fabric.links)
    assert not report.unexpected


def _free_ports(design: Design) -> list[NetEnd]:
    used = {(lk.a_device, lk.a_port) for lk in design.links}
    used |= {(lk.b_device, lk.b_port) for lk in design.links}
    return [
        NetEnd(sw.id, p)
        for sw in design.switches
        for p in range(sw.radix)
        if (sw.id, p) not in used
    ]


def test_injected_faults_are_named_exactly(fabric: Design, tmp_path: Path) -> None:
    """A swap, a moved cable, a removed cable and a foreign host: four findings, no more."""
    catalog = railplan.load_catalog()
    cables = ibsim_net.planned_cables(fabric)
    hosts = [i for i, lk in enumerate(fabric.links) if lk.kind in ("node-leaf", "device-leaf")]
    i, j, k, r = hosts[0], hosts[1], hosts[2], hosts[3]
    free = _free_ports(fabric)
    links = fabric.links
    # swap: cables i and j exchange their leaf ends (i and j share a leaf: adjacent nodes)
    ci, cj = cables[i], cables[j]
    cables[i] = NetCable(ci.a, cj.b, ci.rate_gbps)
    cables[j] = NetCable(cj.a, ci.b, cj.rate_gbps)
    expected = {("swap", tuple(sorted((links[i].id, links[j].id))))}
    # move: cable k's leaf end to a free port; foreign: an unknown host on another one
    assert len(free) >= 2, "every fabric here keeps free switch ports"
    ck = cables[k]
    cables[k] = NetCable(ck.a, free[0], ck.rate_gbps)
    extra = [NetCable(NetEnd("intruder01", 0), free[1], 400)]
    expected |= {("miswired", (links[k].id,)), ("unexpected", ())}
    del cables[r]  # removal
    expected.add(("missing", (links[r].id,)))
    size = ibsim_net.limits(fabric, extra_hosts=len(extra))
    ibnd, ibli = capture(tmp_path, ibsim_net.render(fabric, catalog, cables + extra), size)
    assert findings(fabric, ibnd) == expected
    assert findings(fabric, ibli=ibli) == expected


def test_at_ibsims_hdr_limit_every_ndr_link_is_a_speed_finding(tmp_path: Path) -> None:
    """Debian's ibsim 0.10 stops at HDR: at the planned width an NDR link comes up at 200G."""
    design = FABRICS["roft-64"]()
    catalog = railplan.load_catalog()
    net = ibsim_net.render(design, catalog, speed="lanes")
    ibnd, _ = capture(tmp_path, net, ibsim_net.limits(design))
    assert "4xHDR" in ibnd.read_text() and "NDR" not in ibnd.read_text()
    report = check_asbuilt(design, ibnetdiscover=ibnd)
    assert {f.kind for f in report.findings} == {"wrong_speed"}
    assert sum(len(f.links) for f in report.findings) == len(design.links)
    assert {c.status for c in report.links} == {"wrong_speed"}


def test_the_healthy_superpod_capture_exits_0(tmp_path: Path) -> None:
    """The UFM's four links match: the CLI exits 0 on the SuperPOD's simulated capture."""
    design = FABRICS["superpod-ufm"]()
    catalog = railplan.load_catalog()
    ibnd, _ = capture(tmp_path, ibsim_net.render(design, catalog), ibsim_net.limits(design))
    assert '"ufm mlx5_3"' in ibnd.read_text()
    (tmp_path / "design.json").write_text(railplan.design_to_json(design))
    run = subprocess.run(
        [sys.executable, "-m", "railplan", "asbuilt", "design.json", "--ibnetdiscover", ibnd.name],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "2044 ok" in run.stdout
