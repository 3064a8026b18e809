"""link_ends made as read: each record made alone is the one the bulk pass makes, a caller that
reads many links gets the bulk pass, and the mapping behaves as the dict it stands for."""

from __future__ import annotations

import numpy as np
import pytest

import railplan.design.ends as ends_module
from railplan.catalog import load_catalog
from railplan.design import Design
from railplan.design.ends import (
    LinkEnds,
    _all_records,
    _link_protocols,
    protocol_column,
    protocols_present,
)
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


@pytest.mark.parametrize("name", DESIGNS)
def test_protocols_by_row_answer_as_the_dict(name: str) -> None:
    design, catalog = laid_out(name), load_catalog()
    table = link_table(design, catalog)
    protocols = _link_protocols(design, catalog)
    want = protocols.every()
    assert [protocols[i] for i in table.ids] == [want[i] for i in table.ids]
    assert protocol_column(protocols, table.ids) == [want[i] for i in table.ids]
    assert protocol_column(dict(want), table.ids) == [want[i] for i in table.ids]
    assert protocols_present(protocols) == set(want.values()) == protocols_present(dict(want))
    assert dict(protocols.items()) == want and len(protocols) == len(want)
    assert "NO-SUCH-LINK" not in protocols and protocols.get("NO-SUCH-LINK") is None
    # the codes the cable check groups by order the rows as their names do
    names = [protocols.names[c] for c in protocols.codes.tolist()]
    assert np.array_equal(
        np.argsort(protocols.codes, kind="stable"), np.argsort(names, kind="stable")
    )
