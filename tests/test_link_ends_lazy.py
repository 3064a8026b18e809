"""link_ends made as read: each record made alone is the one the bulk pass makes, a caller that
reads many links gets the bulk pass, and the mapping behaves as the dict it stands for."""

from __future__ import annotations

import pytest

import railplan.design.ends as ends_module
from railplan.catalog import load_catalog
from railplan.design import Design
from railplan.design.ends import LinkEnds, _all_records
from railplan.design.link_table import link_table
from tests.test_link_arrays import DESIGNS, laid_out


@pytest.mark.parametrize("name", [*DESIGNS, "gb200"])
def test_records_made_alone_are_the_bulk_records(name: str) -> None:
    design = laid_out(name) if name != "gb200" else _gb200()
    table = link_table(design, load_catalog())
    bulk = _all_records(table)
    lazy = LinkEnds(table)
    for link_id in reversed(table.ids):  # read out of order, one by one
        got = lazy[link_id]
        assert got == bulk[link_id]
        assert [type(x) for x in got[0]] == [type(x) for x in bulk[link_id][0]]
    assert lazy == bulk and list(lazy) == list(bulk) and len(lazy) == len(bulk)


def test_many_reads_make_every_record_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ends_module, "BULK_AFTER", 5)
    table = link_table(laid_out("seed001-64gpu"), load_catalog())
    lazy = LinkEnds(table)
    alone = max(5, len(table.ids) // 8)  # an eighth of the links, or BULK_AFTER
    for link_id in table.ids[: alone - 1]:
        lazy[link_id]
    assert lazy._every is None
    lazy[table.ids[alone - 1]]
    assert lazy._every is not None and lazy[table.ids[-1]] is lazy._every[table.ids[-1]]


def test_it_answers_as_a_dict() -> None:
    table = link_table(laid_out("seed001-64gpu"), load_catalog())
    lazy, bulk = LinkEnds(table), _all_records(table)
    first = table.ids[0]
    assert first in lazy and "NO-SUCH-LINK" not in lazy
    assert lazy.get("NO-SUCH-LINK") is None and lazy.get(first) == bulk[first]
    with pytest.raises(KeyError):
        lazy["NO-SUCH-LINK"]
    assert dict(lazy.items()) == bulk and list(lazy.values()) == list(bulk.values())


def _gb200() -> Design:
    from railplan import load_spec, plan
    from railplan.pipeline.layout import complete
    from tests.test_link_arrays import EXAMPLES

    spec = load_spec(EXAMPLES / "gb200-nvl72-576.yaml")
    catalog = load_catalog()
    return complete(plan(spec, catalog), spec, catalog, time_limit_s=0.5)[0]
