"""Damage done to a file's bytes by the tests that feed readers damaged files."""

from __future__ import annotations

import random


def damage(data: bytearray, rng: random.Random, start: int = 0) -> None:
    """One to three bytes flipped, or runs cut off, repeated or dropped, at
    data[start:] or after."""
    for _ in range(rng.randint(1, 3)):
        if len(data) <= start:
            break
        at = rng.randrange(start, len(data))
        action = rng.choice(["flip", "cut", "repeat", "drop"])
        if action == "flip":
            data[at] ^= 1 << rng.randrange(8)
        elif action == "cut":
            del data[at:]
        elif action == "repeat":
            data[at:at] = data[at:at + rng.randint(1, 40)]
        else:
            del data[at:at + rng.randint(1, 40)]
