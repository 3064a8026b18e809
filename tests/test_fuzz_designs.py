"""The design.json loader at a small fuzz budget (the large one is ``python bench/fuzz.py``):
hypothesis mutates a design railplan wrote, and every load either succeeds or is refused with
a sentence that starts with the file's path; plus the published JSON Schema and the limits."""

from __future__ import annotations

import json
import os
import random
import sys
from pathlib import Path

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from railplan.design import limits
from railplan.design.validation import design_json_schema
from railplan.errors import DesignFileError
from railplan.pipeline.source import DesignSource
from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
from fuzz import mutate_json  # the campaign's own mutator

SOURCE = ROOT / "designs" / "seed001-64gpu" / "design.json"
EXAMPLES = int(os.environ.get("RAILPLAN_FUZZ_EXAMPLES", "25"))


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(seed=st.integers(0, 2**32 - 1), edits=st.integers(1, 4))
def test_a_mutated_design_loads_or_is_refused_naming_its_path(
    tmp_path: Path, seed: int, edits: int
) -> None:
    data = mutate_json(random.Random(seed), json.loads(SOURCE.read_text()), edits)
    path = tmp_path / f"m{seed}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    try:
        DesignSource(path).design()
    except DesignFileError as exc:
        lines = str(exc).splitlines()
        assert lines and all(line.startswith(str(path)) for line in lines), str(exc)
        assert "Input should" not in str(exc)


def test_the_published_schema_accepts_what_railplan_writes_and_names_the_bounds() -> None:
    schema = design_json_schema()
    for path in sorted((ROOT / "designs").glob("*/design.json")):
        jsonschema.validate(json.loads(path.read_text()), schema)
    data = json.loads(SOURCE.read_text())
    data["switches"][0]["radix"] = 10**8
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, schema)


def test_schema_command(cli) -> None:
    result = cli("schema", "--design")
    assert result.code == 0
    assert json.loads(result.out)["title"].startswith("railplan design.json")


def test_the_limits_are_the_planners() -> None:
    from railplan.topology import shape

    assert limits.MAX_NODES == shape.MAX_NODES
    assert limits.MAX_NODE_PORTS == shape.MAX_NODE_PORTS
