"""LaunchPlan: everything a runtime needs to launch one kernel for one problem shape."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class LaunchPlan:
    """A kernel launch with the uniform catalogue signature (M, N, K, alpha, A, B, beta, C).

    grid / block are in blocks / threads; shared_bytes is dynamic shared memory in bytes.
    """

    name: str
    source: Path
    entry: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    defines: dict[str, int] = field(default_factory=dict)
    shared_bytes: int = 0

    @property
    def threads_per_block(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def blocks(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)
