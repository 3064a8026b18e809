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
from railplan.render.shell import shell_word, unsafe_names
from railplan.testplan import PlanTest, TestPlan

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

LIB = """#!/usr/bin/env bash
# Shared settings and helpers of the railplan test scripts (sourced, not run).
# Override any setting from the environment, e.g. SSH="ssh -l admin" ./00_node_checks.sh
# shellcheck disable=SC2034  # settings are used by the scripts that source this file

RESULTS="${RESULTS:-$PWD/results}"
DATA="${DATA:-$HERE/data}"
HOSTFILE="${HOSTFILE:-$HERE/hosts}"
NCCL_TESTS="${NCCL_TESTS:-/opt/nccl-tests/build}"
MPIRUN="${MPIRUN:-mpirun}"
read -r -a SSH_CMD <<< "${SSH:-ssh -o BatchMode=yes -o ConnectTimeout=10}"
read -r -a MPI_EXTRA <<< "${MPIRUN_ARGS:-}"
GPUS_PER_NODE=@GPUS@
DEVICES=(@DEVICES@)
GID_INDEX=@GID@
PROTOCOL=@PROTOCOL@
mkdir -p "$RESULTS/summary"

log() { printf '%s %s\\n' "$(date +%H:%M:%S)" "$*"; }
verdict() {  # verdict TEST_ID OK|FAIL DETAIL
  printf '%-28s %-4s %s\\n' "$1" "$2" "$3" | tee -a "$RESULTS/summary/verdicts.txt"
}
remote() {  # remote HOST COMMAND...: run on HOST over ssh, each word quoted for its shell
  local host="$1"
  shift
  "${SSH_CMD[@]}" -- "$host" "$(printf '%q ' "$@")"
}
rows() {  # rows TABLE: the data rows of a TSV table (skips the header and blank lines)
  tail -n +2 "$DATA/$1" | grep -v '^[[:space:]]*$' || true
}
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0) }'; }
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 <= b + 0) }'; }
"""

NODE_PROBE = """#!/usr/bin/env bash
# Collect one node's checks into DIR (run on the node: directly, over ssh or under srun).
# usage: node_probe.sh DIR GID_INDEX PRIORITY DEVICE...   (SYSFS: another /sys, for tests)
set -uo pipefail
sys="${SYSFS:-/sys}"
dir="$1"
gid="$2"
prio="$3"
shift 3
mkdir -p "$dir"
{ sudo -n lspci -vvv 2>/dev/null || lspci -vvv; } > "$dir/lspci.txt" 2>&1
lsmod > "$dir/lsmod.txt" 2>&1
: > "$dir/ibstat.txt"
: > "$dir/ibv_devinfo.txt"
: > "$dir/roce.txt"
for dev in "$@"; do
  ibstat "$dev" >> "$dir/ibstat.txt" 2>&1
  ibv_devinfo -d "$dev" >> "$dir/ibv_devinfo.txt" 2>&1
  if [ "$gid" -ge 0 ]; then
    type_file="$sys/class/infiniband/$dev/ports/1/gid_attrs/types/$gid"
    gid_type="$(cat "$type_file" 2>/dev/null || echo missing)"
    netdev=""
    for path in "$sys/class/infiniband/$dev/device/net/"*; do
      [ -e "$path" ] && netdev="${path##*/}" && break
    done
    pfc="$(mlnx_qos -i "$netdev" 2>/dev/null | awk -v p="$prio" '$1 == "enabled" { print $(p + 2) }')"
    ecn="$(cat "$sys/class/net/$netdev/ecn/roce_np/enable/$prio" 2>/dev/null || echo 0)"
    printf '%s netdev=%s gid%s=%s pfc=%s ecn=%s\\n' "$dev" "$netdev" "$gid" "$gid_type" \\
      "${pfc:-0}" "$ecn" >> "$dir/roce.txt"
  fi
done
acs="$(grep -c 'ACSCtl:.*SrcValid+' "$dir/lspci.txt" || true)"
peermem="$(grep -c '^nvidia_peermem' "$dir/lsmod.txt" || true)"
active="$(grep -c 'State: Active' "$dir/ibstat.txt" || true)"
roce_ok="$(grep -c 'RoCE v2 pfc=1 ecn=1' "$dir/roce.txt" || true)"
printf 'acs_srcvalid_on=%s nvidia_peermem=%s ports_active=%s roce_ok=%s\\n' \\
  "$acs" "$peermem" "$active" "$roce_ok"
"""

NODE_CHECKS = """
log "node checks: $(rows nodes.tsv | wc -l) node(s)"
ports=${#DEVICES[@]}
gid=-1
[ "$PROTOCOL" = ethernet ] && gid=$GID_INDEX
while IFS=$'\t' read -r test node; do
  out="$RESULTS/$test"
  mkdir -p "$out"
  summary="$(remote "$node" bash -s -- /tmp/railplan-probe "$gid" @PRIO@ \
    "${DEVICES[@]}" < "$HERE/node_probe.sh" 2> "$out/ssh.err" | tail -n 1)" || true
  remote "$node" tar -C /tmp/railplan-probe -cf - . < /dev/null 2>> "$out/ssh.err" \
    | tar -C "$out" -xf - 2>> "$out/ssh.err" || true
  want="acs_srcvalid_on=0 nvidia_peermem=1 ports_active=$ports"
  if [[ "$summary" == "$want"* ]] && { [ "$gid" -lt 0 ] || [[ "$summary" == *"roce_ok=$ports" ]]; }; then
    verdict "$test" OK "$summary"
  else
    verdict "$test" FAIL "${summary:-no answer (see $out/ssh.err)}"
  fi
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
rdma_run() {  # rdma_run TEST TOOL SERVER SDEV CLIENT CDEV THRESHOLD BETTER
  local test="$1" tool="$2" server="$3" sdev="$4" client="$5" cdev="$6" threshold="$7"
  local better="$8" value col=4
  local -a flags=(-F)
  if [ "$tool" = ib_write_bw ]; then
    flags+=(--report_gbits -D 10)
  else
    flags+=(-n 10000)
    col=5
  fi
  [ "$PROTOCOL" = ethernet ] && flags+=(-x "$GID_INDEX")
  remote "$server" timeout 120 "$tool" -d "$sdev" "${flags[@]}" \\
    > "$RESULTS/servers/$test.log" 2>&1 < /dev/null &
  sleep "${SERVER_WAIT:-2}"
  remote "$client" timeout 120 "$tool" -d "$cdev" "${flags[@]}" "$server" \\
    > "$RESULTS/$test.txt" 2>&1 < /dev/null || true
  wait || true
  value="$(awk -v c="$col" '/^ *[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+/ { v = $c } END { print v }' \\
    "$RESULTS/$test.txt")"
  if [ -z "$value" ]; then
    verdict "$test" FAIL "no result (see $RESULTS/$test.txt)"
  elif { [ "$better" = higher ] && ge "$value" "$threshold"; } \\
      || { [ "$better" = lower ] && le "$value" "$threshold"; }; then
    verdict "$test" OK "$value (threshold $threshold)"
  else
    verdict "$test" FAIL "$value (threshold $threshold)"
  fi
}

log "per-link RDMA: $(rows rdma.tsv | wc -l) test(s); round 0 one at a time, later rounds together"
for round in $(rows rdma.tsv | cut -f 9 | sort -n -u); do
  while IFS=$'\\t' read -r test tool server sdev client cdev threshold better r; do
    [ "$r" = "$round" ] || continue
    if [ "$round" = 0 ]; then
      rdma_run "$test" "$tool" "$server" "$sdev" "$client" "$cdev" "$threshold" "$better"
    else
      rdma_run "$test" "$tool" "$server" "$sdev" "$client" "$cdev" "$threshold" "$better" &
    fi
  done < <(rows rdma.tsv)
  wait
done
"""

NCCL_RUN = """
nccl_run() {  # nccl_run TEST_ID BINARY HOSTS ENV: run one nccl-tests job, record its verdict
  local test="$1" binary="$2" hosts="$3" env="$4" n args=()
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
  if "$MPIRUN" -np $((n * GPUS_PER_NODE)) "${where[@]}" --bind-to numa "${MPI_EXTRA[@]}" \\
      "${args[@]}" "$NCCL_TESTS/$binary" -b @MINB@ -e @MAXB@ -f 2 -g 1 \\
      > "$RESULTS/$test/nccl.log" 2>&1 < /dev/null; then
    status=OK
  else
    status=FAIL
  fi
  if ! grep -q 'NET/IB/[0-9]*/GDRDMA' "$RESULTS/$test/nccl.log"; then
    status=FAIL
  fi
  verdict "$test" "$status" "$(grep 'Avg bus bandwidth' "$RESULTS/$test/nccl.log" | tail -n 1)"
}
"""

PAIRS = """
log "pair tests: $(rows pairs.tsv | wc -l) pair(s); the pairs of a round run together"
for round in $(rows pairs.tsv | cut -f 2 | sort -n -u); do
  log "round $round"
  while IFS=$'\\t' read -r test r hosts env; do
    [ "$r" = "$round" ] || continue
    nccl_run "$test" all_reduce_perf "$hosts" "$env" &
  done < <(rows pairs.tsv)
  wait
done
"""

NCCL = """
log "NCCL collectives: $(rows nccl.tsv | wc -l) run(s), one at a time"
while IFS=$'\\t' read -r test binary hosts env; do
  nccl_run "$test" "$binary" "$hosts" "$env"
done < <(rows nccl.tsv)
"""

RUN_ALL = """
for step in 00_node_checks 10_cabling 20_rdma 30_pairs 40_nccl; do
  log "== $step"
  "$HERE/$step.sh"
done
log "verdicts in $RESULTS/summary/verdicts.txt; grade with: railplan grade <design.json> $RESULTS"
"""

SBATCH_HEAD = """#!/usr/bin/env bash
#SBATCH --job-name=railplan-@NAME@
#SBATCH --exclusive
#SBATCH --output=railplan-@NAME@-%j.out
# @TITLE@
# Submit with slurm/submit.sh (it passes --nodes and --nodelist=./hosts).
set -euo pipefail
HERE="${RAILPLAN_SCRIPTS:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
# shellcheck source=lib.sh
. "$HERE/lib.sh"
"""

SLURM_NODES = """
gid=-1
[ "$PROTOCOL" = ethernet ] && gid=$GID_INDEX
# one task per node; each writes results/NODE-<its Slurm node name>/
# shellcheck disable=SC2016  # expanded by the bash that srun starts on each node
srun --ntasks-per-node=1 bash -c 'd="$1/NODE-${SLURMD_NODENAME}"; shift; \\
  bash "$0" "$d" "$@" | sed "s/^/${SLURMD_NODENAME} /"' \\
  "$HERE/node_probe.sh" "$RESULTS" "$gid" @PRIO@ "${DEVICES[@]}"
"""

SLURM_RDMA = """
mkdir -p "$RESULTS/servers"
while IFS=$'\\t' read -r test tool server sdev client cdev _ _ _; do
  flags=(-F)
  [ "$tool" = ib_write_bw ] && flags+=(--report_gbits -D 10)
  [ "$tool" = ib_write_lat ] && flags+=(-n 10000)
  [ "$PROTOCOL" = ethernet ] && flags+=(-x "$GID_INDEX")
  srun --overlap -N 1 -n 1 -w "$server" timeout 120 "$tool" -d "$sdev" "${flags[@]}" \\
    > "$RESULTS/servers/$test.log" 2>&1 &
  sleep "${SERVER_WAIT:-2}"
  srun --overlap -N 1 -n 1 -w "$client" timeout 120 "$tool" -d "$cdev" "${flags[@]}" "$server" \\
    > "$RESULTS/$test.txt" 2>&1 || true
  wait || true
done < <(rows rdma.tsv)
"""

SLURM_NCCL_RUN = """
srun_nccl() {  # srun_nccl TEST_ID BINARY HOSTS ENV
  local test="$1" binary="$2" hosts="$3" env="$4" n
  local -a kv where
  mkdir -p "$RESULTS/$test"
  IFS='|' read -r -a kv <<< "$env"
  if [ "$hosts" = ALL ]; then
    n=$SLURM_JOB_NUM_NODES
    where=()
  else
    n=$(tr ',' '\\n' <<< "$hosts" | wc -l)
    where=(-w "$hosts")
  fi
  (  # the NCCL settings as variables (export takes NAME=value only, never a command)
    for pair in "${kv[@]}"; do export "${pair?}"; done
    srun --overlap --mpi=pmix -N "$n" "${where[@]}" \\
      --ntasks-per-node="$GPUS_PER_NODE" --gpus-per-node="$GPUS_PER_NODE" \\
      "$NCCL_TESTS/$binary" -b @MINB@ -e @MAXB@ -f 2 -g 1
  ) > "$RESULTS/$test/nccl.log" 2>&1 || true
}
"""

SLURM_PAIRS = """
for round in $(rows pairs.tsv | cut -f 2 | sort -n -u); do
  while IFS=$'\\t' read -r test r hosts env; do
    [ "$r" = "$round" ] || continue
    srun_nccl "$test" all_reduce_perf "$hosts" "$env" &
  done < <(rows pairs.tsv)
  wait
done
"""

SLURM_NCCL = """
while IFS=$'\\t' read -r test binary hosts env; do
  srun_nccl "$test" "$binary" "$hosts" "$env"
done < <(rows nccl.tsv)
"""

SLURM_SUBMIT = """#!/usr/bin/env bash
# Submit the Slurm variant of the railplan test plan: one job per step, each after the last.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
nodes=$(awk 'NF' "$HERE/hosts" | wc -l)
list="$(awk 'NF { print $1 }' "$HERE/hosts" | paste -s -d, -)"
export RAILPLAN_SCRIPTS="$HERE"
dep=()
for step in 00_node_checks 20_rdma 30_pairs 40_nccl; do
  id=$(sbatch --parsable --export=ALL --nodes="$nodes" --nodelist="$list" "${dep[@]}" \\
    "$HERE/slurm/$step.sbatch")
  echo "submitted $step as job $id"
  dep=(--dependency=afterany:"$id")
done
echo "the as-built cabling check (10_cabling.sh) needs switch access: run it from a login node"
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
    values = {
        "DESIGN": shell_word(plan.design),
        "HASH": shell_word(plan.design_hash),
        "REV": shell_word(plan.revision),
        "GPUS": shell_word(int(design.shape.gpus)),
        "DEVICES": " ".join(shell_word(d) for d in plan.devices),
        "GID": shell_word(int(o.gid_index)),
        "PROTOCOL": shell_word(plan.protocol),
        "PRIO": shell_word(int(o.lossless_priority)),
        "MINB": shell_word(o.nccl_min_bytes),
        "MAXB": shell_word(o.nccl_max_bytes),
    }
    n_nodes = len(design.nodes)
    files: Files = {
        "hosts": "".join(f"{n.id} slots={design.shape.gpus}\n" for n in design.nodes),
        "switches": "".join(f"{s.id}\n" for s in design.switches),
        "lib.sh": _fill(LIB, values),
        "node_probe.sh": NODE_PROBE,
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
            (t.id, tool, server, sdev, client, cdev, check.threshold, check.better, t.round)
        )
    files["data/rdma.tsv"] = _tsv(
        ("test", "tool", "server", "server_dev", "client", "client_dev", "threshold", "better",
         "round"),
        rdma,
    )  # fmt: skip
    files["data/pairs.tsv"] = _tsv(
        ("test", "round", "hosts", "env"),
        ((t.id, t.round, ",".join(t.nodes), _env(t)) for t in tests["pairs"]),
    )
    files["data/nccl.tsv"] = _tsv(
        ("test", "binary", "hosts", "env"),
        (
            (t.id, "all_reduce_perf" if "all_reduce" in t.kind else "alltoall_perf",
             _hosts(t, n_nodes), _env(t))
            for t in tests["nccl"]
        ),
    )  # fmt: skip
    steps = {
        "00_node_checks.sh": ("Node checks: ACS, GPUDirect RDMA, port state/rate/MTU, RoCE GID/PFC/ECN", NODE_CHECKS),
        "10_cabling.sh": ("As-built cabling: collect LLDP or IB discovery for railplan grade",
                          (CABLING_ROCE if plan.protocol == "ethernet" else CABLING_IB) + CABLING_TAIL),
        "20_rdma.sh": ("Per-link RDMA: ib_write_bw / ib_write_lat per path class", RDMA),
        "30_pairs.sh": ("Pair tests: two-node ring all-reduce, round by round", NCCL_RUN + PAIRS),
        "40_nccl.sh": ("NCCL collectives: all_reduce_perf and alltoall_perf", NCCL_RUN + NCCL),
        "run_all.sh": ("Every step in order", RUN_ALL),
    }  # fmt: skip
    for name, (title, body) in steps.items():
        files[name] = _fill(HEADER, {**values, "TITLE": title}) + _fill(body, values)
    slurm = {
        "00_node_checks": ("Node checks on every node, one task per node", SLURM_NODES),
        "20_rdma": ("Per-link RDMA with srun", SLURM_RDMA),
        "30_pairs": ("Pair tests with srun, round by round", SLURM_NCCL_RUN + SLURM_PAIRS),
        "40_nccl": ("NCCL collectives with srun", SLURM_NCCL_RUN + SLURM_NCCL),
    }
    for name, (title, body) in slurm.items():
        head = _fill(SBATCH_HEAD, {**values, "TITLE": title, "NAME": name})
        files[f"slurm/{name}.sbatch"] = head + _fill(body, values)
    files["slurm/submit.sh"] = SLURM_SUBMIT
    files["README.txt"] = _readme(plan)
    return files


def _readme(plan: TestPlan) -> str:
    c = plan.coverage
    return (
        f"railplan test scripts for {plan.design} (design {plan.design_hash}, revision "
        f"{plan.revision})\n\n"
        "Run from a host that reaches every node by ssh (keys, no password) and has mpirun:\n"
        "  ./run_all.sh                 every step in order, or the steps one by one:\n"
        "  ./00_node_checks.sh          ACS, nvidia_peermem, ports Active at rate and MTU, RoCE\n"
        "  ./10_cabling.sh              LLDP / IB discovery into results/asbuilt + manifest\n"
        "  ./20_rdma.sh                 ib_write_bw / ib_write_lat per path class\n"
        "  ./30_pairs.sh                two-node ring all-reduce pairs, round by round\n"
        "  ./40_nccl.sh                 all_reduce_perf / alltoall_perf\n"
        "Slurm: slurm/submit.sh submits the node, RDMA, pair and NCCL steps as dependent jobs.\n\n"
        "Settings (environment): RESULTS, NCCL_TESTS (nccl-tests build dir), MPIRUN,\n"
        "MPIRUN_ARGS, SSH. Devices and GID index are in lib.sh; change them with\n"
        "`railplan testplan --devices ... --gid-index N` rather than by hand.\n\n"
        f"Coverage: {c.covered_links}/{c.inter_switch_links} switch-to-switch links, "
        f"{c.nodes_paired}/{c.nodes} nodes in {c.pairs} pairs ({c.rounds} rounds).\n"
        "Each step prints OK/FAIL per test into results/summary/verdicts.txt; the full grade (with\n"
        "the diagnosis of slow pairs) is `railplan grade <design.json> results`.\n"
    )


def executable(path: str) -> bool:
    """Whether a rendered file should be written with the executable bit."""
    return path.endswith((".sh", ".sbatch"))
