"""Grading results folders and diagnosing node versus fabric faults."""

from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path

import pytest

import railplan
from railplan.design import Design
from railplan.field import Expectation, FieldInputError, load_expectations
from railplan.field.diagnose import PairResult, diagnose, link_sets
from railplan.field.grade import _pinned_ports, grade
from railplan.render.field_report import report_markdown
from railplan.testplan import expectations as expectations_from_plan
from tests.test_topo import topo_text

# -- synthetic tool outputs -----------------------------------------------------------------------


def nccl_text(hosts: list[str], busbw: float, wrong: int = 0, op: str = "all_reduce_perf") -> str:
    lines = [
        "# nccl-tests version 2.16.4 nccl-headers=22703 nccl-library=22703",
        f"# Collective test starting: {op}",
        "# nThread 1 nGpus 1 minBytes 1073741824 maxBytes 8589934592 step: 2(factor) warmup "
        "iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0",
        "#",
        "# Using devices",
    ]
    rank = 0
    for host in hosts:
        for gpu in range(8):
            lines.append(
                f"#  Rank {rank:2d} Group  0 Pid  {41000 + rank:5d} on {host:>10s} device "
                f"{gpu:2d} [0000:{0x18 + gpu:02x}:00] NVIDIA H100 80GB HBM3"
            )
            rank += 1
    lines += [
        "#",
        "#                                                              out-of-place"
        "                       in-place          ",
        "#       size         count      type   redop    root     time   algbw   busbw #wrong"
        "     time   algbw   busbw #wrong",
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)     "
        "       (us)  (GB/s)  (GB/s)       ",
    ]
    for i, size in enumerate((1 << 30, 1 << 31, 1 << 32, 1 << 33)):
        bw = busbw * (0.9 + 0.1 * i / 3)
        alg = bw / 1.875
        t = size / (alg * 1e3)
        w = wrong if i == 3 else 0
        lines.append(
            f"  {size:10d}  {size // 4:12d}     float     sum      -1  {t:7.1f}  {alg:6.2f}  "
            f"{bw:6.2f}  {w:5d}  {t:7.1f}  {alg:6.2f}  {bw:6.2f}  {w:5d}"
        )
    lines += [
        f"# Out of bounds values : {wrong} {'FAILED' if wrong else 'OK'}",
        f"# Avg bus bandwidth    : {busbw * 0.95:.4f} ",
        "#",
        f"# Collective test concluded: {op}",
        "",
    ]
    return "\n".join(lines)


def lspci(acs_on: bool, nics: int = 8, narrow_nic: int | None = None) -> str:
    """PEX switch bridges with ACS, then the NICs (Gen5 x16; ``narrow_nic`` trained at x8) and
    the GPUs (idle: their link speed down at 2.5GT/s, width x16, as H100s report it)."""
    flag = "+" if acs_on else "-"
    out = []
    for bus in ("15:01.0", "15:02.0", "48:01.0"):
        out += [
            f"0000:{bus} PCI bridge: Broadcom / LSI PEX890xx PCIe Gen 5 Switch (rev b0) "
            "(prog-if 00 [Normal decode])",
            "\tCapabilities: [2a0 v1] Access Control Services",
            "\t\tACSCap:\tSrcValid+ TransBlk+ ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- "
            "DirectTrans+",
            f"\t\tACSCtl:\tSrcValid{flag} TransBlk- ReqRedir{flag} CmpltRedir{flag} "
            f"UpstreamFwd{flag} EgressCtrl- DirectTrans-",
        ]
    for k in range(nics):
        width = "x8 (downgraded)" if k == narrow_nic else "x16"
        out += [
            f"0000:{0x18 + k:02x}:00.0 Infiniband controller: Mellanox Technologies MT2910 Family "
            "[ConnectX-7]",
            "\t\tLnkCap:\tPort #0, Speed 32GT/s, Width x16, ASPM not supported",
            f"\t\tLnkSta:\tSpeed 32GT/s, Width {width}",
            f"0000:{0x98 + k:02x}:00.0 3D controller: NVIDIA Corporation GH100 [H100 SXM5 80GB]",
            "\t\tLnkCap:\tPort #0, Speed 32GT/s, Width x16, ASPM not supported",
            "\t\tLnkSta:\tSpeed 2.5GT/s (downgraded), Width x16",
        ]
    return "\n".join(out) + "\n"


LSMOD = """Module                  Size  Used by
nvidia_peermem         16384  0
nvidia_uvm           1531904  4
nvidia              54579200  209 nvidia_uvm,nvidia_peermem,nvidia_modeset
ib_core               520192  9 rdma_cm,ib_ipoib,nvidia_peermem,iw_cm,ib_umad,rdma_ucm,ib_uverbs,mlx5_ib,ib_cm
"""


def ibstat(ports: int, rate: int = 400) -> str:
    out = []
    for p in range(ports):
        out += [
            f"CA 'mlx5_{p}'",
            "\tCA type: MT4129",
            "\tNumber of ports: 1",
            "\tFirmware version: 28.39.1002",
            "\tHardware version: 0",
            f"\tNode GUID: 0xa088c20300f4e0{p:02x}",
            f"\tSystem image GUID: 0xa088c20300f4e0{p:02x}",
            "\tPort 1:",
            "\t\tState: Active",
            "\t\tPhysical state: LinkUp",
            f"\t\tRate: {rate}",
            "\t\tBase lid: 0",
            "\t\tLMC: 0",
            "\t\tSM lid: 0",
            "\t\tCapability mask: 0x00010000",
            f"\t\tPort GUID: 0xa288c2fffef4e0{p:02x}",
            "\t\tLink layer: Ethernet",
        ]
    return "\n".join(out) + "\n"


# -- the scenario ---------------------------------------------------------------------------------

BUSBW = 45.0  # GB/s a healthy pair reaches in this synthetic cluster


def small_roft(policy: str) -> Design:
    spec = {
        "name": f"grade-{policy}",
        "cluster": {"gpus": 224, "gpus_per_node": 8, "nics_per_node": 2, "port_speed_gbps": 400},
        "fabric": {"switches": ["cx732q-n"], "routing": {"policy": policy}},
    }
    return railplan.plan(railplan.spec_from_dict(spec))


@pytest.fixture(scope="module", params=["dmodk", "ecmp"])
def design(request: pytest.FixtureRequest) -> Design:
    return small_roft(request.param)


def pair_plan(design: Design) -> list[tuple[str, str]]:
    """Each node with its neighbour (same SU) and the node half the cluster away (other SU)."""
    ids = [n.id for n in design.nodes]
    n = len(ids)
    pairs = {tuple(sorted((ids[i], ids[(i + k) % n]))) for i in range(n) for k in (1, n // 2)}
    return sorted(pairs)  # type: ignore[arg-type]


def pick_bad_link(design: Design, pairs: list[tuple[str, str]], avoid: str) -> str:
    """A leaf-spine link that some pairs (not with ``avoid``) may cross: the fewest, at least 1."""
    use: dict[str, int] = {}
    for u, v in pairs:
        if avoid in (u, v):
            continue
        for link in link_sets(design, u, v)[1]:
            use[link] = use.get(link, 0) + 1
    spine = [lk.id for lk in design.links if lk.kind == "leaf-spine" and use.get(lk.id)]
    return min(spine, key=lambda k: (use[k], k))


def build_results(
    design: Design, folder: Path, slow_node: str, bad_link: str
) -> tuple[list[Expectation], set[str]]:
    """Expectations and a results folder; returns the test ids that must fail."""
    pairs = pair_plan(design)
    exps: list[Expectation] = []
    must_fail: set[str] = set()
    for i, (u, v) in enumerate(pairs, 1):
        tid = f"PAIR-{i:04d}"
        exps.append(
            Expectation(tid, "pair", (u, v), "busbw_gbs", BUSBW, 0.9 * BUSBW, "GB/s", "higher")
        )
        slow = slow_node in (u, v) or bad_link in link_sets(design, u, v)[1]
        if slow:
            must_fail.add(tid)
        (folder / f"{tid}.txt").write_text(nccl_text([u, v], BUSBW * (0.52 if slow else 1.02)))
    ports = design.shape.ports
    for node in design.nodes:
        tid = f"NODE-{node.id}"
        sub = folder / tid
        sub.mkdir()
        (sub / "lspci.txt").write_text(lspci(acs_on=node.id == slow_node))
        (sub / "lsmod.txt").write_text(LSMOD)
        (sub / "ibstat.txt").write_text(ibstat(ports))
        exps += [
            Expectation(tid, "node", (node.id,), "acs_srcvalid_on", 0, 0, "devices", "lower"),
            Expectation(tid, "node", (node.id,), "nvidia_peermem", 1, 1, "loaded", "higher"),
            Expectation(tid, "node", (node.id,), "ports_active", ports, ports, "ports", "equal"),
            Expectation(tid, "node", (node.id,), "ports_at_rate", ports, ports, "ports", "equal"),
        ]
        if node.id == slow_node:
            must_fail.add(tid)
    return exps, must_fail


def test_slow_node_and_bad_spine_link(design: Design, tmp_path: Path) -> None:
    """Acceptance: the node is a node fault, the link a fabric suspect, all else passes."""
    slow_node = design.nodes[4].id
    pairs = pair_plan(design)
    bad = pick_bad_link(design, pairs, avoid=slow_node)
    exps, must_fail = build_results(design, tmp_path, slow_node, bad)
    report = grade(design, exps, tmp_path)
    failed_ids = {r.test_id for r in report.results if r.status == "fail"}
    assert failed_ids == must_fail
    assert all(r.status == "pass" for r in report.results if r.test_id not in must_fail)
    (acs,) = [r for r in report.results if r.test_id == f"NODE-{slow_node}" and r.status == "fail"]
    assert acs.metric == "acs_srcvalid_on" and acs.measured == 3
    diag = report.diagnosis
    assert diag.fault_nodes == (slow_node,)
    assert "ACS" in diag.node_faults[0].message
    suspects = [s.link_id for s in diag.suspects]
    assert bad in suspects
    assert all(s.startswith("LS") for s in suspects)  # leaf-spine only: node cables cleared
    if design.routing.policy == "dmodk":
        assert len(suspects) <= 4  # static routes pin the fault down
    assert diag.next_tests
    doc = report.to_json()
    json.dumps(doc)
    assert doc["diagnosis"]["node_faults"][0]["node"] == slow_node
    md = report_markdown(report)
    assert "## Diagnosis" in md and slow_node in md and bad in md
    assert report.counts()["fail"] == len(report.failed())


def test_node_fault_without_node_checks_is_found_from_partners(design: Design) -> None:
    slow_node = design.nodes[4].id
    pairs = pair_plan(design)
    results = [PairResult(f"P{i}", (u, v), slow_node in (u, v)) for i, (u, v) in enumerate(pairs)]
    diag = diagnose(design, results)
    assert diag.fault_nodes == (slow_node,)
    assert diag.suspects == ()


def test_partner_of_a_faulty_node_is_not_blamed(design: Design) -> None:
    """A healthy node slow only with the faulty node and across the bad link stays innocent."""
    ids = [n.id for n in design.nodes]
    bad_node, victim, same_su, far = ids[0], ids[1], ids[2], ids[20]
    bad_link = pick_bad_link(design, [(victim, far)], avoid=bad_node)
    results = [
        PairResult("a", (bad_node, victim), True),
        PairResult("b", (bad_node, same_su), True),
        PairResult("c", (victim, far), True),
        PairResult("d", (same_su, ids[3]), False),
        PairResult("e", (far, ids[21]), False),
    ]
    diag = diagnose(design, results)
    assert diag.fault_nodes == (bad_node,)
    assert victim not in {f.node for f in diag.node_faults}
    assert bad_link in [s.link_id for s in diag.suspects]


def test_missing_error_and_unmatched_files(design: Design, tmp_path: Path) -> None:
    u, v = design.nodes[0].id, design.nodes[1].id
    exps = [
        Expectation("A", "pair", (u, v), "busbw_gbs", 45, 40, "GB/s"),
        Expectation("B", "pair", (u, v), "busbw_gbs", 45, 40, "GB/s"),
        Expectation("C", "rdma_bw", (u, v), "bw_avg_gbps", 392, 372, "Gbps"),
    ]
    (tmp_path / "A.txt").write_text(nccl_text([u, v], 46.0))
    text = nccl_text([u, v], 46.0).replace("  8589934592  ", "  8589934592x ")
    (tmp_path / "C.txt").write_text(text)
    (tmp_path / "notes.txt").write_text("hello")
    report = grade(design, exps, tmp_path)
    status = {r.test_id: r.status for r in report.results}
    assert status == {"A": "pass", "B": "missing", "C": "error"}
    (err,) = [r for r in report.results if r.test_id == "C"]
    assert "C.txt" in err.detail
    assert report.unmatched == ("notes.txt",)
    assert not report.ok


def test_units_convert_and_wrong_values_fail(design: Design, tmp_path: Path) -> None:
    u, v = design.nodes[0].id, design.nodes[1].id
    exps = [
        Expectation("G", "pair", (u, v), "busbw_gbs", 360, 330, "Gb/s"),
        Expectation("W", "pair", (u, v), "busbw_gbs", 45, 40, "GB/s"),
    ]
    (tmp_path / "G.txt").write_text(nccl_text([u, v], 45.0))  # 45 GB/s = 360 Gb/s
    (tmp_path / "W.txt").write_text(nccl_text([u, v], 46.0, wrong=3))
    report = grade(design, exps, tmp_path)
    g, w = report.results
    assert g.status == "pass" and g.unit == "Gb/s" and g.measured == pytest.approx(360, rel=1e-3)
    assert w.status == "fail" and "wrong" in w.detail


def test_manifest_supplies_files_and_expectations(design: Design, tmp_path: Path) -> None:
    u, v = design.nodes[0].id, design.nodes[1].id
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "run7.out").write_text(nccl_text([u, v], 46.0))
    manifest = {
        "files": {"PAIR-1": "logs/run7.out"},
        "expectations": [
            {
                "test_id": "PAIR-1",
                "kind": "pair",
                "nodes": [u, v],
                "metric": "busbw_gbytes",
                "expected": 45,
                "threshold": 40.5,
                "unit": "GB/s",
            }
        ],
    }
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    report = grade(design, None, tmp_path)
    assert [r.status for r in report.results] == ["pass"]
    plan = tmp_path / "plan.yaml"
    plan.write_text("expectations:\n  - {id: X, metric: bw_avg_gbps, expected: 1, threshold: 1}\n")
    assert load_expectations(plan)[0].test_id == "X"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"metric": "flux"}, "not one railplan grades"),
        ({"unit": "us"}, "does not fit"),
        ({"threshold": float("nan")}, "finite"),
        ({"better": "more"}, "better must be"),
        ({"test_id": " "}, "empty test_id"),
    ],
)
def test_bad_expectations_are_refused(kwargs: dict[str, object], message: str) -> None:
    base: dict[str, object] = {
        "test_id": "T",
        "kind": "pair",
        "nodes": ("a", "b"),
        "metric": "busbw_gbs",
        "expected": 1.0,
        "threshold": 1.0,
        "unit": "GB/s",
    }
    base.update(kwargs)
    with pytest.raises(FieldInputError, match=message):
        Expectation(**base)  # type: ignore[arg-type]


def test_results_folder_must_exist(design: Design, tmp_path: Path) -> None:
    with pytest.raises(FieldInputError, match="does not exist"):
        grade(design, [], tmp_path / "nope")
    report = grade(design, None, tmp_path)  # the design's default test plan
    assert report.results and {r.status for r in report.results} == {"missing"}


def test_testplan_expectations_are_accepted(tmp_path: Path) -> None:
    """The test plan's own checks convert to expectations and grade (compatibility)."""
    testplan = pytest.importorskip("railplan.testplan")

    design = small_roft("dmodk")
    try:
        plan = testplan.build_testplan(design, railplan.load_catalog())
    except TypeError:  # pragma: no cover - the plan API moved
        pytest.skip("railplan.testplan.build_testplan signature changed")
    exps = expectations_from_plan(plan)
    assert exps
    nodes = [e for e in exps if e.kind == "node"]
    node = nodes[0].nodes[0]
    sub = tmp_path / f"NODE-{node}"
    sub.mkdir()
    (sub / "lspci.txt").write_text(lspci(False))
    (sub / "lsmod.txt").write_text(LSMOD)
    (sub / "ibstat.txt").write_text(ibstat(design.shape.ports))
    (sub / "ibv_devinfo.txt").write_text(
        "".join(
            f"hca_id:\tmlx5_{p}\n\ttransport:\t\t\tInfiniBand (0)\n\t\tport:\t1\n"
            f"\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\t\tmax_mtu:\t\t4096 (5)\n"
            f"\t\t\tactive_mtu:\t\t4096 (5)\n"
            for p in range(design.shape.ports)
        )
    )
    report = grade(design, exps, tmp_path)
    mine = {r.metric: r.status for r in report.results if r.test_id == f"NODE-{node}"}
    assert mine["acs_srcvalid_on"] == "pass"
    assert mine["nvidia_peermem"] == "pass"
    assert mine["ports_active"] == "pass"
    assert mine["ports_mtu"] == "pass"
    assert mine["pfc_lossless"] == "missing"  # no roce.txt collected
    assert {r.status for r in report.results if r.test_id != f"NODE-{node}"} <= {
        "missing",
        "skipped",
    }


def test_pairs_of_every_kind_route(design: Design) -> None:
    """link_sets covers both directions and every rail; same-leaf pairs cross no spine link."""
    ids = [n.id for n in design.nodes]
    must, may = link_sets(design, ids[0], ids[1])
    assert must == may and not any(k.startswith("LS") for k in may)
    assert len(may) == 2 * design.shape.ports
    for u, v in combinations(ids[:3] + ids[-2:], 2):
        must, may = link_sets(design, u, v)
        assert must <= may


# -- end to end: the test plan's own ids, in the layout its scripts write -------------------------


def perftest_bw(gbps: float) -> str:
    return (
        "---------------------------------------------------------------------------------------\n"
        "                    RDMA_Write BW Test\n"
        " Dual-port       : OFF\t\tDevice         : mlx5_0\n"
        " Link type       : Ethernet\n"
        " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
        f" 65536      214020           {gbps + 0.4:.2f}             {gbps:.2f}  \t\t   0.747603\n"
    )


def perftest_lat(us: float) -> str:
    return (
        "                    RDMA_Write Latency Test\n"
        " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "
        "t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec]\n"
        f" 2       10000          {us - 0.1:.2f}           9.87         {us:.2f}     \t       "
        f"{us + 0.02:.2f}        \t0.07   \t\t{us + 0.2:.2f}    \t\t9.87\n"
    )


GDR_LINES = "\n".join(
    f"{h}:100:200 [0] NCCL INFO Channel 00/0 : 7[7] -> 8[0] [send] via NET/IB/{i}/GDRDMA"
    for i, h in enumerate(("node0001", "node0002"))
)


def expectations_from_plan_test(test: object) -> Expectation:
    class One:
        def tests(self) -> list[object]:
            return [test]

    return expectations_from_plan(One())[0]


def scripted_results(design: Design, folder: Path, slow_node: str, bad_link: str) -> set[str]:
    """Every output the generated scripts collect; returns the test ids that must fail."""
    testplan = pytest.importorskip("railplan.testplan")
    from tests.test_asbuilt import planned_edges, render_lldp, site_name_map

    plan = testplan.build_testplan(design, railplan.load_catalog())
    must_fail: set[str] = set()
    ports = design.shape.ports
    link_port = {lk.id: (lk.a_device, lk.a_port) for lk in design.links if lk.kind == "node-leaf"}
    for test in plan.tests():
        nodes = tuple(test.nodes)
        check = test.checks[0]
        if test.kind == "node":
            sub = folder / test.id
            sub.mkdir()
            (sub / "lspci.txt").write_text(lspci(acs_on=nodes[0] == slow_node))
            (sub / "lsmod.txt").write_text(LSMOD)
            (sub / "ibstat.txt").write_text(ibstat(ports))
            (sub / "ibv_devinfo.txt").write_text(
                "".join(
                    f"hca_id:\tmlx5_{p}\n\t\tport:\t1\n\t\t\tactive_mtu:\t\t4096 (5)\n"
                    for p in range(ports)
                )
            )
            (sub / "roce.txt").write_text(
                "".join(
                    f"mlx5_{p} netdev=ens{p}np0 gid3=RoCE v2 pfc=1 ecn=1\n" for p in range(ports)
                )
            )
            (sub / "topo.txt").write_text(topo_text(design.shape.gpus, ports))
            (sub / "ssh.err").write_text("")
            if nodes[0] == slow_node:
                must_fail.add(test.id)
        elif test.kind in ("rdma_bw", "rdma_lat"):
            if test.kind == "rdma_bw":
                exp = expectations_from_plan_test(test)
                pinned = _pinned_ports(exp, link_port, {})
                slow = bad_link in link_sets(design, nodes[0], nodes[1], pinned)[1]
                if slow:
                    must_fail.add(test.id)
                text = perftest_bw(check.expected * (0.5 if slow else 1.01))
            else:
                text = perftest_lat(check.threshold * 0.9)
            (folder / f"{test.id}.txt").write_text(text)
            (folder / "servers").mkdir(exist_ok=True)
            (folder / "servers" / f"{test.id}.log").write_text(text)
        elif test.kind == "cabling":
            continue
        elif test.kind == "linkq":
            from tests.test_linkq import write_linkq_results

            write_linkq_results(design, test, folder)
        elif test.kind == "firmware":
            from tests.test_firmware_modules import write_firmware_results

            write_firmware_results(design, test, folder)
        else:  # pair tests and NCCL collectives
            crosses = len(nodes) == 2 and bad_link in link_sets(design, nodes[0], nodes[1])[1]
            slow = slow_node in nodes or crosses
            if slow and len(nodes) == 2:
                must_fail.add(test.id)
            if slow and len(nodes) > 2:
                must_fail.add(test.id)  # a collective with the slow node is slow too
            busbw = check.expected * (0.5 if slow else 1.01)
            sub = folder / test.id
            sub.mkdir()
            op = "alltoall_perf" if "alltoall" in test.kind else "all_reduce_perf"
            (sub / "nccl.log").write_text(GDR_LINES + "\n" + nccl_text(list(nodes), busbw, op=op))
    # as-built: LLDP from every host and switch, named as the cabling script names them
    render_lldp(design, planned_edges(design), folder / "lldp")
    site_name_map(design, folder / "names.json")
    hosts, switches = folder / "asbuilt" / "hosts", folder / "asbuilt" / "switches"
    hosts.mkdir(parents=True)
    switches.mkdir()
    files: dict[str, list[str]] = {}
    by_host = {f"gpu-{n.index + 1:03d}.dc1.example.net": n.id for n in design.nodes}
    for path in (folder / "lldp").iterdir():
        if path.suffix == ".json":
            path.rename(hosts / f"{by_host[path.stem]}.json")
        else:
            path.rename(switches / path.name)
    (folder / "lldp").rmdir()
    for test in plan.tests():
        if test.kind == "cabling":
            sw = test.id[4:]
            on = sorted(
                {lk.a_device for lk in design.links if lk.b_device == sw and lk.kind == "node-leaf"}
            )
            files[test.id] = [f"asbuilt/switches/{sw}.txt"] + [
                f"asbuilt/hosts/{h}.json" for h in on
            ]
    (folder / "manifest.json").write_text(json.dumps({"files": files}))
    (folder / "summary").mkdir()
    (folder / "summary" / "verdicts.txt").write_text("PAIR-0001 OK\n")
    return must_fail


def test_graded_in_the_scripts_layout_with_the_default_plan(tmp_path: Path) -> None:
    design = small_roft("dmodk")
    slow_node = design.nodes[4].id
    testplan = pytest.importorskip("railplan.testplan")
    plan = testplan.build_testplan(design, railplan.load_catalog())
    pairs = [(t.nodes[0], t.nodes[1]) for t in plan.tests() if t.kind == "pair"]
    bad = pick_bad_link(design, pairs, avoid=slow_node)
    must_fail = scripted_results(design, tmp_path, slow_node, bad)
    report = grade(design, None, tmp_path)  # expectations: the design's default test plan
    by_status: dict[str, set[str]] = {}
    for r in report.results:
        by_status.setdefault(r.status, set()).add(r.test_id)
    assert set(by_status) <= {"pass", "fail"}, {k: sorted(v)[:3] for k, v in by_status.items()}
    assert by_status["fail"] == must_fail
    assert any(t.startswith("CAB-") for t in by_status["pass"])
    assert report.diagnosis.fault_nodes == (slow_node,)
    if any(bad in link_sets(design, *p)[1] for p in pairs if slow_node not in p):
        assert bad in [s.link_id for s in report.diagnosis.suspects]
    assert report.unmatched == ()


@pytest.mark.parametrize(
    ("topology", "nics", "ports_per_nic", "speed", "gpus"),
    [("matrix", 4, 2, 200, 512), ("fat-tree", 4, 1, 400, 256), ("roft", 2, 1, 400, 256)],
)
def test_bad_inter_switch_link_is_a_suspect_on_every_family(
    topology: str, nics: int, ports_per_nic: int, speed: int, gpus: int
) -> None:
    spec = {
        "name": topology,
        "cluster": {
            "gpus": gpus,
            "gpus_per_node": 8,
            "nics_per_node": nics,
            "ports_per_nic": ports_per_nic,
            "port_speed_gbps": speed,
        },
        "fabric": {"topology": topology, "switches": ["cx732q-n"]},
    }
    design = railplan.plan(railplan.spec_from_dict(spec))
    ids = [n.id for n in design.nodes]
    pairs = [(ids[i], ids[j]) for i in range(len(ids)) for j in range(i + 1, len(ids))][::7][:150]
    crossed = {k for p in pairs for k in link_sets(design, *p)[1] if not k.startswith("NL")}
    bad = sorted(crossed)[len(crossed) // 2]
    results = [PairResult(f"P{i}", p, bad in link_sets(design, *p)[1]) for i, p in enumerate(pairs)]
    diag = diagnose(design, results)
    assert diag.fault_nodes == ()
    assert bad in [s.link_id for s in diag.suspects]
    assert diag.next_tests
