"""The data classes of the unityagents 0.4 interface, so code written for the Unity
binary reads the same fields from any built-in scene (each scene names its own brain and academy)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class BrainParameters:
    """What `env.brains[name]` describes: the sizes and types of one brain's spaces."""

    brain_name: str
    vector_observation_space_size: int
    num_stacked_vector_observations: int
    vector_action_space_size: int
    vector_action_descriptions: list[str] = field(default_factory=list)
    vector_action_space_type: str = "continuous"
    vector_observation_space_type: str = "continuous"
    number_visual_observations: int = 0
    camera_resolutions: list[dict] = field(default_factory=list)

    def __str__(self) -> str:
        return (
            f"Unity brain name: {self.brain_name}\n"
            f"        Number of Visual Observations (per agent): {self.number_visual_observations}\n"
            f"        Vector Observation space type: {self.vector_observation_space_type}\n"
            f"        Vector Observation space size (per agent): {self.vector_observation_space_size}\n"
            f"        Number of stacked Vector Observation: {self.num_stacked_vector_observations}\n"
            f"        Vector Action space type: {self.vector_action_space_type}\n"
            f"        Vector Action space size (per agent): {self.vector_action_space_size}\n"
            f"        Vector Action descriptions: {', '.join(self.vector_action_descriptions)}"
        )


@dataclass
class BrainInfo:
    """One brain's view of all its agents after a reset or a step."""

    vector_observations: np.ndarray
    rewards: list[float]
    local_done: list[bool]
    max_reached: list[bool]
    agents: list[int]
    previous_vector_actions: np.ndarray
    visual_observations: list = field(default_factory=list)
    text_observations: list[str] = field(default_factory=list)
    memories: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    previous_text_actions: list[str] = field(default_factory=list)


__all__ = ["BrainInfo", "BrainParameters"]
