"""train.py's options, each declared once with what it is to a run.

Every option belongs to one of four groups, and the group is its role (``--help`` shows them):

* ``RUN``: the run's own settings. run.json records them and ``--resume`` continues with them;
  given on resume, they are refused.
* ``RESUMABLE``: budgets, where and how updates run, and saving. run.json records them;
  ``--resume`` keeps them unless they are given again.
* ``START``: where a new run goes. A resume continues in its own folder, so they are refused there.
* ``INVOCATION``: this invocation only (printing, TensorBoard, the value maps); never recorded.

``ddpg.command_line.run_config.resolve`` reads what ``--resume`` applies from here (``applied_on_resume``), and
``tests/test_settings_walk.py`` walks every option to show each recorded one is restored on
resume, so an option added later cannot be forgotten by a resume. This module imports neither
PyTorch nor MuJoCo: a script's ``--help`` is answered before they load.
"""

from __future__ import annotations

import argparse
from typing import Any

from ddpg.command_line.device import add_device_option
from ddpg.command_line.parsing import finite_float, finite_float_or_off, json_object, non_negative_int, path_text, positive_int, random_seed
from ddpg.solved import GOOD_SCORE, GOOD_UPDATES, SOLVE_SCORE
from ddpg.tasks import DEFAULT_ENV, REACHER_DECISIONS

LEARNERS = ("auto", "graph", "graph-overlap", "overlap", "readable")  # ddpg.backends
GPU_LEARNERS = ("graph", "graph-overlap")  # the CUDA graph back-end's two ways of running
UNSET: object = object()  # --good-score left out: its default depends on the task

RUN, RESUMABLE, START, INVOCATION = "run", "resumable", "start", "invocation"
_TITLES = {RUN: "the run's settings (recorded in run.json; --resume keeps them and refuses them)",
           RESUMABLE: "budgets, device and saving (recorded; --resume keeps them unless given again)",
           START: "where a new run goes (a resume continues in its own folder)",
           INVOCATION: "this invocation only (not recorded)"}


def build_parser() -> argparse.ArgumentParser:
    """train.py's command line, one group per role."""
    p = argparse.ArgumentParser(allow_abbrev=False, prog="train.py",
                                description="Train DDPG on the multi-agent Reacher; writes checkpoints, scores.csv, "
                                            "run.json and scores.png into --out.")
    groups = {role: p.add_argument_group(title) for role, title in _TITLES.items()}
    for role, group in groups.items():
        group.role = role  # type: ignore[attr-defined]
    _run_options(groups[RUN])
    _resumable_options(groups[RESUMABLE])
    _start_and_invocation_options(groups[START], groups[INVOCATION])
    return p


def _run_options(g: argparse._ArgumentGroup) -> None:
    g.add_argument("--seed", type=random_seed, default=0, help="random seed, 0 to 2**63 - 1 (default 0)")
    g.add_argument("--env", default=DEFAULT_ENV, metavar="ID",
                   help="'reacher' (default): the built-in 20-arm Reacher; or any Gymnasium environment id with a Box "
                        "action space, e.g. MountainCarContinuous-v0, Pendulum-v1, Reacher-v5, UnityReacher-v0, "
                        "UnityCrawler-v0 (the built-in Crawler: --num-envs 12 for the course's 12 crawlers; per-task "
                        "settings: ddpg.tasks.TASKS)")
    g.add_argument("--num-envs", type=positive_int, default=None,
                   help="--env ID: copies of the task stepped together, one scores column each (default 1)")
    g.add_argument("--agents", type=positive_int, default=None,
                   help="number of arms in the built-in environment (default 20; 1 is the course's one-arm version, "
                        "trained with its own settings: ddpg.tasks.REACHER_ONE_ARM)")
    g.add_argument("--max-t", type=positive_int, default=None,
                   help=f"decisions per episode (default: the task's limit: the built-in Reacher's {REACHER_DECISIONS}, also "
                        "its maximum; a Gymnasium task's spec max_episode_steps, e.g. 1000 for UnityCrawler-v0, 200 "
                        "for Pendulum-v1); on the Crawler, each crawler's episode and the round printed and saved")
    g.add_argument("--target", type=finite_float, default=None,
                   help=f"solve threshold of the 100-episode average (default: Reacher {SOLVE_SCORE:g}; a Gymnasium "
                        "task's from ddpg.tasks.TASKS or its spec's reward_threshold)")
    g.add_argument("--config", type=json_object, default={},
                   help="JSON object of DDPGConfig overrides (or variants.VariantConfig keys: replay, exploration, "
                        "batch_norm, preset, ...), or a path to a JSON file; --settings lists every key, its default "
                        "and its meaning")
    g.add_argument("--good-score", type=finite_float_or_off, default=UNSET,
                   help=f"schedule: after an episode scoring at least this (mean over agents), make --good-updates "
                        f"updates per learning step (default {GOOD_SCORE:g} on Reacher, off on Gymnasium tasks; "
                        "'off' turns it off)")
    g.add_argument("--good-updates", type=non_negative_int, default=GOOD_UPDATES,
                   help=f"schedule: updates per learning step while the policy is good (default {GOOD_UPDATES}: "
                        "learning pauses)")
    g.add_argument("--unity", metavar="PATH", default=None,
                   help="use the Unity binary at PATH (needs unityagents) instead of the built-in environment")
    g.add_argument("--reproducible", action="store_true",
                   help="pin the math libraries' code paths (AVX2) and thread counts, so the same seed gives the same "
                        "scores on any x86-64 CPU with AVX2 (ddpg/command_line/reproducible.py; the program restarts itself "
                        "pinned); without it a run reproduces only on the machine that made it")


def _resumable_options(g: argparse._ArgumentGroup) -> None:
    g.add_argument("--episodes", type=positive_int, default=None,
                   help="maximum number of episodes (default 300; a Gymnasium task's from ddpg.tasks.TASKS)")
    g.add_argument("--max-episodes", type=positive_int, dest="episodes", help="alias of --episodes")
    g.add_argument("--max-env-steps", type=positive_int, default=None, metavar="N",
                   help="also stop before the environment steps (every arm's or copy's counted) would pass N, "
                        "dropping the unfinished episode, as Stable-Baselines3's learn(total_timesteps) does")
    g.add_argument("--no-stop", action="store_true", help="keep training after the task is solved")
    g.add_argument("--save-every", type=positive_int, default=10,
                   help="write the run folder and the full training state every N episodes (default 10)")
    g.add_argument("--save-buffer", action=argparse.BooleanOptionalAction, default=False,
                   help="also save the replay buffer's filled part, so --resume continues exactly; about 300 MB at "
                        "one million transitions (the default buffer is full after 50 episodes of 20 arms); off by "
                        "default; on --resume, as the run's last save did (--no-save-buffer turns it off)")
    add_device_option(g)  # type: ignore[arg-type]
    g.add_argument("--threads", type=positive_int, default=None,
                   help="PyTorch's threads for acting and learning (default 1, the fastest for 128-unit networks; wider "
                        "ones can gain from 2 on 2 cores, as benchmarks/bench_learn_threads.py measures); a resume keeps "
                        "the run's own unless given; --reproducible pins 1")
    g.add_argument("--learner", choices=LEARNERS, default="auto",
                   help="how updates run (ddpg/backends): 'auto' (default) 'readable' on the CPU, 'graph-overlap' on "
                        "CUDA; 'graph' the update of ddpg_agent.py captured as a CUDA graph; "
                        "'graph-overlap' the same, the environment stepping while the GPU learns (acting one learning "
                        "step behind: a different run); 'overlap' the plain-autograd update on a second CPU thread while the "
                        "environment steps (acting one learning step behind: a different run); 'readable' the "
                        "plain-autograd update of ddpg_agent.py")


def _start_and_invocation_options(start: argparse._ArgumentGroup, now: argparse._ArgumentGroup) -> None:
    start.add_argument("--out", type=path_text, default="runs/latest",
                       help="output folder (default runs/latest); one that holds a run needs --resume or --force")
    start.add_argument("--force", action="store_true", help="replace the run already in --out")
    now.add_argument("--resume", metavar="DIR", type=path_text, default=None,
                     help="continue the run in DIR from its last complete save, with its own settings: only the "
                          "options of the groups 'budgets, device and saving' and 'this invocation only' may be "
                          "given. Exactly as if never stopped after Ctrl-C or SIGTERM, or with --save-buffer")
    now.add_argument("--animate", action="store_true",
                     help="a task with a 2-D observation (MountainCarContinuous-v0): draw Q(s, mu(s)) and mu(s) with "
                          "the episode's trajectory every --animate-every episodes into value_maps/, and at the end "
                          "value_map.png and the animation value_maps.mp4 (GIF without ffmpeg)")
    now.add_argument("--animate-every", type=positive_int, default=5,
                     help="--animate: draw every N episodes (and the first and the last; default 5)")
    now.add_argument("--tensorboard", metavar="DIR", default=None,
                     help="also write the per-episode metrics (scores, losses, mean Q, exploration, updates/s; always "
                          "in metrics.csv) as TensorBoard event files into DIR: tensorboard --logdir DIR")
    now.add_argument("--settings", action=_Settings, help="list every --config key, its default and its meaning, and exit")
    now.add_argument("--quiet", action="store_true", help="no per-episode lines")
    now.add_argument("--no-progress", action="store_true", help="no tqdm progress bar")


class _Settings(argparse.Action):
    """--settings: prints ``ddpg.variants.config.describe()`` and exits. The agent is imported only then,
    so that --help stays free of PyTorch (tests/test_help_speed.py)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings, dest=dest, default=argparse.SUPPRESS, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        from ddpg.variants.config import describe

        print(describe())
        parser.exit()


def roles(parser: argparse.ArgumentParser) -> dict[str, str]:
    """Each option, named ``--dest`` as ``ddpg.command_line.parsing.given_options`` names it, and its role."""
    out = {}
    for group in parser._action_groups:
        for action in group._group_actions:
            if action.option_strings and hasattr(group, "role"):
                out["--" + action.dest.replace("_", "-")] = group.role
    return out


def applied_on_resume() -> tuple[str, ...]:
    """The options ``--resume`` takes: budgets, device and saving, and this invocation's own."""
    return tuple(sorted(name for name, role in roles(build_parser()).items() if role in (RESUMABLE, INVOCATION)))


__all__ = ["GPU_LEARNERS", "INVOCATION", "LEARNERS", "RESUMABLE", "RUN", "START", "UNSET", "applied_on_resume",
           "build_parser", "roles"]
