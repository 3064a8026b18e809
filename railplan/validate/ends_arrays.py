"""Whether every link end of a design is sound, decided over arrays of the links at once.

``wiring.ends`` walks the links one by one and says what is wrong; at 393,216 links that walk
is a second and a half of Python for a design that is almost always sound. ``sound`` asks the
same questions of every end at once (numpy over the links' kinds, devices, ports, rates and
planes): every kind known, every end on a device of its tier that has the port, the port's
speed and plane the link's, no port used twice. Only when it cannot say yes (or the design has
attached devices, whose ports it leaves to the walk) does ``ends`` walk.
"""

from __future__ import annotations

from itertools import repeat
from operator import attrgetter

import numpy as np

from railplan.design import Design
from railplan.design.types import ROLE_TIER

_KIND, _RATE, _PLANE = attrgetter("kind"), attrgetter("rate_gbps"), attrgetter("plane")
_SIDES = (
    (attrgetter("a_device"), attrgetter("a_port")),
    (attrgetter("b_device"), attrgetter("b_port")),
)


def sound(d: Design, upward: dict[str, tuple[int, int]]) -> bool:
    """True when ``wiring.ends`` would find nothing wrong; False when it might (then walk).

    ``upward`` is the tier of each link kind's a and b end (``wiring.UPWARD``).
    """
    links, nodes, switches, shape = d.links, d.nodes, d.switches, d.shape
    n = len(links)
    if d.devices or not n:
        return not n
    index = {node.id: i for i, node in enumerate(nodes)}
    index.update({sw.id: len(nodes) + i for i, sw in enumerate(switches)})
    if len(index) != len(nodes) + len(switches):
        return False  # an id names a node and a switch: the walk tells them apart
    kinds = list(upward)
    code = np.fromiter(map({k: i for i, k in enumerate(kinds)}.get, map(_KIND, links), repeat(-1)),
                       np.int64, n)  # fmt: skip
    if (code < 0).any() or ("device-leaf" in upward and (code == kinds.index("device-leaf")).any()):
        return False  # an unknown kind, or a device link in a design without devices
    tiers = np.array([upward[k] for k in kinds], dtype=np.int64)
    rate = np.fromiter(map(_RATE, links), np.int64, n)
    plane = np.fromiter(map(_PLANE, links), np.int64, n)
    sw = _switch_arrays(d)
    port_plane = np.asarray(shape.port_plane, dtype=np.int64)
    widest = max([shape.ports, *(s.radix for s in switches)])
    codes = []
    for side, (device_of, port_of) in enumerate(_SIDES):
        dev = np.fromiter(map(index.get, map(device_of, links), repeat(-1)), np.int64, n)
        port = np.fromiter(map(port_of, links), np.int64, n)
        tier = tiers[code, side]
        if (dev < 0).any() or (port < 0).any():
            return False
        host = tier == 0
        if not (dev[host] < len(nodes)).all() or not (dev[~host] >= len(nodes)).all():
            return False
        hp = port[host]
        if (hp >= shape.ports).any() or (port_plane[hp] != plane[host]).any():
            return False
        if (rate[host] != shape.port_speed_gbps).any():
            return False
        s = dev[~host] - len(nodes)
        sp = port[~host]
        if (sw["tier"][s] != tier[~host]).any() or (sp >= sw["radix"][s]).any():
            return False
        up = (sw["up_from"][s] > 0) & (sp >= sw["up_from"][s])
        speed = np.where(up, sw["up_speed"][s], sw["speed"][s])
        if (speed != rate[~host]).any() or (sw["plane"][s] != plane[~host]).any():
            return False
        codes.append(dev * widest + port)
    # no port twice: sorted, no two neighbours equal (np.sort, not np.unique, whose hashing
    # path is a hundred times slower on this many distinct values in numpy 2.4)
    both = np.sort(np.concatenate(codes))
    return not (both[1:] == both[:-1]).any()


def _switch_arrays(d: Design) -> dict[str, np.ndarray]:
    """Each switch's tier, radix, plane, port speed and up section, in design order."""
    fields = {
        "tier": [ROLE_TIER.get(s.role, -1) for s in d.switches],  # an unknown role: walk
        "radix": [s.radix for s in d.switches],
        "plane": [s.plane for s in d.switches],
        "speed": [s.port_speed_gbps for s in d.switches],
        "up_from": [s.up_from_port for s in d.switches],
        "up_speed": [s.up_speed_gbps for s in d.switches],
    }
    return {k: np.asarray(v, dtype=np.int64) for k, v in fields.items()}
