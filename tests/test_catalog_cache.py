"""The parsed-YAML cache of catalog files: same value as a parse, keyed by the bytes, never stale."""

from __future__ import annotations

from pathlib import Path

import pytest

from railplan.catalog.load import bundled_catalog_dir, load_catalog_layers
from railplan.catalog.parsed_cache import cache_dir, load_yaml_cached
from railplan.errors import CatalogError
from railplan.safe_load import load_yaml_file


def test_cached_value_equals_a_parse_of_every_bundled_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAILPLAN_CACHE_DIR", str(tmp_path))
    files = sorted(bundled_catalog_dir().glob("*.yaml"))
    for file in files:
        parsed = load_yaml_file(file, "catalog file", CatalogError)
        first = load_yaml_cached(file, "catalog file", CatalogError)  # parses, stores
        second = load_yaml_cached(file, "catalog file", CatalogError)  # from the entry
        assert first == parsed and second == parsed
    assert len(list(tmp_path.glob("yaml-*.marshal"))) == len(set(f.read_bytes() for f in files))


def test_an_edited_file_is_parsed_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAILPLAN_CACHE_DIR", str(tmp_path / "cache"))
    file = tmp_path / "parts.yaml"
    file.write_text("switches:\n  - id: a\n    ports: 64\n")
    assert load_yaml_cached(file, "catalog file", CatalogError)["switches"][0]["ports"] == 64
    file.write_text("switches:\n  - id: a\n    ports: 128\n")
    assert load_yaml_cached(file, "catalog file", CatalogError)["switches"][0]["ports"] == 128
    assert len(list((tmp_path / "cache").glob("yaml-*.marshal"))) == 2


def test_a_broken_entry_is_reparsed_and_a_refused_file_never_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("RAILPLAN_CACHE_DIR", str(cache))
    file = tmp_path / "parts.yaml"
    file.write_text("a: 1\n")
    load_yaml_cached(file, "catalog file", CatalogError)
    (entry,) = cache.glob("yaml-*.marshal")
    entry.write_bytes(b"\x00not marshal")
    assert load_yaml_cached(file, "catalog file", CatalogError) == {"a": 1}
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: 1\na: 2\n")
    for _ in range(2):  # refused the same way on every run: nothing was cached
        with pytest.raises(CatalogError, match="appears twice"):
            load_yaml_cached(bad, "catalog file", CatalogError)
    assert len(list(cache.glob("yaml-*.marshal"))) == 1


def test_empty_cache_dir_turns_the_cache_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAILPLAN_CACHE_DIR", "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() is None
    file = tmp_path / "parts.yaml"
    file.write_text("a: [1, 2.5, true, null, x]\n")
    assert load_yaml_cached(file, "catalog file", CatalogError) == {"a": [1, 2.5, True, None, "x"]}
    assert not list(tmp_path.rglob("*.marshal"))


def test_catalog_loads_the_same_with_and_without_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAILPLAN_CACHE_DIR", "")
    from railplan.catalog import load as load_module

    load_module._load_cached.cache_clear()
    plain = load_catalog_layers().catalog
    monkeypatch.setenv("RAILPLAN_CACHE_DIR", str(tmp_path))
    for _ in range(2):  # the first stores every file, the second reads them all
        load_module._load_cached.cache_clear()
        assert load_catalog_layers().catalog == plain
    load_module._load_cached.cache_clear()


def test_another_loader_keys_anew(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from railplan.catalog import parsed_cache

    cache = tmp_path / "cache"
    monkeypatch.setenv("RAILPLAN_CACHE_DIR", str(cache))
    file = tmp_path / "parts.yaml"
    file.write_text("a: 1\n")
    load_yaml_cached(file, "catalog file", CatalogError)
    monkeypatch.setattr(parsed_cache, "_loader_code", lambda: b"a stricter loader")
    load_yaml_cached(file, "catalog file", CatalogError)
    assert len(list(cache.glob("yaml-*.marshal"))) == 2
