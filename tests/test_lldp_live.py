"""The as-built check against real lldpd: one network namespace per device, veth pairs as cables.

A 64-GPU ROFT (8 nodes x 8 rails on 32-port leaves, 12 switches, 192 links) is built as network
namespaces, one per device, with a veth pair per planned link named as the plan's ports; Debian's
lldpd runs in every namespace (its own control socket, ``tx-interval 1``) and each device's
``lldpcli -f json show neighbors details`` is the capture. The healthy capture gives 0 findings;
then a swap, a move to a free port, a removal and a foreign device are cabled at once and
``railplan asbuilt`` must name exactly those four faults. A veth reports the kernel's fixed
10GbaseT link settings, so every link is also a wrong-speed finding at 10G: the test asserts
that finding (the simulator's limit) and nothing else on the healthy capture. Interfaces carry only the IPv6
link-local address the kernel gives them. Everything (lldpd processes, namespaces) is removed
afterwards, also on failure. Skipped where lldpd, root or ``ip netns`` is missing.

Linux interface names are at most 15 bytes with no ``/``: a design port keeps its name
(``nic3``, ``nic1.p2``, ``P17``) except a cage lane ``P9/2``, which becomes the Cumulus name
``swp9s1`` (cage 9, lane 2, split numbers from 0) that railplan's name mapping reads back.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest

from railplan.design import Design, design_to_json
from railplan.field.asbuilt import check_asbuilt
from railplan.field.names import Endpoint, NameMap
from tests.test_asbuilt import roft

LLDPD = shutil.which("lldpd") or ("/usr/sbin/lldpd" if Path("/usr/sbin/lldpd").exists() else None)
LLDPCLI = shutil.which("lldpcli") or (
    "/usr/sbin/lldpcli" if Path("/usr/sbin/lldpcli").exists() else None
)
IFNAME_MAX = 15  # IFNAMSIZ - 1 (include/uapi/linux/if.h)
_CAGE_LANE = re.compile(r"^P(\d+)/(\d+)$")


def ifname(port: str) -> str:
    """The Linux interface name of a design port (see the module docstring)."""
    m = _CAGE_LANE.match(port)
    name = f"swp{m.group(1)}s{int(m.group(2)) - 1}" if m else port
    if len(name) > IFNAME_MAX or "/" in name or not name or name in (".", ".."):
        raise ValueError(f"design port {port!r} has no Linux interface name")
    return name


def _why_not() -> str:
    if LLDPD is None or LLDPCLI is None:
        return "lldpd/lldpcli not installed (Debian package lldpd)"
    if os.geteuid() != 0:
        return "network namespaces need root"
    name = f"rp-probe-{os.getpid()}"
    made = subprocess.run(["ip", "netns", "add", name], capture_output=True, check=False)
    if made.returncode != 0:
        return f"ip netns does not work here: {made.stderr.decode(errors='replace').strip()}"
    subprocess.run(["ip", "netns", "del", name], capture_output=True, check=False)
    return ""


WHY_NOT = _why_not()
pytestmark = pytest.mark.skipif(bool(WHY_NOT), reason=WHY_NOT or "available")


def _ip(*args: str, stdin: str | None = None) -> None:
    done = subprocess.run(
        ["ip", *args], input=stdin, capture_output=True, text=True, timeout=30, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip()}")


class Lab:
    """Namespaces, veth cables and lldpd daemons, all removed by ``close``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        # lldpcli is setuid _lldpd: its socket and the configuration lldpd has it read live in a
        # folder it may enter (pytest's are 0700)
        self.sockets = Path(tempfile.mkdtemp(prefix="railplan-lldpd-"))
        self.sockets.chmod(0o755)
        self.tag = f"rp{os.getpid()}"
        self.ns: dict[str, str] = {}
        self.daemons: dict[str, subprocess.Popen[bytes]] = {}
        self.logs: list[IO[bytes]] = []

    def namespace(self, device: str) -> str:
        if device not in self.ns:
            name = f"{self.tag}-{len(self.ns)}"
            _ip("netns", "add", name)
            self.ns[device] = name
            _ip("-n", name, "link", "set", "lo", "up")
        return self.ns[device]

    def cable(self, a: str, a_if: str, b: str, b_if: str) -> None:
        na, nb = self.namespace(a), self.namespace(b)
        _ip("link", "add", a_if, "netns", na, "type", "veth", "peer", "name", b_if, "netns", nb)
        if a in self.daemons or b in self.daemons:  # re-cabling a running lab
            _ip("-n", na, "link", "set", a_if, "up")
            _ip("-n", nb, "link", "set", b_if, "up")

    def uncable(self, device: str, iface: str) -> None:
        _ip("-n", self.ns[device], "link", "del", iface)  # deletes both ends of the pair

    def start(self) -> None:
        for device in list(self.ns):
            self.start_one(device)

    def start_one(self, device: str) -> None:
        """Bring every interface of the device up and start its lldpd."""
        ns = self.ns[device]
        ups = "".join(
            f"link set {line.split(':')[1].strip().split('@')[0]} up\n"
            for line in subprocess.run(
                ["ip", "-n", ns, "-o", "link", "show"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.splitlines()
        )
        _ip("-n", ns, "-b", "-", stdin=ups)
        config = self.sockets / f"{ns}.conf"  # read by lldpcli as _lldpd
        config.write_text(f"configure system hostname {device}\nconfigure lldp tx-interval 1\n")
        log = open(self.folder / f"{ns}.log", "wb")  # noqa: SIM115 - closed by close()
        self.logs.append(log)
        self.daemons[device] = subprocess.Popen(
            [
                "ip",
                "netns",
                "exec",
                ns,
                LLDPD or "lldpd",
                "-d",
                "-u",
                self._sock(ns),
                "-p",
                str(self.folder / f"{ns}.pid"),
                "-O",
                str(config),
                "-L",
                LLDPCLI or "",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )

    def _sock(self, ns: str) -> str:
        return str(self.sockets / f"{ns}.sock")

    def neighbours(self, device: str) -> dict[str, object]:
        ns = self.ns[device]
        out = subprocess.run(
            [
                "ip",
                "netns",
                "exec",
                ns,
                LLDPCLI or "lldpcli",
                "-u",
                self._sock(ns),
                "-f",
                "json",
                "show",
                "neighbors",
                "details",
            ],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
        if out.returncode != 0 or not out.stdout.strip():
            return {}
        doc = json.loads(out.stdout)
        return doc if isinstance(doc, dict) else {}

    def capture(
        self,
        devices: list[str],
        expect: dict[str, set[tuple[str, str, str]]],
        folder: Path,
        timeout_s: float = 40.0,
    ) -> None:
        """Each device's neighbour JSON in ``folder`` once it shows exactly ``expect[device]``
        (local ifname, neighbour, its port), else fail naming what is missing: lldpd keeps a
        re-created interface's old description for a moment, as a switch does after re-cabling."""
        folder.mkdir()
        deadline = time.monotonic() + timeout_s
        pending = set(devices)
        while pending:
            for device in sorted(pending):
                doc = self.neighbours(device)
                if _pairs(doc) == expect[device]:
                    (folder / f"{device}.json").write_text(json.dumps(doc, indent=2))
                    pending.discard(device)
            if pending and time.monotonic() > deadline:
                device = min(pending)
                raise AssertionError(
                    f"lldpd in {device} shows {sorted(_pairs(self.neighbours(device)))}, "
                    f"expected {sorted(expect[device])}"
                )
            if pending:
                time.sleep(0.5)

    def close(self) -> None:
        for proc in self.daemons.values():
            if proc.poll() is None:
                proc.terminate()
        for proc in self.daemons.values():
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)
        for ns in self.ns.values():  # lldpd's privilege-separated child, by its own pid
            for pid in _pids_in(ns):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, 9)
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, check=False)
        shutil.rmtree(self.sockets, ignore_errors=True)
        for log in self.logs:
            log.close()


def _pids_in(ns: str) -> list[int]:
    out = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True, check=False)
    return [int(p) for p in out.stdout.split() if p.isdigit()]


def _pairs(doc: dict[str, object]) -> set[tuple[str, str, str]]:
    """(local interface, neighbour system name, neighbour port description) of an ``lldpcli -f
    json`` document (lldpd on Linux sends the interface name as the port description)."""
    lldp = doc.get("lldp")
    ifaces = lldp.get("interface", []) if isinstance(lldp, dict) else []
    items = ifaces if isinstance(ifaces, list) else [ifaces]
    out = set()
    for item in items:
        for name, body in item.items():
            chassis = body.get("chassis", {}) if isinstance(body, dict) else {}
            port = body.get("port", {}) if isinstance(body, dict) else {}
            descr = port.get("descr", "") if isinstance(port, dict) else ""
            for sysname in chassis:
                out.add((name, sysname, descr))
    return out


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[Lab]:
    made = Lab(tmp_path)
    try:
        yield made
    finally:
        made.close()
        left = [ns for ns in made.ns.values() if ns in _netns_list()]
        assert not left, f"namespaces left behind: {left}"


def _netns_list() -> set[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False)
    return {line.split()[0] for line in out.stdout.splitlines() if line.strip()}


def _expected(
    cabled: dict[tuple[str, str], tuple[str, str]],
) -> dict[str, set[tuple[str, str, str]]]:
    out: dict[str, set[tuple[str, str, str]]] = {}
    for (dev, iface), (peer, peer_if) in cabled.items():
        out.setdefault(dev, set()).add((iface, peer, peer_if))
    return out


def _cable_plan(design: Design) -> dict[tuple[str, str], tuple[str, str]]:
    names = NameMap(design)
    cabled: dict[tuple[str, str], tuple[str, str]] = {}
    for link in design.links:
        a = (link.a_device, ifname(names.port_name(Endpoint(link.a_device, link.a_port))))
        b = (link.b_device, ifname(names.port_name(Endpoint(link.b_device, link.b_port))))
        cabled[a], cabled[b] = b, a
    return cabled


def test_interface_names_fit_linux_and_read_back() -> None:
    design = roft(64, "sn5600", "lldp-names")
    names = NameMap(design)
    for link in design.links:
        for end in (Endpoint(link.a_device, link.a_port), Endpoint(link.b_device, link.b_port)):
            iface = ifname(names.port_name(end))
            assert len(iface) <= IFNAME_MAX and "/" not in iface
            assert names.port(end.device, iface) == end.port
    assert ifname("P9/2") == "swp9s1" and ifname("nic1.p2") == "nic1.p2"


@pytest.mark.parametrize(
    "tiers",
    [
        2,
        pytest.param(
            3,
            marks=pytest.mark.skipif(
                not os.environ.get("RAILPLAN_SLOW"),
                reason="the 3-tier lab (36 namespaces, 320 veth pairs) runs with RAILPLAN_SLOW=1",
            ),
        ),
    ],
)
def test_lldpd_fabric_healthy_then_exactly_the_injected_faults(
    lab: Lab, tmp_path: Path, cli, tiers: int
) -> None:
    spec_design = _eight_rail_roft(tiers)
    n_links = len(spec_design.links)
    n_devices = len(spec_design.nodes) + len(spec_design.switches)
    design_file = tmp_path / "design.json"
    design_file.write_text(design_to_json(spec_design))
    cabled = _cable_plan(spec_design)
    for (dev, iface), (peer, peer_if) in sorted(cabled.items()):
        if (dev, iface) < (peer, peer_if):
            lab.cable(dev, iface, peer, peer_if)
    devices = sorted({d for d, _ in cabled})
    assert len(devices) == n_devices and len(cabled) == 2 * n_links
    lab.start()
    lab.capture(devices, _expected(cabled), tmp_path / "healthy")
    healthy = check_asbuilt(spec_design, lldp=[tmp_path / "healthy"])
    # the simulator's limit: a veth reports 10GbaseT (the kernel's fixed veth link settings),
    # so every link is a wrong-speed finding at 10G and nothing else
    assert {
        (f.kind, c.seen_rate_gbps)
        for f in healthy.findings
        for c in healthy.links
        if c.link_id in f.links
    } == {("wrong_speed", 10.0)}
    assert healthy.counts()["wrong_speed"] == n_links and not healthy.unexpected
    assert healthy.ignored == 0 and healthy.verified == n_links
    shown = cli("asbuilt", design_file, "--lldp", tmp_path / "healthy", "--json")
    doc = json.loads(shown.out)
    assert shown.code == 1 and {f["kind"] for f in doc["findings"]} == {"wrong_speed"}
    assert doc["verified_links"] == n_links and doc["ignored_sightings"] == 0

    # the faults, on four disjoint node links of the first leaf
    names = NameMap(spec_design)
    leaf = next(s.id for s in spec_design.switches if s.role == "leaf")
    node_links = [x for x in spec_design.links if x.b_device == leaf and x.kind == "node-leaf"]
    l1, l2, l3, l4 = node_links[:4]
    used = {x.b_port for x in spec_design.links if x.b_device == leaf}
    used |= {x.a_port for x in spec_design.links if x.a_device == leaf}
    sw = spec_design.switch_by_id()[leaf]
    free = [p for p in range(sw.radix) if p not in used]
    assert len(free) >= 2, "the leaf needs two free ports for the move and the foreign host"

    def port(dev: str, index: int) -> str:
        return ifname(names.port_name(Endpoint(dev, index)))

    def node_end(x):  # type: ignore[no-untyped-def]
        return x.a_device, port(x.a_device, x.a_port)

    for x in (l1, l2, l3, l4):  # unplug
        lab.uncable(*node_end(x))
        del cabled[node_end(x)], cabled[(leaf, port(leaf, x.b_port))]
    # swap: l1's and l2's cables exchanged at the leaf
    for x, y in ((l1, l2), (l2, l1)):
        lab.cable(*node_end(x), leaf, port(leaf, y.b_port))
        cabled[node_end(x)] = (leaf, port(leaf, y.b_port))
        cabled[(leaf, port(leaf, y.b_port))] = node_end(x)
    # move: l3's cable to a free leaf port; l4 removed; a foreign host on another free port
    lab.cable(*node_end(l3), leaf, port(leaf, free[0]))
    cabled[node_end(l3)] = (leaf, port(leaf, free[0]))
    cabled[(leaf, port(leaf, free[0]))] = node_end(l3)
    lab.cable("foreign-host", "eth0", leaf, port(leaf, free[1]))
    lab.start_one("foreign-host")
    cabled[(leaf, port(leaf, free[1]))] = ("foreign-host", "eth0")
    expect = _expected(cabled)
    for dev in devices:
        expect.setdefault(dev, set())
    lab.capture(devices, expect, tmp_path / "faulty")
    report = check_asbuilt(spec_design, lldp=[tmp_path / "faulty"])
    got = sorted(
        (f.kind, tuple(sorted(f.links))) for f in report.findings if f.kind != "wrong_speed"
    )
    assert got == sorted(
        [
            ("swap", tuple(sorted((l1.id, l2.id)))),
            ("miswired", (l3.id,)),
            ("missing", (l4.id,)),
            ("unexpected", ()),
        ]
    ), [r for r in report.summary_rows() if r[0] != "wrong_speed"]
    (unexpected,) = report.unexpected
    assert "foreign-host" in (unexpected.a + unexpected.b)
    assert report.counts()["wrong_speed"] == n_links - 4 and report.ignored == 0


def _eight_rail_roft(tiers: int = 2) -> Design:
    """8 DGX-class nodes on cx732q-n: 12 switches and 192 links in 2 tiers; 28 switches and
    320 links with a core tier."""
    import railplan

    spec = {
        "name": "lldp-live",
        "cluster": {"gpus": 64, "gpus_per_node": 8, "nics_per_node": 8, "port_speed_gbps": 400},
        "fabric": {"switches": ["cx732q-n"], "topology": "roft", "tiers": tiers},
    }
    return railplan.plan(railplan.spec_from_dict(spec))
