"""The parsed-YAML cache of catalog files: same value as a parse, keyed by the bytes, never stale."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from railplan.catalog import parsed_cache
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


def test_the_folder_keeps_the_most_recently_used_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("RAILPLAN_CACHE_DIR", str(cache))
    monkeypatch.setattr(parsed_cache, "MAX_ENTRIES", 3)
    cache.mkdir()
    (cache / "notes.txt").write_text("not an entry")  # someone else's file stays
    files = []
    for n in range(5):
        file = tmp_path / f"parts{n}.yaml"
        file.write_text(f"a: {n}\n")
        files.append(file)
    seen: set[Path] = set()
    for n, file in enumerate(files[:3]):  # entries aged 3, 2 and 1 hours: deterministic order
        load_yaml_cached(file, "catalog file", CatalogError)
        (entry,) = set(cache.glob("yaml-*.marshal")) - seen
        seen.add(entry)
        os.utime(entry, (time.time() - 3600 * (3 - n),) * 2)
    first = {e.name for e in cache.glob("yaml-*.marshal")}
    assert len(first) == 3
    assert load_yaml_cached(files[0], "catalog file", CatalogError) == {"a": 0}  # a hit: used now
    load_yaml_cached(files[3], "catalog file", CatalogError)  # the fourth prunes the oldest
    load_yaml_cached(files[4], "catalog file", CatalogError)
    kept = sorted(cache.glob("yaml-*.marshal"))
    assert len(kept) == 3
    assert (cache / "notes.txt").exists()
    monkeypatch.setenv("RAILPLAN_CACHE_DIR", "")  # the kept entries are files 0, 3 and 4
    values = {parsed_cache.marshal.loads(e.read_bytes())["a"] for e in kept}
    assert values == {0, 3, 4}
