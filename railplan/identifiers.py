"""The strict patterns every name that reaches a script, a file name or a host must match.

Node, switch, rack, link and cable ids, RDMA device names and the design name end up in
generated shell scripts (which run as root on every node), in host files and in folder names
under ``results/``. Rather than trust any escaping to be right everywhere, railplan admits only
names made of letters, digits, ``.``, ``_`` and ``-`` that start with a letter or a digit: no
space, no quote, no ``$``, no ``/`` (no folders), no leading ``-`` (never an option).
"""

from __future__ import annotations

import re

#: ids of devices, links, cables, racks and designs; RDMA device names (``mlx5_0``)
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$"
#: a revision printed on handouts and in script headers (``B``, ``2025-06-01 rc1``)
REVISION_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9 ._:+-]{0,39}$"
ID_RULE = "letters, digits, '.', '_' and '-', starting with a letter or digit, at most 80"
REVISION_RULE = "letters, digits, spaces and . _ : + -, starting with a letter or digit, at most 40"

_ID = re.compile(ID_PATTERN)
_REVISION = re.compile(REVISION_PATTERN)


def is_id(value: object) -> bool:
    """True when ``value`` is a str that matches ``ID_PATTERN``."""
    return isinstance(value, str) and _ID.fullmatch(value) is not None


def is_revision(value: object) -> bool:
    return isinstance(value, str) and _REVISION.fullmatch(value) is not None


def shorten(text: str, limit: int = 60) -> str:
    """``text`` cut to ``limit`` characters (with an ellipsis) so a message never echoes 1 MB."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def shown(value: object, limit: int = 60) -> str:
    """``repr`` of a value, shortened: how a message quotes an input it refuses."""
    return shorten(repr(value), limit)


def unsafe_id(value: object, what: str) -> str | None:
    """None when ``value`` is a safe id, else the sentence that says why it is refused."""
    if is_id(value):
        return None
    return f"{what} {shown(value)} is not a safe name; use {ID_RULE} characters"
