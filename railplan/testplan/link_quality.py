"""Link quality: BER, FEC and symbol-error counters of every cable, before and after a soak.

InfiniBand: one fabric-wide ``ibdiagnet`` run clears the port counters and PHY counters
(``--pc --reset_phy_info``) before the soak and reads them after it (``--get_phy_info``: Raw,
Effective and Symbol BER per port into ``ibdiagnet2.net_dump_ext``), as the NVIDIA ibdiagnet
User Manual (PHY Diagnostics, Bit Error Rate) documents. Ethernet: ``ethtool -S`` of every
back-end netdev on each node (mlx5 physical-layer counters, Linux kernel
Documentation/networking/device_drivers/ethernet/mellanox/mlx5/counters.rst) and SONiC's
``show interfaces counters fec-stats`` on each switch, before and after; the deltas are judged.
The soak is the RDMA, pair and NCCL steps, which drive every port at line rate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from railplan.testplan.context import PlanContext
from railplan.testplan.expected import same_check
from railplan.testplan.model import Check, PlanTest, Section

#: NVIDIA's InfiniBand bring-up rules, by the document that sets them
BRINGUP = "NVIDIA InfiniBand Cluster Bring-up Procedure v1.0"
IBDIAG = "NVIDIA ibdiagnet User Manual, Bit Error Rate"


@dataclass(frozen=True, slots=True)
class BerLines:
    """BER lines of one InfiniBand speed class: a port above ``error`` fails its cable; one
    above ``warning`` is named in the detail. ``symbol`` is the Symbol BER ibdiagnet reports
    (errors after FEC and PLR, what applications see on HDR/NDR/XDR), ``effective`` the
    Effective BER (after FEC)."""

    speeds: str
    fec: str
    symbol_error: float
    symbol_warning: float
    effective_error: float
    effective_warning: float
    source: str


#: PAM4 links (HDR 50G, NDR 100G, XDR 200G lanes) run RS-FEC with PLR; NRZ EDR and slower
#: links have no PLR, so their symbol and effective errors are the same count (ibdiagnet User
#: Manual: "symbol errors (NDR/HDR) or effective errors (EDR) are the actual errors seen by
#: the application level after error correction"). Warning lines: one decade under the error
#: line, an estimate (railplan's early warning; the documents give error lines only).
IB_BER_LINES = (
    BerLines("HDR/NDR/XDR (50G+ PAM4 lanes)", "RS-FEC + PLR", 1e-14, 1e-15, 1e-11, 1e-12,
             f"{BRINGUP}: Symbol BER error line 1e-14, Effective (post-FEC) BER 1e-11; "
             "warning lines estimate: one decade under"),
    BerLines("EDR and slower (25G NRZ lanes)", "RS-FEC or none", 1e-12, 1e-13, 1e-12, 1e-13,
             f"{IBDIAG}: BER threshold 10^-12 (default); warning lines estimate: one decade "
             "under"),
)  # fmt: skip
#: a port's BER is judged only after it has been up this long under traffic
IB_MIN_UPTIME_S = 125 * 60
IB_MIN_UPTIME_SOURCE = f"{BRINGUP}: port up at least 125 minutes before BER is judged"
#: involuntary link-downs allowed per port in the soak: none. A port that went down was not up
#: for the whole window, so the uptime rule above cannot hold for it; the count and its rate per
#: 24 h are named (ibqueryerrors LinkDownedCounter, cleared with the PM counters at start)
IB_LINK_DOWNS_ALLOWED = 0
#: where an InfiniBand module's limits come from: the module's own memory map, as NVIDIA's tools
#: read it (mstflint tools_layouts/reg_access_switch_layouts.h, PDDR module info page:
#: temperature_high_th "Alarm high temperature threshold in 1/256 C", rx_power_low_th "Alarm
#: low RX Power threshold in dBm"; mlxlink -m prints them as "[low..high]")
MODULE_LIMITS_SOURCE = (
    "limits are the module's own SFF-8636/CMIS alarm thresholds, as NVIDIA's PDDR module info "
    "page names them (mstflint reg_access_switch_layouts.h: temperature_high_th, "
    "rx_power_low_th 'Alarm ... threshold')"
)
#: kept for scripts and callers that ask for one BER figure: the symbol-BER error line of the
#: fastest class
IB_BER_LIMIT = IB_BER_LINES[0].symbol_error


def ib_ber_lines(port_gbps: float) -> BerLines:
    """The BER lines of a port of ``port_gbps`` on a 4x InfiniBand link (lanes = speed / 4)."""
    return IB_BER_LINES[0] if port_gbps / 4 >= 50 else IB_BER_LINES[1]


#: the pre-FEC BER an Ethernet PAM4 link is designed for: IEEE 802.3 RS(544,514) "KP4" FEC
#: PMDs (200G/400G/800GBASE) are specified at a BER of 2.4e-4 at the FEC input; above it the
#: FEC no longer keeps the link error free
ETH_PRE_FEC_BER_LIMIT = 2.4e-4
#: bits without an error needed to say "BER below L" with 95% confidence: 3 / L (the zero-error
#: "rule of three" of BER testing, -ln(0.05) = 3.0)
CONFIDENCE_BITS_X_BER = 3.0
#: the counters a soak must leave unchanged, by source (names as the tools print them)
ETH_ERROR_COUNTERS = ("rx_pcs_symbol_err_phy", "rx_crc_errors_phy", "rx_symbol_err_phy")
ETH_CORRECTED_COUNTER = "rx_corrected_bits_phy"
ETH_LINK_DOWN_COUNTER = "link_down_events_phy"
SWITCH_ERROR_COLUMN = "FEC_UNCORR"


def soak_seconds(ber_limit: float, rate_gbps: float) -> int:
    """Seconds of line-rate traffic that show a port below ``ber_limit`` with 95% confidence
    when no error is counted, rounded up to a whole minute."""
    bits = CONFIDENCE_BITS_X_BER / ber_limit
    return 60 * math.ceil(bits / (rate_gbps * 1e9) / 60)


def linkq_section(ctx: PlanContext) -> Section:
    """One fabric-wide ibdiagnet test (InfiniBand) or one test per node and switch (Ethernet)."""
    rate = ctx.rates.port_gbps
    limit = ETH_PRE_FEC_BER_LIMIT if ctx.roce else ib_ber_lines(rate).symbol_error
    if ctx.roce:
        soak = soak_seconds(1e-12, rate)
        soak_check = same_check(
            "lq_soak_s", soak, "s", "higher",
            f">= {soak} s of line-rate traffic between the snapshots (the RDMA, pair and NCCL "
            f"steps): 3e12 error-free bits at {rate} Gb/s show BER < 1e-12, 95% confidence",
        )  # fmt: skip
    else:
        soak = max(IB_MIN_UPTIME_S, soak_seconds(limit, rate))
        soak_check = same_check(
            "lq_soak_s", soak, "s", "higher",
            f">= {soak} s between the snapshots with every port up and loaded (the RDMA, pair, "
            f"NCCL and burn-in steps): {IB_MIN_UPTIME_SOURCE}",
        )  # fmt: skip
    tests = _ethernet_tests(ctx, soak_check) if ctx.roce else _ib_tests(ctx, soak_check)
    if ctx.roce:
        intro = (
            "Run 'start' before the RDMA step and 'finish' after the NCCL step: the counters of "
            "every back-end port (ethtool -S on each node, SONiC fec-stats on each switch) are "
            "read before and after, and only their growth during the soak is judged. A port "
            f"whose FEC corrects more than {limit:g} of its bits (pre-FEC BER, IEEE 802.3 "
            "RS(544,514) design limit), or that counts any uncorrectable symbol or CRC error "
            "(mlx5 counters.rst: traffic is lost, replace the cable or transceiver), names its "
            "cable. Pre-FEC BER = growth of rx_corrected_bits_phy / (rate x soak seconds). At "
            "finish, ethtool -m reads each module: its temperature and every lane's RX power "
            "must lie inside the alarm thresholds the module itself reports."
        )
    else:
        intro = (
            "Run 'start' before the RDMA step and 'finish' after the NCCL step, from one host "
            "of the fabric: ibdiagnet clears every port's counters (--pc --reset_phy_info), the "
            "soak runs, then ibdiagnet --get_phy_info reads Raw, Effective and Symbol BER and "
            "the symbol and effective error counts of every port (ibdiagnet2.net_dump_ext), and "
            "ibqueryerrors reads the error counters (LinkDownedCounter) since the clear. The "
            f"window is at least {IB_MIN_UPTIME_S // 60} minutes ({BRINGUP}: a port's BER is "
            f"judged after 125 minutes up). A port above the Symbol BER error line ({limit:g}) "
            "or the Effective BER error line, with a symbol error, or with an involuntary "
            "link-down names its cable id and labels (ibdiagnet's node description and port, "
            "mapped to the design's cable). The finish run adds --get_cable_info: each "
            "module's temperature and per-lane RX power are judged against the thresholds "
            "the module reports, and a module alarm flag fails its cable."
        )
    if ctx.roce and not _mlx5(ctx):
        intro += (
            f" NIC-side counters are read on NVIDIA ConnectX (mlx5) NICs only: this design's "
            f"{ctx.rates.nic_vendor or 'unknown'} NICs name theirs differently, so their "
            "links are judged from the switch side."
        )
    elif ctx.roce and ctx.bonded:
        intro += (
            " Bonded NICs: a LAG device's netdev does not show each member port's physical "
            "counters, so the node links are judged from the switch side (read the members' "
            "ethtool -S by hand when a switch port fails)."
        )
    return Section("linkq", "Link quality", intro, tuple(tests))


def _mlx5(ctx: PlanContext) -> bool:
    """NVIDIA (Mellanox) NICs, whose ethtool -S counters are the mlx5 driver's."""
    return ctx.rates.nic_vendor.lower() in ("nvidia", "mellanox")


def _ib_tests(ctx: PlanContext, soak_check: Check) -> list[PlanTest]:
    host = ctx.design.nodes[0].id
    lines = ib_ber_lines(ctx.rates.port_gbps)
    checks = (
        same_check("lq_ports_over_ber", 0, "ports", "lower",
                   f"Symbol BER of every port <= {lines.symbol_error:g} ({lines.speeds}, "
                   f"{lines.fec}; warning above {lines.symbol_warning:g}): {lines.source}",
                   target=lines.symbol_error),
        same_check("lq_ports_over_effective_ber", 0, "ports", "lower",
                   f"Effective (post-FEC) BER of every port <= {lines.effective_error:g} "
                   f"(warning above {lines.effective_warning:g}): {lines.source}",
                   target=lines.effective_error),
        same_check("lq_ports_with_errors", 0, "ports", "lower",
                   "no Symbol Err counted on any port during the soak: a symbol error is one "
                   "FEC could not correct (Effective Err is reported, not judged)"),
        same_check("lq_link_downs", IB_LINK_DOWNS_ALLOWED, "ports", "lower",
                   "no involuntary link-down (LinkDownedCounter, ibqueryerrors) on any port "
                   "during the soak: a port that went down was not up for the "
                   f"{IB_MIN_UPTIME_S // 60} minutes {BRINGUP} requires before BER is judged",
                   target=IB_LINK_DOWNS_ALLOWED),
        same_check("lq_modules_out_of_limits", 0, "modules", "lower",
                   "module temperature and every lane's RX power inside the thresholds the "
                   "module itself reports, and no module alarm flag set (ibdiagnet "
                   "--get_cable_info after the soak: CABLE_INFO of ibdiagnet2.db_csv; the "
                   f"{MODULE_LIMITS_SOURCE}); a module without thresholds, such as a copper "
                   "DAC, is not judged"),
        soak_check,
    )  # fmt: skip
    command = (
        "ibdiagnet --pc --reset_phy_info -o results/LQ-FABRIC/start"
        "   # before the soak: clears PM and PHY counters",
        "ibdiagnet --get_phy_info --get_cable_info -o results/LQ-FABRIC/finish"
        "   # after the soak: BER per port (ibdiagnet2.net_dump_ext), modules (db_csv)",
        "ibqueryerrors > results/LQ-FABRIC/finish/ibqueryerrors.txt"
        "   # error counters since the clear: LinkDownedCounter per port",
    )
    return [
        PlanTest(
            id="LQ-FABRIC",
            kind="linkq",
            title=(f"every port of the fabric: Symbol BER <= {lines.symbol_error:g}, effective "
                   f"<= {lines.effective_error:g}, no symbol errors, no link-down in "
                   f">= {soak_check.expected / 60:g} min"),
            nodes=(host,),
            command=command,
            checks=checks,
            devices=ctx.devices,
        )
    ]  # fmt: skip


def _ethernet_tests(ctx: PlanContext, soak_check: Check) -> list[PlanTest]:
    devices = tuple(dict.fromkeys(ctx.devices))
    over = same_check(
        "lq_ports_over_ber", 0, "ports", "lower",
        f"pre-FEC BER of every port <= {ETH_PRE_FEC_BER_LIMIT:g}: the BER IEEE 802.3 "
        "RS(544,514) FEC is designed to correct (growth of rx_corrected_bits_phy / bits)",
        target=ETH_PRE_FEC_BER_LIMIT,
    )  # fmt: skip
    errors = same_check(
        "lq_ports_with_errors", 0, "ports", "lower",
        f"{', '.join(ETH_ERROR_COUNTERS)} unchanged through the soak (mlx5 counters.rst: "
        "uncorrected symbols, lost packets)",
    )  # fmt: skip
    downs = same_check(
        "lq_link_downs", 0, "ports", "lower",
        f"{ETH_LINK_DOWN_COUNTER} unchanged through the soak (mlx5 counters.rst: link down "
        "events); a port that went down was not up for the whole window",
        target=0,
    )  # fmt: skip
    modules = same_check(
        "lq_modules_out_of_limits", 0, "ports", "lower",
        "module temperature and every lane's RX power inside the alarm thresholds the module "
        "itself reports (ethtool -m after the soak: SFF-8472/SFF-8636/CMIS diagnostics; a "
        "warning threshold crossed is reported, not failed; a module without thresholds, such "
        "as a copper DAC, is not judged)",
    )  # fmt: skip
    dev0 = devices[0]
    node_cmd = (
        f"ethtool -S $(ibdev2netdev | awk '$1==\"{dev0}\"{{print $5}}')"
        "   # start and finish; repeat for each device",
        f"ethtool --show-fec $(ibdev2netdev | awk '$1==\"{dev0}\"{{print $5}}')"
        "   # Active FEC encoding: RS",
        f"ethtool -m $(ibdev2netdev | awk '$1==\"{dev0}\"{{print $5}}')"
        "   # finish: module temperature, RX power per lane, and the module's own thresholds",
    )
    tests = [
        PlanTest(
            id=f"LQ-{node.id}",
            kind="linkq",
            title=f"{node.id}: {len(devices)} ports, pre-FEC BER and uncorrectable errors",
            nodes=(node.id,),
            command=node_cmd,
            checks=(over, errors, downs, modules, soak_check),
            refs=tuple(ctx.node_ref(node.id, p) for p in range(ctx.design.shape.ports)),
            devices=ctx.devices,
        )
        for node in ctx.design.nodes
    ]
    if not _mlx5(ctx) or ctx.bonded:
        tests = []  # the counter names above are the mlx5 driver's: other NICs' differ
    sw_errors = same_check(
        "lq_ports_with_errors", 0, "ports", "lower",
        f"{SWITCH_ERROR_COLUMN} (uncorrectable FEC codewords) unchanged through the soak on "
        "every cabled port",
    )  # fmt: skip
    sw_cmd = ("show interfaces counters fec-stats   # SONiC; start and finish",)
    cabled: dict[str, list[str]] = {}
    for lk in ctx.design.links:
        for dev in (lk.a_device, lk.b_device):
            if dev in ctx.fabric.switches:
                cabled.setdefault(dev, []).append(ctx.fabric.cable(lk))
    for sw in ctx.design.switches:
        if sw.id not in cabled:
            continue
        tests.append(
            PlanTest(
                id=f"LQ-{sw.id}",
                kind="linkq",
                title=f"{sw.id}: {len(cabled[sw.id])} cabled ports, no uncorrectable FEC",
                nodes=(),
                command=sw_cmd,
                checks=(sw_errors, soak_check),
                refs=tuple(cabled[sw.id]),
            )
        )
    return tests
