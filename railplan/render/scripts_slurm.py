"""The Slurm variant of the test scripts: the same tables, probes and verdict judges under srun.

Each batch file sources the same ``lib.sh`` as the ssh/mpirun scripts, so every step records
its verdicts in ``results/summary/verdicts.txt`` exactly as they do: the node probe's own
verdict per node (a node that never answers fails), the RDMA rounds with distinct server ports,
and nccl-tests judged on "Avg bus bandwidth" and GDRDMA on every NET channel.
"""

from __future__ import annotations

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
# one task per node; each writes results/NODE-<its Slurm node name>/ and prints its verdict
# shellcheck disable=SC2016  # expanded by the bash that srun starts on each node
srun --ntasks-per-node=1 bash -c 'd="$1/NODE-${SLURMD_NODENAME}"; shift; \\
  bash "$0" "$d" "$@" | tail -n 1 | sed "s/^/NODE-${SLURMD_NODENAME} /"' \\
  "$HERE/node_probe.sh" "$RESULTS" "$gid" @PRIO@ "$RATE_GBPS" "$MTU" "${DEVICES[@]}" \\
  > "$RESULTS/summary/node_probes.txt" || true
while IFS=$'\\t' read -r test _; do
  line="$(awk -v t="$test" '$1 == t { $1 = ""; sub(/^ /, ""); print; exit }' \\
    "$RESULTS/summary/node_probes.txt")"
  probe_verdict "$test" "$line"
done < <(rows nodes.tsv)
"""

ON_SRUN = """
on_node() {  # on_node HOST COMMAND...: one task on HOST inside this allocation
  local host="$1"
  shift
  srun --overlap -N 1 -n 1 -w "$host" "$@"
}
"""

SLURM_NCCL_RUN = """
nccl_run() {  # nccl_run TEST_ID BINARY HOSTS ENV THRESHOLD: one nccl-tests job and its verdict
  local test="$1" binary="$2" hosts="$3" env="$4" threshold="$5" n code=0
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
  ) > "$RESULTS/$test/nccl.log" 2>&1 < /dev/null || code=$?
  judge_nccl "$test" "$threshold" "$RESULTS/$test/nccl.log" "$code" "$n"
}
"""

SLURM_SUBMIT = """#!/usr/bin/env bash
# Submit the Slurm variant of the railplan test plan: one job per step, each after the last.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
nodes=$(awk 'NF' "$HERE/hosts" | wc -l)
list="$(awk 'NF { print $1 }' "$HERE/hosts" | paste -s -d, -)"
export RAILPLAN_SCRIPTS="$HERE"
dep=()
# the link-quality snapshots (start, finish) bracket the RDMA, pair and NCCL jobs: the soak
for step in 00_node_checks "50_link_quality start" 20_rdma 30_pairs 40_nccl 60_ladder \\
    70_burnin "50_link_quality finish"; do
  read -r -a job <<< "$step"
  [ -f "$HERE/slurm/${job[0]}.sbatch" ] || continue  # ladder and burn-in: when planned
  id=$(sbatch --parsable --export=ALL --nodes="$nodes" --nodelist="$list" "${dep[@]}" \\
    "$HERE/slurm/${job[0]}.sbatch" "${job[@]:1}")
  echo "submitted $step as job $id"
  dep=(--dependency=afterany:"$id")
done
echo "the as-built cabling check (10_cabling.sh) needs switch access: run it from a login node"
echo "verdicts: results/summary/verdicts.txt; grade with: railplan grade <design.json> results"
"""
