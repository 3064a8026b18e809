"""railplan grow on the command line: phases of one spec, two specs, files, JSON, bad input."""

from __future__ import annotations

import json

import yaml

from tests.conftest import EXAMPLES


def test_grow_phases_writes_the_work_orders_deterministically(cli, tmp_path):
    args = ["grow", str(EXAMPLES / "h100-1k.yaml"), "--phase", "su2=512", "--phase", "su4=1024"]
    r = cli(*args, "-o", str(tmp_path / "one"), "--no-buy-later")
    assert r.code == 0, r.err
    assert "0 moved" in r.out
    step = tmp_path / "one" / "su2-to-su4"
    names = sorted(p.name for p in step.iterdir())
    assert names == [
        "delta-bill.csv",
        "delta-cables.csv",
        "delta-pairs.csv",
        "delta-testplan.csv",
        "growth.json",
        "growth.md",
        "moves.csv",
    ]
    sheet = (step / "delta-cables.csv").read_text().splitlines()
    assert len(sheet) == 1 + 1024 and all(row.startswith("add,") for row in sheet[1:])
    assert (step / "moves.csv").read_text().count("\n") == 1  # the header alone
    assert cli(*args, "-o", str(tmp_path / "two"), "--no-buy-later").code == 0
    for p in step.iterdir():
        assert p.read_bytes() == (tmp_path / "two" / "su2-to-su4" / p.name).read_bytes()


def test_grow_phases_json_with_the_pre_install_choice(cli):
    r = cli("grow", str(EXAMPLES / "h100-1k.yaml"), "--phase", "su2=512", "--json")
    assert r.code == 0, r.err
    out = json.loads(r.out)
    assert [p["gpus"] for p in out["phases"]] == [512, 1024]
    (step,) = out["steps"]
    assert step["moves"]["count"] == 0 and step["links"]["added"] == 1024
    switches = next(c for c in out["pre_install"] if c["item"] == "spine and core switches")
    assert switches["moves_pre_install"] == 0
    assert switches["moves_buy_later"] == switches["moves_lower_bound"] == 256
    assert switches["pre_install_usd"] == 2 * switches["buy_later_usd"]  # 16 vs 8 spines


def test_grow_two_specs_reports_moves_with_the_bound(cli, tmp_path):
    spec = yaml.safe_load((EXAMPLES / "h100-1k.yaml").read_text())
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    spec["cluster"]["gpus"], spec["name"] = 512, "h100-512"
    a.write_text(yaml.safe_dump(spec))
    spec["cluster"]["gpus"], spec["name"] = 1024, "h100-1024"
    b.write_text(yaml.safe_dump(spec))
    r = cli("grow", str(a), str(b), "--json")
    assert r.code == 0, r.err
    out = json.loads(r.out)
    assert out["subset"] is False
    assert out["moves"]["count"] == out["moves"]["lower_bound"] == 256
    assert out["moves"]["gap"] == 0


def test_grow_refuses_bad_phases(cli, tmp_path):
    spec = str(EXAMPLES / "h100-1k.yaml")
    r = cli("grow", spec, "--phase", "bad")
    assert r.code == 2 and "NAME=GPUS" in r.err
    r = cli("grow", spec, "--phase", "a=100")
    assert r.code == 2 and "phase a" in r.err and "multiple of 8" in r.err
    r = cli("grow", spec, "--phase", "../x=512")
    assert r.code == 2 and "phase name" in r.err
    r = cli("grow", spec)
    assert r.code == 2 and "no phases" in r.err
    phased = yaml.safe_load((EXAMPLES / "h100-1k.yaml").read_text())
    phased["phases"] = [{"name": "one", "gpus": 512}, {"name": "two", "gpus": 2048}]
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(phased))
    r = cli("grow", str(bad))
    assert r.code == 2 and "phases" in r.err and "cluster.gpus" in r.err


def test_grow_and_diff_help_read_plainly(cli):
    import re

    for command in ("grow", "diff"):
        res = cli(command, "--help")
        assert res.code == 0 and "--help" in res.out
        assert not re.search(r"<(list\[|[a-z]+ range)", res.out), res.out
    assert "--since" in cli("asbuilt", "--help").out
