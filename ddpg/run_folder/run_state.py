"""The training state, training_state.pt, and the replay buffer beside it (replay_buffer.pt, and
replay_buffer.next.pt while a save is under way): everything ``train.py --resume`` needs to go
on exactly. What an agent's state holds is ``ddpg.run_folder.agent_state``'s; here it is taken with the
random generators and the loop's counters, written as a pair with the buffer, and restored.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ddpg.run_folder import agent_state, faults
from ddpg.run_folder.atomic import atomic_write
from ddpg.run_folder.checkpoints import is_state_dict, layer_mismatch, read_torch_file
from ddpg.run_folder.file_names import BUFFER_FILE, NEXT_BUFFER_FILE, RECORD_FILE, STATE_FILE
from ddpg_agent import Agent


def training_state(agent: Agent, loop: dict[str, Any], env_random_state: dict[str, Any] | None,
                   with_buffer: bool) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """What training_state.pt holds, taken between episodes: the agent's ``state_dict``, the
    training loop's own state (``loop``: episodes done, scores so far, ...) and the random
    generators (torch's, NumPy's global one, the environment's); and, with ``with_buffer``,
    the replay buffer's filled rows for replay_buffer.pt (else None)."""
    state = agent_state.capture(agent, with_buffer=with_buffer)
    rows = state.pop("buffer_rows", None)
    numpy_global = np.random.get_state(legacy=False)  # noqa: NPY002 (the global generator, for code that uses it)
    state.update({
        "random": {"torch": torch.get_rng_state(), "numpy": {**numpy_global, "state": {
            k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in numpy_global["state"].items()}},
            "environment": env_random_state},
        "loop": loop,
        "config": agent.config.to_dict(),
    })
    return state, rows


def write_training_state(run_dir: str | os.PathLike[str], state: dict[str, Any], rows: dict[str, Any] | None) -> None:
    """Write training_state.pt and, with ``rows``, replay_buffer.pt; each atomically, and as a pair.

    The rows go to replay_buffer.next.pt first, the state into place, and only then the rows
    over replay_buffer.pt: whenever the process dies, one of the two buffer files is the
    state's (``load_training_state`` takes the one whose step count matches). A state saved
    without rows makes older buffer files useless: they are removed.
    """
    run = Path(run_dir)
    if rows is not None:
        atomic_write(run / NEXT_BUFFER_FILE, lambda fh: torch.save(rows, fh))
    atomic_write(run / STATE_FILE, lambda fh: torch.save(state, fh))
    if rows is not None:
        os.replace(run / NEXT_BUFFER_FILE, run / BUFFER_FILE)
        faults.point(f"renamed {BUFFER_FILE}")
    else:
        for name in (BUFFER_FILE, NEXT_BUFFER_FILE):
            (run / name).unlink(missing_ok=True)


def save_training_state(run_dir: str | os.PathLike[str], agent: Agent, loop: dict[str, Any],
                        env_random_state: dict[str, Any] | None, save_buffer: bool) -> None:
    """Write the training state as it is now (call it between episodes); with
    ``save_buffer`` also the replay buffer: 4 bytes x (2 x state + action + 2) per
    transition, about 300 MB at one million transitions for Reacher."""
    write_training_state(run_dir, *training_state(agent, loop, env_random_state, save_buffer))


# The parts of a training_state.pt; a file without them is something else (a checkpoint).
STATE_PARTS = ("networks", "optimizer", "noise", "agent", "buffer", "random", "loop")


def load_training_state(run_dir: str | os.PathLike[str], agent: Agent) -> dict[str, Any]:
    """Restore an agent saved by ``save_training_state``; return the rest of the saved state
    (``loop``, ``environment``, and ``exact``: False when the buffer was not saved and starts
    empty). ValueError, one line, for a file that is not a training state or does not fit the agent."""
    run = Path(run_dir)
    path = run / STATE_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{run} holds no {STATE_FILE}: it cannot be resumed (runs save it every "
                                "--save-every episodes and at their end)")
    state = read_torch_file(path, "a training state")
    missing = [part for part in STATE_PARTS if part not in state] if isinstance(state, dict) else list(STATE_PARTS)
    if missing:
        looks = " (it looks like a network's state_dict: a checkpoint_*.pth?)" if is_state_dict(state) else ""
        raise ValueError(f"{path} is not a training state written by train.py: it lacks {', '.join(missing)}{looks}")
    rows = _buffer_rows(run, state) if state["buffer"]["saved"] else None
    _check_networks(path, state["networks"], agent)
    try:
        exact = agent_state.restore(agent, state, rows)
    except (ValueError, KeyError, RuntimeError) as exc:
        raise ValueError(f"{path} does not fit the run's agent: {_first_line(exc)}") from None
    random = state["random"]
    torch.set_rng_state(random["torch"])
    numpy_state = random["numpy"]
    key_state = {k: (np.array(v, dtype=np.uint32) if isinstance(v, list) else v) for k, v in numpy_state["state"].items()}
    np.random.set_state({**numpy_state, "state": key_state})  # noqa: NPY002
    return {"loop": state["loop"], "environment": random["environment"], "exact": exact}


def _buffer_rows(run: Path, state: dict[str, Any]) -> dict[str, Any] | None:
    """The saved buffer rows that belong to ``state`` (the same step count): replay_buffer.pt,
    or, after a process died between a save's two renames, replay_buffer.next.pt, which is
    then moved into place. None when neither is the state's (the resume is not exact)."""
    for name in (NEXT_BUFFER_FILE, BUFFER_FILE):
        if (run / name).is_file():
            rows = read_torch_file(run / name, "a replay buffer")
            if isinstance(rows, dict) and rows.get("t_step") == state["agent"]["t_step"]:
                if name == NEXT_BUFFER_FILE:
                    os.replace(run / NEXT_BUFFER_FILE, run / BUFFER_FILE)
                return rows
    return None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _check_networks(path: Path, networks: dict[str, Any], agent: Agent) -> None:
    """Each saved network has the agent's layers: else a ValueError naming both (run.json's
    config builds the agent; a training_state.pt copied from another run does not fit it)."""
    for name, saved in networks.items():
        module = getattr(agent, name, None)
        if module is None or not isinstance(saved, dict):
            raise ValueError(f"{path} does not fit the run's agent: it has a network {name!r} the agent lacks")
        mismatch = layer_mismatch(saved, module.state_dict(), f"its {name}", f"the run's {RECORD_FILE}")
        if mismatch:
            raise ValueError(f"{path} does not fit the run: {mismatch}")


__all__ = ["STATE_PARTS", "load_training_state", "save_training_state", "training_state", "write_training_state"]
