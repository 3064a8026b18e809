"""What every section builder reads: the design, its fabric, rates, RDMA devices and options."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from railplan.catalog import Catalog
from railplan.design import Design
from railplan.design.endpoints import Endpoints, endpoints
from railplan.testplan.expected import Rates
from railplan.testplan.fabric import Fabric
from railplan.testplan.model import TestPlanOptions
from railplan.testplan.prediction import Predictor


def device_names(design: Design, catalog: Catalog, options: TestPlanOptions) -> tuple[str, ...]:
    """RDMA device of each node port: the options' list, else by NIC vendor and port index
    (``mlx5_<p>`` NVIDIA, ``bnxt_re<p>`` Broadcom, ``ionic_<p>`` AMD).

    Bonded NICs (``cluster.bonding``, RoCE LAG) are one RDMA device over their ports:
    ``mlx5_bond_<k>`` on NVIDIA ConnectX (the mlx5 RoCE LAG device), ``bnxt_re_bond<k>`` on
    Broadcom; every port of NIC k maps to it. ``options.devices`` may then name one device per
    NIC instead of one per port.
    """
    shape = design.shape
    ports = shape.ports
    bonded = endpoints(design).bonded
    per = shape.ports_per_nic if bonded else 1
    if options.devices:
        given = tuple(options.devices)
        if bonded and len(given) == shape.nics:
            return tuple(given[p // per] for p in range(ports))
        if len(given) != ports:
            from railplan.errors import SpecError

            what = (
                f"per node port ({ports}) or per bonded NIC ({shape.nics})"
                if bonded
                else (f"per node port ({ports})")
            )
            raise SpecError(f"devices: give one RDMA device {what}, got {len(given)}")
        return given
    nic = catalog.nics.get(shape.nic_model)
    broadcom = nic is not None and nic.vendor.lower() == "broadcom"
    if bonded:
        prefix = "bnxt_re_bond" if broadcom else "mlx5_bond_"
        return tuple(f"{prefix}{p // per}" for p in range(ports))
    # AMD Pensando Pollara (the ionic RDMA driver) names its devices ionic_<k>, as
    # NCCL_IB_HCA=ionic_0,... lists them on AMD AI NIC clusters
    amd = nic is not None and nic.vendor.lower() == "amd"
    prefix = "bnxt_re" if broadcom else "ionic_" if amd else "mlx5_"
    return tuple(f"{prefix}{p}" for p in range(ports))


@dataclass
class PlanContext:
    """The design and the facts derived from it once, shared by every section builder."""

    design: Design
    fabric: Fabric
    rates: Rates
    devices: tuple[str, ...]
    options: TestPlanOptions
    predictor: Predictor

    @cached_property
    def endpoints(self) -> Endpoints:
        """How node ports form RDMA endpoints (``cluster.bonding``)."""
        return endpoints(self.design)

    @property
    def bonded(self) -> bool:
        """Bonded NICs (RoCE LAG): one RDMA device over the ports of each NIC."""
        return self.endpoints.bonded

    def member_flows(self, flow: tuple[str, int, str, int]) -> list[tuple[str, int, str, int]]:
        """The port-to-port flows a test of ``flow`` makes: itself, or on bonded NICs one per
        member port of the source NIC (one QP each), each to the peer port it arrives on."""
        if not self.bonded:
            return [flow]
        src, ps, dst, pd = flow
        groups = self.endpoints.groups
        own = next(g for g in groups if ps in g)
        gd = next(i for i, g in enumerate(groups) if pd in g)
        return [(src, a, dst, groups[gd][self.endpoints.target_member(a, gd)]) for a in own]

    @property
    def roce(self) -> bool:
        return self.rates.protocol == "ethernet"

    def gid_flag(self) -> str:
        return f" -x {self.options.gid_index}" if self.roce else ""

    def hca_list(self) -> str:
        return "=" + ",".join(dict.fromkeys(self.devices))

    def node_ref(self, node: str, port: int) -> str:
        link = self.fabric.port_link[(node, port)]
        sw = self.fabric.switches[link.b_device]
        return f"{self.fabric.cable(link)}@{sw.id}:{sw.port_name(link.b_port)}"
