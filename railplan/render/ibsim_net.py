"""The design as an ibsim network file: the InfiniBand fabric simulator (linux-rdma/ibsim) loads it.

The format is ibsim's own (its ``net-examples/net.2sw2path4hca2port`` header and its parser,
``ibsim/sim_net.c``: ``parse_netconf``, ``parse_switch``, ``parse_endnode``, ``parse_port``,
``parse_port_opt``). A record is a header line ``Switch|Hca <ports> "<nodeid>" # "<description>"``
followed by one line per cabled port, ``[<port>] "<remote nodeid>"[<remote port>]``, and ends at
the first line that starts with neither ``[`` nor ``#``. Options after the remote port set what
the port enables, as bit masks of the InfiniBand PortInfo fields: ``w=`` LinkWidthEnabled (1x=1,
4x=2, 8x=4, 12x=8, 2x=16), ``s=`` LinkSpeedEnabled (SDR|DDR|QDR = 7), ``e=`` LinkSpeedExtEnabled
(FDR=1, EDR=2, HDR=4, NDR=8); ibsim brings each link up at the highest width and speed both ends
enable (``get_active_linkwidth``, ``get_active_linkspeedext``).

Names follow what the real fabric reports, so a capture of the simulated fabric reads as a capture
of the site: a switch's description is NVIDIA's ``MF0;<name>:<model>/U1`` (``MQM9700``); a node or attached
device port ``k`` is its own single-port HCA described ``<name> mlx5_<k>`` (each ConnectX port is
its own ``mlx5_<k>`` device on the host); switch port ``P<n>`` (logical port n-1) is IB port n.

**Simulator limit**: Debian's ibsim 0.10 knows lane speeds up to HDR (50 Gb/s; NDR came with
ibsim 0.11). ``speed="rate"`` keeps every link's data rate by trading lanes for lane speed (an
NDR 4x link, 400 Gb/s, is simulated as 8x HDR; 100 Gb/s as 4x EDR); ``speed="lanes"`` keeps the
planned width and caps the lane speed at HDR, so a 400 Gb/s NDR link comes up at 4x HDR = 200 Gb/s,
as an NDR link negotiated down to HDR would on a real fabric.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from railplan.catalog import Catalog
from railplan.design import Design
from railplan.errors import InfeasibleError
from railplan.render.ibtopo import system_type

#: LinkWidthEnabled bit of each width (IBA PortInfo; ibsim/sim.h LINKWIDTH_*)
WIDTH_BITS = {1: 1, 4: 2, 8: 4, 12: 8, 2: 16}
#: LinkSpeedExtEnabled bit of each lane speed in Gb/s (ibsim/sim.h LINKSPEEDEXT_*), up to HDR
EXT_BITS = {14.0: 1, 25.0: 2, 50.0: 4}
#: the fastest lane Debian's ibsim 0.10 simulates (HDR), Gb/s
MAX_LANE_GBPS = 50.0
#: InfiniBand lanes of a port at its native lane speed: NDR 4x100G, XDR 4x200G, HDR 4x50G, ...
NATIVE_LANES = 4
#: LinkSpeedEnabled SDR|DDR|QDR: every port enables the base speeds too, as hardware does
BASE_SPEEDS = 7
#: IB node descriptions are 64 bytes (NodeDescription attribute); ibsim node ids < 65 bytes
MAX_NAME = 63


@dataclass(frozen=True, slots=True, order=True)
class NetEnd:
    """One cabled port: a device name and its logical port index (0-based)."""

    device: str
    port: int


@dataclass(frozen=True, slots=True)
class NetCable:
    """A cable between two ports at a data rate, Gb/s."""

    a: NetEnd
    b: NetEnd
    rate_gbps: int


def planned_cables(design: Design) -> list[NetCable]:
    """Every link of the design as a cable, in design order."""
    return [
        NetCable(NetEnd(lk.a_device, lk.a_port), NetEnd(lk.b_device, lk.b_port), lk.rate_gbps)
        for lk in design.links
    ]


def width_and_lane(rate_gbps: int, speed: Literal["rate", "lanes"]) -> tuple[int, float]:
    """The simulated (width, lane Gb/s) of a link: the same rate, or the planned width at HDR."""
    native = rate_gbps / NATIVE_LANES
    if native <= MAX_LANE_GBPS and native in EXT_BITS:
        return NATIVE_LANES, native
    if speed == "lanes":
        return NATIVE_LANES, MAX_LANE_GBPS
    for width in (4, 8, 12):
        lane = rate_gbps / width
        if lane in EXT_BITS:
            return width, lane
    raise InfeasibleError(
        f"ibsim 0.10 cannot carry a {rate_gbps} Gb/s link at its rate (widest 12x of HDR lanes "
        "is 600 Gb/s); render it with speed='lanes' to simulate it at 4x HDR"
    )


def _check_name(name: str) -> str:
    if len(name) > MAX_NAME or '"' in name or "@" in name or not name.isprintable():
        raise InfeasibleError(
            f"device name {name!r} cannot be an ibsim node id (at most {MAX_NAME} printable "
            "characters, no '\"' or '@')"
        )
    return name


def _switch_description(name: str, model: str) -> str:
    return f"MF0;{name}:{model}/U1"


def render(
    design: Design,
    catalog: Catalog | None = None,
    cables: Iterable[NetCable] | None = None,
    *,
    speed: Literal["rate", "lanes"] = "rate",
) -> str:
    """The ibsim network file of ``design`` cabled as ``cables`` (default: as planned).

    A cable end on a device the design does not have (a foreign host) is a host port. Raises
    InfeasibleError for an Ethernet fabric, a port cabled twice or a port beyond its switch.
    """
    if catalog is not None:
        ethernet = sorted(
            {
                sw.model
                for sw in design.switches
                if sw.model in catalog.switches
                and catalog.switches[sw.model].protocol != "infiniband"
            }
        )
        if ethernet:
            raise InfeasibleError(
                f"{', '.join(ethernet)} is an Ethernet switch; ibsim simulates InfiniBand "
                "fabrics only"
            )
    switches = design.switch_by_id()
    listed: Sequence[NetCable] = planned_cables(design) if cables is None else list(cables)

    def node_id(end: NetEnd) -> str:
        if end.device in switches:
            return _check_name(end.device)
        return _check_name(f"{end.device}-mlx5_{end.port}")

    def ib_port(end: NetEnd) -> int:
        if end.device in switches:
            sw = switches[end.device]
            if not 0 <= end.port < sw.radix:
                raise InfeasibleError(
                    f"{end.device} has ports 0..{sw.radix - 1}, not {end.port} (a cable's end)"
                )
            return end.port + 1
        return 1

    lines: dict[str, list[tuple[int, str]]] = defaultdict(list)
    hosts: dict[str, str] = {}
    used: set[NetEnd] = set()
    for cable in listed:
        width, lane = width_and_lane(cable.rate_gbps, speed)
        opts = f"w={WIDTH_BITS[width]} s={BASE_SPEEDS} e={EXT_BITS[lane]}"
        for near, far in ((cable.a, cable.b), (cable.b, cable.a)):
            if near in used:
                raise InfeasibleError(f"{near.device} port {near.port} is cabled twice")
            used.add(near)
            nid = node_id(near)
            if near.device not in switches:
                hosts[nid] = f"{near.device} mlx5_{near.port}"
            lines[nid].append(
                (ib_port(near), f'[{ib_port(near)}]\t"{node_id(far)}"[{ib_port(far)}]\t{opts}')
            )
    out = [
        "# ibsim network file of design " + design.name + " (railplan; format: ibsim sim_net.c)",
        "",
    ]
    for sw in design.switches:  # the first port of the file is the SM's: a switch's, port 0
        model = system_type(sw, catalog) if catalog is not None else sw.model.upper()
        out.append(f'Switch\t{sw.radix} "{sw.id}"\t# "{_switch_description(sw.id, model)}"')
        out += [text for _, text in sorted(lines[sw.id])]
        out.append("")
    for nid in sorted(hosts):
        out.append(f'Hca\t1 "{nid}"\t# "{hosts[nid]}"')
        out += [text for _, text in sorted(lines[nid])]
        out.append("")
    return "\n".join(out)


def limits(design: Design, extra_hosts: int = 0) -> tuple[int, int, int]:
    """(nodes, switches, ports) the simulator must hold: ibsim's ``-N``, ``-S``, ``-P`` options.

    Every cabled host port is its own single-port HCA; ibsim keeps port 0 of every node too.
    """
    switches = len(design.switches)
    ids = design.switch_by_id()
    ends = {
        (d, p)
        for lk in design.links
        for d, p in ((lk.a_device, lk.a_port), (lk.b_device, lk.b_port))
    }
    hosts = sum(1 for d, _ in ends if d not in ids) + extra_hosts
    ports = sum(sw.radix + 1 for sw in design.switches) + 2 * hosts
    return hosts + switches, switches, ports
