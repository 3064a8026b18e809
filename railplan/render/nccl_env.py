"""The NCCL environment a job on this fabric should set, each setting with its reason.

Settings and their meaning are NCCL's (NCCL User Guide, "Environment Variables"):
``NCCL_IB_HCA`` filters the RDMA devices NCCL may use (a leading ``=`` matches names exactly,
so ``mlx5_1`` does not also pick ``mlx5_10``); ``NCCL_CROSS_NIC`` 0 keeps a ring or tree on
the same NIC index on every node (for rail-optimized networks), 1 lets it change NIC (for
networks where all NICs of a node reach the same switch), 2 (the default) prefers the same NIC
but may cross; ``NCCL_IB_QPS_PER_CONNECTION`` sets the queue pairs per connection (1 by
default); ``NCCL_IB_ADAPTIVE_ROUTING`` enables adaptive-routing transfers (on by default on
InfiniBand, off on RoCE); ``NCCL_IB_GID_INDEX`` picks the RoCE GID. What each family needs
follows from its wiring (``docs/scheduler-handoff.md``). The file is a bash fragment: ``source``
it, or pass the lines to ``mpirun -x`` / ``srun --export``.
"""

from __future__ import annotations

from railplan.catalog import Catalog
from railplan.design import Design
from railplan.design.endpoints import endpoints
from railplan.render.shell import shell_word
from railplan.testplan.context import device_names
from railplan.testplan.model import TestPlanOptions


def protocol(design: Design, catalog: Catalog) -> str:
    """The protocol of the leaves the nodes are cabled to (``infiniband`` or ``ethernet``)."""
    models = {s.model for s in design.switches if s.tier == 1}
    found = sorted({catalog.switch(m).protocol for m in models})
    return found[0] if len(found) == 1 else "/".join(found)


def settings(design: Design, catalog: Catalog) -> list[tuple[str, str, str]]:
    """(variable, value, reason) in the order they are written."""
    shape, family = design.shape, design.topology
    ep = endpoints(design)
    devices = device_names(design, catalog, TestPlanOptions())
    order = sorted(range(shape.ports), key=lambda p: (shape.port_rail[p], shape.port_plane[p], p))
    hcas = list(dict.fromkeys(devices[p] for p in order))
    rails = len(set(shape.port_rail))
    out = [
        (
            "NCCL_IB_HCA",
            "=" + ",".join(hcas),
            f"the {len(hcas)} back-end RDMA devices of a node and no other (not the front-end or "
            "storage NIC), exact names ('='), in rail order"
            + (f" ({rails} rails x {design.planes} planes)" if design.planes > 1 else "")
            + "; railplan's default device names (mlx5_<port>, bnxt_re<port>, *_bond_<nic> "
            "when bonded): replace them if the node names its devices otherwise",
        )
    ]
    cross, why = _cross_nic(design)
    out.append(("NCCL_CROSS_NIC", cross, why))
    if ep.bonded:
        per = ep.ports_per_endpoint
        out.append(
            (
                "NCCL_IB_QPS_PER_CONNECTION",
                str(per),
                f"each NIC is a {per}-port bond (RoCE LAG) and one queue pair leaves on one port "
                "(github.com/NVIDIA/nccl/issues/1015; mlx5 gives a process's QPs the ports in "
                f"turn): {per} QPs per connection use every port of the bond",
            )
        )
    proto = protocol(design, catalog)
    if proto == "ethernet":
        out.append(
            (
                "NCCL_IB_GID_INDEX",
                str(TestPlanOptions().gid_index),
                "RoCE v2 over IPv4 (the GID index railplan's test plan uses; check it with "
                "show_gids on a node and change it here if the node reports another)",
            )
        )
        if design.routing.policy == "adaptive":
            out.append(
                (
                    "NCCL_IB_ADAPTIVE_ROUTING",
                    "1",
                    "the design routes adaptively, and NCCL turns adaptive-routing transfers "
                    "on by default only on InfiniBand",
                )
            )
    if family == "rail-only":
        out.append(
            (
                "NCCL_PXN_DISABLE",
                "0",
                "rail-only: traffic to another rail must first move to the GPU of that rail "
                "over NVLink (PXN); keep PXN on",
            )
        )
    return out


def _cross_nic(design: Design) -> tuple[str, str]:
    family = design.topology
    if design.planes > 1:
        return "0", (
            f"{design.planes} planes share no switch: a connection between NICs of different "
            "planes has no path, so rings and trees must keep their NIC index on every node"
        )
    if family == "roft":
        return "0", (
            "rail-optimized: NIC k of every node is on the rail-k leaf of its SU; a ring or tree "
            "that changes NIC between nodes crosses rails through a spine"
        )
    if family == "rail-only":
        isl = any(lk.kind == "leaf-leaf" for lk in design.links)
        return "0", (
            "rail-only: rails share no spine"
            + (", only the inter-switch links" if isl else "")
            + "; keep each ring and tree on one rail"
        )
    if family == "fat-tree":
        return "1", (
            "per-rack ToRs: all NICs of a node reach the same switch, the case NCCL's docs give "
            "for NCCL_CROSS_NIC=1; off the rack every NIC crosses the spines by ECMP alike"
        )
    if family == "matrix":
        return "2", (
            "Matrix: every A leaf links to every B leaf and a flow arrives on the peer's port "
            "in the other leaf group, so it crosses one A-B bundle whichever NICs it uses; "
            "crossing NICs adds no hop, and NCCL's default (2) may use it"
        )
    return "2", f"{family}: NCCL's default"


def render(design: Design, catalog: Catalog, origin: str = "from the plan") -> str:
    """The settings as a bash fragment of ``export NAME=value`` lines with their reasons."""
    lines = [
        f"# NCCL environment for jobs on design {design.name} ({design.topology}, "
        f"{protocol(design, catalog)}, {design.shape.ports} x {design.shape.port_speed_gbps}G "
        f"ports per node, {design.planes} plane{'s' if design.planes > 1 else ''}), {origin}",
        "# source it in the job script, or pass each line with mpirun -x / srun --export",
    ]
    for name, value, why in settings(design, catalog):
        lines.append(f"# {why}")
        lines.append(f"export {name}={shell_word(value)}")
    return "\n".join(lines) + "\n"
