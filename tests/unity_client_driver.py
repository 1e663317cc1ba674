"""Drives the stand-in with the genuine unityagents 0.4 client; run by
tests/test_unity_standin.py under .venv-unity/bin/python (not collected by pytest).

Usage: unity_client_driver.py SCENARIO PORT. Prints one JSON object on stdout with what
it saw; the test makes the assertions. The client logs its banner on stderr.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from communicator_objects import (
    AgentActionProto,
    UnityInput,
    UnityMessage,
    UnityRLInput,
)

warnings.filterwarnings("ignore")  # the client's protobuf 3 code warns a lot

ROOT = Path(__file__).resolve().parent.parent
BRAIN = "ReacherBrain"


class _Launch:
    """make_env for a Unity binary, through the kit's opener, envkit/unity/launch.py, imported by
    path: the client's venv has none of the project's packages (reacher/launch.py's make_env
    chooses the built-in environment or this)."""

    def __init__(self) -> None:
        spec = importlib.util.spec_from_file_location("envkit_unity_launch", ROOT / "envkit" / "unity" / "launch.py")
        self._module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(self._module)

    def make_env(self, path: str, **options: Any) -> Any:
        return self._module.open_unity(path, options.pop("seed", 0), **options)


def load_launch() -> _Launch:
    return _Launch()


def raw_exchange(env: Any, rl_input: Any) -> Any:
    """Send one input as the client does, but return the whole reply with its header
    (the client's own exchange() drops the header and raises KeyboardInterrupt)."""
    message = UnityMessage()
    message.header.status = 200
    message.unity_input.CopyFrom(UnityInput(rl_input=rl_input))
    conn = env.communicator.unity_to_external.parent_conn
    conn.send(message)
    return conn.recv()


def episode(port: int) -> dict[str, Any]:
    """A full 20-agent episode, resets with config, bad input, then close()."""
    make_env = load_launch().make_env
    env = make_env("Reacher_Linux_NoVis/Reacher.x86_64", base_port=port, no_graphics=True)
    out: dict[str, Any] = {"pid": env.proc1.pid, "brain_names": env.brain_names}
    brain = env.brains[BRAIN]
    out["sizes"] = [brain.vector_observation_space_size, brain.vector_action_space_size]
    out["reset_parameters"] = dict(env._resetParameters)

    info = env.reset(train_mode=True)[BRAIN]
    out["reset_shape"] = list(info.vector_observations.shape)
    out["agents"] = list(info.agents)
    rng = np.random.default_rng(0)
    shapes, rewards, done_steps, max_steps, prev_ok = set(), set(), [], [], True
    for t in range(1, 1002):
        actions = rng.uniform(-1, 1, (20, 4))
        info = env.step(actions)[BRAIN]
        shapes.add(info.vector_observations.shape)
        rewards.update(info.rewards)
        if any(info.local_done):
            done_steps.append([t, sum(info.local_done)])
        if any(info.max_reached):
            max_steps.append(t)
        prev_ok &= np.allclose(info.previous_vector_actions, actions, atol=1e-6)
    out["step_shapes"] = [list(s) for s in shapes]
    out["rewards"] = sorted(rewards)
    out["done_steps"] = done_steps
    out["max_reached_steps"] = max_steps
    out["previous_actions_match"] = bool(prev_ok)
    out["global_done"] = env.global_done

    # Reset parameters travel: a still goal (speed 0) big enough to touch the hanging hand.
    info = env.reset(train_mode=True, config={"goal_speed": 0.0, "goal_size": 30.0})[BRAIN]
    out["goal_speed_obs_after_config"] = sorted(set(info.vector_observations[:, 32].tolist()))
    info = env.step(np.zeros((20, 4)))[BRAIN]
    out["rewards_big_goal"] = sorted(set(info.rewards))
    info = env.reset(train_mode=True, config={"goal_size": 5.0, "goal_speed": 1.0})[BRAIN]
    out["goal_speed_obs_default_nonzero"] = int(np.count_nonzero(info.vector_observations[:, 32]))
    info = env.step(np.zeros((20, 4)))[BRAIN]
    out["rewards_default_goal"] = sorted(set(info.rewards))

    # Bad input that the genuine client does not catch itself reaches the stand-in.
    bad_step = UnityRLInput(command=0)
    for _ in range(20):
        bad_step.agent_actions[BRAIN].value.extend([AgentActionProto(vector_actions=[0.1] * 3)])
    reply = raw_exchange(env, bad_step)
    out["wrong_size"] = [reply.header.status, reply.header.message]
    bad_reset = UnityRLInput(command=1, is_training=True)
    bad_reset.environment_parameters.float_parameters["goal_colour"] = 1.0
    reply = raw_exchange(env, bad_reset)
    out["unknown_parameter"] = [reply.header.status, reply.header.message]
    try:
        env.step(np.full((20, 4), np.nan))
        out["nan_step"] = "accepted"
    except BaseException as exc:  # KeyboardInterrupt is the genuine client's own; make_env names the reason
        out["nan_step"] = f"{type(exc).__name__}: {exc}"
    try:  # the client itself refuses unknown parameters before sending
        env.reset(config={"goal_colour": 1.0})
        out["client_unknown_parameter"] = "accepted"
    except Exception as exc:  # record whatever the client raises
        out["client_unknown_parameter"] = f"{type(exc).__name__}: {exc}"
    # The stand-in keeps serving after refusing.
    info = env.step(np.zeros((20, 4)))[BRAIN]
    out["step_after_errors"] = list(info.vector_observations.shape)

    proc = env.proc1
    env.close()
    out["returncode_after_close"] = proc.wait(timeout=10)

    # A second environment in the same process (make_env repairs the client's pipe).
    env = make_env(
        "Reacher_One_Linux_NoVis/Reacher_One_Linux_NoVis.x86_64",
        base_port=port,
        worker_id=1,
    )
    out["one_agent_pid"] = env.proc1.pid
    info = env.reset(train_mode=True)[BRAIN]
    out["one_agent_shapes"] = [list(info.vector_observations.shape)]
    info = env.step([0.5, -0.5, 0.25, 1.0])[BRAIN]  # the flat list form
    out["one_agent_shapes"].append(list(info.vector_observations.shape))
    out["one_agent_previous_actions"] = info.previous_vector_actions.tolist()
    proc = env.proc1
    env.close()
    out["one_agent_returncode"] = proc.wait(timeout=10)
    return out


def abandon(port: int) -> dict[str, Any]:
    """Open, reset, then die without close(), as a crashed notebook kernel would."""
    env = load_launch().make_env("Reacher_Linux_NoVis/Reacher.x86_64", base_port=port)
    env.reset(train_mode=True)
    print(json.dumps({"pid": env.proc1.pid}), flush=True)
    os._exit(0)  # no atexit handlers, no close()


def nan_uncaught(port: int) -> dict[str, Any]:
    """A NaN action nobody catches: the process must end with the reason, not hang at exit."""
    env = load_launch().make_env("Reacher_Linux_NoVis/Reacher.x86_64", base_port=port)
    env.reset(train_mode=True)
    print(json.dumps({"pid": env.proc1.pid}), flush=True)
    env.step(np.full((20, 4), np.nan))
    return {"nan_step": "accepted"}


def no_close(port: int) -> dict[str, Any]:
    """Return normally without close(): the process must still exit (make_env's fix)."""
    env = load_launch().make_env("Reacher_Linux_NoVis/Reacher.x86_64", base_port=port)
    env.reset(train_mode=True)
    env.step(np.zeros((20, 4)))
    return {"pid": env.proc1.pid}


def wire_shape(desc: Any) -> dict[str, Any]:
    """What travels on the wire for a message: per field its number, type, whether it
    repeats, and the shape of its message or the values of its enum (names of types do
    not travel). tests/test_unity_standin.py computes the same for the stand-in."""
    shape: dict[str, Any] = {}
    for f in desc.fields:
        if f.message_type is not None:
            inner: Any = wire_shape(f.message_type)
        elif f.enum_type is not None:
            inner = [[v.name, v.number] for v in f.enum_type.values]
        else:
            inner = None
        shape[f.name] = [f.number, f.type, f.label == f.LABEL_REPEATED, inner]
    return shape


def descriptors(_port: int) -> dict[str, Any]:
    """The genuine client's message layout and the gRPC method it serves."""
    import communicator_objects

    service = communicator_objects.unity_to_external_pb2.DESCRIPTOR.services_by_name["UnityToExternal"]
    method = service.methods_by_name["Exchange"]
    return {
        "method": f"/{service.full_name}/{method.name}",
        "UnityMessage": wire_shape(UnityMessage.DESCRIPTOR),
    }


if __name__ == "__main__":
    scenario, port = sys.argv[1], int(sys.argv[2])
    os.chdir(ROOT)
    result = {
        "episode": episode,
        "abandon": abandon,
        "no_close": no_close,
        "nan_uncaught": nan_uncaught,
        "descriptors": descriptors,
    }[scenario](port)
    print(json.dumps(result))
