"""What every catalog part shares: sourced figures, form factors, connectors, qualification."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

SOURCE_KINDS = ("datasheet", "list price", "estimate", "vendor", "standard")
#: "osfp" is the finned-top plug of air-cooled switch cages (integrated heat sink, IHS);
#: "osfp-rhs" the flat-top plug of cages with a riding heat sink (ConnectX-7/8 adapters, the DGX
#: twin-port cages, liquid-cooled switches). NVIDIA's XDR part list: "IHS transceivers or copper
#: cables are only used in air-cooled switches ... everything else uses RHS"; the two do not
#: swap cages, but their internals are the same, so an IHS end links to an RHS end.
#: "cpo" is a co-packaged-optics switch port: no pluggable, the fibre meets the switch's optical
#: engine at a faceplate connector (the engine's power is in the switch's own figure); it takes
#: only the engine entry of its switch (a "cpo" transceiver, priced inside the switch).
FORM_FACTORS = ("osfp", "osfp-rhs", "qsfp112", "qsfp-dd", "qsfp56", "qsfp28", "cpo")
FormFactor = Literal["osfp", "osfp-rhs", "qsfp112", "qsfp-dd", "qsfp56", "qsfp28", "cpo"]
#: link protocols a part supports (a switch runs one; a twin-port NVIDIA module runs both)
Protocol = Literal["infiniband", "ethernet"]
PROTOCOLS: tuple[Protocol, ...] = ("infiniband", "ethernet")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Sourced(_Strict):
    """A figure with where it came from: ``source`` starts with datasheet/list price/estimate."""

    value: float = Field(ge=0)
    source: str = Field(min_length=3)

    @field_validator("source")
    @classmethod
    def _known_kind(cls, v: str) -> str:
        if not v.lower().startswith(SOURCE_KINDS):
            raise ValueError(
                f"must start with one of {', '.join(SOURCE_KINDS)} (e.g. 'estimate: ...')"
            )
        return v


#: what a cage or a plug of each form factor carries at most, in Gb/s (all its lanes)
FORM_FACTOR_GBPS = {
    "osfp": 1600,
    "osfp-rhs": 1600,
    "qsfp-dd": 800,
    "qsfp112": 400,
    "qsfp56": 200,
    "qsfp28": 100,
    "cpo": 800,
}
#: plugs a cage accepts: QSFP112 and QSFP-DD cages take the older QSFP plugs too
CAGE_ACCEPTS = {
    "osfp": ("osfp",),
    "osfp-rhs": ("osfp-rhs",),
    "qsfp112": ("qsfp112", "qsfp56", "qsfp28"),
    "qsfp-dd": ("qsfp-dd", "qsfp56", "qsfp28"),
    "qsfp56": ("qsfp56", "qsfp28"),
    "qsfp28": ("qsfp28",),
    "cpo": ("cpo",),
}
#: optical connectors of transceivers and fibre cords (APC and UPC polish do not mate)
CONNECTORS = ("mpo-12-apc", "mpo-12-upc", "mpo-16-apc", "mpo-16-upc", "lc-duplex")


def cage_accepts(cage_ff: str, plug_ff: str) -> bool:
    """True when a plug of form factor ``plug_ff`` fits a cage of form factor ``cage_ff``."""
    return plug_ff in CAGE_ACCEPTS.get(cage_ff, (cage_ff,))


def need_source(v: object) -> object:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        raise ValueError(
            f"a bare {v} has no source; write {{value: {v}, source: 'estimate: ...'}} "
            f"(source starts with {', '.join(SOURCE_KINDS)})"
        )
    return v


def unusable(
    vendor: str, protocols: tuple[str, ...], protocol: str, vendors: Iterable[str] | None
) -> str:
    """Why a part of ``vendor`` listing ``protocols`` cannot serve ``protocol`` between
    equipment of ``vendors`` ("" if it can; an unknown maker, "", is no objection)."""
    if protocol and protocol not in protocols:
        return f"does not support {protocol}"
    if vendor and vendors is not None:
        others = sorted({v for v in vendors if v and v.lower() != vendor.lower()})
        if others:
            return f"is qualified for {vendor} equipment only, not {', '.join(others)}"
    return ""


#: lengths closer than this count as equal (a routed 2.0000001 m fits a 2 m cable)
LENGTH_EPS_M = 1e-6
