"""Kubernetes node labels for the fabric: one label per tree level on every node.

Two key schemes:

- ``railplan`` (default): ``<prefix><level>``, e.g. ``railplan/su`` and ``railplan/spine`` on
  a 2-tier rail-optimized fat-tree, ``railplan/stripes`` and
  ``railplan/matrix`` on a Matrix (``design.hierarchy`` names the levels); ``--label-prefix``
  puts them under a domain of the site's own.
- ``topograph``: the keys NVIDIA topograph writes (``pkg/topology/topology.go``:
  ``fabric.topograph.run/tier-N``, tier 0 closest to the node, numbered outwards, as in its
  ``docs/engines/k8s.md``), so a scheduler set up for topograph (KAI, Kueue) reads them as is.

A value is the name of the node's group at that level (``su03``); nodes with equal values share
that part of the fabric, which is all a scheduler compares. Values are valid label values (at
most 63 characters of ``[A-Za-z0-9._-]``). Written as a YAML list (node, labels) or as a
``kubectl label`` script.
"""

from __future__ import annotations

import re

import yaml

from railplan.design.hierarchy import Hierarchy
from railplan.errors import SpecError
from railplan.render.shell import shell_word

KEY_SCHEMES = ("railplan", "topograph")
DEFAULT_PREFIX = "railplan/"
#: topograph's fabric label keys (KeyFabricTierPrefix in pkg/topology/topology.go)
TOPOGRAPH_TIER = "fabric.topograph.run/tier-"
#: a label key: optional DNS-subdomain prefix and "/", then a name of at most 63 characters
_PREFIX = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/$")
_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def check_options(scheme: str, prefix: str) -> None:
    """Refuse an unknown key scheme or a prefix that is not a DNS subdomain and a '/'."""
    if scheme not in KEY_SCHEMES:
        raise SpecError(f"--label-keys {scheme!r}: use one of {', '.join(KEY_SCHEMES)}")
    if len(prefix) > 254 or not _PREFIX.match(prefix):
        raise SpecError(
            f"--label-prefix {prefix[:80]!r}: give a DNS subdomain ending in '/', e.g. "
            "fabric.example.com/"
        )


def label_keys(h: Hierarchy, scheme: str = "railplan", prefix: str = DEFAULT_PREFIX) -> list[str]:
    """The label key of each level, lowest level first."""
    check_options(scheme, prefix)
    if scheme == "topograph":
        return [f"{TOPOGRAPH_TIER}{i}" for i in range(len(h.levels))]
    return [f"{prefix}{lv.name}" for lv in h.levels]


def node_labels(
    h: Hierarchy, scheme: str = "railplan", prefix: str = DEFAULT_PREFIX
) -> dict[str, dict[str, str]]:
    """Node -> {label key: value}, every attached node with one label per level."""
    keys = label_keys(h, scheme, prefix)
    out: dict[str, dict[str, str]] = {}
    for node, path in h.path_of().items():
        values = {k: v for k, v in zip(keys, path, strict=True)}
        for v in values.values():
            if len(v) > 63 or not _VALUE.match(v):  # pragma: no cover - names are short by design
                raise ValueError(f"label value {v!r} is not a valid Kubernetes label value")
        out[node] = values
    return out


def _comments(h: Hierarchy, origin: str, keys: list[str]) -> list[str]:
    lines = [f"# Kubernetes node labels for design {h.design} ({h.topology}), {origin}"]
    lines += [f"#   {k}: {lv.what}" for k, lv in zip(keys, h.levels, strict=True)]
    if h.unattached:
        lines.append(f"# on no switch, not labelled: {', '.join(h.unattached)}")
    return lines


def render(
    h: Hierarchy, origin: str = "from the plan", scheme: str = "railplan",
    prefix: str = DEFAULT_PREFIX,
) -> str:  # fmt: skip
    """The labels as a YAML list of ``{node, labels}``."""
    labels = node_labels(h, scheme, prefix)
    rows = [{"node": n, "labels": labels[n]} for n in h.nodes if n in labels]
    body = yaml.safe_dump(rows, sort_keys=False, default_flow_style=False, width=4096)
    return "\n".join(_comments(h, origin, label_keys(h, scheme, prefix))) + "\n" + body


def render_kubectl(
    h: Hierarchy, origin: str = "from the plan", scheme: str = "railplan",
    prefix: str = DEFAULT_PREFIX,
) -> str:  # fmt: skip
    """The labels as a bash script of ``kubectl label node`` commands (``--overwrite``)."""
    labels = node_labels(h, scheme, prefix)
    lines = ["#!/usr/bin/env bash", *_comments(h, origin, label_keys(h, scheme, prefix))]
    lines += ["# usage: bash this-file   (KUBECTL=... to use another client)", "set -euo pipefail",
              'KUBECTL="${KUBECTL:-kubectl}"']  # fmt: skip
    for n in h.nodes:
        if n in labels:
            pairs = " ".join(shell_word(f"{k}={v}") for k, v in labels[n].items())
            lines.append(f'"$KUBECTL" label node {shell_word(n)} {pairs} --overwrite')
    return "\n".join(lines) + "\n"
