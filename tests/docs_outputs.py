"""Regenerate every command output the README and docs/ show, or check that none has drifted.

    PYTHONPATH=$PWD python -m tests.docs_outputs --write          # rewrite the shown outputs
    PYTHONPATH=$PWD python -m tests.docs_outputs                  # check them (exit 1 if stale)
    PYTHONPATH=$PWD python -m tests.docs_outputs --slow           # also the slow ones

A shown output sits between two HTML comments, so it is invisible on the page::

    <!-- output: railplan compare examples/seed003-matrix.yaml -->
    ```text
    ... exactly what the command printed ...
    ```
    <!-- /output -->

``output`` wraps the command's stdout in a ``text`` block, ``table`` inserts it as is (a command
that prints a Markdown table). ``output slow:`` / ``table slow:`` mark a command that takes more
than a few seconds: it is checked only with ``--slow`` (``RAILPLAN_SLOW=1`` in the test). The
command runs with bash from the repository root, ``railplan`` being this tree, 80 columns.

Two pages are generated whole: ``docs/reference/commands.md`` (every command's ``--help``, from
the CLI itself, so a new command appears there) and ``docs/reference/spec-fields.md`` (every spec
field with its type, default and description, from the spec's JSON Schema).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
COMMANDS_PAGE = DOCS / "reference" / "commands.md"
FIELDS_PAGE = DOCS / "reference" / "spec-fields.md"
WIDTH = 80

BLOCK = re.compile(
    r"(?P<open><!-- (?P<kind>output|table)(?P<slow> slow)?: (?P<cmd>.+?) -->\n)"
    r"(?P<body>.*?)"
    r"(?P<close><!-- /(?P=kind) -->)",
    re.S,
)


def pages() -> list[Path]:
    """The README and every Markdown page of the site, in a fixed order."""
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def _env(bin_dir: Path) -> dict[str, str]:
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "PYTHONPATH": str(ROOT)}
    env.update(COLUMNS=str(WIDTH), LINES="50", NO_COLOR="1", TERM="dumb")
    for name in ("RAILPLAN_CATALOG_DIR", "FORCE_COLOR"):
        env.pop(name, None)
    return env


def run(command: str, bin_dir: Path) -> str:
    """What ``command`` prints on stdout, run from the repository root."""
    res = subprocess.run(
        ["bash", "-o", "pipefail", "-c", command],
        cwd=ROOT, env=_env(bin_dir), capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    if "Traceback" in res.stderr or res.returncode not in (0, 1):
        raise RuntimeError(f"{command}: exit {res.returncode}: {res.stderr[-800:]}")
    return res.stdout


def _shim(folder: Path) -> Path:
    shim = folder / "railplan"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m railplan "$@"\n', encoding="utf-8")
    shim.chmod(0o755)
    return folder


def render_blocks(text: str, bin_dir: Path, slow: bool) -> str:
    """``text`` with every marked output regenerated (slow ones only when ``slow``)."""

    def fill(m: re.Match[str]) -> str:
        if m["slow"] and not slow:
            return m[0]
        out = run(m["cmd"], bin_dir)
        if out and not out.endswith("\n"):
            out += "\n"
        body = f"```text\n{out}```\n" if m["kind"] == "output" else out
        return m["open"] + body + m["close"]

    return BLOCK.sub(fill, text)


def blocks(text: str) -> Iterator[re.Match[str]]:
    yield from BLOCK.finditer(text)


# -- generated pages ---------------------------------------------------------------------------


def _commands() -> list[tuple[str, Any]]:
    """(name, click command) of every command and sub-command, in the CLI's order."""
    import typer

    from railplan.cli.app import _load_commands, app

    _load_commands()
    group = typer.main.get_command(app)
    out: list[tuple[str, Any]] = []

    def walk(prefix: str, cmd: Any) -> None:
        subs = getattr(cmd, "commands", None)
        if subs is None:
            out.append((prefix, cmd))
            return
        for name in sorted(subs):
            walk(f"{prefix} {name}".strip(), subs[name])

    walk("", group)
    return out


def commands_page() -> str:
    try:  # typer >= 0.20 vendors click as typer._click (as railplan/cli/app.py does)
        import typer._click as click
    except ImportError:  # older typer uses click itself
        import click  # type: ignore[no-redef]

    lines = [
        "# Command reference",
        "",
        "Every command's `--help`, generated from the CLI itself (`python -m tests.docs_outputs "
        "--write`; a test fails when this page differs from what the CLI prints). Exit codes: 0 "
        "done, 1 a check found problems (`asbuilt`, `grade`), 2 bad input, 70 an internal "
        "error, 130/143 interrupted.",
        "",
    ]
    for name, cmd in _commands():
        ctx = click.Context(cmd, info_name=f"railplan {name}", terminal_width=WIDTH)
        help_text = cmd.get_help(ctx).rstrip("\n")
        lines += [f"## `railplan {name}`", "", "```text", help_text, "```", ""]
    return "\n".join(lines)


def _type_of(prop: dict[str, Any], defs: dict[str, Any]) -> str:
    if "$ref" in prop:
        return _ref_name(prop["$ref"])
    if "enum" in prop:
        return ", ".join(f"`{v}`" for v in prop["enum"])
    if "const" in prop:
        return f"`{prop['const']}`"
    if "anyOf" in prop:
        kinds = [_type_of(p, defs) for p in prop["anyOf"] if p.get("type") != "null"]
        return " or ".join(dict.fromkeys(kinds)) or "null"
    kind = prop.get("type", "any")
    if kind == "array":
        return f"list of {_type_of(prop.get('items', {}), defs)}"
    if kind == "object" and "additionalProperties" in prop:
        extra = prop["additionalProperties"]
        inner = _type_of(extra, defs) if isinstance(extra, dict) else "any"
        return f"map of {inner}"
    return str(kind)


def _ref_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ").strip()


def _default(prop: dict[str, Any]) -> str:
    if "default" not in prop:
        return ""
    return f"`{json.dumps(prop['default'], ensure_ascii=False)}`"


def _rows(
    schema: dict[str, Any], defs: dict[str, Any], path: str, seen: tuple[str, ...]
) -> Iterator[tuple[str, str, str, str]]:
    for name, prop in schema.get("properties", {}).items():
        where = f"{path}.{name}" if path else name
        target = prop
        refs = [prop["$ref"]] if "$ref" in prop else []
        refs += [p["$ref"] for p in prop.get("anyOf", []) if "$ref" in p]
        desc = prop.get("description", "")
        items = prop.get("items", {})
        if prop.get("type") == "array" and "$ref" in items and _ref_name(items["$ref"]) not in seen:
            yield where, _cell(_type_of(prop, defs)), _cell(_default(prop)), _cell(desc)
            yield from _rows(defs[_ref_name(items["$ref"])], defs, f"{where}[]", seen)
            continue
        if len(refs) == 1 and _ref_name(refs[0]) not in seen:
            target = defs[_ref_name(refs[0])]
            desc = desc or target.get("description", "")
            if target.get("properties"):
                yield where, "object", _default(prop), _cell(desc)
                yield from _rows(target, defs, where, (*seen, _ref_name(refs[0])))
                continue
        yield where, _cell(_type_of(prop, defs)), _cell(_default(prop)), _cell(desc)


def fields_page() -> str:
    from railplan.spec import spec_json_schema

    schema = spec_json_schema()
    defs = schema.get("$defs", {})
    lines = [
        "# Spec fields",
        "",
        "Every field of a spec file, from the JSON Schema `railplan schema` prints (generated "
        "by `python -m tests.docs_outputs --write`; a test fails when it differs). A dotted "
        "path is what `--set PATH=VALUE` takes. [The spec format](spec.md) explains how they "
        "work together.",
        "",
        "| field | type | default | what |",
        "|---|---|---|---|",
    ]
    for where, kind, default, desc in _rows(schema, defs, "", ()):
        lines.append(f"| `{where}` | {kind} | {default} | {desc} |")
    return "\n".join(lines) + "\n"


GENERATED = {COMMANDS_PAGE: commands_page, FIELDS_PAGE: fields_page}


def stale(slow: bool = False) -> dict[Path, str]:
    """Every page whose shown outputs differ from what the commands print now: page -> text."""
    out: dict[Path, str] = {}
    for page, make in GENERATED.items():
        text = make()
        if not page.exists() or page.read_text(encoding="utf-8") != text:
            out[page] = text
    with tempfile.TemporaryDirectory() as tmp:
        bin_dir = _shim(Path(tmp))
        for page in pages():
            if page in GENERATED:
                continue
            old = page.read_text(encoding="utf-8")
            new = render_blocks(old, bin_dir, slow)
            if new != old:
                out[page] = new
    return out


def main(argv: list[str]) -> int:
    slow = "--slow" in argv or "--write" in argv
    changed = stale(slow)
    if "--write" in argv:
        for page, text in changed.items():
            page.write_text(text, encoding="utf-8")
            print(f"wrote {page.relative_to(ROOT)}", file=sys.stderr)
        return 0
    for page in changed:
        print(f"stale: {page.relative_to(ROOT)}", file=sys.stderr)
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
