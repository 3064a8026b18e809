"""A Kueue ``Topology`` object whose levels are the node labels ``render.k8s_labels`` writes.

The object follows Kueue's CRD (``config/components/crd/bases/kueue.x-k8s.io_topologies.yaml``,
version ``v1beta2``): ``spec.levels`` lists ``nodeLabel`` keys from the highest (coarsest) level
to the lowest (``site/content/en/docs/concepts/topology.md``), 1 to 16 of them, unique, and
``kubernetes.io/hostname`` only as the last. railplan ends with ``kubernetes.io/hostname`` so
the levels above it stay mutable while workloads run (the CRD's rule for changing levels).
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from railplan.design.hierarchy import Hierarchy
from railplan.errors import SpecError
from railplan.render.k8s_labels import DEFAULT_PREFIX, label_keys

API_VERSION = "kueue.x-k8s.io/v1beta2"
HOSTNAME = "kubernetes.io/hostname"
#: Kueue's maxItems on spec.levels
MAX_LEVELS = 16


def object_name(design: str) -> str:
    """A DNS-1123 subdomain from the design name (lower case; other characters become '-')."""
    name = re.sub(r"[^a-z0-9.-]+", "-", design.lower()).strip("-.")[:253].strip("-.")
    return name or "fabric"


def document(
    h: Hierarchy, scheme: str = "railplan", prefix: str = DEFAULT_PREFIX, name: str | None = None
) -> dict[str, Any]:
    """The Topology object as plain data."""
    keys = [*label_keys(h, scheme, prefix)[::-1], HOSTNAME]
    if len(keys) > MAX_LEVELS:
        raise SpecError(f"the fabric has {len(keys)} levels; Kueue takes at most {MAX_LEVELS}")
    return {
        "apiVersion": API_VERSION,
        "kind": "Topology",
        "metadata": {"name": object_name(name or h.design)},
        "spec": {"levels": [{"nodeLabel": k} for k in keys]},
    }


def render(
    h: Hierarchy, origin: str = "from the plan", scheme: str = "railplan",
    prefix: str = DEFAULT_PREFIX,
) -> str:  # fmt: skip
    """The Topology object as YAML (``kubectl apply -f``)."""
    head = (
        f"# Kueue Topology for design {h.design} ({h.topology}), {origin}; label the nodes "
        "first (railplan topology --format k8s-labels)\n"
    )
    doc = document(h, scheme, prefix)
    return head + yaml.safe_dump(doc, sort_keys=False, default_flow_style=False)
