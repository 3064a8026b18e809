"""What a newcomer sees first: help text, refused flags, compare --json keys, the LICENSE."""

from __future__ import annotations

import hashlib
import json
import re

import pytest

from tests.conftest import EXAMPLES, ROOT

COMMANDS = ["plan", "compare", "analyze", "cables", "sheets", "testplan", "asbuilt", "grade",
            "schema", "tui", "catalog list", "catalog show", "examples"]  # fmt: skip


@pytest.mark.parametrize("command", COMMANDS)
def test_help_has_no_type_placeholders(cli, command: str) -> None:
    res = cli(*command.split(), "--help")
    assert res.code == 0
    assert not re.search(r"<(list\[|[a-z]+ range)", res.out), res.out
    assert "--help" in res.out


@pytest.mark.parametrize(("argv", "usage"), [((), "railplan"), (("catalog",), "railplan catalog")])
def test_a_command_alone_shows_its_help_plainly(cli, argv: tuple[str, ...], usage: str) -> None:
    """``railplan`` or ``railplan catalog`` with nothing after it prints the help as it reads
    (not each line as an error), exit code 2 as click gives it."""
    res = cli(*argv)
    assert res.code == 2 and res.out == ""
    assert res.err.startswith(f"Usage: {usage} [OPTIONS] COMMAND [ARGS]...")
    assert "Commands:" in res.err and "railplan: error:" not in res.err


@pytest.mark.parametrize("flag", [["--topology", "matrix"], ["--set", "fabric.topology=roft"]])
def test_compare_refuses_a_topology(cli, flag: list[str]) -> None:
    res = cli("compare", "--gpus", "64", "--node", "dgx-h100", *flag)
    assert res.code == 2 and res.out == ""
    assert res.err == (
        "railplan: error: --topology: compare plans every family (roft, matrix, fat-tree, "
        "rail-only) side by side; drop --topology (use railplan plan --topology X for one "
        "family)\n"
    )


def test_compare_json_has_vs_roft_on_every_billed_row(cli) -> None:
    res = cli("compare", EXAMPLES / "seed003-roft.yaml", "--json", "--no-traffic", "--naive")
    designs = json.loads(res.out)["designs"]
    assert {d["topology"] for d in designs} >= {"roft", "matrix"}
    keys = {"switches", "transceivers", "cables", "cost_usd", "power_w"}
    price_keys = {"p_cheaper", "saving_range", "sensitive_parts", "tco_saving_usd"}
    for d in designs:
        assert set(d["vs_roft"]) == keys | price_keys
    roft = next(d for d in designs if d["topology"] == "roft")
    assert {k: roft["vs_roft"][k] for k in keys} == dict.fromkeys(keys, 0)
    assert roft["vs_roft"]["p_cheaper"] == 0 and roft["vs_roft"]["sensitive_parts"] == []
    matrix = next(d for d in designs if d["topology"] == "matrix")
    want = matrix["switches"]["total"] - roft["switches"]["total"]
    assert matrix["vs_roft"]["switches"] == want < 0


def test_license_is_the_apache_2_text_pyproject_names() -> None:
    text = (ROOT / "LICENSE").read_bytes()
    # md5 of https://www.apache.org/licenses/LICENSE-2.0.txt, the canonical text
    assert hashlib.md5(text).hexdigest() == "3b83ef96387f14655fc854ddc3c6bd57"
    assert 'license = { text = "Apache-2.0" }' in (ROOT / "pyproject.toml").read_text("utf-8")


def test_readme_points_only_at_things_a_user_can_open() -> None:
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        for word in ("DOMAIN.md", "seed 00", "the issues", "/work/"):
            assert word not in text, f"{page.name}: {word}"
        assert "`placement." not in text, page.name  # the field is layout.placement.*


def test_readme_is_a_front_page_under_15_kb() -> None:
    """The README says what railplan is, the Quick start, the three jobs and links; the rest is
    the documentation site under docs/ (mkdocs.yml), and every page it links to exists."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.encode()) < 15_000
    quick = readme[readme.index("## Quick start") :].split("```bash\n")[1].split("```")[0]
    assert quick.splitlines() == [
        "python3 -m pip install -e . && railplan plan examples/h100-1k.yaml",
        'python3 -m pip install -e ".[test]" && python3 -m pytest',
    ]
    for target in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert (ROOT / target).is_file(), target
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in (ROOT / "docs").rglob("*.md"):
        assert str(page.relative_to(ROOT / "docs")) in nav, f"{page} is not in mkdocs.yml's nav"
