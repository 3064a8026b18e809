"""InfiniBand topology file (``ibdiagnet --topo_file``, IBDM topology-file grammar) of the fabric.

The grammar is the IBDM topology file's (ibutils' ``ibdm-topo-file`` manual and its parser,
``IBFabric::parseTopology``): one section per system, a declaration line ``SYSTEM-TYPE
SYSTEM-NAME`` (no ``/`` in either) followed by *indented* port lines ``LOCAL-PORT -> REM-SYS-TYPE
REM-SYS-NAME REM-PORT``, sections separated by blank lines, ``#`` starting a comment line. The
arrow carries the link width and lane speed as NVIDIA's own topo files do (UFM's "Topo File"
example: ``P2 -4x-50G-> HCA_mlx5_3 swx-ufm3-04 mlx5_0/P1``): NDR is ``-4x-100G->``. Switch
ports are ``P1``..``Pn`` as the switch reports them; a host is declared by the type
``HCA_mlx5_<n>`` (n: the node's fabric NICs) and its ports are ``mlx5_<nic>/P<port>``.
Switch-to-switch links appear in both switches' sections, as ibdiagnet writes them.
"""

from __future__ import annotations

from collections import defaultdict

from railplan.catalog import Catalog
from railplan.design import Design, Switch
from railplan.errors import InfeasibleError

#: link width and lane speed of an InfiniBand port by its rate (NDR: 4 lanes of 100G)
WIDTH_SPEED = {800: "4x-200G", 400: "4x-100G", 200: "2x-100G", 100: "4x-25G"}
#: how far a port line is indented (NVIDIA's examples use three spaces; the grammar wants any)
INDENT = "   "


def _system_type(sw: Switch, catalog: Catalog) -> str:
    model = catalog.switches.get(sw.model)
    name = model.id if model else sw.model
    return "M" + name.upper() if name.lower().startswith("qm") else name.upper()


def host_type(design: Design) -> str:
    """The system type NVIDIA's topo files give a host: ``HCA_mlx5_<number of mlx5 NICs>``."""
    return f"HCA_mlx5_{design.shape.nics}"


def _host_port(design: Design, port: int) -> str:
    per = design.shape.ports_per_nic
    return f"mlx5_{port // per}/P{port % per + 1}"


def render(design: Design, catalog: Catalog) -> str:
    """The topology file text; switches in design order, ports in number order.

    Raises InfeasibleError for an Ethernet fabric (the file describes InfiniBand subnets).
    """
    ethernet = sorted(
        {
            sw.model
            for sw in design.switches
            if sw.model in catalog.switches and catalog.switches[sw.model].protocol != "infiniband"
        }
    )
    if ethernet:
        raise InfeasibleError(
            f"{', '.join(ethernet)} is an Ethernet switch; an InfiniBand topology file needs an "
            "InfiniBand fabric, so export this design as csv, netbox or p2p instead"
        )
    switches = design.switch_by_id()
    sections: dict[str, list[tuple[int, str]]] = defaultdict(list)

    def far(device: str, port: int) -> str:
        sw = switches.get(device)
        if sw is None:
            return f"{host_type(design)} {device} {_host_port(design, port)}"
        return f"{_system_type(sw, catalog)} {device} P{port + 1}"

    for lk in design.links:
        arrow = f"-{WIDTH_SPEED.get(lk.rate_gbps, '4x')}->"
        if lk.b_device in switches:
            sections[lk.b_device].append(
                (lk.b_port, f"{INDENT}P{lk.b_port + 1} {arrow} {far(lk.a_device, lk.a_port)}")
            )
        if lk.a_device in switches:
            sections[lk.a_device].append(
                (lk.a_port, f"{INDENT}P{lk.a_port + 1} {arrow} {far(lk.b_device, lk.b_port)}")
            )
    blocks = []
    for sw in design.switches:
        lines = [f"{_system_type(sw, catalog)} {sw.id}"]
        lines += [text for _, text in sorted(sections[sw.id])]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"
