"""Reading untrusted YAML and JSON: bounded size, depth, aliases and numbers, one sentence per refusal.

Every spec, catalog, ``--set`` value, name map, expectations file and design.json a user hands
to railplan is read here. The YAML checks run on the parser's event stream (libyaml's parser
when PyYAML has it) before PyYAML composes or constructs anything, so an alias bomb (the
"billion laughs" pattern) or a 1,000-deep nesting is refused in milliseconds instead of
eating minutes and gigabytes:

- the document is at most ``MAX_BYTES`` long and is UTF-8 text;
- it holds one document, nests at most ``MAX_DEPTH`` levels (flow brackets are counted in the
  raw text first: YAML scanners spend quadratic time on thousands of open ``[``), and holds
  at most ``MAX_NODES`` values with every alias counted at its full size; a recursive or
  undefined alias is named;
- only the plain YAML types (mapping, list, string, integer, float, true/false, null) are
  built: explicit tags other than ``!!str``, ``!!seq`` and ``!!map`` (``!!set``, ``!!binary``,
  ``!!python/...``) are refused, and a date stays the string it was written as;
- a mapping key may appear once, an integer has at most ``MAX_INT_DIGITS`` digits and a float
  must be finite (no ``.nan``, ``.inf`` or ``1.0e+999``).

JSON gets the same limits on size and numbers (``NaN`` and ``Infinity`` are refused).
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import sys
from pathlib import Path
from typing import Any

import yaml
from yaml import events, nodes

from railplan.errors import RailplanError

MAX_BYTES = 4 * 1024 * 1024
MAX_JSON_BYTES = 1024 * 1024 * 1024
MAX_DEPTH = 64
MAX_NODES = 250_000
MAX_INT_DIGITS = 40

_CORE = "tag:yaml.org,2002:"
#: explicit tags that only restate a plain type (``!!str 42``) are harmless
_PLAIN_TAGS = {_CORE + t for t in ("str", "seq", "map")}
#: implicit resolvers kept: a date stays a string, a lone ``=`` stays a string
_DROPPED_RESOLVERS = {_CORE + "timestamp", _CORE + "value"}


class _Refused(Exception):
    """A document railplan will not read; ``line`` is 1-based or None."""

    def __init__(self, problem: str, line: int | None = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.line = line


def _line(mark: Any) -> int | None:
    return mark.line + 1 if mark is not None else None


class _Guard:
    """Watches the event stream: depth, expanded size, anchors and tags, before composition."""

    def __init__(self, max_nodes: int) -> None:
        self.max_nodes = max_nodes
        self.depth = 0
        self.count = 0
        self.sizes: dict[str, int] = {}
        self.open: list[tuple[str | None, int]] = []
        self.documents = 0
        self.aliased = False

    def see(self, event: events.Event) -> None:
        if isinstance(event, events.DocumentStartEvent):
            self.documents += 1
            if self.documents > 1:
                raise _Refused(
                    "holds more than one YAML document ('---'); keep one document per file",
                    _line(event.start_mark),
                )
        elif isinstance(event, events.AliasEvent):
            self._alias(event)
        elif isinstance(event, events.NodeEvent):
            self._node(event)
        elif isinstance(event, events.CollectionEndEvent):
            anchor, start = self.open.pop()
            self.depth -= 1
            if anchor is not None:
                self.sizes[anchor] = self.count - start

    def _node(self, event: events.NodeEvent) -> None:
        line = _line(event.start_mark)
        tag = getattr(event, "tag", None)
        if tag is not None and tag not in _PLAIN_TAGS and tag != "!":
            shown = "!!" + tag[len(_CORE) :] if tag.startswith(_CORE) else tag
            raise _Refused(
                f"the YAML tag {_short(shown)} is not supported; railplan reads plain mappings, "
                "lists, strings, numbers and true/false: remove the tag",
                line,
            )
        start = self.count
        self._grow(1, line)
        anchor = event.anchor
        if isinstance(event, events.CollectionStartEvent):
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise _Refused(f"nested more than {MAX_DEPTH} levels deep", line)
            self.open.append((anchor, start))
        elif anchor is not None:
            self.sizes[anchor] = 1

    def _alias(self, event: events.AliasEvent) -> None:
        line = _line(event.start_mark)
        name = event.anchor or ""
        if any(anchor == name for anchor, _ in self.open):
            raise _Refused(f"the alias *{_short(name)} refers to itself (a recursive alias)", line)
        if name not in self.sizes:
            raise _Refused(
                f"the alias *{_short(name)} has no anchor &{_short(name)} before it", line
            )
        self._grow(self.sizes[name], line, alias=True)

    def _grow(self, by: int, line: int | None, alias: bool = False) -> None:
        self.count += by
        self.aliased = self.aliased or alias
        if self.count <= self.max_nodes:
            return
        if self.aliased:
            raise _Refused(
                f"expands to more than {self.max_nodes:,} values through its aliases (an alias "
                "bomb?); write the values out or use fewer aliases",
                line,
            )
        raise _Refused(f"holds more than {self.max_nodes:,} values, more than railplan reads", line)


#: libyaml's parser when PyYAML was built with it (its events come 20x faster), else PyYAML's
_BASE: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _digits(text: str) -> int:
    """Digits of an integer in any notation YAML reads (``0x``/``0o``/``0b`` prefixes, ``_``
    separators, base-60 ``1:30``): every hex digit after the prefix counts."""
    body = text.strip().lstrip("+-").replace("_", "")
    if body[:2].lower() in ("0x", "0o", "0b"):
        body = body[2:]
    return sum(ch in "0123456789abcdefABCDEF" for ch in body)


class _Loader(_BASE):  # type: ignore[valid-type,misc]
    """The safe loader with plain types only: no duplicate keys, bounded and finite numbers."""

    def construct_mapping(self, node: nodes.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == _CORE + "merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                fresh = key not in seen
            except TypeError:
                line = _line(key_node.start_mark)
                raise _Refused("a mapping key is a list or mapping", line) from None
            if not fresh:
                raise _Refused(
                    f"the key {_short(str(key))!r} appears twice in one mapping; keep one",
                    _line(key_node.start_mark),
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_int(self, node: nodes.ScalarNode) -> int:
        text = str(node.value)
        if _digits(text) > MAX_INT_DIGITS:
            raise _Refused(
                f"the number {_short(text)} has more than {MAX_INT_DIGITS} digits",
                _line(node.start_mark),
            )
        try:
            return super().construct_yaml_int(node)
        except ValueError:
            raise _Refused(f"{_short(text)} is not a number", _line(node.start_mark)) from None

    def construct_yaml_float(self, node: nodes.ScalarNode) -> float:
        try:
            value = super().construct_yaml_float(node)
        except ValueError:
            line = _line(node.start_mark)
            raise _Refused(f"{_short(str(node.value))} is not a number", line) from None
        if not math.isfinite(value):
            raise _Refused(
                f"{_short(str(node.value))} is not a finite number", _line(node.start_mark)
            )
        return value


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in _DROPPED_RESOLVERS]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_constructor(_CORE + "int", _Loader.construct_yaml_int)
_Loader.add_constructor(_CORE + "float", _Loader.construct_yaml_float)


def _short(text: str, limit: int = 60) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis, for quoting in messages."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _size(n: int) -> str:
    return f"{n // 1024 // 1024} MiB" if n >= 1024 * 1024 else f"{n // 1024} KiB"


def _decode(data: bytes | str, what: str, error: type[RailplanError], limit: int) -> str:
    if len(data) > limit:
        raise error(f"{what}: {len(data):,} bytes is more than the {_size(limit)} railplan reads")
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(
            f"{what}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
            "save the file as UTF-8"
        ) from None


def _yaml_problem(exc: yaml.YAMLError) -> tuple[str, int | None]:
    """A PyYAML error as (problem, line), with the common ones said in plain words."""
    if isinstance(exc, yaml.reader.ReaderError):
        return (f"contains the control character #x{exc.character:04x}, which YAML forbids", None)
    mark = getattr(exc, "problem_mark", None)
    problem = str(getattr(exc, "problem", "") or "")
    context = str(getattr(exc, "context", "") or "")
    if "expected a single document" in context or "another document" in problem:
        return (
            "holds more than one YAML document ('---'); keep one document per file",
            _line(mark),
        )
    if "found undefined alias" in problem:
        return (f"uses an alias with no anchor before it ({_short(problem)})", _line(mark))
    if "found duplicate anchor" in context:
        return ("defines the same anchor twice; give each anchor its own name", _line(mark))
    detail = f" ({_short(problem, 80)})" if problem else ""
    return (f"not valid YAML{detail}; check the indentation and quoting there", _line(mark))


_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")


def _flow_depth(text: str) -> None:
    """Refuse more than MAX_DEPTH open ``[`` / ``{`` (counted in the raw text, strings and
    comments included: an overestimate no real file reaches). YAML scanners keep a possible
    key per open flow level, so thousands of them cost quadratic time before any event."""
    opened = text.count("[") + text.count("{")
    if opened <= MAX_DEPTH:
        return
    depth = 0
    for ch in _NOT_BRACKETS.sub("", text):
        depth = depth + 1 if ch in "[{" else max(0, depth - 1)
        if depth > MAX_DEPTH:
            raise _Refused(f"nested more than {MAX_DEPTH} levels deep ([ and {{)")


def load_yaml(
    data: bytes | str,
    what: str,
    error: type[RailplanError],
    *,
    limit: int = MAX_BYTES,
    max_nodes: int = MAX_NODES,
) -> Any:
    """Parse one YAML document from untrusted input; refusals raise ``error`` naming ``what``."""
    text = _decode(data, what, error, limit)
    loader = None
    try:
        _flow_depth(text)
        guard = _Guard(max_nodes)
        for event in yaml.parse(text, Loader=_BASE):  # every check before a node is composed
            guard.see(event)
        loader = _Loader(text)
        return loader.get_single_data()
    except _Refused as exc:
        where = f"{what} line {exc.line}" if exc.line else what
        raise error(f"{where}: {exc.problem}") from None
    except yaml.YAMLError as exc:
        problem, line = _yaml_problem(exc)
        where = f"{what} line {line}" if line else what
        raise error(f"{where}: {problem}") from None
    except RecursionError:
        raise error(f"{what}: nested too deeply") from None
    finally:
        if loader is not None:
            loader.dispose()


#: the name that means "read standard input" where a command allows it
STDIN = "-"
_CHUNK = 1024 * 1024


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a regular file"


def _read_limited(fd: int, limit: int) -> bytes | None:
    """At most ``limit`` bytes from ``fd``; None when there are more (never trusting st_size)."""
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = os.read(fd, min(_CHUNK, limit + 1 - total))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            return None


def read_file(path: str | Path, what: str, error: type[RailplanError], limit: int) -> bytes:
    """The bytes of a user's file, read with a byte limit; raises ``error`` with a sentence.

    The file must be a regular file (a FIFO would block forever, a device such as /dev/zero
    never ends: both are refused, also through a symlink) or ``-`` for standard input. Its size
    is counted while reading, never taken from ``st_size`` (0 for a device, stale for a file
    still growing).
    """
    if str(path) == STDIN:
        data = _read_limited(sys.stdin.buffer.fileno(), limit)
        if data is None:
            raise error(f"{what} on standard input: more than the {_size(limit)} railplan reads")
        return data
    file = Path(path)
    try:
        fd = os.open(file, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise error(f"{what} {file} does not exist") from None
    except IsADirectoryError:
        raise error(f"{what} {file} is a folder; give a file") from None
    except OSError as exc:
        raise error(f"{what} {file} cannot be read ({exc.strerror})") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            hint = "give a file" if stat.S_ISDIR(mode) else "give a regular file (or - for stdin)"
            raise error(f"{what} {file} is {_kind(mode)}; {hint}")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        data = _read_limited(fd, limit)
    except OSError as exc:
        raise error(f"{what} {file} cannot be read ({exc.strerror})") from None
    finally:
        os.close(fd)
    if data is None:
        raise error(f"{what} {file}: more than the {_size(limit)} railplan reads")
    return data


def load_yaml_file(path: str | Path, what: str, error: type[RailplanError]) -> Any:
    """``load_yaml`` of a file; messages name the file."""
    file = Path(path)
    return load_yaml(read_file(file, what, error, MAX_BYTES), file.name, error)


def _json_int(text: str) -> int:
    if _digits(text) > MAX_INT_DIGITS:
        raise ValueError(f"the number {_short(text)} has more than {MAX_INT_DIGITS} digits")
    return int(text)


def _json_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{_short(text)} is not a finite number")
    return value


def _json_constant(name: str) -> float:
    raise ValueError(f"{name} is not a finite number")


#: ``json.loads`` keywords for untrusted JSON: integers of bounded digits, finite floats only
#: (each refusal a ValueError naming the number)
JSON_NUMBERS: dict[str, Any] = {
    "parse_int": _json_int,
    "parse_float": _json_float,
    "parse_constant": _json_constant,
}


def json_text(
    data: bytes | str, what: str, error: type[RailplanError], *, limit: int = MAX_JSON_BYTES
) -> str:
    """The text of untrusted JSON bytes: bounded size, UTF-8 (a byte-order mark dropped)."""
    return _decode(data, what, error, limit)


def load_json(
    data: bytes | str, what: str, error: type[RailplanError], *, limit: int = MAX_JSON_BYTES
) -> Any:
    """Parse untrusted JSON: bounded size and integers, finite floats, no NaN or Infinity."""
    text = _decode(data, what, error, limit)
    try:
        return json.loads(text, **JSON_NUMBERS)
    except json.JSONDecodeError as exc:
        raise error(f"{what}: not valid JSON at line {exc.lineno} ({exc.msg})") from None
    except ValueError as exc:
        raise error(f"{what}: {exc}") from None
    except RecursionError:
        raise error(f"{what}: JSON nested too deeply") from None
