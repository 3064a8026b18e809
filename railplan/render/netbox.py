"""NetBox bulk-import CSVs (racks, devices, interfaces, cables) with the columns NetBox's forms take.

Columns follow NetBox's DCIM import forms (``RackImportForm``, ``DeviceImportForm``,
``InterfaceImportForm``, ``CableImportForm`` in netbox/dcim/forms/bulk_import.py); choice values
are the slugs of NetBox's own choice sets in netbox/dcim/choices.py (``InterfaceTypeChoices``:
``400gbase-x-osfp``, ``infiniband-ndr``; ``CableTypeChoices``: ``dac-passive``, ``mmf-om4``) and
colours come from ``ColorChoices`` (netbox/netbox/choices.py); the tests check every value
against a copy of those lists. Sites, manufacturers, device roles and device types must exist in
NetBox before the import (the import matches them by name, and device types by model).

Several designs in one NetBox: ``render(..., scoped=True)`` (``railplan cables --format netbox
--netbox-site NAME``) names every device ``<design id>.<site slug>``. NetBox keeps device names
unique per site only, but ``InterfaceImportForm`` looks its ``device`` column up by name across
every site, so a second design's ``node0001`` made the interface import fail; the scoped name is
unique across designs and reads as a host name whose first label is the design id (as the
as-built check understands it). Racks keep their names: ``DeviceImportForm`` looks its ``rack``
column up within the row's site. A twin-port DAC or a splitter is one physical cable with several
legs; ``CableImportForm._clean_side`` sets exactly one termination per side, so the CSV import
cannot make one NetBox cable with two terminations per end: each leg is its own NetBox cable
whose label is its end labels' cable ID, the physical cable's ID and the leg
(``C00017 P00009 A2-B2``), and whose description names the physical cable and its leg count. Each file is imported in one database transaction
(``BulkImportView`` in netbox/netbox/views/generic/bulk_views.py), in the order of ``render``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from railplan.catalog import Catalog
from railplan.design import Cable, Design
from railplan.errors import SpecError
from railplan.render.cables_csv import ScheduleRow, schedule, to_csv

RACK_COLUMNS = ("site", "name", "status", "width", "u_height", "description")
DEVICE_COLUMNS = (
    "name",
    "role",
    "manufacturer",
    "device_type",
    "status",
    "site",
    "rack",
    "position",
    "face",
    "description",
)
INTERFACE_COLUMNS = ("device", "name", "label", "type", "speed", "enabled", "description")
CABLE_COLUMNS = (
    "side_a_site",
    "side_a_device",
    "side_a_type",
    "side_a_name",
    "side_b_site",
    "side_b_device",
    "side_b_type",
    "side_b_name",
    "type",
    "status",
    "label",
    "color",
    "length",
    "length_unit",
    "description",
)
#: NetBox ColorChoices hex values for the TIA-598 colour names cables carry
COLOUR_HEX = {
    "blue": "2196f3",
    "orange": "ff9800",
    "green": "4caf50",
    "brown": "795548",
    "slate": "607d8b",
    "white": "ffffff",
    "red": "f44336",
    "black": "111111",
    "yellow": "ffeb3b",
    "violet": "9c27b0",
    "rose": "ffe4e1",
    "aqua": "00ffff",
}
ROLE_NAMES = {
    "leaf": "Leaf",
    "spine": "Spine",
    "core": "Core",
    "tor": "ToR",
    "leaf-a": "Leaf A",
    "leaf-b": "Leaf B",
    "rail": "Rail switch",
}
_ETHERNET_FF = {
    "osfp": "osfp",
    "osfp-rhs": "osfp-rhs",  # NetBox has 400gbase-x-osfp-rhs; else the OSFP type (below)
    "qsfp-dd": "qsfpdd",
    "qsfp112": "qsfp112",
    "qsfp56": "qsfp56",
}
_ETHERNET_TYPES = {
    "400gbase-x-osfp",
    "400gbase-x-osfp-rhs",
    "400gbase-x-qsfpdd",
    "400gbase-x-qsfp112",
    "200gbase-x-qsfp56",
    "200gbase-x-qsfpdd",
    "800gbase-x-osfp",
    "800gbase-x-qsfpdd",
    "100gbase-x-qsfp28",
    "100gbase-x-qsfpdd",
}
#: NetBox names InfiniBand ports by data rate only (no link width): EDR 100G ... XDR 800G
_INFINIBAND_TYPES = {
    100: "infiniband-edr",
    200: "infiniband-hdr",
    400: "infiniband-ndr",
    800: "infiniband-xdr",
}


#: NetBox's Device.name max_length (netbox/dcim/models/devices.py)
DEVICE_NAME_MAX = 64


def site_slug(site: str) -> str:
    """The site name as a DNS-like label: lower case, runs of other characters as one dash."""
    slug = re.sub(r"[^a-z0-9]+", "-", site.lower()).strip("-")
    if not slug:
        raise SpecError(
            f"--netbox-site {site!r} has no letter or digit to scope device names with; "
            "give a site name such as dc1-hall2"
        )
    return slug


class _Names:
    """Design device id -> NetBox device name (the id itself, or ``id.site-slug`` when scoped)."""

    def __init__(self, site: str, scoped: bool) -> None:
        self.suffix = f".{site_slug(site)}" if scoped else ""

    def __call__(self, device: str) -> str:
        name = device + self.suffix
        if len(name) > DEVICE_NAME_MAX:
            raise SpecError(
                f"NetBox device name {name!r} is longer than NetBox's {DEVICE_NAME_MAX} "
                "characters; give a shorter --netbox-site"
            )
        return name


def interface_type(protocol: str, speed_gbps: int, form_factor: str) -> str:
    """NetBox interface type slug for a port, ``other`` when NetBox has no exact one."""
    if protocol == "infiniband":
        return _INFINIBAND_TYPES.get(speed_gbps, "other")
    for ff in (_ETHERNET_FF.get(form_factor, form_factor), form_factor.removesuffix("-rhs")):
        slug = f"{speed_gbps}gbase-x-{ff}"
        if slug in _ETHERNET_TYPES:
            return slug  # a flat-top OSFP without its own type is still an OSFP interface
    return "other"


def cable_type(catalog: Catalog, media: str) -> str:
    """NetBox cable type slug of a catalog cable part."""
    part = catalog.cables.get(media)
    if part is None:
        return ""
    if part.optical:  # cords, harnesses and trunks
        return "mmf-om4" if part.fibre == "mmf" else "smf-os2"
    return {"dac": "dac-passive", "acc": "dac-active", "aec": "dac-active", "aoc": "aoc"}[part.kind]


def _protocol(design: Design, catalog: Catalog) -> str:
    model = catalog.switches.get(design.sizing.switch_model)
    return model.protocol if model else "ethernet"


def racks_csv(design: Design, site: str) -> str:
    rows = [
        (site, r.id, "planned", 19, r.height_u, f"{r.kind} rack, row {r.row + 1}")
        for r in design.racks
    ]
    return to_csv(RACK_COLUMNS, rows)


def devices_csv(design: Design, catalog: Catalog, site: str, scoped: bool = False) -> str:
    named = _Names(site, scoped)
    where = {p.device: p for p in design.placements}
    node_model = catalog.nodes.get(design.shape.model)
    rows = []
    for node in design.nodes:
        p = where[node.id]
        device_type = node_model.name if node_model else design.shape.model
        rows.append(
            (
                named(node.id),
                "GPU node",
                _node_vendor(design, catalog),
                device_type,
                "planned",
                site,
                p.rack,
                p.u,
                "front",
                f"SU {node.su + 1}",
            )
        )
    for dev in design.devices:  # attached devices on reserved leaf ports (e.g. UFM)
        p = where[dev.id]
        rows.append(
            (
                named(dev.id),
                dev.purpose,
                "Generic",
                dev.purpose,
                "planned",
                site,
                p.rack,
                p.u,
                "front",
                f"on reserved leaf ports of SU {dev.su + 1}",
            )
        )
    for sw in design.switches:
        p = where[sw.id]
        model = catalog.switches.get(sw.model)
        rows.append(
            (
                named(sw.id),
                ROLE_NAMES.get(sw.role, sw.role),
                model.vendor if model else "",
                model.name if model else sw.model,
                "planned",
                site,
                p.rack,
                p.u,
                "front",
                f"plane {sw.plane}" + (f", rail {sw.rail}" if sw.rail >= 0 else ""),
            )
        )
    return to_csv(DEVICE_COLUMNS, rows)


def _node_vendor(design: Design, catalog: Catalog) -> str:
    """The server's maker from the node model (``vendor``), else "Generic" (an OEM class)."""
    node = catalog.nodes.get(design.shape.model)
    return node.vendor if node is not None and node.vendor else "Generic"


def interfaces_csv(
    design: Design,
    catalog: Catalog,
    site: str = "",
    scoped: bool = False,
    scheduled: Sequence[ScheduleRow] | None = None,
) -> str:
    """Every cabled port of every device (the ports the cables import terminates on);
    ``scheduled``: the design's ``schedule`` when the caller has it."""
    named = _Names(site, scoped)
    protocol = _protocol(design, catalog)
    node_ff = design.shape.form_factor
    ff_of = {m.id: m.form_factor for m in catalog.switches.values()}
    switches = design.switch_by_id()
    devices = design.device_by_id()
    keyed: list[tuple[tuple[str, int], tuple[object, ...]]] = []
    for row in schedule(design) if scheduled is None else scheduled:
        for end, port in ((row.a, row.link.a_port), (row.b, row.link.b_port)):
            sw = switches.get(end.device)
            dev = devices.get(end.device)
            ff = ff_of.get(sw.model, "") if sw is not None else node_ff
            ff = dev.form_factor if dev is not None else ff
            keyed.append(
                (
                    (end.device, port),
                    (
                        named(end.device),
                        end.port,
                        row.cable.label_a if end is row.a else row.cable.label_b,
                        interface_type(protocol, row.link.rate_gbps, ff),
                        row.link.rate_gbps * 1_000_000,
                        "true",
                        f"port {port + 1}, plane {row.link.plane}",
                    ),
                )
            )
    keyed.sort(key=lambda kv: kv[0])
    return to_csv(INTERFACE_COLUMNS, [r for _, r in keyed])


def cable_label(cable: Cable, legs: int) -> str:
    """A NetBox cable's label: the cable ID of its end labels, then the physical cable's ID and
    the leg when that physical cable has several legs (``C00017 P00009 A2-B2``)."""
    if legs > 1 and cable.physical:
        return f"{cable.id} {cable.physical} {cable.leg}".rstrip()
    return cable.id


def cables_csv(
    design: Design,
    catalog: Catalog,
    site: str,
    scoped: bool = False,
    scheduled: Sequence[ScheduleRow] | None = None,
) -> str:
    """One NetBox cable per link (per leg of a multi-leg physical cable), labelled by its ID;
    ``scheduled``: the design's ``schedule`` when the caller has it."""
    named = _Names(site, scoped)
    legs = Counter(c.physical for c in design.cables if c.physical)
    rows = []
    for row in schedule(design) if scheduled is None else scheduled:
        c = row.cable
        optics = " + ".join(t for t in (c.transceiver_a, c.transceiver_b) if t)
        what = c.media + (f" with {optics}" if optics else "")
        n = legs.get(c.physical, 0)
        if n > 1:
            what += f"; leg {c.leg} of physical cable {c.physical} ({n} legs)"
        rows.append(
            (
                site,
                named(row.a.device),
                "dcim.interface",
                row.a.port,
                site,
                named(row.b.device),
                "dcim.interface",
                row.b.port,
                cable_type(catalog, c.media),
                "planned",
                cable_label(c, n),
                COLOUR_HEX.get(c.colour, ""),
                f"{c.length_m:g}",
                "m",
                what,
            )
        )
    return to_csv(CABLE_COLUMNS, rows)


def render(
    design: Design, catalog: Catalog, site: str | None = None, scoped: bool = False
) -> dict[str, str]:
    """File name -> CSV text, in NetBox import order: racks, devices, interfaces, cables.

    ``scoped`` names devices ``<id>.<site slug>`` so several designs import into one NetBox.
    """
    name = site or design.name
    racks, devices = racks_csv(design, name), devices_csv(design, catalog, name, scoped)
    scheduled = schedule(design)  # both the interfaces and the cables read it (1.3 s at 131k)
    return {
        "racks.csv": racks,
        "devices.csv": devices,
        "interfaces.csv": interfaces_csv(design, catalog, name, scoped, scheduled),
        "cables.csv": cables_csv(design, catalog, name, scoped, scheduled),
    }
