"""Per-tier spec fields: a tier's switches, speed and ratio; reserved ports; rail-only ISLs;
and down:up ratios as exact fractions."""

from __future__ import annotations

import re
from decimal import Decimal
from fractions import Fraction
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

_RATIO = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(?::\s*(\d+(?:\.\d+)?)\s*)?$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TierSpec(_Strict):
    """One tier's own switch shortlist, uplink speed and down:up bandwidth ratio."""

    switches: list[str] | None = Field(
        None,
        description="Allowed switch model ids for this tier (default: fabric.switches, or "
        "every catalog switch that runs the tier's port speeds)",
    )
    up_gbps: int | None = Field(
        None,
        gt=0,
        le=3200,
        description="Speed of this tier's uplinks in Gb/s (leaf: toward the spines, spine: "
        "toward the cores; default: the speed of its down ports). The tier above runs its "
        "down ports at this speed",
    )
    oversubscription: str | None = Field(
        None,
        description="Down:up bandwidth of this tier, e.g. '1:1', '17:15', '15:1' or a decimal "
        "'1.133' (leaf default: fabric.oversubscription; spine default: 1:1 toward the cores, "
        "and in a 2-tier fabric every spine port serves leaves; a spine ratio in a 2-tier fabric "
        "holds ports back for a later core tier)",
    )

    @field_validator("oversubscription", mode="before")
    @classmethod
    def _yaml11(cls, v: object) -> object:
        return None if v is None else yaml11_ratio(v)

    @field_validator("oversubscription")
    @classmethod
    def _ratio(cls, v: str | None) -> str | None:
        return None if v is None else normal_ratio(v)

    @field_validator("switches")
    @classmethod
    def _nonempty(cls, v: list[str] | None) -> list[str] | None:
        if v is not None and not v:
            raise ValueError("list at least one switch model id, or leave it out")
        return v


class ReservedPortsSpec(_Strict):
    """Leaf down ports held back from the nodes: left free, cabled to spare nodes or a device."""

    purpose: str = Field(
        min_length=1,
        max_length=40,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9 ._-]*$",
        description="What the ports are for, e.g. 'ufm', 'backup hosts', 'storage'; names the "
        "device and appears in the notes",
    )
    count: int = Field(
        ge=1,
        le=4096,
        description="How many ports: on every leaf (per: leaf; with spare-nodes one port per "
        "spare node and leaf) or in each plane (per: plane)",
    )
    per: Literal["leaf", "plane"] = Field(
        "leaf",
        description="leaf: count ports on every leaf; plane: count ports in each plane, taken "
        "from free node slots of the last scalable unit (a slot gives one port on each of its "
        "leaves, as a removed node would)",
    )
    attach: Literal["none", "spare-nodes", "device"] = Field(
        "none",
        description="none: ports stay free (not cabled); spare-nodes: each SU gets count spare "
        "nodes cabled like the others (per: leaf only; hot-spare hosts); device: the ports are "
        "cabled to one attached device per plane (e.g. a fabric-manager appliance) and billed "
        "as links of their own",
    )
    form_factor: Literal["osfp-rhs", "osfp", "qsfp112", "qsfp-dd", "qsfp56", "qsfp28"] = Field(
        "osfp-rhs",
        description="Cage of the attached device's ports (attach: device); osfp-rhs is the "
        "flat-top OSFP cage of a ConnectX adapter, osfp the finned cage of a switch",
    )

    @model_validator(mode="after")
    def _consistent(self) -> ReservedPortsSpec:
        if self.attach == "spare-nodes" and self.per != "leaf":
            raise ValueError(
                "attach: spare-nodes reserves a port on every leaf (one per spare node); "
                "use per: leaf"
            )
        if self.attach == "device" and self.per != "plane":
            raise ValueError(
                "attach: device takes its ports from free node slots of a plane; use per: plane"
            )
        return self


class RailOnlySpec(_Strict):
    """Rail-only (one tier) options: how many switches share the rails and their ISLs."""

    switches: int | Literal["auto"] = Field(
        "auto",
        description="Switches per plane; rails alternate over them (rail r on switch r mod "
        "n). auto: one switch for every port when they fit, else one switch per rail",
    )
    isl: bool = Field(
        False,
        description="Join the switches of a plane with inter-switch link (ISL) bundles, every "
        "pair alike, sized so each switch's node ports stay within fabric.oversubscription of "
        "its ISL ports (1:1: one ISL port per node port)",
    )
    isl_links_per_pair: int | None = Field(
        None, ge=1, le=4096, description="ISL links between each pair of switches (default: sized)"
    )

    @field_validator("switches")
    @classmethod
    def _positive(cls, v: int | str) -> int | str:
        if isinstance(v, int) and not 1 <= v <= 4096:
            raise ValueError("give 1 to 4096 switches, or auto")
        return v


def yaml11_ratio(v: object) -> object:
    """YAML 1.1 reads an unquoted ``3:1`` as the base-60 integer 181; read it back."""
    if isinstance(v, bool):
        return v
    if isinstance(v, int):
        return f"{v // 60}:{v % 60}" if v >= 60 else f"{v}:1"
    if isinstance(v, float):
        return f"{v:g}:1"
    return v


def normal_ratio(v: object) -> str:
    """A down:up ratio in normal form: ``'17:15'``, ``'3:1'``, ``'1.5:1'``; refuses < 1.

    >>> normal_ratio("34:30"), normal_ratio("3:1"), normal_ratio("1.133"), normal_ratio(" 2 : 1 ")
    ('17:15', '3:1', '1.133:1', '2:1')
    """
    m = _RATIO.match(str(v))
    if not m:
        raise ValueError(
            "must be a ratio like '1:1', '3:1', '17:15' or a decimal like '1.133' (down:up)"
        )
    down, up = Decimal(m.group(1)), Decimal(m.group(2) or "1")
    if up == 0 or down / up < 1:
        raise ValueError(
            "must be a ratio of at least 1:1 (down bandwidth >= up bandwidth), like '1:1', "
            "'3:1' or '17:15'"
        )
    if down == down.to_integral_value() and up == up.to_integral_value():
        frac = Fraction(int(down), int(up))
        return f"{frac.numerator}:{frac.denominator}"
    return f"{float(down / up):g}:1"


def ratio_value(ratio: str) -> Fraction:
    """The exact value of a normal-form ratio: ``'17:15'`` -> Fraction(17, 15)."""
    down, _, up = ratio.partition(":")
    return Fraction(Decimal(down)) / Fraction(Decimal(up or "1"))
