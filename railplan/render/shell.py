"""What may go into a generated shell script: the name checks and the one quoting helper."""

from __future__ import annotations

import re

from railplan.design import Design
from railplan.identifiers import ID_RULE, REVISION_RULE, is_id, is_revision, shown
from railplan.testplan import TestPlan

#: an NCCL setting passed with mpirun -x or env: NAME=value, value from a small alphabet
_ENV = re.compile(r"^[A-Z][A-Z0-9_]{0,63}=[A-Za-z0-9._,:=^+ -]{0,400}$")
_HEX = re.compile(r"^[0-9a-f]{1,64}$")
#: characters a shell word may hold bare (the set Python's shlex.quote leaves alone)
_BARE = re.compile(r"^[A-Za-z0-9@%+=:,./_-]+$")


def shell_word(value: object) -> str:
    """``value`` as exactly one shell word, whatever it holds.

    Bare when it is made of safe characters only; else in single quotes; and when it holds a
    control character (a newline, an escape) in bash's ``$'...'`` form with ``\\xHH`` escapes,
    so no line break ever reaches the script, not even inside a comment.
    """
    text = str(value)
    if _BARE.fullmatch(text):
        return text
    if not any(ord(ch) < 32 or ord(ch) == 127 for ch in text):
        return "'" + text.replace("'", "'\"'\"'") + "'"
    escaped = "".join(
        f"\\x{ord(ch):02x}" if ord(ch) < 32 or ord(ch) == 127 else "\\" + ch if ch in "\\'" else ch
        for ch in text
    )
    return f"$'{escaped}'"


def unsafe_names(plan: TestPlan, design: Design) -> list[str]:
    """Every name that would reach a script and fails its pattern, as sentences (empty: fine)."""
    out: list[str] = []

    def need(ok: bool, what: str, value: object, rule: str = ID_RULE) -> None:
        if not ok and len(out) < 10:
            out.append(f"{what} {shown(value)} cannot go into a script; use {rule} characters")

    need(is_id(plan.design) and is_id(design.name), "the design name", plan.design)
    need(is_revision(plan.revision), "the revision", plan.revision, REVISION_RULE)
    need(_HEX.fullmatch(str(plan.design_hash)) is not None, "the design hash", plan.design_hash)
    need(plan.protocol in ("ethernet", "infiniband"), "the protocol", plan.protocol)
    for n in design.nodes:
        need(is_id(n.id), "node id", n.id)
    for sw in design.switches:
        need(is_id(sw.id), "switch id", sw.id)
    for dev in plan.devices:
        need(is_id(dev), "RDMA device", dev)
    o = plan.options
    for size in (o.nccl_min_bytes, o.nccl_max_bytes):
        need(re.fullmatch(r"[0-9]{1,12}[KMG]?", str(size)) is not None, "NCCL size", size)
    for section in plan.sections:
        for t in section.tests:
            need(is_id(t.id), "test id", t.id)
            for name in (*t.nodes, *t.devices):
                need(is_id(name), f"a name in test {t.id}", name)
            for key, value in t.env:
                pair = f"{key}={value}"
                need(_ENV.fullmatch(pair) is not None, "NCCL setting", pair, "NAME=value")
    return out
