"""The study that picks the Crawler's recipe: candidates x seeds at a fixed budget of transitions,
each seed committed as it ends, so that the study runs over as many sessions as it needs.

    python -m benchmarks.crawler_walks --status                  # where the study stands
    python -m benchmarks.crawler_walks --stage screen --jobs 2 --commit
    python -m benchmarks.crawler_walks --stage final --candidates sac3 --commit

A seed is ``benchmarks.bench_crawler.run_seed``: a plain ``train.py --env UnityCrawler-v0
--num-envs 12`` run with the candidate's ``--config``, then ``evaluate.py --episodes 2 --agents
12`` on its final actor (the mean over 24 crawler-episodes). Its folder,
``benchmarks/results/crawler_walks/<stage>/<candidate>/seed<k>/``, keeps the run's own files
(``run.json`` with its transitions and wall-clock, ``scores.csv``, ``metrics.csv``, the
checkpoints and the curve), ``evaluation.json``, and ``seed.json``: the candidate, its settings,
the greedy score, the training curve, the wall-clock and how many seeds ran beside it. The
study's ``study.toml`` gains the seed's entry, and with ``--commit`` the seed's files are
committed at once, alone. A final-stage seed (40 minutes or so) saves its replay buffer with its
training state, so a seed stopped midway (the session's end) goes on from its last save, exactly
(``train.py --resume``), when the runner is run again; a screen seed starts again. A seed whose ``seed.json``
is committed (or, without ``--commit``, exists) is skipped: run the same command again to go on.

To stop between seeds, create ``runs/crawler_walks/STOP``: no seed starts while it exists; those
running finish and are kept (the file is removed when the runner ends).

``--jobs 2`` runs two seeds side by side, each environment on one thread (``CRAWLER_THREADS``)
and PyTorch on one: more transitions an hour from two cores than one seed at a time. A seed's
wall-clock beside another is then an upper bound on its time alone. ``--jobs 1`` (the default)
runs a seed alone, its environment on both cores and its updates on two PyTorch threads
(``train.py --threads 2``): what a seed's 40 minutes are measured by. A candidate in ``LEARNER``
runs on that learner instead: ``overlap`` learns on one core (PyTorch on one thread) while the
environment steps on the other (``CRAWLER_THREADS=1``).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.bench_crawler import AGENTS, run_seed

ROOT = Path(__file__).resolve().parent.parent
STUDY = ROOT / "benchmarks" / "results" / "crawler_walks"
RUNS = ROOT / "runs" / "crawler_walks"
RUN_FILES = ("run.json", "scores.csv", "metrics.csv", "scores.png", "checkpoint_actor.pth", "checkpoint_critic.pth")


@dataclass(frozen=True)
class Stage:
    transitions: int  # environment steps of the 12 crawlers per seed
    seeds: tuple[int, ...]
    what: str
    resumable: bool = False  # save the buffer, so a seed stopped midway goes on from its last save, exactly


STAGES = {"screen": Stage(300_000, (0, 1, 2), "each candidate at 300,000 transitions over 3 seeds"),
          "final": Stage(1_000_000, (0, 1, 2, 3, 4), "the recipe at 1,000,000 transitions over 5 seeds", resumable=True)}

# The candidates, from the changes the evidence ranks first (issue 76): a discount fit for a
# 1000-decision episode, observation normalisation, TD3 or SAC (the one off-policy method known to
# have walked this Crawler: 2113 after about 1M steps, at 3e-4), then wider networks and more
# updates. The baseline, Reacher's settings (DDPGConfig's defaults), is
# benchmarks/results/crawler_5_seeds/ at the screen's budget.
WIDE = {"actor_fc1": 256, "actor_fc2": 256, "critic_fc1": 256, "critic_fc2": 256}
SAC = {"preset": "sac", "gamma": 0.99, "obs_norm": True, "lr_actor": 3e-4, "lr_critic": 3e-4}
CANDIDATES: dict[str, dict[str, Any]] = {
    "sac_wide": {**SAC, **WIDE, "learn_updates": 40},
    "sac_wide_n5": {**SAC, **WIDE, "learn_updates": 40, "n_step": 5},
    "sac_wide_n10": {**SAC, **WIDE, "learn_updates": 40, "n_step": 10},
    "sac_wide_lr1e3": {**SAC, **WIDE, "learn_updates": 40, "lr_actor": 1e-3, "lr_critic": 1e-3},
    "sac": SAC,
    "sac3": {**SAC, "learn_updates": 60},
    "sac3_n5": {**SAC, "learn_updates": 60, "n_step": 5},
    "td3_wide": {"preset": "td3", "gamma": 0.99, "obs_norm": True, **WIDE, "learn_updates": 40},
    "g99_norm_td3": {"preset": "td3", "gamma": 0.99, "obs_norm": True},
    "g99_norm": {"gamma": 0.99, "obs_norm": True},
    "g99": {"gamma": 0.99},
    "ddpg_wide": {"gamma": 0.99, "obs_norm": True, **WIDE, "learn_updates": 40},
}
# Candidates run on a learner other than train.py's default (ddpg/backends): their seeds are other runs.
OVERLAP = {"sac3_overlap": CANDIDATES["sac3"], "sac3_n5_overlap": CANDIDATES["sac3_n5"],
           "sac4_overlap": {**SAC, "learn_updates": 80},
           "sac4_b128_overlap": {**SAC, "learn_updates": 80, "batch_size": 128},
           "sac3_clr1e3_overlap": {**SAC, "learn_updates": 60, "lr_critic": 1e-3},
           "sac_wide_overlap": CANDIDATES["sac_wide"],
           "sac3_g0_overlap": {**SAC, "learn_updates": 60, "grad_clip": 0},
           "sac3_n1_overlap": {**SAC, "learn_updates": 60, "n_step": 1},
           "sac4_pd2_overlap": {**SAC, "learn_updates": 80, "policy_delay": 2},
           "sac4_pd4_overlap": {**SAC, "learn_updates": 80, "policy_delay": 4},
           "sac4_pd2_joint_overlap": {**SAC, "learn_updates": 80, "policy_delay": 2, "critic_action": "first"},
           # the reference's settings as far as the config reaches (not its initialisation, nor its first-lives-only data)
           "reference_sac6_overlap": {"preset": "sac", "gamma": 0.99, "lr_actor": 3e-4, "lr_critic": 3e-4, "tau": 5e-3,
                                      "n_step": 1, "grad_clip": 0, "critic_layer_norm": False, "critic_action": "first",
                                      **WIDE, "learn_updates": 120},
           "crossq_sac3_overlap": {**SAC, "preset": "crossq", "sac": True, "lr_actor": 1e-3, "lr_critic": 1e-3,
                                   "learn_updates": 60, "grad_clip": 0}}
CANDIDATES.update(OVERLAP)
LEARNER = dict.fromkeys(OVERLAP, "overlap")
WHY = {"sac_wide": "SAC (twin critics, learned temperature) with gamma 0.99, observation normalisation, learning rates "
                   "3e-4, 256-unit networks and 2 updates a decision",
       "sac_wide_n5": "`sac_wide` with 5-step returns, not 3",
       "sac_wide_n10": "`sac_wide` with 10-step returns, not 3",
       "sac_wide_lr1e3": "`sac_wide` with learning rates 1e-3, not 3e-4",
       "sac": "SAC (twin critics, learned temperature) with gamma 0.99, observation normalisation and learning rates 3e-4",
       "sac3": "SAC as `sac`, with 3 updates a decision (the update-to-data ratio of the SAC reported to walk)",
       "sac3_n5": "`sac3` with 5-step returns, not 3",
       "td3_wide": "TD3 with gamma 0.99, observation normalisation, 256-unit networks and 2 updates a decision",
       "g99_norm_td3": "TD3 (twin critics, target smoothing, the actor every second update) with gamma 0.99 and "
                       "observation normalisation",
       "g99_norm": "gamma 0.99 and running mean/std observation normalisation (velocities near 10 beside unit vectors)",
       "g99": "a discount fit for 1000-decision episodes: gamma 0.99, a horizon of ~100 decisions, not ~20",
       "ddpg_wide": "DDPG with gamma 0.99, observation normalisation, 256-unit networks and 2 updates a decision",
       "sac3_overlap": "`sac3` on the overlap learner: learning on one core while the environment steps on the other, "
                       "acting one learning step behind",
       "sac3_n5_overlap": "`sac3_overlap` with 5-step returns, not 3",
       "sac4_overlap": "`sac3_overlap` with 4 updates a decision, not 3",
       "sac3_clr1e3_overlap": "`sac3_overlap` with the critic's learning rate 1e-3, not 3e-4 (the actor's stays)",
       "sac4_b128_overlap": "`sac3_overlap` with 4 updates a decision of 128 transitions each, not 3 of 256",
       "sac_wide_overlap": "`sac_wide` on the overlap learner",
       "sac3_g0_overlap": "`sac3_overlap` without clipping the critic's gradient (Reacher's default clips its norm "
                          "at 1; SAC does not clip)",
       "sac3_n1_overlap": "`sac3_overlap` with one-step targets, not 3-step (SAC's own; the SAC reported to walk used them)",
       "sac4_pd2_overlap": "`sac3_overlap` with 4 critic updates a decision and the actor every second one (TD3's "
                           "delay): a third more for the critic at about the cost of 3 whole updates",
       "sac4_pd4_overlap": "`sac4_pd2_overlap` with the actor at every fourth update, once a decision, as REDQ "
                           "has it (Chen et al. 2021: many critic updates, one of the actor, per transition); "
                           "4 full updates a decision did worse than 4 of the critic with 2 of the actor",
       "sac4_pd2_joint_overlap": "`sac4_pd2_overlap` with each critic reading the action at its first layer, beside "
                                 "the state, as TD3's and SAC's critics do (the SAC known to walk this Crawler among "
                                 "them), not at its second as the DDPG paper's: 20 actions, not Reacher's 4",
       "reference_sac6_overlap": "the SAC known to walk the course's build (docs/crawler.md, \"Against the SAC known to "
                                 "walk\"), as far as the config reaches: 256-unit networks, the action at the critics' "
                                 "first layer, no layer norm, no observation normalisation, 1-step targets, no gradient "
                                 "clipping, tau 0.005, and 6 updates a decision, about its updates per transition over "
                                 "its first 300,000; a diagnostic (past 40 minutes at 1,000,000): does it take off here",
       "crossq_sac3_overlap": "`sac3_g0_overlap` with CrossQ's critics (batch renormalisation, no target networks, the "
                              "actor every third update) and its learning rates, 1e-3"}


def how(candidate: str, jobs: int) -> tuple[str, int, int | None]:
    """A candidate's learner, PyTorch's threads and the environment's (None: all the cores) with ``jobs``
    seeds side by side."""
    learner = LEARNER.get(candidate, "auto")
    if learner == "overlap":
        return learner, 1, 1  # one core learns, the other steps the environment (per seed)
    return learner, 3 - jobs, None if jobs == 1 else 1


def stop_file() -> Path:
    return RUNS / "STOP"


def seed_dir(stage: str, candidate: str, seed: int) -> Path:
    return STUDY / stage / candidate / f"seed{seed}"


def _git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)


def done(stage: str, candidate: str, seed: int, committed: bool) -> bool:
    """Whether a seed's result is in: committed to git (or, when not committing, on disk)."""
    record = seed_dir(stage, candidate, seed) / "seed.json"
    if not committed:
        return record.is_file()
    return _git("ls-files", "--error-unmatch", str(record.relative_to(ROOT))).returncode == 0


def _manifest_entry(stage: str, candidate: str, seed: int, command: str, machine: str, note: str) -> str:
    key = f"{stage}/{candidate}/seed{seed}/run.json"
    return (f"\n[files.{json.dumps(key)}]\ndate = {json.dumps(time.strftime('%Y-%m-%d'))}\n"
            f"command = {json.dumps(command)}\nmachine = {json.dumps(machine)}\nnote = {json.dumps(note)}\n")


def keep_seed(stage: str, candidate: str, seed: int, result: dict[str, Any], jobs: int, commit: str) -> Path:
    """Copy a finished seed's run files and evaluation into the study and add its manifest entry."""
    out = seed_dir(stage, candidate, seed)
    out.mkdir(parents=True, exist_ok=True)
    run = ROOT / result["run"]
    for name in RUN_FILES:
        if (run / name).is_file():
            shutil.copy2(run / name, out / name)
    shutil.copy2(run.parent / f"{run.name}-eval" / "evaluation.json", out / "evaluation.json")
    config, recorded = CANDIDATES[candidate], json.loads((out / "run.json").read_text())
    machine = {k: recorded["machine"][k] for k in ("cpu", "cpu_count")}
    command = (f"python -m benchmarks.crawler_walks --stage {stage} --candidates {candidate} --seeds {seed}"
               f" --jobs {jobs}")
    record = {"stage": stage, "candidate": candidate, "why": WHY[candidate], "config": config, "seed": seed,
              "transitions": result["env_steps"], "jobs": jobs, "torch_threads": recorded.get("threads"),
              "learner": recorded.get("learner"), "crawler_threads": how(candidate, jobs)[2],
              "git_commit": commit, "command": command, "machine": machine,
              "mlagents_benchmark": 2000.0, **{k: v for k, v in result.items() if k not in ("seed", "run")}}
    (out / "seed.json").write_text(json.dumps(record, indent=1) + "\n")
    manifest = STUDY / "study.toml"
    beside = "alone" if jobs == 1 else f"beside {jobs - 1} other seed(s), each environment on one thread"
    note = (f"{candidate} ({WHY[candidate]}), seed {seed}: {result['env_steps']:,} transitions in "
            f"{result['wall_s'] / 60:.1f} min ({beside}); greedy mean {result['greedy']['mean']:.1f} over "
            f"{result['greedy']['episodes']} crawler-episodes")
    with open(manifest, "a") as f:
        f.write(_manifest_entry(stage, candidate, seed, command, f"{machine['cpu']} x {machine['cpu_count']}", note))
    return out


def commit_seed(out: Path, message: str) -> None:
    """Commit one seed's folder and the manifest, nothing else (retrying while git's index is locked)."""
    paths = [str(out.relative_to(ROOT)), str((STUDY / "study.toml").relative_to(ROOT))]
    for attempt in range(10):
        add = _git("add", "--", *paths)
        made = _git("commit", "-q", "-m", message, "--", *paths) if add.returncode == 0 else add
        if made.returncode == 0:
            return
        time.sleep(3 * (attempt + 1))
    raise RuntimeError(f"could not commit {out}: {made.stderr.strip()}")


def status() -> None:
    """Each stage's candidates: the seeds in, their greedy scores, transitions and wall-clock."""
    for stage in STAGES:
        for candidate in CANDIDATES:
            found = sorted((STUDY / stage / candidate).glob("seed*/seed.json"))
            if not found:
                continue
            rows = [json.loads(p.read_text()) for p in found]
            scores, minutes = [r["greedy_score"] for r in rows], [r["wall_s"] / 60 for r in rows]
            print(f"{stage} {candidate}: seeds {[r['seed'] for r in rows]}, greedy median {np.median(scores):.1f} "
                  f"(each: {', '.join(f'{s:.1f}' for s in scores)}); transitions {max(r['transitions'] for r in rows):,}; "
                  f"wall {', '.join(f'{m:.0f}' for m in minutes)} min")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--stage", choices=sorted(STAGES), default="screen")
    parser.add_argument("--candidates", default=None, help=f"comma-separated, of {', '.join(CANDIDATES)} (default: all)")
    parser.add_argument("--seeds", default=None, help="comma-separated seeds (default: the stage's)")
    parser.add_argument("--jobs", type=int, choices=(1, 2), default=1, help="seeds side by side (2: one core each)")
    parser.add_argument("--commit", action="store_true", help="commit each seed's folder as it ends")
    parser.add_argument("--status", action="store_true", help="print where the study stands and exit")
    args = parser.parse_args(argv)
    if args.status:
        status()
        return 0
    candidates = args.candidates.split(",") if args.candidates else list(CANDIDATES)
    unknown = [c for c in candidates if c not in CANDIDATES]
    if unknown:
        parser.error(f"unknown candidate(s) {', '.join(unknown)}; candidates: {', '.join(CANDIDATES)}")
    stage = STAGES[args.stage]
    seeds = [int(s) for s in args.seeds.split(",")] if args.seeds else list(stage.seeds)
    todo = [(c, s) for s in seeds for c in candidates if not done(args.stage, c, s, args.commit)]
    print(f"{args.stage} ({stage.what}): {len(todo)} seed(s) to run ({stage.transitions:,} transitions each), "
          f"{len(seeds) * len(candidates) - len(todo)} already in", flush=True)
    commit = _git("rev-parse", "--short", "HEAD").stdout.strip()
    lock = threading.Lock()

    def one(candidate: str, seed: int) -> bool | None:
        if stop_file().exists():
            return None  # not started
        config = json.dumps(CANDIDATES[candidate]) if CANDIDATES[candidate] else None
        learner, threads, crawler_threads = how(candidate, args.jobs)
        try:
            result = run_seed(seed, stage.transitions, RUNS / args.stage / candidate, config,
                              save_buffer=stage.resumable, resume=stage.resumable, threads=threads, learner=learner,
                              crawler_threads=crawler_threads)
        except subprocess.CalledProcessError as e:  # one seed's failure is reported; the others go on
            print(f"{args.stage} {candidate} seed {seed}: failed ({' '.join(map(str, e.cmd[:3]))} ... exited {e.returncode}); "
                  f"its run folder is under {RUNS / args.stage / candidate}", flush=True)
            return False
        with lock:
            out = keep_seed(args.stage, candidate, seed, result, args.jobs, commit)
            g = result["greedy"]
            print(f"{args.stage} {candidate} seed {seed}: greedy mean {g['mean']:.1f} (std {g['std']:.1f}, "
                  f"{g['episodes']} crawler-episodes); {result['env_steps']:,} transitions in {result['wall_s'] / 60:.1f} min",
                  flush=True)
            if args.commit:
                commit_seed(out, f"crawler_walks: {args.stage} {candidate} seed {seed}, greedy mean {g['mean']:.1f} "
                                 f"over {g['episodes']} crawler-episodes ({AGENTS} crawlers)")
        return True

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        ok = [future.result() for future in [pool.submit(one, c, s) for c, s in todo]]
    if None in ok:
        print(f"stopped by {stop_file()}: {ok.count(None)} seed(s) not started; run the same command to go on")
        stop_file().unlink(missing_ok=True)
    status()
    return 0 if False not in ok else 1


if __name__ == "__main__":
    sys.exit(main())
