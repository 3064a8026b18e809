"""Rail verdicts: the rails that failed single-rail tests and per-port node checks point at.

A rail is one node port on every node and the switches that port lands on; a rail-optimized
fabric fails by rails (a rail switch or its ports set to half rate, a batch of optics on one
rail, one rail's NIC firmware), and a collective over every rail then runs at its slowest
rail's pace. The evidence on a rail:

- single-rail tests: the plan's per-link ib_write_bw / ib_write_lat, pinned to one node port
  at each end (``Expectation.ports``), failed or passed;
- per-port node checks (ibstat state and rate, ibv_devinfo MTU, roce.txt GID/PFC/ECN): the
  RDMA devices each check found wrong (``Measure.bad_devices``), mapped to node ports through
  the plan's device list (``Expectation.devices``, index = node port).

A rail with failed evidence is named with its node ports, devices, switches, the failed tests
and the cables (id and both labels) of the node ports that failed; it is rail-wide when the
failures span two or more nodes, which is what tells a rail fault from one node's cable.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from railplan.design import Design
from railplan.testplan.expectation import Expectation

#: node checks whose failures name RDMA devices (``Measure.bad_devices``)
PER_PORT_CHECKS = frozenset(
    {
        "ports_active",
        "ports_down",
        "ports_at_rate",
        "min_rate_gbps",
        "ports_mtu",
        "gid_roce_v2",
        "pfc_lossless",
        "ecn_enabled",
    }
)
#: tests that run on one node port at each end
SINGLE_RAIL_KINDS = frozenset({"rdma_bw", "rdma_lat"})


@dataclass(frozen=True, slots=True)
class RailFault:
    """One rail the failed results point at."""

    plane: int
    rail: int
    label: str
    ports: tuple[str, ...]
    devices: tuple[str, ...]
    switches: tuple[str, ...]
    failed: tuple[str, ...]
    passed: int
    nodes: tuple[str, ...]
    #: (cable id, label a, label b) of the node ports the failures were on
    cables: tuple[tuple[str, str, str], ...]
    rail_wide: bool
    message: str

    def to_json(self) -> dict[str, object]:
        return {
            "plane": self.plane,
            "rail": self.rail,
            "label": self.label,
            "node_ports": list(self.ports),
            "devices": list(self.devices),
            "switches": list(self.switches),
            "failed": list(self.failed),
            "passed_single_rail_tests": self.passed,
            "nodes": list(self.nodes),
            "cables": [{"id": c, "label_a": a, "label_b": b} for c, a, b in self.cables],
            "rail_wide": self.rail_wide,
            "message": self.message,
        }


@dataclass
class _Evidence:
    failed: list[str] = field(default_factory=list)
    passed: int = 0
    single_failed: int = 0
    single_total: int = 0
    bad_ports: set[tuple[str, int]] = field(default_factory=set)
    devices: set[str] = field(default_factory=set)


def rail_faults(
    design: Design,
    expectations: Sequence[Expectation],
    statuses: Sequence[tuple[str, float | None]],
    bad_devices: Mapping[tuple[str, str], tuple[str, ...]],
) -> tuple[RailFault, ...]:
    """The rails with failed evidence; ``statuses`` is (status, measured) per expectation."""
    shape = design.shape
    ev: dict[tuple[int, int], _Evidence] = defaultdict(_Evidence)

    def rail_of(port: int) -> tuple[int, int]:
        return shape.port_plane[port], shape.port_rail[port]

    for exp, (status, measured) in zip(expectations, statuses, strict=True):
        if status not in ("pass", "fail"):
            continue
        if exp.kind in SINGLE_RAIL_KINDS and len(exp.ports) == len(exp.nodes) == 2:
            pinned = [(n, p) for n, p in zip(exp.nodes, exp.ports, strict=True)]
            for r in {rail_of(p) for _, p in pinned if 0 <= p < shape.ports}:
                e = ev[r]
                e.single_total += 1
                if status == "pass":
                    e.passed += 1
                    continue
                e.single_failed += 1
                got = "-" if measured is None else f"{measured:.4g}"
                e.failed.append(f"{exp.test_id} {exp.metric} {got} (pass {exp.threshold:g})")
                e.bad_ports |= {(n, p) for n, p in pinned if rail_of(p) == r}
        elif exp.metric in PER_PORT_CHECKS and status == "fail" and len(exp.nodes) == 1:
            node = exp.nodes[0]
            for device in bad_devices.get((exp.test_id, exp.metric), ()):
                for port in (i for i, d in enumerate(exp.devices) if d == device):
                    if port >= shape.ports:
                        continue
                    e = ev[rail_of(port)]
                    e.failed.append(f"{exp.test_id} {exp.metric}: {device}")
                    e.bad_ports.add((node, port))
                    e.devices.add(device)
    healthy = sum(1 for e in ev.values() if not e.failed)
    return tuple(
        _fault(design, plane, rail, ev[plane, rail], healthy, expectations)
        for plane, rail in sorted(ev)
        if ev[plane, rail].failed
    )


def _fault(
    design: Design,
    plane: int,
    rail: int,
    e: _Evidence,
    healthy: int,
    expectations: Sequence[Expectation],
) -> RailFault:
    shape = design.shape
    ports = [
        p for p in range(shape.ports) if (shape.port_plane[p], shape.port_rail[p]) == (plane, rail)
    ]
    names = tuple(shape.port_name(p) for p in ports)
    devices = set(e.devices)
    for exp in expectations:
        if exp.devices:
            devices |= {exp.devices[p] for p in ports if p < len(exp.devices)}
            break
    label = f"rail {rail}" if design.planes == 1 else f"plane {plane} rail {rail}"
    links = {
        (lk.a_device, lk.a_port): lk
        for lk in design.links
        if lk.kind == "node-leaf" and lk.a_port in ports
    }
    switches = tuple(sorted({lk.b_device for lk in links.values()}))
    cable_of = {c.link_id: c for c in design.cables}
    cables = []
    for node, port in sorted(e.bad_ports):
        lk = links.get((node, port))
        cab = cable_of.get(lk.id) if lk is not None else None
        if cab is not None:
            cables.append((cab.id, cab.label_a, cab.label_b))
        elif lk is not None:
            cables.append((lk.id, "", ""))
    nodes = tuple(sorted({n for n, _ in e.bad_ports}))
    rail_wide = len(nodes) >= 2
    parts = [
        f"{label} ({', '.join(names)}; {', '.join(sorted(devices)) or 'devices ?'}; "
        f"switch {', '.join(switches) or '?'})"
    ]
    if e.single_total:
        parts.append(f"{e.single_failed} of {e.single_total} single-rail tests failed")
    parts.append(f"failed on {', '.join(nodes)}" + (" (rail-wide)" if rail_wide else ""))
    msg = ": ".join(parts[:1]) + ": " + "; ".join(parts[1:])
    msg += (
        "; "
        + ", ".join(e.failed[:4])
        + (f" (+{len(e.failed) - 4} more)" if len(e.failed) > 4 else "")
    )
    if cables:
        msg += "; cables " + ", ".join(
            f"{c} ({a} / {b})" if a or b else c for c, a, b in cables[:6]
        )
    if healthy:
        msg += f"; {healthy} other rail(s) pass"
    if rail_wide:
        msg += (
            "; a collective over every rail runs at this rail's pace: check the rail's switch "
            "port speed and FEC, its optics and the NICs' negotiated rate (ethtool) first"
        )
    return RailFault(
        plane,
        rail,
        label,
        names,
        tuple(sorted(devices)),
        switches,
        tuple(e.failed),
        e.passed,
        nodes,
        tuple(cables),
        rail_wide,
        msg,
    )


def explained_checks(
    faults: Sequence[RailFault],
    expectations: Sequence[Expectation],
    bad_devices: Mapping[tuple[str, str], tuple[str, ...]],
) -> set[tuple[str, str]]:
    """(test id, metric) of per-port node checks whose wrong devices all sit on rail-wide
    faults: those failures are the rail's, not the node's (no "check ACS" node fault)."""
    wide = {(f.plane, f.rail) for f in faults if f.rail_wide}
    out: set[tuple[str, str]] = set()
    if not wide:
        return out
    by_dev: dict[str, set[tuple[int, int]]] = {}
    for f in faults:
        for d in f.devices:
            by_dev.setdefault(d, set()).add((f.plane, f.rail))
    for exp in expectations:
        bad = bad_devices.get((exp.test_id, exp.metric))
        if exp.metric in PER_PORT_CHECKS and bad and all(by_dev.get(d, set()) & wide for d in bad):
            out.add((exp.test_id, exp.metric))
    return out


__all__ = ["PER_PORT_CHECKS", "RailFault", "explained_checks", "rail_faults"]
