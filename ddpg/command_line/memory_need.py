"""Settings the machine cannot hold, refused before anything is allocated or written.

The replay buffer is allocated whole when the agent is made (``ddpg_agent.ReplayBuffer``: one
float32 row of ``2 x state + action + 2`` numbers per transition), and a CUDA learner keeps a
copy of it on the GPU. A ``buffer_size`` of 10^11 would otherwise end in an allocation
traceback (or, where the system overcommits, in the out-of-memory killer minutes later), and a
``batch_size`` of 10^9 at the first update. ``problem`` estimates what the buffer and one
batch's work take and compares it with what the machine has free now, so the refusal is one
line that names the setting, the bytes needed and the bytes available.

The batch's estimate is rough (its rows, twice, and the hidden layers' activations and their
gradients for the four networks, ``ACTIVATION_COPIES`` per unit); it only has to tell a batch
that fits from one that is orders of magnitude too large.
"""

from __future__ import annotations

import inspect
import os
from pathlib import Path
from typing import Any

FLOAT_BYTES = 4  # float32
ACTIVATION_COPIES = 8  # per hidden unit and batch row: local and target networks, forward and backward
MEMINFO = Path("/proc/meminfo")
CGROUP = Path("/sys/fs/cgroup")  # cgroup v2: memory.max and memory.current of this container, if limited


def row_numbers(state_size: int, action_size: int, n_step: int) -> int:
    """Numbers the replay buffer keeps per transition: state, action, reward, next state, discount, and beside them
    its rewards step by step and their span (``ReplayBuffer.steps``, for a gamma changed while training)."""
    return 2 * state_size + action_size + 2 + n_step + 1


def _model_default(cls_name: str, parameter: str) -> int:
    import model

    return int(inspect.signature(getattr(model, cls_name).__init__).parameters[parameter].default)


def hidden_units(config: Any) -> int:
    """The hidden units of one actor and one critic (model.py's own widths where the config says null)."""
    widths = (config.actor_fc1 or _model_default("Actor", "fc1_units"),
              config.actor_fc2 or _model_default("Actor", "fc2_units"),
              config.critic_fc1 or _model_default("Critic", "fcs1_units"),
              config.critic_fc2 or _model_default("Critic", "fc2_units"))
    return sum(widths)


def needed(config: Any, state_size: int, action_size: int) -> tuple[int, int]:
    """Bytes the replay buffer takes, and (about) one batch's work."""
    row = row_numbers(state_size, action_size, config.n_step)
    buffer = config.buffer_size * row * FLOAT_BYTES
    batch = config.batch_size * FLOAT_BYTES * (2 * row + ACTIVATION_COPIES * hidden_units(config))
    return buffer, batch


def _meminfo_available(meminfo: Path) -> int | None:
    try:
        for line in meminfo.read_text().splitlines():
            name, _, value = line.partition(":")
            if name == "MemAvailable":
                return int(value.split()[0]) * 1024  # kB
    except (OSError, ValueError, IndexError):
        return None
    return None


def _cgroup_room(cgroup: Path) -> int | None:
    try:
        limit = (cgroup / "memory.max").read_text().strip()
        if not limit.isdigit():  # "max": no limit
            return None
        return max(0, int(limit) - int((cgroup / "memory.current").read_text().strip()))
    except (OSError, ValueError):
        return None


def available(meminfo: Path = MEMINFO, cgroup: Path = CGROUP) -> tuple[int, str] | None:
    """Bytes of memory free for this process now, and where the figure comes from: MemAvailable of
    /proc/meminfo, or the room left under this container's cgroup limit when that is less; where
    /proc/meminfo is missing, the free pages the C library reports. None when nothing says."""
    found = _meminfo_available(meminfo)
    source = "MemAvailable in /proc/meminfo"
    if found is None:
        try:
            found = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
            source = "free pages, sysconf"
        except (ValueError, OSError, AttributeError):
            found = None
    room = _cgroup_room(cgroup)
    if room is not None and (found is None or room < found):
        found, source = room, "the room under this container's memory limit (cgroup memory.max)"
    return None if found is None else (found, source)


def _gpu_available(device: str) -> tuple[int, str] | None:
    try:
        import torch

        free, _ = torch.cuda.mem_get_info(torch.device(device))
    except Exception:  # no CUDA here, or it cannot answer: the allocation will tell
        return None
    return int(free), f"free on {device}, torch.cuda.mem_get_info"


def _bytes(n: int) -> str:
    return f"{n:,} bytes ({n / 2**30:,.1f} GiB)"


def problem(config: Any, state_size: int, action_size: int, device: str = "cpu",
            room: tuple[int, str] | None = None) -> str | None:
    """Why the machine cannot hold this config's buffer and batch (one line naming the setting, the
    bytes needed and the bytes available), or None. ``room``: what is available (found when None).
    On a CUDA device the GPU must hold them too (the learner's copy of the buffer, the batch)."""
    buffer, batch = needed(config, state_size, action_size)
    places = [("this machine", room or available(), buffer + (0 if device.startswith("cuda") else batch))]
    if device.startswith("cuda"):
        places.append((device, _gpu_available(device), buffer + batch))
    for where, free, need in places:
        if free is None or need <= free[0]:
            continue
        setting = "buffer_size" if buffer >= batch else "batch_size"
        value = getattr(config, setting)
        parts = (f"the replay buffer ({config.buffer_size:,} transitions x {row_numbers(state_size, action_size, config.n_step)} "
                 f"numbers x {FLOAT_BYTES} bytes)" + (f" and a batch of {config.batch_size:,}" if batch * 100 >= need
                                                       else ""))
        return (f"--config: {setting} {value:,} cannot be held: {parts} need about {_bytes(need)}, but {where} has "
                f"{_bytes(free[0])} available ({free[1]}); expected a smaller {setting}")
    return None


__all__ = ["available", "needed", "problem", "row_numbers"]
