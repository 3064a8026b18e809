"""Firmware as planned: switches, NICs and (InfiniBand) cable modules, each model on one version.

One fleet-wide test, ``FW-FABRIC``. InfiniBand: one ``ibdiagnet --get_cable_info`` run reads
every node's General Info firmware (``NODES_INFO``: switches and HCAs) and every module's
firmware (``CABLE_INFO`` FWVersion) into ``ibdiagnet2.db_csv`` (NVIDIA ibdiagnet User
Manual, cable diagnostics: ``--get_cable_info``). Ethernet: ``ethtool -i`` of every back-end
netdev (``firmware-version:``, the kernel's vendor-neutral read: mlx5, bnxt_en, ionic) and
each switch's own ``show version`` (SONiC). The design names no firmware version, so the
reference of each model is the version most of its devices run; every other device is named.
Module firmware on Ethernet is not read: ``ethtool -m`` prints no module firmware version in
the outputs railplan's sources show, so the check is InfiniBand's only.
"""

from __future__ import annotations

from railplan.testplan.context import PlanContext
from railplan.testplan.expected import same_check
from railplan.testplan.model import PlanTest

_RULE = "every device of one model on one version (the version most of them run)"


def firmware_test(ctx: PlanContext) -> tuple[PlanTest, str]:
    """The ``FW-FABRIC`` test (firmware outliers among switches, NICs and modules) and the
    sentences the fabric section's intro gives it."""
    checks = [
        same_check("fw_switch_outliers", 0, "switches", "lower",
                   f"switch firmware: {_RULE}; each outlier named"),
        same_check("fw_nic_outliers", 0, "NIC ports", "lower",
                   f"NIC firmware: {_RULE}; each outlier named with its node port and cable"),
    ]  # fmt: skip
    command: tuple[str, ...]
    if ctx.roce:
        dev0 = ctx.devices[0]
        command = (
            f"ethtool -i $(rdma link show {dev0}/1 | awk '{{print $NF}}')   # each node, each "
            "device: firmware-version; into results/FW-FABRIC/nodes/<node>-<device>.txt",
            "show version   # each switch (SONiC: SONiC Software Version, HwSKU); into "
            "results/FW-FABRIC/switches/<switch>.txt",
        )
        intro = (
            "Firmware (FW-FABRIC): run once from the control host: ethtool -i of every back-end netdev on every node "
            "and show version on every switch. Each NIC model (driver) and switch model "
            "(HwSKU) must run one firmware version; the design names none, so the version most "
            "of them run is the reference and every other device is named. A tool that is not "
            "installed leaves its devices 'not measured'. Module firmware is not read on "
            "Ethernet (ethtool -m shows none)."
        )
    else:
        checks.append(
            same_check("fw_module_outliers", 0, "modules", "lower",
                       f"cable module firmware (CABLE_INFO FWVersion): {_RULE} per part "
                       "number; each outlier named with its cable id and labels"),
        )  # fmt: skip
        command = (
            "ibdiagnet --get_cable_info -o results/FW-FABRIC   # once: NODES_INFO firmware of "
            "every switch and HCA, CABLE_INFO firmware of every module (ibdiagnet2.db_csv)",
        )
        intro = (
            "Firmware (FW-FABRIC): run once from any node: ibdiagnet --get_cable_info writes every switch's and "
            "HCA's firmware version (NODES_INFO) and every cable module's (CABLE_INFO) to "
            "ibdiagnet2.db_csv. Each model (DeviceID; modules: part number) must run one "
            "version; the design names none, so the version most of them run is the reference "
            "and every other device is named (modules with their cable id and labels). Without "
            "ibdiagnet the checks are 'not measured'."
        )
    test = PlanTest(
        id="FW-FABRIC",
        kind="firmware",
        title=(
            "firmware: every switch and NIC model on one version"
            if ctx.roce
            else "firmware: every switch, HCA and module model on one version"
        ),
        nodes=(),
        command=command,
        checks=tuple(checks),
        devices=ctx.devices,
    )
    return test, intro


__all__ = ["firmware_test"]
