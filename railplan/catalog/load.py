"""Loading a catalog: every YAML file of a folder, validated and cross-checked."""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

from pydantic import ValidationError

from railplan.catalog.parts import SECTIONS, Catalog
from railplan.errors import CatalogError
from railplan.identifiers import ID_RULE, is_id, shorten, shown
from railplan.safe_load import load_yaml_file

#: catalog files in one folder, at most (the bundled catalog has three)
MAX_FILES = 256


def default_catalog_dir() -> Path:
    """``$RAILPLAN_CATALOG_DIR``, else the repository's ``catalogs/`` beside the package."""
    env = os.environ.get("RAILPLAN_CATALOG_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parent.parent.parent / "catalogs"


def _first_error(exc: ValidationError, where: str) -> str:
    err = exc.errors()[0]
    path = shorten(".".join(str(p) for p in err["loc"]), 120)
    msg = shorten(err["msg"].removeprefix("Value error, "), 400)
    return f"{where}: {path}: {msg}" if path else f"{where}: {msg}"


def parse_catalog(documents: Iterable[tuple[str, object]]) -> Catalog:
    """Build a Catalog from (file name, parsed YAML) pairs; errors name file and entry."""
    tables: dict[str, dict[str, object]] = {k: {} for k in SECTIONS}
    origin: dict[tuple[str, str], str] = {}
    for fname, doc in documents:
        if not isinstance(doc, dict):
            raise CatalogError(f"{fname}: expected a mapping of sections ({', '.join(SECTIONS)})")
        for section, entries in doc.items():
            if section not in SECTIONS:
                raise CatalogError(
                    f"{fname}: unknown section {shown(section)}; use one of {', '.join(SECTIONS)}"
                )
            if not isinstance(entries, list):
                raise CatalogError(f"{fname}: section {section} must be a list of entries")
            for i, entry in enumerate(entries):
                ident = entry.get("id", f"#{i}") if isinstance(entry, dict) else f"#{i}"
                if isinstance(entry, dict) and "id" in entry and not is_id(ident):
                    raise CatalogError(
                        f"{fname}: {section}[#{i}]: id {shown(ident)} is not a safe id; use "
                        f"{ID_RULE} characters"
                    )
                try:
                    item = SECTIONS[section].model_validate(entry)
                except ValidationError as exc:
                    raise CatalogError(_first_error(exc, f"{fname}: {section}[{ident}]")) from None
                item_id: str = item.id  # type: ignore[attr-defined]
                if item_id in tables[section]:
                    raise CatalogError(f"{fname}: {section} id {item_id!r} is defined twice")
                tables[section][item_id] = item
                origin[(section, item_id)] = fname
    catalog = Catalog.model_validate(tables)
    _cross_check(catalog, origin)
    return catalog


def _cross_check(catalog: Catalog, origin: dict[tuple[str, str], str]) -> None:
    """References between entries resolve, and every optic has a fibre cord it can take."""

    def where(section: str, ident: str) -> str:
        return f"{origin.get((section, ident), 'catalog')}: {section}[{ident}]"

    for node in catalog.nodes.values():
        if node.nic not in catalog.nics:
            raise CatalogError(f"{where('nodes', node.id)}: unknown nic {node.nic!r}")
    connectors = {
        (end, c.fibre)
        for c in catalog.cables.values()
        if c.kind == "fibre"
        for end in (c.end_a, c.end_b)
    }
    for t in catalog.transceivers.values():
        if t.mode_of:
            base = catalog.transceivers.get(t.mode_of)
            if base is None:
                raise CatalogError(
                    f"{where('transceivers', t.id)}: mode_of {t.mode_of!r} is not a transceiver "
                    "in the catalog"
                )
            if base.mode_of:
                raise CatalogError(
                    f"{where('transceivers', t.id)}: mode_of {t.mode_of!r} is itself a mode of "
                    f"{base.mode_of!r}; point at the part's own entry"
                )
            if (base.form_factor, base.price_usd.value) != (t.form_factor, t.price_usd.value):
                raise CatalogError(
                    f"{where('transceivers', t.id)}: a mode of {base.id} must keep its form "
                    f"factor ({base.form_factor}) and price ({base.price_usd.value:g} USD)"
                )
        if (t.connector, t.fibre) not in connectors:
            raise CatalogError(
                f"{where('transceivers', t.id)}: no fibre cable has a {t.connector} end for "
                f"{t.fibre}; add one to the cables section"
            )


def load_catalog(directory: str | Path | None = None) -> Catalog:
    """Load every ``*.yaml`` in a catalog directory (default: the bundled catalogs)."""
    path = Path(directory) if directory is not None else default_catalog_dir()
    return _load_cached(str(path.resolve()))


@lru_cache(maxsize=8)
def _load_cached(path: str) -> Catalog:
    folder = Path(path)
    if not folder.is_dir():
        raise CatalogError(f"catalog directory {folder} does not exist; set RAILPLAN_CATALOG_DIR")
    files = sorted(folder.glob("*.yaml"))
    if len(files) > MAX_FILES:
        raise CatalogError(
            f"catalog directory {folder} holds {len(files)} YAML files; at most {MAX_FILES}"
        )
    docs = [(file.name, load_yaml_file(file, "catalog file", CatalogError)) for file in files]
    return parse_catalog(docs)
