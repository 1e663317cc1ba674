"""Train the DDPG agent on the multi-agent Reacher (or any Gymnasium task) and record the run.

Command line::

    python train.py --out runs/seed0                    # ddpg_agent.py as it is, stops when solved
    python train.py --device cuda --out runs/gpu0       # on a GPU: the update captured as a CUDA graph
    python train.py --env MountainCarContinuous-v0 --animate --out runs/mcc   # a Gymnasium task (ddpg/tasks.py)

This file is the command line only: ``ddpg.command_line.run_config.resolve`` turns it (with the task's
settings, or the recorded run on ``--resume``) into one frozen ``RunConfig``; the loop is
``ddpg.loop.train`` and what happens around it (printing, metrics, saving, value maps) is in
``ddpg.reporting.callbacks``. From a notebook::

    from ddpg.loop import train
    scores = train(env, agent, episodes=300)            # (episodes, agents) array
"""

from __future__ import annotations

import argparse
import contextlib
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ddpg.command_line.options import build_parser  # light: --help is answered before PyTorch and MuJoCo load
from ddpg.command_line.parsing import given_options

if TYPE_CHECKING:
    from ddpg.command_line.run_config import RunConfig

__all__ = ["build_parser", "main"]


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; returns the process exit status (128 + the signal's number when a
    signal stopped training: 130 for Ctrl-C, 143 for SIGTERM)."""
    parser = build_parser()
    typed = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(typed)
    with contextlib.ExitStack() as held:  # the run folder's lock (ddpg.run_folder.run_lock), let go however main ends
        return _main(parser, args, typed, argv is None, held)


def _main(parser: argparse.ArgumentParser, args: argparse.Namespace, typed: list[str], command_line: bool,
          held: contextlib.ExitStack) -> int:
    """``main`` once the command line has parsed, holding the run folder's lock in ``held``."""
    import random

    import numpy as np
    import torch

    from ddpg.command_line import reproducible
    from ddpg.command_line.run_config import resolve
    from ddpg.run_folder import run_lock
    from ddpg.run_folder.atomic import SaveError
    from ddpg.run_folder.folder import check_out_dir
    from ddpg.run_folder.record_file import read_record
    from ddpg.run_folder.resume import resumable_record
    from ddpg.tasks import open_environment

    command = "python train.py " + " ".join(shlex.quote(a) for a in typed)
    try:
        if args.resume is not None:  # one writer: taken before the run is read (it makes no folder)
            held.enter_context(run_lock.claim(args.resume, "--resume", create=False))
    except ValueError as exc:
        parser.error(str(exc))
    try:
        record = resumable_record(args.resume) if args.resume is not None else None
    except (FileNotFoundError, ValueError) as exc:
        parser.error(f"--resume: {exc}")
    try:
        cfg = resolve(args, given_options(parser, typed), record, command)
        reproducible.ensure(cfg.reproducible, command_line=command_line)  # may relaunch: before a folder is made
        if cfg.resume is None:  # made here, and removed again if a refusal leaves it empty
            held.enter_context(run_lock.claim(cfg.out))
        check_out_dir(cfg.out, allow_existing_run=cfg.force or cfg.resume is not None)
    except (ValueError, reproducible.NotPinned) as exc:
        parser.error(str(exc))
    if cfg.unity is not None and not Path(cfg.unity).exists():
        parser.error(f"--unity: no such file: {cfg.unity}; expected the path of a Reacher Unity binary")
    torch.set_num_threads(cfg.threads)  # 1 unless --threads: small matrices run fastest on one thread per op
    torch.manual_seed(cfg.seed)  # and the global streams an edit may draw from (np.random, random): a seed repeats
    random.seed(cfg.seed)
    np.random.seed([cfg.seed & 0xFFFFFFFF, cfg.seed >> 32])  # noqa: NPY002 (seeds up to 2**63 - 1, in 32-bit words)
    try:
        # With own_episodes an agent's episode is cut at --max-t by the environment (the loop runs rounds of as many).
        own = cfg.loop.own_episodes
        env = open_environment(cfg.env_id, cfg.n_agents, cfg.seed, unity=cfg.unity, verbose=True,
                               own_episodes=own if cfg.gymnasium else None, max_episode_steps=cfg.loop.max_t if own else None)
    except (ImportError, RuntimeError) as exc:  # --unity without the unityagents client, or a failed start
        parser.error(f"--unity: {exc}")
    except ValueError as exc:  # a task DDPG cannot drive; for the built-in Reacher, REACHER_THREADS (named)
        parser.error(f"--env: {exc}" if cfg.gymnasium else str(exc))
    try:
        run(cfg, env, parser)
    except SaveError as exc:  # a full disk, a folder made read-only: the last complete save is intact
        print(f"train.py: error: {exc}; {cfg.out} keeps its last complete save: once the cause is fixed, "
              f"python train.py --resume {cfg.out} continues from it", file=sys.stderr)
        return 1
    finally:
        env.close()
    done = read_record(cfg.out)
    return 128 + done.signal if done.interrupted and done.signal is not None else 0


def run(cfg: RunConfig, env: object, parser: argparse.ArgumentParser) -> None:
    """Build the agent and the callbacks, restore a resumed run, train."""
    from ddpg.agents import make_agent
    from ddpg.command_line import memory_need
    from ddpg.loop import episodes_done, train
    from ddpg.reporting import callbacks
    from ddpg.reporting.value_maps import Recorder
    from ddpg.run_folder import agent_state
    from ddpg.run_folder.file_names import VALUE_MAP_FILE
    from ddpg.run_folder.folder import clear_run
    from ddpg.run_folder.record_file import read_record
    from ddpg.run_folder.resume import NotResumable, restore_run

    if cfg.gymnasium and cfg.loop.target_score is None:
        print(f"{cfg.env_id} has no solve threshold (pass --target): training runs {cfg.loop.episodes} episodes")
    brain = env.brains[env.brain_names[0]]  # type: ignore[attr-defined]
    sizes = (brain.vector_observation_space_size, brain.vector_action_space_size, cfg.seed)
    too_big = memory_need.problem(cfg.agent, sizes[0], sizes[1], cfg.device)  # before the buffer is allocated
    if too_big is not None:
        parser.error(too_big)
    try:
        agent = make_agent(cfg.learner, sizes, cfg.agent, cfg.device)
    except ValueError as exc:  # a learner that cannot serve this agent or device
        parser.error(str(exc))
    if cfg.force and clear_run(cfg.out):  # once the agent is built: a refused learner loses nothing
        print(f"Replacing the run in {cfg.out} (--force)")
    record, resume, saved_buffer, earlier_metrics = dict(cfg.record), None, None, None
    previous = read_record(cfg.resume) if cfg.resume is not None else None  # the run a resume continues
    record["learners"] = [*record.get("learners", []), agent_state.learner(agent)]  # each part's (an edit may change it)
    record["networks"] = agent_state.network_shapes(agent)
    if previous is not None:
        # Everything that may refuse the resume is decided before anything is said about it.
        differs = agent_state.differing_shapes(agent, previous.networks)
        if differs:
            parser.error(f"--resume: {differs}: model.py changed since the run; put those layers back as they were")
        try:
            resume, exact, resuming, earlier_metrics = restore_run(cfg.resume, agent, env, bool(cfg.loop.own_episodes))
        except NotResumable as exc:
            parser.error(f"--resume: {exc}")
        record["resumed"] = [*record["resumed"][:-1], {**record["resumed"][-1], "from_episode": episodes_done(resume),
                                                          "exact": exact}]
        done, taken = episodes_done(resume), resume.get("env_steps", 0)
        unit = "round" if cfg.loop.own_episodes else "episode"
        ended = done >= cfg.loop.episodes or (resume.get("solved_at") is not None and cfg.loop.stop_when_solved)
        unfinished = ended and not previous.finished  # killed while writing its final save
        if done >= cfg.loop.episodes and not unfinished:
            parser.error(f"--resume: the run already has {done} {unit}s; pass --episodes above that")
        if cfg.loop.max_env_steps is not None and taken + cfg.n_agents > cfg.loop.max_env_steps:
            parser.error(f"--resume: the run already took {taken:,} environment steps; pass --max-env-steps of "
                         f"at least {taken + cfg.n_agents:,}")
        print(resuming)
        saved_buffer = previous.save_buffer
        if unfinished:
            print(f"The run had ended (after {unit} {done}) but was stopped while writing its final save: "
                  "writing it now")
        elif ended:
            solved = f"{'agent-' if cfg.loop.own_episodes else ''}episode {resume['solved_at']}"
            print(f"The run solved at {solved} and stops when solved: there is nothing more to "
                  "train (pass --no-stop to train on); its final save is written again")
    steps = callbacks.standard(cfg.out, cfg.seed, cfg.quiet, cfg.progress, tensorboard_dir=cfg.tensorboard,
                               save_every=cfg.save_every, save_buffer=cfg.save_buffer, command=cfg.command,
                               record=record, earlier_metrics=earlier_metrics, saved_buffer=saved_buffer)
    recorder = None
    if cfg.animate:
        try:
            recorder = Recorder(env, agent, cfg.out, cfg.animate_every)
        except ValueError as exc:
            parser.error(f"--animate: {exc}")
        steps.insert(0, recorder)
    train(env, agent, cfg.loop, steps, resume)
    if recorder is not None and recorder.animation is not None:
        print(f"Wrote {Path(cfg.out) / VALUE_MAP_FILE} and the animation {recorder.animation}")


if __name__ == "__main__":
    status = main()
    # Everything is saved: the interpreter's last collection need not walk the ~440,000 objects that
    # PyTorch, MuJoCo and the run left (about 1.1 s of a 20-arm run's wall-clock, issue 61).
    import gc

    gc.freeze()
    sys.exit(status)
