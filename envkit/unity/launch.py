"""Open a Unity binary (the real one or this project's stand-in, of any scene) through the genuine
unityagents 0.4 client, with the client's flaws mended: a second environment in one process, a
refusal's reason, and the hang at exit without close(). A scene's own launcher (reacher/launch.py)
chooses between its built-in environment and this. It imports nothing of the project, so a client's
venv can load it by path."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Any

PROJECT_ROOT = Path(__file__).resolve().parents[2]
_STANDIN_MARK = b"envkit/unity/standin.sh"


def is_standin(path: str | os.PathLike[str]) -> bool:
    """True when path is one of this project's stand-in scripts, not a Unity build."""
    try:
        with open(path, "rb") as file:
            return _STANDIN_MARK in file.read(4096)
    except OSError:
        return False


def _resolve(path: str | os.PathLike[str]) -> str:
    """The path as given if it exists from here, else relative to the project root, so
    'Reacher_Linux_NoVis/Reacher.x86_64' also works from a notebook in a subfolder."""
    given = Path(path).expanduser()
    if given.exists() or given.is_absolute():
        return str(given)
    in_project = PROJECT_ROOT / given
    return str(in_project) if in_project.exists() else str(given)


def _reopenable(rpc_communicator: Any) -> None:
    """Work around the client's 'one environment per process' bug.

    unityagents 0.4 keeps the pipe between its gRPC thread and the caller in a class
    attribute and closes it in close(), so a second UnityEnvironment in the same process
    fails with "handle is closed". A fresh pipe pair makes the next one work.
    """
    from multiprocessing import Pipe

    servicer = getattr(rpc_communicator, "UnityToExternalServicerImplementation", None)
    conn = getattr(servicer, "parent_conn", None)
    if servicer is not None and conn is not None and conn.closed:
        servicer.parent_conn, servicer.child_conn = Pipe()


def open_unity(name_or_path: str | os.PathLike[str], seed: int = 0, *, worker_id: int = 0, base_port: int = 5005,
               no_graphics: bool = False, builtin_hint: str = "") -> Any:
    """`unityagents.UnityEnvironment(file_name=path, worker_id, base_port, seed, no_graphics)`, the
    path as given or relative to the project. The binary fixes the number of agents. Give concurrent
    runs different worker_ids: the client does not notice two runs sharing a port. Without the
    client, the error says how to get it (and, for a stand-in, `builtin_hint`: how to get the same
    environment directly)."""
    path = _resolve(name_or_path)
    try:
        import unityagents
        from unityagents import rpc_communicator
    except ImportError as exc:
        hint = f" It is this project's stand-in for the built-in simulator: {builtin_hint}" if builtin_hint and is_standin(path) else ""
        raise RuntimeError(
            f"Opening the Unity binary {path} needs the unityagents 0.4 client, which "
            f"this Python ({sys.executable}) cannot import ({exc}). Run `make unity` and "
            f"use .venv-unity/bin/python (or a venv of your own with unityagents)." + hint
        ) from exc
    _reopenable(rpc_communicator)
    env = unityagents.UnityEnvironment(
        file_name=path,
        worker_id=worker_id,
        base_port=base_port,
        seed=seed,
        no_graphics=no_graphics,
    )
    _close_before_thread_shutdown(env)
    _refusals_raise(env, unityagents.UnityEnvironmentException)
    return env


def _refusals_raise(env: Any, exception: type[Exception]) -> None:
    """Turn a request the binary refuses into ``exception`` with its reason.

    The client's exchange() drops a non-200 reply's header, and step() or reset() then raise a
    bare KeyboardInterrupt: a NaN action looked like Ctrl-C. The stand-in puts the reason in
    the header (and on stderr); this exchange, the client's own otherwise, keeps it.
    """
    communicator = env.communicator

    def exchange(inputs: Any) -> Any:
        from communicator_objects import UnityMessage

        message = UnityMessage()
        message.header.status = 200
        message.unity_input.CopyFrom(inputs)
        conn = communicator.unity_to_external.parent_conn
        conn.send(message)
        output = conn.recv()
        if output.header.status != 200:
            reason = output.header.message or f"status {output.header.status}, no reason given"
            raise exception(f"the environment refused the request: {reason}")
        return output.unity_output

    communicator.exchange = exchange


def _close_before_thread_shutdown(env: Any) -> None:
    """Work around the client's hang at exit when close() was never called.

    The client's gRPC worker thread waits on its pipe for the next command. At exit,
    Python joins thread-pool workers before it runs atexit handlers, so the client's own
    atexit close() never comes and the process hangs. Handlers registered with
    threading._register_atexit run in reverse order before that join, so this close()
    comes first. (Private API, present in Python 3.9-3.13; skipped if absent.)
    """
    register = getattr(threading, "_register_atexit", None)
    if register is not None:
        register(env._close)  # safe twice: the client's own atexit close() is a no-op then
