"""RoCEv2 flow entropy and ECMP hashing: the kernel's UDP source port, a CRC-32 5-tuple hash."""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from railplan.errors import RailplanError

#: IANA UDP destination port of RoCEv2; every RoCEv2 packet carries it.
ROCEV2_UDP_DPORT = 4791
#: IP protocol number of UDP.
IPPROTO_UDP = 17
#: Lowest RoCEv2 source port the kernel produces (IB_ROCE_UDP_ENCAP_VALID_PORT_MIN).
ROCE_UDP_SPORT_MIN = 0xC000
#: Width in bytes of each header field a switch may hash.
FIELD_BYTES = {"src_ip": 4, "dst_ip": 4, "proto": 1, "src_port": 2, "dst_port": 2}

U32 = np.uint32
_MASK32 = 0xFFFFFFFF


class HashError(RailplanError):
    """A hash configuration the analyzer cannot model."""


# -- the Linux RDMA stack's RoCEv2 source port -----------------------------------------------
#
# include/rdma/ib_verbs.h (Linux, since v5.7: "RDMA/core: Add helper function to calculate
# flow label" and the v5.17 rdma_get_udp_sport() helper used by mlx5, irdma, hns and rxe):
#
#   static inline u16 rdma_flow_label_to_udp_sport(u32 fl)
#   {
#       u32 fl_low = fl & 0x03fff, fl_high = fl & 0xFC000;
#       fl_low ^= fl_high >> 14;
#       return (u16)(fl_low | IB_ROCE_UDP_ENCAP_VALID_PORT_MIN);      /* 0xC000 */
#   }
#   static inline u32 rdma_calc_flow_label(u32 lqpn, u32 rqpn)
#   {
#       u64 v = (u64)lqpn * rqpn;
#       v ^= v >> 20;
#       v ^= v >> 40;
#       return (u32)(v & IB_GRH_FLOWLABEL_MASK);                        /* 0x000FFFFF */
#   }
#   static inline u16 rdma_get_udp_sport(u32 fl, u32 lqpn, u32 rqpn)
#   {
#       if (!fl)
#           fl = rdma_calc_flow_label(lqpn, rqpn);
#       return rdma_flow_label_to_udp_sport(fl);
#   }
#
# Note the XOR: the high 6 bits of the 20-bit label are folded *into* the low 14 bits, not
# OR-ed beside them. The label is symmetric in the two QP numbers, so both directions of a
# connection (data and ACKs) carry the same source port.


def rdma_calc_flow_label(lqpn: ArrayLike, rqpn: ArrayLike) -> NDArray[np.uint32]:
    """20-bit flow label from the local and remote QP numbers (kernel rdma_calc_flow_label)."""
    v = np.asarray(lqpn, dtype=np.uint64) * np.asarray(rqpn, dtype=np.uint64)
    v ^= v >> np.uint64(20)
    v ^= v >> np.uint64(40)
    return (v & np.uint64(0xFFFFF)).astype(U32)


def rdma_flow_label_to_udp_sport(fl: ArrayLike) -> NDArray[np.uint16]:
    """RoCEv2 UDP source port of a flow label (kernel rdma_flow_label_to_udp_sport)."""
    f = np.asarray(fl, dtype=U32)
    low = (f & U32(0x3FFF)) ^ ((f & U32(0xFC000)) >> U32(14))
    return (low | U32(ROCE_UDP_SPORT_MIN)).astype(np.uint16)


def rocev2_udp_sport(lqpn: ArrayLike, rqpn: ArrayLike, flow_label: ArrayLike = 0) -> NDArray:
    """UDP source port the kernel puts on a RoCEv2 QP (rdma_get_udp_sport); label 0 = unset."""
    fl = np.asarray(flow_label, dtype=U32)
    fl = np.where(fl == 0, rdma_calc_flow_label(lqpn, rqpn), fl)
    return rdma_flow_label_to_udp_sport(fl)


# -- CRC-32 over header fields ---------------------------------------------------------------


def _crc_table() -> NDArray[np.uint32]:
    table = np.zeros(256, dtype=U32)
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0xEDB88320 if c & 1 else c >> 1
        table[i] = c
    return table


CRC32_TABLE = _crc_table()


def crc32_register(data: Sequence[NDArray], init: ArrayLike = 0) -> NDArray[np.uint32]:
    """Raw reflected CRC-32 register (poly 0xEDB88320, no final xor) over byte columns.

    ``data`` is a sequence of byte arrays, one per byte position, each with one entry per flow;
    equals ``zlib.crc32(bytes, init ^ 0xFFFFFFFF) ^ 0xFFFFFFFF`` per row.
    """
    n = len(data[0]) if data else 0
    crc = np.broadcast_to(np.asarray(init, dtype=U32), (n,)).copy()
    for column in data:
        idx = (crc ^ np.asarray(column, dtype=U32)) & U32(0xFF)
        crc = CRC32_TABLE[idx] ^ (crc >> U32(8))
    return crc


def header_bytes(fields: Sequence[str], values: dict[str, NDArray]) -> list[NDArray]:
    """Big-endian byte columns of the hashed header fields, in the order the switch reads them."""
    columns: list[NDArray] = []
    for name in fields:
        width = FIELD_BYTES.get(name)
        if width is None:
            known = ", ".join(FIELD_BYTES)
            raise HashError(f"routing.hash_fields: {name!r} is not a header field; use {known}")
        v = np.asarray(values[name], dtype=np.uint64)
        for k in range(width - 1, -1, -1):
            columns.append(((v >> np.uint64(8 * k)) & np.uint64(0xFF)).astype(np.uint8))
    return columns


def five_tuple_crc(
    src_ip: NDArray,
    dst_ip: NDArray,
    sport: NDArray,
    dport: int | NDArray = ROCEV2_UDP_DPORT,
    proto: int = IPPROTO_UDP,
    fields: Sequence[str] = ("src_ip", "dst_ip", "proto", "src_port", "dst_port"),
) -> NDArray[np.uint32]:
    """CRC-32 register of the listed header fields with seed 0, one value per flow."""
    n = len(src_ip)
    values = {
        "src_ip": src_ip,
        "dst_ip": dst_ip,
        "proto": np.full(n, proto, dtype=np.uint64),
        "src_port": sport,
        "dst_port": np.broadcast_to(np.asarray(dport, dtype=np.uint64), (n,)),
    }
    return crc32_register(header_bytes(fields, values))


def seed_offsets(seeds: NDArray, nbytes: int) -> NDArray[np.uint32]:
    """What a seed adds to a CRC over ``nbytes`` bytes: crc(seed, data) = crc(0, data) ^ this.

    CRC is affine in its initial register, so a per-switch seed is one XOR per flow.
    """
    zeros = [np.zeros(len(seeds), dtype=np.uint8)] * nbytes
    return crc32_register(zeros, seeds)


def switch_seeds(switch_ids: Sequence[str], mode: str, salt: int = 0) -> NDArray[np.uint32]:
    """Per-switch ECMP hash seed: CRC-32 of the switch id (``per-switch``) or 0 (``same``)."""
    if mode == "same":
        return np.zeros(len(switch_ids), dtype=U32)
    if mode != "per-switch":
        raise HashError(f"hash_seeds: {mode!r} is not a seeding mode; use per-switch or same")
    return np.array([zlib.crc32(s.encode(), salt & _MASK32) for s in switch_ids], dtype=U32)


def fmix32(h: NDArray) -> NDArray[np.uint32]:
    """MurmurHash3's 32-bit finalizer: every output bit depends on every input bit."""
    h = np.asarray(h, dtype=U32).copy()
    h ^= h >> U32(16)
    h *= U32(0x85EBCA6B)
    h ^= h >> U32(13)
    h *= U32(0xC2B2AE35)
    h ^= h >> U32(16)
    return h


def switch_hash(crc: NDArray, seeds: NDArray, mode: str) -> NDArray[np.uint32]:
    """The hash a switch reduces modulo its ECMP group size.

    ``same``: the raw 5-tuple CRC at every switch, so a flow's choices at consecutive tiers
    are correlated (polarization: some upper links never carry traffic). ``per-switch``: the
    CRC mixed with the switch's own seed through a non-linear finalizer, modelling switches
    configured with distinct hash seeds/functions so that their choices are independent. (A
    seed fed into the CRC register alone would not do: CRC is linear, so the seed only XORs a
    constant onto the result and choices stay correlated.)
    """
    if mode == "same":
        return np.asarray(crc, dtype=U32)
    return fmix32(np.asarray(crc, dtype=U32) ^ np.asarray(seeds, dtype=U32))


# -- theory the analyzer is checked against --------------------------------------------------


def collision_probability(n: int, m: int) -> float:
    """Probability that n flows hashed uniformly onto m links share at least one link."""
    if n > m:
        return 1.0
    return 1.0 - math.prod(1.0 - i / m for i in range(n))


def expected_permutation_throughput(n: int) -> float:
    """Mean throughput kept by n unit flows hashed uniformly onto n unit links: 1-(1-1/n)^n."""
    return 1.0 - (1.0 - 1.0 / n) ** n
