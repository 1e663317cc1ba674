"""What every scene's Gymnasium face shares: the registration its package makes on import, and the
checks its `gymnasium.Env` and `VectorEnv` make alike.

Registering on import is what Gymnasium's own plug-ins do (ale_py, gymnasium_robotics): `import reacher`
then `gymnasium.make("UnityReacher-v0")`. The entry points are strings, so MuJoCo is not loaded until an
environment is made; Gymnasium itself is imported only inside `register`, so a scene's package imports
where Gymnasium is not installed (the course's old unityagents venv runs `reacher.launch`).
"""

from __future__ import annotations

from collections.abc import Callable

RENDER_MODES = (None, "rgb_array")


def register(gymnasium_id: str, entry_point: str, vector_entry_point: str, max_episode_steps: int,
             reward_threshold: float) -> None:
    """Register ``gymnasium_id`` for ``make`` (``entry_point``) and ``make_vec`` (``vector_entry_point``)
    if it is not yet, with the original's episode length and the score that counts as solved: generic
    tools read both from the spec (Gymnasium's TimeLimit, SB3's zoo). Raises ImportError without Gymnasium."""
    import gymnasium

    if gymnasium_id not in gymnasium.registry:
        gymnasium.register(id=gymnasium_id, entry_point=entry_point, vector_entry_point=vector_entry_point,
                           max_episode_steps=max_episode_steps, reward_threshold=reward_threshold)


def register_if_gymnasium(register_scene: Callable[[], None]) -> None:
    """Run a package's registration at import, unless Gymnasium is not installed (the course's old
    unityagents venv): then there is nothing to register with, and the package still imports."""
    try:
        register_scene()
    except ImportError:
        pass


def checked_render_mode(render_mode: str | None) -> str | None:
    """``render_mode`` if a scene draws it (None, or "rgb_array": frames from the scene's `render`), else a
    one-line ValueError: Gymnasium itself would accept any name and fail only at the first `render`."""
    if render_mode not in RENDER_MODES:
        raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
    return render_mode


__all__ = ["RENDER_MODES", "checked_render_mode", "register", "register_if_gymnasium"]
