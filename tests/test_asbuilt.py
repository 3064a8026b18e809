"""As-built cabling check: synthetic LLDP / ibnetdiscover / iblinkinfo views of a planned design."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

import railplan
from railplan.design import Cable, Design
from railplan.field import FieldInputError
from railplan.field.asbuilt import check_asbuilt
from railplan.field.names import Endpoint, NameMap
from railplan.render.field_report import report_markdown

# -- designs ------------------------------------------------------------------------------------


def roft(gpus: int, switch: str, name: str = "asbuilt") -> Design:
    spec = {
        "name": name,
        "cluster": {"gpus": gpus, "gpus_per_node": 8, "nics_per_node": 2, "port_speed_gbps": 400},
        "fabric": {"switches": [switch]},
    }
    return railplan.plan(railplan.spec_from_dict(spec))


@pytest.fixture(scope="module")
def eth_design() -> Design:
    """28 nodes x 2 rails on 32-port leaves: 2 SUs (the second one partial), 2 spines."""
    return roft(224, "cx732q-n")


@pytest.fixture(scope="module")
def ib_design() -> Design:
    """56 nodes x 2 rails on 64-port (32 twin-port cages) switches."""
    return roft(448, "qm9700")


def with_cables(design: Design) -> Design:
    """The design with a cable schedule whose labels differ from the link ids."""
    names = NameMap(design)
    cables = []
    for i, link in enumerate(design.links):
        a = names.display(Endpoint(link.a_device, link.a_port))
        b = names.display(Endpoint(link.b_device, link.b_port))
        cables.append(
            Cable(f"CB-{i + 1:04d}", link.id, "aoc", "", "", 5.0, f"{a} > {b}", f"{b} > {a}", "red")
        )
    return dataclasses.replace(design, cables=tuple(cables))


# -- the synthetic as-built -----------------------------------------------------------------------

Edge = tuple[Endpoint, Endpoint, int]


def planned_edges(design: Design) -> list[Edge]:
    return [
        (Endpoint(lk.a_device, lk.a_port), Endpoint(lk.b_device, lk.b_port), lk.rate_gbps)
        for lk in design.links
    ]


def free_port(design: Design, device: str, start: int = 0) -> Endpoint:
    used = {e for a, b, _ in planned_edges(design) for e in (a, b)}
    sw = design.switch_by_id()[device]
    return next(
        Endpoint(device, p) for p in range(start, sw.radix) if Endpoint(device, p) not in used
    )


def six_faults(design: Design) -> tuple[list[Edge], dict[str, object]]:
    """Three swaps, one missing, one extra, one wrong speed; returns edges and the truth."""
    edges = planned_edges(design)
    links = list(design.links)
    node_leaf = [i for i, lk in enumerate(links) if lk.kind == "node-leaf"]
    leaf_spine = [i for i, lk in enumerate(links) if lk.kind == "leaf-spine"]
    # swap 1: two nodes' cables exchanged at their leaf
    s1 = (node_leaf[0], node_leaf[1])
    # swap 2: two uplinks of one leaf exchanged at the spine end (different spines)
    leaf = links[leaf_spine[0]].a_device
    ups = [i for i in leaf_spine if links[i].a_device == leaf]
    other_spine = next(i for i in ups if links[i].b_device != links[ups[0]].b_device)
    s2 = (ups[0], other_spine)
    # swap 3: a node's two NIC cables exchanged at the node
    node = links[node_leaf[5]].a_device
    mine = [i for i in node_leaf if links[i].a_device == node]
    s3 = (mine[0], mine[1])
    for i, j in (s1, s2, s3):
        (a1, b1, r1), (a2, b2, r2) = edges[i], edges[j]
        if (i, j) == s3:  # exchanged at the a (node) end
            edges[i], edges[j] = (a2, b1, r1), (a1, b2, r2)
        else:
            edges[i], edges[j] = (a1, b2, r1), (a2, b1, r2)
    missing = leaf_spine[-1]
    slow = node_leaf[-1]
    a, b, _ = edges[slow]
    edges[slow] = (a, b, 200)
    last_leaves = sorted({links[i].b_device for i in node_leaf})[-2:]
    extra = (free_port(design, last_leaves[0]), free_port(design, last_leaves[1]), 400)
    truth: dict[str, object] = {
        "swaps": {frozenset((links[i].id, links[j].id)) for i, j in (s1, s2, s3)},
        "missing": links[missing].id,
        "wrong_speed": links[slow].id,
        "extra": extra,
    }
    del edges[missing]
    edges.append(extra)
    return edges, truth


# -- renderers: what the tools would print for those edges ----------------------------------------


def host(design: Design, node: str) -> str:
    index = design.node_by_id()[node].index
    return f"gpu-{index + 1:03d}.dc1.example.net"


def host_if(port: int) -> str:
    return f"ens{port + 1}f0np0"


def sonic_if(port: int) -> str:
    return f"Ethernet{8 * port}"  # one port per cage, 8 lanes per cage


def site_name_map(design: Design, path: Path) -> Path:
    data = {
        "devices": {host(design, n.id): n.id for n in design.nodes},
        "node_ports": {host_if(p): design.shape.port_name(p) for p in range(design.shape.ports)},
    }
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def render_lldp(design: Design, edges: list[Edge], folder: Path) -> None:
    """json0 files for the hosts (with MAU speed), SONiC tables for the switches."""
    folder.mkdir()
    per_device: dict[str, list[tuple[Endpoint, Endpoint, int]]] = {}
    for a, b, rate in edges:
        per_device.setdefault(a.device, []).append((a, b, rate))
        per_device.setdefault(b.device, []).append((b, a, rate))
    nodes = {n.id for n in design.nodes}
    for device in sorted({*nodes, *(s.id for s in design.switches)}):
        seen = sorted(per_device.get(device, []))
        if device in nodes:
            interfaces = []
            for local, remote, rate in seen:
                interfaces.append(
                    {
                        "name": host_if(local.port),
                        "via": "LLDP",
                        "rid": "1",
                        "age": "0 day, 01:02:03",
                        "chassis": [
                            {
                                "id": [{"type": "mac", "value": "0c:42:a1:00:00:01"}],
                                "name": [{"value": remote.device}],
                                "descr": [{"value": "SONiC Software Version: SONiC.202311"}],
                            }
                        ],
                        "port": [
                            {
                                "id": [{"type": "local", "value": f"etp{remote.port + 1}"}],
                                "descr": [{"value": ""}],
                                "ttl": [{"value": "120"}],
                                "auto-negotiation": [
                                    {
                                        "supported": False,
                                        "enabled": False,
                                        "current": [{"value": f"{rate}GbaseCR4 - copper"}],
                                    }
                                ],
                            }
                        ],
                    }
                )
            doc = {"lldp": [{"interface": interfaces}]}
            (folder / f"{host(design, device)}.json").write_text(
                json.dumps(doc, indent=2), encoding="utf-8"
            )
        else:
            rows = []
            for local, remote, _rate in seen:
                if remote.device in nodes:
                    rows.append(
                        (
                            sonic_if(local.port),
                            host(design, remote.device),
                            "b8:3f:d2:aa:bb:cc",
                            "",
                            host_if(remote.port),
                        )
                    )
                else:
                    rows.append(
                        (sonic_if(local.port), remote.device, f"etp{remote.port + 1}", "BR", "")
                    )
            (folder / f"{device}.txt").write_text(sonic_table(rows), encoding="utf-8")


def sonic_table(rows: list[tuple[str, str, str, str, str]]) -> str:
    header = ("LocalPort", "RemoteDevice", "RemotePortID", "Capability", "RemotePortDescr")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(5)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    lines = ["Capability codes: (R) Router, (B) Bridge, (O) Other", fmt.format(*header)]
    lines.append("  ".join("-" * w for w in widths))
    lines += [fmt.format(*r).rstrip() for r in rows]
    lines += ["-" * 50, f"Total entries displayed:  {len(rows)}"]
    return "\n".join(lines) + "\n"


def guid(device: str, port: int = 0) -> str:
    return f"{abs(hash((device, port))) % (1 << 48):012x}".rjust(16, "0")


IB_SPEED = {400: "4xNDR", 200: "4xHDR", 100: "4xEDR"}


def ib_name(design: Design, end: Endpoint) -> tuple[str, str, int]:
    """(node GUID name, node description, IB port number) of a design port."""
    if end.device in design.node_by_id():
        return f"H-{guid(end.device, end.port)}", f"{end.device} mlx5_{end.port}", 1
    return f"S-{guid(end.device)}", f"MF0;{end.device}:MQM9700/U1", end.port + 1


def render_ibnetdiscover(design: Design, edges: list[Edge]) -> str:
    ends: dict[str, list[tuple[int, Endpoint, Endpoint, int]]] = {}
    for a, b, rate in edges:
        for x, y in ((a, b), (b, a)):
            gname, _desc, port = ib_name(design, x)
            ends.setdefault(gname, []).append((port, x, y, rate))
    out = ["#", "# Topology file: generated on Mon Jun  2 10:00:00 2025", "#"]
    out.append(f"# Initiated from node {guid('sm')} port {guid('sm')}")
    for gname in sorted(ends):
        rows = sorted(ends[gname])
        _p, first, _y, _r = rows[0]
        _g, desc, _port = ib_name(design, first)
        if gname.startswith("S-"):
            out += ["", "vendid=0x2c9", "devid=0xd2f0", f"sysimgguid=0x{gname[2:]}"]
            out.append(f"switchguid=0x{gname[2:]}({gname[2:]})")
            out.append(f'Switch\t65 "{gname}"\t\t# "{desc}" enhanced port 0 lid 1 lmc 0')
            for port, _x, y, rate in rows:
                rg, rdesc, rport = ib_name(design, y)
                tail = f"({rg[2:]}) " if rg.startswith("H-") else ""
                out.append(f'[{port}]\t"{rg}"[{rport}]{tail}\t\t# "{rdesc}" lid 7 {IB_SPEED[rate]}')
        else:
            out += ["", "vendid=0x2c9", "devid=0x1021", f"sysimgguid=0x{gname[2:]}"]
            out.append(f"caguid=0x{gname[2:]}")
            out.append(f'Ca\t1 "{gname}"\t\t# "{desc}"')
            for port, _x, y, rate in rows:
                rg, rdesc, rport = ib_name(design, y)
                out.append(
                    f'[{port}]({gname[2:]}) \t"{rg}"[{rport}]\t\t# lid 9 lmc 0 "{rdesc}" lid 1 '
                    f"{IB_SPEED[rate]}"
                )
    return "\n".join(out) + "\n"


def render_iblinkinfo(design: Design, edges: list[Edge]) -> str:
    lane = {400: "106.25", 200: "53.125", 100: "25.78125"}
    ends: dict[str, list[tuple[int, Endpoint, Endpoint, int]]] = {}
    for a, b, rate in edges:
        for x, y in ((a, b), (b, a)):
            gname, _d, port = ib_name(design, x)
            ends.setdefault(gname, []).append((port, x, y, rate))
    out = []
    for gname in sorted(ends):
        rows = sorted(ends[gname])
        _g, desc, _p = ib_name(design, rows[0][1])
        if gname.startswith("S-"):
            out.append(f"Switch: 0x{gname[2:]} {desc}:")
        else:
            out.append(f"CA: {desc}:")
        for port, _x, y, rate in rows:
            _rg, rdesc, rport = ib_name(design, y)
            link = f"( 4X {lane[rate] + ' Gbps':>18s} Active/  LinkUp)"
            prefix = "      " if gname.startswith("S-") else f"      0x{gname[2:]} "
            out.append(
                f'{prefix}     1 {port:4d}[  ] =={link}==>       7 {rport:4d}[  ] "{rdesc}" ( )'
            )
        if gname.startswith("S-"):
            out.append(
                '           1   64[  ] ==(                Down/ Polling)==>             [  ] "" ( )'
            )
    return "\n".join(out) + "\n"


# -- the acceptance checks ----------------------------------------------------------------------


def assert_six(report: railplan.field.asbuilt.AsBuiltReport, design: Design, truth: dict) -> None:
    kinds = sorted(f.kind for f in report.findings)
    assert kinds == ["missing", "swap", "swap", "swap", "unexpected", "wrong_speed"], (
        report.summary_rows()
    )
    labels = {c.link_id: c.label for c in report.links}
    swaps = {frozenset(f.links) for f in report.findings if f.kind == "swap"}
    assert swaps == truth["swaps"]
    for f in report.findings:
        if f.kind == "swap":
            assert set(f.labels) == {labels[i] for i in f.links}
            assert all(label in f.message for label in f.labels)
    (missing,) = [f for f in report.findings if f.kind == "missing"]
    assert missing.links == (truth["missing"],)
    assert labels[truth["missing"]] in missing.message
    (slow,) = [f for f in report.findings if f.kind == "wrong_speed"]
    assert slow.links == (truth["wrong_speed"],)
    assert "200G" in slow.message and labels[truth["wrong_speed"]] in slow.message
    (extra,) = report.unexpected
    names = NameMap(design)
    ea, eb, _ = truth["extra"]
    assert {extra.a, extra.b} == {names.display(ea), names.display(eb)}
    counts = report.counts()
    assert counts["swapped"] == 6 and counts["missing"] == 1 and counts["wrong_speed"] == 1
    assert counts["miswired"] == 0 and counts["unverified"] == 0
    assert counts["ok"] == len(design.links) - 8
    doc = report.to_json()
    json.dumps(doc)  # serialisable
    assert doc["counts"] == counts and len(doc["findings"]) == 6
    assert len(report.summary_rows()) == 6
    md = report_markdown(report)
    assert "FAIL" in md and all(label in md for f in report.findings for label in f.labels)


@pytest.mark.parametrize("cabled", [False, True], ids=["link-ids", "cable-labels"])
def test_lldp_six_faults_reported_nothing_else(
    eth_design: Design, tmp_path: Path, cabled: bool
) -> None:
    design = with_cables(eth_design) if cabled else eth_design
    edges, truth = six_faults(design)
    render_lldp(design, edges, tmp_path / "lldp")
    names = site_name_map(design, tmp_path / "names.json")
    report = check_asbuilt(design, lldp=[tmp_path / "lldp"], names=names)
    assert report.warnings == ()
    assert_six(report, design, truth)
    if cabled:
        assert all(f.labels[0].startswith("CB-") for f in report.findings if f.links)
    else:
        assert all(f.labels == f.links for f in report.findings)


@pytest.mark.parametrize("cabled", [False, True], ids=["link-ids", "cable-labels"])
def test_ibnetdiscover_six_faults_reported_nothing_else(
    ib_design: Design, tmp_path: Path, cabled: bool
) -> None:
    design = with_cables(ib_design) if cabled else ib_design
    edges, truth = six_faults(design)
    path = tmp_path / "fabric.topo"
    path.write_text(render_ibnetdiscover(design, edges), encoding="utf-8")
    report = check_asbuilt(design, ibnetdiscover=path)
    assert_six(report, design, truth)


def test_iblinkinfo_six_faults_reported_nothing_else(ib_design: Design, tmp_path: Path) -> None:
    edges, truth = six_faults(ib_design)
    path = tmp_path / "iblinkinfo.txt"
    path.write_text(render_iblinkinfo(ib_design, edges), encoding="utf-8")
    report = check_asbuilt(ib_design, iblinkinfo=path)
    assert_six(report, ib_design, truth)


def test_clean_fabric_is_all_ok(eth_design: Design, ib_design: Design, tmp_path: Path) -> None:
    render_lldp(eth_design, planned_edges(eth_design), tmp_path / "lldp")
    names = site_name_map(eth_design, tmp_path / "names.json")
    report = check_asbuilt(eth_design, lldp=[tmp_path / "lldp"], names=names)
    assert report.ok and report.counts()["ok"] == len(eth_design.links)
    topo = tmp_path / "ib.topo"
    topo.write_text(render_ibnetdiscover(ib_design, planned_edges(ib_design)), encoding="utf-8")
    assert check_asbuilt(ib_design, ibnetdiscover=topo).ok


def test_host_lldp_only_leaves_uplinks_unverified(eth_design: Design, tmp_path: Path) -> None:
    render_lldp(eth_design, planned_edges(eth_design), tmp_path / "lldp")
    for file in (tmp_path / "lldp").glob("p0-*.txt"):
        file.unlink()
    names = site_name_map(eth_design, tmp_path / "names.json")
    report = check_asbuilt(eth_design, lldp=[tmp_path / "lldp"], names=names)
    counts = report.counts()
    assert report.ok
    assert counts["unverified"] == eth_design.link_counts()["leaf_spine"]
    assert counts["ok"] == eth_design.link_counts()["node_leaf"]


def test_unknown_lldp_device_is_a_warning_not_a_finding(eth_design: Design, tmp_path: Path) -> None:
    render_lldp(eth_design, planned_edges(eth_design), tmp_path / "lldp")
    report = check_asbuilt(eth_design, lldp=[tmp_path / "lldp"])  # no name map: hosts unknown
    assert len(report.warnings) == len(eth_design.nodes)
    assert "name map" in report.warnings[0]
    # the switches' tables still name the hosts by their site names: every node link miswired
    assert report.counts()["miswired"] == eth_design.link_counts()["node_leaf"]


def test_inputs_are_required_and_must_exist(eth_design: Design, tmp_path: Path) -> None:
    with pytest.raises(FieldInputError, match="at least one"):
        check_asbuilt(eth_design)
    with pytest.raises(FieldInputError, match="does not exist"):
        check_asbuilt(eth_design, lldp=[tmp_path / "nope"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(FieldInputError, match="holds no files"):
        check_asbuilt(eth_design, lldp=[tmp_path / "empty"])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("devices: [1, 2]", "devices"),
        ("devices:\n  a: nosuchdevice\n", "not a node, switch or attached device"),
        ("colour: blue\n", "unknown key"),
        ("devices: {a: b\n", "not valid YAML"),
        ("- 1\n- 2\n", "must be a mapping"),
    ],
)
def test_bad_name_maps_are_clear_errors(
    eth_design: Design, tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "names.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(FieldInputError, match=message) as info:
        NameMap.load(eth_design, path)
    assert "names.yaml" in str(info.value)


def test_name_defaults_understand_site_spellings(ib_design: Design) -> None:
    names = NameMap(ib_design)
    leaf = "p0-leaf-su01-r0"
    assert names.device("node0003.cluster.local") == "node0003"
    assert names.device("node0003 mlx5_1") == "node0003"
    assert names.device(f"MF0;{leaf}:MQM9700/U1") == leaf
    assert names.device("nobody") is None
    assert names.port("node0003", "mlx5_1") == 1
    assert names.port("node0003", "nic1") == 1
    assert names.port("node0003", "mlx5_7") is None  # only 2 NIC ports
    # 64 logical ports on 32 twin cages
    assert names.port(leaf, "P1/1") == 0
    assert names.port(leaf, "P9/2") == 17
    assert names.port(leaf, "18") == 17
    assert names.port(leaf, "swp9s1") == 17
    assert names.port(leaf, "etp9b") == 17
    assert names.port(leaf, "Ethernet68") == 17  # 8 lanes per cage, 4 per port
    assert names.port(leaf, "Ethernet9/5") == 17
    assert names.port(leaf, "Eth1/9/2") == 17
    assert names.port(leaf, "Ethernet66") is None  # not a port's first lane
    assert names.port(leaf, "P33/1") is None
    assert names.port(leaf, "65") is None
