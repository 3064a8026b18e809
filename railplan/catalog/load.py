"""Loading a catalog: the bundled YAML files, extended and overridden by a user folder by id."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from pydantic import ValidationError

from railplan.catalog.parsed_cache import load_yaml_cached
from railplan.catalog.parts import SECTIONS, Catalog
from railplan.errors import CatalogError
from railplan.identifiers import ID_RULE, is_id, shorten, shown
from railplan.sentences import sentence

#: catalog files in one folder, at most (the bundled catalog has three)
MAX_FILES = 256
#: how messages and `railplan catalog list` name a file of the bundled catalog
BUNDLED = "bundled "

Tables = dict[str, dict[str, object]]
Origins = dict[tuple[str, str], str]


def bundled_catalog_dir() -> Path:
    """The catalog shipped with railplan: ``railplan/catalogs`` (in a clone, ``catalogs/``).

    In the repository ``railplan/catalogs`` is a link to the top-level ``catalogs/`` folder, the
    one copy anyone edits; a built wheel carries the files themselves.
    """
    package = Path(__file__).resolve().parent.parent
    inside = package / "catalogs"
    return inside if inside.is_dir() else package.parent / "catalogs"


def user_catalog_dir(directory: str | Path | None = None) -> Path | None:
    """The user's catalog folder: ``directory`` (``--catalog``), else ``$RAILPLAN_CATALOG_DIR``."""
    if directory is not None and str(directory) != "":
        return Path(directory)
    env = os.environ.get("RAILPLAN_CATALOG_DIR")
    return Path(env) if env else None


def default_catalog_dir() -> Path:
    """``$RAILPLAN_CATALOG_DIR`` if set, else the bundled catalog folder."""
    return user_catalog_dir() or bundled_catalog_dir()


@dataclass(frozen=True)
class LoadedCatalog:
    """A catalog with where each entry came from and what the user's folder overrode."""

    catalog: Catalog
    #: (section, id) -> the file that defines the entry ("bundled nodes.yaml" or a user path)
    origins: dict[tuple[str, str], str]
    #: one sentence per bundled entry a user entry replaced with different figures
    overrides: tuple[str, ...]


def _first_error(exc: ValidationError, where: str) -> str:
    err = exc.errors()[0]
    path = shorten(".".join(str(p) for p in err["loc"]), 120)
    msg = shorten(sentence(err), 400)
    return f"{where}: {path}: {msg}" if path else f"{where}: {msg}"


def _tables(documents: Iterable[tuple[str, object]]) -> tuple[Tables, Origins]:
    """Entries by section and id from (file name, parsed YAML) pairs; errors name file and entry."""
    tables: Tables = {k: {} for k in SECTIONS}
    origin: Origins = {}
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
                item = _entry(fname, section, i, entry)
                item_id: str = item.id  # type: ignore[attr-defined]
                if item_id in tables[section]:
                    raise CatalogError(
                        f"{fname}: {section} id {item_id!r} is defined twice"
                        + _also_in(origin[(section, item_id)], fname)
                    )
                tables[section][item_id] = item
                origin[(section, item_id)] = fname
    return tables, origin


def _also_in(first: str, fname: str) -> str:
    return "" if first == fname else f" (also in {first})"


def _entry(fname: str, section: str, i: int, entry: object) -> object:
    ident = entry.get("id", f"#{i}") if isinstance(entry, dict) else f"#{i}"
    if isinstance(entry, dict) and "id" in entry and not is_id(ident):
        raise CatalogError(
            f"{fname}: {section}[#{i}]: id {shown(ident)} is not a safe id; use "
            f"{ID_RULE} characters"
        )
    try:
        return SECTIONS[section].model_validate(entry)
    except ValidationError as exc:
        raise CatalogError(_first_error(exc, f"{fname}: {section}[{ident}]")) from None


def parse_catalog(documents: Iterable[tuple[str, object]]) -> Catalog:
    """Build a Catalog from (file name, parsed YAML) pairs; errors name file and entry."""
    tables, origin = _tables(documents)
    catalog = Catalog.model_validate(tables)
    _cross_check(catalog, origin)
    return catalog


def merge_catalogs(
    bundled: Iterable[tuple[str, object]], user: Iterable[tuple[str, object]]
) -> LoadedCatalog:
    """The bundled documents extended by the user's: a user entry replaces the bundled one of the
    same section and id (each such replacement is reported), new ids are added."""
    base, origins = _tables(bundled)
    extra, user_origin = _tables(user)
    overrides: list[str] = []
    for section, entries in extra.items():
        for ident, item in entries.items():
            old = base[section].get(ident)
            if old is not None and old != item:
                overrides.append(_override_note(section, ident, old, item, user_origin))
            base[section][ident] = item
            origins[(section, ident)] = user_origin[(section, ident)]
    catalog = Catalog.model_validate(base)
    _cross_check(catalog, origins)
    return LoadedCatalog(catalog, origins, tuple(overrides))


def _override_note(section: str, ident: str, old: object, new: object, origin: Origins) -> str:
    before = old.model_dump()  # type: ignore[attr-defined]
    after = new.model_dump()  # type: ignore[attr-defined]
    changed = [k for k in after if before.get(k) != after.get(k)]
    return (
        f"{origin[(section, ident)]}: {section} {ident!r} overrides the bundled entry "
        f"(changed: {', '.join(changed)})"
    )


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
            same_price = base.price_usd.scaled(1.0) == t.price_usd.scaled(1.0)
            if base.form_factor != t.form_factor or not same_price:
                lo, ty, hi = base.price_usd.scaled(1.0)
                raise CatalogError(
                    f"{where('transceivers', t.id)}: a mode of {base.id} must keep its form "
                    f"factor ({base.form_factor}) and price ({ty:g} USD, {lo:g}-{hi:g})"
                )
        if (t.connector, t.fibre) not in connectors:
            raise CatalogError(
                f"{where('transceivers', t.id)}: no fibre cable has a {t.connector} end for "
                f"{t.fibre}; add one to the cables section"
            )


def load_catalog(directory: str | Path | None = None) -> Catalog:
    """The bundled catalog, extended and overridden by ``directory`` (or
    ``$RAILPLAN_CATALOG_DIR``) when given."""
    return load_catalog_layers(directory).catalog


def load_catalog_layers(directory: str | Path | None = None) -> LoadedCatalog:
    """Like `load_catalog`, with each entry's origin and the overrides the user folder made."""
    bundled = bundled_catalog_dir().resolve()
    user = user_catalog_dir(directory)
    user_key = str(user.resolve()) if user is not None else ""
    return _load_cached(str(bundled), "" if user_key == str(bundled) else user_key)


@lru_cache(maxsize=8)
def _load_cached(bundled: str, user: str) -> LoadedCatalog:
    base = _read_folder(Path(bundled), BUNDLED, "the railplan installation")
    extra = (
        _read_folder(Path(user), f"{user}/", "--catalog or RAILPLAN_CATALOG_DIR") if user else []
    )
    return merge_catalogs(base, extra)


def _read_folder(folder: Path, label: str, what: str) -> list[tuple[str, object]]:
    """(label + file name, parsed YAML) for every ``*.yaml`` of a folder, in name order."""
    if not folder.is_dir():
        raise CatalogError(f"catalog directory {folder} does not exist; check {what}")
    files = sorted(folder.glob("*.yaml"))
    if len(files) > MAX_FILES:
        raise CatalogError(
            f"catalog directory {folder} holds {len(files)} YAML files; at most {MAX_FILES}"
        )
    return [
        (f"{label}{file.name}", load_yaml_cached(file, "catalog file", CatalogError))
        for file in files
    ]
