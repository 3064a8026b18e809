"""designs/ holds what every example plans to; a drift fails here (regenerate deliberately)."""

from __future__ import annotations

import json

import pytest

from railplan import load_spec, plan
from railplan.build import build
from railplan.model import design_to_json
from railplan.spec import spec_to_yaml
from tests.conftest import EXAMPLES, ROOT

DESIGNS = ROOT / "designs"
EXAMPLE_NAMES = sorted(p.stem for p in EXAMPLES.glob("*.yaml"))
#: examples whose full layout (placement + cabling) is re-run byte for byte in the suite
FULL = {
    "seed000-2node",
    "seed001-64gpu",
    "seed003-roft",
    "seed003-matrix",
    "h100-1k",
    "fat-tree-1k",
}
TOPOLOGY_KEYS = ("nodes", "switches", "links", "sizing", "shape", "routing")

REGENERATE = "python designs/regenerate.py"


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_every_example_has_its_reference_design(name):
    folder = DESIGNS / name
    assert (folder / "design.json").is_file(), f"run {REGENERATE}"
    spec = load_spec(EXAMPLES / f"{name}.yaml")
    assert (folder / "spec.yaml").read_text() == spec_to_yaml(spec), f"spec drifted: {REGENERATE}"


@pytest.mark.parametrize("name", sorted(FULL))
def test_small_reference_designs_are_byte_identical(name):
    built = build(load_spec(EXAMPLES / f"{name}.yaml"))
    expected = (DESIGNS / name / "design.json").read_text()
    assert design_to_json(built.design) == expected, f"design drifted: {REGENERATE}"


@pytest.mark.parametrize("name", sorted(set(EXAMPLE_NAMES) - FULL))
def test_large_reference_designs_keep_their_topology(name):
    spec = load_spec(EXAMPLES / f"{name}.yaml")
    fresh = json.loads(design_to_json(plan(spec)))
    stored = json.loads((DESIGNS / name / "design.json").read_text())
    for key in TOPOLOGY_KEYS:
        assert fresh[key] == stored[key], f"{key} drifted: {REGENERATE}"
    assert len(stored["cables"]) == len(stored["links"])
