"""Build examples/field/: a small worked field example (designs, captures, results).

    PYTHONPATH=$PWD python -m tests.field_example --write   # regenerate the files
    PYTHONPATH=$PWD python -m tests.field_example           # check them (exit 1 if stale)

What it writes, all derived from two small cabled designs so every README command runs:

- ``design.json``: the 2-node RoCE example (examples/seed000-2node.yaml), cabled with first-fit
  placement; ``lldp/`` the LLDP neighbours its hosts (``lldpcli -f json0 show neighbors
  details``) and its switch (SONiC ``show lldp table``) report for the cabling as planned;
  ``names.yaml`` the site's host and interface names mapped to the design's.
- ``ib-design.json``: 4 DGX H100 on qm9700 switches; ``ibnetdiscover.txt`` what
  ``ibnetdiscover`` prints for it with two node cables swapped on one leaf (the as-built check
  finds them: exit 1).
- ``results/``: everything the generated test scripts collect for the 2-node example's test
  plan (node checks, the as-built LLDP, perftest and nccl-tests outputs), from a healthy fabric:
  ``railplan grade`` passes every check. Regenerate it when the test plan changes.

The tool outputs are synthesized in the formats the tools print (the same writers the parser
tests use), with stable GUIDs and MACs.
"""

from __future__ import annotations

import sys
import zlib
from pathlib import Path

import yaml

import railplan
from railplan.design import Design, design_to_json
from railplan.field.names import Endpoint
from railplan.pipeline.layout import complete
from tests import test_asbuilt as asb
from tests import test_grade as grd

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "examples" / "field"


def _guid(device: str, port: int = 0) -> str:
    return f"{zlib.crc32(f'{device}:{port}'.encode()):08x}".rjust(16, "0")


def cabled(spec: dict[str, object] | Path) -> Design:
    loaded = railplan.load_spec(spec) if isinstance(spec, Path) else railplan.spec_from_dict(spec)
    catalog = railplan.load_catalog()
    return complete(railplan.plan(loaded, catalog), loaded, catalog, method="naive")[0]


def _roce_files(design: Design) -> dict[str, str]:
    files = {"design.json": design_to_json(design)}
    names = {
        "devices": {asb.host(design, n.id): n.id for n in design.nodes},
        "node_ports": {
            asb.host_if(p): design.shape.port_name(p) for p in range(design.shape.ports)
        },
    }
    header = "# Site names (as LLDP reports them) -> the design's names, for railplan asbuilt\n"
    files["names.yaml"] = header + yaml.safe_dump(names, sort_keys=True)
    return files


def _lldp_files(design: Design, tmp: Path) -> dict[str, str]:
    asb.render_lldp(design, asb.planned_edges(design), tmp / "lldp")
    return {
        f"lldp/{p.name}": p.read_text(encoding="utf-8") for p in sorted((tmp / "lldp").iterdir())
    }


def _ib_files() -> dict[str, str]:
    spec = {"name": "field-ib", "cluster": {"gpus": 32, "node": "dgx-h100"},
            "fabric": {"topology": "roft", "switches": ["qm9700"], "whole_su": False}}  # fmt: skip
    design = cabled(spec)
    edges = asb.planned_edges(design)
    first = [i for i, (a, b, _) in enumerate(edges) if b.device == edges[0][1].device][:2]
    (a0, b0, r0), (a1, b1, r1) = edges[first[0]], edges[first[1]]
    edges[first[0]], edges[first[1]] = (a0, Endpoint(b1.device, b1.port), r0), (a1, b0, r1)
    kept, asb.guid = asb.guid, _guid  # stable GUIDs in the sample (the parser tests use hash())
    try:
        capture = asb.render_ibnetdiscover(design, edges)
    finally:
        asb.guid = kept
    return {"ib-design.json": design_to_json(design), "ibnetdiscover.txt": capture}


def _results(design: Design, tmp: Path) -> dict[str, str]:
    folder = tmp / "results"
    folder.mkdir()
    assert not grd.scripted_results(design, folder, slow_node="", bad_link="")  # all healthy
    return {
        f"results/{p.relative_to(folder)}": p.read_text(encoding="utf-8")
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def files() -> dict[str, str]:
    import tempfile

    roce = cabled(ROOT / "examples" / "seed000-2node.yaml")
    out = _roce_files(roce)
    with tempfile.TemporaryDirectory() as tmp:
        out.update(_lldp_files(roce, Path(tmp)))
        out.update(_results(roce, Path(tmp)))
    out.update(_ib_files())
    return out


def main(argv: list[str]) -> int:
    want = files()
    have = {str(p.relative_to(OUT)): p.read_text(encoding="utf-8")
            for p in sorted(OUT.rglob("*")) if p.is_file()} if OUT.exists() else {}  # fmt: skip
    if "--write" in argv:
        for rel, text in want.items():
            (OUT / rel).parent.mkdir(parents=True, exist_ok=True)
            (OUT / rel).write_text(text, encoding="utf-8")
        for rel in set(have) - set(want):
            (OUT / rel).unlink()
        return 0
    stale = sorted(rel for rel in set(want) | set(have) if want.get(rel) != have.get(rel))
    for rel in stale:
        print(f"examples/field/{rel} is stale; run python -m tests.field_example --write")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
