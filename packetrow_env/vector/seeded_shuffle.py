"""``np.random.default_rng(seed).permutation`` as compiled kernels, bit for bit: the deals of many games at once.

``Game.new(n, seed)`` shuffles with numpy's default generator (SeedSequence -> PCG64 -> Fisher-Yates with
rejection sampling). Creating one generator per seed was most of a re-deal's time in a batch (docs/benchmarks.md),
so the batch re-implements those three pieces; tests/test_seeded_shuffle.py compares them with numpy for many seeds.
Every number is uint64 arithmetic (PCG64's 128-bit state as two words): numba would turn mixed signed/unsigned
arithmetic into floats.
"""

from __future__ import annotations

import numba
import numpy as np

_JIT = dict(cache=True, nogil=True)
U64 = np.uint64
M32 = U64(0xFFFFFFFF)
# numpy's SeedSequence (numpy/random/bit_generator.pyx), pool of four 32-bit words
INIT_A, MULT_A = U64(0x43B0D7E5), U64(0x931E8875)
INIT_B, MULT_B = U64(0x8B51F9DD), U64(0x58F38DED)
MIX_MULT_L, MIX_MULT_R = U64(0xCA01F9DD), U64(0x4973F715)
# PCG64's default 128-bit multiplier (numpy/random/src/pcg64/pcg64.h), high and low words
MUL_HI, MUL_LO = U64(2549297995355413924), U64(4865540595714422341)
STATE_WORDS = 6  # state high, state low, inc high, inc low, has_uint32, uinteger: BitGenerator.state's fields


@numba.njit(**_JIT)
def _hashmix(value, hash_const):
    """SeedSequence's hashmix; ``hash_const`` is a one-word array it advances."""
    value = (value ^ hash_const[0]) & M32
    hash_const[0] = (hash_const[0] * MULT_A) & M32
    value = (value * hash_const[0]) & M32
    return value ^ (value >> U64(16))


@numba.njit(**_JIT)
def _mix(x, y):
    result = (MIX_MULT_L * x - MIX_MULT_R * y) & M32
    return result ^ (result >> U64(16))


@numba.njit(**_JIT)
def _seed_words(seed, out):
    """``SeedSequence(seed).generate_state(4, np.uint64)`` into ``out`` (uint64[4]) for a seed below 2**63."""
    entropy = np.zeros(2, np.uint64)  # the seed as little-endian 32-bit words (0 is one word)
    n_entropy = 1
    entropy[0] = U64(seed) & M32
    if U64(seed) >> U64(32):
        entropy[1] = U64(seed) >> U64(32)
        n_entropy = 2
    pool = np.zeros(4, np.uint64)
    hash_const = np.full(1, INIT_A, np.uint64)
    for i in range(4):
        pool[i] = _hashmix(entropy[i] if i < n_entropy else U64(0), hash_const)
    for src in range(4):
        for dst in range(4):
            if src != dst:
                pool[dst] = _mix(pool[dst], _hashmix(pool[src], hash_const))
    h = INIT_B
    for k in range(8):  # eight 32-bit words from the pool in turn, read as four little-endian 64-bit ones
        value = (pool[k % 4] ^ h) & M32
        h = (h * MULT_B) & M32
        value = (value * h) & M32
        value ^= value >> U64(16)
        if k % 2 == 0:
            out[k // 2] = value
        else:
            out[k // 2] |= value << U64(32)


@numba.njit(**_JIT)
def _mul64(a, b):
    """The 128-bit product of two words as (high, low)."""
    a0, a1 = a & M32, a >> U64(32)
    b0, b1 = b & M32, b >> U64(32)
    p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
    mid = (p00 >> U64(32)) + (p01 & M32) + (p10 & M32)
    return p11 + (p01 >> U64(32)) + (p10 >> U64(32)) + (mid >> U64(32)), (mid << U64(32)) | (p00 & M32)


@numba.njit(**_JIT)
def _step(st):
    """One PCG64 step: state = state * multiplier + inc (mod 2**128)."""
    hi, lo = _mul64(st[1], MUL_LO)
    hi += st[0] * MUL_LO + st[1] * MUL_HI
    lo2 = lo + st[3]
    st[0] = hi + st[2] + U64(lo2 < lo)
    st[1] = lo2


@numba.njit(**_JIT)
def _next64(st):
    """PCG64's next 64-bit output (XSL-RR of the stepped state)."""
    _step(st)
    x = st[0] ^ st[1]
    rot = st[0] >> U64(58)
    return (x >> rot) | (x << ((U64(64) - rot) & U64(63)))


@numba.njit(**_JIT)
def _next32(st):
    """numpy's next_uint32 for PCG64: the low half of a 64-bit output, the high half kept for the next call."""
    if st[4]:
        st[4] = U64(0)
        return st[5]
    value = _next64(st)
    st[4] = U64(1)
    st[5] = value >> U64(32)
    return value & M32


@numba.njit(**_JIT)
def seed_state(seed, st):
    """``np.random.default_rng(seed).bit_generator``'s state into ``st`` (uint64[STATE_WORDS])."""
    words = np.empty(4, np.uint64)
    _seed_words(seed, words)
    st[0], st[1] = U64(0), U64(0)
    st[2] = (words[2] << U64(1)) | (words[3] >> U64(63))  # inc = (initseq << 1) | 1
    st[3] = (words[3] << U64(1)) | U64(1)
    _step(st)
    lo = st[1] + words[1]
    st[0] = st[0] + words[0] + U64(lo < st[1])
    st[1] = lo
    _step(st)
    st[4], st[5] = U64(0), U64(0)


@numba.njit(**_JIT)
def shuffle(st, values):
    """``Generator.shuffle`` of a 1-d array in place (random_interval's masked rejection sampling)."""
    for i in range(values.shape[0] - 1, 0, -1):
        bound = U64(i)
        mask = bound
        for shift in (1, 2, 4, 8, 16):
            mask |= mask >> U64(shift)
        value = _next32(st) & mask
        while value > bound:
            value = _next32(st) & mask
        j = np.int64(value)
        values[i], values[j] = values[j], values[i]


def state_dict(st: np.ndarray) -> dict:
    """``BitGenerator.state`` (a PCG64 dict) of a state array from ``seed_state``."""
    words = [int(x) for x in st]
    return {"bit_generator": "PCG64", "state": {"state": words[0] << 64 | words[1], "inc": words[2] << 64 | words[3]},
            "has_uint32": words[4], "uinteger": words[5]}
