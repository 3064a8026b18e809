"""Every scheduler handoff format by name: its default file name and how it is written.

One table for the CLI (``railplan topology``) and the TUI's export: the Slurm files
(``slurm_tree``, ``slurm_block``, ``slurm_yaml``), the Kubernetes labels (``k8s_labels``) and
Kueue ``Topology`` (``kueue``) over the design's tree (``design.hierarchy``), and the NCCL
environment (``nccl_env``) over the design itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from railplan.catalog import Catalog
from railplan.design import Design
from railplan.design.hierarchy import Hierarchy, hierarchy
from railplan.render import k8s_labels, kueue, nccl_env, slurm_block, slurm_tree, slurm_yaml


@dataclass(frozen=True)
class Handoff:
    """What a format is written from: the design, its tree, the catalog, the label keys."""

    design: Design
    tree: Hierarchy
    catalog: Catalog
    origin: str = "from the plan"
    label_keys: str = "railplan"
    label_prefix: str = k8s_labels.DEFAULT_PREFIX


def handoff(design: Design, catalog: Catalog, tree: Hierarchy | None = None, **kw: str) -> Handoff:
    """A Handoff of ``design`` (its planned tree unless an as-built one is given)."""
    return Handoff(design, tree if tree is not None else hierarchy(design), catalog, **kw)


def _labels(h: Handoff) -> str:
    return k8s_labels.render(h.tree, h.origin, h.label_keys, h.label_prefix)


def _kubectl(h: Handoff) -> str:
    return k8s_labels.render_kubectl(h.tree, h.origin, h.label_keys, h.label_prefix)


def _kueue(h: Handoff) -> str:
    return kueue.render(h.tree, h.origin, h.label_keys, h.label_prefix)


#: format -> (default file name, writer, one line of what it is)
FORMATS: dict[str, tuple[str, Callable[[Handoff], str], str]] = {
    "slurm-tree": (
        "topology.conf",
        lambda h: slurm_tree.render(h.tree, h.origin),
        "Slurm topology/tree",
    ),
    "slurm-block": (
        "topology-block.conf",
        lambda h: slurm_block.render(h.tree, h.origin),
        "Slurm topology/block (23.11+)",
    ),
    "slurm-yaml": (
        "topology.yaml",
        lambda h: slurm_yaml.render(h.tree, h.origin),
        "Slurm topology.yaml (tree and block)",
    ),
    "k8s-labels": ("node-labels.yaml", _labels, "Kubernetes node labels (YAML list)"),
    "k8s-kubectl": ("label-nodes.sh", _kubectl, "Kubernetes node labels (kubectl script)"),
    "kueue": ("kueue-topology.yaml", _kueue, "Kueue Topology object"),
    "nccl": (
        "nccl.env",
        lambda h: nccl_env.render(h.design, h.catalog, h.origin),
        "NCCL environment with reasons",
    ),
}


def render(fmt: str, h: Handoff) -> str:
    """The text of format ``fmt``."""
    return FORMATS[fmt][1](h)
