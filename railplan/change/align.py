"""Re-number a new design's switch ports (and pick which installed switch becomes which new
one) so that as many installed cables as possible stay on the ports they are plugged into.

The new design's wiring fixes which devices are joined and by how many links; which port of a
switch section (the ports one link kind uses on one side: a leaf's uplinks, a spine's
downlinks) carries which link is free. Node and device ports stay as they are (a NIC port's
rail is fixed). Devices with the same id are the same device; switches left unmatched by id
are paired by ``solve.regrow`` (same model, role and plane). A cable of the installed design
stays when its two ports lie in the matching sections of the new design and the bundle between
the two devices has room; every other installed cable moves or is removed.

Restriction, stated in the report: a cable between two switches that are both re-paired
counts as moved (the model pairs one unmatched end at a time).
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from dataclasses import dataclass

from railplan.design import Design, Link, Switch

Section = tuple[str, str, str]  # (device, link kind, side "a"/"b")
Bundle = tuple[str, str, str]  # (a device, b device, link kind)


@dataclass(frozen=True)
class Alignment:
    """The installed design with re-paired switches renamed, the new wiring re-numbered."""

    before: Design
    after: Design
    #: installed switch id -> new switch id (only switches whose name changes)
    renamed: dict[str, str]
    #: installed links that stay on their ports
    kept: int
    #: installed links in all, and the fewest that must move or go (a proved lower bound)
    installed: int
    lower_bound_moves: int
    status: str
    notes: tuple[str, ...]

    @property
    def moves(self) -> int:
        """Installed links that do not stay (moved or removed)."""
        return self.installed - self.kept

    @property
    def gap(self) -> int:
        return self.moves - self.lower_bound_moves


def _sections(design: Design) -> dict[Section, set[int]]:
    switches = design.switch_by_id()
    out: dict[Section, set[int]] = defaultdict(set)
    for lk in design.links:
        if lk.a_device in switches:
            out[lk.a_device, lk.kind, "a"].add(lk.a_port)
        if lk.b_device in switches:
            out[lk.b_device, lk.kind, "b"].add(lk.b_port)
    return out


def _klass(sw: Switch) -> tuple[str, str, int]:
    return (sw.model, sw.role, sw.plane)


def align(before: Design, after: Design, budget_s: float = 10.0) -> Alignment:
    """The alignment of ``after`` (wiring) to installed ``before`` that moves fewest cables."""
    from railplan.solve.regrow import solve_regrow  # OR-Tools loads only to re-pair switches

    sw_b, sw_a = before.switch_by_id(), after.switch_by_id()
    same = {s for s in sw_b.keys() & sw_a.keys() if _klass(sw_b[s]) == _klass(sw_a[s])}
    others_b = {n.id for n in before.nodes} | {d.id for d in before.devices}
    others_a = {n.id for n in after.nodes} | {d.id for d in after.devices}
    fixed = same | (others_b & others_a)
    loose_b = sorted(s for s in sw_b if s not in same)
    loose_a = sorted(s for s in sw_a if s not in same)
    sect = _sections(after)
    bundle_cap: dict[Bundle, int] = defaultdict(int)
    at_port: dict[tuple[str, int, str], Link] = {}
    for lk in after.links:
        bundle_cap[lk.a_device, lk.b_device, lk.kind] += 1
        at_port[lk.a_device, lk.a_port, lk.kind] = lk
        at_port[lk.b_device, lk.b_port, lk.kind] = lk

    def fits(device: str, port: int, kind: str, side: str, other: str) -> bool:
        """Port may carry a link of ``kind`` toward ``other`` in the new design."""
        if device in sw_a:
            return port in sect.get((device, kind, side), ())
        lk = at_port.get((device, port, kind))  # a node or device port keeps its link
        return lk is not None and (lk.b_device if side == "a" else lk.a_device) == other

    # links with both ends fixed: kept up to the bundle's room
    fixed_groups: dict[Bundle, list[Link]] = defaultdict(list)
    loose_links: dict[str, list[tuple[Link, str]]] = defaultdict(list)  # by loose end
    both_loose = 0
    for lk in sorted(before.links, key=lambda x: x.id):
        a_fixed, b_fixed = lk.a_device in fixed, lk.b_device in fixed
        if a_fixed and b_fixed:
            if fits(lk.a_device, lk.a_port, lk.kind, "a", lk.b_device) and fits(
                lk.b_device, lk.b_port, lk.kind, "b", lk.a_device
            ):
                fixed_groups[lk.a_device, lk.b_device, lk.kind].append(lk)
        elif a_fixed or b_fixed:
            loose_links[lk.b_device if a_fixed else lk.a_device].append(
                (lk, "b" if a_fixed else "a")
            )
        else:
            both_loose += 1
    kept_links: list[Link] = []
    for key, group in fixed_groups.items():
        kept_links += group[: bundle_cap.get(key, 0)]
    # gain of each loose installed switch becoming each loose new switch of its class
    by_class: dict[tuple[str, str, int], list[int]] = defaultdict(list)
    for j, t in enumerate(loose_a):
        by_class[_klass(sw_a[t])].append(j)
    gain: list[dict[int, int]] = []
    chosen: dict[tuple[int, int], list[Link]] = {}
    for i, s in enumerate(loose_b):
        row: dict[int, int] = {}
        for j in by_class.get(_klass(sw_b[s]), []):
            t = loose_a[j]
            groups: dict[Bundle, list[Link]] = defaultdict(list)
            for lk, side in loose_links.get(s, []):
                if side == "b":  # s is the b end
                    ok = fits(lk.a_device, lk.a_port, lk.kind, "a", t) and fits(
                        t, lk.b_port, lk.kind, "b", lk.a_device
                    )
                    key = (lk.a_device, t, lk.kind)
                else:
                    ok = fits(t, lk.a_port, lk.kind, "a", lk.b_device) and fits(
                        lk.b_device, lk.b_port, lk.kind, "b", t
                    )
                    key = (t, lk.b_device, lk.kind)
                if ok:
                    groups[key].append(lk)
            keep = [lk for key, g in groups.items() for lk in g[: bundle_cap.get(key, 0)]]
            if keep:
                row[j] = len(keep)
                chosen[i, j] = keep
        gain.append(row)
    solution = solve_regrow(gain, budget_s=budget_s)
    mapping = dict(solution.mapping)
    # installed switches the solver left free still become a free new switch of their class
    free = {j for j in range(len(loose_a))} - set(mapping.values())
    for i, s in enumerate(loose_b):
        if i not in mapping:
            spare = [j for j in by_class.get(_klass(sw_b[s]), []) if j in free]
            if spare:
                mapping[i] = spare[0]
                free.discard(spare[0])
    for (i, j), links in sorted(chosen.items()):
        if mapping.get(i) == j:
            kept_links += links
    renamed = {
        loose_b[i]: loose_a[j] for i, j in sorted(mapping.items()) if loose_b[i] != loose_a[j]
    }
    new_before = _renamed(before, renamed)
    new_after = _renumbered(after, [_rename_link(lk, renamed) for lk in kept_links])
    installed = len(before.links)
    fixed_upper = sum(min(len(g), bundle_cap.get(k, 0)) for k, g in fixed_groups.items())
    kept = len(kept_links)
    lower = installed - (fixed_upper + solution.upper_kept)
    notes = [
        f"{len(renamed)} installed switch(es) take a new name; {kept} of {installed} installed "
        f"cables stay on their ports; at least {lower} must move or go (CP-SAT "
        f"{solution.status}; relaxation bound {installed - fixed_upper - solution.relaxed_kept})"
    ]
    if both_loose:
        notes.append(
            f"{both_loose} installed cable(s) join two re-paired switches and count as moved "
            "(the model pairs one re-paired end at a time)"
        )
    return Alignment(
        before=new_before,
        after=new_after,
        renamed=renamed,
        kept=kept,
        installed=installed,
        lower_bound_moves=max(0, lower) if not both_loose else max(0, lower - both_loose),
        status=solution.status,
        notes=tuple(notes),
    )


def _rename_link(lk: Link, names: dict[str, str]) -> Link:
    return dataclasses.replace(
        lk,
        a_device=names.get(lk.a_device, lk.a_device),
        b_device=names.get(lk.b_device, lk.b_device),
    )


def _renamed(design: Design, names: dict[str, str]) -> Design:
    """``design`` with switches renamed (cables keep their printed labels: what is installed)."""
    if not names:
        return design
    return dataclasses.replace(
        design,
        switches=tuple(dataclasses.replace(s, id=names.get(s.id, s.id)) for s in design.switches),
        links=tuple(_rename_link(lk, names) for lk in design.links),
        placements=tuple(
            dataclasses.replace(p, device=names.get(p.device, p.device)) for p in design.placements
        ),
        segments=tuple(
            dataclasses.replace(
                s,
                a_device=names.get(s.a_device, s.a_device),
                b_device=names.get(s.b_device, s.b_device),
            )
            for s in design.segments
        ),
    )


def _renumbered(after: Design, kept: list[Link]) -> Design:
    """``after``'s wiring with switch ports re-numbered inside their sections so that each kept
    installed link (given in new names) lies on its installed ports; layout stripped."""
    switches = after.switch_by_id()
    sect = _sections(after)
    claims: dict[Bundle, list[Link]] = defaultdict(list)
    for lk in kept:
        claims[lk.a_device, lk.b_device, lk.kind].append(lk)
    fixed_ports: dict[Section, set[int]] = defaultdict(set)
    for lk in kept:
        if lk.a_device in switches:
            fixed_ports[lk.a_device, lk.kind, "a"].add(lk.a_port)
        if lk.b_device in switches:
            fixed_ports[lk.b_device, lk.kind, "b"].add(lk.b_port)
    free = {k: sorted(v - fixed_ports.get(k, set()), reverse=True) for k, v in sect.items()}
    out: list[Link] = []
    for lk in sorted(after.links, key=lambda x: x.id):
        claim = claims.get((lk.a_device, lk.b_device, lk.kind))
        if claim:
            # a node or device end keeps its port: claim the installed link on that port
            pick = next(
                (
                    k
                    for k, old in enumerate(claim)
                    if (lk.a_device in switches or old.a_port == lk.a_port)
                    and (lk.b_device in switches or old.b_port == lk.b_port)
                ),
                None,
            )
            if pick is not None:
                old = claim.pop(pick)
                out.append(dataclasses.replace(lk, a_port=old.a_port, b_port=old.b_port))
                continue
        a_port, b_port = lk.a_port, lk.b_port
        if lk.a_device in switches:
            a_port = free[lk.a_device, lk.kind, "a"].pop()
        if lk.b_device in switches:
            b_port = free[lk.b_device, lk.kind, "b"].pop()
        out.append(dataclasses.replace(lk, a_port=a_port, b_port=b_port))
    by_id = {lk.id: i for i, lk in enumerate(after.links)}
    out.sort(key=lambda lk: by_id[lk.id])
    return dataclasses.replace(
        after, links=tuple(out), racks=(), placements=(), cables=(), panels=(), segments=()
    )
