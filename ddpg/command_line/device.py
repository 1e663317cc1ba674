"""Where the networks learn: ``--device {auto,cpu,cuda}`` resolved once, and what run.json says of it.

``auto`` takes the GPU when PyTorch sees one, as the course does. On a GPU the update runs as a
captured CUDA graph (``ddpg.backends.cuda_graph``): run eagerly, PyTorch's launch overhead makes
these small networks slower there than on the CPU (docs/training.md has the figures).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

DEVICES = ("auto", "cpu", "cuda")


def resolve_device(name: str) -> torch.device:
    """The torch device for ``--device``; ValueError (one line, for the caller to print) when
    it names something else or CUDA is asked for where PyTorch has none."""
    import torch  # here, not at the top: --help of every script is answered before PyTorch loads

    if name not in DEVICES and not name.startswith("cuda:"):
        raise ValueError(f"--device: expected one of {', '.join(DEVICES)} (or cuda:N), got {name!r}")
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cpu":
        return torch.device("cpu")
    if not torch.cuda.is_available():
        why = ("this PyTorch was built without CUDA" if torch.version.cuda is None
               else "PyTorch sees no CUDA GPU (is the driver loaded? is CUDA_VISIBLE_DEVICES empty?)")
        raise ValueError(f"--device {name}: {why}; use --device cpu or auto")
    device = torch.device(name)
    if device.index is not None and device.index >= torch.cuda.device_count():
        raise ValueError(f"--device {name}: there are {torch.cuda.device_count()} CUDA device(s), numbered from 0")
    return device


def add_device_option(parser: argparse.ArgumentParser, acting_only: bool = False) -> None:
    """``--device``, the same on every script; resolve it with ``resolve_device``."""
    if acting_only:
        parser.add_argument("--device", default="cpu", metavar="{auto,cpu,cuda}",
                            help="where the networks run (default cpu: acting on a few states at a time is faster on "
                                 "the CPU than a round trip to a GPU); checkpoints load on any device")
    else:
        parser.add_argument("--device", default="auto", metavar="{auto,cpu,cuda}",
                            help="where the networks learn: 'auto' (default) takes a CUDA GPU when PyTorch sees one, "
                                 "as the course does; acting runs on the CPU either way")


def describe(device: torch.device) -> dict[str, Any]:
    """The device for run.json: its type, and on a GPU its name, memory, CUDA and driver versions."""
    import torch

    info: dict[str, Any] = {"type": device.type}
    if device.type == "cuda":
        index = device.index if device.index is not None else torch.cuda.current_device()
        props = torch.cuda.get_device_properties(index)
        info.update(name=props.name, index=index, memory_gib=round(props.total_memory / 2**30, 1),
                    capability=f"{props.major}.{props.minor}", cuda=torch.version.cuda, driver=_driver_version())
    return info


def _driver_version() -> str | None:
    """The NVIDIA driver's version, where NVML answers (it is not always installed)."""
    try:
        import pynvml  # nvidia-ml-py

        pynvml.nvmlInit()
        version = pynvml.nvmlSystemGetDriverVersion()
        return version.decode() if isinstance(version, bytes) else str(version)
    except Exception:  # no NVML package or library: the kernel module's own line, if it is readable
        pass
    try:
        with open("/proc/driver/nvidia/version") as f:  # "NVRM version: NVIDIA UNIX ... Kernel Module  580.159.03  ..."
            words = f.readline().split()
        return next((w for w in words if w[:1].isdigit() and "." in w), None)
    except OSError:
        return None


__all__ = ["DEVICES", "add_device_option", "describe", "resolve_device"]
