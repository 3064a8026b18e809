"""InfiniBand topology file (``ibdiagnet --topo_file``, IBDM topology-file grammar) of the fabric.

The grammar is the IBDM topology file's (ibutils' ``ibdm-topo-file`` manual and its parser,
``IBFabric::parseTopology``): one section per system, a declaration line ``SYSTEM-TYPE
SYSTEM-NAME`` (no ``/`` in either) followed by *indented* port lines ``LOCAL-PORT -> REM-SYS-TYPE
REM-SYS-NAME REM-PORT``, sections separated by blank lines, ``#`` starting a comment line. Switch
ports are ``P1``..``Pn`` as the switch reports them; a host (a node or an attached device such as
a UFM appliance) is declared by the type ``HCA_mlx5_<n>`` (n: its fabric ports) and its port k
is ``mlx5_<k>/P1`` (each ConnectX port is its own mlx5 device with one port, as the field check
reads ``mlx5_<k>``). Switch-to-switch links appear in both switches' sections, as ibdiagnet
writes them.

Two dialects:

- ``ufm`` (default): the arrow carries the link width and lane speed as NVIDIA's own topo files
  do (UFM's "Topo File" example: ``P2 -4x-50G-> HCA_mlx5_3 swx-ufm3-04 mlx5_0/P1``): NDR is
  ``-4x-100G->``.
- ``ibdm-1.5``: what Debian's ibutils 1.5.7 IBDM reads. Its port-line pattern (the regular
  expression in ``libibdm``: ``-((1|4|8|12)[xX]-)?((2.5|5|10)G-)?[>]``) knows the lane speeds
  2.5/5/10G only and no 2x width, and it skips any other line with "-W- Ignoring line"; this
  dialect writes the width alone (``-4x->``; a plain ``->`` for a 2x link), and IBDM takes the
  speed from the system definitions. ``ibnl_files`` gives those definitions (IBNL, the
  ``ibdm-ibnl-file`` manual's grammar) for every system type of the file: IBDM finds them in the
  folders of ``IBDM_IBNL_PATH`` beside its own.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Literal

from railplan.catalog import Catalog
from railplan.design import Design, Switch
from railplan.errors import InfeasibleError

#: link width and lane speed of an InfiniBand port by its rate (NDR: 4 lanes of 100G)
WIDTH_SPEED = {800: "4x-200G", 400: "4x-100G", 200: "2x-100G", 100: "4x-25G"}
#: link widths the ibdm 1.5 reader accepts in an arrow (its pattern: ``(1|4|8|12)[xX]``)
IBDM15_WIDTHS = ("1x", "4x", "8x", "12x")
#: how far a port line is indented (NVIDIA's examples use three spaces; the grammar wants any)
INDENT = "   "
DIALECTS = ("ufm", "ibdm-1.5")
Dialect = Literal["ufm", "ibdm-1.5"]


def system_type(sw: Switch, catalog: Catalog) -> str:
    """The system type of a switch as NVIDIA names it: ``MQM9700`` for the catalog's qm9700."""
    model = catalog.switches.get(sw.model)
    name = model.id if model else sw.model
    return "M" + name.upper() if name.lower().startswith("qm") else name.upper()


def host_type(design: Design, device: str | None = None) -> str:
    """The system type of a host: ``HCA_mlx5_<its mlx5 devices>``, one per fabric port.

    Nodes have the node shape's ports; an attached device (``device``) its own port count.
    """
    for dev in design.devices:
        if dev.id == device:
            return f"HCA_mlx5_{dev.ports}"
    return f"HCA_mlx5_{design.shape.ports}"


def host_port(port: int) -> str:
    """A host port in the file: port k is HCA ``mlx5_<k>``, its port 1."""
    return f"mlx5_{port}/P1"


def _arrow(rate_gbps: int, dialect: Dialect) -> str:
    width_speed = WIDTH_SPEED.get(rate_gbps, "4x")
    if dialect == "ufm":
        return f"-{width_speed}->"
    width = width_speed.split("-", 1)[0]
    return f"-{width}->" if width in IBDM15_WIDTHS else "->"


def _check_infiniband(design: Design, catalog: Catalog) -> None:
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


def render(design: Design, catalog: Catalog, dialect: Dialect = "ufm") -> str:
    """The topology file text; switches in design order, ports in number order.

    Raises InfeasibleError for an Ethernet fabric (the file describes InfiniBand subnets).
    """
    if dialect not in DIALECTS:
        raise InfeasibleError(
            f"topo dialect {dialect!r} is unknown; use one of {', '.join(DIALECTS)}"
        )
    _check_infiniband(design, catalog)
    switches = design.switch_by_id()
    sections: dict[str, list[tuple[int, str]]] = defaultdict(list)

    def far(device: str, port: int) -> str:
        sw = switches.get(device)
        if sw is None:
            return f"{host_type(design, device)} {device} {host_port(port)}"
        return f"{system_type(sw, catalog)} {device} P{port + 1}"

    for lk in design.links:
        arrow = _arrow(lk.rate_gbps, dialect)
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
        lines = [f"{system_type(sw, catalog)} {sw.id}"]
        lines += [text for _, text in sorted(sections[sw.id])]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


def ibnl_files(design: Design, catalog: Catalog) -> dict[str, str]:
    """IBNL system definitions (file name -> text) of every system type the topology file names.

    A switch type is one ``NODE SW <radix>`` whose IB port n is front-panel port ``Pn``; a host
    type ``HCA_mlx5_<n>`` is n single-port ``NODE CA`` devices ``mlx5_<k>`` whose port 1 is the
    system port ``mlx5_<k>/P1``. Width and speed are left to the reader's defaults: the IBNL
    grammar knows 4x/8x/12x and 2.5/5/10G only (``ibdm-ibnl-file``, section 4).
    """
    _check_infiniband(design, catalog)
    out: dict[str, str] = {}
    for sw in design.switches:
        kind = system_type(sw, catalog)
        if f"{kind}.ibnl" in out:
            continue
        lines = [f"TOPSYSTEM {kind}", "", f"NODE SW {sw.radix} {kind} U1"]
        lines += [f"{INDENT}{n} -> P{n}" for n in range(1, sw.radix + 1)]
        out[f"{kind}.ibnl"] = "\n".join(lines) + "\n"
    linked = {lk.a_device for lk in design.links} | {lk.b_device for lk in design.links}
    hosts = {host_type(design, n.id) for n in design.nodes if n.id in linked}
    hosts |= {host_type(design, d.id) for d in design.devices if d.id in linked}
    for kind in sorted(hosts):
        count = int(kind.rsplit("_", 1)[1])
        lines = [f"TOPSYSTEM {kind}"]
        for k in range(count):
            lines += ["", f"NODE CA 1 ConnectX mlx5_{k}", f"{INDENT}1 -> mlx5_{k}/P1"]
        out[f"{kind}.ibnl"] = "\n".join(lines) + "\n"
    return dict(sorted(out.items()))
