"""Parse LLDP neighbour tables: lldpcli (json0, json, plain text) and SONiC ``show lldp table``.

lldpcli output is that of ``lldpcli -f json0|json show neighbors details`` (or without ``-f``).

Each file is one device's view; the device is named by the file (``node0001.json``,
``leaf-1.txt``) unless the caller says otherwise. The remote port of a neighbour is kept as
several candidates (port id, port description) because hosts and switches fill them
differently: lldpd on a host sends its MAC as port id and the ifname as description, SONiC sends
its port alias as a locally assigned port id.

lldpcli prints each neighbour's age (``"age": "0 day, 00:00:25"``, plain ``Time: 0 day,
00:00:25``) and the TTL it was sent with (``"ttl": "4"`` under the port since lldpd 1.0, under
the chassis before; plain ``TTL: 4``), as lldpd's src/client/display.c writes them. A port
listing several neighbours is reported on its own (``fresh_neighbours``): an entry older than
its TTL beside one younger than its own is a stale leftover of re-cabling, and several current
ones are two neighbours on one port; only the youngest is compared with the design.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from railplan.field.common import (
    Neighbors,
    ParseError,
    Sighting,
    device_from_filename,
    line_of,
    load_json,
    no_huge_numbers,
    read_text,
)

_MAU_RATE = re.compile(r"(\d+(?:\.\d+)?)\s*G(?:ig|b)?\s*-?\s*base", re.IGNORECASE)
_MAU_MBPS = re.compile(r"\b(\d+)\s*-?\s*base", re.IGNORECASE)
_CHASSIS_FIELDS = frozenset({"id", "name", "descr", "mgmt-ip", "mgmt-iface", "capability"})
_NAMED_PORT_ID = ("ifname", "local", "ifalias", "ifAlias", "agentCircuitId", "")


def mau_rate_gbps(text: str) -> float | None:
    """Line rate named by an LLDP MAU type (``100GbaseCR4`` -> 100, ``1000BaseTFD`` -> 1)."""
    m = _MAU_RATE.search(text or "")
    if m:
        return float(m.group(1))
    m = _MAU_MBPS.search(text or "")
    return float(m.group(1)) / 1000 if m else None


def parse_lldp_file(path: str | Path, device: str | None = None) -> Neighbors:
    """Parse one LLDP file of any supported format; ``device`` defaults to the file's name."""
    text = read_text(path)
    return parse_lldp_text(text, str(path), device or device_from_filename(path))


def parse_lldp_text(text: str, source: str, device: str) -> Neighbors:
    """Parse LLDP output already read; the format is recognised from the content."""
    no_huge_numbers(text, source)
    stripped = text.lstrip()
    if not stripped:
        raise ParseError(source, None, "is empty; expected LLDP neighbour output")
    if stripped[0] in "{[":
        entries = _json_entries(text, source, device)
    elif re.search(r"^\s*LocalPort\s+RemoteDevice", text, re.MULTILINE):
        entries = [_Entry(s) for s in parse_sonic_table(text, source, device)]
    elif re.search(r"^\s*Interface:\s", text, re.MULTILINE) or "LLDP neighbors" in text:
        entries = _plain_entries(text, source, device)
    else:
        first = next(i for i, line in enumerate(text.splitlines(), 1) if line.strip())
        raise ParseError(
            source,
            first,
            "not LLDP output: expected `lldpcli -f json0 show neighbors details` JSON, "
            "its plain text form, or SONiC `show lldp table`",
            text.splitlines()[first - 1],
        )
    sightings, notes = fresh_neighbours(entries, device)
    return Neighbors(tuple(sightings), reporters=((device,),), notes=tuple(notes))


@dataclass(frozen=True, slots=True)
class _Entry:
    """One neighbour entry with its age and TTL in seconds, where the output gives them."""

    sighting: Sighting
    age_s: int | None = None
    ttl_s: int | None = None


_AGE = re.compile(r"^\s*(\d{1,9})\s+days?,\s*(\d{1,9}):(\d\d):(\d\d)\s*$")


def lldp_age_seconds(text: str) -> int | None:
    """Seconds of an lldpcli age (``0 day, 00:00:25`` -> 25, ``2 days, 01:00:00``), else None."""
    m = _AGE.match(text or "")
    if not m:
        return None
    days, hours, minutes, seconds = (int(g) for g in m.groups())
    return ((days * 24 + hours) * 60 + minutes) * 60 + seconds


def _seconds(text: str) -> int | None:
    text = (text or "").strip()
    return int(text) if text.isdigit() and len(text) <= 9 else None


def fresh_neighbours(
    entries: list[_Entry], device: str
) -> tuple[list[Sighting], list[tuple[str, str]]]:
    """The sightings to compare, and a (kind, sentence) note per stale entry or shared port.

    lldpcli's age is the time since the neighbour's values last changed, not since its last
    frame (``lldpctl_k_port_age`` returns ``p_lastchange`` in lldpd's src/lib/atoms/port.c),
    and lldpd itself drops a neighbour ``p_ttl`` seconds after its last frame (src/daemon/
    event.c): a lone neighbour older than its TTL is a cable that has not changed. An entry
    older than its TTL is stale when another neighbour on the same port is younger than its
    own TTL: the new cable's peer appeared and the old one was not yet expired.
    """
    notes: list[tuple[str, str]] = []
    by_port: dict[str, list[_Entry]] = {}
    for e in entries:
        by_port.setdefault(e.sighting.local_ports[0], []).append(e)
    keep: set[int] = set()
    for port, group in by_port.items():
        if len(group) > 1 and any(_within_ttl(e) for e in group):
            for e in group:
                if _within_ttl(e) is False:
                    notes.append(("stale", _stale_text(device, port, e)))
            group = [e for e in group if _within_ttl(e) is not False]
        if len(group) > 1:
            young = min(group, key=lambda e: e.age_s if e.age_s is not None else 1 << 62)
            who = " and ".join(_who(e.sighting) for e in group)
            notes.append(
                (
                    "two_neighbours",
                    f"{device} {port} lists {len(group)} LLDP neighbours ({who}): a port "
                    "cabled to one device sees one; look for a hub or media converter in the "
                    f"path, or capture again after the TTL; compared with {_who(young.sighting)} "
                    f"({young.sighting.source})",
                )
            )
            group = [young]
        keep.update(id(e) for e in group)
    return [e.sighting for e in entries if id(e) in keep], notes


def _within_ttl(e: _Entry) -> bool | None:
    """Whether the entry changed within its TTL (None when the output gives no age or TTL)."""
    if e.age_s is None or e.ttl_s is None:
        return None
    return e.age_s <= e.ttl_s


def _stale_text(device: str, port: str, e: _Entry) -> str:
    s = e.sighting
    return (
        f"{device} {port} still lists {_who(s)} (unchanged for {e.age_s} s, TTL {e.ttl_s} s) "
        "beside a neighbour that appeared within its TTL: a stale entry of the cable that was "
        f"there before; compared with the new neighbour, capture again in {e.ttl_s} s to "
        f"confirm ({s.source})"
    )


def _who(s: Sighting) -> str:
    name = s.remote_names[0] if s.remote_names else "?"
    return f"{name} {s.remote_ports[0]}" if s.remote_ports else name


# -- lldpcli JSON (json0 and json) --------------------------------------------------------------


def _first(value: Any) -> Any:
    """json0 wraps every value in a one-element list; json does not. Unwrap either."""
    while isinstance(value, list):
        if not value:
            return None
        value = value[0]
    return value


def _text(value: Any) -> str:
    value = _first(value)
    if isinstance(value, dict):
        value = value.get("value", "")
        value = _first(value)
    if value is None:
        return ""
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return str(value)
    return ""


def _interfaces(doc: Any, source: str) -> list[tuple[str, Any, int | None]]:
    """(local ifname, interface object, line) for every interface of a json0 or json document."""
    if not isinstance(doc, dict) or "lldp" not in doc:
        raise ParseError(source, line_of(doc, 1), "JSON without an 'lldp' key; not lldpcli output")
    lldp = doc["lldp"]
    blocks = lldp if isinstance(lldp, list) else [lldp]  # json0: [{"interface": [...]}]
    out: list[tuple[str, Any, int | None]] = []
    for block in blocks:
        if block in (None, {}, [], ""):
            continue
        if not isinstance(block, dict):
            raise ParseError(source, line_of(doc), "'lldp' holds something other than objects")
        ifaces = block.get("interface", [])
        if isinstance(ifaces, dict):
            ifaces = [ifaces]
        if not isinstance(ifaces, list):
            raise ParseError(source, line_of(block), "'interface' is neither a list nor an object")
        for item in ifaces:
            if not isinstance(item, dict):
                raise ParseError(source, line_of(block), "an interface entry is not an object")
            if "name" in item and isinstance(_first(item["name"]), str):  # json0
                out.append((_text(item["name"]), item, line_of(item)))
                continue
            named = [(k, v) for k, v in item.items() if isinstance(v, dict)]
            if not named:
                raise ParseError(source, line_of(item), "an interface entry has no name")
            for name, body in named:  # json: {"eth0": {...}}
                out.append((name, body, line_of(body, line_of(item))))
    return out


def _chassis(iface: Any) -> tuple[list[str], str]:
    """Remote device name candidates and the chassis id (possibly a MAC)."""
    chassis = _first(iface.get("chassis"))
    if not isinstance(chassis, dict):
        return [], ""
    if set(chassis) <= _CHASSIS_FIELDS:  # json0, or json without a SysName
        name = _text(chassis.get("name"))
        cid = _text(chassis.get("id"))
        return ([name] if name else []), cid
    for name, body in chassis.items():  # json: {"sysname": {...}}
        cid = _text(body.get("id")) if isinstance(body, dict) else ""
        return [name], cid
    return [], ""


def _port(iface: Any) -> tuple[list[str], float | None]:
    port = _first(iface.get("port"))
    if not isinstance(port, dict):
        return [], None
    pid = _first(port.get("id"))
    pid_type = pid.get("type", "") if isinstance(pid, dict) else ""
    pid_value = _text(pid)
    descr = _text(port.get("descr"))
    # a MAC or IP port id: the description carries the interface name
    names = [pid_value, descr] if pid_type in _NAMED_PORT_ID else [descr, pid_value]
    auto = _first(port.get("auto-negotiation"))
    rate = None
    if isinstance(auto, dict):
        rate = mau_rate_gbps(_text(auto.get("current")))
    for key in ("speed", "rate", "mau"):
        if rate is None and key in port:
            rate = mau_rate_gbps(_text(port[key]))
    return [n for n in names if n], rate


def _ttl(iface: Any) -> int | None:
    """The TTL of an lldpcli JSON neighbour: under ``port`` (lldpd >= 1.0) or ``chassis``."""
    for key in ("port", "chassis"):
        part = _first(iface.get(key))
        if isinstance(part, dict):
            if "ttl" in part:
                return _seconds(_text(part["ttl"]))
            for body in part.values():  # json chassis: {"sysname": {...}}
                if isinstance(body, dict) and "ttl" in body:
                    return _seconds(_text(body["ttl"]))
    return None


def parse_lldpcli_json(text: str, source: str, device: str) -> list[Sighting]:
    """Sightings in ``lldpcli -f json0`` (or ``-f json``) ``show neighbors details`` output."""
    return [e.sighting for e in _json_entries(text, source, device)]


def _json_entries(text: str, source: str, device: str) -> list[_Entry]:
    doc = load_json(text, source)
    out = []
    for ifname, iface, line in _interfaces(doc, source):
        if not ifname:
            raise ParseError(source, line, "an interface entry has an empty name")
        if not isinstance(iface, dict):
            raise ParseError(source, line, f"interface {ifname} is not an object")
        names, cid = _chassis(iface)
        ports, rate = _port(iface)
        if not names and not cid:
            raise ParseError(
                source, line, f"the neighbour on {ifname} has neither a system name nor an id"
            )
        sighting = Sighting(
            local_names=(device,),
            local_ports=(ifname,),
            remote_names=tuple(n for n in (*names, cid) if n),
            remote_ports=tuple(ports),
            rate_gbps=rate,
            source=f"{source} line {line}" if line else source,
        )
        out.append(_Entry(sighting, lldp_age_seconds(_text(iface.get("age"))), _ttl(iface)))
    return out


# -- lldpcli plain text --------------------------------------------------------------------------

_KV = re.compile(r"^\s*([A-Za-z][A-Za-z0-9 ]*?):\s*(.*)$")


def parse_lldpcli_plain(text: str, source: str, device: str) -> list[Sighting]:
    """Sightings in the default (plain) output of ``lldpcli show neighbors details``."""
    return [e.sighting for e in _plain_entries(text, source, device)]


_TIME = re.compile(r"\bTime:\s*(.+)$")


def _plain_entries(text: str, source: str, device: str) -> list[_Entry]:
    out: list[_Entry] = []
    record: dict[str, Any] | None = None

    def close() -> None:
        if record is None:
            return
        if not record["names"] and not record["cid"]:
            raise ParseError(
                source,
                record["line"],
                f"the neighbour on {record['ifname']} has neither SysName nor ChassisID",
            )
        sighting = Sighting(
            local_names=(device,),
            local_ports=(record["ifname"],),
            remote_names=tuple(n for n in (*record["names"], record["cid"]) if n),
            remote_ports=tuple(p for p in record["ports"] if p),
            rate_gbps=record["rate"],
            source=f"{source} line {record['line']}",
        )
        out.append(_Entry(sighting, record["age"], record["ttl"]))

    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or set(line.strip()) <= {"-"}:
            continue
        m = _KV.match(line)
        if not m:
            continue  # continuation of a multi-line SysDescr and the like
        key, value = m.group(1).strip(), m.group(2).strip()
        if key == "Interface":
            close()
            ifname = value.split(",", 1)[0].strip()
            if not ifname:
                raise ParseError(source, number, "an Interface line without a name", line)
            record = {"ifname": ifname, "line": number, "names": [], "cid": "", "ports": []}
            record.update(pid_type="", pid="", descr="", rate=None, ttl=None)
            t = _TIME.search(value)
            record["age"] = lldp_age_seconds(t.group(1)) if t else None
            continue
        if record is None:
            continue
        if key == "SysName":
            record["names"] = [value] if value else []
        elif key == "ChassisID":
            record["cid"] = value.split(None, 1)[-1] if value else ""
        elif key == "PortID":
            parts = value.split(None, 1)
            record["pid_type"], record["pid"] = ([*parts, ""])[:2] if parts else ("", "")
        elif key == "PortDescr":
            record["descr"] = value
        elif key == "MAU oper type":
            record["rate"] = mau_rate_gbps(value)
        elif key == "TTL":
            record["ttl"] = _seconds(value)
        if key in ("PortID", "PortDescr"):
            if record["pid_type"] in _NAMED_PORT_ID:
                record["ports"] = [record["pid"], record["descr"]]
            else:
                record["ports"] = [record["descr"], record["pid"]]
    close()
    if not out and "Interface:" in text:
        raise ParseError(source, None, "has Interface lines but no neighbour could be read")
    return out


# -- SONiC `show lldp table` ----------------------------------------------------------------------

_TOTAL = re.compile(r"Total entries displayed:\s*(\d+)")


def parse_sonic_table(text: str, source: str, device: str) -> list[Sighting]:
    """Sightings in SONiC ``show lldp table`` (lldpshow) output."""
    lines = text.splitlines()
    header_at = next(
        (i for i, line in enumerate(lines) if re.match(r"^\s*LocalPort\s+RemoteDevice", line)),
        None,
    )
    if header_at is None:
        raise ParseError(source, 1, "no 'LocalPort  RemoteDevice  RemotePortID' header line")
    header = lines[header_at]
    spans = _column_spans(header, lines[header_at + 1] if header_at + 1 < len(lines) else "")
    out: list[Sighting] = []
    total: tuple[int, int] | None = None
    for number in range(header_at + 2, len(lines) + 1):
        line = lines[number - 1]
        if not line.strip():
            continue
        m = _TOTAL.search(line)
        if m:
            total = (int(m.group(1)), number)
            break
        if set(line.strip()) <= {"-", " "}:
            continue
        out.append(_sonic_row(line, spans, source, number, device))
    if total is not None and total[0] != len(out):
        raise ParseError(
            source,
            total[1],
            f"the footer counts {total[0]} entries but {len(out)} rows were read; "
            "the file looks cut or edited",
        )
    return out


def _column_spans(header: str, rule: str) -> list[int]:
    """Start offsets of the columns, from the dash rule under the header (else the header)."""
    if rule.strip() and set(rule.strip()) <= {"-", " "}:
        return [m.start() for m in re.finditer(r"-+", rule)]
    return [m.start() for m in re.finditer(r"\S+", header)]


def _sonic_row(line: str, spans: list[int], source: str, number: int, device: str) -> Sighting:
    cells = []
    if len(spans) >= 3 and len(line) > spans[2] and not line[spans[1] - 1 : spans[1]].strip():
        bounds = [*spans[1:], None]
        cells = [line[a:b].strip() for a, b in zip(spans, bounds, strict=False)]
    if len(cells) < 3 or not cells[0] or " " in cells[0]:
        cells = line.split()  # not aligned (re-typed or tab separated): split on blanks
        if len(cells) < 3:
            raise ParseError(
                source,
                number,
                "a row needs at least LocalPort, RemoteDevice and RemotePortID",
                line,
            )
        cells = [*cells[:4], " ".join(cells[4:])]
    local, remote, port_id = cells[0], cells[1], cells[2]
    descr = cells[4] if len(cells) > 4 else ""
    if not local or " " in local:
        raise ParseError(source, number, "the LocalPort column is empty or malformed", line)
    if not remote and not port_id:
        raise ParseError(source, number, f"the neighbour on {local} has no name and no port", line)
    return Sighting(
        local_names=(device,),
        local_ports=(local,),
        remote_names=(remote,) if remote else (),
        remote_ports=tuple(p for p in (port_id, descr) if p),
        rate_gbps=None,
        source=f"{source} line {number}",
    )


__all__ = [
    "fresh_neighbours",
    "lldp_age_seconds",
    "mau_rate_gbps",
    "parse_lldp_file",
    "parse_lldp_text",
    "parse_lldpcli_json",
    "parse_lldpcli_plain",
    "parse_sonic_table",
]
