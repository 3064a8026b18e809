"""One port naming per device: the SuperPOD's UFM ports agree across every export and asbuilt.

An attached device's port k is ``P<k+1>`` on sheets, labels, the cable CSV, NetBox and in the
as-built report; the ``.topo`` declares it as a host of its own port count (``HCA_mlx5_4``) with
port k at ``mlx5_<k>/P1``; P2P names it by HCA number (``k+1``); a capture's ``mlx5_<k>``,
``nic<k>`` and ``P<k+1>`` all resolve to it, and a names map may name the device.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

import railplan
from railplan.design import Design
from railplan.field import FieldInputError
from railplan.field.names import Endpoint, NameMap
from railplan.physical.labels import port_label
from railplan.render import cables_csv, ibtopo, netbox, p2p
from railplan.render.sheet_rows import cable_rows
from tests.field_example import cabled

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def superpod() -> Design:
    return cabled(ROOT / "examples" / "superpod-h100-4su.yaml")  # racks, cables, labels


def _ufm_links(design: Design) -> list[tuple[str, int]]:
    out = []
    for lk in design.links:
        for dev, port in ((lk.a_device, lk.a_port), (lk.b_device, lk.b_port)):
            if dev == "ufm":
                out.append((lk.id, port))
    return out


def test_the_ufm_ports_agree_across_exports(superpod: Design) -> None:
    catalog = railplan.load_catalog()
    ufm = superpod.device_by_id()["ufm"]
    links = _ufm_links(superpod)
    assert sorted(p for _, p in links) == list(range(ufm.ports)) == [0, 1, 2, 3]
    want = {f"P{p + 1}" for _, p in links}
    switches = superpod.switch_by_id()
    # sheets, labels, the cable schedule, NetBox, asbuilt: the design's own name
    sheet = {e.port for r in cable_rows(superpod) for e in (r.a, r.b) if e.device == "ufm"}
    assert sheet == want
    sched = {e.port for r in cables_csv.schedule(superpod) for e in (r.a, r.b) if e.device == "ufm"}
    assert sched == want
    labels = {port_label(superpod, "ufm", p, switches) for _, p in links}
    assert all(any(w in label for w in want) for label in labels) and len(labels) == 4
    rows = list(csv.DictReader(io.StringIO(netbox.interfaces_csv(superpod, catalog))))
    assert {r["name"] for r in rows if r["device"] == "ufm"} == want
    names = NameMap(superpod)
    assert {names.port_name(Endpoint("ufm", p)) for _, p in links} == want
    # .topo: a 4-port host, port k at mlx5_k/P1; P2P: HCA number k+1
    topo = ibtopo.render(superpod, catalog)
    ufm_lines = [line for line in topo.splitlines() if " ufm " in line]
    assert len(ufm_lines) == 4
    assert {line.split()[-1] for line in ufm_lines} == {f"mlx5_{p}/P1" for _, p in links}
    assert all("HCA_mlx5_4 ufm" in line for line in ufm_lines)
    p2p_rows = list(csv.DictReader(io.StringIO(p2p.render(superpod, catalog))))
    ufm_p2p = {r["A-Port"] for r in p2p_rows if r["A-Node Name"] == "ufm"}
    ufm_p2p |= {r["Z-Port"] for r in p2p_rows if r["Z-Node Name"] == "ufm"}
    assert ufm_p2p == {str(p + 1) for _, p in links}


def test_capture_names_of_an_attached_device_resolve(superpod: Design, tmp_path: Path) -> None:
    names = NameMap(superpod)
    for k in range(4):
        for raw in (f"mlx5_{k}", f"mlx5_{k}:1", f"nic{k}", f"P{k + 1}"):
            assert names.endpoint(f"ufm mlx5_{k}", [raw]) == Endpoint("ufm", k), raw
    assert names.port("ufm", "mlx5_4") is None and names.port("ufm", "P5") is None
    assert names.port("ufm", "mlx5_0:2") is None
    path = tmp_path / "names.yaml"
    path.write_text("devices: {ufm-appliance-01: ufm}\nports: {ufm: {ens1f0np0: P2}}\n")
    loaded = NameMap.load(superpod, path)
    assert loaded.endpoint("ufm-appliance-01", ["ens1f0np0"]) == Endpoint("ufm", 1)
    path.write_text("devices: {x: storage9}\n")
    with pytest.raises(FieldInputError, match="not a node, switch or attached device"):
        NameMap.load(superpod, path)
