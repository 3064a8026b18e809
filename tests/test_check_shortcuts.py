"""The set-based shortcuts of the id and cable-count rules say what counting says: nothing for
a sound design, the same sentences for one broken at random (cables dropped, doubled, moved to
another link, ids repeated)."""

from __future__ import annotations

import dataclasses
from collections import Counter
from functools import cache

from hypothesis import given, settings
from hypothesis import strategies as st

from railplan.catalog import load_catalog
from railplan.design import Design
from railplan.pipeline.build import build
from railplan.validate import _link_rows
from railplan.validate.physical import one_cable_per_link
from railplan.validate.wiring import unique_ids
from tests.conftest import make_spec


@cache
def laid_out() -> Design:
    return build(make_spec(64, "dgx-h100", switches=["qm9700"]), load_catalog()).design


def counted_cables(d: Design) -> list[str]:
    """``one_cable_per_link`` by counting alone."""
    per_link = Counter(c.link_id for c in d.cables)
    out = [f"link {lk.id} has {per_link[lk.id]} cables" for lk in d.links if per_link[lk.id] != 1]
    dup = [i for i, c in Counter(c.id for c in d.cables).items() if c > 1]
    out += [f"cable id {i} is used more than once" for i in dup[:5]]
    return out[:10]


def counted_ids(d: Design) -> list[str]:
    """``unique_ids`` by counting alone."""
    out = []
    for what, ids in (
        ("node", [n.id for n in d.nodes]),
        ("switch", [s.id for s in d.switches]),
        ("link", [lk.id for lk in d.links]),
    ):
        dup = [i for i, c in Counter(ids).items() if c > 1]
        out += [f"{what} id {i} is used more than once" for i in dup[:5]]
    return out


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_the_shortcuts_say_what_counting_says(data: st.DataObject) -> None:
    d = laid_out()
    cables, links = list(d.cables), list(d.links)
    for _ in range(data.draw(st.integers(0, 4))):
        i = data.draw(st.integers(0, len(cables) - 1))
        what = data.draw(st.sampled_from(["drop", "double", "move", "cable id", "link id"]))
        if what == "drop":
            cables.pop(i)
        elif what == "double":
            cables.append(cables[i])
        elif what == "move":
            target = links[data.draw(st.integers(0, len(links) - 1))].id
            cables[i] = dataclasses.replace(cables[i], link_id=target)
        elif what == "cable id":
            cables[i] = dataclasses.replace(cables[i], id=cables[0].id)
        else:
            j = data.draw(st.integers(0, len(links) - 1))
            links[j] = dataclasses.replace(links[j], id=links[0].id)
    broken = dataclasses.replace(d, cables=tuple(cables), links=tuple(links))
    assert one_cable_per_link(broken) == counted_cables(broken)
    by_rows = _link_rows(broken, load_catalog())  # the shortcut over link-table rows
    assert one_cable_per_link(broken, *by_rows) == counted_cables(broken)
    assert unique_ids(broken) == counted_ids(broken)
    assert one_cable_per_link(d) == [] == unique_ids(d)
    assert one_cable_per_link(d, *_link_rows(d, load_catalog())) == []
