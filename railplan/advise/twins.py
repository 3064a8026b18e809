"""Wiring twins: candidates on switch models with the same ports, wired alike, judged once.

Two switch models that differ only in name, maker, price, power and part number (the
SN5600 and the CX864E-N: 64 OSFP cages of 800G, 51.2T, Ethernet) give a candidate the same
wiring on either: the generators, ``validate.check`` and the traffic analysis read a model's
ports (cages, modes, form factor, lanes), its protocol and its size, never its price or
vendor. So a candidate that fails a wiring requirement (not laid out, not billed) fails it on
its twin with the same figures; only the vendor figure and the model names differ, and
``for_twin`` sets those. A billed candidate (its cost and power are the model's own) or one
that could not be built (the message names the model) is evaluated again.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from railplan.advise.candidates import Candidate
from railplan.advise.evaluate import Evaluation
from railplan.advise.requirements import judge
from railplan.catalog import Catalog, SwitchModel
from railplan.spec.requirements import RequirementsSpec

#: SwitchModel fields the wiring never reads (identity, money, power, provenance)
NOT_WIRING = frozenset(
    {
        "id",
        "name",
        "vendor",
        "price_usd",
        "power_typical_w",
        "power_max_w",
        "afr",
        "hop_latency_ns",
        "part_number",
        "notes",
        "source",
    }
)
#: verdicts judged only on a billed design
BILL_KEYS = ("max_power_w", "budget_usd")


def ports_signature(model: SwitchModel) -> str:
    """Everything of ``model`` the wiring can read, as one comparable string."""
    return json.dumps(model.model_dump(mode="json", exclude=set(NOT_WIRING)), sort_keys=True)


def twin_of(order: list[Candidate], catalog: Catalog) -> dict[Candidate, Candidate]:
    """For each candidate with an earlier wiring twin in ``order``, the first such twin."""
    first: dict[tuple[Candidate, str], Candidate] = {}
    out: dict[Candidate, Candidate] = {}
    for cand in order:
        key = (dataclasses.replace(cand, switch=""), ports_signature(catalog.switch(cand.switch)))
        rep = first.setdefault(key, cand)
        if rep is not cand:
            out[cand] = rep
    return out


def for_twin(
    ev: Evaluation, cand: Candidate, req: RequirementsSpec, catalog: Catalog
) -> Evaluation | None:
    """``evaluate`` of ``cand`` from its twin's unbilled evaluation ``ev``, or None where it
    cannot be carried over (built and billed, not built, or with notes that may name it)."""
    if not ev.built or ev.billed or ev.notes:
        return None
    old, new = ev.candidate.switch, cand.switch
    model = catalog.switch(new)
    figures = dict(ev.figures)
    verdicts = ev.verdicts
    if "vendors" in figures:
        figures["vendors"] = [model.vendor]
        figures["protocol"] = [model.protocol]
        verdicts = tuple(v for v in judge(req, figures) if v.key not in BILL_KEYS)
    return dataclasses.replace(
        ev,
        candidate=cand,
        figures=figures,
        verdicts=verdicts,
        summary=_renamed(ev.summary, old, new),
    )


def _renamed(summary: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    """A ``plan_summary`` with the switch model ``old`` named ``new``."""
    out = dict(summary)
    if out.get("switch_model") == old:
        out["switch_model"] = new
    if "switch_models" in out:
        out["switch_models"] = {k: new if v == old else v for k, v in out["switch_models"].items()}
    if "tier_sizing" in out:
        out["tier_sizing"] = [
            {**t, "model": new} if t.get("model") == old else t for t in out["tier_sizing"]
        ]
    return out
