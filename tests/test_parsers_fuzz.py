"""Fuzzed parser inputs: a parser either returns or raises ParseError, never anything else."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import railplan
from railplan.design import Design
from railplan.field import ParseError
from railplan.field.asbuilt import compare
from railplan.field.names import NameMap
from railplan.field.parse_ib import parse_iblinkinfo, parse_ibnetdiscover
from railplan.field.parse_lldp import parse_lldp_text
from railplan.field.parse_nccl import parse_nccl_json, parse_nccl_log, parse_nccl_text
from railplan.field.parse_node import (
    modules_loaded,
    parse_ibstat,
    parse_ibv_devinfo,
    parse_lspci_acs,
)
from railplan.field.parse_perftest import parse_perftest
from railplan.render.field_report import report_markdown

FIX = Path(__file__).parent / "fixtures" / "loop"
FUZZ = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)


@cache
def design() -> Design:
    spec = {
        "name": "fuzz",
        "cluster": {"gpus": 224, "gpus_per_node": 8, "nics_per_node": 2, "port_speed_gbps": 400},
        "fabric": {"switches": ["cx732q-n"]},
    }
    return railplan.plan(railplan.spec_from_dict(spec))


def _lldp(text: str) -> Any:
    parsed = parse_lldp_text(text, "fuzz.txt", "node0001")
    compare(design(), [parsed], NameMap(design()))  # resolving odd names must not crash either
    return parsed


def _nccl(text: str) -> Any:
    result = parse_nccl_text(text, "fuzz.txt")
    for metric in ("busbw_gbs", "peak_busbw_gbs", "avg_busbw_gbs", "algbw_gbs"):
        result.metric(metric)
    return result


def _perftest(text: str) -> Any:
    result = parse_perftest(text, "fuzz.txt")
    for metric in ("bw_avg_gbps", "bw_peak_gbps", "lat_typical_us", "lat_p99_us"):
        result.metric(metric)
    return result


def _ib(parse: Callable[[str, str], Any]) -> Callable[[str], Any]:
    def run(text: str) -> Any:
        parsed = parse(text, "fuzz.txt")
        compare(design(), [parsed], NameMap(design()))
        return parsed

    return run


PARSERS: dict[str, tuple[Callable[[str], Any], list[str]]] = {
    "lldp": (
        _lldp,
        ["lldp/good/node0001.json", "lldp/good/node0003.txt", "lldp/good/p0-leaf-su01-r0.txt"],
    ),
    "ibnetdiscover": (_ib(parse_ibnetdiscover), ["ib/fabric.topo", "ib/grouped.topo"]),
    "iblinkinfo": (_ib(parse_iblinkinfo), ["ib/iblinkinfo.txt", "ib/iblinkinfo_lines.txt"]),
    "nccl": (_nccl, ["nccl/all_reduce_2node.txt", "nccl/old_format.txt"]),
    "nccl_json": (lambda t: parse_nccl_json(t, "fuzz.json"), ["nccl/all_reduce.json"]),
    "nccl_log": (lambda t: parse_nccl_log(t, "fuzz.log"), ["nccl/no_gdrdma.log"]),
    "perftest": (_perftest, ["perftest/ib_write_bw_roce_sweep.txt", "perftest/ib_write_lat.txt"]),
    "lspci": (lambda t: parse_lspci_acs(t, "fuzz.txt"), ["node/lspci_full.txt"]),
    "ibstat": (lambda t: parse_ibstat(t, "fuzz.txt"), ["node/ibstat.txt"]),
    "ibv_devinfo": (lambda t: parse_ibv_devinfo(t, "fuzz.txt"), ["node/ibv_devinfo.txt"]),
    "lsmod": (modules_loaded, ["node/lsmod.txt"]),
}


def survives(parse: Callable[[str], Any], text: str) -> None:
    try:
        parse(text)
    except ParseError as exc:
        assert "fuzz" in str(exc)  # the message names the file


@st.composite
def mutated(draw: st.DrawFn, samples: list[str]) -> str:
    """A sample file with lines dropped, repeated, cut or sprinkled with odd characters."""
    text = (FIX / draw(st.sampled_from(samples))).read_text(encoding="utf-8")
    lines = text.splitlines()
    for _ in range(draw(st.integers(0, 6))):
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        op = draw(st.sampled_from(["drop", "dup", "cut", "junk", "swap_tokens"]))
        if op == "drop":
            del lines[i]
        elif op == "dup":
            lines.insert(i, lines[i])
        elif op == "cut":
            lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))]
        elif op == "junk":
            pos = draw(st.integers(0, len(lines[i])))
            junk = draw(
                st.text(st.sampled_from('"[]{}(),:;#=-+.0123456789xXé\t nan inf'), max_size=6)
            )
            lines[i] = lines[i][:pos] + junk + lines[i][pos:]
        else:
            tokens = lines[i].split()
            lines[i] = " ".join(reversed(tokens))
    if draw(st.booleans()):
        cut = draw(st.integers(0, max(0, len("\n".join(lines)))))
        return "\n".join(lines)[:cut]
    return "\n".join(lines)


@pytest.mark.parametrize("name", sorted(PARSERS))
@FUZZ
@given(data=st.data())
def test_mutated_samples_parse_or_raise_parse_error(name: str, data: st.DataObject) -> None:
    parse, samples = PARSERS[name]
    survives(parse, data.draw(mutated(samples)))


@pytest.mark.parametrize("name", sorted(PARSERS))
@FUZZ
@given(text=st.text(max_size=400))
def test_random_text_parses_or_raises_parse_error(name: str, text: str) -> None:
    survives(PARSERS[name][0], text)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 1 << 40) | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "lldp",
                    "interface",
                    "name",
                    "chassis",
                    "port",
                    "id",
                    "value",
                    "type",
                    "descr",
                    "auto-negotiation",
                    "current",
                    "results",
                    "size",
                    "count",
                    "out_of_place",
                    "in_place",
                    "bus_bw",
                    "alg_bw",
                    "time",
                    "nwrong",
                    "config",
                    "devices",
                    "env",
                    "args",
                    "errors",
                    "average_bus_bandwidth",
                    "bandwidth",
                    "eth0",
                ]
            ),
            inner,
            max_size=5,
        )
    ),
    max_leaves=25,
)


@FUZZ
@given(doc=JSON)
def test_random_json_documents(doc: Any) -> None:
    text = json.dumps(doc)
    survives(lambda t: parse_lldp_text(t, "fuzz.json", "node0001"), text)
    survives(lambda t: parse_nccl_json(t, "fuzz.json"), text)


@FUZZ
@given(device=st.text(max_size=30), port=st.text(max_size=20))
def test_name_resolution_never_crashes(device: str, port: str) -> None:
    names = NameMap(design())
    names.device(device)
    for target in ("node0001", "p0-leaf-su01-r0"):
        result = names.port(target, port)
        assert result is None or 0 <= result < 32


GRADED = ["busbw_gbs", "gdrdma", "bw_avg_gbps", "lat_typical_us", "acs_srcvalid_on"]
GRADED += ["nvidia_peermem", "ports_active", "ports_mtu", "missing", "ports_expected"]


@settings(max_examples=30, deadline=None, database=None)
@given(
    metric=st.sampled_from(GRADED),
    data=st.data(),
)
def test_grading_garbage_never_raises(
    metric: str, data: st.DataObject, tmp_path_factory: Any
) -> None:
    from railplan.field.grade import STATUSES, Expectation, grade

    folder = tmp_path_factory.mktemp("results")
    name = data.draw(st.sampled_from(sorted(PARSERS)))
    text = data.draw(mutated(PARSERS[name][1]) | st.text(max_size=200))
    (folder / "T.txt").write_text(text, encoding="utf-8")
    exp = Expectation("T", "x", ("node0001", "node0002"), metric, 1.0, 1.0, "")
    report = grade(design(), [exp], folder)
    assert report.results[0].status in STATUSES
    report_markdown(report)
    json.dumps(report.to_json())
