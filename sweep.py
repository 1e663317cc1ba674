"""Seeds x configurations of ``train.py``, run as Ray Tune trials on this machine or a cluster.

    python sweep.py --seeds 5 --episodes 300 --grid '{"tau": [0.01, 0.02]}' --out runs/tau
    python sweep.py --variants my_variants.json --seeds 5 --out runs/study   # named configs
    python sweep.py --address auto ...          # on a running Ray cluster (docs/variants.md: "Sweeps")
    python sweep.py ... -- --agents 1           # after --, options passed to every train.py

Every trial is one ordinary training run on one CPU (train.py sets one thread) writing its
run folder ``OUT/<configuration>/seed<k>``; by default a local Ray instance runs as many
trials at once as this machine has cores. Run the same command again after an interruption:
a finished trial's folder is kept as it is (and reported without starting Ray), an
interrupted one continues from its last save (``train.py --resume``; saves come every 10
episodes), and the rest start. Ray Tune's own records go to ``OUT/_tune``.

Ray is optional: ``pip install -r requirements-sweep.txt`` (``make sweep-setup`` does it).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ddpg.command_line.parsing import json_object, path_text, positive_int  # light: --help is answered before PyTorch loads

ROOT = Path(__file__).resolve().parent

__all__ = ["Trial", "expand_grid", "main", "run_sweep"]


@dataclass(frozen=True)
class Trial:
    """One training run of a sweep: a named configuration and a seed."""

    name: str
    seed: int
    config: dict[str, Any]


def expand_grid(grid: dict[str, list[Any]]) -> list[tuple[str, dict[str, Any]]]:
    """Every combination of the grid's values, each named like ``tau=0.01,batch_size=128``."""
    problems = [k for k, v in grid.items() if not isinstance(v, list) or not v]
    if problems:
        raise ValueError(f"--grid: the values of {problems} must be non-empty lists, as in "
                         "'{\"tau\": [0.01, 0.02]}'")
    keys = list(grid)
    combos = itertools.product(*(grid[k] for k in keys))
    return [(",".join(f"{k}={json.dumps(v)}" for k, v in zip(keys, values, strict=True)) or "default",
             dict(zip(keys, values, strict=True))) for values in combos]


def trial_dir(out: str | os.PathLike[str], trial: Trial) -> Path:
    return Path(out).resolve() / trial.name / f"seed{trial.seed}"


def _finished_record(out: Path) -> Any:
    """The run record in ``out`` when that run has finished; None when it has not (or never began)."""
    from ddpg.run_folder.file_names import RECORD_FILE
    from ddpg.run_folder.record_file import read_record

    record = read_record(out) if (out / RECORD_FILE).is_file() else None
    return record if record is not None and record.finished else None


def _trial_metrics(record: Any) -> dict[str, Any]:
    return {"solved_at": record.solved_at_episode, "episodes": record.episodes_run,
            "time_to_solve_s": record.time_to_solve_s, "wall_time_s": record.wall_time_s,
            "final_average": record.final_average, "finished": record.finished}


def _run_trial(tune_config: dict[str, Any]) -> dict[str, Any]:
    """The Tune trainable: one train.py run, skipped when finished, resumed when interrupted."""
    params = tune_config["trial"]
    import train  # in the Ray worker: the project is installed (pip install -e .)
    from ddpg.run_folder.file_names import RECORD_FILE, STATE_FILE
    from ddpg.run_folder.record_file import read_record

    out = Path(params["out"])
    state = out / STATE_FILE
    record = read_record(out) if (out / RECORD_FILE).is_file() else None
    if record is None or not record.finished:
        if record is not None and state.is_file() and record.episodes_run < params["episodes"]:
            argv = ["--resume", str(out), "--episodes", str(params["episodes"])]
            argv += [a for a in params["train_args"] if a in ("--no-stop",)]
        else:
            argv = ["--seed", str(params["seed"]), "--episodes", str(params["episodes"]), "--out", str(out),
                    "--force", "--config", json.dumps(params["config"]), *params["train_args"]]
        train.main([*argv, "--quiet", "--no-progress"])
        record = read_record(out)
    return _trial_metrics(record)


def run_sweep(trials: list[Trial], episodes: int, out: str | os.PathLike[str], address: str | None = None,
              train_args: list[str] | None = None, cpus: int | None = None) -> list[dict[str, Any]]:
    """Run ``trials`` as Ray Tune trials (one CPU each); returns one result per trial, in order.

    ``address``: an existing Ray cluster ("auto", or "host:port"); None starts a local Ray
    instance with ``cpus`` CPUs (default: all of this machine's). Trials whose runs have
    finished are reported from their run records, and Ray is not started when all have.
    """
    out = Path(out).resolve()
    runs = [trial_dir(out, t) for t in trials]
    done = {str(run): {**_trial_metrics(r), "error": None} for run in runs
            if (r := _finished_record(run)) is not None}
    todo = [t for t, run in zip(trials, runs, strict=True) if str(run) not in done]
    results = {**(_tune(todo, episodes, out, address, train_args, cpus) if todo else {}), **done}
    stopped = {"error": "not run (the sweep was stopped); run the same command again to continue"}
    return [{"name": t.name, "seed": t.seed, "config": t.config, "run": str(run), **results.get(str(run), stopped)}
            for t, run in zip(trials, runs, strict=True)]


def _tune(trials: list[Trial], episodes: int, out: Path, address: str | None, train_args: list[str] | None,
          cpus: int | None) -> dict[str, dict[str, Any]]:
    """Ray Tune's results for ``trials``, by run folder; a trial never started has none."""
    import ray
    from ray import tune

    out.mkdir(parents=True, exist_ok=True)
    env = {"PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    ray.init(address=address, num_cpus=None if address else cpus, include_dashboard=False,
             runtime_env={"env_vars": env}, logging_level="ERROR", log_to_driver=False)
    try:
        space = [{"name": t.name, "seed": t.seed, "config": t.config, "episodes": episodes,
                  "out": str(trial_dir(out, t)), "train_args": list(train_args or [])} for t in trials]
        tuner = tune.Tuner(
            tune.with_resources(_run_trial, {"cpu": 1}),
            param_space={"trial": tune.grid_search(space)},
            run_config=tune.RunConfig(name="sweep", storage_path=str(out / "_tune"), verbose=1),
        )
        grid = tuner.fit()
    finally:
        ray.shutdown()
    by_dir: dict[str, dict[str, Any]] = {}
    for result in grid:
        if not result.config:  # never started: the sweep was stopped (Ctrl-C) before its turn
            continue
        params = result.config["trial"]
        by_dir[params["out"]] = {**(result.metrics or {}), "error": None if result.error is None
                                 else f"{type(result.error).__name__}: {result.error}"}
    return by_dir


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(allow_abbrev=False,
        description="Run seeds x configurations of train.py as Ray Tune trials (one CPU each); "
                    "options after -- go to every train.py run.")
    p.add_argument("--seeds", type=positive_int, default=5, help="seeds 0..N-1 of every configuration (default 5)")
    p.add_argument("--episodes", type=positive_int, default=300, help="maximum episodes per run (default 300)")
    p.add_argument("--grid", type=json_object, default=None,
                   help="JSON object of config keys (DDPGConfig's or variants.VariantConfig's) to lists of "
                        "values; every combination is a configuration, e.g. '{\"tau\": [0.01, 0.02]}'")
    p.add_argument("--variants", type=json_object, default=None,
                   help="JSON object (or file) of named configurations: {\"name\": {config overrides}}")
    p.add_argument("--config", type=json_object, default={},
                   help="JSON object of config overrides under every configuration")
    p.add_argument("--out", type=path_text, default="runs/sweep", help="folder of the run folders (default runs/sweep)")
    p.add_argument("--address", default=None,
                   help="a running Ray cluster ('auto' on one of its nodes, or host:port); default: a "
                        "local Ray instance on this machine")
    p.add_argument("--cpus", type=positive_int, default=None,
                   help="local Ray instance: trials at once (default: this machine's cores)")
    return p


def _check_train_args(parser: argparse.ArgumentParser, train_args: list[str]) -> None:
    """The options after --, checked here as train.py would check them in every trial: a bad one
    is one line now, not a Ray worker's death (its message lost) once per trial."""
    import contextlib
    import io

    import train
    from ddpg.command_line.parsing import given_options

    train_parser = train.build_parser()

    def parse(argv: list[str]) -> argparse.Namespace:
        said = io.StringIO()
        try:
            with contextlib.redirect_stderr(said), contextlib.redirect_stdout(said):
                return train_parser.parse_args(argv)
        except SystemExit as exc:
            if exc.code == 0:  # -- --help: train.py's help
                print(said.getvalue(), end="")
                sys.exit(0)
            lines = said.getvalue().strip().splitlines() or ["bad options"]
            parser.error(f"after --, train.py refuses the options: {lines[-1].split('error: ', 1)[-1]}")

    parse(train_args)
    fixed = sorted(given_options(train_parser, train_args)  # in any spelling: --seed=3 too
                   & {"--seed", "--out", "--episodes", "--config", "--resume", "--force"})
    if fixed:
        parser.error(f"after --, leave out {', '.join(fixed)}: the sweep sets them for every run")
    probe = [*train_args, "--seed", "0", "--episodes", "1", "--out", "probe"]
    parsed = parse(probe)
    from ddpg.command_line.run_config import resolve  # PyTorch loads here, after `-- --help` has been answered

    try:
        resolve(parsed, given_options(train_parser, probe), None, "")
    except ValueError as exc:
        parser.error(f"after --, train.py refuses the options: {exc}")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    train_args = argv[argv.index("--") + 1:] if "--" in argv else []
    own = argv[:argv.index("--")] if "--" in argv else argv
    parser = build_parser()
    args = parser.parse_args(own)
    from ddpg.variants import parse_config  # PyTorch loads here, once --help has been answered
    if args.grid is not None and args.variants is not None:
        parser.error("pass --grid or --variants, not both")
    _check_train_args(parser, train_args)
    try:
        named = expand_grid(args.grid) if args.grid is not None else []
    except ValueError as exc:
        parser.error(str(exc))
    if args.variants is not None:
        bad = [k for k, v in args.variants.items() if not isinstance(v, dict)]
        if bad:
            parser.error(f"--variants: {bad} must map to JSON objects of config overrides")
        named = list(args.variants.items())
    named = named or [("default", {})]
    for name, overrides in named:
        try:
            parse_config({**args.config, **overrides})
        except (TypeError, ValueError) as exc:
            parser.error(f"configuration {name!r}: {exc}")
    try:
        import ray  # noqa: F401
    except ImportError:
        parser.error("Ray is not installed: pip install -r requirements-sweep.txt (or make sweep-setup)")
    trials = [Trial(name, seed, {**args.config, **overrides}) for name, overrides in named
              for seed in range(args.seeds)]
    results = run_sweep(trials, args.episodes, args.out, args.address, train_args, args.cpus)
    print(f"\n{'configuration':40s} {'seed':>4s} {'solved at':>9s} {'episodes':>8s} {'wall s':>8s}")
    for r in results:
        solved = "-" if r.get("solved_at") is None else str(r["solved_at"])
        print(f"{r['name'][:40]:40s} {r['seed']:4d} {solved:>9s} {r.get('episodes', '-')!s:>8s} "
              f"{r.get('wall_time_s', '-')!s:>8s}" + (f"  ERROR {r['error']}" if r.get("error") else ""))
    print(f"Run folders in {Path(args.out).resolve()}/<configuration>/seed<k>")
    return 1 if any(r.get("error") for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
