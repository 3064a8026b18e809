"""RoCEv2 source port (Linux kernel formula), CRC-32 hashing, and uniform-hashing theory."""

from __future__ import annotations

import math
import zlib

import numpy as np
import pytest

from railplan.traffic.hashing import (
    HashError,
    collision_probability,
    crc32_register,
    expected_permutation_throughput,
    five_tuple_crc,
    rdma_calc_flow_label,
    rocev2_udp_sport,
    seed_offsets,
    switch_hash,
    switch_seeds,
)
from railplan.traffic.routing import fabric_index, flow_hash, route_bulk
from tests.toy import two_tier


def kernel_sport(lqpn: int, rqpn: int) -> int:
    """include/rdma/ib_verbs.h, transcribed literally with Python ints."""
    v = (lqpn * rqpn) & 0xFFFFFFFFFFFFFFFF  # u64 v = (u64)lqpn * rqpn
    v ^= v >> 20
    v ^= v >> 40
    fl = v & 0x000FFFFF  # IB_GRH_FLOWLABEL_MASK
    fl_low, fl_high = fl & 0x03FFF, fl & 0xFC000
    fl_low ^= fl_high >> 14
    return (fl_low | 0xC000) & 0xFFFF  # IB_ROCE_UDP_ENCAP_VALID_PORT_MIN


# (lqpn, rqpn, source port worked out by hand from the kernel formula)
KNOWN = [
    # 0x11 * 0x22 = 0x242: no high bits to fold; 0x242 | 0xC000
    (0x000011, 0x000022, 0xC242),
    # 1 * 0xFFFFF: label 0xFFFFF; low 0x3FFF XOR high 0x3F = 0x3FC0 -> 0xFFC0 (OR would be 0xFFFF)
    (0x000001, 0x0FFFFF, 0xFFC0),
    # 0x100000 * 1: v >> 20 = 1, label = (0x100000 ^ 1) & 0xFFFFF = 1 -> 0xC001
    (0x100000, 0x000001, 0xC001),
    # 0x4000 * 2 = 0x8000: high part 0x8000 >> 14 = 2 folded into low 0 -> 0xC002
    (0x004000, 0x000002, 0xC002),
]


@pytest.mark.parametrize(("lqpn", "rqpn", "sport"), KNOWN)
def test_rocev2_sport_matches_kernel_for_known_qpns(lqpn: int, rqpn: int, sport: int) -> None:
    assert kernel_sport(lqpn, rqpn) == sport
    assert int(rocev2_udp_sport(lqpn, rqpn)) == sport
    assert int(rocev2_udp_sport(rqpn, lqpn)) == sport  # symmetric: both ends agree


def test_rocev2_sport_matches_kernel_on_random_24bit_qpns() -> None:
    rng = np.random.default_rng(7)
    lq = rng.integers(0, 1 << 24, size=2000)
    rq = rng.integers(0, 1 << 24, size=2000)
    got = rocev2_udp_sport(lq, rq)
    want = [kernel_sport(int(a), int(b)) for a, b in zip(lq, rq, strict=True)]
    assert got.tolist() == want
    assert (got >= 0xC000).all()


def test_flow_label_given_is_used_as_is() -> None:
    assert int(rdma_calc_flow_label(3, 5)) == 15
    assert int(rocev2_udp_sport(3, 5, flow_label=0x12345)) == (0x2345 ^ 0x4) | 0xC000


def test_crc32_register_matches_zlib_and_seed_is_one_xor() -> None:
    rng = np.random.default_rng(1)
    data = rng.integers(0, 256, size=(50, 13), dtype=np.uint8)
    cols = [data[:, k] for k in range(13)]
    got = crc32_register(cols)
    want = [zlib.crc32(bytes(row), 0xFFFFFFFF) ^ 0xFFFFFFFF for row in data]
    assert got.tolist() == want
    seeds = rng.integers(0, 1 << 32, size=50, dtype=np.uint64).astype(np.uint32)
    seeded = crc32_register(cols, seeds)
    assert (seeded == got ^ seed_offsets(seeds, 13)).all()


def test_five_tuple_crc_depends_on_source_port() -> None:
    ip = np.array([0x0A000001, 0x0A000001], dtype=np.uint32)
    h = five_tuple_crc(ip, ip + 1, np.array([0xC000, 0xC001]))
    assert h[0] != h[1]


def test_switch_seeds_differ_per_switch_and_vanish_when_same() -> None:
    seeds = switch_seeds(["leaf1", "leaf2", "spine1"], "per-switch")
    assert len(set(seeds.tolist())) == 3
    assert not switch_seeds(["leaf1", "leaf2"], "same").any()
    with pytest.raises(HashError):
        switch_seeds(["x"], "sometimes")


def test_per_switch_hashes_are_independent_and_same_seed_ones_are_not() -> None:
    """Flows a leaf sent to one spine (hash % 4 == s) spread over all 8 links below it."""
    rng = np.random.default_rng(0)
    crc = rng.integers(0, 1 << 32, size=20000, dtype=np.uint64).astype(np.uint32)
    seeds = switch_seeds(["leaf", "spine"], "per-switch")
    for mode, spread in (("same", 2), ("per-switch", 8)):
        at_leaf = switch_hash(crc, seeds[0], mode) % 4
        at_spine = switch_hash(crc[at_leaf == 1], seeds[1], mode) % 8
        assert np.unique(at_spine).size == spread


def test_theory_formulas() -> None:
    assert collision_probability(2, 2) == pytest.approx(0.5)
    assert collision_probability(5, 4) == 1.0
    assert expected_permutation_throughput(2) == pytest.approx(0.75)
    assert expected_permutation_throughput(10_000) == pytest.approx(1 - math.exp(-1), abs=1e-4)


# Monte Carlo tolerance: 4 standard errors of a proportion over TRIALS trials (p(1-p) <= 1/4).
TRIALS = 3000
TOL = 4 * math.sqrt(0.25 / TRIALS)  # ~0.037


@pytest.mark.parametrize("hash_name", ["random", "crc32"])
@pytest.mark.parametrize(("n", "m"), [(2, 4), (4, 8), (3, 16)])
def test_n_flows_on_m_links_collide_with_birthday_probability(
    hash_name: str, n: int, m: int
) -> None:
    """n flows leaf0 -> leaf1 over m spines (one uplink each), hashed per flow, many trials."""
    design = two_tier(leaves=2, nodes_per_leaf=n, spines=m)
    ix = fabric_index(design)
    src = np.tile(np.arange(n), TRIALS)
    dst = src + n
    port = np.zeros_like(src)
    rng = np.random.default_rng(11)
    if hash_name == "crc32":
        q = rng.integers(0x100, 1 << 24, size=(2, src.size))
        base = flow_hash(ix, (src, port), (dst, port), q[0], q[1])
        routed = route_bulk(ix, src, port, dst, port, "ecmp", hash_base=base)
    else:
        routed = route_bulk(ix, src, port, dst, port, "ecmp", rng=rng)
    up = ix.dl_from[routed.dlink] == ix.switch_pos["leaf00"]
    trial = routed.flow[up] // n
    link = routed.dlink[up]
    per_link = np.unique(trial * ix.n_dlinks + link, return_counts=True)[1]
    keys = np.unique(trial * ix.n_dlinks + link)
    crowded = np.unique(keys[per_link > 1] // ix.n_dlinks)
    p_hat = crowded.size / TRIALS
    assert p_hat == pytest.approx(collision_probability(n, m), abs=TOL)
