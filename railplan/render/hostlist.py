"""Slurm hostlist expressions: ``node[0001-0032,0040]`` from a list of names, and back.

Slurm's parser (``src/common/hostlist.c``) reads a prefix, then a bracket of comma-separated
numbers and ranges; a range keeps the zero padding of its first number, so ``node[0001-0032]``
names node0001 ... node0032. Names are kept in the order given, a run of consecutive numbers
with the same prefix and width folding into one range; a name without trailing digits stands
alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

_TAIL = re.compile(r"^(.*?)(\d+)$")
_PART = re.compile(r"([^\[\],]*)(?:\[([^\]]*)\])?")


def compress(names: Iterable[str]) -> str:
    """The hostlist expression naming ``names`` (in their order)."""
    parts: list[tuple[str, int, list[tuple[int, int]]]] = []  # prefix, width, runs
    for name in names:
        m = _TAIL.match(name)
        if m is None:
            parts.append((name, -1, []))
            continue
        prefix, digits = m.group(1), m.group(2)
        number, width = int(digits), len(digits)
        if parts and parts[-1][0] == prefix and parts[-1][1] == width:
            runs = parts[-1][2]
            if runs[-1][1] + 1 == number:
                runs[-1] = (runs[-1][0], number)
            else:
                runs.append((number, number))
        else:
            parts.append((prefix, width, [(number, number)]))
    return ",".join(_part(prefix, width, runs) for prefix, width, runs in parts)


def _part(prefix: str, width: int, runs: Sequence[tuple[int, int]]) -> str:
    if width < 0:
        return prefix
    if len(runs) == 1 and runs[0][0] == runs[0][1]:
        return f"{prefix}{runs[0][0]:0{width}d}"
    inner = ",".join(
        f"{a:0{width}d}" if a == b else f"{a:0{width}d}-{b:0{width}d}" for a, b in runs
    )
    return f"{prefix}[{inner}]"


def expand(expression: str) -> list[str]:
    """The names a hostlist expression stands for (one bracket per name, as ``compress`` writes)."""
    out: list[str] = []
    pos = 0
    text = expression.strip()
    while pos < len(text):
        m = _PART.match(text, pos)
        if m is None or m.end() == pos:
            raise ValueError(f"not a hostlist expression: {expression!r}")
        prefix, inner = m.group(1), m.group(2)
        pos = m.end()
        if pos < len(text):
            if text[pos] != ",":
                raise ValueError(f"not a hostlist expression: {expression!r}")
            pos += 1
        if inner is None:
            if prefix:
                out.append(prefix)
            continue
        for item in inner.split(","):
            first, _, last = item.partition("-")
            width = len(first)
            for number in range(int(first), int(last or first) + 1):
                out.append(f"{prefix}{number:0{width}d}")
    return out
