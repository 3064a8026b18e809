"""Test plan PDF: cover with coverage, then one section per acceptance step with fill-in tables.

Every row carries the expected value, the pass rule and a blank for the measured value; the
reasons behind the numbers are printed once per section, above its table, as numbered notes
([1], [2], ...) that the rows refer to, so that a 2,000-pair plan stays readable.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import mm
from reportlab.platypus import Flowable, KeepTogether, PageBreak, Paragraph, Spacer

from railplan.render import pdf_common as pc
from railplan.render import pdf_document as pdoc
from railplan.render import pdf_tables as ptab
from railplan.render.pdf_common import CHECKBOX, STYLES, Progress, esc, para
from railplan.render.pdf_document import DocInfo
from railplan.render.testplan_data import check_line
from railplan.testplan import Check, PlanTest, Section, TestPlan


def _rule(c: Check) -> str:
    op = {"higher": ">=", "lower": "<=", "equal": "="}[c.better]
    unit = f" {c.unit}" if c.unit in ("GB/s", "Gb/s", "us") else ""
    return f"{op} {c.threshold:g}{unit}"


class _Notes:
    """Distinct reasons of a section, numbered in order of first use."""

    def __init__(self) -> None:
        self.items: dict[str, int] = {}

    def ref(self, reason: str) -> str:
        if reason not in self.items:
            self.items[reason] = len(self.items) + 1
        return f"[{self.items[reason]}]"

    def flowables(self) -> list[Flowable]:
        if not self.items:
            return []
        out: list[Flowable] = [para("Why these numbers", "h2")]
        for reason, n in self.items.items():
            out.append(para(f"[{n}] {esc(reason)}", "small"))
        # above the table that cites them: the heading never ends a page alone and the notes
        # never open a near-empty page after the table
        return [KeepTogether(out), Spacer(1, 2 * mm)]


def _cover(plan: TestPlan, width: float) -> list[Flowable]:
    c = plan.coverage
    o = plan.options
    counts = ", ".join(f"{len(s.tests):,} {s.title.lower()}" for s in plan.sections)
    summary = [
        ("Design", plan.design),
        ("Revision / design hash", f"{plan.revision} / {plan.design_hash}"),
        ("Fabric", f"{plan.topology}, {plan.protocol}, {plan.line_rate_gbps} Gb/s NIC ports"),
        ("RDMA efficiency", f"{plan.efficiency.value:g} ({plan.efficiency.source})"),
        ("Devices", f"{' '.join(plan.devices)}" + (f"; RoCE GID index {o.gid_index}, lossless "
                    f"priority {o.lossless_priority}" if plan.protocol == "ethernet" else "")),
        ("Tests", f"{sum(len(s.tests) for s in plan.sections):,}: {counts}"),
    ]  # fmt: skip
    cov = [
        ("Switch-to-switch links", f"{c.covered_links:,} of {c.inter_switch_links:,} exercised"
                                   + (f"; NOT covered: {', '.join(c.uncovered[:8])}" if c.uncovered else "")),
        ("Nodes", f"{c.nodes_paired:,} of {c.nodes:,} in pair tests, {c.partners} partner(s) each"),
        ("Pairs", f"{c.pairs:,} in {c.rounds} round(s); lower bound {c.lower_bound:,}; "
                  f"{c.solver} (bound {c.solver_bound:,})"),
        ("Rail-crossing probes", f"{c.probes:,}"),
        ("How links count", c.note),
    ]  # fmt: skip
    steps = [
        ("1", "Node checks on every node: ACS off, GPUDirect RDMA, ports Active at rate and MTU"
              + (", RoCE GID, PFC and ECN" if plan.protocol == "ethernet" else "") + "."),
        ("2", "As-built cabling: neighbours of every switch port against the cable schedule."),
        ("3", "Per-link RDMA: ib_write_bw and ib_write_lat for every path class."),
        ("4", "Pair tests: two-node ring all-reduce, round by round."),
        ("5", "NCCL collectives: all_reduce_perf and alltoall_perf."),
    ]  # fmt: skip
    return [
        pc.SectionMark("Cover", "cover"),
        Spacer(1, 14 * mm),
        para("Acceptance test plan", "title"),
        para(esc(f"{plan.design}: what to run, where, and what must come out"), "subtitle"),
        ptab.kv_table(summary, (42 * mm, width - 42 * mm)),
        Spacer(1, 5 * mm),
        para("Coverage", "h2"),
        ptab.kv_table(cov, (42 * mm, width - 42 * mm)),
        Spacer(1, 5 * mm),
        para("Order of work", "h2"),
        ptab.kv_table(steps, (10 * mm, width - 10 * mm)),
        Spacer(1, 5 * mm),
        para(
            "Run the generated scripts (scripts/run_all.sh, or slurm/submit.sh) or the commands "
            "printed here; write each measured value in its row and tick the box when it passes. "
            "railplan grade reads the scripts' results folder and diagnoses slow pairs. Every "
            "expected value is derived from the design: line rate x sourced efficiency x the "
            "collision analyzer's prediction for the pattern the test runs.",
            "body",
        ),
    ]


def _table(
    header: Sequence[str], rows: list[list[Any]], rel: Sequence[float], frame: tuple[float, float],
    caption: str,
) -> list[Flowable]:  # fmt: skip
    w, _ = frame
    widths = [w * r / sum(rel) for r in rel]
    return ptab.paged_tables(header, pc.clip_rows(rows, widths), widths, caption=caption)


#: command lines set tighter when that keeps a section's last commands off a page of their own
_TIGHT_MONO = ParagraphStyle("mono-tight", parent=STYLES["mono"], leading=8.2)


def _commands(lines: Sequence[str], title: str = "", tight: bool = False) -> list[Flowable]:
    """Command lines in monospace; ``title`` (a test id) heads the first line, in bold."""
    head = f"<b>{esc(title)}</b>  " if title else ""
    style = _TIGHT_MONO if tight else STYLES["mono"]
    paras = [Paragraph((head if i == 0 else "") + esc(line), style)
             for i, line in enumerate(lines)]  # fmt: skip
    return [*paras, Spacer(1, (0.8 if tight else 2.5) * mm)]


class _FitOrFlow(Flowable):
    """Groups of flowables (each kept together) that go on the page as they are when they fit,
    set tighter (the ``tight`` groups) when that fits the rest of the page, and flow on to the
    next page group by group otherwise: a section's last few lines never open a page of their
    own when a little less spacing keeps them on this one, and when they must, enough groups
    go with them that the page they open is at least a fifth full (``MIN_SPILL``)."""

    #: the least share of a frame the groups carried to the next page fill (a fifth, and a
    #: margin for the running header and footer the frame leaves out)
    MIN_SPILL = 0.25

    def __init__(
        self, normal: list[list[Flowable]], tight: list[list[Flowable]], frame_h: float
    ) -> None:
        super().__init__()
        self.normal = normal
        self.tight = tight
        self.frame_h = frame_h

    @staticmethod
    def _height(groups: list[list[Flowable]], aw: float) -> float:
        return sum(f.wrap(aw, 1e9)[1] + f.getSpaceBefore() + f.getSpaceAfter()
                   for g in groups for f in g)  # fmt: skip

    def wrap(self, aw: float, ah: float) -> tuple[float, float]:
        self.width, self.height = aw, self._height(self.normal, aw)
        return self.width, self.height

    def split(self, aw: float, ah: float) -> list[Flowable]:
        slack = 2 * mm
        if self._height(self.tight, aw) <= ah - slack:
            return [f for g in self.tight for f in g]
        heights = [self._height([g], aw) for g in self.normal]
        here, used = 0, 0.0
        while here < len(heights) and used + heights[here] <= ah - slack:
            used += heights[here]
            here += 1
        # the groups that would open the next page: never a near-empty page of their own
        while 0 < here < len(heights) and sum(heights[here:]) < self.MIN_SPILL * self.frame_h:
            here -= 1
        if here == 0:
            return []  # the frame moves on to the next page, all the groups with it
        first = [f for g in self.normal[:here] for f in g]
        return [*first, PageBreak(), *(KeepTogether(g) for g in self.normal[here:])]

    def draw(self) -> None:
        y = self.height
        for f in (f for g in self.normal for f in g):
            _, h = f.wrap(self.width, 1e9)
            y -= h + f.getSpaceBefore()
            f.drawOn(self.canv, 0, y)
            y -= f.getSpaceAfter()


def _intro(section: Section, number: int) -> list[Flowable]:
    return [
        pc.SectionMark(f"{number}. {section.title}", section.key),
        para(f"{number}. {esc(section.title)}", "h1"),
        para(esc(section.intro), "body"),
    ]


def _node_section(section: Section, number: int, frame: tuple[float, float]) -> list[Flowable]:
    story = _intro(section, number)
    if not section.tests:
        return story
    first = section.tests[0]
    story.append(para("Commands (each node; devices in port order)", "h2"))
    story += _commands(first.command)
    story.append(para("Checks", "h2"))
    rows = [[ch.metric, _rule(ch) + f" {ch.unit}", ch.reason] for ch in first.checks]
    story += _table(["Metric", "Pass", "Why"], rows, [22, 14, 90], frame, f"{number}. Checks")
    story.append(para("Nodes", "h2"))
    header = ["Test", "Node", *[ch.metric for ch in first.checks], "Pass"]
    rel = [24, 14, *[11] * len(first.checks), 6]
    rows = [[t.id, t.nodes[0], *[""] * len(first.checks), CHECKBOX] for t in section.tests]
    story += _table(header, rows, rel, frame, f"{number}. Nodes")
    return story


def _cabling_section(section: Section, number: int, frame: tuple[float, float]) -> list[Flowable]:
    story = _intro(section, number)
    if section.tests:
        story.append(para("Commands", "h2"))
        story += _commands(section.tests[0].command)
    header = ["Test", "Switch", "Ports", "First / last cable", "Seen ok", "Miswired",
              "Missing", "Extra", "Below rate", "Pass"]  # fmt: skip
    rows = []
    for t in section.tests:
        cables = [r.split("@")[0] for r in t.refs]
        span = f"{cables[0]} .. {cables[-1]}" if cables else "-"
        rows.append([t.id, t.id[4:], str(len(t.refs)), span, "", "", "", "", "", CHECKBOX])
    story += _table(header, rows, [34, 28, 8, 30, 10, 10, 10, 10, 10, 6], frame,
                    f"{number}. {section.title}")  # fmt: skip
    return story


def _linkq_section(section: Section, number: int, frame: tuple[float, float]) -> list[Flowable]:
    """Link quality: each distinct command set once, the checks, one fill-in row per test."""
    story = _intro(section, number)
    for command in dict.fromkeys(t.command for t in section.tests):
        story.append(para("Commands (start and finish)", "h2"))
        story += _commands(command)
    checks = list({ch.metric: ch for t in section.tests for ch in t.checks}.values())
    reasons = {(ch.metric, ch.reason): ch for t in section.tests for ch in t.checks}
    rows = [[ch.metric, _rule(ch) + f" {ch.unit}", ch.reason] for ch in reasons.values()]
    story += _table(["Metric", "Pass", "Why"], rows, [22, 14, 90], frame, f"{number}. Checks")
    header = ["Test", "Node / switch", *[ch.metric for ch in checks], "Pass"]
    rows = [[t.id, t.nodes[0] if t.nodes else t.id[3:], *[""] * len(checks), CHECKBOX]
            for t in section.tests]  # fmt: skip
    story += _table(header, rows, [24, 24, *[14] * len(checks), 6], frame, f"{number}. Ports")
    return story


def _fill_rows(tests: Sequence[PlanTest], notes: _Notes, ends: Any) -> list[list[Any]]:
    rows = []
    for t in tests:
        ch = t.checks[0]
        rows.append([t.id, *ends(t), f"{ch.expected:g} {ch.unit}", _rule(ch), "",
                     notes.ref(ch.reason), CHECKBOX])  # fmt: skip
    return rows


def _rdma_section(section: Section, number: int, frame: tuple[float, float]) -> list[Flowable]:
    story = _intro(section, number)
    notes = _Notes()
    if section.tests:
        story.append(para("Commands (server first, then the client; first test shown)", "h2"))
        story += _commands(section.tests[0].command)

    def ends(t: PlanTest) -> list[str]:
        server, client = t.nodes
        return [f"{client}:{t.devices[1]}", f"{server}:{t.devices[0]}", t.kind[5:]]

    header = ["Test", "Client (sends)", "Server", "Tool", "Expected", "Pass", "Measured",
              "Why", ""]  # fmt: skip
    rows = _fill_rows(section.tests, notes, ends)
    story += notes.flowables()
    story += _table(header, rows, [36, 24, 24, 8, 16, 13, 16, 7, 5], frame,
                    f"{number}. {section.title}")  # fmt: skip
    return story


def _pairs_section(
    plan: TestPlan, section: Section, number: int, frame: tuple[float, float]
) -> list[Flowable]:
    story = _intro(section, number)
    c = plan.coverage
    story.append(
        para(
            esc(
                f"Coverage: {c.covered_links:,} of {c.inter_switch_links:,} switch-to-switch "
                f"links, {c.nodes_paired:,} of {c.nodes:,} nodes; {c.pairs:,} pairs in "
                f"{c.rounds} round(s), lower bound {c.lower_bound:,} ({c.solver}). {c.note}."
            ),
            "small",
        )
    )
    notes = _Notes()
    if section.tests:
        story.append(para("Command (first pair shown; the others differ in hosts and "
                          "NCCL_TESTS_MIN_BW)", "h2"))  # fmt: skip
        story += _commands(section.tests[0].command)

    def ends(t: PlanTest) -> list[str]:
        groups = sum(1 for r in t.refs if r.startswith(("up:", "ll:"))) or len(t.refs)
        return [str(t.round), t.nodes[0], t.nodes[1], f"{groups}" if t.refs else "-"]

    header = ["Test", "Round", "Node A", "Node B", "Link groups", "Expected avg busbw",
              "Pass", "Measured", "Why", ""]  # fmt: skip
    rows = _fill_rows(section.tests, notes, ends)
    story += notes.flowables()
    story += _table(header, rows, [18, 9, 18, 18, 12, 20, 14, 16, 7, 5], frame,
                    f"{number}. {section.title}")  # fmt: skip
    return story


def _nccl_section(section: Section, number: int, frame: tuple[float, float]) -> list[Flowable]:
    story = _intro(section, number)
    notes = _Notes()

    def ends(t: PlanTest) -> list[str]:
        env = dict(t.env)
        who = " + ".join(t.nodes) if len(t.nodes) <= 2 else f"{len(t.nodes)} nodes"
        keys = ("NCCL_ALGO", "NCCL_TESTS_SPLIT", "NCCL_TESTS_SPLIT_MASK")
        extra = " ".join(f"{k}={env[k]}" for k in keys if k in env)
        return [t.kind.replace("nccl_", "").replace("ladder_", ""), who, extra or "-"]

    header = ["Test", "Collective", "Nodes", "Environment", "Expected avg busbw",
              "Pass", "Measured", "Why", ""]  # fmt: skip
    rows = _fill_rows(section.tests, notes, ends)
    story += notes.flowables()
    story += _table(header, rows, [30, 14, 34, 40, 20, 14, 16, 7, 5], frame,
                    f"{number}. {section.title}")  # fmt: skip
    head = para("Commands", "h2")
    normal = [_commands(t.command, t.id) for t in section.tests]
    tight = [_commands(t.command, t.id, tight=True) for t in section.tests]
    story.append(
        _FitOrFlow([[head, *normal[0]], *normal[1:]], [[head, *tight[0]], *tight[1:]], frame[1])
    )
    return story


def testplan_story(plan: TestPlan, info: DocInfo) -> list[Flowable]:
    doc = pdoc.Document(None, info)
    portrait = doc.frame_size("portrait")
    land = doc.frame_size("landscape")
    story: list[Flowable] = _cover(plan, portrait[0])
    story += pdoc.landscape_next()
    builders = {
        "node": lambda s, n: _node_section(s, n, land),
        "cabling": lambda s, n: _cabling_section(s, n, land),
        "linkq": lambda s, n: _linkq_section(s, n, land),
        "rdma": lambda s, n: _rdma_section(s, n, land),
        "pairs": lambda s, n: _pairs_section(plan, s, n, land),
        "nccl": lambda s, n: _nccl_section(s, n, land),
        "ladder": lambda s, n: _nccl_section(s, n, land),
        "fabric": lambda s, n: _nccl_section(s, n, land),
        "dcgm": lambda s, n: _nccl_section(s, n, land),
        "burnin": lambda s, n: _nccl_section(s, n, land),
    }
    for n, section in enumerate(plan.sections, start=1):
        if n > 1:
            story.append(PageBreak())
        story += builders[section.key](section, n)
    return story


def render_testplan(
    plan: TestPlan, page_size: str = "a4", progress: Progress | None = None
) -> tuple[bytes, int]:
    """The test plan PDF and its page count."""
    info = DocInfo("Acceptance test plan", plan.design, plan.revision, plan.design_hash, page_size)
    return pdoc.render(testplan_story(plan, info), info, progress)


__all__ = ["check_line", "render_testplan", "testplan_story"]
