"""Debian's IBDM (ibutils 1.5.7 ``ibdmchk``) loads railplan's ``.topo`` in its ibdm-1.5 dialect.

ibdmchk reads the topology file with the IBNL system definitions railplan writes beside it
(``IBDM_IBNL_PATH``), must define every system and node of the design and skip no line ("-W-
Ignoring"); it may crash after loading (it does on its own shipped examples), which is tolerated.
Skips when ibutils is not installed (``.ci/run`` installs it).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import railplan
from railplan.design import Design
from railplan.render import ibtopo

ROOT = Path(__file__).resolve().parent.parent
IBDM_OWN = Path("/usr/lib/x86_64-linux-gnu/ibdm1.5.7/ibnl")
pytestmark = pytest.mark.skipif(
    shutil.which("ibdmchk") is None, reason="needs Debian's ibutils (ibdmchk)"
)
DEFINED = re.compile(r"-I- Defined (\d+)/(\d+) systems/nodes")


def _ib(gpus: int) -> Design:
    spec = {
        "name": f"ib{gpus}",
        "cluster": {"gpus": gpus, "gpus_per_node": 8, "nics_per_node": 8, "port_speed_gbps": 400},
        "fabric": {"switches": ["qm9700"], "topology": "roft", "tiers": 2},
    }
    return railplan.plan(railplan.spec_from_dict(spec))


FABRICS = {
    "roft-64": lambda: _ib(64),
    "superpod-ufm": lambda: railplan.plan(
        railplan.load_spec(ROOT / "examples" / "superpod-h100-4su.yaml")
    ),
}


def ibdmchk(tmp: Path, design: Design, dialect: ibtopo.Dialect) -> str:
    catalog = railplan.load_catalog()
    (tmp / "ibnl").mkdir(exist_ok=True)
    for name, text in ibtopo.ibnl_files(design, catalog).items():
        (tmp / "ibnl" / name).write_text(text)
    (tmp / "fabric.topo").write_text(ibtopo.render(design, catalog, dialect))
    sm = f"{design.switches[0].id}/U1"
    env = {**os.environ, "IBDM_IBNL_PATH": f"{tmp / 'ibnl'}:{IBDM_OWN}"}
    run = subprocess.run(
        ["ibdmchk", "-t", "fabric.topo", "-n", sm, "-p", "1"],
        cwd=tmp,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        errors="replace",
    )
    return run.stdout + run.stderr  # its exit status is a crash after loading, at times


@pytest.mark.parametrize("name", sorted(FABRICS))
def test_ibdm_loads_every_system_and_node(name: str, tmp_path: Path) -> None:
    design = FABRICS[name]()
    out = ibdmchk(tmp_path, design, "ibdm-1.5")
    assert "Ignoring" not in out and "-E- Fail" not in out, out[:2000]
    linked = {lk.a_device for lk in design.links} | {lk.b_device for lk in design.links}
    ends = {
        (d, p)
        for lk in design.links
        for d, p in ((lk.a_device, lk.a_port), (lk.b_device, lk.b_port))
    }
    switches = design.switch_by_id()
    hosts = [d for d in linked if d not in switches]
    host_ports = [e for e in ends if e[0] not in switches]
    # IBDM instantiates every port of a host type: a host's HCAs = its type's port count
    assert len(host_ports) == sum(int(ibtopo.host_type(design, h).rsplit("_", 1)[1]) for h in hosts)
    m = DEFINED.search(out)
    assert m is not None, out[:2000]
    assert (int(m[1]), int(m[2])) == (len(switches) + len(hosts), len(switches) + len(host_ports))


def test_the_ufm_dialect_is_what_old_ibdm_skips(tmp_path: Path) -> None:
    """NVIDIA's -4x-100G- arrow is outside ibdm 1.5's lane speeds: every link line is skipped."""
    design = FABRICS["roft-64"]()
    out = ibdmchk(tmp_path, design, "ufm")
    sw = design.switch_by_id()
    port_lines = sum((lk.a_device in sw) + (lk.b_device in sw) for lk in design.links)
    assert out.count("-W- Ignoring") == port_lines


def test_cables_writes_the_ibdm_folder_and_the_ibsim_file(tmp_path: Path) -> None:
    """The CLI formats: ``--format ibdm -o DIR`` (topo + IBNL) and ``--format ibsim``."""
    spec = tmp_path / "ib64.yaml"
    spec.write_text(
        "name: ib64\ncluster: {gpus: 64, gpus_per_node: 8, nics_per_node: 8, port_speed_gbps: 400}\n"
        "fabric: {switches: [qm9700], topology: roft, tiers: 2}\n"
    )

    def cables(*args: str) -> None:
        run = subprocess.run(
            [sys.executable, "-m", "railplan", "cables", str(spec), "-q", *args],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        assert run.returncode == 0, run.stderr[-2000:]

    cables("--format", "ibdm", "-o", str(tmp_path / "d"))
    topo = (tmp_path / "d" / "fabric.topo").read_text()
    assert "-100G-" not in topo and "->" in topo
    assert sorted(p.name for p in (tmp_path / "d" / "ibnl").iterdir())
    cables("--format", "ibsim", "-o", str(tmp_path / "n"))
    assert (tmp_path / "n").read_text().count("\nSwitch\t") >= 1
