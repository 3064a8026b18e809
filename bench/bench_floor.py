"""Distance to the floor at 131,072 GPUs: the design serializer and loader against plain JSON, and
``cables`` against ``plan``, old code and new taking turns.

Serializer rows time one call in a fresh process that has loaded the same design.json (made
once, by this checkout, with ``plan -o``): ``json.dumps`` / ``json.loads`` of the same data are
the floor each is held to (target: within 1.5x). Command rows run ``python -m railplan`` in a
fresh process (wall time and peak RSS via ``os.wait4``). With ``--before DIR`` (another
checkout, e.g. ``git worktree add /tmp/base <commit>``) every row also runs the code in DIR, the
two alternating run by run; each cell is the median of ``--repeat`` runs with the spread (min-max).

    python bench/bench_floor.py --before /tmp/base            # 131k, medians of 3
    python bench/bench_floor.py --gpus 65536 --repeat 1
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: one timed call after loading the design: prints its seconds (perf_counter) on stdout
SNIPPETS = {
    "json.loads (floor)": "import json; t=T(); json.loads(TEXT); D=T()-t",
    "design_from_json": "from railplan.design import design_from_json; t=T(); "
    "design_from_json(TEXT); D=T()-t",
    "json.dumps (floor)": "import json; d=json.loads(TEXT); t=T(); json.dumps(d); D=T()-t",
    "design_to_json": "from railplan.design import design_from_json, design_to_json; "
    "d=design_from_json(TEXT); t=T(); out=design_to_json(d); D=T()-t; assert out == TEXT",
    "cables CSV render": "from railplan.design import design_from_json; "
    "from railplan.render import cables_csv; d=design_from_json(TEXT); t=T(); "
    "cables_csv.render(d); D=T()-t",
    # as `plan -o` writes it: pieces written by a thread while the next is made where the
    # checkout has them (``design_json_chunks``), else the whole text
    "design.json encoded and written": "import tempfile; from railplan.design import io; "
    "from railplan.render.atomic import write_set; d=io.design_from_json(TEXT); "
    "c=getattr(io, 'design_json_chunks', None); o=tempfile.mkdtemp(dir=OUT); t=T(); "
    "write_set(o, {'design.json': c(d) if c else io.design_to_json(d)}); D=T()-t",
    "cables CSV rendered and written": "import tempfile; from railplan.design import "
    "design_from_json; from railplan.render import cables_csv; "
    "from railplan.render.atomic import write_atomic; d=design_from_json(TEXT); "
    "r=getattr(cables_csv, 'render_pieces', None); o=tempfile.mkdtemp(dir=OUT); t=T(); "
    "write_atomic(o + '/c.csv', r(d) if r else cables_csv.render(d)); D=T()-t",
}
#: the two calls taken in turns in one process, three times: the median ratio (ours / floor)
#: of CPU seconds (both single-threaded), which a busy machine moves far less than either time
RATIOS = {
    "design_from_json / json.loads": "T=time.process_time\n"
    "from railplan.design import design_from_json\n"
    "import json\nR=[]\nfor _ in range(3):\n    t=T(); json.loads(TEXT); a=T()-t\n"
    "    t=T(); design_from_json(TEXT); R.append((T()-t)/a)\nD=sorted(R)[1]",
    "design_to_json / json.dumps": "T=time.process_time\n"
    "from railplan.design import design_from_json, design_to_json\n"
    "import json\nd=design_from_json(TEXT); j=json.loads(TEXT); R=[]\nfor _ in range(3):\n"
    "    t=T(); json.dumps(j); a=T()-t\n    t=T(); design_to_json(d); R.append((T()-t)/a)\n"
    "D=sorted(R)[1]",
}
PRELUDE = (
    "import gc, sys, time; gc.disable(); T=time.perf_counter; "
    "TEXT=open(sys.argv[1]).read(); OUT=sys.argv[2]\n{body}\nprint(D)"
)


def _env(tree: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(tree)
    return env


def time_snippet(body: str, tree: Path, design: Path) -> float:
    out = subprocess.run(
        [sys.executable, "-c", PRELUDE.format(body=body), str(design), str(design.parent)],
        env=_env(tree),
        cwd=tree,
        capture_output=True,
        text=True,
        check=True,
    )
    return float(out.stdout.split()[-1])


def time_command(argv: list[str], tree: Path) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        args = [a.replace("{out}", tmp) for a in argv]
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "railplan", *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=tree,
            env=_env(tree),
        )
        _, status, usage = os.wait4(proc.pid, 0)
        if os.waitstatus_to_exitcode(status):
            raise SystemExit(f"{' '.join(args)} failed in {tree}")
        return time.perf_counter() - t0, usage.ru_maxrss / 1024


def _cell(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpus", type=int, default=131072)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--before", type=Path, help="another checkout to run beside this one")
    ap.add_argument("--skip-commands", action="store_true", help="serializer rows only")
    ap.add_argument("--ratios-only", action="store_true", help="the same-process ratios only")
    args = ap.parse_args()
    trees = [args.before.resolve(), ROOT] if args.before else [ROOT]
    job = ["--gpus", str(args.gpus), "--node", "dgx-h100", "--switch", "qm9700"]
    job += ["--planes", "2", "--topology", "roft"]
    print(f"load average at start {os.getloadavg()[0]:.2f}; {args.gpus:,} GPUs qm9700 2 planes")
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "railplan", "plan", *job, "-o", tmp],
            env=_env(ROOT),
            check=True,
            capture_output=True,
        )
        design = Path(tmp) / "design.json"
        head = "| work | " + " | ".join(
            ["before s (min-max)", "after s (min-max)"] if args.before else ["s (min-max)"]
        )
        print(head + " |")
        print("|---|" + "---:|" * len(trees))
        for label, body in SNIPPETS.items():
            if args.ratios_only:
                break
            runs: dict[Path, list[float]] = {t: [] for t in trees}
            for i in range(args.repeat):
                for tree in trees if i % 2 == 0 else trees[::-1]:
                    runs[tree].append(time_snippet(body, tree, design))
            print(f"| {label} | " + " | ".join(_cell(runs[t]) for t in trees) + " |")
        for label, body in RATIOS.items():
            ratios = {t: time_snippet(body, t, design) for t in trees}
            print(
                f"| {label}, same process, CPU s (x) | "
                + " | ".join(f"{ratios[t]:.2f}x" for t in trees)
                + " |"
            )
        if args.skip_commands:
            return
        commands = {
            "plan -o DIR (wall s)": ["plan", *job, "-o", "{out}"],
            "cables -o x.csv (wall s)": ["cables", *job, "-o", "{out}/cables.csv"],
        }
        for label, argv in commands.items():
            walls: dict[Path, list[float]] = {t: [] for t in trees}
            peaks: dict[Path, list[float]] = {t: [] for t in trees}
            for i in range(args.repeat):
                for tree in trees if i % 2 == 0 else trees[::-1]:
                    wall, peak = time_command(argv, tree)
                    walls[tree].append(wall)
                    peaks[tree].append(peak)
            cells = [f"{_cell(walls[t])}, {statistics.median(peaks[t]):,.0f} MiB" for t in trees]
            print(f"| {label} | " + " | ".join(cells) + " |")
    print(f"load average at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
