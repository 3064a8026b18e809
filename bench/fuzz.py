"""The fuzz campaign at a large budget: mutated designs, specs, catalogs, --set values and tool
outputs through the CLI, plus the tamper suite through every command; counts per outcome.

    python bench/fuzz.py --designs 3000 --captures 3000 [--specs N] [--sets N] [--catalogs N]
                         [--seed S] [--keep tests/fixtures/fuzz]

Each case runs in a forked child of this process (railplan already imported, so a case costs
its own work only) under a 2 GiB address-space limit, and is judged by its exit code, its
stderr and the child's peak RSS (``os.wait4``):

- ``ok``: exit 0 or 1 (1: a check found problems, e.g. ``asbuilt``);
- ``refused``: exit 2, every line ``railplan: error: ...``; ``refused-unnamed`` if the first
  line does not name the path at fault (``names_a_path``: the input file, or the flag or
  field path of a ``--set``);
- ``traceback``: exit 70 (an internal error), a Python traceback, or any other exit code;
- ``over-2GiB``: killed by the memory limit or a MemoryError; ``timeout``: over ``--timeout``.

Every input that ends in ``traceback``, ``over-2GiB``, ``timeout`` or ``refused-unnamed`` is
written to ``--keep`` (one folder per case: the input and the command) as a regression fixture;
``tests/test_fuzz_fixtures.py`` replays every fixture kept there.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import json
import os
import random
import re
import resource
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DESIGN = ROOT / "designs" / "seed001-64gpu" / "design.json"
SPEC = ROOT / "examples" / "seed001-64gpu.yaml"
FIELD = ROOT / "examples" / "field"
LIMIT = 2 * 1024**3
#: values an attacker or a typo puts anywhere
HOSTILE: list[Any] = [
    None, True, False, -1, 0, 1, 3, 7, 64, 4097, 10**8, 10**30, 2**63, -(2**63), 1e8, 1e308,
    -0.0, -1e-9, 0.5, "", "x" * 5000, "$(touch x)", "../../etc/passwd", "a/b", "-oProxy=x",
    "{rack.__class__}", "=HYPERLINK(1)", "\r=1+1", "\n", "[/x]", "\x1b]8;;https://e/\x07",
    "<script>", "1:0", "abc", "NaN", "Infinity:1", "1e9999999:1", "3:1", "auto", "magic",
    "qm9700", [], [1, 2], [0] * 3000, {}, {"x": 1},
]  # fmt: skip
COMMANDS = (
    ["plan", "--json"],
    ["compare", "--no-traffic", "--no-layout", "--json"],
    ["cables"],
    ["analyze", "--json"],
    ["sheets", "-o", "{tmp}/out"],
    ["testplan", "-o", "{tmp}/out"],
    ["asbuilt", "--ibnetdiscover", "{tmp}/none.txt"],
    ["grade", "--results", "{tmp}/results"],
)
BAD = ("traceback", "over-2GiB", "timeout", "refused-unnamed")


def _leaves(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _leaves(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node[:3] + node[-2:] if len(node) > 5 else node):
            j = i if i < 3 or len(node) <= 5 else len(node) - (5 - i)
            out += _leaves(v, (*path, j))
    return out


def _at(node: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        node = node[key]
    return node


def mutate_json(rng: random.Random, data: Any, edits: int) -> Any:
    """``data`` with ``edits`` random changes: a value replaced, perturbed, removed or doubled."""
    data = copy.deepcopy(data)
    for _ in range(edits):
        paths = [p for p in _leaves(data) if p]
        if not paths:
            break
        path = rng.choice(paths)
        parent, key = _at(data, path[:-1]), path[-1]
        value = parent[key]
        roll = rng.random()
        if roll < 0.45:
            parent[key] = rng.choice(HOSTILE)
        elif roll < 0.65 and isinstance(value, (int, float)) and not isinstance(value, bool):
            parent[key] = rng.choice([value + 1, value - 1, value * 2, -value, value * 10**6])
        elif roll < 0.8 and isinstance(parent, dict):
            del parent[key]
        elif isinstance(parent, list):
            parent.insert(rng.randrange(len(parent) + 1), copy.deepcopy(value))
        elif isinstance(value, str) and value:
            parent[key] = value[: rng.randrange(len(value))] + rng.choice(["", "x", "\r", "[/"])
        else:
            parent[key] = rng.choice(HOSTILE)
    return data


def mutate_text(rng: random.Random, text: str) -> str:
    """Lines dropped, doubled, cut or spliced with hostile text; bytes flipped."""
    lines = text.splitlines()
    for _ in range(rng.randint(1, 6)):
        if not lines:
            lines = [""]
        i = rng.randrange(len(lines))
        roll = rng.random()
        if roll < 0.2:
            del lines[i]
        elif roll < 0.4:
            lines.insert(i, lines[i] * rng.choice([1, 2, 50]))
        elif roll < 0.6:
            lines[i] = lines[i][: rng.randrange(len(lines[i]) + 1)]
        elif roll < 0.8:
            cut = rng.randrange(len(lines[i]) + 1)
            lines[i] = lines[i][:cut] + str(rng.choice(HOSTILE)) + lines[i][cut:]
        else:
            lines[i] = "".join(
                chr(ord(c) ^ rng.choice([1, 32])) if c.isalnum() else c for c in lines[i]
            )
    return "\n".join(lines) + rng.choice(["\n", "", "\r\n"])


def run_case(argv: list[str], timeout: float) -> tuple[str, int, float, str]:
    """(outcome, peak RSS bytes, seconds, stderr) of ``railplan argv`` in a forked child."""
    from railplan.cli.app import _run

    out = tempfile.TemporaryFile()  # noqa: SIM115 - the child writes to it, the parent reads
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child: run the command with stdout/stderr captured, then exit
        try:
            resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))
            os.dup2(out.fileno(), 2)
            with open(os.devnull, "w") as sink:
                os.dup2(sink.fileno(), 1)
            os.environ.pop("RAILPLAN_DEBUG", None)
            code = _run(argv)
        except MemoryError:
            code = 137
        except BaseException:  # anything escaping _run is a traceback
            import traceback

            traceback.print_exc()
            code = 99
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)
    deadline = started + timeout
    status, usage = 0, None
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.wait4(pid, 0)
            return "timeout", 0, timeout, ""
        time.sleep(0.005)
    seconds = time.monotonic() - started
    out.seek(0)
    err = out.read().decode("utf-8", "replace")
    rss = usage.ru_maxrss * 1024 if usage else 0
    if os.WIFSIGNALED(status):
        return ("over-2GiB" if os.WTERMSIG(status) in (9, 6) else "traceback"), rss, seconds, err
    code = os.WEXITSTATUS(status)
    if code == 137 or "MemoryError" in err:
        return "over-2GiB", rss, seconds, err
    if "Traceback" in err or code not in (0, 1, 2):
        return "traceback", rss, seconds, err
    if code in (0, 1):
        return "ok", rss, seconds, err
    lines = [ln for ln in err.strip().splitlines() if ln]
    if not lines or not all(ln.startswith("railplan: error: ") for ln in lines):
        return "traceback", rss, seconds, err
    return "refused", rss, seconds, err


_FIELD_PATH = re.compile(r"(?:^|[\s'(])-{0,2}[A-Za-z_][\w-]*(?:\.[\w-]+|\[\d+\])+")


def names_a_path(line: str, named: str, argv: list[str]) -> bool:
    """A refusal names the path at fault. A file's case (``named`` is its path): the line names
    that file or another file of the command (its path or name, e.g. a capture that does not
    exist). A flag's case: the line names the flag or the dotted field path it sets."""
    body = line.removeprefix("railplan: error: ")
    if named:
        files = [named, *(a for a in argv if "/" in a)]
        return any(f in body or Path(f).name in body for f in files)
    return bool(_FIELD_PATH.search(body)) or body.startswith(("--", "flags: "))


class Campaign:
    """Counts per outcome; with ``shards`` > 1 this process runs every ``shards``-th case only
    (the cases are generated alike in every shard, from the same seed)."""

    def __init__(self, keep: Path | None, timeout: float, shard: int = 0, shards: int = 1) -> None:
        self.keep = keep
        self.timeout = timeout
        self.shard, self.shards = shard, shards
        #: the kinds run (all when empty): ``--only captures`` replays a campaign's captures
        self.only: tuple[str, ...] = ()
        #: cases generated so far per kind (every shard's), numbering the kept fixtures
        self.index: Counter[str] = Counter()
        self.tamper_failures: list[str] = []
        self.started = time.monotonic()
        self.counts: dict[str, Counter[str]] = {}
        self.peak: dict[str, int] = {}
        self.slowest: dict[str, float] = {}
        #: (kind, first line) of every refusal, for ``--log``
        self.refusals: list[tuple[str, str, str]] = []

    def mine(self, kind: str) -> bool:
        """Number the next case of ``kind``; True when this shard runs it."""
        self.index[kind] += 1
        if self.only and kind not in self.only:
            return False
        return self.index[kind] % self.shards == self.shard

    def case(
        self,
        kind: str,
        argv: list[str],
        files: dict[str, str | bytes],
        named: str,
        extra: dict[str, str] | None = None,
    ) -> str:
        outcome, rss, seconds, err = run_case(argv, self.timeout)
        done = sum(sum(c.values()) for c in self.counts.values()) + 1
        if done % 100 == 0:
            print(
                f"shard {self.shard}: {done} runs, {time.monotonic() - self.started:.0f} s",
                file=sys.stderr,
                flush=True,
            )
        first = err.strip().splitlines()[0] if err.strip() else ""
        if outcome == "refused" and not names_a_path(first, named, argv):
            outcome = "refused-unnamed"
        if outcome.startswith("refused"):
            self.refusals.append((kind, outcome, first))
        self.counts.setdefault(kind, Counter())[outcome] += 1
        self.peak[kind] = max(self.peak.get(kind, 0), rss)
        self.slowest[kind] = max(self.slowest.get(kind, 0.0), seconds)
        if outcome in BAD and self.keep is not None:
            folder = self.keep / f"{kind.strip('-')}-{self.index[kind]:05d}"
            folder.mkdir(parents=True, exist_ok=True)
            for name, data in files.items():
                (folder / name).write_bytes(data.encode() if isinstance(data, str) else data)
            (folder / "case.json").write_text(
                json.dumps(
                    {"argv": argv, "outcome": outcome, "stderr": err[-2000:], **(extra or {})},
                    indent=1,
                )
            )
        return outcome

    def table(self) -> str:
        kinds = sorted(self.counts)
        outcomes = ["ok", "refused", *BAD]
        rows = ["| inputs | runs | " + " | ".join(outcomes) + " | peak RSS MiB | slowest s |"]
        rows.append("|---|" + "---:|" * (len(outcomes) + 3))
        for kind in kinds:
            c = self.counts[kind]
            cells = [str(c.get(o, 0)) for o in outcomes]
            rows.append(
                f"| {kind} | {sum(c.values())} | " + " | ".join(cells)
                + f" | {self.peak[kind] / 2**20:.0f} | {self.slowest[kind]:.2f} |"
            )  # fmt: skip
        return "\n".join(rows)


def designs(camp: Campaign, rng: random.Random, n: int, tmp: Path) -> None:
    base = json.loads(DESIGN.read_text(encoding="utf-8"))
    (tmp / "results").mkdir(exist_ok=True)
    for i in range(n):
        data = mutate_json(rng, base, rng.randint(1, 4))
        path = tmp / f"d{i % 7}.json"
        text = json.dumps(data)
        if rng.random() < 0.05:
            text = text[: rng.randrange(len(text))]
        command = [a.replace("{tmp}", str(tmp)) for a in rng.choice(COMMANDS)]
        if not camp.mine("design.json"):
            continue
        path.write_text(text, encoding="utf-8")
        camp.case(
            "design.json", [command[0], str(path), *command[1:]], {"design.json": text}, str(path)
        )


def captures(camp: Campaign, rng: random.Random, n: int, tmp: Path) -> None:
    design = FIELD / "design.json"
    ib_design = FIELD / "ib-design.json"
    sources: list[tuple[Path, Path, str]] = [
        (ib_design, FIELD / "ibnetdiscover.txt", "--ibnetdiscover"),
        *((design, p, "--lldp") for p in sorted((FIELD / "lldp").iterdir())),
    ]
    results = sorted(p for p in (FIELD / "results").rglob("*") if p.is_file())
    for i in range(n):
        if rng.random() < 0.6:
            plan, source, flag = rng.choice(sources)
            text = mutate_text(rng, source.read_text(encoding="utf-8"))
            if not camp.mine("captures"):
                continue
            path = tmp / f"c{i % 5}{source.suffix}"
            path.write_text(text, encoding="utf-8")
            argv = ["asbuilt", str(plan), flag, str(path), "--report", str(tmp / "r.md")]
        else:
            original = rng.choice(results)
            text = mutate_text(rng, original.read_text(encoding="utf-8", errors="replace"))
            if not camp.mine("captures"):
                continue
            folder = tmp / f"results{i % 3}"
            if folder.exists():
                shutil.rmtree(folder)
            shutil.copytree(FIELD / "results", folder)
            path = folder / original.relative_to(FIELD / "results")
            path.write_text(text, encoding="utf-8")
            argv = ["grade", str(design), "--results", str(folder), "--report", str(tmp / "g.md")]
        camp.case("captures", argv, {path.name: text}, str(path), results_file(path, tmp))


def results_file(path: Path, tmp: Path) -> dict[str, str]:
    """Where a mutated results file sits in the field example's results/ (for the replay)."""
    relative = path.relative_to(tmp)
    if not relative.parts[0].startswith("results"):
        return {}
    return {
        "results_base": "examples/field/results",
        "results_file": str(Path(*relative.parts[1:])),
    }


def specs(camp: Campaign, rng: random.Random, n: int, tmp: Path) -> None:
    import yaml

    base = yaml.safe_load(SPEC.read_text(encoding="utf-8"))
    for i in range(n):
        data = mutate_json(rng, base, rng.randint(1, 3))
        text = yaml.safe_dump(data)
        path = tmp / f"s{i % 5}.yaml"
        command = rng.choice([["plan", "--no-layout", "--json"], ["plan", "--json"], ["cables"]])
        if not camp.mine("spec"):
            continue
        path.write_text(text, encoding="utf-8")
        camp.case("spec", [command[0], str(path), *command[1:]], {"spec.yaml": text}, str(path))


def sets(camp: Campaign, rng: random.Random, n: int) -> None:
    keys = ["cluster.gpus", "fabric.oversubscription", "fabric.planes", "layout.nodes_per_rack",
            "fabric.topology", "layout.label_template", "fabric.switches", "cluster.node"]  # fmt: skip
    for _ in range(n):
        value = rng.choice(HOSTILE)
        shown = json.dumps(value) if not isinstance(value, str) else value
        argv = ["plan", str(SPEC), "--no-layout", "--json", "--set", f"{rng.choice(keys)}={shown}"]
        if not camp.mine("--set"):
            continue
        camp.case("--set", argv, {"argv.json": json.dumps(argv)}, "")


def catalogs(camp: Campaign, rng: random.Random, n: int, tmp: Path) -> None:
    import yaml

    files = sorted((ROOT / "railplan" / "catalogs").glob("*.yaml"))
    for i in range(n):
        source = rng.choice(files)
        data = yaml.safe_load(source.read_text(encoding="utf-8"))
        data = mutate_json(rng, data, rng.randint(1, 3))
        if not camp.mine("catalog"):
            continue
        folder = tmp / f"cat{i % 3}"
        folder.mkdir(exist_ok=True)
        for old in folder.iterdir():
            old.unlink()
        text = yaml.safe_dump(data)
        (folder / source.name).write_text(text, encoding="utf-8")
        argv = ["plan", str(SPEC), "--no-layout", "--json", "--catalog", str(folder)]
        camp.case("catalog", argv, {source.name: text}, source.name)


def tamper_matrix(camp: Campaign, tmp: Path) -> None:
    """Every tamper of tests/test_hostile_files.py through every command: must all refuse."""
    from tests.test_hostile_files import TAMPERS

    base = json.loads(DESIGN.read_text(encoding="utf-8"))
    (tmp / "results").mkdir(exist_ok=True)
    for name, edit, _needle in TAMPERS:
        data = copy.deepcopy(base)
        edit(data)
        path = tmp / "tampered.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        for command in COMMANDS:
            argv = [a.replace("{tmp}", str(tmp)) for a in command]
            if not camp.mine("tamper"):
                continue
            outcome = camp.case(
                "tamper",
                [argv[0], str(path), *argv[1:]],
                {"design.json": json.dumps(data)},
                str(path),
            )
            if outcome != "refused":
                camp.tamper_failures.append(f"tamper {name!r} through {argv[0]}: {outcome}")
                print(camp.tamper_failures[-1], file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--designs", type=int, default=300)
    parser.add_argument("--captures", type=int, default=300)
    parser.add_argument("--specs", type=int, default=100)
    parser.add_argument("--sets", type=int, default=100)
    parser.add_argument("--catalogs", type=int, default=50)
    parser.add_argument("--no-tamper", action="store_true")
    parser.add_argument("--seed", type=int, default=35)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--keep", type=Path, default=ROOT / "tests" / "fixtures" / "fuzz")
    parser.add_argument("--jobs", type=int, default=1, help="shards run side by side")
    parser.add_argument(
        "--only", action="append", help="run only these kinds (the others are generated, not run)"
    )
    parser.add_argument("--log", type=Path, help="write every refusal's first line here (JSONL)")
    args = parser.parse_args()
    from railplan.cli.app import _load_commands

    _load_commands()
    warm()
    started = time.monotonic()
    camp = run_shard(args, 0, 1) if args.jobs <= 1 else run_shards(args)
    print(camp.table())
    if args.log is not None:
        with args.log.open("w", encoding="utf-8") as log:
            for kind, outcome, first in camp.refusals:
                log.write(json.dumps({"kind": kind, "outcome": outcome, "line": first}) + "\n")
    print(f"\n{time.monotonic() - started:.0f} s, seed {args.seed}, {args.jobs} job(s)")
    bad = sum(c.get(o, 0) for c in camp.counts.values() for o in BAD)
    tamper = camp.counts.get("tamper", Counter())
    if not args.no_tamper and tamper.get("refused", 0) != sum(tamper.values()):
        bad += 1
    sys.exit(1 if bad else 0)


def warm() -> None:
    """Every module a command imports, imported here once and the catalog loaded: each forked
    case then costs its own work, not the imports its command makes on first use (about 1 s
    on the shared machine, which was most of a case)."""
    import importlib
    import pkgutil

    import railplan

    for module in pkgutil.walk_packages(railplan.__path__, "railplan."):
        if not module.name.startswith(("railplan.tui", "railplan.__main__", "railplan.examples")):
            importlib.import_module(module.name)
    with contextlib.redirect_stdout(io.StringIO()):
        railplan.load_catalog()


def run_shard(args: argparse.Namespace, shard: int, shards: int) -> Campaign:
    """Every ``shards``-th case of the campaign (all of it for one shard)."""
    rng = random.Random(args.seed)
    camp = Campaign(args.keep, args.timeout, shard, shards)
    camp.only = tuple(args.only or ())
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        if not args.no_tamper:
            tamper_matrix(camp, tmp)
        designs(camp, rng, args.designs, tmp)
        captures(camp, rng, args.captures, tmp)
        specs(camp, rng, args.specs, tmp)
        sets(camp, rng, args.sets)
        catalogs(camp, rng, args.catalogs, tmp)
    return camp


def run_shards(args: argparse.Namespace) -> Campaign:
    """``--jobs`` forked shards side by side, their counts merged (each child writes its own
    as JSON; the campaign is the same as with one job, only faster on several cores)."""
    total = Campaign(args.keep, args.timeout)
    with tempfile.TemporaryDirectory() as folder:
        pids = []
        for shard in range(args.jobs):
            pid = os.fork()
            if pid == 0:
                code = 0
                try:
                    camp = run_shard(args, shard, args.jobs)
                    state = {
                        "counts": camp.counts, "peak": camp.peak, "slowest": camp.slowest,
                        "refusals": camp.refusals, "tamper": camp.tamper_failures,
                    }  # fmt: skip
                    Path(folder, f"{shard}.json").write_text(json.dumps(state))
                except BaseException:
                    import traceback

                    traceback.print_exc()
                    code = 1
                os._exit(code)
            pids.append(pid)
        for pid in pids:
            _, status = os.waitpid(pid, 0)
            if status != 0:
                raise SystemExit(f"a shard of the campaign failed (status {status})")
        for shard in range(args.jobs):
            state = json.loads(Path(folder, f"{shard}.json").read_text())
            for kind, counts in state["counts"].items():
                total.counts.setdefault(kind, Counter()).update(counts)
            for kind, peak in state["peak"].items():
                total.peak[kind] = max(total.peak.get(kind, 0), peak)
            for kind, slow in state["slowest"].items():
                total.slowest[kind] = max(total.slowest.get(kind, 0.0), slow)
            total.refusals += [tuple(r) for r in state["refusals"]]
            total.tamper_failures += state["tamper"]
    return total


if __name__ == "__main__":
    main()
