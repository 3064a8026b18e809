"""designs/ holds what every example plans to; a drift fails here (regenerate deliberately).

Small designs are stored whole and compared byte for byte; large ones are stored as the
``plan --json`` summary and SHA-256 hashes (see designs/regenerate.py): the topology hash is
checked here, the full cabled design with RAILPLAN_SLOW=1.
"""

from __future__ import annotations

import hashlib
import json
import os

import pytest

from railplan import load_spec, plan
from railplan.design import design_to_json
from railplan.pipeline.build import build
from railplan.spec import spec_to_yaml
from tests.conftest import EXAMPLES, ROOT

DESIGNS = ROOT / "designs"
EXAMPLE_NAMES = sorted(p.stem for p in EXAMPLES.glob("*.yaml"))
STORED_WHOLE = sorted(n for n in EXAMPLE_NAMES if (DESIGNS / n / "design.json").is_file())
STORED_HASHED = sorted(n for n in EXAMPLE_NAMES if (DESIGNS / n / "design.sha256").is_file())
REGENERATE = "python designs/regenerate.py"
SLOW = os.environ.get("RAILPLAN_SLOW") == "1"


def _hashes(name: str) -> dict[str, str]:
    lines = (DESIGNS / name / "design.sha256").read_text().splitlines()
    return {what: digest for digest, what in (line.split() for line in lines)}


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_every_example_has_its_reference_design(name):
    folder = DESIGNS / name
    assert name in STORED_WHOLE or name in STORED_HASHED, f"run {REGENERATE}"
    spec = load_spec(EXAMPLES / f"{name}.yaml")
    assert (folder / "spec.yaml").read_text() == spec_to_yaml(spec), f"spec drifted: {REGENERATE}"


def test_designs_folder_stays_small():
    size = sum(p.stat().st_size for p in DESIGNS.rglob("*") if p.is_file())
    assert size < 5_000_000, f"designs/ holds {size:,} bytes; store large designs hashed"


@pytest.mark.parametrize("name", STORED_WHOLE)
def test_small_reference_designs_are_byte_identical(name):
    built = build(load_spec(EXAMPLES / f"{name}.yaml"))
    expected = (DESIGNS / name / "design.json").read_text()
    assert design_to_json(built.design) == expected, f"design drifted: {REGENERATE}"


@pytest.mark.parametrize("name", STORED_HASHED)
def test_large_reference_designs_keep_their_topology(name):
    spec = load_spec(EXAMPLES / f"{name}.yaml")
    topology = design_to_json(plan(spec))
    assert _sha(topology) == _hashes(name)["topology"], f"topology drifted: {REGENERATE}"
    summary = json.loads((DESIGNS / name / "summary.json").read_text())
    assert summary["switches"] == plan(spec).switch_counts()


@pytest.mark.skipif(not SLOW, reason="full layout of the large examples: RAILPLAN_SLOW=1")
@pytest.mark.parametrize("name", STORED_HASHED)
def test_large_reference_designs_are_byte_identical(name):
    built = build(load_spec(EXAMPLES / f"{name}.yaml"))
    assert _sha(design_to_json(built.design)) == _hashes(name)["design.json"], REGENERATE
