"""Files written whole: a temp file renamed into place, or a set of files staged and moved together.

``write_atomic(path, data)`` writes one file beside its target and renames it, so a reader never
sees half a file. ``write_set(folder, files)`` writes every file of a multi-file output (a
design.json with its spec.yaml, the test plan with its scripts/) into one staging folder first
and only then moves them into place, in a few renames under one lock: a new folder appears
whole (the staging folder is renamed to it) and a sub-folder such as ``scripts/`` is swapped as
a unit, so no reader sees a new PDF beside an old JSON while railplan is still rendering.

Temp names start with ``.railplan-tmp-<pid>-``. Every live one is registered, so an interrupt
handler can remove them (``discard_temporaries``); the ones a killed process (SIGKILL, power
loss) leaves behind are removed by the next write into the same folder once their pid is gone.
"""

from __future__ import annotations

import os
import secrets
import shutil
import stat
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from queue import Queue
from typing import BinaryIO

from railplan.errors import OutputError

TEMP_PREFIX = ".railplan-tmp-"
#: mode of a new file before the umask, as open() and cp use: 0644 under the usual umask 022
FILE_MODE = 0o666

#: longest file name (bytes) Linux, macOS and Windows file systems take (``NAME_MAX``)
NAME_MAX = 255
#: characters of the target's name a temp name keeps (the rest of NAME_MAX is the prefix)
_TEMP_NAME = 120

_live: set[Path] = set()
_lock = threading.RLock()
#: set once a signal handler has started removing temp files: no new file is created after it
_stopping = threading.Event()


def _temp(folder: Path, name: str = "") -> Path:
    token = secrets.token_hex(4)
    short = name[:_TEMP_NAME]
    return folder / f"{TEMP_PREFIX}{os.getpid()}-{token}{'-' + short if short else ''}"


def stopping() -> bool:
    """True once a signal is ending the run (its temp files are being removed)."""
    return _stopping.is_set()


def _hold_if_stopping() -> None:
    """Called under ``_lock`` before a file or folder is created: once the signal thread is
    removing temp files, wait for it to end the process instead of creating one more."""
    if _stopping.is_set():
        _lock.release()
        try:
            threading.Event().wait(60)
        finally:
            _lock.acquire()


def name_fits(path: Path) -> None:
    """Refuse a target whose name (or any folder's) is longer than a file system takes."""
    for part in path.parts:
        size = len(os.fsencode(part))
        if size > NAME_MAX:
            raise OutputError(
                f"cannot write {path}: the name {part[:40]}... is {size} bytes long, more than "
                f"the {NAME_MAX} a file name may have; give a shorter name"
            )


def _special(path: Path) -> str:
    """What ``path`` is when it exists and is neither a regular file nor a folder, else ''."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return ""
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return ""
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a socket" if stat.S_ISSOCK(mode) else "not a regular file"


def refuse_special(path: Path) -> None:
    """Refuse to replace a device, FIFO or socket (``cables -o /dev/null`` as root would
    otherwise replace /dev/null with a regular file)."""
    kind = _special(path)
    if kind:
        raise OutputError(
            f"cannot write {path}: it is {kind}; railplan writes regular files only, give a "
            "file name (or leave -o out to print to stdout)"
        )


def _register(path: Path) -> Path:
    with _lock:
        _live.add(path)
    return path


def _forget(path: Path) -> None:
    with _lock:
        _live.discard(path)


def _remove(path: Path) -> None:
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    except OSError:  # a name the file system refuses was never created
        pass


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True
    return True


def sweep(folder: Path) -> list[Path]:
    """Remove temp files and folders that dead railplan processes left in ``folder``."""
    removed: list[Path] = []
    try:
        entries = list(folder.glob(f"{TEMP_PREFIX}*"))
    except OSError:
        return removed
    for entry in entries:
        pid_text = entry.name[len(TEMP_PREFIX) :].split("-", 1)[0]
        if pid_text.isdigit() and not _pid_alive(int(pid_text)):
            _remove(entry)
            removed.append(entry)
    return removed


def discard_temporaries(stop: bool = False) -> None:
    """Remove every temp file and folder this process has open (an interrupt handler's job).

    ``stop`` (the signal thread): no file or folder is created after this, and the main
    thread waits for the process to end instead of reporting what it could not write.
    """
    if stop:
        _stopping.set()
    with _lock:
        for path in sorted(_live, key=lambda p: len(p.parts), reverse=True):
            _remove(path)
        _live.clear()


def _folder(folder: Path) -> Path:
    """Create ``folder`` (and parents) for writing; a file in the way raises OutputError."""
    if folder.exists() and not folder.is_dir():
        raise OutputError(f"cannot write into {folder}: it is a file, not a folder; give a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise OutputError(f"cannot create the folder {folder}: a file is in the way") from None
    except OSError as exc:
        raise OutputError(f"cannot create the folder {folder} ({exc.strerror})") from None
    sweep(folder)
    return folder


#: what a file is written from: its whole text or bytes, or its pieces in order (written as
#: they come: the text need never be whole in memory)
Content = str | bytes | Iterable[str | bytes]
#: pieces handed to the writer thread and not yet written, at most
_QUEUED = 4


def _write_file(path: Path, data: Content, mode: int = FILE_MODE) -> None:
    """Create ``path`` with ``mode`` less the process umask (os.open applies it) and write it."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    if not isinstance(data, bytes) and not isinstance(data, Iterable):
        raise TypeError(f"write_atomic takes str or bytes, not {type(data).__name__}")
    with _lock:
        _hold_if_stopping()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    with os.fdopen(fd, "wb") as fh:
        if isinstance(data, bytes):
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        else:
            _write_pieces(fh, data)


def _write_pieces(fh: BinaryIO, pieces: Iterable[str | bytes]) -> None:
    """Write ``pieces`` as the caller's iterator makes them: a thread writes each one (and
    syncs the file at the end) while the next is made, the write calls releasing the GIL."""
    queue: Queue[bytes | None] = Queue(maxsize=_QUEUED)
    failed: list[BaseException] = []

    def drain() -> None:
        ended = False  # the end mark was taken
        try:
            while (piece := queue.get()) is not None:
                fh.write(piece)
            ended = True
            fh.flush()
            os.fsync(fh.fileno())
        except BaseException as exc:  # handed to the caller's thread, raised there
            failed.append(exc)
            while not ended and queue.get() is not None:  # let the maker end without blocking
                pass

    writer = threading.Thread(target=drain, name="railplan-writer", daemon=True)
    writer.start()
    try:
        for piece in pieces:
            if failed:
                break
            if isinstance(piece, str):
                piece = piece.encode("utf-8")
            elif not isinstance(piece, bytes):
                raise TypeError(f"a file's pieces are str or bytes, not {type(piece).__name__}")
            queue.put(piece)
    finally:
        queue.put(None)
        writer.join()
    if failed:
        raise failed[0]


def write_atomic(
    path: str | Path, data: Content, before_commit: Callable[[], object] | None = None
) -> Path:
    """Write ``data`` (text as UTF-8; or its pieces, written as they come) to a temp file in
    ``path``'s folder, then rename it; ``before_commit`` runs before the rename (an exception
    from it leaves the old file in place)."""
    target = Path(path)
    name_fits(target)
    if target.is_dir():
        raise OutputError(f"cannot write {target}: it is a folder; give a file name")
    refuse_special(target)
    _folder(target.parent)
    tmp = _register(_temp(target.parent, target.name))
    try:
        _write_file(tmp, data)
        if before_commit is not None:
            before_commit()
        with _lock:
            os.replace(tmp, target)
    except OSError as exc:
        raise OutputError(f"cannot write {target} ({exc.strerror})") from None
    finally:
        _remove(tmp)
        _forget(tmp)
    return target


def _stage(staging: Path, files: Mapping[str, Content], mode: Callable[[str], int]) -> None:
    for rel, data in files.items():
        if Path(rel).is_absolute() or ".." in Path(rel).parts:
            raise OutputError(f"refusing to write {rel!r} outside its folder")
        path = staging / rel
        with _lock:
            _hold_if_stopping()
            path.parent.mkdir(parents=True, exist_ok=True)
        _write_file(path, data, mode(rel) or FILE_MODE)


def _commit(staging: Path, folder: Path, names: list[str]) -> None:
    """Move each top-level entry of ``staging`` over its namesake in ``folder``."""
    with _lock:
        for name in names:
            src, dst = staging / name, folder / name
            if src.is_dir():
                aside = _register(_temp(folder, f"old-{name}"))
                if dst.exists() or dst.is_symlink():
                    os.rename(dst, aside)
                os.rename(src, dst)
                _remove(aside)
                _forget(aside)
            else:
                if dst.is_dir() and not dst.is_symlink():
                    raise OutputError(f"cannot write {dst}: a folder of that name is in the way")
                os.replace(src, dst)


def write_set(
    folder: str | Path,
    files: Mapping[str, Content],
    mode: Callable[[str], int] | None = None,
    before_commit: Callable[[], object] | None = None,
) -> list[Path]:
    """Write ``files`` ({relative path: data}) into ``folder`` as one set; returns the paths.

    Every file is written to a staging folder first; a sub-folder (``scripts/``) replaces the
    old one whole. ``mode(rel)`` gives a file's permission bits before the umask (0: 0666, so
    0644 under umask 022; 0o755 for a script gives 0755). ``before_commit`` runs once every
    file is staged, before any is moved into place: an exception from it leaves the folder as
    it was (``plan -o`` waits there for the design's check).
    """
    target = Path(folder)
    name_fits(target)
    for rel in files:
        name_fits(Path(rel))
        refuse_special(target / rel)
    mode = mode or (lambda _rel: 0)
    names = sorted({Path(rel).parts[0] for rel in files})
    fresh = not target.exists()
    base = _folder(target.parent) if fresh else _folder(target)
    staging = _register(_temp(base, target.name if fresh else "set"))
    try:
        with _lock:
            _hold_if_stopping()
            os.mkdir(staging)
        _stage(staging, files, mode)
        if before_commit is not None:
            before_commit()
        with _lock:
            if fresh and not target.exists():
                os.rename(staging, target)  # a new folder appears whole
            else:
                _folder(target)
                _commit(staging, target, names)
    except OSError as exc:
        raise OutputError(f"cannot write into {target} ({exc.strerror})") from None
    finally:
        _remove(staging)
        _forget(staging)
    return [target / rel for rel in files]
