"""Runnable bash (ssh + mpirun) and Slurm scripts for a test plan, with hostfiles and data tables.

The scripts are short and data-driven: every test lives in a TSV table under ``data/`` and a
loop runs the table, so a 16k-GPU plan gives the same scripts as a 2-node one. Outputs land
in ``results/`` in the layout ``railplan.field.grade`` reads (``results/<test id>/...``).

The scripts run as root on every node, so nothing from the design or the options reaches them
unchecked: every name (design, nodes, switches, tests, RDMA devices, NCCL settings) must match
a strict pattern (``render.shell.unsafe_names``) or the whole render is refused; every value
written into a script goes through ``render.shell.shell_word``; commands sent over ssh are
quoted word by word for the remote shell and ``--`` ends ssh's options, so no host name is
read as an option.
"""

from __future__ import annotations

from collections.abc import Iterable

from railplan.design import Design
from railplan.errors import DesignFileError
from railplan.render.script_lib import LIB
from railplan.render.scripts_firmware import firmware_script, ibdiagnet_first_host
from railplan.render.scripts_linkq import LINKQ_PROBE, linkq_script
from railplan.render.scripts_slurm import (
    ON_SRUN,
    SBATCH_HEAD,
    SLURM_NCCL_RUN,
    SLURM_NODES,
    SLURM_SUBMIT,
)
from railplan.render.scripts_vendor import node_probe
from railplan.render.shell import shell_word, unsafe_names
from railplan.testplan import PlanTest, TestPlan
from railplan.testplan.nccl import binary_of

Files = dict[str, str]

HEADER = """#!/usr/bin/env bash
# @TITLE@
# railplan test plan for @DESIGN@ (design @HASH@, revision @REV@). Generated: do not edit;
# re-run `railplan testplan` instead. Results go to $RESULTS (default ./results).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
. "$HERE/lib.sh"
"""

NODE_CHECKS = """
log "node checks: $(rows nodes.tsv | wc -l) node(s)"
gid=-1
[ "$PROTOCOL" = ethernet ] && gid=$GID_INDEX
while IFS=$'\\t' read -r test node; do
  out="$RESULTS/$test"
  mkdir -p "$out"
  summary="$(remote "$node" bash -s -- /tmp/railplan-probe "$gid" @PRIO@ "$RATE_GBPS" "$MTU" \\
    "${DEVICES[@]}" < "$HERE/node_probe.sh" 2> "$out/ssh.err" | tail -n 1)" || true
  remote "$node" tar -C /tmp/railplan-probe -cf - . < /dev/null 2>> "$out/ssh.err" \\
    | tar -C "$out" -xf - 2>> "$out/ssh.err" || true
  probe_verdict "$test" "$summary"
done < <(rows nodes.tsv)
"""

CABLING_ROCE = """
mkdir -p "$RESULTS/asbuilt/hosts" "$RESULTS/asbuilt/switches"
log "LLDP from every node (lldpd) and every switch (SONiC)"
while read -r host _; do
  [ -n "$host" ] || continue
  remote "$host" lldpcli -f json0 show neighbors details \\
    > "$RESULTS/asbuilt/hosts/$host.json" 2> /dev/null < /dev/null \\
    || log "no LLDP from node $host"
done < "$HOSTFILE"
while read -r sw; do
  [ -n "$sw" ] || continue
  remote "$sw" show lldp table > "$RESULTS/asbuilt/switches/$sw.txt" 2> /dev/null < /dev/null \\
    || log "no LLDP from switch $sw (collect 'show lldp table' by hand into asbuilt/switches/$sw.txt)"
done < "$HERE/switches"
"""

CABLING_IB = """
mkdir -p "$RESULTS/asbuilt"
first="$(awk 'NF { print $1; exit }' "$HOSTFILE")"
log "InfiniBand discovery from $first"
remote "$first" ibnetdiscover > "$RESULTS/asbuilt/ibnetdiscover.txt" < /dev/null
remote "$first" iblinkinfo --switches-only > "$RESULTS/asbuilt/iblinkinfo.txt" < /dev/null || true
"""

CABLING_TAIL = """
# manifest: which collected files each cabling test reads (railplan grade uses it)
{
  printf '{"files": {'
  sep=""
  last=""
  while IFS=$'\\t' read -r test file; do
    [ -f "$RESULTS/$file" ] || continue
    if [ "$test" != "$last" ]; then
      [ -z "$last" ] || printf ']'
      printf '%s\\n  "%s": [' "$sep" "$test"
      sep=","
      last="$test"
      comma=""
    fi
    printf '%s"%s"' "$comma" "$file"
    comma=", "
  done < <(rows cabling.tsv)
  [ -z "$last" ] || printf ']'
  printf '\\n}}\\n'
} > "$RESULTS/manifest.json"
log "wrote $RESULTS/manifest.json; grade with: railplan grade <design.json> $RESULTS"
"""

RDMA = """
mkdir -p "$RESULTS/servers"
rdma_run() {  # rdma_run TEST TOOL SERVER SDEV CLIENT CDEV THRESHOLD BETTER PORT QPS
  local test="$1" tool="$2" server="$3" sdev="$4" client="$5" cdev="$6" threshold="$7"
  local better="$8" port="$9" qps="${10}"
  local -a flags=(-F -p "$port")
  if [ "$tool" = ib_write_bw ]; then
    flags+=(--report_gbits -D 10)
    [ "$qps" -gt 1 ] && flags+=(-q "$qps")  # a bonded NIC: one QP per member port
  else
    flags+=(-n 10000)
  fi
  [ "$PROTOCOL" = ethernet ] && flags+=(-x "$GID_INDEX")
  local spid scode=0
  on_node "$server" timeout 120 "$tool" -d "$sdev" "${flags[@]}" \\
    > "$RESULTS/servers/$test.log" 2>&1 < /dev/null &
  spid=$!
  sleep "${SERVER_WAIT:-2}"
  on_node "$client" timeout 120 "$tool" -d "$cdev" "${flags[@]}" "$server" \\
    > "$RESULTS/$test.txt" 2>&1 < /dev/null || true
  wait "$spid" || scode=$?
  if [ "$scode" != 0 ]; then  # e.g. its port was taken: the client may have met another server
    verdict "$test" FAIL "server $server:$sdev port $port exited $scode (see servers/$test.log)"
  else
    judge_perftest "$test" "$tool" "$threshold" "$better" "$RESULTS/$test.txt"
  fi
}

log "per-link RDMA: $(rows rdma.tsv | wc -l) test(s); round 0 one at a time, later rounds together"
for round in $(rows rdma.tsv | cut -f 9 | sort -n -u); do
  while IFS=$'\\t' read -r test tool server sdev client cdev threshold better r port qps; do
    [ "$r" = "$round" ] || continue
    if [ "$round" = 0 ]; then
      rdma_run "$test" "$tool" "$server" "$sdev" "$client" "$cdev" "$threshold" "$better" \\
        "$port" "$qps"
    else
      rdma_run "$test" "$tool" "$server" "$sdev" "$client" "$cdev" "$threshold" "$better" \\
        "$port" "$qps" &
    fi
  done < <(rows rdma.tsv)
  wait
done
"""

ON_SSH = """
on_node() { remote "$@"; }  # on_node HOST COMMAND...
"""

NCCL_RUN = """
nccl_run() {  # nccl_run TEST_ID BINARY HOSTS ENV THRESHOLD: one nccl-tests job and its verdict
  local test="$1" binary="$2" hosts="$3" env="$4" threshold="$5" n code=0 args=()
  local -a kv where
  mkdir -p "$RESULTS/$test"
  IFS='|' read -r -a kv <<< "$env"
  for pair in "${kv[@]}"; do
    args+=(-x "$pair")
  done
  if [ "$hosts" = ALL ]; then
    n=$(awk 'NF' "$HOSTFILE" | wc -l)
    where=(--hostfile "$HOSTFILE")
  else
    n=$(tr ',' '\\n' <<< "$hosts" | wc -l)
    where=(-H "${hosts//,/:$GPUS_PER_NODE,}:$GPUS_PER_NODE")
  fi
  "$MPIRUN" -np $((n * GPUS_PER_NODE)) "${where[@]}" --bind-to numa "${MPI_EXTRA[@]}" \\
    "${args[@]}" "$NCCL_TESTS/$binary" -b @MINB@ -e @MAXB@ -f 2 -g 1 \\
    > "$RESULTS/$test/nccl.log" 2>&1 < /dev/null || code=$?
  judge_nccl "$test" "$threshold" "$RESULTS/$test/nccl.log" "$code" "$n"
}
"""

PAIRS = """
log "pair tests: $(rows pairs.tsv | wc -l) pair(s); the pairs of a round run together"
for round in $(rows pairs.tsv | cut -f 2 | sort -n -u); do
  log "round $round"
  while IFS=$'\\t' read -r test r hosts env threshold; do
    [ "$r" = "$round" ] || continue
    nccl_run "$test" all_reduce_perf "$hosts" "$env" "$threshold" &
  done < <(rows pairs.tsv)
  wait
done
"""


def _nccl_runs(table: str, what: str, order: str = "one at a time") -> str:
    """A script body running every row of ``data/<table>`` with ``nccl_run``, one at a time."""
    return f"""
log "{what}: $(rows {table} | wc -l) run(s), {order}"
while IFS=$'\\t' read -r test binary hosts env threshold; do
  nccl_run "$test" "$binary" "$hosts" "$env" "$threshold"
done < <(rows {table})
"""


NCCL = _nccl_runs("nccl.tsv", "NCCL collectives")

FABRIC_IB = (
    "\n# ibdiagnet from the first host: routing validation (credit loops) and, on a fat-tree, --ft\n"
    + ibdiagnet_first_host("FABRIC-IB", "ibdiagnet2.log")
    + """on_node "$first" ibdiagnet @IBDIAG@ -o /tmp/railplan-fabric > "$out/ibdiagnet.out" 2>&1 < /dev/null || true
on_node "$first" cat /tmp/railplan-fabric/ibdiagnet2.log > "$out/ibdiagnet2.log" 2> /dev/null < /dev/null || true
errors="$(grep -c '^[[:space:]]*-E-' "$out/ibdiagnet2.log" || true)"
if [ ! -s "$out/ibdiagnet2.log" ]; then
  verdict "$test" FAIL "no ibdiagnet2.log from $first (see $out/ibdiagnet.out)"
elif [ "$errors" = 0 ]; then
  verdict "$test" OK "ibdiagnet @IBDIAG@: no errors"
else
  verdict "$test" FAIL "ibdiagnet @IBDIAG@: $errors error(s): $(grep -m 1 '^[[:space:]]*-E-' "$out/ibdiagnet2.log")"
fi
"""
)

DCGM = """
# dcgmi diag at this phase's run level on every node at once (data/dcgm.tsv)
level="${1:-1}"
log "dcgmi diag -r $level: $(rows dcgm.tsv | awk -v l="$level" '$3 == l' | wc -l) node(s)"
while IFS=$'\\t' read -r test node lvl; do
  [ "$lvl" = "$level" ] || continue
  (
    out="$RESULTS/$test"
    mkdir -p "$out"
    if ! remote "$node" bash -c 'command -v dcgmi' > /dev/null 2>&1 < /dev/null; then
      echo "railplan: not measured: dcgmi not installed on $node" > "$out/dcgm.txt"
      verdict "$test" OK "not measured: dcgmi not installed on $node (NVIDIA GPUs only)"
      exit 0
    fi
    remote "$node" dcgmi diag -r "$level" > "$out/dcgm.txt" 2>&1 < /dev/null || true
    fails="$(grep -c -E '^\\|[^|]*\\|[[:space:]]*Fail' "$out/dcgm.txt" || true)"
    known="$(grep -c -E '^\\|[^|]*\\|[[:space:]]*(Pass|Fail|Warn|Skip)' "$out/dcgm.txt" || true)"
    if [ "$known" = 0 ]; then
      verdict "$test" FAIL "no dcgmi diag -r $level results from $node (see $out/dcgm.txt)"
    elif [ "$fails" = 0 ]; then
      verdict "$test" OK "dcgmi diag -r $level: $known test(s), none Fail"
    else
      verdict "$test" FAIL "dcgmi diag -r $level: $fails of $known test(s) Fail"
    fi
  ) &
done < <(rows dcgm.tsv)
wait
"""

RUN_ALL = """
# the link-quality snapshots bracket the RDMA, pair, NCCL, ladder and burn-in steps: the soak
for step in 00_node_checks "05_dcgm 1" 10_cabling 15_fabric 16_firmware "50_link_quality start" 20_rdma \\
    30_pairs 40_nccl 60_ladder 70_burnin "50_link_quality finish" "05_dcgm 3"; do
  read -r -a cmd <<< "$step"
  [ -f "$HERE/${cmd[0]}.sh" ] || continue  # the ladder and burn-in are written when planned
  log "== $step"
  "$HERE/${cmd[0]}.sh" "${cmd[@]:1}"
done
log "verdicts in $RESULTS/summary/verdicts.txt; grade with: railplan grade <design.json> $RESULTS"
"""


LADDER = _nccl_runs("ladder.tsv", "scale ladder", "one at a time, smallest rung first")

BURNIN = """
# burn-in: every node sends to its permutation partner on every device at once (data/burnin.tsv)
BURNIN_S=@BURNS@
read -r -a BURN_FLAGS <<< "-F --report_gbits -D $BURNIN_S @BURNRATE@"
[ "$PROTOCOL" = ethernet ] && BURN_FLAGS+=(-x "$GID_INDEX")
mkdir -p "$RESULTS/servers"
log "burn-in: $(rows burnin.tsv | wc -l) node(s), ${#DEVICES[@]} device(s) each, $BURNIN_S s"
while IFS=$'\\t' read -r test client server threshold qps; do
  mkdir -p "$RESULTS/$test"
  k=0
  for dev in "${DEVICES[@]}"; do
    on_node "$server" timeout $((BURNIN_S + 120)) ib_write_bw -d "$dev" "${BURN_FLAGS[@]}" \\
      -q "$qps" -p $((@BURNTCP@ + k)) > "$RESULTS/servers/$test.$dev.log" 2>&1 < /dev/null &
    k=$((k + 1))
  done
done < <(rows burnin.tsv)
sleep "${SERVER_WAIT:-2}"
while IFS=$'\\t' read -r test client server threshold qps; do
  k=0
  for dev in "${DEVICES[@]}"; do
    on_node "$client" timeout $((BURNIN_S + 120)) ib_write_bw -d "$dev" "${BURN_FLAGS[@]}" \\
      -q "$qps" -p $((@BURNTCP@ + k)) "$server" > "$RESULTS/$test/$dev.txt" 2>&1 < /dev/null &
    k=$((k + 1))
  done
done < <(rows burnin.tsv)
wait
while IFS=$'\\t' read -r test client server threshold qps; do
  slow="" low="" missing=""
  for dev in "${DEVICES[@]}"; do
    value="$(awk '/^ *[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+/ { v = $4 } END { print v }' \\
      "$RESULTS/$test/$dev.txt" 2> /dev/null)"
    if [ -z "$value" ]; then
      missing+=" $dev"
    elif [ -z "$low" ] || ! ge "$value" "$low"; then
      low="$value"
      slow="$dev"
    fi
  done
  if [ -n "$missing" ]; then
    verdict "$test" FAIL "not measured: no ib_write_bw result on$missing (see $RESULTS/$test)"
  elif ge "$low" "$threshold"; then
    verdict "$test" OK "slowest $slow $low Gb/s (pass >= $threshold Gb/s)"
  else
    verdict "$test" FAIL "slowest $slow $low Gb/s (pass >= $threshold Gb/s): its rail and cable"
  fi
done < <(rows burnin.tsv)
"""


def _tsv(header: Iterable[str], rows: Iterable[Iterable[object]]) -> str:
    lines = ["\t".join(header)]
    lines += ["\t".join(str(x) for x in row) for row in rows]
    return "\n".join(lines) + "\n"


def _env(test: PlanTest) -> str:
    return "|".join(f"{k}={v}" for k, v in test.env)


def _hosts(test: PlanTest, all_nodes: int) -> str:
    return "ALL" if len(test.nodes) == all_nodes else ",".join(test.nodes)


def _fill(text: str, values: dict[str, str]) -> str:
    """Put shell-ready values (``shell_word`` output, or railplan's own titles) into a template."""
    for key, value in values.items():
        if "\n" in value or "\r" in value:
            raise ValueError(f"@{key}@ would break a script line")
        text = text.replace(f"@{key}@", value)
    return text


def render_scripts(plan: TestPlan, design: Design) -> Files:
    """Every script and data file of the plan, as {relative path: text}."""
    problems = unsafe_names(plan, design)
    if problems:
        raise DesignFileError("\n".join(f"scripts: {p}" for p in problems))
    o = plan.options
    bonded = len(set(plan.devices)) < len(plan.devices)
    values = {
        "DESIGN": shell_word(plan.design),
        "HASH": shell_word(plan.design_hash),
        "REV": shell_word(plan.revision),
        "GPUS": shell_word(int(design.shape.gpus)),
        "DEVICES": " ".join(shell_word(d) for d in dict.fromkeys(plan.devices)),
        "GID": shell_word(int(o.gid_index)),
        "PROTOCOL": shell_word(plan.protocol),
        "PRIO": shell_word(int(o.lossless_priority)),
        "MINB": shell_word(o.nccl_min_bytes),
        "MAXB": shell_word(o.nccl_max_bytes),
        # bonded NICs (one device over several ports): their ibstat rate is not checked
        "RATE": shell_word(0 if bonded else int(design.shape.port_speed_gbps)),
        "MTU": shell_word(int(o.mtu)),
        # AMD GPUs run rccl-tests (ROCm/rccl-tests), NVIDIA GPUs nccl-tests
        "TESTS_DIR": "/opt/rccl-tests/build"
        if plan.gpu_vendor == "amd"
        else "/opt/nccl-tests/build",
        **_linkq_values(plan),
        **_burnin_values(plan),
    }
    n_nodes = len(design.nodes)
    files: Files = {
        "hosts": "".join(f"{n.id} slots={design.shape.gpus}\n" for n in design.nodes),
        "switches": "".join(f"{s.id}\n" for s in design.switches),
        "lib.sh": _fill(LIB, values),
        "node_probe.sh": node_probe(plan.nic_vendor, plan.gpu_vendor),
    }
    tests = {s.key: s.tests for s in plan.sections}
    files["data/nodes.tsv"] = _tsv(("test", "node"), ((t.id, t.nodes[0]) for t in tests["node"]))
    nodes_on: dict[str, set[str]] = {}
    for lk in design.links:
        if lk.kind == "node-leaf":
            nodes_on.setdefault(lk.b_device, set()).add(lk.a_device)
    cab_rows = []
    for t in tests["cabling"]:
        sw = t.id[4:]
        if plan.protocol == "ethernet":
            cab_rows.append((t.id, f"asbuilt/switches/{sw}.txt"))
            cab_rows += [(t.id, f"asbuilt/hosts/{h}.json") for h in sorted(nodes_on.get(sw, ()))]
        else:
            cab_rows += [(t.id, "asbuilt/ibnetdiscover.txt"), (t.id, "asbuilt/iblinkinfo.txt")]
    files["data/cabling.tsv"] = _tsv(("test", "file"), cab_rows)
    rdma = []
    for t in tests["rdma"]:
        tool = "ib_write_bw" if t.kind == "rdma_bw" else "ib_write_lat"
        check = t.checks[0]
        server, client = t.nodes
        sdev, cdev = t.devices
        rdma.append(
            (t.id, tool, server, sdev, client, cdev, check.threshold, check.better, t.round,
             int(t.tcp_port), int(t.qps))
        )  # fmt: skip
    files["data/rdma.tsv"] = _tsv(
        ("test", "tool", "server", "server_dev", "client", "client_dev", "threshold", "better",
         "round", "port", "qps"),
        rdma,
    )  # fmt: skip
    files["data/pairs.tsv"] = _tsv(
        ("test", "round", "hosts", "env", "threshold"),
        ((t.id, t.round, ",".join(t.nodes), _env(t), t.checks[0].threshold)
         for t in tests["pairs"]),
    )  # fmt: skip
    files["data/linkq.tsv"] = _tsv(
        ("test", "where", "name"),
        (
            (t.id, "fabric" if t.id == "LQ-FABRIC" else "node" if t.nodes else "switch",
             t.nodes[0] if t.nodes else t.id[3:])
            for t in tests["linkq"]
        ),
    )  # fmt: skip
    if any(t.nodes for t in tests["linkq"]):  # the probe reads mlx5 counters: mlx5 NICs only
        files["linkq_probe.sh"] = LINKQ_PROBE
    files["data/nccl.tsv"] = _tsv(
        ("test", "binary", "hosts", "env", "threshold"),
        (
            (t.id, binary_of(t.kind), _hosts(t, n_nodes), _env(t), t.checks[0].threshold)
            for t in tests["nccl"]
        ),
    )  # fmt: skip
    if "ladder" in tests:
        files["data/ladder.tsv"] = _tsv(
            ("test", "binary", "hosts", "env", "threshold"),
            ((t.id, binary_of(t.kind), _hosts(t, n_nodes), _env(t), t.checks[0].threshold)
             for t in tests["ladder"]),
        )  # fmt: skip
    if "dcgm" in tests:
        files["data/dcgm.tsv"] = _tsv(
            ("test", "node", "level"),
            ((t.id, t.nodes[0], t.id.split("-")[1][1:]) for t in tests["dcgm"]),
        )
    if "burnin" in tests:
        files["data/burnin.tsv"] = _tsv(
            ("test", "client", "server", "threshold", "qps"),
            ((t.id, t.nodes[0], t.nodes[1], t.checks[0].threshold, t.qps)
             for t in tests["burnin"]),
        )  # fmt: skip
    steps = {
        "00_node_checks.sh": ("Node checks: ACS, GPUDirect RDMA, port state/rate/MTU, RoCE GID/PFC/ECN", NODE_CHECKS),
        "10_cabling.sh": ("As-built cabling: collect LLDP or IB discovery for railplan grade",
                          (CABLING_ROCE if plan.protocol == "ethernet" else CABLING_IB) + CABLING_TAIL),
        "20_rdma.sh": ("Per-link RDMA: ib_write_bw / ib_write_lat per path class", ON_SSH + RDMA),
        "30_pairs.sh": ("Pair tests: two-node ring all-reduce, round by round", NCCL_RUN + PAIRS),
        "40_nccl.sh": ("NCCL collectives: all_reduce_perf and alltoall_perf", NCCL_RUN + NCCL),
        "50_link_quality.sh": ("Link quality: counters before (start) and after (finish) the soak",
                               ON_SSH + linkq_script(plan.protocol)),
        "run_all.sh": ("Every step in order", RUN_ALL),
    }  # fmt: skip
    fabric_ids = {t.id for t in tests.get("fabric", ())}
    if "FABRIC-IB" in fabric_ids:
        steps["15_fabric.sh"] = ("Fabric checks: ibdiagnet routing (credit loops) and fat-tree "
                                 "validation", ON_SSH + _fill(FABRIC_IB, {"IBDIAG": _ibdiag_flags(tests)}))  # fmt: skip
    if "FW-FABRIC" in fabric_ids:
        steps["16_firmware.sh"] = ("Firmware: every switch, NIC and module model on one version",
                                   ON_SSH + firmware_script(plan.protocol))  # fmt: skip
    if "dcgm" in tests:
        steps["05_dcgm.sh"] = ("DCGM diagnostics: 05_dcgm.sh 1 (node phase) | 3 (burn-in phase)",
                               DCGM)  # fmt: skip
    if "ladder" in tests:
        steps["60_ladder.sh"] = ("Scale ladder: node, pair, rail, SU, pod, fabric x 4 collectives",
                                 NCCL_RUN + LADDER)  # fmt: skip
    if "burnin" in tests:
        steps["70_burnin.sh"] = ("Burn-in: ib_write_bw on every device of every node at once",
                                 ON_SSH + BURNIN)  # fmt: skip
    for name, (title, body) in steps.items():
        files[name] = _fill(HEADER, {**values, "TITLE": title}) + _fill(body, values)
    slurm = {
        "00_node_checks": ("Node checks on every node, one task per node", SLURM_NODES),
        "20_rdma": ("Per-link RDMA with srun, round by round", ON_SRUN + RDMA),
        "30_pairs": ("Pair tests with srun, round by round", SLURM_NCCL_RUN + PAIRS),
        "40_nccl": ("NCCL collectives with srun", SLURM_NCCL_RUN + NCCL),
        "50_link_quality": (
            "Link quality with srun: sbatch ... start | finish",
            ON_SRUN + linkq_script(plan.protocol),
        ),
    }
    if "ladder" in tests:
        slurm["60_ladder"] = ("Scale ladder with srun", SLURM_NCCL_RUN + LADDER)
    if "burnin" in tests:
        slurm["70_burnin"] = ("Burn-in with srun", ON_SRUN + BURNIN)
    for name, (title, body) in slurm.items():
        head = _fill(SBATCH_HEAD, {**values, "TITLE": title, "NAME": name})
        files[f"slurm/{name}.sbatch"] = head + _fill(body, values)
    files["slurm/submit.sh"] = SLURM_SUBMIT
    files["README.txt"] = _readme(plan)
    return files


def _linkq_values(plan: TestPlan) -> dict[str, str]:
    """The soak and BER limit the link-quality step judges by, from the plan's own checks."""
    from railplan.testplan.link_quality import IB_BER_LIMIT, soak_seconds

    checks = {c.metric: c for t in plan.tests() if t.kind == "linkq" for c in t.checks}
    soak = checks["lq_soak_s"].expected if "lq_soak_s" in checks else None
    over = checks.get("lq_ports_over_ber")
    limit = over.target if over is not None and over.target else IB_BER_LIMIT
    if soak is None:
        soak = soak_seconds(IB_BER_LIMIT, plan.line_rate_gbps)
    eff = checks.get("lq_ports_over_effective_ber")
    eff_limit = eff.target if eff is not None and eff.target else limit
    return {
        "SOAK": shell_word(int(soak)),
        "BERLIMIT": shell_word(f"{limit:g}"),
        "EFFLIMIT": shell_word(f"{eff_limit:g}"),
    }


def _ibdiag_flags(tests: dict[str, tuple[PlanTest, ...]]) -> str:
    """``-r`` or ``-r --ft``: the flags the fabric test's command names."""
    command = next(t for t in tests["fabric"] if t.id == "FABRIC-IB").command[0]
    return "-r --ft" if " --ft " in command else "-r"


def _burnin_values(plan: TestPlan) -> dict[str, str]:
    """The burn-in's duration, rate cap (perftest's software rate limiter) and first TCP port."""
    from railplan.testplan.burnin import BURNIN_TCP

    o = plan.options
    rate = ""
    if o.burnin_load < 1:
        lanes = max(1, len(plan.devices) // max(1, len(set(plan.devices))))
        cap = plan.line_rate_gbps * lanes * o.burnin_load
        rate = f"--rate_limit={cap:g} --rate_units=g --rate_limit_type=SW"
    return {
        "BURNS": shell_word(int(o.burnin_s)),
        "BURNRATE": rate,
        "BURNTCP": shell_word(BURNIN_TCP),
    }


def _readme(plan: TestPlan) -> str:
    c = plan.coverage
    peer = "amdgpu peer memory" if plan.gpu_vendor == "amd" else "nvidia_peermem"
    return (
        f"railplan test scripts for {plan.design} (design {plan.design_hash}, revision "
        f"{plan.revision})\n\n"
        "Run from a host that reaches every node by ssh (keys, no password) and has mpirun:\n"
        "  ./run_all.sh                 every step in order, or the steps one by one:\n"
        f"  ./00_node_checks.sh          ACS, {peer}, ports Active at rate and MTU, RoCE\n"
        "  ./10_cabling.sh              LLDP / IB discovery into results/asbuilt + manifest\n"
        "  ./16_firmware.sh             firmware of every switch, NIC (and IB module) per model\n"
        "  ./20_rdma.sh                 ib_write_bw / ib_write_lat per path class\n"
        "  ./30_pairs.sh                two-node ring all-reduce pairs, round by round\n"
        "  ./40_nccl.sh                 all_reduce_perf / alltoall_perf\n"
        "  ./50_link_quality.sh start   BER/FEC/symbol counters before the soak (before 20_rdma)\n"
        "  ./50_link_quality.sh finish  the same after it (after 40_nccl): growth judged per port\n"
        "Slurm: slurm/submit.sh submits the node, RDMA, pair and NCCL steps as dependent jobs.\n\n"
        "Settings (environment): RESULTS, NCCL_TESTS (nccl-tests build dir), MPIRUN,\n"
        "MPIRUN_ARGS, SSH. Devices and GID index are in lib.sh; change them with\n"
        "`railplan testplan --devices ... --gid-index N` rather than by hand.\n\n"
        f"Coverage: {c.covered_links}/{c.inter_switch_links} switch-to-switch links, "
        f"{c.nodes_paired}/{c.nodes} nodes in {c.pairs} pairs ({c.rounds} rounds).\n"
        "Each step prints OK/FAIL per test into results/summary/verdicts.txt (the Slurm jobs too):\n"
        f"every threshold of the plan is checked (port state, rate and MTU, ACS, {peer},\n"
        "RoCE GID/PFC/ECN, ib_write_bw/lat, nccl-tests' Avg bus bandwidth, GDRDMA on every NET\n"
        "channel, BER and uncorrectable-error growth over the soak), and what cannot be measured\n"
        "(no root for lspci, no output, a perftest server that could not start, a switch that\n"
        "does not answer) is a FAIL that says so; a node-check tool that is not installed leaves\n"
        "its check 'not measured' (the node is not failed for it, the grader reports it missing).\n"
        "Concurrent ib_write_bw\n"
        "servers on one node use distinct -p ports (data/rdma.tsv, column port).\n"
        "The full grade (with the diagnosis of slow pairs) is `railplan grade <design.json> results`.\n"
    )


def executable(path: str) -> bool:
    """Whether a rendered file should be written with the executable bit."""
    return path.endswith((".sh", ".sbatch"))
