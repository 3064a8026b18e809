"""The fabric as a small graph to draw: devices grouped so every tier fits one row of a page.

A tier with at most ``max_per_rank`` devices keeps one box per device. A larger tier groups
its devices by scalable unit (nodes, leaves, attached devices) or pod (spines), and when even
those are too many, by runs of consecutive SUs or pods, so a 1k or a 16k design draws with at
most ``max_per_rank`` boxes per tier. Links become bundles: one edge per pair of boxes with
its link count.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from railplan.design import Design

#: boxes in one tier row at most (about 150 pt each: a 12-box row stays under 2,000 pt)
MAX_PER_RANK = 12
PLURAL = {
    "node": "nodes",
    "device": "devices",
    "leaf": "leaves",
    "tor": "ToRs",
    "leaf-a": "A leaves",
    "leaf-b": "B leaves",
    "rail": "rail switches",
    "spine": "spines",
    "core": "cores",
}


@dataclass(frozen=True)
class Box:
    """One box: a device, or a group of devices of one role in one tier."""

    key: str
    tier: int
    role: str
    title: str
    count: int
    #: the devices drawn as this box, in design order
    members: tuple[str, ...] = ()

    @property
    def rank(self) -> int:
        """Drawing row, bottom up (Matrix B leaves a row above the A leaves; the Matrix figure
        and DOT export draw the two leaf groups as columns instead)."""
        return 2 * self.tier + (1 if self.role == "leaf-b" else 0)


@dataclass(frozen=True)
class FabricGraph:
    boxes: tuple[Box, ...]
    #: (box a, box b, links between them), a < b
    bundles: tuple[tuple[str, str, int], ...]
    grouped: bool


@dataclass(frozen=True)
class _Member:
    device: str
    tier: int
    role: str
    slot: int  # SU or pod, -1 when the role has none
    slot_word: str


def _served_su(design: Design) -> dict[str, int]:
    """Matrix B leaf -> the node SU it serves, when it serves one only: B leaves carry their
    own running index in ``su``, so the figure numbers them by the nodes' SUs instead (one SU
    definition on every row: "B leaves SU1" beside "nodes SU1")."""
    su_of = {n.id: n.su for n in design.nodes}
    b_leaves = {sw.id for sw in design.switches if sw.role == "leaf-b"}
    seen: dict[str, set[int]] = defaultdict(set)
    for lk in design.links:
        for sw, other in ((lk.a_device, lk.b_device), (lk.b_device, lk.a_device)):
            if sw in b_leaves and other in su_of:
                seen[sw].add(su_of[other])
    return {sw: next(iter(sus)) for sw, sus in seen.items() if len(sus) == 1}


def _members(design: Design, plane: int | None) -> list[_Member]:
    out = [_Member(n.id, 0, "node", n.su, "SU") for n in design.nodes]
    out += [_Member(d.id, 0, "device", d.su, "SU") for d in design.devices]
    served = _served_su(design) if design.topology == "matrix" else {}
    if design.topology == "matrix" and any(
        sw.role == "leaf-b" and sw.id not in served for sw in design.switches
    ):
        served = {}  # a B leaf serves several SUs: keep every B leaf on its own numbering
    for sw in design.switches:
        if plane is not None and sw.plane != plane:
            continue
        slot, word = (sw.su, "SU") if sw.tier == 1 else (sw.pod, "pod")
        out.append(_Member(sw.id, sw.tier, sw.role, served.get(sw.id, slot), word))
    return out


def _pod_size(design: Design) -> int:
    """SUs per pod (0 without pods): SU groups of the figure keep pods whole."""
    pods: dict[int, set[int]] = defaultdict(set)
    for sw in design.switches:
        if sw.tier == 1 and sw.pod >= 0 and sw.su >= 0:
            pods[sw.pod].add(sw.su)
    if not pods:  # leaves carry no pod: read it off their uplinks to the pods' spines
        tier = {sw.id: sw for sw in design.switches}
        for lk in design.links:
            a, b = tier.get(lk.a_device), tier.get(lk.b_device)
            if a is None or b is None or {a.tier, b.tier} != {1, 2}:
                continue
            leaf, spine = (a, b) if a.tier == 1 else (b, a)
            if leaf.su >= 0 and spine.pod >= 0:
                pods[spine.pod].add(leaf.su)
    return max((len(s) for s in pods.values()), default=0) if len(pods) > 1 else 0


def _keep_pods_whole(per: int, pod: int) -> int:
    """The SUs per box raised to a divisor of the pod (several boxes to a pod) or a multiple
    of it (whole pods to a box), so no box spans a pod boundary."""
    if pod <= 1 or per <= 1:
        return per
    if per <= pod:
        return next(d for d in range(per, pod + 1) if pod % d == 0)
    return math.ceil(per / pod) * pod


def _span(word: str, slots: Sequence[int]) -> str:
    lo, hi = min(slots) + 1, max(slots) + 1
    return f"{word}{lo}" if lo == hi else f"{word}{lo}-{hi}"


def _group_role(
    members: list[_Member], max_per_rank: int, pod: int = 0
) -> dict[str, tuple[str, str]]:
    """device -> (box key, box title) for the members of one tier and role (SU groups keep
    pods of ``pod`` SUs whole)."""
    role, tier = members[0].role, members[0].tier
    name = PLURAL.get(role, role)
    slots = sorted({m.slot for m in members if m.slot >= 0})
    out: dict[str, tuple[str, str]] = {}
    if slots and all(m.slot >= 0 for m in members):
        per = math.ceil(len(slots) / max_per_rank)
        if members[0].slot_word == "SU" and slots == list(range(slots[0], slots[-1] + 1)):
            per = _keep_pods_whole(per, pod)
        index = {s: i // per for i, s in enumerate(slots)}
        spans: dict[int, list[int]] = defaultdict(list)
        for s in slots:
            spans[index[s]].append(s)
        for m in members:
            b = index[m.slot]
            out[m.device] = (f"t{tier}-{role}-{b:03d}", f"{name} {_span(m.slot_word, spans[b])}")
        return out
    ordered = sorted(members, key=lambda m: m.device)
    per = math.ceil(len(ordered) / max_per_rank)
    for i, m in enumerate(ordered):
        b = i // per
        lo, hi = b * per + 1, min(len(ordered), (b + 1) * per)
        title = f"{name} {lo}" + (f"-{hi}" if hi > lo else "")
        out[m.device] = (f"t{tier}-{role}-{b:03d}", title)
    return out


def fabric_graph(
    design: Design,
    max_per_rank: int = MAX_PER_RANK,
    plane: int | None = None,
    per_role: bool = False,
) -> FabricGraph:
    """Boxes per tier (devices or groups) and the link bundles between them; with ``plane``,
    that plane's switches and links only (every plane's nodes and devices). With
    ``per_role``, every role gets ``max_per_rank`` boxes of its own (the Matrix figure draws
    nodes, A leaves and B leaves as three columns grouped alike, one SU definition for all)
    instead of sharing its tier's row."""
    members = _members(design, plane)
    per_tier = Counter((m.tier, m.role) if per_role else m.tier for m in members)
    grouped = any(n > max_per_rank for n in per_tier.values())
    where: dict[str, tuple[str, str]] = {}
    if not grouped:
        where = {m.device: (m.device, m.device) for m in members}
    else:
        by_role: dict[tuple[int, str], list[_Member]] = defaultdict(list)
        for m in members:
            by_role[(m.tier, m.role)].append(m)
        roles_in_tier = Counter(t for t, _ in by_role)
        pod = _pod_size(design)
        for (tier, _), group in sorted(by_role.items()):
            share = max_per_rank if per_role else max(1, max_per_rank // roles_in_tier[tier])
            where.update(_group_role(group, share, pod))
    info = {m.device: m for m in members}
    inside: dict[str, list[str]] = defaultdict(list)
    for device, (key, _) in where.items():
        inside[key].append(device)
    boxes: dict[str, Box] = {}
    for device, (key, title) in where.items():
        m = info[device]
        boxes.setdefault(key, Box(key, m.tier, m.role, title, len(inside[key]), tuple(inside[key])))
    bundles: Counter[tuple[str, str]] = Counter()
    for lk in design.links:
        if plane is not None and lk.plane != plane:
            continue
        a, b = where[lk.a_device][0], where[lk.b_device][0]
        bundles[(min(a, b), max(a, b))] += 1
    ordered = sorted(boxes.values(), key=lambda x: (x.rank, x.role, x.key))
    return FabricGraph(
        tuple(ordered), tuple((a, b, n) for (a, b), n in sorted(bundles.items())), grouped
    )
