"""The firmware step of the test scripts (``16_firmware.sh``): versions collected and compared.

InfiniBand: ``ibdiagnet --get_cable_info`` from the first host; ``ibdiagnet2.db_csv`` is copied
to ``results/FW-FABRIC/`` and the verdict counts, per model, the firmware versions its devices
run (switches and HCAs by ``NODES_INFO`` HWInfo_DeviceID, modules by ``CABLE_INFO`` PN). Ethernet:
``ethtool -i`` of each back-end netdev on every node (``nodes/<node>-<device>.txt``) and the
switch's ``show version`` (``switches/<switch>.txt``); NICs are grouped by driver, switches by
HwSKU. A model on more than one version fails the step; ``railplan grade`` names every outlier
with its cable. A tool that is not installed is "not measured" (its file says so), not a FAIL.
"""

from __future__ import annotations


def ibdiagnet_first_host(test: str, saved: str) -> str:
    """Shell lines that name the step and its results folder and stop "not measured" when the
    first host has no ibdiagnet (the file it would have saved says so)."""
    return (
        f"test={test}\n"
        'out="$RESULTS/$test"\n'
        'mkdir -p "$out"\n'
        'first="$(awk \'NF { print $1; exit }\' "$HOSTFILE")"\n'
        "if ! on_node \"$first\" bash -c 'command -v ibdiagnet' > /dev/null 2>&1 < /dev/null; then\n"
        f'  echo "railplan: not measured: ibdiagnet not installed on $first" > "$out/{saved}"\n'
        '  verdict "$test" OK "not measured: ibdiagnet not installed on $first"\n'
        "  exit 0\n"
        "fi\n"
    )


FIRMWARE_IB = (
    "\n# firmware of every switch, HCA and cable module (ibdiagnet2.db_csv), compared per model\n"
    + ibdiagnet_first_host("FW-FABRIC", "ibdiagnet2.db_csv")
    + """on_node "$first" ibdiagnet --get_cable_info -o /tmp/railplan-fw > "$out/ibdiagnet.out" 2>&1 < /dev/null || true
on_node "$first" cat /tmp/railplan-fw/ibdiagnet2.db_csv > "$out/ibdiagnet2.db_csv" 2> /dev/null < /dev/null || true
if ! grep -q '^START_NODES' "$out/ibdiagnet2.db_csv"; then
  verdict "$test" FAIL "no ibdiagnet2.db_csv from $first (see $out/ibdiagnet.out)"
  exit 0
fi
# model<TAB>version per device: NODES_INFO (hex Extended Major.Minor.SubMinor), CABLE_INFO (PN, FWVersion)
spread="$(awk -F, '
  function t(s) { gsub(/^[ \\t"]+|[ \\t"]+$/, "", s); return s }
  function h(s,   i, n) {  # hex (0x1f) or decimal text to a number, in any awk
    s = tolower(t(s)); if (s !~ /^0x/) return s + 0
    for (i = 3; i <= length(s); i++) n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
    return n }
  /^START_/ { sec = $0; hdr = 0; next }
  /^END_/ { sec = ""; next }
  sec != "" && !hdr { delete c; for (i = 1; i <= NF; i++) c[t($i)] = i; hdr = 1; next }
  sec == "START_NODES_INFO" && ("FWInfo_Extended_Major" in c) {
    printf "DeviceID %d\\t%d.%d.%d\\n", h($(c["HWInfo_DeviceID"])), h($(c["FWInfo_Extended_Major"])),
      h($(c["FWInfo_Extended_Minor"])), h($(c["FWInfo_Extended_SubMinor"])) }
  sec == "START_CABLE_INFO" && ("FWVersion" in c) && t($(c["FWVersion"])) !~ /^(N\\/A|)$/ {
    printf "module %s\\t%s\\n", t($(c["PN"])), t($(c["FWVersion"])) }' "$out/ibdiagnet2.db_csv" \\
  | sort -u | awk -F'\\t' '{ n[$1]++; v[$1] = v[$1] " " $2 }
    END { for (m in n) if (n[m] > 1) printf "%s:%s;", m, v[m] }')"
if [ -z "$spread" ]; then
  verdict "$test" OK "each switch, HCA and module model on one firmware version"
else
  verdict "$test" FAIL "models on more than one firmware version: $spread (railplan grade names each device)"
fi
"""
)

FIRMWARE_ETHERNET = """
# firmware of every back-end NIC (ethtool -i) and switch (show version), compared per model
test=FW-FABRIC
out="$RESULTS/$test"
mkdir -p "$out/nodes" "$out/switches"
# shellcheck disable=SC2016  # expanded on the node
probe='for dev in "$@"; do n=""
  for p in "${SYSFS:-/sys}"/class/infiniband/"$dev"/device/net/*; do [ -e "$p" ] && n="${p##*/}" && break; done
  echo "== $dev"
  if ! command -v ethtool > /dev/null; then echo "railplan: not measured: ethtool not installed"
  elif [ -z "$n" ]; then echo "railplan: not measured: $dev has no netdev"
  else ethtool -i "$n"; fi
done'
while read -r host _; do
  [ -n "$host" ] || continue
  on_node "$host" bash -c "$probe" _ "${DEVICES[@]}" < /dev/null 2> /dev/null \\
    | awk -v dir="$out/nodes" -v host="$host" '/^== / { f = dir "/" host "-" $2 ".txt"; next }
        f != "" { print > f }' || true
done < "$HOSTFILE"
while read -r sw; do
  [ -n "$sw" ] || continue
  remote "$sw" show version > "$out/switches/$sw.txt" 2> /dev/null < /dev/null \\
    || echo "railplan: not measured: no show version from $sw" > "$out/switches/$sw.txt"
done < "$HERE/switches"
spread="$( { awk -F': *' '/^driver:/ { d = $2 } /^firmware-version:/ { print "NIC " d "\\t" $2 }' \\
    "$out"/nodes/*.txt 2> /dev/null
  awk -F': *' '/^HwSKU:/ { m = $2 } /^SONiC Software Version:/ { v = $2 }
    ENDFILE { if (v != "") print "switch " m "\\t" v; m = ""; v = "" }' "$out"/switches/*.txt 2> /dev/null
  } | sort -u | awk -F'\\t' '{ n[$1]++; v[$1] = v[$1] " " $2 }
    END { for (m in n) if (n[m] > 1) printf "%s:%s;", m, v[m] }')"
unmeasured="$( (grep -l '^railplan: not measured' "$out"/nodes/*.txt "$out"/switches/*.txt 2> /dev/null || true) | wc -l)"
note=""
[ "$unmeasured" = 0 ] || note="; $unmeasured output(s) not measured"
if [ -z "$spread" ]; then
  verdict "$test" OK "each NIC and switch model on one firmware version$note"
else
  verdict "$test" FAIL "models on more than one firmware version: $spread$note (railplan grade names each device)"
fi
"""


def firmware_script(protocol: str) -> str:
    """16_firmware's body for the fabric's protocol."""
    return FIRMWARE_IB if protocol == "infiniband" else FIRMWARE_ETHERNET


__all__ = ["firmware_script"]
