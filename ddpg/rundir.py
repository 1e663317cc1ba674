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
state (``ddpg.agent_state``), the plot by ``ddpg.plots``; rebuilding an agent from
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

from ddpg import agent_state, faults, plots
from ddpg.agent_state import tensor_state
from ddpg.record import RunRecord
from ddpg.run_files import (  # noqa: F401 (rundir.ACTOR_FILE and the others, as before)
    ACTOR_FILE,
    ANIMATION_STEM,
    ANIMATION_SUFFIXES,
    BUFFER_FILE,
    CRITIC_FILE,
    METRICS_FILE,
    NEXT_BUFFER_FILE,
    PLOT_FILE,
    RECORD_FILE,
    RUN_FILES,
    SCORES_FILE,
    STATE_FILE,
    TEMPORARY_MARK,
    VALUE_MAP_FILE,
    VALUE_MAPS_DIR,
)
from ddpg.solved import SOLVE_SCORE, SOLVE_WINDOW
from ddpg_agent import Agent


class SaveError(OSError):
    """A file of the run could not be written (a full disk, a read-only folder). The file it
    was to replace, and every other file of the folder, are as the last complete save left them.
    Reads "cannot write PATH: REASON"; ``strerror`` is the reason alone, as for any OSError."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"cannot write {path}: {reason}")
        self.strerror = reason


class NetworkMismatch(ValueError):
    """A checkpoint whose layers are not the agent's: ``saved`` and ``expected`` say both. The
    message suits an agent built by hand; ``for_run`` says it for an agent built from a run's
    run.json, where rebuilding it from run.json is what already happened."""

    def __init__(self, path: str | os.PathLike[str], saved: str, expected: str) -> None:
        super().__init__(f"checkpoint {os.fspath(path)} does not match the network: it has layers [{saved}], the "
                         f"agent expects [{expected}]; build the agent with the checkpoint's sizes (a run folder's "
                         f"{RECORD_FILE} records them: watch.py --run DIR)")
        self.path, self.saved, self.expected = Path(path), saved, expected

    def for_run(self, run: str | os.PathLike[str]) -> str:
        """One line for a run's own checkpoint that its run.json no longer builds: what differs, and what to do."""
        return (f"{run}: its {self.path.name} has layers [{self.saved}], but its {RECORD_FILE} with model.py as it "
                f"is now builds [{self.expected}]: model.py's layer sizes (or {RECORD_FILE}'s config) changed since "
                f"the run trained; put them back as they were, or set actor_fc1, actor_fc2, critic_fc1 and critic_fc2 "
                f"in {RECORD_FILE}'s config to the saved sizes")


class _Handed:
    """The file handed to a writer: keeps the OSError of a failed write, which torch.save
    would otherwise turn into "[enforce fail at inline_container.cc] unexpected pos"."""

    def __init__(self, fh: io.BufferedWriter) -> None:
        self.fh, self.error = fh, None

    def write(self, data: bytes) -> int:
        try:
            return self.fh.write(data)
        except OSError as exc:
            self.error = exc
            raise

    def __getattr__(self, name: str) -> Any:  # flush, tell, seek, fileno...: as the file itself
        return getattr(self.fh, name)


def _temporary_name(path: Path) -> Path:
    return path.with_name(f".{path.name}{TEMPORARY_MARK}{os.getpid()}")


def atomic_write(path: str | os.PathLike[str], write: Callable[[Any], None]) -> None:
    """Write ``path`` through ``write(file)`` into a temporary file, then rename it over ``path``.

    The one atomic-write routine of the project: an interrupted write leaves the old file (or
    none), never a truncated one; a process killed mid-write leaves its temporary file, which
    ``remove_leftovers`` takes away at the next start. A failed write (a full disk) is a
    ``SaveError`` naming the file and the reason, with the temporary file removed.
    """
    path = Path(path)
    tmp = _temporary_name(path)
    try:
        with open(tmp, "wb") as fh:
            faults.point(f"open {path.name}")
            handed = _Handed(fh)
            try:
                write(handed)
                faults.point(f"written {path.name}")
                fh.flush()
                os.fsync(fh.fileno())
            except Exception as exc:
                if handed.error is None and not isinstance(exc, OSError):
                    raise
                raise SaveError(path, _reason(handed.error or exc)) from None
        os.replace(tmp, path)
        faults.point(f"renamed {path.name}")
    except SaveError:
        raise
    except OSError as exc:  # the temporary file could not be made, or the rename failed
        raise SaveError(path, _reason(exc)) from None
    finally:
        if tmp.exists():
            tmp.unlink()


def _reason(exc: BaseException) -> str:
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else f"{type(exc).__name__}: {exc}"


def remove_leftovers(folder: str | os.PathLike[str]) -> list[Path]:
    """Remove the temporary files that writers killed mid-write (kill -9, a power cut) left in
    ``folder`` and its value_maps/; a file of a process still running is left alone. The paths
    removed."""
    removed = []
    for where in (Path(folder), Path(folder) / VALUE_MAPS_DIR):
        if not where.is_dir():
            continue
        for path in where.glob(f".*{TEMPORARY_MARK}*"):
            pid = path.name.rpartition(TEMPORARY_MARK)[2]
            if pid.isdigit() and not _alive(int(pid)):
                path.unlink(missing_ok=True)
                removed.append(path)
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return False  # this process has no write under way when it cleans up
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


# ------------------------------------------------------------------ checkpoints
def save_checkpoints(agent: Agent, actor_path: str | os.PathLike[str],
                     critic_path: str | os.PathLike[str]) -> None:
    """The local actor's and critic's state_dicts, in the course's file format."""
    write_checkpoints(tensor_state(agent.actor_local), tensor_state(agent.critic_local), actor_path, critic_path)


def write_checkpoints(actor: dict[str, torch.Tensor], critic: dict[str, torch.Tensor],
                      actor_path: str | os.PathLike[str], critic_path: str | os.PathLike[str]) -> None:
    """Two state_dicts (the networks now, or as a training state kept them) as the checkpoints."""
    for state, path in ((actor, actor_path), (critic, critic_path)):
        atomic_write(path, lambda fh, state=state: torch.save(state, fh))


LAYER_NORM_KEY = "ln1"  # model.Critic's first layer norm: in a critic's state_dict when it has layer norm


def _layer_sizes(state: dict[str, torch.Tensor]) -> str:
    """'fc1 33->128, fc2 128->128, ...' from the weight matrices of a state_dict (', layer norm'
    when it has model.Critic's)."""
    sizes = ", ".join(f"{k[:-len('.weight')]} {v.shape[1]}->{v.shape[0]}"
                      for k, v in state.items() if k.endswith(".weight") and getattr(v, "ndim", 0) == 2)
    return sizes + (", layer norm" if f"{LAYER_NORM_KEY}.weight" in state else "")


def _same_layers(saved: dict[str, Any], expected: dict[str, torch.Tensor]) -> bool:
    """The same tensors by name and shape: a state_dict that loads into the module of ``expected``."""
    return set(saved) == set(expected) and all(getattr(saved[k], "shape", None) == expected[k].shape for k in saved)


def _is_state_dict(value: Any) -> bool:
    """A network's state_dict (names to tensors), as a checkpoint holds."""
    return isinstance(value, dict) and all(isinstance(v, torch.Tensor) for v in value.values())


def read_state_dict(path: str | os.PathLike[str]) -> dict[str, torch.Tensor]:
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"checkpoint not found: {path}")
    state = _load(Path(path), "a checkpoint (a network's state_dict)")
    if not _is_state_dict(state):
        kind = "a training state (training_state.pt)" if isinstance(state, dict) and "networks" in state \
            else f"a {type(state).__name__}"
        raise ValueError(f"checkpoint {path} holds {kind}, expected a network's state_dict (checkpoint_actor.pth)")
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
        if not _same_layers(state, expected):
            raise NetworkMismatch(path, _layer_sizes(state), _layer_sizes(expected))
        module.load_state_dict(state)
    agent.actor_target.load_state_dict(agent.actor_local.state_dict())
    agent.critic_target.load_state_dict(agent.critic_local.state_dict())
    if agent.backend is not None:
        agent.backend.weights_loaded()  # the CUDA graph back-end's acting copy follows
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


class CsvLines:
    """The formatted lines of a CSV that only grows (scores.csv, metrics.csv), kept between
    writes, so rewriting it after every episode formats one new row, not all of them."""

    def __init__(self) -> None:
        self.header = ""
        self.lines: list[str] = []

    def text(self, header: list[str], rows: Any, format_row: Callable[[int, Any], list[Any]]) -> bytes:
        """The whole file; rows already formatted are reused when the header is unchanged."""
        head = _csv_line(header)
        if head != self.header or len(self.lines) > len(rows):
            self.header, self.lines = head, []
        for number in range(len(self.lines), len(rows)):
            self.lines.append(_csv_line(format_row(number, rows[number])))
        return (self.header + "".join(self.lines)).encode()


def _csv_line(values: list[Any]) -> str:
    text = io.StringIO()
    csv.writer(text, lineterminator="\n").writerow(values)
    return text.getvalue()


def write_scores(path: str | os.PathLike[str], scores: np.ndarray, lines: CsvLines | None = None) -> None:
    """scores.csv: a header, then one row per episode (episode number, then each agent);
    ``lines`` keeps the rows formatted by earlier writes of the same run."""
    data = (lines or CsvLines()).text(["episode"] + [f"agent_{i}" for i in range(scores.shape[1])], scores,
                                      lambda i, row: [i + 1] + [f"{v:.4f}" for v in row])
    atomic_write(path, lambda fh: fh.write(data))


def read_scores(path: str | os.PathLike[str]) -> np.ndarray:
    """The (episodes, agents) array of a scores.csv, or of the run folder holding one."""
    path = Path(path)
    if path.is_dir():
        path = path / SCORES_FILE
    table = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    return table[:, 1:]


def write_metrics(out_dir: str | os.PathLike[str], rows: list[dict[str, Any]], lines: CsvLines | None = None) -> None:
    """metrics.csv: one row per episode, the columns in the rows' key order (empty: unknown);
    ``lines`` keeps the rows formatted by earlier writes of the same run."""
    if not rows:
        return
    data = (lines or CsvLines()).text(list(rows[0]), rows, lambda _, row: [
        "" if v is None else (f"{v:.6g}" if isinstance(v, float) else v) for v in row.values()])
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
    for a folder without a run) saying why it cannot. A run whose process was killed before
    its first training state was saved has only its run.json: it starts again from episode 1
    with the recorded settings (``load_training_state`` tells the two apart). A run whose
    run.json records a save but whose training_state.pt is gone is refused: starting it again
    would overwrite what it saved."""
    try:
        record = read_record(run)
    except FileNotFoundError:
        if Path(run).is_dir() and any(Path(run).glob(f".*{TEMPORARY_MARK}*")):
            raise FileNotFoundError(f"{run} holds no run: the run that wrote into it stopped before it saved its "
                                    f"{RECORD_FILE}, so nothing is lost; start it again with --out {run}") from None
        raise
    missing = record.missing_for_resume()
    if missing:
        raise ValueError(f"{run} was not saved by train.py with its training state ({RECORD_FILE} lacks "
                         f"{', '.join(missing)})")
    if not (str(record.environment).startswith("reacher.") or record.env_id):
        raise ValueError("only runs on the built-in environment or a Gymnasium task can be resumed")
    # run.json is rewritten only after training_state.pt is in place, so a record that names a
    # save (or a finished run) without the file means the file went afterwards: starting again
    # from episode 1 would train over the run's checkpoints and scores.
    if (record.finished or (record.resumable_from_episode or 0) > 0) and not (Path(run) / STATE_FILE).is_file():
        what = "the finished run's final save" if record.finished else "a save"
        saved = record.resumable_from_episode if record.resumable_from_episode is not None else record.episodes_run
        raise ValueError(f"{run} has no {STATE_FILE}, though its {RECORD_FILE} records {what}, after episode {saved}: "
                         f"it cannot be continued without that file, and nothing was changed; put the file back, or "
                         f"train it again from episode 1 with its command ({RECORD_FILE}'s \"command\") and --force")
    return record


def episodes_written(run: str | os.PathLike[str]) -> int:
    """Episodes whose scores the folder holds (scores.csv is rewritten after every episode)."""
    path = Path(run) / SCORES_FILE
    if not path.is_file():
        return 0
    with open(path) as fh:
        return max(0, sum(1 for line in fh if line.strip()) - 1)


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
              record: RunRecord, plot: bool = True,
              networks: tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]] | None = None,
              scores_lines: CsvLines | None = None) -> None:
    """Write the checkpoints (the agent's networks, or ``networks``: an actor's and a critic's
    state_dict), scores.csv, (with ``plot``) scores.png, and run.json last."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if networks is None:
        save_checkpoints(agent, out / ACTOR_FILE, out / CRITIC_FILE)
    else:
        write_checkpoints(*networks, out / ACTOR_FILE, out / CRITIC_FILE)
    write_scores(out / SCORES_FILE, scores, scores_lines)
    if plot:
        plot_scores(scores, out / PLOT_FILE, record.target_score, record.window)
    write_json(out / RECORD_FILE, record.to_dict())


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
    left = remove_leftovers(out)
    if left:
        print(f"Removed {len(left)} temporary file(s) from {out} left by a run killed while saving "
              f"({', '.join(p.name for p in left)})")
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


def training_state(agent: Agent, loop: dict[str, Any], env_random_state: dict[str, Any] | None,
                   with_buffer: bool) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """What training_state.pt holds, taken between episodes: the agent's ``state_dict``, the
    training loop's own state (``loop``: episodes done, scores so far, ...) and the random
    generators (torch's, NumPy's global one, the environment's); and, with ``with_buffer``,
    the replay buffer's filled rows for replay_buffer.pt (else None)."""
    state = agent_state.capture(agent, with_buffer=with_buffer)
    rows = state.pop("buffer_rows", None)
    numpy_global = np.random.get_state(legacy=False)  # noqa: NPY002 (the global generator, for code that uses it)
    state.update({
        "random": {"torch": torch.get_rng_state(), "numpy": {**numpy_global, "state": {
            k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in numpy_global["state"].items()}},
            "environment": env_random_state},
        "loop": loop,
        "config": agent.config.to_dict(),
    })
    return state, rows


def write_training_state(run_dir: str | os.PathLike[str], state: dict[str, Any], rows: dict[str, Any] | None) -> None:
    """Write training_state.pt and, with ``rows``, replay_buffer.pt; each atomically, and as a pair.

    The rows go to replay_buffer.next.pt first, the state into place, and only then the rows
    over replay_buffer.pt: whenever the process dies, one of the two buffer files is the
    state's (``load_training_state`` takes the one whose step count matches). A state saved
    without rows makes older buffer files useless: they are removed.
    """
    run = Path(run_dir)
    if rows is not None:
        atomic_write(run / NEXT_BUFFER_FILE, lambda fh: torch.save(rows, fh))
    atomic_write(run / STATE_FILE, lambda fh: torch.save(state, fh))
    if rows is not None:
        os.replace(run / NEXT_BUFFER_FILE, run / BUFFER_FILE)
        faults.point(f"renamed {BUFFER_FILE}")
    else:
        for name in (BUFFER_FILE, NEXT_BUFFER_FILE):
            (run / name).unlink(missing_ok=True)


def save_training_state(run_dir: str | os.PathLike[str], agent: Agent, loop: dict[str, Any],
                        env_random_state: dict[str, Any] | None, save_buffer: bool) -> None:
    """Write the training state as it is now (call it between episodes); with
    ``save_buffer`` also the replay buffer: 4 bytes x (2 x state + action + 2) per
    transition, about 290 MB at one million transitions for Reacher."""
    write_training_state(run_dir, *training_state(agent, loop, env_random_state, save_buffer))


# The parts of a training_state.pt; a file without them is something else (a checkpoint).
STATE_PARTS = ("networks", "optimizer", "noise", "agent", "buffer", "random", "loop")


def load_training_state(run_dir: str | os.PathLike[str], agent: Agent) -> dict[str, Any]:
    """Restore an agent saved by ``save_training_state``; return the rest of the saved state
    (``loop``, ``environment``, and ``exact``: False when the buffer was not saved and starts
    empty). ValueError, one line, for a file that is not a training state or does not fit the agent."""
    run = Path(run_dir)
    path = run / STATE_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{run} holds no {STATE_FILE}: it cannot be resumed (runs save it every "
                                "--save-every episodes and at their end)")
    state = _load(path, "a training state")
    missing = [part for part in STATE_PARTS if part not in state] if isinstance(state, dict) else list(STATE_PARTS)
    if missing:
        looks = " (it looks like a network's state_dict: a checkpoint_*.pth?)" if _is_state_dict(state) else ""
        raise ValueError(f"{path} is not a training state written by train.py: it lacks {', '.join(missing)}{looks}")
    rows = _buffer_rows(run, state) if state["buffer"]["saved"] else None
    _check_networks(path, state["networks"], agent)
    try:
        exact = agent_state.restore(agent, state, rows)
    except (ValueError, KeyError, RuntimeError) as exc:
        raise ValueError(f"{path} does not fit the run's agent: {_first_line(exc)}") from None
    random = state["random"]
    torch.set_rng_state(random["torch"])
    numpy_state = random["numpy"]
    key_state = {k: (np.array(v, dtype=np.uint32) if isinstance(v, list) else v) for k, v in numpy_state["state"].items()}
    np.random.set_state({**numpy_state, "state": key_state})  # noqa: NPY002
    return {"loop": state["loop"], "environment": random["environment"], "exact": exact}


def _buffer_rows(run: Path, state: dict[str, Any]) -> dict[str, Any] | None:
    """The saved buffer rows that belong to ``state`` (the same step count): replay_buffer.pt,
    or, after a process died between a save's two renames, replay_buffer.next.pt, which is
    then moved into place. None when neither is the state's (the resume is not exact)."""
    for name in (NEXT_BUFFER_FILE, BUFFER_FILE):
        if (run / name).is_file():
            rows = _load(run / name, "a replay buffer")
            if isinstance(rows, dict) and rows.get("t_step") == state["agent"]["t_step"]:
                if name == NEXT_BUFFER_FILE:
                    os.replace(run / NEXT_BUFFER_FILE, run / BUFFER_FILE)
                return rows
    return None


def _load(path: Path, what: str) -> Any:
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises several types, with several lines, for files it cannot read
        # PyTorch's own text runs to several lines and, for a file that is not its own, gives
        # advice that does not apply (load it with weights_only=False): its error's name is enough.
        raise ValueError(f"cannot read {path}: it is not {what} saved by torch.save, or it is damaged "
                         f"(PyTorch: {type(exc).__name__})") from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _check_networks(path: Path, networks: dict[str, Any], agent: Agent) -> None:
    """Each saved network has the agent's layers: else a ValueError naming both (run.json's
    config builds the agent; a training_state.pt copied from another run does not fit it)."""
    for name, saved in networks.items():
        module = getattr(agent, name, None)
        if module is None or not isinstance(saved, dict):
            raise ValueError(f"{path} does not fit the run's agent: it has a network {name!r} the agent lacks")
        expected = module.state_dict()
        if not _same_layers(saved, expected):
            raise ValueError(f"{path} does not fit the run: its {name} has layers [{_layer_sizes(saved)}], the run's "
                             f"{RECORD_FILE} builds [{_layer_sizes(expected)}]")
