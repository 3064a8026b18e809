"""plan(spec) -> Design: resolve the node, pick the switch models, build the family, check it."""

from __future__ import annotations

from railplan.catalog import Catalog, SwitchModel, load_catalog
from railplan.design import Design, NodeShape
from railplan.errors import SpecError
from railplan.spec import Spec
from railplan.spec.schema import AUTO_TOPOLOGY
from railplan.topology import GENERATORS
from railplan.topology.shape import check_capacity, rack_scale_spec, resolve_shape
from railplan.topology.single_switch import auto_family
from railplan.topology.tiers import TierModels, tier_shortlists, tier_speeds
from railplan.validate import check
from railplan.validate.tiers import attachment


def as_built_family(spec: Spec, family: str) -> Spec:
    """The spec with ``fabric.topology`` set to the family actually built, so a design embeds
    the spec that plans it again (``topology: auto`` resolved; ``pipeline.rederive``)."""
    if spec.fabric.topology == family:
        return spec
    return spec.model_copy(update={"fabric": spec.fabric.model_copy(update={"topology": family})})


def family_of(spec: Spec, topology: str | None, catalog: Catalog | None = None) -> str:
    """The family to build: ``topology``, else the spec's; ``auto`` resolved by the field rule
    (``auto_family``)."""
    family = topology or spec.fabric.topology
    if family == AUTO_TOPOLOGY:
        return auto_family(spec, catalog or load_catalog())
    if family not in GENERATORS:
        known = ", ".join(GENERATORS)
        raise SpecError(
            f"fabric.topology: {family!r} is not a topology railplan plans; use {known}"
        )
    return family


def needs_choice(spec: Spec, catalog: Catalog, topology: str | None = None) -> bool:
    """True when some tier allows several switch models (CP-SAT then picks per tier)."""
    family = family_of(spec, topology, catalog)
    _, _, lists = tier_lists(spec, catalog, family)
    return any(len(models) > 1 for models in lists.values())


def tier_lists(
    spec: Spec, catalog: Catalog, family: str
) -> tuple[NodeShape, list[int], dict[str, list[SwitchModel]]]:
    """The node shape, the tier speeds and each tier's allowed models, after the closed-form
    capacity check (so no generator builds links for a cluster no model can hold)."""
    shape = resolve_shape(spec, catalog)
    speeds = tier_speeds(spec, shape)
    lists = tier_shortlists(spec, catalog, speeds, family)
    every = {m.id: m for models in lists.values() for m in models}
    gbps = [speeds.leaf_down, speeds.leaf_up, speeds.spine_up]
    check_capacity(spec, shape, [every[k] for k in sorted(every)], gbps)
    return shape, gbps, lists


def plan(
    spec: Spec,
    catalog: Catalog | None = None,
    topology: str | None = None,
    *,
    checked: bool = True,
) -> Design:
    """Plan the spec's fabric (or ``topology`` instead of the spec's); the result passes check
    (``checked=False``: the caller checks it, as ``build(..., deferred=True)`` does beside the
    layout).

    With one allowed switch model per tier this is the closed-form construction (each tier
    sized from its own model). With several (or none listed: every catalog switch at the
    tier's speeds) CP-SAT picks a model per tier at least priced cost with media at nominal
    lengths (``railplan.solve.switch_choice.choose``): the same answer ``railplan plan`` and
    ``build`` give.
    """
    catalog = catalog or load_catalog()
    spec = rack_scale_spec(spec, catalog)
    family = family_of(spec, topology, catalog)
    spec = as_built_family(spec, family)
    shape, _, lists = tier_lists(spec, catalog, family)
    if any(len(models) > 1 for models in lists.values()):
        from railplan.solve.switch_choice import choose  # the solver package owns ortools

        return choose(spec, catalog, "cost", topology=family)[0]
    tiers = TierModels(lists["leaf"][0], lists["spine"][0], lists["core"][0])
    design = GENERATORS[family](spec, shape, tiers.leaf if tiers.uniform else tiers)
    honour_attachment(design, family)
    if checked:
        refuse_unsound(check(design))
    return design


def refuse_unsound(problems: list[str]) -> None:
    """Raise the generator's failed check (a bug of railplan, never the user's input)."""
    if problems:
        raise AssertionError(f"generated design fails check: {problems[:5]}")


def honour_attachment(design: Design, family: str) -> None:
    """Refuse, as a spec error, an attachment mode the family's wiring cannot give."""
    problems = attachment(design)
    if problems:
        raise SpecError(
            f"fabric.attachment: {family} cannot give {design.sizing.attachment} here "
            f"({problems[0]}); use attachment: auto or another topology"
        )
