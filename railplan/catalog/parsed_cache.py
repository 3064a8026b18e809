"""Parsed catalog YAML kept between runs, keyed by the file's bytes: a plan skips the parse.

Reading the bundled catalog's YAML (129 KB, 12,000 nodes) through the guarded loader takes
about 30 ms of a 0.22 s small job; its parsed value (plain dicts, lists, strings and numbers)
loads from ``marshal`` in a few ms. An entry is named by the SHA-256 of the file's bytes,
railplan's version, Python's and the loader's source (``safe_load.py``), so an edited file,
another release, interpreter or loader never reads a stale one; a file is parsed (and
refused) exactly as before whenever its entry is missing, and only a file that parsed gets
one. Entries live in ``$RAILPLAN_CACHE_DIR`` (empty: no cache), else
``$XDG_CACHE_HOME/railplan``, else ``~/.cache/railplan``; a cache that cannot be read or
written is skipped without a word. The folder holds at most ``MAX_ENTRIES`` entries: a
store removes the least recently used beyond that (a hit marks its entry used), so files
edited over months never pile up.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import marshal
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from railplan import safe_load
from railplan.errors import RailplanError
from railplan.safe_load import MAX_BYTES, load_yaml, read_file
from railplan.version import __version__

#: the format of an entry (bumped when what is stored changes)
FORMAT = "1"
#: entries kept in the folder (each a few to a few hundred KB); the least recently used go
MAX_ENTRIES = 64


def cache_dir() -> Path | None:
    """Where entries live, None when ``$RAILPLAN_CACHE_DIR`` is set empty."""
    own = os.environ.get("RAILPLAN_CACHE_DIR")
    if own is not None:
        return Path(own) if own else None
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "railplan"


def load_yaml_cached(path: Path, what: str, error: type[RailplanError]) -> Any:
    """``safe_load.load_yaml_file`` of ``path``, from the cache when this very file was read
    before."""
    data = read_file(path, what, error, MAX_BYTES)
    folder = cache_dir()
    entry = None
    if folder is not None:
        key = hashlib.sha256(data)
        key.update(f"\0{__version__}\0{sys.version}\0{FORMAT}\0".encode())
        key.update(_loader_code())
        entry = folder / f"yaml-{key.hexdigest()}.marshal"
        try:
            value = marshal.loads(entry.read_bytes())
        except (OSError, EOFError, ValueError, TypeError):
            pass
        else:
            _mark_used(entry)
            return value
    value = load_yaml(data, path.name, error)
    if entry is not None:
        _store(entry, value)
    return value


@functools.cache
def _loader_code() -> bytes:
    """The loader's own source: an edited rule (a checkout between releases) keys anew."""
    try:
        return Path(safe_load.__file__).read_bytes()
    except OSError:
        return b""


def _store(entry: Path, value: Any) -> None:
    """Write one entry through a temporary file renamed into place (readers never see half)."""
    try:
        blob = marshal.dumps(value)
    except ValueError:  # a value marshal cannot hold (none in a catalog): no entry
        return
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=entry.parent, prefix=".yaml-", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(blob)
            os.replace(tmp, entry)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        return
    _prune(entry.parent)


def _mark_used(entry: Path) -> None:
    """Stamp a hit entry with the time now, so pruning keeps the entries in use."""
    with contextlib.suppress(OSError):  # a read-only cache still serves hits
        os.utime(entry)


def _prune(folder: Path) -> None:
    """Remove the least recently used entries beyond ``MAX_ENTRIES`` (other files stay)."""
    try:
        entries = []
        for path in folder.glob("yaml-*.marshal"):
            try:
                entries.append((path.stat().st_mtime_ns, path.name, path))
            except OSError:  # removed by another run meanwhile
                continue
        entries.sort(reverse=True)
        for _, _, path in entries[MAX_ENTRIES:]:
            path.unlink(missing_ok=True)
    except OSError:
        pass
