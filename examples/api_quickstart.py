"""railplan from Python: load a spec, plan it, check it, inspect it, save it."""

from pathlib import Path

import railplan

spec = railplan.load_spec(Path(__file__).with_name("h100-1k.yaml"))
design = railplan.plan(spec)  # a frozen Design: nodes, switches, links
assert railplan.check(design) == []  # invariants re-derived from the wiring

print(design.topology, design.sizing.tiers, "tiers:", design.switch_counts())
print("lower bound on switches:", design.sizing.lower_bound_switches)
leaf = next(s for s in design.switches if s.role == "leaf")
print(f"{leaf.id} carries rail {leaf.rail} of SU {leaf.su + 1}")
text = railplan.design_to_json(design)  # lossless: design_from_json(text) == design
assert railplan.design_from_json(text) == design
