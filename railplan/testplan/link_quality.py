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

from railplan.testplan.context import PlanContext
from railplan.testplan.expected import same_check
from railplan.testplan.model import Check, PlanTest, Section

#: the BER an InfiniBand port must stay below: ibdiagnet's documented BER test threshold,
#: 10^-12 (ibdiagnet User Manual, Bit Error Rate: "--ber_test ... default threshold 10^-12");
#: applied to the Effective BER (after FEC) and the Symbol BER ``--get_phy_info`` reports
IB_BER_LIMIT = 1e-12
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
SWITCH_ERROR_COLUMN = "FEC_UNCORR"


def soak_seconds(ber_limit: float, rate_gbps: float) -> int:
    """Seconds of line-rate traffic that show a port below ``ber_limit`` with 95% confidence
    when no error is counted, rounded up to a whole minute."""
    bits = CONFIDENCE_BITS_X_BER / ber_limit
    return 60 * math.ceil(bits / (rate_gbps * 1e9) / 60)


def linkq_section(ctx: PlanContext) -> Section:
    """One fabric-wide ibdiagnet test (InfiniBand) or one test per node and switch (Ethernet)."""
    rate = ctx.rates.port_gbps
    limit = ETH_PRE_FEC_BER_LIMIT if ctx.roce else IB_BER_LIMIT
    soak = soak_seconds(IB_BER_LIMIT, rate)
    soak_check = same_check(
        "lq_soak_s", soak, "s", "higher",
        f">= {soak} s of line-rate traffic between the snapshots (the RDMA, pair and NCCL "
        f"steps): 3e12 error-free bits at {rate} Gb/s show BER < 1e-12, 95% confidence",
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
            "cable. Pre-FEC BER = growth of rx_corrected_bits_phy / (rate x soak seconds)."
        )
    else:
        intro = (
            "Run 'start' before the RDMA step and 'finish' after the NCCL step, from one host "
            "of the fabric: ibdiagnet clears every port's counters (--pc --reset_phy_info), the "
            "soak runs, then ibdiagnet --get_phy_info reads Raw, Effective and Symbol BER and "
            "the symbol and effective error counts of every port (ibdiagnet2.net_dump_ext). A "
            f"port above {limit:g} effective or symbol BER (ibdiagnet's BER threshold), or with "
            "any symbol error counted in the soak, names its cable (ibdiagnet's node "
            "description and port, mapped to the design's cable id)."
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
    checks = (
        same_check("lq_ports_over_ber", 0, "ports", "lower",
                   f"Effective BER and Symbol BER of every port <= {IB_BER_LIMIT:g} "
                   "(ibdiagnet User Manual, Bit Error Rate: default BER threshold 10^-12)",
                   target=IB_BER_LIMIT),
        same_check("lq_ports_with_errors", 0, "ports", "lower",
                   "no Symbol Err counted on any port during the soak: a symbol error is one "
                   "FEC could not correct (Effective Err is reported, not judged)"),
        soak_check,
    )  # fmt: skip
    command = (
        "ibdiagnet --pc --reset_phy_info -o results/LQ-FABRIC/start"
        "   # before the soak: clears PM and PHY counters",
        "ibdiagnet --get_phy_info -o results/LQ-FABRIC/finish"
        "   # after the soak: BER per port in ibdiagnet2.net_dump_ext",
    )
    return [
        PlanTest(
            id="LQ-FABRIC",
            kind="linkq",
            title=f"every port of the fabric: BER <= {IB_BER_LIMIT:g}, no symbol errors",
            nodes=(host,),
            command=command,
            checks=checks,
            devices=ctx.devices,
        )
    ]


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
    dev0 = devices[0]
    node_cmd = (
        f"ethtool -S $(ibdev2netdev | awk '$1==\"{dev0}\"{{print $5}}')"
        "   # start and finish; repeat for each device",
        f"ethtool --show-fec $(ibdev2netdev | awk '$1==\"{dev0}\"{{print $5}}')"
        "   # Active FEC encoding: RS",
    )
    tests = [
        PlanTest(
            id=f"LQ-{node.id}",
            kind="linkq",
            title=f"{node.id}: {len(devices)} ports, pre-FEC BER and uncorrectable errors",
            nodes=(node.id,),
            command=node_cmd,
            checks=(over, errors, soak_check),
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
