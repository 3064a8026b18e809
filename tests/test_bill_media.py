"""`bill.media`: with ``fibre`` the 4-SU DGX SuperPOD example bills exactly what NVIDIA's
reference architecture lists; the default stays the cheapest media."""

from __future__ import annotations

import json
from functools import cache

import pytest

from tests.cli_outputs import run
from tests.conftest import EXAMPLES

SUPERPOD = EXAMPLES / "superpod-h100-4su.yaml"


@cache
def plan(*extra: str) -> dict:  # type: ignore[type-arg]
    code, out, err = run(["plan", str(SUPERPOD), "--json", *extra])
    assert code == 0, err
    return json.loads(out)  # type: ignore[no-any-return]


def test_fibre_policy_is_the_published_superpod_bill() -> None:
    """NVIDIA DGX SuperPOD reference architecture, DGX H100 (RA-11333-001 V11), network-fabrics
    page, Table 4 "Compute fabric component count", 4 SUs: 127 nodes, 32 leaf and 16 spine
    switches, 1,020 "compute and UFM" cables (1,016 DGX ports + 4 UFM ports) and 1,024
    spine-leaf cables; its appendix component table (Table 8) lists 508 DGX twin-port
    transceivers (flat top, MMA4Z00-NS-FLT), 4 single-port 400G UFM transceivers and 1,536
    switch twin-port transceivers (finned, MMA4Z00-NS: one in each of the 48 x 32 cages).
    NVIDIA's bill is fibre throughout: 2,040 NDR cables for the node-leaf and leaf-spine links,
    plus the UFM's 4."""
    d = plan("--set", "bill.media=fibre")
    t = d["totals"]
    tiers = t["per_tier"]
    assert tiers["node_leaf"]["physical_cables"] + tiers["leaf_spine"]["physical_cables"] == 2040
    assert (tiers["node_leaf"]["links"], tiers["leaf_spine"]["links"]) == (1016, 1024)
    assert tiers["device_leaf"] == {"links": 4, "physical_cables": 4, "transceivers": 8}
    assert t["cables"] == t["fibres"] == 2040 + 4
    assert t["transceivers_switch"] == 1536
    parts = {ln["part_number"]: ln["count"] for ln in d["bom"] if ln["kind"] == "transceiver"}
    assert parts == {"MMA4Z00-NS": 1536, "MMA4Z00-NS-FLT": 508, "MMA4Z00-NS400": 4}
    assert t["transceivers_node"] == 508 + 4
    assert {ln["kind"] for ln in d["bom"]} == {"switch", "transceiver", "fibre"}
    assert sum(ln["count"] for ln in d["bom"] if ln["kind"] == "switch") == 48


def test_cheapest_policy_is_the_default_and_uses_copper_where_close() -> None:
    default, cheapest = plan(), plan("--set", "bill.media=cheapest")
    assert default == cheapest
    kinds = {ln["kind"] for ln in default["bom"]}
    assert "cable" in kinds  # twin-port DAC/ACC between close racks
    fibre = plan("--set", "bill.media=fibre")
    assert default["totals"]["cost_usd"] < fibre["totals"]["cost_usd"]


def test_an_unknown_policy_is_refused() -> None:
    code, _, err = run(["plan", str(SUPERPOD), "--set", "bill.media=copper-only"])
    assert code == 2 and "bill.media" in err


@pytest.mark.parametrize("fmt", ["csv"])
def test_the_bom_file_follows_the_policy(fmt: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / f"bom.{fmt}"
    code, _, err = run(["bom", str(SUPERPOD), "--set", "bill.media=fibre", "-o", str(out)])
    assert code == 0, err
    text = out.read_text(encoding="utf-8")
    assert "dac-" not in text and "acc-" not in text
