"""What every section builder reads: the design, its fabric, rates, RDMA devices and options."""

from __future__ import annotations

from dataclasses import dataclass

from railplan.catalog import Catalog
from railplan.design import Design
from railplan.testplan.expected import Rates
from railplan.testplan.fabric import Fabric
from railplan.testplan.model import TestPlanOptions
from railplan.testplan.prediction import Predictor


def device_names(design: Design, catalog: Catalog, options: TestPlanOptions) -> tuple[str, ...]:
    """RDMA device of each node port: the options' list, else by NIC vendor and port index."""
    ports = design.shape.ports
    if options.devices:
        if len(options.devices) != ports:
            from railplan.errors import SpecError

            raise SpecError(
                f"devices: give one RDMA device per node port ({ports}), got {len(options.devices)}"
            )
        return tuple(options.devices)
    nic = catalog.nics.get(design.shape.nic_model)
    prefix = "bnxt_re" if nic is not None and nic.vendor.lower() == "broadcom" else "mlx5_"
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
