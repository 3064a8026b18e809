"""The size of the largest design railplan builds, and a design.json's raw bytes checked against it.

Every bound here follows from the ceilings the planner enforces before it builds a link
(``railplan.topology.shape``: 32,768 nodes and 262,144 NIC ports per design; a test keeps the
two in step) and from the catalog's largest switch (128 cages of 8 ports: 1,024 logical ports,
so 4,096 leaves room for a part not yet listed). A design.json that lists more rows than the
largest design can have, or whose bytes hold more JSON values than railplan's own rows can, is
refused before a single Python object is built from it: the size of the answer is bounded by
the work the file implies, not by what the file says.
"""

from __future__ import annotations

from railplan.errors import DesignFileError

#: the planner's ceilings (``railplan.topology.shape.MAX_NODES``, ``MAX_NODE_PORTS``)
MAX_NODES = 32_768
MAX_NODE_PORTS = 262_144
#: logical ports of one switch (the catalog's largest: 1,024) and the port speeds railplan knows
MAX_RADIX = 4096
MAX_GBPS = 3200
MAX_PORTS_PER_CAGE = 8
MAX_PLANES = 16
MAX_RAILS = 1024
MAX_GPUS = 4_194_304
#: rows per list: spares and attached devices stand beside the active nodes; a link per NIC
#: port per tier (node-leaf, leaf-spine, spine-core) plus inter-switch bundles; a fibre-plant
#: link has at most ``MAX_PIECES`` pieces
MAX_PIECES = 8
MAX_ROWS = {
    "nodes": 2 * MAX_NODES,
    "devices": 4096,
    "switches": MAX_NODE_PORTS,
    "links": 8 * MAX_NODE_PORTS,
    "cables": 8 * MAX_NODE_PORTS,
    "panels": MAX_NODE_PORTS,
    "segments": 3 * 8 * MAX_NODE_PORTS,
    "racks": 4 * MAX_NODES,
    "placements": 2 * MAX_NODES + MAX_NODE_PORTS + 4096 + MAX_NODE_PORTS,
}
#: rack units, floor coordinates and cable lengths (``railplan.spec.schema``: racks of 8 to
#: 60 U, coordinates within 10 km)
MAX_U = 60
MAX_COORD_M = 10_000.0
MAX_LENGTH_M = 100_000.0

#: the fewest bytes a value of a railplan row takes (``"u":1,``) and a row itself
#: (``{"id":"a","index":0,"pod":0,"rack":0,"su":0}`` is 44); the few short lists of a design
#: (node ports, notes, hash fields, the spec's lists) get a fixed allowance
_BYTES_PER_VALUE = 6
_BYTES_PER_ROW = 32
_VALUE_ALLOWANCE = 65_536
_ROW_ALLOWANCE = 1024
_LIST_ALLOWANCE = 512
#: the bytes that matter to the count: quotes (strings) and the structure railplan counts
_STRUCTURE = b'",{['
_OTHER = bytes(b for b in range(256) if b not in _STRUCTURE)
#: the structure is split by its quotes a window at a time (bounded pieces in memory)
_WINDOW = 1 << 18


def _counted(raw: bytes) -> tuple[int, int, int]:
    """Commas, objects and lists outside JSON strings, at C speed and in memory linear in the
    file's structure (no Python object per value).

    All of them are counted, then those inside strings taken off. Escaped backslashes and
    quotes go first, then every byte but quotes, ``,``, ``{`` and ``[`` (``bytes.translate``);
    two quotes side by side are removed (an empty string, or a string's end and the next one's
    start: the parity of every other quote is kept). What is left is inside a string exactly
    when an odd number of quotes comes before it.
    """
    if b"\\" in raw:  # (a single-byte search; the two replacements cost more)
        raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    flat = raw.translate(None, _OTHER)
    every = flat.count(b","), flat.count(b"{"), flat.count(b"[")
    flat = flat.replace(b'""', b"")
    if b'"' not in flat:
        return every
    values, rows, lists = every
    inside = False
    for start in range(0, len(flat), _WINDOW):
        pieces = flat[start : start + _WINDOW].split(b'"')
        quoted = b"".join(pieces[0 if inside else 1 :: 2])
        values, rows = values - quoted.count(b","), rows - quoted.count(b"{")
        lists -= quoted.count(b"[")
        inside = inside != (len(pieces) % 2 == 0)
    return values, rows, lists


def check_design_bytes(raw: bytes, where: str) -> None:
    """Refuse a design.json whose bytes hold more values, rows or lists than railplan writes.

    Counted outside strings at C speed (``bytes.translate``, ``count``, ``split``) before the
    JSON is parsed: a 40 MB file of 20 million list items is refused in a fraction of a second
    instead of growing to gigabytes of Python objects.
    """
    size = len(raw)
    values, rows, lists = _counted(raw)
    if values > size // _BYTES_PER_VALUE + _VALUE_ALLOWANCE:
        raise DesignFileError(
            f"{where}: holds {values:,} JSON values in {size:,} bytes, more than a railplan "
            "design can (one value per "
            f"{_BYTES_PER_VALUE} bytes at most); write it with railplan plan -o DIR"
        )
    if rows > size // _BYTES_PER_ROW + _ROW_ALLOWANCE:
        raise DesignFileError(
            f"{where}: holds {rows:,} JSON objects in {size:,} bytes, more than a railplan "
            f"design can (one row per {_BYTES_PER_ROW} bytes at most); write it with "
            "railplan plan -o DIR"
        )
    if lists > _LIST_ALLOWANCE:
        raise DesignFileError(
            f"{where}: holds {lists:,} JSON lists; a railplan design has a few dozen "
            "(its rows are objects); write it with railplan plan -o DIR"
        )
