"""Train the DDPG agent on the multi-agent Reacher (or any Gymnasium task) and record the run.

Command line::

    python train.py --out runs/seed0                    # fastest learner for the device, stops when solved
    python train.py --device cuda --out runs/gpu0       # on a GPU: the update captured as a CUDA graph
    python train.py --learner readable --out runs/r0    # the plain-autograd agent of ddpg_agent.py
    python train.py --env MountainCarContinuous-v0 --animate --out runs/mcc   # a Gymnasium task (ddpg/tasks.py)

This file is the command line only: ``ddpg.run_config.resolve`` turns it (with the task's
settings, or the recorded run on ``--resume``) into one frozen ``RunConfig``; the loop is
``ddpg.loop.train`` and what happens around it (printing, metrics, saving, value maps) is in
``ddpg.callbacks``. From a notebook::

    from ddpg.loop import train
    scores = train(env, agent, episodes=300)            # (episodes, agents) array
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any

import torch

from ddpg import callbacks, reproducible, rundir
from ddpg.agents import LEARNERS, make_agent
from ddpg.cli import finite_float, finite_float_or_off, given_options, json_object, non_negative_int, path_text, positive_int, random_seed
from ddpg.device import add_device_option
from ddpg.loop import GOOD_SCORE, GOOD_UPDATES, train
from ddpg.run_config import UNSET, RunConfig, resolve
from ddpg.solved import SOLVE_SCORE
from ddpg.tasks import DEFAULT_ENV, open_environment
from ddpg.value_maps import Recorder
from reacher.environment import EPISODE_DECISIONS

__all__ = ["build_parser", "main"]


# ----------------------------------------------------------------------------- CLI
def build_parser() -> argparse.ArgumentParser:
    """Command-line options."""
    p = argparse.ArgumentParser(allow_abbrev=False,
        description="Train DDPG on the multi-agent Reacher; writes checkpoints, scores.csv, "
                    "run.json and scores.png into --out.")
    p.add_argument("--episodes", type=positive_int, default=None,
                   help="maximum number of episodes (default 300; a Gymnasium task's from ddpg.tasks.TASKS; "
                        "on --resume, the run's own)")
    p.add_argument("--max-episodes", type=positive_int, dest="episodes",
                   help="alias of --episodes")
    p.add_argument("--max-env-steps", type=positive_int, default=None, metavar="N",
                   help="also stop before the environment steps (every arm's or copy's counted) would pass N, "
                        "dropping the unfinished episode, as Stable-Baselines3's learn(total_timesteps) does "
                        "(default: none; on --resume, the run's own)")
    p.add_argument("--seed", type=random_seed, default=0, help="random seed, 0 to 2**63 - 1 (default 0)")
    p.add_argument("--out", type=path_text, default="runs/latest",
                   help="output folder (default runs/latest); one that holds a run needs --resume or --force")
    p.add_argument("--resume", metavar="DIR", type=path_text, default=None,
                   help="continue the run in DIR from its last complete save, with its own settings and budgets "
                        "(--episodes, --max-env-steps, --no-stop, --save-every, --save-buffer or --no-save-buffer and "
                        "the output options may be given; any other option is refused). Exactly as if never stopped after Ctrl-C or "
                        "SIGTERM, or with --save-buffer")
    p.add_argument("--force", action="store_true", help="replace the run already in --out")
    p.add_argument("--save-every", type=positive_int, default=10,
                   help="write the run folder and the full training state every N episodes (default 10; "
                        "on --resume, the run's own)")
    p.add_argument("--save-buffer", action=argparse.BooleanOptionalAction, default=False,
                   help="also save the replay buffer's filled part, so --resume continues exactly; about "
                        "290 MB at one million transitions (the default buffer is full after 50 episodes "
                        "of 20 arms); off by default; on --resume, as the run's last save did "
                        "(--no-save-buffer turns it off)")
    add_device_option(p)
    p.add_argument("--learner", choices=LEARNERS, default="auto",
                   help="how updates run (ddpg/backends): 'auto' (default) the fastest for the device and network; "
                        "'fast' the hand-written two-thread CPU update; 'graph' the update captured as a CUDA graph; "
                        "'graph-overlap' the same, the environment stepping while the GPU learns (acting one "
                        "learning step behind: a different run); 'readable' the plain-autograd update of "
                        "ddpg_agent.py (same update, slower)")
    p.add_argument("--threads", type=int, choices=(1, 2), default=2,
                   help="fast learner: split each update over 2 threads (default) or run it on 1, "
                        "faster when another job keeps the second core busy (same numbers)")
    p.add_argument("--env", default=DEFAULT_ENV, metavar="ID",
                   help="'reacher' (default): the built-in 20-arm Reacher; or any Gymnasium environment id "
                        "with a Box action space, e.g. MountainCarContinuous-v0, Pendulum-v1, Reacher-v5, "
                        "UnityReacher-v0 (per-task settings: ddpg.tasks.TASKS)")
    p.add_argument("--num-envs", type=positive_int, default=None,
                   help="--env ID: copies of the task stepped together, one scores column each (default 1)")
    p.add_argument("--agents", type=positive_int, default=None,
                   help="number of arms in the built-in environment (default 20; 1 is the course's "
                        "one-arm version, trained with its own settings: ddpg.tasks.REACHER_ONE_ARM)")
    p.add_argument("--max-t", type=positive_int, default=None,
                   help=f"decisions per episode (default: the task's limit; Reacher: {EPISODE_DECISIONS}, "
                        "which is also its maximum)")
    p.add_argument("--no-stop", action="store_true",
                   help="keep training after the task is solved (on --resume, a run that had it keeps it)")
    p.add_argument("--target", type=finite_float, default=None,
                   help=f"solve threshold of the 100-episode average (default: Reacher {SOLVE_SCORE:g}; "
                        "a Gymnasium task's from ddpg.tasks.TASKS or its spec's reward_threshold)")
    p.add_argument("--config", type=json_object, default={},
                   help="JSON object of DDPGConfig overrides (or variants.VariantConfig keys: replay, "
                        "exploration, batch_norm, preset, ...), or a path to a JSON file")
    p.add_argument("--good-score", type=finite_float_or_off, default=UNSET,
                   help=f"schedule: after an episode scoring at least this (mean over agents), "
                        f"make --good-updates updates per learning step (default {GOOD_SCORE:g} on Reacher, "
                        "off on Gymnasium tasks; 'off' turns it off)")
    p.add_argument("--good-updates", type=non_negative_int, default=GOOD_UPDATES,
                   help=f"schedule: updates per learning step while the policy is good "
                        f"(default {GOOD_UPDATES}: learning pauses)")
    p.add_argument("--unity", metavar="PATH", default=None,
                   help="use the Unity binary at PATH (needs unityagents) instead of the "
                        "built-in environment")
    p.add_argument("--animate", action="store_true",
                   help="a task with a 2-D observation (MountainCarContinuous-v0): draw Q(s, mu(s)) and mu(s) "
                        "with the episode's trajectory every --animate-every episodes into value_maps/, and "
                        "at the end value_map.png and the animation value_maps.mp4 (GIF without ffmpeg)")
    p.add_argument("--animate-every", type=positive_int, default=5,
                   help="--animate: draw every N episodes (and the first and the last; default 5)")
    p.add_argument("--tensorboard", metavar="DIR", default=None,
                   help="also write the per-episode metrics (scores, losses, mean Q, exploration, updates/s; "
                        "always in metrics.csv) as TensorBoard event files into DIR: tensorboard --logdir DIR")
    p.add_argument("--reproducible", action="store_true",
                   help="pin the math libraries' code paths (AVX2) and thread counts, so the same seed gives the "
                        "same scores on any x86-64 CPU with AVX2 (ddpg/reproducible.py; the program restarts itself "
                        "pinned); without it a run reproduces only on the machine that made it")
    p.add_argument("--quiet", action="store_true", help="no per-episode lines")
    p.add_argument("--no-progress", action="store_true", help="no tqdm progress bar")
    return p


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; returns the process exit status (128 + the signal's number when a
    signal stopped training: 130 for Ctrl-C, 143 for SIGTERM)."""
    parser = build_parser()
    typed = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(typed)
    command = "python train.py " + " ".join(shlex.quote(a) for a in typed)
    try:
        record = rundir.resumable_record(args.resume) if args.resume is not None else None
    except (FileNotFoundError, ValueError) as exc:
        parser.error(f"--resume: {exc}")
    try:
        cfg = resolve(args, given_options(parser, typed), record, command)
        reproducible.ensure(cfg.reproducible, command_line=argv is None)
        rundir.check_out_dir(cfg.out, allow_existing_run=cfg.force or cfg.resume is not None)
    except (ValueError, reproducible.NotPinned) as exc:
        parser.error(str(exc))
    if cfg.unity is not None and not Path(cfg.unity).exists():
        parser.error(f"--unity: no such file: {cfg.unity}; expected the path of a Reacher Unity binary")
    torch.set_num_threads(1)  # small matrices: one thread per op is fastest on a small CPU
    torch.manual_seed(cfg.seed)
    try:
        env = open_environment(cfg.env_id, cfg.n_agents, cfg.seed, unity=cfg.unity, verbose=True)
    except (ImportError, RuntimeError) as exc:  # --unity without the unityagents client, or a failed start
        parser.error(f"--unity: {exc}")
    except ValueError as exc:  # a task DDPG cannot drive
        parser.error(f"--env: {exc}")
    try:
        run(cfg, env, parser)
    except rundir.SaveError as exc:  # a full disk, a folder made read-only: the last complete save is intact
        print(f"train.py: error: {exc}; {cfg.out} keeps its last complete save: once the cause is fixed, "
              f"python train.py --resume {cfg.out} continues from it", file=sys.stderr)
        return 1
    finally:
        env.close()
    done = rundir.read_record(cfg.out)
    return 128 + done.signal if done.interrupted and done.signal is not None else 0


def run(cfg: RunConfig, env: object, parser: argparse.ArgumentParser) -> None:
    """Build the agent and the callbacks, restore a resumed run, train."""
    if cfg.gymnasium and cfg.loop.target_score is None:
        print(f"{cfg.env_id} has no solve threshold (pass --target): training runs {cfg.loop.episodes} episodes")
    brain = env.brains[env.brain_names[0]]  # type: ignore[attr-defined]
    sizes = (brain.vector_observation_space_size, brain.vector_action_space_size, cfg.seed)
    try:
        agent = make_agent(cfg.learner, sizes, cfg.agent, cfg.threads, cfg.device)
    except ValueError as exc:  # a learner that cannot serve this agent or device
        parser.error(str(exc))
    if cfg.force and rundir.clear_run(cfg.out):  # once the agent is built: a refused learner loses nothing
        print(f"Replacing the run in {cfg.out} (--force)")
    record, resume, saved_buffer = dict(cfg.record), None, None
    if cfg.resume is not None:
        # Everything that may refuse the resume is decided before anything is said about it.
        resume, exact, resuming = _restore(cfg, agent, env, parser)
        record["resumed"] = [*record["resumed"][:-1], {**record["resumed"][-1], "from_episode": len(resume["scores"]),
                                                          "exact": exact}]
        done, taken = len(resume["scores"]), resume.get("env_steps", 0)
        ended = done >= cfg.loop.episodes or (resume.get("solved_at") is not None and cfg.loop.stop_when_solved)
        previous = rundir.read_record(cfg.resume)
        unfinished = ended and not previous.finished  # killed while writing its final save
        if done >= cfg.loop.episodes and not unfinished:
            parser.error(f"--resume: the run already has {done} episodes; pass --episodes above that")
        if cfg.loop.max_env_steps is not None and taken + cfg.n_agents > cfg.loop.max_env_steps:
            parser.error(f"--resume: the run already took {taken:,} environment steps; pass --max-env-steps of "
                         f"at least {taken + cfg.n_agents:,}")
        print(resuming)
        saved_buffer = previous.save_buffer
        if unfinished:
            print(f"The run had ended (after episode {done}) but was stopped while writing its final save: "
                  "writing it now")
        elif ended:
            print(f"The run solved at episode {resume['solved_at']} and stops when solved: there is nothing more to "
                  "train (pass --no-stop to train on); its final save is written again")
    steps = callbacks.standard(cfg.out, cfg.seed, cfg.quiet, cfg.progress, tensorboard_dir=cfg.tensorboard,
                               save_every=cfg.save_every, save_buffer=cfg.save_buffer, command=cfg.command,
                               record=record, resume=resume is not None, saved_buffer=saved_buffer)
    recorder = None
    if cfg.animate:
        try:
            recorder = Recorder(env, agent, cfg.out, cfg.animate_every)
        except ValueError as exc:
            parser.error(f"--animate: {exc}")
        steps.insert(0, recorder)
    train(env, agent, cfg.loop, steps, resume)
    if recorder is not None and recorder.animation is not None:
        print(f"Wrote {Path(cfg.out) / rundir.VALUE_MAP_FILE} and the animation {recorder.animation}")


def _restore(cfg: RunConfig, agent: object, env: object,
             parser: argparse.ArgumentParser) -> tuple[dict[str, Any], bool, str]:
    """Load the run's last complete save into the agent and the environment; the loop state,
    whether the continuation is exact, and the line that says where the run continues and what
    a killed process lost (printed by the caller once nothing can refuse the resume)."""
    assert cfg.resume is not None
    written = rundir.episodes_written(cfg.resume)
    try:
        saved = rundir.load_training_state(cfg.resume, agent)
    except FileNotFoundError:  # killed before its first save (rundir.resumable_record): the settings are all there is
        saved = None
    except ValueError as exc:
        parser.error(f"--resume: {exc}")
    if saved is None:
        return {"scores": []}, False, (
            f"Resuming {cfg.resume}: it has no training state (the run stopped before its first save), so it starts "
            f"again from episode 1 with its recorded settings" + (f"; its {written} episode(s) written are lost"
                                                                   if written else ""))
    env.random_state = saved["environment"]  # type: ignore[attr-defined]
    resume, exact = saved["loop"], saved["exact"]
    done = len(resume["scores"])
    lost = (f"episode {written}" if written == done + 1 else f"episodes {done + 1}-{written}") \
        if written > done else ""
    return resume, exact, (
        f"Resuming {cfg.resume} from episode {done + 1}, "
        + ("exactly (the replay buffer was saved)" if exact else
           "not exactly: the replay buffer was not saved with this state (--save-buffer), so it refills")
        + (f"; {lost}, run after the last complete save, {'is' if written == done + 1 else 'are'} lost and run again"
           if lost else ""))


if __name__ == "__main__":
    sys.exit(main())
