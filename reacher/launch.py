"""One place for train.py and the notebook to choose an environment: the built-in Reacher, or a
Unity binary (the real one or this project's stand-in) through the genuine unityagents 0.4 client
(envkit/unity/launch.py opens it), so the same code drives either."""

from __future__ import annotations

import os
from typing import Any

from envkit.unity.launch import open_unity

BUILTIN_NAMES = (None, "", "builtin")


def make_env(
    name_or_path: str | os.PathLike[str] | None = "builtin",
    num_agents: int = 20,
    seed: int = 0,
    *,
    worker_id: int = 0,
    base_port: int = 5005,
    no_graphics: bool = False,
    **builtin_options: Any,
) -> Any:
    """Open the environment named by name_or_path.

    "builtin" (or None): `reacher.ReacherEnvironment(num_agents, seed, **builtin_options)`.
    A path to a Unity binary or a stand-in: `unityagents.UnityEnvironment(file_name=path,
    worker_id, base_port, seed, no_graphics)`; the binary fixes the number of agents, so
    num_agents is ignored there. Give concurrent runs different worker_ids: the client
    does not notice two runs sharing a port.
    """
    if name_or_path in BUILTIN_NAMES:
        from reacher import ReacherEnvironment

        return ReacherEnvironment(num_agents=num_agents, seed=seed, **builtin_options)
    if builtin_options:
        raise ValueError(f"options {sorted(builtin_options)} apply only to the built-in environment, not to the Unity "
                         f"binary {name_or_path}")
    return open_unity(name_or_path, seed, worker_id=worker_id, base_port=base_port, no_graphics=no_graphics,
                      builtin_hint="make_env('builtin') gives the same environment here directly.")
