"""Stand-in for the course's Unity binaries (Reacher, Crawler): serves a built-in simulator to
the genuine unityagents 0.4 client over its own gRPC protocol, so old code runs unchanged.

The client launches `Reacher_Linux_NoVis/Reacher.x86_64 --port N` (or `Crawler_Linux/Crawler.x86_64`);
that script runs its scene's stand-in module (`python -m reacher.standin`, `python -m crawler.standin`),
which hands this module's `main` a `Scene`: its environment class and the course build's agent count.
The kit knows no scene: brain, academy and sizes come from the environment, and the imports go
from the scenes to the kit only. As in the original, the binary is the gRPC
*client*: it sends its output with `UnityToExternal/Exchange` and each reply carries the
next command (handshake, then reset, step or close). Errors go back with a non-200 status
and the reason in `header.message` (the client turns them into an exception), and are
printed on stderr because the genuine client throws the reason away.
"""

from __future__ import annotations

import argparse
import functools
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from envkit.unity import protocol as proto

STATUS_OK = 200
STATUS_BAD_INPUT = 400
STATUS_INTERNAL = 500
# How long to wait for the client's server on the first call: the client starts it only
# after launching us, and gives up itself after 30 s.
HANDSHAKE_TIMEOUT_S = 60.0

EnvFactory = Callable[[int, int], Any]


@dataclass(frozen=True)
class Scene:
    """A scene a stand-in binary serves: its name (in messages), its environment class, which takes
    (num_agents=, seed=, verbose=, show_viewer=) and speaks the unityagents interface, and the
    course build's agent count."""

    title: str
    environment: Callable[..., Any]
    agents: int

    def factory(self, show_viewer: bool = False) -> EnvFactory:
        """Build the environment for (num_agents, seed). The client prints the banner itself, so the
        environment stays quiet; with a viewer, reset(train_mode=False) opens a live window on a
        desktop, like the original's."""
        return functools.partial(self._build, show_viewer=show_viewer)

    def _build(self, num_agents: int, seed: int, show_viewer: bool) -> Any:
        return self.environment(num_agents=num_agents, seed=seed, verbose=False, show_viewer=show_viewer)


class StandInError(ValueError):
    """A request the stand-in refuses; its text goes back to the client."""


def _message(status: int = STATUS_OK, text: str = "") -> Any:
    msg = proto.UnityMessage()
    msg.header.status = status
    msg.header.message = text
    return msg


class StandIn:
    """Turns the client's commands into calls on one environment and back into messages.

    Kept free of gRPC so the protocol logic can be tested without a socket.
    """

    def __init__(self, env_factory: EnvFactory, num_agents: int, seed: int = 0, title: str = "Reacher") -> None:
        self._factory = env_factory
        self.title = title  # how its messages on stderr name it
        self.num_agents = num_agents
        self.seed = seed
        self.env = env_factory(num_agents, seed)
        self._needs_reset = True
        self._broken: str | None = None  # why every request is refused, once set

    def init_message(self) -> Any:
        """First message of the handshake: academy, brain and reset parameters."""
        msg = _message()
        init = msg.unity_output.rl_initialization_output
        init.name = self.env.academy_name
        init.version = proto.API_VERSION
        init.log_path = ""
        for name in self.env.brain_names:
            brain = self.env.brains[name]
            init.brain_parameters.add(
                brain_name=name,
                vector_observation_size=brain.vector_observation_space_size,
                num_stacked_vector_observations=brain.num_stacked_vector_observations,
                vector_action_size=brain.vector_action_space_size,
                vector_action_descriptions=list(brain.vector_action_descriptions) or [""] * brain.vector_action_space_size,
                vector_action_space_type=proto.SPACE_CONTINUOUS,
                vector_observation_space_type=proto.SPACE_CONTINUOUS,
                brain_type=proto.BRAIN_EXTERNAL,
            )
        params = init.environment_parameters.float_parameters
        for key, value in self.env.reset_parameters.items():
            params.add(key=key, value=float(value))
        return msg

    def set_seed(self, seed: int) -> None:
        """Apply the seed the client sends in the handshake (rebuilds the env if it differs)."""
        if seed != self.seed:
            self.env.close()
            self.seed = seed
            try:
                self.env = self._factory(self.num_agents, seed)
            except Exception as exc:  # refuse every request with the reason, never hang the client
                self._broken = f"cannot build the environment with seed {seed}: {exc}"
            self._needs_reset = True

    def handle(self, reply: Any) -> Any | None:
        """Answer one message from the client; None means the client asked us to quit."""
        if reply.header.status != STATUS_OK:
            return None  # close() sends 400
        rl_input = reply.unity_input.rl_input
        if rl_input.command == proto.QUIT:
            return None
        if self._broken is not None:
            return self._error(STATUS_INTERNAL, self._broken)
        try:
            if rl_input.command == proto.RESET:
                entries = rl_input.environment_parameters.float_parameters
                config = {e.key: e.value for e in entries}
                infos = self.env.reset(train_mode=rl_input.is_training, config=config or None)
                self._needs_reset = False
            elif rl_input.command == proto.STEP:
                actions = self._actions(rl_input)
                # The genuine client refuses to step before a reset; others may not.
                if self._needs_reset:
                    self.env.reset(train_mode=True)
                    self._needs_reset = False
                infos = self.env.step(actions)
            else:
                raise StandInError(f"unknown command {rl_input.command}")
            return self._output(infos)
        except ValueError as exc:  # bad input, from us or from the environment
            return self._error(STATUS_BAD_INPUT, str(exc))
        except Exception as exc:  # a bug: report it, since the client would wait forever
            return self._error(STATUS_INTERNAL, f"{type(exc).__name__}: {exc}")

    def _actions(self, rl_input: Any) -> np.ndarray:
        """Collect the per-agent action lists into an (n_agents, action_size) array."""
        brain = self.env.brain_names[0]
        unknown = sorted(set(rl_input.agent_actions) - set(self.env.brain_names))
        if unknown:
            raise StandInError(f"unknown brain name(s) {unknown}; this environment has {brain!r}")
        size = self.env.brains[brain].vector_action_space_size
        if brain not in rl_input.agent_actions:
            return np.zeros((self.num_agents, size))  # as Unity: no action means zeros
        per_agent = rl_input.agent_actions[brain].value
        if len(per_agent) != self.num_agents:
            raise StandInError(f"{brain} has {self.num_agents} agent(s) but actions came for {len(per_agent)}")
        for i, action in enumerate(per_agent):
            if len(action.vector_actions) != size:
                raise StandInError(
                    f"{brain} expects {size} continuous action values per agent, got {len(action.vector_actions)} for agent {i}"
                )
        return np.array([list(a.vector_actions) for a in per_agent], dtype=np.float64).reshape(self.num_agents, size)

    def _output(self, infos: dict[str, Any]) -> Any:
        msg = _message()
        rl_output = msg.unity_output.rl_output
        rl_output.global_done = False  # as the original: agents restart by themselves
        for name, info in infos.items():
            agents = rl_output.agentInfos[name].value
            obs = np.asarray(info.vector_observations, dtype=np.float32)
            prev = np.asarray(info.previous_vector_actions, dtype=np.float32)
            for i, agent_id in enumerate(info.agents):
                agents.add(
                    stacked_vector_observation=obs[i].tolist(),
                    stored_vector_actions=prev[i].tolist() if prev.size else [],
                    reward=float(info.rewards[i]),
                    done=bool(info.local_done[i]),
                    max_step_reached=bool(info.max_reached[i]),
                    id=int(agent_id),
                )
        return msg

    def _error(self, status: int, text: str) -> Any:
        print(f"{self.title} stand-in: refused: {text}", file=sys.stderr, flush=True)
        return _message(status, text)

    def close(self) -> None:
        """Release the environment."""
        self.env.close()


def _exit_when_orphaned(parent: int, period_s: float = 0.5) -> None:
    """Exit as soon as the launching process is gone, even if no call is pending."""
    while True:
        time.sleep(period_s)
        if os.getppid() != parent:
            os._exit(0)


def serve(port: int, standin: StandIn, host: str = "localhost") -> int:
    """Talk to the client listening on host:port until it closes or goes away."""
    import grpc  # imported here so tests of StandIn need no gRPC

    with grpc.insecure_channel(f"{host}:{port}") as channel:
        exchange = channel.unary_unary(
            proto.EXCHANGE_METHOD,
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=proto.UnityMessage.FromString,
        )
        try:
            # Handshake: our parameters -> the seed; an empty message -> the first command.
            reply = exchange(standin.init_message(), wait_for_ready=True, timeout=HANDSHAKE_TIMEOUT_S)
            if reply.header.status != STATUS_OK:
                return 0
            standin.set_seed(reply.unity_input.rl_initialization_input.seed)
            reply = exchange(_message())
            while True:
                answer = standin.handle(reply)
                if answer is None:
                    return 0
                # No deadline: a notebook may think for hours between steps. No
                # wait_for_ready: if the client's process dies the call fails and we exit.
                reply = exchange(answer)
        except grpc.RpcError as exc:
            code = exc.code() if hasattr(exc, "code") else None
            if code == grpc.StatusCode.DEADLINE_EXCEEDED:
                print(
                    f"{standin.title} stand-in: no unityagents client on port {port} after {HANDSHAKE_TIMEOUT_S:.0f} s",
                    file=sys.stderr,
                )
                return 1
            return 0  # the client went away: that is how a run ends without close()
        finally:
            standin.close()


def parse_args(argv: Sequence[str] | None, scene: Scene) -> argparse.Namespace:
    """Read the options the client passes (--port) and ours; ignore Unity's other flags."""
    parser = argparse.ArgumentParser(
        prog=f"{scene.title.lower()}-standin",
        description=f"Stand-in for the course's Unity {scene.title} binary, for the unityagents 0.4 client.",
        allow_abbrev=False,
    )
    parser.add_argument("--port", type=int, default=5005, help="the client's port")
    parser.add_argument("--num-agents", type=int, default=None,
                        help=f"agents (default: the course build's, {scene.agents})")
    parser.add_argument(
        "--no-viewer",
        action="store_true",
        help="never open a window (the NoVis build; also implied by -nographics/-batchmode)",
    )
    args, unity_flags = parser.parse_known_args(argv)  # Unity's own flags are ignored
    if {"-nographics", "-batchmode"} & set(unity_flags):
        args.no_viewer = True
    if args.num_agents is None:
        args.num_agents = scene.agents
    if args.num_agents < 1:
        parser.error("--num-agents must be at least 1")
    return args


def main(scene: Scene, argv: Sequence[str] | None = None, env_factory: EnvFactory | None = None) -> int:
    """Entry point of a scene's stand-in (its `python -m <scene>.standin`)."""
    args = parse_args(argv, scene)
    # Ctrl-C in a terminal reaches the whole process group: let the client handle it and
    # close us, so a script that catches KeyboardInterrupt can go on using the env.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_exit_when_orphaned, args=(os.getppid(),), daemon=True).start()
    title = scene.title
    try:
        factory = scene.factory(show_viewer=not args.no_viewer) if env_factory is None else env_factory
        standin = StandIn(factory, num_agents=args.num_agents, title=title)
    except Exception as exc:  # say why; the client then gives up after its 30 s timeout
        print(f"{title} stand-in: cannot build the environment: {exc}", file=sys.stderr)
        return 1
    return serve(args.port, standin)

