"""The batched wiring (``FabricBuilder.connect_all``, column-built links) against the link-by-link
builder and Clos wiring it replaced, kept here as the oracle: same links, switches and tallies."""

from __future__ import annotations

import importlib
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from railplan import InfeasibleError, SpecError, plan
from railplan.catalog import load_catalog
from railplan.design import Design, Link, Node
from railplan.spec import Spec
from railplan.spec.load import load_spec
from railplan.topology import clos, spine_groups
from railplan.topology.clos import UpLeaf, UpperPlan
from railplan.topology.tiers import PortLayout, UpperTiers
from railplan.topology.wiring import LINK_PREFIX, FabricBuilder, Tally, counting
from tests.conftest import EXAMPLES, make_spec
from tests.test_families_property import fat_tree_specs, matrix_specs
from tests.test_mixed_tiers_property import mixed_specs

CATALOG = load_catalog()
SOME = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


class OldBuilder(FabricBuilder):
    """The builder as it was: ``connect`` one pair at a time, ``_make_links`` link by link."""

    def _make_links(
        self,
        kind: str,
        ends: list[tuple[str, int]],
        switch_id: str,
        first: int,
        plane: int,
        rail: int,
    ) -> None:
        upper = self._switch.get(switch_id)
        prefix = LINK_PREFIX[kind]
        n = self._counters[kind]
        append = self.links.append
        for k, (dev, port) in enumerate(ends):
            n += 1
            q = first + k
            rate = upper.speed_of(q) if upper is not None else self.speed
            append(Link(f"{prefix}{n:06d}", kind, dev, port, switch_id, q, rate, plane, rail))
        self._counters[kind] = n

    def connect(self, kind: str, lower: str, upper: str, plane: int, count: int = 1) -> None:
        if self._tally is not None or lower == upper:
            for _ in range(count):
                self.add_link(
                    kind, lower, self.take_port(lower), upper, self.take_port(upper), plane
                )
            return
        low = self._next_port[lower]
        first = self._next_port[upper]
        self._next_port[lower] = low + count
        self._next_port[upper] = first + count
        self._make_links(kind, [(lower, low + k) for k in range(count)], upper, first, plane, -1)

    def connect_all(
        self, kind: str, lowers: Sequence[tuple[str, int]], uppers: Sequence[str], plane: int
    ) -> None:
        for lower, count in lowers:
            for upper in uppers:
                self.connect(kind, lower, upper, plane, count)


def old_wire_two_tier(
    b: FabricBuilder,
    leaves: Sequence[UpLeaf],
    plane: int,
    spines: int,
    prefix: str = "",
    group: str = "",
) -> None:
    name = prefix or f"p{plane}-spine-"
    attrs = {"group": group} if group else {}
    ids = [b.add_switch(f"{name}{s + 1:02d}", "spine", plane, **attrs) for s in range(spines)]
    for leaf in leaves:
        per = math.ceil(leaf.up / spines)
        for spine in ids:
            b.connect("leaf-spine", leaf.id, spine, plane, per)


def old_wire_three_tier(
    b: FabricBuilder, leaves: Sequence[UpLeaf], plane: int, plan: UpperPlan, upper: UpperTiers
) -> None:
    pods: list[list[UpLeaf]] = [[] for _ in range(plan.pods)]
    for leaf in leaves:
        pods[leaf.group // plan.groups_per_pod].append(leaf)
    spine_ids: list[list[str]] = []
    for p, members in enumerate(pods):
        ids = [
            b.add_switch(f"p{plane}-spine-pod{p + 1:02d}-{j + 1:02d}", "spine", plane, pod=p)
            for j in range(plan.spines)
        ]
        spine_ids.append(ids)
        for leaf in members:
            per = math.ceil(leaf.up / plan.spines)
            for spine in ids:
                b.connect("leaf-spine", leaf.id, spine, plane, per)
        for spine in ids:
            b.skip_to(spine, upper.spine.up_start)
    for g in range(plan.spines // plan.shared):
        for c in range(plan.group_cores):
            core = b.add_switch(f"p{plane}-core-g{g + 1:02d}-{c + 1:02d}", "core", plane)
            for j in range(g * plan.shared, (g + 1) * plan.shared):
                for p in range(plan.pods):
                    b.connect(
                        "spine-core",
                        spine_ids[p][j],
                        core,
                        plane,
                        math.ceil(plan.pod_up[p] / plan.group_cores),
                    )


GENERATOR_MODULES = ["roft", "fat_tree", "matrix", "rail_only"]
roft = importlib.import_module("railplan.topology.roft")  # the module (the package has roft())


def old_node_id(index: int, count: int) -> str:
    return f"node{index + 1:0{max(4, len(str(count)))}d}"


def old_make_nodes(
    count: int, su_nodes: int, sus_per_pod: int, nodes_per_rack: int
) -> tuple[Node, ...]:
    return tuple(
        Node(
            id=old_node_id(i, count),
            index=i,
            su=i // su_nodes if su_nodes else 0,
            pod=(i // su_nodes) // sus_per_pod if su_nodes and sus_per_pod else 0,
            rack=i // nodes_per_rack,
        )
        for i in range(count)
    )


def old_su_nodes_of(
    n_active: int, su_active: int, spares: int, sus: int, sus_per_pod: int, nodes_per_rack: int
) -> tuple[Node, ...]:
    if not spares:
        return old_make_nodes(n_active, su_active, sus_per_pod, nodes_per_rack)
    total = n_active + sus * spares
    out: list[Node] = []
    for su in range(sus):
        active = max(0, min(su_active, n_active - su * su_active))
        for k in range(active + spares):
            i = len(out)
            out.append(
                Node(
                    id=old_node_id(i, total),
                    index=i,
                    su=su,
                    pod=su // sus_per_pod if sus_per_pod else 0,
                    rack=i // nodes_per_rack,
                    spare=k >= active,
                )
            )
    return tuple(out)


def old_su_members(n_active: int, su_active: int, spares: int, sus: int) -> list[list[str]]:
    """Each SU's node ids as ROFT took them: from the nodes ``su_nodes_of`` made."""
    by_su: dict[int, list[str]] = {}
    for node in old_su_nodes_of(n_active, su_active, spares, sus, 0, 1):
        by_su.setdefault(node.su, []).append(node.id)
    return [by_su.get(su, []) for su in range(sus)]


@contextmanager
def old_wiring() -> Iterator[None]:
    """Every generator on the old builder and the old Clos wiring, for the block."""
    swaps: list[tuple[object, str, object]] = [
        (clos, "_wire_two_tier", old_wire_two_tier),
        (clos, "_wire_three_tier", old_wire_three_tier),
        (spine_groups, "_wire_two_tier", old_wire_two_tier),
        (roft, "su_members", old_su_members),
        (roft, "su_nodes_of", old_su_nodes_of),
    ]
    for name in GENERATOR_MODULES:
        swaps.append(
            (importlib.import_module(f"railplan.topology.{name}"), "FabricBuilder", OldBuilder)
        )
    saved = [(mod, attr, getattr(mod, attr)) for mod, attr, _ in swaps]
    try:
        for mod, attr, new in swaps:
            setattr(mod, attr, new)
        yield
    finally:
        for mod, attr, old in saved:
            setattr(mod, attr, old)


def planned(spec: Spec) -> Design | str:
    """The design (unchecked: the property suites check them) or the refusal's message."""
    try:
        return plan(spec, CATALOG, checked=False)
    except (InfeasibleError, SpecError) as exc:
        return f"{type(exc).__name__}: {exc}"


def assert_same_as_old(spec: Spec) -> None:
    new = planned(spec)
    with old_wiring():
        old = planned(spec)
    if isinstance(new, str) or isinstance(old, str):
        assert new == old
        return
    assert new.links == old.links
    assert new.switches == old.switches
    assert new == old


# -- whole designs ------------------------------------------------------------------------------


@st.composite
def roft_specs(draw: Any) -> Spec:
    fabric: dict[str, Any] = {
        "switches": [draw(st.sampled_from(["cx732q-n", "qm9700", "cx864e-n", "sn5600"]))],
        "planes": draw(st.sampled_from([1, 2])),
        "oversubscription": draw(st.sampled_from(["1:1", "2:1", "3:1", "17:15"])),
        "whole_su": draw(st.booleans()),
        "tiers": draw(st.sampled_from(["auto", 2, 3])),
    }
    if draw(st.booleans()):
        fabric["leaf"] = {"up_gbps": 800}
    if draw(st.booleans()):
        fabric["spine_groups"] = draw(st.sampled_from([2, 4]))
    if draw(st.booleans()):
        fabric["reserved_ports"] = [
            {"purpose": "ufm", "count": draw(st.integers(1, 4)), "per": "plane", "attach": "device"}
        ]
    node = draw(st.sampled_from(["hgx-h100-8x400g", "dgx-h100", "h20-4x2x200g"]))
    return make_spec(draw(st.integers(1, 600)) * 8, node=node, **fabric)


@SOME
@given(roft_specs())
def test_roft_designs_match_the_old_wiring(spec: Spec) -> None:
    assert_same_as_old(spec)


@SOME
@given(mixed_specs())
def test_mixed_tier_designs_match_the_old_wiring(spec: Spec) -> None:
    assert_same_as_old(spec)


@SOME
@given(st.one_of(matrix_specs(), fat_tree_specs()))
def test_matrix_and_fat_tree_designs_match_the_old_wiring(spec: Spec) -> None:
    assert_same_as_old(spec)


@settings(max_examples=12, deadline=None)
@given(st.integers(1, 64), st.sampled_from([1, 2, 4, 8]))
def test_rail_only_designs_match_the_old_wiring(nodes: int, planes: int) -> None:
    assert_same_as_old(make_spec(nodes * 8, topology="rail-only", planes=planes))


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.yaml")), ids=lambda p: p.stem)
def test_bundled_examples_match_the_old_wiring(path: Any) -> None:
    assert_same_as_old(load_spec(path))


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 700), st.integers(1, 64), st.integers(0, 3), st.integers(0, 3))
def test_su_members_are_the_ids_of_each_sus_nodes(
    n_active: int, su_active: int, spares: int, extra: int
) -> None:
    sus = max(1, math.ceil(n_active / su_active)) + extra
    assert roft.su_members(n_active, su_active, spares, sus) == old_su_members(
        n_active, su_active, spares, sus
    )


@settings(max_examples=100, deadline=None)
@given(
    st.integers(0, 2000),
    st.integers(0, 64),
    st.integers(0, 3),
    st.integers(0, 9),
    st.integers(1, 40),
    st.integers(0, 3),
)
def test_nodes_are_made_as_before(
    n_active: int, su_active: int, spares: int, per_pod: int, per_rack: int, extra: int
) -> None:
    assert roft.make_nodes(n_active, su_active, per_pod, per_rack) == old_make_nodes(
        n_active, su_active, per_pod, per_rack
    )
    if su_active:
        sus = max(1, math.ceil(n_active / su_active)) + extra
        new = roft.su_nodes_of(n_active, su_active, spares, sus, per_pod, per_rack)
        assert new == old_su_nodes_of(n_active, su_active, spares, sus, per_pod, per_rack)


@pytest.mark.parametrize("total", [9999, 10000, 10001])
def test_node_ids_widen_at_ten_thousand_nodes_as_before(total: int) -> None:
    assert roft.make_nodes(total, 32, 8, 4) == old_make_nodes(total, 32, 8, 4)
    for spares in (1, 2):  # active nodes and spares that together make ``total``
        sus = math.ceil(total / (32 + spares))
        n_active = total - sus * spares
        new = roft.su_nodes_of(n_active, 32, spares, sus, 8, 4)
        assert new == old_su_nodes_of(n_active, 32, spares, sus, 8, 4)
        assert roft.su_members(n_active, 32, spares, sus) == old_su_members(
            n_active, 32, spares, sus
        )


def test_a_16k_three_tier_roft_with_several_links_per_core_matches_the_old_wiring() -> None:
    assert_same_as_old(make_spec(16384, node="dgx-h100", switches=["cx864e-n"], tiers=3))


# -- the builder itself ---------------------------------------------------------------------------


def layouts() -> dict[str, PortLayout]:
    model = CATALOG.switches["qm9700"]
    return {
        # up sections from low ports, so that runs often cross them
        "leaf": PortLayout(model, 200, 400, 48, 2, 1, 6),
        "spine": PortLayout(model, 400, 800, 40, 1, 1, 5),
        "core": PortLayout(model, 800, 800, 64, 1, 1),
    }


ROLES = ["leaf", "leaf", "leaf", "spine", "spine", "core"]


@st.composite
def operations(draw: Any) -> list[tuple[Any, ...]]:
    """Batches of connect_all (repeated and shared switches too), attach runs and skips."""
    names = [f"{role}{k}" for k, role in enumerate(ROLES)] + ["dev0"]
    ops: list[tuple[Any, ...]] = []
    for _ in range(draw(st.integers(1, 12))):
        what = draw(st.sampled_from(["connect_all", "connect", "attach", "skip"]))
        kind = draw(st.sampled_from(sorted(LINK_PREFIX)))
        plane = draw(st.integers(0, 1))
        if what in ("connect_all", "connect"):
            lowers = draw(
                st.lists(st.tuples(st.sampled_from(names), st.integers(0, 3)), max_size=6)
            )
            uppers = draw(st.lists(st.sampled_from(names), min_size=1, max_size=4))
            if what == "connect":
                lowers, uppers = lowers[:1], uppers[:1]
            ops.append((what, kind, lowers, uppers, plane))
        elif what == "attach":
            ends = draw(
                st.lists(
                    st.tuples(st.sampled_from(["nodeA", "nodeB", *names]), st.integers(0, 9)),
                    max_size=20,
                )
            )
            ops.append((what, kind, ends, draw(st.sampled_from(names[:-1])), plane))
        else:
            ops.append((what, draw(st.sampled_from(names)), draw(st.integers(0, 12))))
    return ops


def run(cls: type[FabricBuilder], ops: list[tuple[Any, ...]]) -> FabricBuilder:
    lay = layouts()
    b = cls(lay["leaf"], spine=lay["spine"], core=lay["core"])
    for k, role in enumerate(ROLES):
        b.add_switch(f"{role}{k}", role, 0)
    b.add_device(SimpleNamespace(id="dev0"))  # type: ignore[arg-type]  # only .id is read
    for op in ops:
        if op[0] == "connect_all":
            b.connect_all(op[1], op[2], op[3], op[4])
        elif op[0] == "connect":
            for lower, count in op[2]:
                b.connect(op[1], lower, op[3][0], op[4], count)
        elif op[0] == "attach":
            b.attach(op[1], op[2], op[3], op[4], rail=1)
        else:
            b.skip_to(op[1], op[2])
    return b


@settings(max_examples=300, deadline=None)
@given(operations())
def test_the_builder_makes_the_links_the_old_one_made(ops: list[tuple[Any, ...]]) -> None:
    new, old = run(FabricBuilder, ops), run(OldBuilder, ops)
    assert new.links == old.links
    assert new._next_port == old._next_port
    assert new._counters == old._counters


@settings(max_examples=150, deadline=None)
@given(operations())
def test_counting_mode_tallies_what_the_old_builder_tallied(ops: list[tuple[Any, ...]]) -> None:
    tallies: list[Tally] = []
    for cls in (FabricBuilder, OldBuilder):
        with counting() as tally:
            b = run(cls, ops)
        assert b.links == []
        tallies.append(tally)
    assert tallies[0] == tallies[1]


@pytest.mark.parametrize("skip", range(8))
def test_runs_starting_on_each_side_of_the_up_sections_match_the_old_builder(skip: int) -> None:
    names = [f"{role}{k}" for k, role in enumerate(ROLES)]
    for uppers in ([names[3]], names[3:5], names[3:6], [names[5], names[3]], [names[0], names[4]]):
        for count in range(4):
            ops: list[tuple[Any, ...]] = [("skip", up, skip) for up in uppers]
            ops.append(("connect_all", "leaf-spine", [("leaf1", count), ("leaf2", 1)], uppers, 0))
            ops.append(("attach", "node-leaf", [("nodeA", 0)] * (count + 3), uppers[0], 1))
            new, old = run(FabricBuilder, ops), run(OldBuilder, ops)
            assert new.links == old.links, (uppers, count)
