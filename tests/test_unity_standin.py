"""The stand-in for the Unity Reacher binary (issue 5).

Fast tests check the protocol logic against a fake environment. The end-to-end tests run
the genuine unityagents 0.4 client from .venv-unity (`make unity`) in a subprocess with a
timeout, so a hang fails instead of blocking; they skip without .venv-unity, except in CI
(CI=true), where its absence is a failure.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from envkit.unity import protocol as proto
from envkit.unity.launch import is_standin
from envkit.unity.standin import StandIn, parse_args
from reacher.launch import make_env
from reacher.standin import SCENE

ROOT = Path(__file__).resolve().parent.parent
UNITY_PYTHON = ROOT / ".venv-unity" / "bin" / "python"
DRIVER = Path(__file__).resolve().parent / "unity_client_driver.py"
F32 = [float(np.float32(k * 0.01)) for k in range(5)]  # 0, 0.01, ..., 0.04 as float32


# ----------------------------------------------------------------- protocol logic
class FakeEnv:
    """The few parts of ReacherEnvironment the stand-in uses, with visible calls."""

    def __init__(self, num_agents: int, seed: int) -> None:
        self.num_agents, self.seed = num_agents, seed
        self.brain_names = ["ReacherBrain"]
        self.academy_name = "Academy"
        self.brains = {
            "ReacherBrain": SimpleNamespace(
                vector_observation_space_size=33,
                num_stacked_vector_observations=1,
                vector_action_space_size=4,
                vector_action_descriptions=["", "", "", ""],
            )
        }
        self.reset_parameters = {"goal_speed": 1.0, "goal_size": 5.0}
        self.calls: list[tuple[str, Any]] = []
        self.closed = False

    def _info(self, actions: np.ndarray) -> dict[str, Any]:
        n = self.num_agents
        return {
            "ReacherBrain": SimpleNamespace(
                vector_observations=np.full((n, 33), 0.5),
                rewards=[0.04] * n,
                local_done=[True] * n,
                max_reached=[False] * n,
                agents=list(range(n)),
                previous_vector_actions=actions,
            )
        }

    def reset(self, train_mode: bool = True, config: dict | None = None) -> dict[str, Any]:
        for key in config or {}:
            if key not in self.reset_parameters:
                raise ValueError(f"unknown reset parameter {key!r}")
        self.calls.append(("reset", (train_mode, config)))
        return self._info(np.zeros((self.num_agents, 4)))

    def step(self, actions: np.ndarray) -> dict[str, Any]:
        self.calls.append(("step", actions))
        return self._info(actions)

    def close(self) -> None:
        self.closed = True


def command(cmd: int, status: int = 200) -> Any:
    msg = proto.UnityMessage()
    msg.header.status = status
    msg.unity_input.rl_input.command = cmd
    return msg


def step_message(n_agents: int, size: int = 4) -> Any:
    msg = command(proto.STEP)
    actions = msg.unity_input.rl_input.agent_actions["ReacherBrain"].value
    for i in range(n_agents):
        actions.add(vector_actions=[0.25 * i] * size)
    return msg


def roundtrip(msg: Any) -> Any:
    """What the other side parses: catches anything that does not serialise."""
    return proto.UnityMessage.FromString(msg.SerializeToString())


def test_handshake_declares_reacher_as_the_client_expects() -> None:
    init = roundtrip(StandIn(FakeEnv, 20).init_message()).unity_output.rl_initialization_output
    assert (init.name, init.version) == ("Academy", "API-4")
    (brain,) = init.brain_parameters
    assert brain.brain_name == "ReacherBrain"
    assert (brain.vector_observation_size, brain.vector_action_size) == (33, 4)
    assert brain.num_stacked_vector_observations == 1
    assert list(brain.vector_action_descriptions) == ["", "", "", ""]
    assert brain.vector_action_space_type == brain.vector_observation_space_type == 1
    assert brain.brain_type == 2  # External: otherwise the client's step() ignores it
    entries = init.environment_parameters.float_parameters
    # The banner of the real binary lists goal_speed first.
    assert [(e.key, e.value) for e in entries] == [
        ("goal_speed", 1.0),
        ("goal_size", 5.0),
    ]


def test_seed_from_handshake_rebuilds_env_only_when_it_differs() -> None:
    standin = StandIn(FakeEnv, 3, seed=0)
    first = standin.env
    standin.set_seed(0)
    assert standin.env is first
    standin.set_seed(7)
    assert first.closed and standin.env.seed == 7


def test_reset_passes_train_mode_and_config() -> None:
    standin = StandIn(FakeEnv, 2)
    msg = command(proto.RESET)
    msg.unity_input.rl_input.is_training = False
    msg.unity_input.rl_input.environment_parameters.float_parameters.add(key="goal_size", value=8.0)
    out = roundtrip(standin.handle(msg))
    assert out.header.status == 200
    assert standin.env.calls == [("reset", (False, {"goal_size": 8.0}))]
    rl_output = out.unity_output.rl_output
    assert not rl_output.global_done
    agents = rl_output.agentInfos["ReacherBrain"].value
    assert [a.id for a in agents] == [0, 1]
    assert len(agents[0].stacked_vector_observation) == 33
    assert agents[0].done and not agents[0].max_step_reached
    assert agents[0].reward == pytest.approx(0.04) and agents[0].reward != 0.04  # float32


def test_step_collects_actions_per_agent_and_resets_first_if_needed() -> None:
    standin = StandIn(FakeEnv, 3)
    out = roundtrip(standin.handle(step_message(3)))
    assert out.header.status == 200
    (reset, (_, actions)) = standin.env.calls
    assert reset[0] == "reset"
    np.testing.assert_allclose(actions, [[0.0] * 4, [0.25] * 4, [0.5] * 4])
    stored = out.unity_output.rl_output.agentInfos["ReacherBrain"].value[2].stored_vector_actions
    assert list(stored) == [0.5] * 4


@pytest.mark.parametrize(
    ("msg", "reason"),
    [
        (
            step_message(3, size=3),
            "expects 4 continuous action values per agent, got 3",
        ),
        (step_message(2), "has 3 agent(s) but actions came for 2"),
    ],
)
def test_bad_actions_are_refused_with_the_reason(msg: Any, reason: str, capsys: Any) -> None:
    standin = StandIn(FakeEnv, 3)
    out = roundtrip(standin.handle(msg))
    assert out.header.status == 400 and reason in out.header.message
    assert reason in capsys.readouterr().err  # the genuine client drops the message
    assert not any(name == "step" for name, _ in standin.env.calls)


def test_environment_errors_are_forwarded() -> None:
    standin = StandIn(FakeEnv, 1)
    msg = command(proto.RESET)
    msg.unity_input.rl_input.environment_parameters.float_parameters.add(key="x", value=1)
    out = standin.handle(msg)
    assert out.header.status == 400 and "unknown reset parameter 'x'" in out.header.message


def test_failed_rebuild_refuses_every_request_instead_of_hanging() -> None:
    def factory(n: int, seed: int) -> FakeEnv:
        if seed == 3:
            raise RuntimeError("no such seed")
        return FakeEnv(n, seed)

    standin = StandIn(factory, 1)
    standin.set_seed(3)
    out = standin.handle(command(proto.RESET))
    assert out.header.status == 500 and "seed 3: no such seed" in out.header.message


def test_close_and_quit_end_the_loop() -> None:
    standin = StandIn(FakeEnv, 1)
    assert standin.handle(command(proto.STEP, status=400)) is None  # what close() sends
    assert standin.handle(command(proto.QUIT)) is None


def test_unity_command_line_flags_are_accepted() -> None:
    args = parse_args(["-nographics", "-batchmode", "--port", "5011", "--num-agents", "1"], SCENE)
    assert (args.port, args.num_agents, args.no_viewer) == (5011, 1, True)
    assert not parse_args(["--port", "5005"], SCENE).no_viewer
    assert parse_args([], SCENE).num_agents == 20  # the scene's own count


def test_the_kit_imports_no_scene() -> None:
    """envkit knows no scene: the scenes import the kit, never the other way round (a scene's
    stand-in module hands the kit its Scene)."""
    import ast

    for path in (ROOT / "envkit").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            strings = [node.value] if isinstance(node, ast.Constant) and isinstance(node.value, str) else []
            for name in names + strings:
                assert name.split(".")[0] not in {"reacher", "crawler", "ddpg"} or " " in name, \
                    f"{path.relative_to(ROOT)} names the scene or agent module {name!r}"


def test_launchers_are_executable_stand_ins() -> None:
    for name in (
        "Reacher_Linux_NoVis/Reacher.x86_64",
        "Reacher_Linux/Reacher.x86_64",
        "Reacher_One_Linux_NoVis/Reacher_One_Linux_NoVis.x86_64",
    ):
        path = ROOT / name
        assert os.access(path, os.X_OK), f"{name} must be executable"
        assert is_standin(path)


def test_make_env_without_unityagents_says_what_to_do() -> None:
    if importlib.util.find_spec("unityagents") is not None:
        pytest.skip("unityagents is importable here")
    with pytest.raises(RuntimeError, match=r"make unity.*make_env\('builtin'\)"):
        make_env("Reacher_Linux_NoVis/Reacher.x86_64")


# -------------------------------------------------- end to end, genuine client
def _need_unity_client() -> None:
    if UNITY_PYTHON.exists():
        return
    message = f"{UNITY_PYTHON} is missing: run `make unity` to install the genuine client"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message)
    pytest.skip(message)


def _free_port_pair() -> int:
    """A base port whose next port is free too (the driver opens worker_id 0 and 1)."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("", 0))
            port = s.getsockname()[1]
        with socket.socket() as s:
            try:
                s.bind(("", port + 1))
            except OSError:
                continue
        return port
    raise RuntimeError("no free port pair")


def _drive(scenario: str, timeout: float) -> subprocess.CompletedProcess[str]:
    _need_unity_client()
    return subprocess.run(
        [str(UNITY_PYTHON), str(DRIVER), scenario, str(_free_port_pair())],
        check=False,  # the tests read returncode and stderr themselves
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )


def _gone(pid: int, within_s: float) -> bool:
    """True once pid has exited (a zombie counts: it runs no more)."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().split(")")[-1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.1)
    return False


@pytest.fixture(scope="module")
def episode() -> tuple[dict[str, Any], str]:
    """One run of the genuine client: full episode, config resets, bad input, close()."""
    done = _drive("episode", timeout=100)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


@pytest.mark.timeout(120)
def test_banner_printed_by_the_genuine_client(episode: tuple[dict, str]) -> None:
    _, log = episode
    lines = [line.strip() for line in log.splitlines()]
    expected = [
        "Unity Academy name: Academy",
        "Number of Brains: 1",
        "Number of External Brains : 1",
        "Lesson number : 0",
        "goal_speed -> 1.0",
        "goal_size -> 5.0",
        "Unity brain name: ReacherBrain",
        "Number of Visual Observations (per agent): 0",
        "Vector Observation space type: continuous",
        "Vector Observation space size (per agent): 33",
        "Number of stacked Vector Observation: 1",
        "Vector Action space type: continuous",
        "Vector Action space size (per agent): 4",
    ]
    positions = [lines.index(line) for line in expected]  # ValueError names a missing line
    assert positions == sorted(positions)


@pytest.mark.timeout(120)
def test_full_random_episode_through_the_protocol(episode: tuple[dict, str]) -> None:
    out, _ = episode
    assert out["brain_names"] == ["ReacherBrain"] and out["sizes"] == [33, 4]
    assert out["reset_parameters"] == {"goal_speed": 1.0, "goal_size": 5.0}
    assert out["reset_shape"] == [20, 33] and out["agents"] == list(range(20))
    assert out["step_shapes"] == [[20, 33]]
    assert set(out["rewards"]) <= set(F32)  # multiples of 0.01 up to 0.04, as float32
    assert out["done_steps"] == [[1000, 20]]  # every agent done at decision 1000 only
    assert out["max_reached_steps"] == [1000]
    assert out["previous_actions_match"]
    assert out["global_done"] is False  # step 1001 went through: agents restarted


@pytest.mark.timeout(120)
def test_reset_config_reaches_the_environment(episode: tuple[dict, str]) -> None:
    out, _ = episode
    assert out["goal_speed_obs_after_config"] == [0.0]  # goal_speed 0: still goals
    assert out["rewards_big_goal"] == [F32[4]]  # goal_size 30 covers the hanging hand
    assert out["goal_speed_obs_default_nonzero"] == 20
    assert out["rewards_default_goal"] == [0.0]


@pytest.mark.timeout(120)
def test_bad_input_reaches_the_client_with_the_reason(
    episode: tuple[dict, str],
) -> None:
    out, log = episode
    status, reason = out["wrong_size"]
    assert status != 200 and "expects 4 continuous action values per agent, got 3" in reason
    status, reason = out["unknown_parameter"]
    assert status != 200 and "unknown reset parameter 'goal_colour'" in reason
    # The genuine client raises a bare KeyboardInterrupt on a non-200 status and drops the reason
    # (the stand-in prints it too); make_env's client raises UnityEnvironmentException with it.
    assert out["nan_step"].startswith("UnityEnvironmentException: ") and "must be finite" in out["nan_step"]
    assert "Reacher stand-in: refused: actions must be finite" in log
    assert "not a valid parameter" in out["client_unknown_parameter"]
    assert out["step_after_errors"] == [20, 33]  # still serving


@pytest.mark.timeout(120)
def test_close_leaves_no_process_and_one_agent_build_works(
    episode: tuple[dict, str],
) -> None:
    out, _ = episode
    assert out["returncode_after_close"] is not None
    assert _gone(out["pid"], within_s=5) and _gone(out["one_agent_pid"], within_s=5)
    assert out["one_agent_shapes"] == [[1, 33], [1, 33]]
    assert out["one_agent_previous_actions"] == [[0.5, -0.5, 0.25, 1.0]]
    assert out["one_agent_returncode"] is not None


@pytest.mark.timeout(60)
def test_stand_in_exits_when_the_client_dies_without_close() -> None:
    done = _drive("abandon", timeout=45)
    assert done.returncode == 0, done.stderr[-3000:]
    pid = json.loads(done.stdout.strip().splitlines()[-1])["pid"]
    assert _gone(pid, within_s=10), f"stand-in {pid} outlived its client"


@pytest.mark.timeout(60)
def test_script_without_close_still_exits() -> None:
    # Without make_env's fix the genuine client hangs here at interpreter exit.
    done = _drive("no_close", timeout=30)
    assert done.returncode == 0, done.stderr[-3000:]
    pid = json.loads(done.stdout.strip().splitlines()[-1])["pid"]
    assert _gone(pid, within_s=10), f"stand-in {pid} outlived its client"


@pytest.mark.timeout(60)
def test_messages_match_the_genuine_clients_wire_format() -> None:
    done = _drive("descriptors", timeout=45)
    assert done.returncode == 0, done.stderr[-3000:]
    genuine = json.loads(done.stdout.strip().splitlines()[-1])
    assert genuine["method"] == proto.EXCHANGE_METHOD
    assert _wire_shape(proto.UnityMessage.DESCRIPTOR) == genuine["UnityMessage"]


def _wire_shape(desc: Any) -> dict[str, Any]:
    """As wire_shape in unity_client_driver.py, for protobuf 7 descriptors."""
    shape: dict[str, Any] = {}
    for f in desc.fields:
        if f.message_type is not None:
            inner: Any = _wire_shape(f.message_type)
        elif f.enum_type is not None:
            inner = [[v.name, v.number] for v in f.enum_type.values]
        else:
            inner = None
        shape[f.name] = [f.number, f.type, f.is_repeated, inner]
    return shape


@pytest.mark.timeout(60)
def test_an_uncaught_refusal_ends_the_script_with_the_reason() -> None:
    """A NaN action nobody catches: UnityEnvironmentException naming the reason, and the process
    exits (the genuine client's bare KeyboardInterrupt named nothing, and exit hung)."""
    try:
        done = _drive("nan_uncaught", timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail("the client hung at exit after the refusal")
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("unityagents.exception.UnityEnvironmentException:") and "must be finite" in last
    pid = json.loads(done.stdout.strip().splitlines()[-1])["pid"]
    assert _gone(pid, within_s=10), f"stand-in {pid} outlived its client"
