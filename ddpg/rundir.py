"""The run folder: everything a training run leaves behind is written and read here, and only here.

    checkpoint_actor.pth    the actor's state_dict  } plain state_dicts, loadable exactly as in
    checkpoint_critic.pth   the critic's state_dict } the course: net.load_state_dict(torch.load(f))
    run.json                config (the architecture included), seed, versions, commit, command,
                            solved-at episode, wall time
    scores.csv              one row per episode, one column per agent
    metrics.csv             one row per episode: scores, critic/actor loss, mean Q, exploration
                            scale, updates and their rate, times (columns: ddpg.metrics.COLUMNS)
    scores.png              the reward plot
    training_state.pt       everything needed to continue the run exactly (train.py --resume):
                            all four networks, the optimisers, the noise, the random generators,
                            the episode counter and the scores so far
    replay_buffer.pt        the replay buffer's filled part (only with train.py --save-buffer)
    value_maps/, value_map.png, value_maps.mp4 (or .gif)
                            train.py --animate: Q(s, mu(s)) and mu(s) over a 2-D observation
                            space every few episodes, the last ones, and their animation

Every file goes through ``atomic_write`` (a temporary file in the same folder, then a rename),
so a reader never sees half a file, whatever stops the writer. What the files hold is decided
elsewhere: run.json's fields by ``ddpg.record.RunRecord``, the training state by the agent's
own ``state_dict`` (``ddpg.agent_state``), the plot by ``ddpg.plots``; rebuilding an agent from
a run is ``ddpg.agents.agent_from_run``.
"""

from __future__ import annotations

import csv
import io
import json
import os
import platform
import subprocess
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from ddpg import plots
from ddpg.agent_state import tensor_state
from ddpg.record import RunRecord
from ddpg.solved import SOLVE_SCORE, SOLVE_WINDOW
from ddpg_agent import Agent

ACTOR_FILE = "checkpoint_actor.pth"
CRITIC_FILE = "checkpoint_critic.pth"
RECORD_FILE = "run.json"
SCORES_FILE = "scores.csv"
METRICS_FILE = "metrics.csv"
PLOT_FILE = "scores.png"
STATE_FILE = "training_state.pt"
BUFFER_FILE = "replay_buffer.pt"
VALUE_MAPS_DIR = "value_maps"  # train.py --animate: one PNG per drawn episode...
VALUE_MAP_FILE = "value_map.png"  # ...the final picture...
ANIMATION_STEM = "value_maps"  # ...and the animation, value_maps.mp4 (or .gif without ffmpeg)
ANIMATION_SUFFIXES = (".mp4", ".gif")
RUN_FILES = (ACTOR_FILE, CRITIC_FILE, RECORD_FILE, SCORES_FILE, METRICS_FILE, PLOT_FILE, STATE_FILE, BUFFER_FILE,
             VALUE_MAP_FILE, *(ANIMATION_STEM + suffix for suffix in ANIMATION_SUFFIXES))
# DDPGConfig fields that fix the networks' shapes...
ARCHITECTURE_KEYS = ("actor_fc1", "actor_fc2", "critic_fc1", "critic_fc2")
# ...and their kind (layer norm; ddpg/variants/: batch norm, twin critics, a NoisyNet actor); older runs lack some.
NETWORK_VARIANT_KEYS = ("batch_norm", "critic_layer_norm", "twin_critics", "exploration", "noisy_sigma0")


def atomic_write(path: str | os.PathLike[str], write: Callable[[io.BufferedWriter], None]) -> None:
    """Write ``path`` through ``write(file)`` into a temporary file, then rename it over ``path``.

    The one atomic-write routine of the project: an interrupted write leaves the old file (or
    none), never a truncated one, and no temporary file behind.
    """
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        with open(tmp, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


# ------------------------------------------------------------------ checkpoints
def save_checkpoints(agent: Agent, actor_path: str | os.PathLike[str],
                     critic_path: str | os.PathLike[str]) -> None:
    """The local actor's and critic's state_dicts, in the course's file format."""
    for module, path in ((agent.actor_local, actor_path), (agent.critic_local, critic_path)):
        state = tensor_state(module)
        atomic_write(path, lambda fh, state=state: torch.save(state, fh))


LAYER_NORM_KEY = "ln1"  # model.Critic's first layer norm: in a critic's state_dict when it has layer norm


def _layer_sizes(state: dict[str, torch.Tensor]) -> str:
    """'fc1 33->128, fc2 128->128, ...' from the weight matrices of a state_dict (', layer norm'
    when it has model.Critic's)."""
    sizes = ", ".join(f"{k[:-len('.weight')]} {v.shape[1]}->{v.shape[0]}"
                      for k, v in state.items() if k.endswith(".weight") and v.dim() == 2)
    return sizes + (", layer norm" if f"{LAYER_NORM_KEY}.weight" in state else "")


def read_state_dict(path: str | os.PathLike[str]) -> dict[str, torch.Tensor]:
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"checkpoint not found: {path}")
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises several types for corrupt files
        raise ValueError(f"cannot read checkpoint {path}: not a valid torch file "
                         f"({type(exc).__name__}: {exc})") from None
    if not isinstance(state, dict):
        raise ValueError(f"checkpoint {path} holds a {type(state).__name__}, expected a state_dict")
    # Files written before the input normalisation was removed carry it as identity buffers.
    for key in ("obs_scale", "obs_bias"):
        if key in state:
            identity = torch.ones_like(state[key]) if key == "obs_scale" else torch.zeros_like(state[key])
            if not torch.equal(state[key], identity):
                raise ValueError(f"checkpoint {path} was trained with input normalisation "
                                 "(obs_norm), which this version no longer has")
            del state[key]
    return state


def load_checkpoints(agent: Agent, actor_path: str | os.PathLike[str],
                     critic_path: str | os.PathLike[str] | None = None) -> Agent:
    """Load state_dicts into the agent's local networks and copy them into the targets.

    FileNotFoundError for a missing file; ValueError naming the file for one that is not a
    state_dict, or whose layer sizes differ from the agent's (both sizes are named).
    """
    pairs: list[tuple[str | os.PathLike[str], nn.Module]] = [(actor_path, agent.actor_local)]
    if critic_path is not None:
        pairs.append((critic_path, agent.critic_local))
    for path, module in pairs:
        state = read_state_dict(path)
        expected = module.state_dict()
        if set(state) != set(expected) or any(state[k].shape != expected[k].shape for k in state):
            raise ValueError(
                f"checkpoint {os.fspath(path)} does not match the network: it has layers "
                f"[{_layer_sizes(state)}], the agent expects [{_layer_sizes(expected)}]. "
                f"Rebuild the agent from the run's {RECORD_FILE} (watch.py --run DIR) or pass "
                "matching sizes.")
        module.load_state_dict(state)
    agent.actor_target.load_state_dict(agent.actor_local.state_dict())
    agent.critic_target.load_state_dict(agent.critic_local.state_dict())
    return agent


# ------------------------------------------------------------------ the run folder
def git_commit() -> str | None:
    """Commit of the code that ran (with '-dirty' if tracked files were modified)."""
    here = Path(__file__).resolve().parent
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True,
                                text=True, timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=here, capture_output=True, text=True, timeout=10).stdout
        return commit + ("-dirty" if dirty.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None


def versions() -> dict[str, str | None]:
    """Versions of the interpreter and the main libraries, for the run record."""
    out: dict[str, str | None] = {"python": platform.python_version(),
                                  "torch": torch.__version__, "numpy": np.__version__}
    for pkg in ("mujoco", "gymnasium", "unityagents"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = None
    return out


def write_json(path: str | os.PathLike[str], record: dict[str, Any]) -> None:
    """``record`` as indented JSON, atomically."""
    data = (json.dumps(record, indent=2) + "\n").encode()
    atomic_write(path, lambda fh: fh.write(data))


def write_scores(path: str | os.PathLike[str], scores: np.ndarray) -> None:
    """scores.csv: a header, then one row per episode (episode number, then each agent)."""
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(["episode"] + [f"agent_{i}" for i in range(scores.shape[1])])
    for episode, row in enumerate(scores, start=1):
        writer.writerow([episode] + [f"{v:.4f}" for v in row])
    data = text.getvalue().encode()
    atomic_write(path, lambda fh: fh.write(data))


def read_scores(path: str | os.PathLike[str]) -> np.ndarray:
    """The (episodes, agents) array of a scores.csv, or of the run folder holding one."""
    path = Path(path)
    if path.is_dir():
        path = path / SCORES_FILE
    table = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    return table[:, 1:]


def write_metrics(out_dir: str | os.PathLike[str], rows: list[dict[str, Any]]) -> None:
    """metrics.csv: one row per episode, the columns in the rows' key order (empty: unknown)."""
    if not rows:
        return
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: "" if v is None else (f"{v:.6g}" if isinstance(v, float) else v)
                         for k, v in row.items()})
    data = text.getvalue().encode()
    atomic_write(Path(out_dir) / METRICS_FILE, lambda fh: fh.write(data))


def read_metrics(run: str | os.PathLike[str]) -> list[dict[str, float | None]]:
    """The rows of a run's metrics.csv as numbers (None where empty); [] when it has none."""
    path = Path(run) / METRICS_FILE
    if not path.is_file():
        return []
    with open(path, newline="") as fh:
        return [{k: (float(v) if v != "" else None) for k, v in row.items()} for row in csv.DictReader(fh)]


def read_record(run: str | os.PathLike[str]) -> RunRecord:
    """The ``RunRecord`` of a run folder, or of a record file itself (such as the committed
    checkpoint_run.json). ValueError with the reason when it cannot be used."""
    path = Path(run)
    if path.is_dir() or not path.suffix:
        path = path / RECORD_FILE
        if not path.is_file():
            raise FileNotFoundError(f"{run} is not a run folder: it has no {RECORD_FILE} "
                                    "(train first: python train.py --out DIR)")
    elif not path.is_file():
        raise FileNotFoundError(f"run record not found: {path}")
    try:
        return RunRecord.from_dict(json.loads(path.read_text()))
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot read {path}: {exc}") from None


def resumable_record(run: str | os.PathLike[str]) -> RunRecord:
    """The record of a run that ``train.py --resume`` can continue; ValueError (FileNotFoundError
    for a folder without a run) saying why it cannot."""
    record = read_record(run)
    missing = record.missing_for_resume()
    if missing or not (Path(run) / STATE_FILE).is_file():
        raise ValueError(f"{run} was not saved by train.py with its training state "
                         f"(no {STATE_FILE}{'; run.json lacks ' + ', '.join(missing) if missing else ''})")
    if not (str(record.environment).startswith("reacher.") or record.env_id):
        raise ValueError("only runs on the built-in environment or a Gymnasium task can be resumed")
    return record


def environment_id(run: str | os.PathLike[str]) -> str | None:
    """The Gymnasium id a run trained on (train.py --env); None for the built-in Reacher."""
    return read_record(run).env_id


def plot_scores(scores: np.ndarray, path: str | os.PathLike[str], target: float | None = SOLVE_SCORE,
                window: int = SOLVE_WINDOW) -> None:
    """The reward plot (``ddpg.plots.scores_figure``) as a PNG, atomically."""
    import matplotlib.pyplot as plt

    fig = plots.scores_figure(scores, target, window)
    atomic_write(path, lambda fh: fig.savefig(fh, format="png", dpi=100))
    plt.close(fig)


def write_run(out_dir: str | os.PathLike[str], agent: Agent, scores: np.ndarray,
              record: RunRecord, plot: bool = True) -> None:
    """Write the checkpoints, scores.csv, run.json and (with ``plot``) scores.png."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    save_checkpoints(agent, out / ACTOR_FILE, out / CRITIC_FILE)
    write_scores(out / SCORES_FILE, scores)
    write_json(out / RECORD_FILE, record.to_dict())
    if plot:
        plot_scores(scores, out / PLOT_FILE, record.target_score, record.window)


def write_value_map(out_dir: str | os.PathLike[str], fig: Any, episode: int | None = None) -> Path:
    """Save a value-map figure: the frame of ``episode`` into value_maps/, or (no episode) the
    final picture value_map.png. Returns the path."""
    if episode is None:
        path = Path(out_dir) / VALUE_MAP_FILE
    else:
        (Path(out_dir) / VALUE_MAPS_DIR).mkdir(parents=True, exist_ok=True)
        path = Path(out_dir) / VALUE_MAPS_DIR / f"episode_{episode:05d}.png"
    atomic_write(path, lambda fh: fig.savefig(fh, format="png", dpi=80))
    return path


def write_animation(out_dir: str | os.PathLike[str], fps: float = 4.0) -> Path | None:
    """Assemble value_maps/episode_*.png, in episode order, into value_maps.mp4 (a GIF where
    ffmpeg cannot run; ``ddpg.plots.encode_animation``); None when there are no frames."""
    import tempfile

    frames = sorted((Path(out_dir) / VALUE_MAPS_DIR).glob("episode_*.png"))
    if not frames:
        return None
    with tempfile.TemporaryDirectory() as tmp:  # ffmpeg wants a file name: encode beside, then move in
        encoded = plots.encode_animation(frames, Path(tmp) / ANIMATION_STEM, fps)
        path = Path(out_dir) / encoded.name
        atomic_write(path, lambda fh: fh.write(encoded.read_bytes()))
    return path


# ------------------------------------------------------------------ resuming a run
def check_out_dir(out_dir: str | os.PathLike[str], allow_existing_run: bool) -> None:
    """Fail early (before any training) when ``out_dir`` cannot hold a run, or already holds
    one that ``allow_existing_run`` does not allow to replace. ValueError says what to do."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} is a file; expected a folder (new or holding a run)")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"--out {out} cannot be created: {exc.strerror or exc}") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise ValueError(f"--out {out} is not writable")
    existing = [name for name in RUN_FILES if (out / name).exists()]
    if existing and not allow_existing_run:
        raise ValueError(f"--out {out} already holds a run ({', '.join(existing)}); pass --resume {out} "
                         "to continue it or --force to replace it")


def clear_run(out_dir: str | os.PathLike[str]) -> bool:
    """Remove the files of a run from ``out_dir`` (for --force), so that nothing of the old run
    passes for part of the new one; True when there was something to remove."""
    found = [Path(out_dir) / name for name in RUN_FILES if (Path(out_dir) / name).exists()]
    for path in found:
        path.unlink()
    frames = Path(out_dir) / VALUE_MAPS_DIR
    if frames.is_dir():
        for path in frames.glob("episode_*.png"):
            path.unlink()
        found.append(frames)
    return bool(found)


def save_training_state(run_dir: str | os.PathLike[str], agent: Agent, loop: dict[str, Any],
                        env_random_state: dict[str, Any] | None, save_buffer: bool) -> None:
    """Write training_state.pt (and with ``save_buffer`` replay_buffer.pt), atomically.

    Call it between episodes: the agent's ``state_dict``, the training loop's own state
    (``loop``: episodes done, scores so far, ...) and the random generators. The buffer file
    holds only the filled rows: 4 bytes x (2 x state + action + 2) per transition, about
    290 MB at one million transitions for Reacher.
    """
    run = Path(run_dir)
    state = agent.state_dict(with_buffer=save_buffer)
    rows = state.pop("buffer_rows", None)
    numpy_global = np.random.get_state(legacy=False)  # noqa: NPY002 (the global generator, for code that uses it)
    state.update({
        "random": {"torch": torch.get_rng_state(), "numpy": {**numpy_global, "state": {
            k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in numpy_global["state"].items()}},
            "environment": env_random_state},
        "loop": loop,
        "config": agent.config.to_dict(),
    })
    if rows is not None:
        atomic_write(run / BUFFER_FILE, lambda fh: torch.save(rows, fh))
    atomic_write(run / STATE_FILE, lambda fh: torch.save(state, fh))


def load_training_state(run_dir: str | os.PathLike[str], agent: Agent) -> dict[str, Any]:
    """Restore an agent saved by ``save_training_state``; return the rest of the saved state
    (``loop``, ``environment``, and ``exact``: False when the buffer was not saved and starts empty)."""
    run = Path(run_dir)
    path = run / STATE_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{run} holds no {STATE_FILE}: it cannot be resumed (runs save it every "
                                "--save-every episodes and at their end)")
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises several types for corrupt files
        raise ValueError(f"cannot read {path}: {type(exc).__name__}: {exc}") from None
    rows = None
    if state["buffer"]["saved"] and (run / BUFFER_FILE).is_file():
        rows = torch.load(run / BUFFER_FILE, map_location="cpu", weights_only=True)
    try:
        exact = agent.load_state_dict(state, rows)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None
    random = state["random"]
    torch.set_rng_state(random["torch"])
    numpy_state = random["numpy"]
    key_state = {k: (np.array(v, dtype=np.uint32) if isinstance(v, list) else v) for k, v in numpy_state["state"].items()}
    np.random.set_state({**numpy_state, "state": key_state})  # noqa: NPY002
    return {"loop": state["loop"], "environment": random["environment"], "exact": exact}
