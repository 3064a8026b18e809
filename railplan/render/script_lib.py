"""The bash every runner shares: settings, helpers, the node probe and the verdict judges.

The ssh/mpirun scripts and the Slurm batch files source the same ``lib.sh``, so a threshold
is judged the same way whichever runner measured it: ``judge_perftest`` reads ib_write_bw /
ib_write_lat output (``--report_gbits``: Gb/s; latency in usec), ``judge_nccl`` reads an
nccl-tests log the way nccl-tests itself judges a run ("Avg bus bandwidth" against the plan's
threshold, which is 0.9 x the NCCL_TESTS_MIN_BW the run was given, nccl-tests src/common.cu)
and asks for ``NET/.../GDRDMA`` on every inter-node channel NCCL_DEBUG=INFO lists. Anything
that cannot be measured (a missing tool, no root for lspci, no output) is a FAIL that says so.
"""

from __future__ import annotations

LIB = """#!/usr/bin/env bash
# Shared settings and helpers of the railplan test scripts (sourced, not run).
# Override any setting from the environment, e.g. SSH="ssh -l admin" ./00_node_checks.sh
# shellcheck disable=SC2034  # settings are used by the scripts that source this file

RESULTS="${RESULTS:-$PWD/results}"
DATA="${DATA:-$HERE/data}"
HOSTFILE="${HOSTFILE:-$HERE/hosts}"
NCCL_TESTS="${NCCL_TESTS:-@TESTS_DIR@}"
MPIRUN="${MPIRUN:-mpirun}"
read -r -a SSH_CMD <<< "${SSH:-ssh -o BatchMode=yes -o ConnectTimeout=10}"
read -r -a MPI_EXTRA <<< "${MPIRUN_ARGS:-}"
GPUS_PER_NODE=@GPUS@
DEVICES=(@DEVICES@)
GID_INDEX=@GID@
PROTOCOL=@PROTOCOL@
RATE_GBPS=@RATE@
MTU=@MTU@
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
probe_verdict() {  # probe_verdict TEST LINE: the node probe's last line -> a verdict
  case "$2" in
    "VERDICT OK "*) verdict "$1" OK "${2#VERDICT OK }" ;;
    "VERDICT FAIL "*) verdict "$1" FAIL "${2#VERDICT FAIL }" ;;
    *) verdict "$1" FAIL "no answer from the node probe: ${2:-nothing}" ;;
  esac
}
judge_perftest() {  # judge_perftest TEST TOOL THRESHOLD BETTER FILE
  local test="$1" tool="$2" threshold="$3" better="$4" file="$5" value col=4 unit=Gb/s
  if [ "$tool" = ib_write_lat ]; then
    col=5  # t_typical[usec]
    unit=us
  fi
  value="$(awk -v c="$col" '/^ *[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+/ { v = $c } END { print v }' \\
    "$file" 2> /dev/null)"
  if [ -z "$value" ]; then
    verdict "$test" FAIL "not measured: no $tool result (see $file)"
  elif { [ "$better" = higher ] && ge "$value" "$threshold"; } \\
      || { [ "$better" = lower ] && le "$value" "$threshold"; }; then
    verdict "$test" OK "$value $unit (pass $better than $threshold $unit)"
  else
    verdict "$test" FAIL "$value $unit (pass $better than $threshold $unit)"
  fi
}
judge_nccl() {  # judge_nccl TEST THRESHOLD LOG EXIT_STATUS [NODES]: one node has no NET channel
  local test="$1" threshold="$2" file="$3" code="$4" nodes="${5:-2}" avg net gdr
  avg="$(awk -F: '/Avg bus bandwidth/ { split($2, w, " "); v = w[1] } END { print v }' "$file")"
  net="$(grep -c 'via NET/' "$file" || true)"
  gdr="$(grep -c 'via NET/[^ ]*/GDRDMA' "$file" || true)"
  local detail="Avg bus bandwidth ${avg:-none} GB/s (pass >= $threshold); GDRDMA on $gdr/$net NET channels"
  if [ -z "$avg" ]; then
    verdict "$test" FAIL "not measured: no 'Avg bus bandwidth' (exit $code, see $file)"
  elif [ "$code" != 0 ] || ! ge "$avg" "$threshold" \\
      || { [ "$nodes" != 1 ] && { [ "$net" = 0 ] || [ "$gdr" != "$net" ]; }; }; then
    verdict "$test" FAIL "$detail; exit $code"
  else
    verdict "$test" OK "$detail"
  fi
}
"""

NODE_PROBE_TEMPLATE = """#!/usr/bin/env bash
# Collect one node's checks into DIR and judge them (run on the node: directly, over ssh or
# under srun). Last line: "VERDICT OK|FAIL <figures>[; <problems>][; not measured: ...]".
# A check whose tool is not installed is "not measured" (its file says so, the grader reports
# it missing): it does not fail the node, and it is never a zero count or a pass.
# usage: node_probe.sh DIR GID_INDEX PRIORITY RATE_GBPS MTU DEVICE...  (SYSFS, PROCFS: others)
set -uo pipefail
sys="${SYSFS:-/sys}"
proc="${PROCFS:-/proc}"
dir="$1"
gid="$2"
prio="$3"
rate="$4"
mtu="$5"
shift 5
n=$#
mkdir -p "$dir"
problems=()
unmeasured=()
have() { command -v "$1" > /dev/null; }
absent() {  # absent FILE TOOL CHECKS: the tool is not installed, its checks not measured
  printf 'railplan: not measured: %s not installed\\n' "$2" > "$dir/$1"
  unmeasured+=("$3 ($2 not installed)")
}
measured() { ! grep -q '^railplan: not measured' "$dir/$1" 2> /dev/null; }
@QOS_TOOL@summary=""
if ! have lspci; then
  absent lspci.txt lspci "acs_srcvalid_on, pcie_below_nominal"
  summary="acs_srcvalid_on=nm pcie_below_nominal=nm"
else
  if [ "$(id -u)" = 0 ]; then
    lspci -vvv > "$dir/lspci.txt" 2>&1
  elif sudo -n true 2> /dev/null; then
    # shellcheck disable=SC2024  # the file is ours: only lspci needs root
    sudo -n lspci -vvv > "$dir/lspci.txt" 2>&1
  else
    lspci -vvv > "$dir/lspci.txt" 2>&1
    problems+=("not root and sudo -n refused: ACS not measured")
  fi
  if grep -q 'access denied' "$dir/lspci.txt"; then
    problems+=("lspci shows <access denied>: ACS not measured")
  fi
  acs="$(grep -c 'ACSCtl:.*SrcValid+' "$dir/lspci.txt" || true)"
  # PCIe: every NIC's LnkSta speed and width, every GPU's width, at its LnkCap (GPUs slow their
  # link when idle); "links below" counts the rest, "links 0" means lspci showed none. AMD
  # Instinct GPUs are "Processing accelerators", NVIDIA's "3D controller".
  read -r links below <<< "$(awk '
    /^[0-9a-f]/ { k = ""; c = $0; sub(/^[^ ]+ /, "", c); sub(/:.*/, "", c); sub(/ \\[[0-9a-f]+\\]$/, "", c)
      if (c == "Infiniband controller" || c == "Ethernet controller") k = "nic"
      if (c == "3D controller" || c == "VGA compatible controller" || c == "Display controller" \\
          || c == "Processing accelerators") k = "gpu"
      cap = 0; next }
    k != "" && /LnkCap:|LnkSta:/ && match($0, /Speed [0-9.]+GT\\/s/) {
      sp = substr($0, RSTART + 6, RLENGTH - 10) + 0
      if (!match($0, /Width x[0-9]+/)) next
      w = substr($0, RSTART + 7, RLENGTH - 7) + 0
      if ($0 ~ /LnkCap:/) { cs = sp; cw = w; cap = 1; next }
      if (!cap) next
      n++; cap = 0
      if (w < cw || (k == "nic" && sp < cs)) b++ }
    END { print n + 0, b + 0 }' "$dir/lspci.txt")"
  summary="acs_srcvalid_on=$acs pcie_below_nominal=$below/$links"
  [ "$acs" = 0 ] || problems+=("ACS SrcValid+ on $acs device(s)")
  [ "$links" != 0 ] || problems+=("no NIC or GPU PCIe link status in lspci: PCIe not measured")
  [ "$below" = 0 ] || problems+=("$below NIC/GPU PCIe link(s) below LnkCap (lspci LnkSta)")
fi
if have lsmod; then
  lsmod > "$dir/lsmod.txt" 2>&1
elif [ -r "$proc/modules" ]; then
  cat "$proc/modules" > "$dir/lsmod.txt"
else
  absent lsmod.txt lsmod "@PEER_METRIC@"
fi
@GPU_PROBE@for tool in ibstat ibv_devinfo; do
  if have "$tool"; then
    : > "$dir/$tool.txt"
  else
    absent "$tool.txt" "$tool" "$([ "$tool" = ibstat ] && echo ports_active, ports_at_rate || echo ports_mtu)"
  fi
done
: > "$dir/roce.txt"
for dev in "$@"; do
  have ibstat && ibstat "$dev" >> "$dir/ibstat.txt" 2>&1
  have ibv_devinfo && ibv_devinfo -d "$dev" >> "$dir/ibv_devinfo.txt" 2>&1
  if [ "$gid" -ge 0 ]; then
    type_file="$sys/class/infiniband/$dev/ports/1/gid_attrs/types/$gid"
    gid_type="$(cat "$type_file" 2>/dev/null || echo missing)"
    netdev=""
    for path in "$sys/class/infiniband/$dev/device/net/"*; do
      [ -e "$path" ] && netdev="${path##*/}" && break
    done
@QOS_READ@    printf '%s netdev=%s gid%s=%s pfc=%s ecn=%s\\n' "$dev" "$netdev" "$gid" "$gid_type" \\
      "${pfc:-0}" "$ecn" >> "$dir/roce.txt"
  fi
done
if measured ibstat.txt; then
  active="$(grep -c 'State: Active' "$dir/ibstat.txt" || true)"
  # ibstat: "State: Active" then "Rate: 400" for each port; count Active ports at the planned rate
  at_rate="$(awk -v r="$rate" '/State:/ && !/Physical/ { up = ($2 == "Active") }
    /Rate:/ { if (up && $2 + 0 == r + 0) n++ } END { print n + 0 }' "$dir/ibstat.txt")"
  summary+=" ports_active=$active/$n"
  [ "$active" = "$n" ] || problems+=("$active of $n ports Active")
else
  summary+=" ports_active=nm"
fi
if measured ibv_devinfo.txt; then
  mtu_ok="$(awk -v m="$mtu" '$1 == "active_mtu:" && $2 + 0 == m + 0 { n++ } END { print n + 0 }' \\
    "$dir/ibv_devinfo.txt")"
  summary+=" ports_mtu=$mtu_ok/$n"
  [ "$mtu_ok" = "$n" ] || problems+=("$mtu_ok of $n ports at active MTU $mtu")
else
  summary+=" ports_mtu=nm"
fi
if [ "$rate" != 0 ] && measured ibstat.txt; then  # 0: bonded NICs, member ports by ethtool
  summary+=" ports_at_rate=$at_rate/$n"
  [ "$at_rate" = "$n" ] || problems+=("$at_rate of $n ports at $rate Gb/s")
fi
@GPU_JUDGE@if [ "$gid" -ge 0 ]; then
  # a value a missing tool could not read is na: not measured, neither a pass nor a fail
  roce_ok="$(grep -c -E 'RoCE v2 pfc=(1|na) ecn=(1|na)$' "$dir/roce.txt" || true)"
  summary+=" roce_ok=$roce_ok/$n"
  [ "$roce_ok" = "$n" ] || problems+=("$((n - roce_ok)) of $n ports without RoCE v2 GID $gid, PFC or ECN on $prio")
@QOS_CHECK@fi
notes=""
if [ "${#unmeasured[@]}" -gt 0 ]; then
  notes="; not measured: $(printf '%s; ' "${unmeasured[@]}")"
  notes="${notes%; }"
fi
if [ "${#problems[@]}" -eq 0 ]; then
  printf 'VERDICT OK %s%s\\n' "${summary# }" "$notes"
else
  printf 'VERDICT FAIL %s; %s%s\\n' "${summary# }" "$(IFS=';'; printf '%s' "${problems[*]}")" "$notes"
fi
"""
