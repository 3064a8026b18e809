"""Every refusal names the path at fault, at a small fuzz budget (the large one is
``python bench/fuzz.py``, whose tally counts a refusal that does not as ``refused-unnamed``):
a mutated spec, catalog or capture is refused with a first line naming that file, and a bad
``--set`` with the field path it sets. The bench's own rule is tested here too."""

from __future__ import annotations

import json
import os
import random
import sys
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import EXAMPLES, ROOT

sys.path.insert(0, str(ROOT / "bench"))
from fuzz import HOSTILE, mutate_json, mutate_text, names_a_path  # the campaign's own

EXAMPLES_PER_TEST = int(os.environ.get("RAILPLAN_FUZZ_EXAMPLES", "12"))
FUZZ = settings(
    max_examples=EXAMPLES_PER_TEST,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def first_refusal(result) -> str | None:  # type: ignore[no-untyped-def]
    assert result.code in (0, 1, 2), result.err[-2000:]
    if result.code != 2:
        return None
    lines = result.err.strip().splitlines()
    assert lines and all(line.startswith("railplan: error: ") for line in lines), result.err
    return lines[0]


def test_the_rule() -> None:
    spec = "/tmp/x/spec.yaml"
    assert names_a_path("railplan: error: spec.yaml: cluster.gpus: must be ...", spec, [])
    assert names_a_path("railplan: error: /tmp/x/spec.yaml line 3: not valid YAML", spec, [])
    assert not names_a_path("railplan: error: cluster: give either node ...", spec, [])
    assert not names_a_path("railplan: error: unknown switch 'x'", spec, [])
    none = "/tmp/x/none.txt"
    assert names_a_path(f"railplan: error: {none}: does not exist", spec, ["asbuilt", none])
    assert names_a_path("railplan: error: cluster.node: unknown node model 'NaN'", "", [])
    assert not names_a_path("railplan: error: unknown node model 'NaN'", "", [])


@FUZZ
@given(seed=st.integers(0, 2**32 - 1))
def test_a_mutated_spec_is_refused_naming_the_file(cli, tmp_path: Path, seed: int) -> None:
    base = yaml.safe_load((EXAMPLES / "seed001-64gpu.yaml").read_text(encoding="utf-8"))
    rng = random.Random(seed)
    spec = tmp_path / f"s{seed}.yaml"
    spec.write_text(yaml.safe_dump(mutate_json(rng, base, rng.randint(1, 3))), encoding="utf-8")
    line = first_refusal(cli("plan", spec, "--no-layout", "--json"))
    assert line is None or names_a_path(line, str(spec), []), line


@FUZZ
@given(seed=st.integers(0, 2**32 - 1))
def test_a_mutated_capture_is_refused_naming_the_file(cli, tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    field = EXAMPLES / "field"
    source, design, flag = rng.choice(
        [
            (field / "ibnetdiscover.txt", field / "ib-design.json", "--ibnetdiscover"),
            *((p, field / "design.json", "--lldp") for p in sorted((field / "lldp").iterdir())),
        ]
    )
    capture = tmp_path / f"c{seed}{source.suffix}"
    capture.write_text(mutate_text(rng, source.read_text(encoding="utf-8")), encoding="utf-8")
    line = first_refusal(cli("asbuilt", design, flag, capture))
    assert line is None or names_a_path(line, str(capture), []), line


@FUZZ
@given(key=st.sampled_from(["cluster.gpus", "cluster.node", "fabric.planes", "fabric.switches",
                            "fabric.oversubscription", "layout.nodes_per_rack"]),
       value=st.sampled_from(HOSTILE))  # fmt: skip
def test_a_bad_set_value_is_refused_naming_its_field(cli, key: str, value: object) -> None:
    shown = json.dumps(value) if not isinstance(value, str) else value
    spec = EXAMPLES / "seed001-64gpu.yaml"
    line = first_refusal(cli("plan", spec, "--no-layout", "--json", "--set", f"{key}={shown}"))
    assert line is None or names_a_path(line, "", []), line
