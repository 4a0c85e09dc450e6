"""
SoT-3D: golden-angle spiral schedules paced by Fibonacci, tribonacci and tetranacci chunks.
"""

from typing import Any

import spiraltorch._core


def golden_ratio() -> float:
    """phi = (1 + sqrt 5) / 2."""

def golden_angle() -> float:
    """pi (3 - sqrt 5) radians, about 2.39996."""

def fibonacci_pacing(n: int) -> list[int]:
    """
    Macro orbit lengths for n steps: 1, 1, 2, 3, 5, ... with the last cut so they sum to n.
    """

def pack_tribonacci_chunks(n: int) -> list[int]:
    """
    n split into chunks of tribonacci sizes (1, 1, 2, 4, 7, ...), each greedily the sequence value <= what is left that is closest to half of it (ties to the larger); the chunks sum to n.
    """

def pack_tetranacci_chunks(n: int) -> list[int]:
    """
    n split into chunks of tetranacci sizes (1, 1, 2, 4, 8, ...) by the same greedy rule.
    """

class SoT3DPlan:
    """A SoT-3D schedule (see spiraltorch.sot.generate_plan)."""

    @property
    def total_steps(self) -> int:
        """The number of steps."""

    @property
    def meso_gain(self) -> float:
        """The height offset of the meso phase."""

    @property
    def micro_gain(self) -> float:
        """The height offset of the micro phase."""

    def __len__(self) -> int: ...

    def steps(self) -> list[dict[str, Any]]:
        """
        Each step as a dict: index, angle, radius, x, y, height, z_track, curvature, and its 'macro'/'meso'/'micro' chunk (index, length, position, phase, reflection; meso and micro add role, role_index).
        """

    def macro_summaries(self) -> list[dict[str, float]]:
        """
        One dict per macro orbit: index, length, ideal_length (the Fibonacci length), height_gain, mean_curvature, reflection_step.
        """

    def as_tensor(self) -> spiraltorch._core.Tensor:
        """(n, 3): x, y, height of each step."""

    def feature_tensor(self) -> spiraltorch._core.Tensor:
        """
        (n, 9): radius, angle, height, curvature, the 3 phases, meso and micro gain.
        """

    def role_tensor(self) -> spiraltorch._core.Tensor:
        """(n, 2): the meso and micro role indices."""

    def reflection_tensor(self) -> spiraltorch._core.Tensor:
        """(n, 3): 0/1 flags for the ends of micro, meso and macro chunks."""

    def grow_biome(self, topos: spiraltorch._core.OpenCartesianTopos, label_prefix: str = 'sot', include_reflections: bool = True, include_roles: bool = True) -> spiraltorch._core.TensorBiome:
        """
        A TensorBiome under topos with one shoot per step ([x, y, height, radius, angle, curvature, 3 phases, gains] plus roles and reflection flags when included), weight 1 + meso_gain + micro_gain.
        """

def generate_plan(total_steps: int, base_radius: float = 1.0, radial_growth: float = 0.05, base_height: float = 1.0, meso_gain: float = 0.2, micro_gain: float = 0.05) -> SoT3DPlan:
    """
    The SoT-3D plan of total_steps steps: step i at angle golden_angle * i and radius base_radius * e^(radial_growth * i); macro orbits of Fibonacci lengths split into tribonacci meso and tetranacci micro chunks; height climbs base_height / phi^m over macro orbit m plus the meso/micro phase offsets.
    """
