"""The link-quality step of the test scripts: counters before and after the soak, and verdicts.

``50_link_quality.sh start`` runs before the RDMA step and ``50_link_quality.sh finish`` after
the NCCL step (``run_all.sh`` does both; the Slurm chain submits them as its own jobs). On
InfiniBand one host runs ``ibdiagnet --pc --reset_phy_info`` then ``ibdiagnet --get_phy_info``
(NVIDIA ibdiagnet User Manual) and the verdict reads ``ibdiagnet2.net_dump_ext``; on Ethernet
every node runs ``linkq_probe.sh`` (``ethtool -S`` of each back-end netdev, judged on the node
with the mlx5 counter names of the kernel's counters.rst, and at finish ``ethtool -m``: each
module's temperature and per-lane RX power against its own alarm thresholds) and every switch
answers SONiC's
``show interfaces counters fec-stats``. A missing tool, an empty output or an unreachable
device is a FAIL that says so, never a clean pass.
"""

from __future__ import annotations

LINKQ_PROBE = """#!/usr/bin/env bash
# Link-quality counters of one node (run on the node: over ssh or under srun).
# usage: linkq_probe.sh DIR start|finish RATE_GBPS BER_LIMIT MIN_SOAK_S DEVICE...
# start: ethtool -S of each device's netdev into DIR/ethtool-DEV-start.txt, the time into
# DIR/start.epoch. finish: the same as -finish.txt, then the last line judges the growth:
# "VERDICT OK|FAIL <figures>[; <problems>]" (mlx5 counter names, Linux counters.rst).
set -uo pipefail
sys="${SYSFS:-/sys}"
dir="$1"
phase="$2"
rate="$3"
limit="$4"
min_soak="$5"
shift 5
mkdir -p "$dir"
problems=()
command -v ethtool > /dev/null || problems+=("ethtool not installed")
for dev in "$@"; do
  netdev=""
  for path in "$sys/class/infiniband/$dev/device/net/"*; do
    [ -e "$path" ] && netdev="${path##*/}" && break
  done
  if [ -z "$netdev" ]; then
    problems+=("$dev has no netdev")
    continue
  fi
  ethtool -S "$netdev" > "$dir/ethtool-$dev-$phase.txt" 2>&1 || problems+=("ethtool -S $netdev failed")
  # the module's own diagnostics and alarm thresholds (SFF-8472/8636, CMIS), after the soak
  [ "$phase" = finish ] && { ethtool -m "$netdev" > "$dir/module-$dev.txt" 2>&1 || true; }
  [ "$phase" = start ] && { ethtool --show-fec "$netdev" > "$dir/fec-$dev.txt" 2>&1 || true; }
done
date +%s > "$dir/$phase.epoch"
if [ "$phase" = start ]; then
  if [ "${#problems[@]}" -eq 0 ]; then echo "VERDICT OK start snapshot of $# device(s)"
  else printf 'VERDICT FAIL start; %s\\n' "$(IFS=';'; printf '%s' "${problems[*]}")"; fi
  exit 0
fi
soak=$(( $(cat "$dir/finish.epoch") - $(cat "$dir/start.epoch" 2>/dev/null || cat "$dir/finish.epoch") ))
[ -f "$dir/start.epoch" ] || problems+=("no start snapshot: run start before the soak")
[ "$soak" -ge "$min_soak" ] || problems+=("soak ${soak} s < ${min_soak} s")
over=0
bad=0
for dev in "$@"; do
  a="$dir/ethtool-$dev-start.txt"
  b="$dir/ethtool-$dev-finish.txt"
  if ! grep -q 'rx_corrected_bits_phy:' "$b" 2> /dev/null; then
    problems+=("$dev: no rx_corrected_bits_phy in ethtool -S (not measured)")
    continue
  fi
  read -r ber errs <<< "$(awk -v rate="$rate" -v soak="$soak" '
    { gsub(/:/, "", $1) }
    FNR == NR { before[$1] = $2; next }
    { grow[$1] = $2 - before[$1] }
    END {
      bits = ("rx_bits_phy" in grow && grow["rx_bits_phy"] > 0) ? grow["rx_bits_phy"] : rate * 1e9 * soak
      e = ""
      n = split("rx_pcs_symbol_err_phy rx_crc_errors_phy rx_symbol_err_phy", k, " ")
      for (i = 1; i <= n; i++) if (grow[k[i]] > 0) e = e "," k[i] "+" grow[k[i]]
      printf "%.3g %s\\n", (bits > 0 ? grow["rx_corrected_bits_phy"] / bits : 0), (e == "" ? "-" : substr(e, 2))
    }' "$a" "$b")"
  if awk -v x="$ber" -v l="$limit" 'BEGIN { exit !(x + 0 > l + 0) }'; then
    over=$((over + 1))
    problems+=("$dev pre-FEC BER $ber > $limit")
  fi
  if [ "$errs" != "-" ]; then
    bad=$((bad + 1))
    problems+=("$dev $errs")
  fi
done
# modules: temperature and every lane's RX power inside the alarm thresholds the module reports
# (a threshold pair with high <= low is one the module does not implement: not judged)
modules=0
for dev in "$@"; do
  alarm="$(awk '
    function mw(s) { sub(/^[^:]*:[ \t]*/, "", s); return s + 0 }
    /Module temperature high alarm threshold/ { th = mw($0); next }
    /Module temperature low alarm threshold/ { tl = mw($0); next }
    /Module temperature[ \t]*:/ { t = mw($0); ht = 1; next }
    /Laser rx power high alarm threshold/ { rh = mw($0); next }
    /Laser rx power low alarm threshold/ { rl = mw($0); next }
    /(Rcvr signal avg optical power|Receiver signal average optical power|Receiver signal OMA)/ {
      rx[++n] = mw($0) }
    END {
      a = ""
      if (ht && th > tl && (t > th || t < tl)) a = a ",temperature " t "C"
      if (rh > rl) for (i = 1; i <= n; i++) if (rx[i] > rh || rx[i] < rl) a = a ",lane " i " RX " rx[i] "mW"
      print (a == "" ? "-" : substr(a, 2)) }' "$dir/module-$dev.txt" 2> /dev/null)"
  if [ -n "$alarm" ] && [ "$alarm" != "-" ]; then
    modules=$((modules + 1))
    problems+=("$dev module outside its alarm thresholds: $alarm")
  fi
done
summary="soak=${soak}s ports_over_ber=$over ports_with_errors=$bad modules_out_of_limits=$modules"
if [ "${#problems[@]}" -eq 0 ]; then
  printf 'VERDICT OK %s\\n' "$summary"
else
  printf 'VERDICT FAIL %s; %s\\n' "$summary" "$(IFS=';'; printf '%s' "${problems[*]}")"
fi
"""

LINKQ_TEMPLATE = """
phase="${1:-}"
case "$phase" in
  start | finish) ;;
  *) echo "usage: $0 start|finish  (start before the RDMA step, finish after the NCCL step)" >&2
     exit 2 ;;
esac
MIN_SOAK=@SOAK@
BER_LIMIT=@BERLIMIT@
EFF_LIMIT=@EFFLIMIT@
LQ_TMP="${LQ_TMP:-/tmp/railplan-lq}"  # where each node keeps its snapshots between the phases
soak_of() {  # soak_of DIR: seconds between the start and finish snapshots
  echo $(( $(cat "$1/finish.epoch") - $(cat "$1/start.epoch" 2> /dev/null || cat "$1/finish.epoch") ))
}
@LINKQ_IB@linkq_node() {  # linkq_node TEST NODE: ethtool -S on the node, judged there
  local test="$1" node="$2" out="$RESULTS/$1" summary
  mkdir -p "$out"
  summary="$(on_node "$node" bash -s -- "$LQ_TMP/$test" "$phase" "$RATE_GBPS" \\
    "$BER_LIMIT" "$MIN_SOAK" "${DEVICES[@]}" < "$HERE/linkq_probe.sh" 2> "$out/$phase.err" \\
    | tail -n 1)" || true
  on_node "$node" tar -C "$LQ_TMP/$test" -cf - . < /dev/null 2>> "$out/$phase.err" \\
    | tar -C "$out" -xf - 2>> "$out/$phase.err" || true
  probe_verdict "$test" "$summary"
}
linkq_switch() {  # linkq_switch TEST SWITCH: SONiC show interfaces counters fec-stats
  local test="$1" sw="$2" out="$RESULTS/$1" soak grew
  mkdir -p "$out"
  remote "$sw" show interfaces counters fec-stats > "$out/fec-stats-$phase.txt" 2> /dev/null \\
    < /dev/null || true
  date +%s > "$out/$phase.epoch"
  if ! grep -q 'FEC_UNCORR' "$out/fec-stats-$phase.txt"; then
    verdict "$test" FAIL "no 'show interfaces counters fec-stats' from $sw ($phase): not measured"
    return
  fi
  if [ "$phase" = start ]; then
    verdict "$test" OK "start snapshot of $sw"
    return
  fi
  soak="$(soak_of "$out")"
  grew="$(awk '
    $1 == "IFACE" { for (i = 1; i <= NF; i++) c[$i] = i; next }
    !("FEC_UNCORR" in c) || $1 ~ /^-+$/ || NF < 5 { next }
    { v = $(c["FEC_UNCORR"]); gsub(/,/, "", v) }
    FNR == NR { a[$1] = v; next }
    v ~ /^[0-9]+$/ && v - a[$1] > 0 { g = g "," $1 "+" (v - a[$1]) }
    END { print (g == "" ? "-" : substr(g, 2)) }' \\
    "$out/fec-stats-start.txt" "$out/fec-stats-finish.txt" 2> /dev/null)"
  if [ ! -f "$out/fec-stats-start.txt" ] || [ "$soak" -lt "$MIN_SOAK" ]; then
    verdict "$test" FAIL "soak=${soak}s: shorter than $MIN_SOAK s or no start snapshot"
  elif [ "$grew" != "-" ]; then
    verdict "$test" FAIL "soak=${soak}s; FEC_UNCORR grew on $grew"
  else
    verdict "$test" OK "soak=${soak}s; no uncorrectable FEC codeword on any port"
  fi
}
log "link quality ($phase): $(rows linkq.tsv | wc -l) test(s)"
while IFS=$'\\t' read -r test where name; do
  case "$where" in
@LINKQ_IB_CASE@    node) linkq_node "$test" "$name" &
      ;;
    switch) linkq_switch "$test" "$name" &
      ;;
  esac
done < <(rows linkq.tsv)
wait
"""

LINKQ_IB = """linkq_ib() {  # linkq_ib TEST: ibdiagnet from the first host of the fabric
  local test="$1" out="$RESULTS/$1" first soak
  first="$(awk 'NF { print $1; exit }' "$HOSTFILE")"
  mkdir -p "$out/$phase"
  if ! on_node "$first" bash -c 'command -v ibdiagnet' > /dev/null 2>&1 < /dev/null; then
    verdict "$test" FAIL "ibdiagnet not installed on $first: link quality not measured"
    return
  fi
  if [ "$phase" = start ]; then
    on_node "$first" ibdiagnet --pc --reset_phy_info -o "$LQ_TMP/start" \\
      > "$out/start/ibdiagnet.log" 2>&1 < /dev/null \\
      || { verdict "$test" FAIL "ibdiagnet --pc --reset_phy_info failed (see $out/start)"; return; }
    date +%s > "$out/start.epoch"
    verdict "$test" OK "counters cleared from $first; run the soak, then finish"
    return
  fi
  on_node "$first" ibdiagnet --get_phy_info --get_cable_info -o "$LQ_TMP/finish" \\
    > "$out/finish/ibdiagnet.log" 2>&1 < /dev/null || true
  on_node "$first" cat "$LQ_TMP/finish/ibdiagnet2.net_dump_ext" \\
    > "$out/finish/ibdiagnet2.net_dump_ext" 2> /dev/null < /dev/null || true
  on_node "$first" cat "$LQ_TMP/finish/ibdiagnet2.db_csv" \\
    > "$out/finish/ibdiagnet2.db_csv" 2> /dev/null < /dev/null || rm -f "$out/finish/ibdiagnet2.db_csv"
  # modules: CABLE_INFO rows with one of the module's own alarm flags set (SFF-8636/CMIS
  # High/Low Temperature and RX<n> Power alarms); railplan grade also compares every reading
  # with the module's thresholds and names each cable
  local modules="not measured (no ibdiagnet2.db_csv)"
  if grep -q '^START_CABLE_INFO' "$out/finish/ibdiagnet2.db_csv" 2> /dev/null; then
    modules="$(awk -F, '
      function t(s) { gsub(/^[ \\t"]+|[ \\t"]+$/, "", s); return s }
      /^START_CABLE_INFO/ { in_ci = 1; hdr = 0; next }
      /^END_CABLE_INFO/ { in_ci = 0; next }
      in_ci && !hdr { for (i = 1; i <= NF; i++) if (t($i) ~ /^(High|Low)(Temperature|RX[0-9]+Power)Alarm$/) f[i] = 1; hdr = 1; next }
      in_ci { a = 0; for (i in f) if (t($i) != "" && t($i) != "0" && t($i) != "N/A") a = 1; n += a }
      END { print n + 0 }' "$out/finish/ibdiagnet2.db_csv")"
  fi
  # error counters since the clear at start (infiniband-diags): LinkDownedCounter per port
  local qe=0 downs
  on_node "$first" ibqueryerrors > "$out/finish/ibqueryerrors.txt" \\
    2> "$out/finish/ibqueryerrors.err" < /dev/null || qe=$?
  downs="$(awk '{ while (match($0, /LinkDownedCounter == [0-9]+/)) {
      v = substr($0, RSTART + 20, RLENGTH - 20) + 0; if (v > 0) n++
      $0 = substr($0, RSTART + RLENGTH) } } END { print n + 0 }' \\
    "$out/finish/ibqueryerrors.txt" 2> /dev/null || echo 0)"
  date +%s > "$out/finish.epoch"
  soak="$(soak_of "$out")"
  # ibdiagnet2.net_dump_ext: ':'-separated, columns found by their header names
  read -r ports over errs worst <<< "$(awk -F: -v lim="$BER_LIMIT" -v elim="$EFF_LIMIT" '
    function t(s) { gsub(/^[ \\t"]+|[ \\t"]+$/, "", s); return s }
    !h && /Effective BER/ && /Node Desc/ { for (i = 1; i <= NF; i++) c[t($i)] = i; h = 1; nf = NF; next }
    h && NF >= nf && $0 !~ /^#/ {
      d = t($(nf)); for (i = nf + 1; i <= NF; i++) d = d ":" t($i)
      p = ("#IB" in c && t($(c["#IB"])) ~ /^[0-9]+$/) ? t($(c["#IB"])) : t($(c["#"]))
      n++
      e = t($(c["Effective BER"])) + 0; s = t($(c["Symbol BER"])) + 0
      if (e > elim || s > lim) { o++; if (w == "") w = d "/" p }
      if (t($(c["Symbol Err"])) + 0 > 0) { x++; if (w == "") w = d "/" p }
    }
    END { printf "%d %d %d %s\\n", n, o, x, (w == "" ? "-" : w) }' \\
    "$out/finish/ibdiagnet2.net_dump_ext" 2> /dev/null)"
  local detail="soak=${soak}s ports=${ports:-0} over_ber=${over:-0} with_symbol_errors=${errs:-0}"
  detail+=" link_downs=${downs:-0} modules_in_alarm=${modules// /_}"
  if [ "${ports:-0}" = 0 ]; then
    verdict "$test" FAIL "no BER table from ibdiagnet --get_phy_info (see $out/finish): not measured"
  elif [ ! -f "$out/start.epoch" ] || [ "$soak" -lt "$MIN_SOAK" ]; then
    verdict "$test" FAIL "$detail; soak shorter than $MIN_SOAK s or no start snapshot"
  elif [ "$qe" != 0 ]; then
    verdict "$test" FAIL "$detail; ibqueryerrors failed or is not installed on $first: link-downs not measured"
  elif [ "$over" != 0 ] || [ "$errs" != 0 ] || [ "${downs:-0}" != 0 ] \\
      || { [[ "$modules" =~ ^[0-9]+$ ]] && [ "$modules" != 0 ]; }; then
    verdict "$test" FAIL "$detail; first: ${worst// /_} (railplan grade names every cable)"
  else
    verdict "$test" OK "$detail"
  fi
}
"""
LINKQ_IB_CASE = """    fabric) linkq_ib "$test" ;;
"""


def linkq_script(protocol: str) -> str:
    """50_link_quality's body: with the ibdiagnet step on InfiniBand only (an Ethernet fabric
    has no subnet for ibdiagnet or ibqueryerrors to read)."""
    if protocol == "infiniband":
        return LINKQ_TEMPLATE.replace("@LINKQ_IB@", LINKQ_IB).replace(
            "@LINKQ_IB_CASE@", LINKQ_IB_CASE
        )
    body = LINKQ_TEMPLATE.replace("EFF_LIMIT=@EFFLIMIT@\n", "")  # read by ibdiagnet's step only
    return body.replace("@LINKQ_IB@", "").replace("@LINKQ_IB_CASE@", "")


#: the InfiniBand body (every step)
LINKQ = linkq_script("infiniband")
