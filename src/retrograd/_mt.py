"""PyTorch's CPU random engine: the 32-bit Mersenne Twister stream and its state bytes.

PyTorch's CPU generator is an mt19937 seeded with the low 32 bits of the seed by the reference
``init_genrand``; NumPy's ``MT19937`` bit generator runs the same twist and tempering, so it
serves as the raw source here once its key is set the same way. ``random()`` is one 32-bit
draw and ``random64()`` two, the first being the high half.

Besides the twister, PyTorch's generator keeps two cached normal samples (a double and a float:
the Box-Muller sine of the last pair, returned by the next scalar normal draw). ``Engine`` holds
all of it, and ``to_bytes``/``from_bytes`` write and read the 5056-byte layout of PyTorch's
``CPUGeneratorImplState`` (``get_rng_state()``), so that states move between the two libraries.
"""

from __future__ import annotations

import struct

import numpy as np

N = 624  # words of state
DEFAULT_SEED = 67280421310721  # PyTorch's default seed
STATE_SIZE = 5056  # sizeof(CPUGeneratorImplState)
LEGACY_SIZE = 5048  # sizeof(CPUGeneratorImplStateLegacy)

# CPUGeneratorImplStateLegacy: int64 seed, int left, int seeded, uint64 next, uint64 state[624],
# double normal_x, normal_y, normal_rho, int normal_is_valid (+4 bytes of padding); the current
# layout adds float next_float_normal_sample and bool valid (+3 bytes of padding).
_HEAD = struct.Struct("<QiiQ")
_STATE_AT = _HEAD.size
_TAIL = struct.Struct("<dddi4x")
_TAIL_AT = _STATE_AT + 8 * N
_FLOAT = struct.Struct("<f?3x")
_FLOAT_AT = _TAIL_AT + _TAIL.size

_U32 = np.uint64(32)


def _init_key(seed: int) -> np.ndarray:
    """The reference init_genrand key for the low 32 bits of ``seed``."""
    key = np.empty(N, np.uint32)
    s = seed & 0xFFFFFFFF
    key[0] = s
    for j in range(1, N):
        s = (1812433253 * (s ^ (s >> 30)) + j) & 0xFFFFFFFF
        key[j] = s
    return key


class Engine:
    """The state of one generator: seed, twister and the two normal caches."""

    __slots__ = ("seed", "bitgen", "fresh", "next_double", "next_float", "changes")

    def __init__(self, seed: int = DEFAULT_SEED) -> None:
        self.bitgen = np.random.MT19937()
        self.changes = 0  # counts the twister's draws and resets (see ``token``)
        self.reseed(seed)

    def reseed(self, seed: int) -> None:
        """``seed`` is an unsigned 64-bit value; the twister uses its low 32 bits."""
        self.seed = seed
        self._set(_init_key(seed), N)
        # PyTorch marks a just-seeded twister with next=0 (its state is twisted on the first
        # draw); NumPy's position is N either way, so the flag keeps the bytes faithful.
        self.fresh = True
        self.next_double: float | None = None
        self.next_float: float | None = None

    def _set(self, key: np.ndarray, pos: int) -> None:
        self.changes += 1
        self.bitgen.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": pos}}

    # -- draws ----------------------------------------------------------------------------------
    def u32(self, n: int) -> np.ndarray:
        """``n`` draws of ``random()``, as uint64 values below 2**32."""
        self.fresh = False
        self.changes += 1
        return self.bitgen.random_raw(n)

    def u64(self, n: int) -> np.ndarray:
        """``n`` draws of ``random64()`` (two 32-bit draws each, high half first)."""
        self.fresh = False
        self.changes += 1
        r = self.bitgen.random_raw(2 * n)
        return (r[0::2] << _U32) | r[1::2]

    def one32(self) -> int:
        return int(self.u32(1)[0])

    def one64(self) -> int:
        return int(self.u64(1)[0])

    def token(self) -> tuple:
        """Two tokens taken before and after a stretch of code have equal counts and the same
        normal caches (the same objects) only if nothing drew from or reset this engine
        meanwhile: a cheap check where the state bytes (``to_bytes``, which reads the whole
        twister) are not needed."""
        return (self.changes, self.next_double, self.next_float)

    # -- state bytes ----------------------------------------------------------------------------
    def to_bytes(self) -> bytes:
        """PyTorch's ``CPUGeneratorImplState`` bytes."""
        st = self.bitgen.state["state"]
        pos = int(st["pos"])
        nxt = 0 if self.fresh else pos
        left = 1 if (self.fresh or pos == N) else N + 1 - pos
        buf = bytearray(STATE_SIZE)
        _HEAD.pack_into(buf, 0, self.seed, left, 1, nxt)
        buf[_STATE_AT:_TAIL_AT] = np.asarray(st["key"], np.uint32).astype("<u8").tobytes()
        valid = self.next_double is not None
        _TAIL.pack_into(buf, _TAIL_AT, 0.0, self.next_double if valid else 0.0, 0.0, int(valid))
        fvalid = self.next_float is not None
        _FLOAT.pack_into(buf, _FLOAT_AT, self.next_float if fvalid else 0.0, fvalid)
        return bytes(buf)

    def from_bytes(self, raw: bytes) -> None:
        """Load PyTorch's state bytes (current or legacy layout); ``ValueError`` if invalid."""
        if len(raw) not in (STATE_SIZE, LEGACY_SIZE):
            raise ValueError(
                f"Expected a CPUGeneratorImplState of size {STATE_SIZE} but found the input "
                f"RNG state size to be {len(raw)}"
            )
        seed, left, seeded, nxt = _HEAD.unpack_from(raw, 0)
        nxt &= 0xFFFFFFFF
        if not (seeded and 0 < left <= N and nxt <= N):
            raise ValueError("Invalid mt19937 state")
        key = np.frombuffer(raw, "<u8", N, _STATE_AT).astype(np.uint32)
        normal_x, normal_y, normal_rho, valid = _TAIL.unpack_from(raw, _TAIL_AT)
        next_float = None
        if len(raw) == STATE_SIZE:
            next_double = normal_y if valid else None
            fval, fvalid = _FLOAT.unpack_from(raw, _FLOAT_AT)
            if fvalid:
                next_float = fval
        else:
            # the legacy layout kept the pair's uniform and radius, not the sample
            next_double = (normal_rho * np.sin(2.0 * np.pi * normal_x)) if valid else None
        self.seed = seed
        self._set(key, N if left == 1 else nxt)
        self.fresh = left == 1 and nxt == 0
        self.next_double = None if next_double is None else float(next_double)
        self.next_float = next_float

    def copy_from(self, other: Engine) -> None:
        self.changes += 1
        self.seed = other.seed
        self.bitgen.state = other.bitgen.state
        self.fresh = other.fresh
        self.next_double = other.next_double
        self.next_float = other.next_float
