"""How node ports form connection endpoints: a multi-port NIC bonded into one, or every port alone.

A *bonded* NIC (RoCE LAG) is one RDMA device over both ports of a dual-port NIC: ``mlx5_bond_0``
on NVIDIA ConnectX ("net/mlx5: Implement RoCE LAG feature": only one IB device is present for
both ports), ``bnxt_re_bond<N>`` on Broadcom NetXtreme (the bnxt_re driver registers it when the
two ports of one adapter are the only slaves of a bond in mode 1, 2 or 4). Each queue pair (QP)
transmits on one port: mlx5 gives the QPs a process creates the ports in turn (Linux commit
"IB/mlx5: Change TX affinity assignment in RoCE LAG mode": qp.tx_port_affinity =
ucontext.tx_port_affinity++ % ports), so one QP uses one port and two QPs use both
(github.com/NVIDIA/nccl/issues/1015: "if you use a single QP (the default), only one port will
be used"; github.com/NVIDIA/nccl-tests/issues/265: 395 Gb/s from ib_write_bw with several QPs
on a 2 x 200G bond). Broadcom documents no other per-QP rule, so railplan applies the same one:
QP k of a NIC leaves on its port k mod 2.

An *independent* port is its own RDMA device and rail endpoint (``mlx5_3``, ``bnxt_re2``).

Where a QP arrives: on a Matrix the peer's port in the other leaf group (a flow entering the
fabric on an A leaf leaves it on a B leaf and the other way round: X.A -> A_i -> B_j -> Y.B,
X.B -> B_j -> A_i -> Y.A, the "constant two-hop forwarding" of the AsterFabric Matrix test);
on the other families the peer's port of the same rail.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from railplan.design.types import Design
from railplan.errors import SpecError

BONDINGS = ("auto", "bond", "independent")
#: leaf roles of a Matrix's two groups
MATRIX_GROUPS = {"leaf-a": "A", "leaf-b": "B"}


@dataclass(frozen=True)
class Endpoints:
    """The connection endpoints of every node: ``groups`` of node ports, and where QPs go.

    Bonded: a group is one NIC's ports and a connection spreads its QPs over them. Independent:
    a group is the ports of one rail (on a Matrix the A and the B port of that rail, which may
    sit on two single-port NICs) and every port is a connection endpoint of its own.
    """

    bonding: str
    groups: tuple[tuple[int, ...], ...]
    port_group: tuple[str, ...]
    port_gbps: float
    why: str

    @property
    def bonded(self) -> bool:
        return self.bonding == "bond"

    @property
    def orthogonal(self) -> bool:
        """Matrix: a QP that leaves on an A port arrives on a B port and the other way round."""
        return "A" in self.port_group and "B" in self.port_group

    @property
    def ports_per_endpoint(self) -> int:
        return max((len(g) for g in self.groups), default=1) if self.bonded else 1

    @property
    def nic_gbps(self) -> float:
        """Line rate of one logical NIC: every bonded port, or one independent port."""
        return self.port_gbps * self.ports_per_endpoint

    def target_member(self, src_port: int, dst_group: int) -> int:
        """Index in ``groups[dst_group]`` of the port a QP leaving on ``src_port`` arrives on.

        Matrix: the first port of the other leaf group; elsewhere the port at the same position
        in its group as ``src_port`` in its own (the same rail), else the first.
        """
        members = self.groups[dst_group]
        role = self.port_group[src_port]
        if self.orthogonal and role:
            for i, q in enumerate(members):
                if self.port_group[q] not in ("", role):
                    return i
        own = next((g for g in self.groups if src_port in g), (src_port,))
        pos = own.index(src_port)
        return pos if pos < len(members) else 0


def requested_bonding(design: Design) -> str:
    """The spec's ``cluster.bonding`` (``auto`` for designs without a spec)."""
    cluster = design.spec.get("cluster", {}) if isinstance(design.spec, dict) else {}
    value = cluster.get("bonding", "auto") if isinstance(cluster, dict) else "auto"
    if value not in BONDINGS:
        raise SpecError(f"cluster.bonding: {value!r} is not one of {', '.join(BONDINGS)}")
    return str(value)


def _port_groups(design: Design) -> tuple[str, ...]:
    """Leaf group (A, B or '') each node port is cabled to, by majority over the nodes."""
    roles = {s.id: MATRIX_GROUPS.get(s.role, "") for s in design.switches}
    seen: list[Counter[str]] = [Counter() for _ in range(design.shape.ports)]
    for lk in design.links:
        if lk.kind == "node-leaf" and 0 <= lk.a_port < len(seen):
            seen[lk.a_port][roles.get(lk.b_device, "")] += 1
    return tuple(c.most_common(1)[0][0] if c else "" for c in seen)


def _cabled_ports(design: Design) -> set[int]:
    return {lk.a_port for lk in design.links if lk.kind == "node-leaf"}


def endpoints(design: Design) -> Endpoints:
    """Resolve ``cluster.bonding`` for this design and group its node ports into endpoints.

    ``auto`` bonds multi-port NICs on a Matrix (one port in group A and one in group B, the
    AsterFabric Matrix test's "400G bond mode") and keeps every port independent elsewhere.
    """
    shape = design.shape
    asked = requested_bonding(design)
    multi = shape.ports_per_nic >= 2
    if asked == "bond" and not multi:
        raise SpecError(
            f"cluster.bonding: bond joins the ports of one NIC (RoCE LAG), but {shape.nic_model} "
            "has one port per NIC; use independent or auto"
        )
    bonded = asked == "bond" or (asked == "auto" and multi and design.topology == "matrix")
    cabled = _cabled_ports(design)
    if bonded:
        per = shape.ports_per_nic
        groups = [
            tuple(p for p in range(nic * per, (nic + 1) * per) if p in cabled)
            for nic in range(shape.nics)
        ]
        why = (
            f"bonded NICs: {per} x {shape.port_speed_gbps}G ports per NIC form one "
            f"{per * shape.port_speed_gbps}G RDMA device (RoCE LAG); QP k of a NIC leaves on its "
            f"port k mod {per}"
        )
    else:
        by_rail: dict[tuple[int, int], list[int]] = {}
        for p in sorted(cabled):
            by_rail.setdefault((shape.port_plane[p], shape.port_rail[p]), []).append(p)
        groups = sorted((tuple(g) for g in by_rail.values()), key=lambda g: g[0])
        why = f"independent ports: every {shape.port_speed_gbps}G NIC port is its own endpoint"
    why += f" ({'cluster.bonding ' + asked if asked != 'auto' else 'cluster.bonding auto'})"
    port_group = _port_groups(design)
    ep = Endpoints(
        "bond" if bonded else "independent",
        tuple(g for g in groups if g),
        port_group,
        float(shape.port_speed_gbps),
        why,
    )
    if ep.orthogonal:
        ep = Endpoints(
            ep.bonding,
            ep.groups,
            ep.port_group,
            ep.port_gbps,
            ep.why + "; Matrix: a QP leaving on an A port arrives on the peer's B port and the "
            "other way round (two switch hops)",
        )
    return ep
