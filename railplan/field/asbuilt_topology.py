"""The scheduler's topology as built: the tree read from LLDP / InfiniBand captures, against the plan.

The captures are matched to the design by the as-built check (``field.asbuilt``: names, ports,
every seen edge); the device pairs they show are fed to the same ``design.hierarchy`` the plan
uses, so a cable that is wrong in a way a scheduler would notice changes the tree. A link no
input covers (both ends unreported, e.g. the uplinks when only hosts ran LLDP) is taken as
planned and counted. A difference between the two trees is a finding, named by node and by the
cables the as-built check blames:

- a node whose cables reach other leaves than planned (a pair of cables swapped between two
  SUs moves each node out of its SU: it shares its leaves with nobody, and its Slurm switch,
  block and labels say so);
- a node the captures show on no switch at all;
- a leaf group that sits under other spines, pods or cores than planned.

Cabling faults that leave every node's leaves as planned (two nodes' cables swapped on one
leaf, a slow link) are the as-built check's, not the scheduler's; they are counted here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from railplan.design import Design
from railplan.design.hierarchy import Hierarchy, hierarchy, named_like, planned_pairs
from railplan.field.asbuilt import compare, observe, read_inputs
from railplan.field.asbuilt_report import AsBuiltReport, Finding, LinkCheck
from railplan.field.common import FieldInputError
from railplan.field.names import Endpoint, NameMap


@dataclass(frozen=True)
class TopologyCheck:
    """The plan's tree, the as-built tree, what differs, and the cabling check behind it."""

    design: str
    planned: Hierarchy
    as_built: Hierarchy
    findings: tuple[Finding, ...]
    cabling: AsBuiltReport
    #: links no input covers, taken as planned
    assumed: int

    @property
    def ok(self) -> bool:
        return not self.findings

    summary_header = ("finding", "node or group", "what differs")

    def summary_rows(self) -> list[tuple[str, str, str]]:
        return [(f.kind, ", ".join(f.links), f.message) for f in self.findings]

    def summary_line(self) -> str:
        other = len(self.cabling.findings)
        levels = ", ".join(f"{lv.name} {len(lv.groups)}" for lv in self.as_built.levels)
        return (
            f"as-built topology: {levels}; {len(self.findings)} difference(s) from the plan; "
            f"{other} cabling finding(s) in all (railplan asbuilt lists them); "
            f"{self.assumed} link(s) no input covers, taken as planned"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "design": self.design,
            "ok": self.ok,
            "findings": [
                {
                    "kind": f.kind,
                    "items": list(f.links),
                    "cables": list(f.labels),
                    "message": f.message,
                }
                for f in self.findings
            ],
            "planned": _levels(self.planned),
            "as_built": _levels(self.as_built),
            "cabling_findings": len(self.cabling.findings),
            "assumed_links": self.assumed,
        }


def _levels(h: Hierarchy) -> list[dict[str, Any]]:
    return [
        {"level": lv.name, "groups": {g.name: list(g.nodes) for g in lv.groups}} for lv in h.levels
    ]


def split_captures(paths: Sequence[Path]) -> tuple[list[Path], Path | None, Path | None]:
    """Sort capture files by kind: LLDP (files and folders), ibnetdiscover, iblinkinfo.

    A folder is LLDP; a file is ibnetdiscover when it holds ``Switch``/``Ca`` records with
    ``vendid=`` lines, iblinkinfo when it holds its ``==>`` arrows, LLDP otherwise (the LLDP
    parser reads lldpcli JSON and the switch tables).
    """
    lldp: list[Path] = []
    ibnet: Path | None = None
    iblink: Path | None = None
    for path in paths:
        if not path.exists():
            raise FieldInputError(f"--from-asbuilt {path}: no such file or folder")
        if path.is_dir():
            lldp.append(path)
            continue
        head = _head(path)
        kind = "lldp"
        if re.search(r"^vendid=", head, re.M) and re.search(r'^(Switch|Ca)\s+\d+\s+"', head, re.M):
            kind = "ibnetdiscover"
        elif "==>" in head:
            kind = "iblinkinfo"
        if kind == "lldp":
            lldp.append(path)
            continue
        if (ibnet if kind == "ibnetdiscover" else iblink) is not None:
            raise FieldInputError(f"--from-asbuilt {path}: give one {kind} capture, not two")
        if kind == "ibnetdiscover":
            ibnet = path
        else:
            iblink = path
    return lldp, ibnet, iblink


def _head(path: Path, size: int = 1 << 16) -> str:
    """The first ``size`` bytes of a capture as text (enough to tell its kind)."""
    try:
        with path.open("rb") as fh:
            return fh.read(size).decode("utf-8", "replace")
    except OSError as exc:
        raise FieldInputError(f"--from-asbuilt {path}: cannot be read ({exc.strerror})") from None


def check_topology(
    design: Design,
    lldp: Sequence[str | Path] | None = None,
    ibnetdiscover: str | Path | None = None,
    iblinkinfo: str | Path | None = None,
    names: str | Path | NameMap | None = None,
) -> TopologyCheck:
    """Read the captures, build the as-built tree and compare it with the plan's."""
    names_map = names if isinstance(names, NameMap) else NameMap.load(design, names)
    parsed, inputs = read_inputs(lldp, ibnetdiscover, iblinkinfo)
    seen = observe(design, parsed, names_map)
    cabling = compare(design, parsed, names_map, inputs)
    pairs: list[tuple[str, str]] = []
    for edge in seen.edges:
        ends = [e for e in edge if isinstance(e, Endpoint)]
        if len(ends) == 2:
            pairs.append((ends[0].device, ends[1].device))
    assumed = 0
    for a, b in planned_pairs(design):
        if a not in seen.covered and b not in seen.covered:
            pairs.append((a, b))
            assumed += 1
    planned = hierarchy(design)
    built = named_like(hierarchy(design, sorted(pairs)), planned)
    return TopologyCheck(
        design.name,
        planned,
        built,
        tuple(differences(design, planned, built, cabling)),
        cabling,
        assumed,
    )


def differences(
    design: Design, planned: Hierarchy, built: Hierarchy, cabling: AsBuiltReport
) -> list[Finding]:
    """Findings for every node and group the as-built tree places otherwise than the plan."""
    links = {lk.id: lk for lk in design.links}
    checks = {c.link_id: c for c in cabling.links}
    bad: dict[str, list[LinkCheck]] = {}
    for check in cabling.links:
        if check.status not in ("ok", "unverified"):
            link = links[check.link_id]
            twin = [checks[check.partner]] if check.partner in checks else []
            for device in (link.a_device, link.b_device):
                bad.setdefault(device, []).extend([check, *twin])  # a swap names both cables
    out: list[Finding] = []
    plan_first, built_first = planned.levels[0], built.levels[0]
    plan_group = {n: g for g in plan_first.groups for n in g.nodes}
    built_group = {n: g for g in built_first.groups for n in g.nodes}
    for node in planned.nodes:
        want = plan_group.get(node)
        have = built_group.get(node)
        if want is None:
            continue
        cables = _cables(bad, node)
        if have is None:
            out.append(
                Finding(
                    "topology",
                    (node,),
                    cables,
                    f"{node} is on no switch as built (planned in {want.name}); it is left out "
                    "of every file until its cables are found",
                )
            )
        elif have.switches != want.switches:
            extra = sorted(have.switches - want.switches)
            lost = sorted(want.switches - have.switches)
            peers = len(have.nodes) - 1
            out.append(
                Finding(
                    "topology",
                    (node,),
                    cables,
                    f"{node} leaves {want.name} as built: it reaches "
                    f"{', '.join(extra) or 'no other leaf'} instead of {', '.join(lost) or '-'}"
                    f", so it shares its leaves with {peers} node(s) instead of "
                    f"{len(want.nodes) - 1}; fix the cables and regenerate the files",
                )
            )
    out.extend(_upper(planned, built, bad))
    return out


def _upper(planned: Hierarchy, built: Hierarchy, bad: dict[str, list[LinkCheck]]) -> list[Finding]:
    """Leaf groups kept as planned whose spine, pod or core group reaches other switches."""
    names = [lv.name for lv in planned.levels]
    if names != [lv.name for lv in built.levels]:
        return [
            Finding(
                "topology",
                (planned.design,),
                (),
                f"the tree has levels {', '.join(lv.name for lv in built.levels)} as built, "
                f"planned {', '.join(names)}",
            )
        ]
    out: list[Finding] = []
    kept = {g.name: g for g in built.levels[0].groups}
    for g in planned.levels[0].groups:
        twin = kept.get(g.name)
        if twin is None:
            continue
        node = twin.nodes[0]
        for k in range(1, len(planned.levels)):
            want = next(p for p in planned.levels[k].groups if node in p.nodes)
            have = next(p for p in built.levels[k].groups if node in p.nodes)
            if want.switches == have.switches:
                continue
            extra = sorted(have.switches - want.switches)
            lost = sorted(want.switches - have.switches)
            mine = sorted({s.split("#", 1)[0] for s in g.switches})  # a Matrix key is leaf#q
            cables = tuple(sorted({c.label for s in mine for c in bad.get(s, ())}))
            out.append(
                Finding(
                    "topology",
                    (g.name,),
                    cables,
                    f"{planned.levels[0].name} {g.name} is not under {planned.levels[k].name} "
                    f"{want.name} as planned: its uplinks reach "
                    f"{', '.join(extra) or 'no other switch'} and not "
                    f"{', '.join(lost) or '-'}; fix them and regenerate the files",
                )
            )
            break
    return out


def _cables(bad: dict[str, list[LinkCheck]], node: str) -> tuple[str, ...]:
    return tuple(sorted({c.label for c in bad.get(node, ())}))
