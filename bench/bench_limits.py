"""Runaway inputs: how fast railplan refuses them (library, command, whole run), and its memory.

Cases: ``--gpus 4194304`` on every catalog switch (and on none, every model allowed), the
README's 131,072 GPUs on 64-port switches, a YAML alias bomb, a 1,000-deep nesting and a
5,000-digit integer. Each case runs in a fresh process (peak RSS is that case's alone).
Targets: 4,194,304 GPUs answered in under 2 s (a refusal or a design), an alias
bomb refused in under 1 s.
Usage: python bench/bench_limits.py
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SWITCHES = ("cx732q-n", "qm9700", "cx864e-n", "s9827-128dh", "sn5600", "q3400")


def alias_bomb(levels: int = 9) -> str:
    lines = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels + 1):
        lines.append(f"l{i}: &l{i} [{','.join([f'*l{i - 1}'] * 9)}]")
    return "\n".join(lines) + "\n"


def documents() -> dict[str, str]:
    return {
        "alias bomb (9 levels, 9^9 values)": alias_bomb(),
        "nesting 1,000 deep": "cluster: " + "[" * 1000 + "]" * 1000 + "\n",
        "5,000-digit integer": "cluster:\n  gpus: " + "9" * 5000 + "\n  node: dgx-h100\n",
    }


def cases() -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for sw in (*SWITCHES, None):
        fabric = {"switches": [sw]} if sw else {}
        out.append(
            {
                "case": f"--gpus 4194304 --switch {sw}" if sw else "--gpus 4194304, any switch",
                "spec": {"cluster": {"gpus": 4194304, "node": "dgx-h100"}, "fabric": fabric},
            }
        )
    out.append(
        {
            "case": "--gpus 131072 --switch qm9700 --topology roft --planes 1 (docs)",
            "spec": {"cluster": {"gpus": 131072, "node": "dgx-h100"}, "fabric": {"switches": ["qm9700"], "topology": "roft", "planes": 1}},
        }
    )  # fmt: skip
    out += [{"case": name, "yaml": text} for name, text in documents().items()]
    return out


def run_one(case: dict[str, object]) -> dict[str, object]:
    """Library time in this process (imports and catalog loaded first, not counted)."""
    import railplan
    from railplan.errors import RailplanError, SpecError
    from railplan.pipeline.build import build
    from railplan.safe_load import load_yaml

    catalog = railplan.load_catalog()
    started = time.perf_counter()
    try:
        if "yaml" in case:
            load_yaml(str(case["yaml"]), "case.yaml", SpecError)
        else:
            build(railplan.spec_from_dict(case["spec"]), catalog)
        outcome = "planned"
    except RailplanError as exc:
        outcome = "refused: " + str(exc).splitlines()[0][:90]
    seconds = time.perf_counter() - started
    command_s = warm_command_seconds(case)
    peak = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return {
        "library_s": round(seconds, 4),
        "command_s": round(command_s, 4),
        "outcome": outcome,
        "peak_mib": peak,
    }


def warm_command_seconds(case: dict[str, object]) -> float:
    """``railplan plan FILE`` run in this process once Python and railplan are loaded: the
    command's own time (reading the file, the catalog, the checks), start-up excluded."""
    import contextlib
    import importlib
    import io

    app = importlib.import_module("railplan.cli.app")
    app._load_commands()  # every command module imported before the clock starts
    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp) / "case.yaml"
        spec.write_text(str(case["yaml"]) if "yaml" in case else json.dumps(case["spec"]))
        started = time.perf_counter()
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            app._run(["plan", str(spec)])
        return time.perf_counter() - started


def cli_seconds(case: dict[str, object], folder: Path) -> tuple[float, int]:
    """Wall time of the whole ``railplan plan`` process (start-up included) and its exit code."""
    spec = folder / "case.yaml"
    if "yaml" in case:
        spec.write_text(str(case["yaml"]), encoding="utf-8")
    else:
        spec.write_text(json.dumps(case["spec"]), encoding="utf-8")  # JSON is YAML
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "railplan", "plan", str(spec)], env=env, capture_output=True
    )
    return time.perf_counter() - started, done.returncode


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(run_one(json.loads(args.one))))
        return
    print("case | library s | command s | whole run s (exit) | peak MiB | outcome")
    print("--- | ---: | ---: | ---: | ---: | ---")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "railplan", "--help"], env=env, capture_output=True)
    print(f"start-up only (railplan --help) | | | {time.perf_counter() - started:.2f} (0) | | ")
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases():
            out = subprocess.run(
                [sys.executable, __file__, "--one", json.dumps(case)],
                capture_output=True,
                text=True,
                check=True,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
            ).stdout
            row = json.loads(out)
            wall, code = cli_seconds(case, Path(tmp))
            print(
                f"{case['case']} | {row['library_s']:.3f} | {row['command_s']:.3f} | "
                f"{wall:.2f} ({code}) | "
                f"{row['peak_mib']} | {row['outcome']}",
                flush=True,
            )


if __name__ == "__main__":
    main()
