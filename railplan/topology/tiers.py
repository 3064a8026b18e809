"""Per-tier facts: the switch model of each tier, its port speeds and how it splits its ports.

A tier's switch runs its down ports (toward the nodes or the tier below) at one speed and its
up ports (toward the tier above) at another. At one speed every port may serve either side
(a cage can carry a node port and an uplink). At two speeds a cage runs one mode, so the
down ports fill whole cages in the down mode and the uplinks whole cages in the up mode; the
split is the one that offers the most down ports while down bandwidth stays within the ratio
of up bandwidth. Ratios are exact fractions (``17:15``), so a split sits exactly on its limit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from railplan.catalog import Catalog, SwitchModel
from railplan.design import NodeShape, TierSizing
from railplan.errors import InfeasibleError
from railplan.spec import Spec
from railplan.spec.tiers import TierSpec, ratio_value
from railplan.topology.shape import leaf_split, switch_radix

ROLES = ("leaf", "spine", "core")


@dataclass(frozen=True)
class TierModels:
    """The switch model of each tier (one model for all when the fabric is uniform)."""

    leaf: SwitchModel
    spine: SwitchModel
    core: SwitchModel

    @classmethod
    def of(cls, models: SwitchModel | TierModels) -> TierModels:
        return models if isinstance(models, TierModels) else cls(models, models, models)

    @property
    def uniform(self) -> bool:
        return self.leaf.id == self.spine.id == self.core.id

    def by_role(self) -> dict[str, str]:
        return {"leaf": self.leaf.id, "spine": self.spine.id, "core": self.core.id}


@dataclass(frozen=True)
class TierSpeeds:
    """Port speeds per tier boundary: nodes-leaf, leaf-spine, spine-core (Gb/s)."""

    leaf_down: int
    leaf_up: int
    spine_up: int


def tier_speeds(spec: Spec, shape: NodeShape) -> TierSpeeds:
    """The spec's per-tier speeds; a tier without its own uplink speed keeps its down speed."""
    f = spec.fabric
    down = shape.port_speed_gbps
    leaf_up = f.leaf.up_gbps if f.leaf is not None and f.leaf.up_gbps else down
    spine_up = f.spine.up_gbps if f.spine is not None and f.spine.up_gbps else leaf_up
    return TierSpeeds(down, leaf_up, spine_up)


def spine_ratio(spec: Spec) -> Fraction | None:
    """The spine tier's asked down:up ratio, or None when the spec leaves it at the default."""
    spine = spec.fabric.spine
    if spine is None or spine.oversubscription is None:
        return None
    return ratio_value(spine.oversubscription)


@dataclass(frozen=True)
class PortLayout:
    """How a switch of one tier runs its ports: speeds, ports per cage, where uplinks start.

    ``up_from`` is 0 when every port runs one speed; else the ports from ``up_from`` on run
    ``up_gbps`` with ``up_ppc`` per cage, starting on a cage of their own.
    """

    model: SwitchModel
    down_gbps: int
    up_gbps: int
    radix: int
    down_ppc: int
    up_ppc: int
    up_from: int = 0

    @property
    def mixed(self) -> bool:
        return self.up_from > 0

    def speed_of(self, port: int) -> int:
        return self.up_gbps if self.up_from and port >= self.up_from else self.down_gbps


def uniform_layout(model: SwitchModel, speed_gbps: int) -> PortLayout:
    """Every port of ``model`` at ``speed_gbps`` (raises naming the speeds it runs)."""
    radix = switch_radix(model, speed_gbps)
    mode = model.mode_at(speed_gbps)
    ppc = mode.ports_per_cage if mode else 1
    return PortLayout(model, speed_gbps, speed_gbps, radix, ppc, ppc)


@dataclass(frozen=True)
class TierSplit:
    """A tier's switch split into ``down`` ports for the tier below and ``up`` ports above."""

    layout: PortLayout
    down: int
    up: int
    ratio: Fraction

    @property
    def up_start(self) -> int:
        """First port the uplinks take (the up section, or right after the down ports)."""
        return self.layout.up_from if self.layout.mixed else self.down

    def up_for(self, used_down: int) -> int:
        """Uplinks that keep the ratio for ``used_down`` down ports (at least one)."""
        need = uplinks_for(used_down, self.layout.down_gbps, self.layout.up_gbps, self.ratio)
        return max(1, min(self.up, need))

    def sizing(self, role: str, ratio_text: str) -> TierSizing:
        lay = self.layout
        return TierSizing(
            role=role,
            model=lay.model.id,
            down_gbps=lay.down_gbps,
            up_gbps=lay.up_gbps,
            down_ports=self.down,
            up_ports=self.up,
            oversubscription=ratio_text,
        )


def uplinks_for(down_ports: int, down_gbps: int, up_gbps: int, ratio: Fraction) -> int:
    """Fewest uplinks whose bandwidth times ``ratio`` covers ``down_ports`` down ports.

    >>> uplinks_for(136, 200, 400, Fraction(17, 15)), uplinks_for(32, 400, 400, Fraction(1))
    (60, 32)
    """
    return math.ceil(Fraction(down_ports * down_gbps) / (ratio * up_gbps))


def tier_split(model: SwitchModel, down_gbps: int, up_gbps: int, ratio: Fraction) -> TierSplit:
    """The split of ``model`` offering most down ports with down bw <= ratio x up bw.

    One speed: the port-level split (``leaf_split``), down ports first. Two speeds: whole
    cages per mode, down cages first; among equal answers the one with the fewest down cages.
    """
    if down_gbps == up_gbps:
        layout = uniform_layout(model, down_gbps)
        split = leaf_split(layout.radix, ratio)
        return TierSplit(layout, split.down, split.up, ratio)
    lo, hi = model.mode_at(down_gbps), model.mode_at(up_gbps)
    if lo is None or hi is None:
        missing = down_gbps if lo is None else up_gbps
        speeds = ", ".join(f"{s}G" for s in model.speeds())
        raise InfeasibleError(
            f"switch {model.id} cannot run {missing}G ports (it runs {speeds}); pick a switch "
            "that does for this tier or change the tier's speed (cluster.port_speed_gbps, "
            "fabric.leaf.up_gbps or fabric.spine.up_gbps)"
        )
    best: tuple[int, int, int] | None = None  # (down, up, down cages)
    for cd in range(1, model.cages):
        cu = model.cages - cd
        up_cap = cu * hi.ports_per_cage
        down = min(cd * lo.ports_per_cage, math.floor(ratio * up_cap * up_gbps / down_gbps))
        if down < 1:
            continue
        if best is None or down > best[0]:
            best = (down, uplinks_for(down, down_gbps, up_gbps, ratio), cd)
    if best is None:
        raise InfeasibleError(
            f"switch {model.id} cannot be split into {down_gbps}G down and {up_gbps}G up "
            f"ports at {ratio.numerator}:{ratio.denominator}"
        )
    down, up, cd = best
    up_from = cd * lo.ports_per_cage
    radix = up_from + (model.cages - cd) * hi.ports_per_cage
    layout = PortLayout(
        model, down_gbps, up_gbps, radix, lo.ports_per_cage, hi.ports_per_cage, up_from
    )
    return TierSplit(layout, down, up, ratio)


@dataclass(frozen=True)
class UpperTiers:
    """What the tiers above the leaves look like: spine split, core layout, which ratio held."""

    spine: TierSplit
    core: PortLayout
    #: the spine ratio was asked for: in a 2-tier fabric the spines hold their up ports back
    spine_ratio_given: bool
    #: spines of a 2-tier fabric: every port at the leaf uplink speed
    spine_all: PortLayout
    #: why these models cannot build a core tier ("" when they can)
    missing: str = ""
    #: fewest spines per plane (2 tiers) or per pod (3 tiers): ``fabric.min_spines``
    min_spines: int = 1

    def two_tier_capacity(self) -> int:
        """Leaf-facing ports of one spine in a 2-tier fabric."""
        return self.spine.down if self.spine_ratio_given else self.spine_all.radix

    def two_tier_layout(self) -> PortLayout:
        return self.spine.layout if self.spine_ratio_given else self.spine_all


def upper_tiers(spec: Spec, models: TierModels, speeds: TierSpeeds) -> UpperTiers:
    """Spine split (ratio toward the cores, default 1:1) and the core layout.

    Spines that cannot run the core-facing speed (or cores that cannot run it) still serve a
    2-tier fabric; ``missing`` says why a core tier is out of reach.
    """
    asked = spine_ratio(spec)
    spine_all = uniform_layout(models.spine, speeds.leaf_up)
    try:
        spine = tier_split(models.spine, speeds.leaf_up, speeds.spine_up, asked or Fraction(1))
        core = uniform_layout(models.core, speeds.spine_up)
        missing = ""
    except InfeasibleError as exc:
        spine = TierSplit(spine_all, spine_all.radix, 0, asked or Fraction(1))
        core, missing = spine_all, str(exc)
    if asked is not None and missing:
        raise InfeasibleError(missing)
    least = spec.fabric.min_spines or 1
    return UpperTiers(spine, core, asked is not None, spine_all, missing, least)


def per_tier(spec: Spec, models: TierModels, speeds: TierSpeeds) -> bool:
    """True when the fabric is not one model at one speed with default ratios (then the
    Design records each tier's sizing)."""
    return (
        not models.uniform
        or len({speeds.leaf_down, speeds.leaf_up, speeds.spine_up}) > 1
        or spine_ratio(spec) is not None
    )


#: families with tiers above the leaves (the others are one tier: only the leaf model counts)
LAYERED = ("roft", "fat-tree")


def tier_shortlists(
    spec: Spec, catalog: Catalog, speeds: TierSpeeds, family: str
) -> dict[str, list[SwitchModel]]:
    """Allowed models per tier: the tier's own list, else ``fabric.switches``, else every
    catalog switch that runs the tier's port speeds (cores: the spines' list); sorted by id.
    One-tier families list the leaf models only; 2-tier fabrics name no core choice."""
    f = spec.fabric

    def listed(tier: TierSpec | None) -> list[SwitchModel] | None:
        ids = tier.switches if tier is not None and tier.switches else f.switches
        return sorted((catalog.switch(i) for i in ids), key=lambda m: m.id) if ids else None

    def running(*gbps: int) -> list[SwitchModel]:
        found = [m for m in catalog.switches.values() if all(m.radix(s) for s in gbps)]
        if not found:
            wanted = " and ".join(f"{s}G" for s in sorted(set(gbps)))
            raise InfeasibleError(f"no catalog switch runs {wanted} ports; add one to catalogs/")
        return sorted(found, key=lambda m: m.id)

    leaf = listed(f.leaf) or running(speeds.leaf_down, speeds.leaf_up)
    if family not in LAYERED:
        return {"leaf": leaf, "spine": leaf[:1], "core": leaf[:1]}
    spine = listed(f.spine) or running(speeds.leaf_up, speeds.spine_up)
    if f.tiers == 2:
        return {"leaf": leaf, "spine": spine, "core": spine[:1]}
    core = listed(f.core) if f.core is not None and f.core.switches else None
    return {"leaf": leaf, "spine": spine, "core": core or listed(None) or spine}
