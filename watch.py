"""Watch the trained arms: reload the checkpoints and run the greedy policy (no noise).

With a display, MuJoCo's interactive viewer shows the arms live, in real time, as the
Unity window did. Without one (or with --out or --no-viewer) the run is written to a
video file headless: MP4 (through imageio-ffmpeg) or GIF, chosen by the extension.

    python watch.py                          # the committed checkpoints: viewer, or watch.mp4 headless
    python watch.py --run runs/latest        # a run folder: its architecture comes from run.json
    python watch.py --agents 1 --episodes 3 --out one_arm.gif --steps 300 --every 2
    python watch.py --run runs/mcc --out mcc.mp4  # a Gymnasium task's run: a video of the task

The notebook uses `record_video` (an inline clip) and `filmstrip` (a still that GitHub shows).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ddpg.command_line.device import add_device_option, resolve_device

# Light modules (neither PyTorch nor MuJoCo), so that --help is answered before either loads;
# the agent, the run folder and the environment are imported inside the functions that use them.
from ddpg.command_line.parsing import positive_float, positive_int, random_seed
from ddpg.reporting.playing import DEFAULT_ACTOR, DEFAULT_CRITIC, EPISODE_DECISIONS, load_agent, played_task, run_episode
from ddpg.run_folder.file_names import TEMPORARY_MARK
from ddpg.tasks import DEFAULT_ENV, open_environment
from envkit.display import OFFSCREEN_HEIGHT, OFFSCREEN_WIDTH  # no MuJoCo
from envkit.viewer import join_viewer_threads  # no MuJoCo
from reacher import PHYSICS_DT, PHYSICS_STEPS_PER_DECISION

# One decision is 4 physics steps of 0.02 s: 12.5 decisions per simulated second.
DECISIONS_PER_SECOND = 1.0 / (PHYSICS_DT * PHYSICS_STEPS_PER_DECISION)
# The Crawler's (crawler/gym_env.py RENDER_FPS: 5 physics steps of 1/75 s a decision), for --help
# without importing MuJoCo; a video takes the environment's own.
CRAWLER_DECISIONS_PER_SECOND = 15
# The built-in model's offscreen framebuffer.
MAX_WIDTH, MAX_HEIGHT = OFFSCREEN_WIDTH, OFFSCREEN_HEIGHT
VIDEO_SUFFIXES = (".mp4", ".gif")
FILMSTRIP_SUFFIX = ".png"  # watch.py --out strip.png: four stills of one episode side by side
DEFAULT_VIDEO = "watch.mp4"  # where the video goes without --out when no viewer opens
NUMBER_WORDS = {2: "two", 3: "three", 4: "four"}  # a filmstrip's stills, as its line says them


def __getattr__(name: str) -> Any:
    """``watch.ReacherEnvironment``, the built-in environment's class, loaded (with MuJoCo) when
    first asked for rather than when watch.py is imported; a module attribute, so it can be replaced."""
    if name == "ReacherEnvironment":
        # (envkit.mujoco_gl chooses a headless GL backend before MuJoCo loads.)
        from reacher.environment import ReacherEnvironment

        globals()[name] = ReacherEnvironment
        return ReacherEnvironment
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _reacher_environment(**kwargs: Any) -> Any:
    """A built-in Reacher, made by ``watch.ReacherEnvironment`` (whatever it is now)."""
    environment = globals().get("ReacherEnvironment") or __getattr__("ReacherEnvironment")
    return environment(**kwargs)


def still_decisions(frames: int, steps: int) -> list[int]:
    """The decisions a filmstrip shows after: ``frames`` evenly spaced from the start (0) to the
    last of ``steps`` (rounded down between), fewer when ``steps`` has fewer than ``frames - 1``
    decisions to spread them over (one still per decision, the start included)."""
    if frames < 2 or steps < 1:
        raise ValueError(f"a filmstrip needs frames >= 2 and steps >= 1, got {frames} and {steps}")
    shown = min(frames, steps + 1)
    return [i * steps // (shown - 1) for i in range(shown)]


def filmstrip(env: Any, agent: Any, path: str | os.PathLike[str], frames: int = 4,
              steps: int = 200, width: int = 320, height: int = 240) -> np.ndarray:
    """A PNG of ``frames`` stills side by side, evenly spaced over ``steps`` greedy decisions
    (the first at the start, the last after the last decision; ``still_decisions``); returns
    each agent's score over those ``steps`` decisions, all of which are played.

    A notebook's PNG output is what GitHub shows of it, where an inline video is not.
    """
    at = still_decisions(frames, steps)
    stills: list[np.ndarray] = []
    scores = run_episode(env, agent, steps, 1, stills.append, width, height, at=set(at))
    gap = np.full((height, 4, 3), 255, dtype=np.uint8)
    strip = np.concatenate([part for still in stills for part in (still, gap)][:-1], axis=1)
    from PIL import Image

    from ddpg.run_folder.atomic import atomic_write

    atomic_write(path, lambda fh: Image.fromarray(strip).save(fh, format="PNG"))
    return scores


def default_fps(every: int) -> float:
    """Frames per second that play the simulation in real time when rendering every k-th decision."""
    return DECISIONS_PER_SECOND / every


def record_video(
    env: Any,
    agent: Any,
    path: str | os.PathLike[str],
    episodes: int = 1,
    steps: int = EPISODE_DECISIONS,
    every: int = 1,
    fps: float | None = None,
    width: int = 640,
    height: int = 480,
    on_episode: Callable[[int, np.ndarray], None] | None = None,
    quality: float = 5.0,
    progress: bool = False,
) -> list[np.ndarray]:
    """Write `episodes` greedy episodes into one video file (.mp4 or .gif); return their scores.

    MP4 frames are streamed to ffmpeg as they are rendered; a GIF is assembled in memory by
    Pillow, so keep GIFs short. `fps` defaults to real time; `quality` (0-10, MP4 only) trades
size for sharpness: 4 keeps a short notebook clip small (the floor's checker pattern is
expensive to encode). `on_episode(i, scores)` is called
    after each episode (the CLI prints there).
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in VIDEO_SUFFIXES:
        raise ValueError(f"video path must end in .mp4 or .gif, got {str(path)!r}")
    fps = default_fps(every) if fps is None else float(fps)
    path.parent.mkdir(parents=True, exist_ok=True)
    # Written beside, then renamed into place: a failure (a full disk) leaves an older video
    # whole. Opening it first finds a folder that cannot be written before anything renders.
    tmp = path.with_name(f".{path.stem}.tmp{os.getpid()}{suffix}")
    tmp.open("wb").close()
    import imageio.v2 as imageio

    try:
        if suffix == ".mp4":
            # macro_block_size=2: H.264 with yuv420p needs even sizes; keep the size as asked.
            writer = imageio.get_writer(tmp, format="FFMPEG", mode="I", fps=fps, codec="libx264",
                                        quality=quality, pixelformat="yuv420p", macro_block_size=2)
        else:
            # Pillow's GIF writer takes a per-frame duration in ms; loop=0 loops forever.
            writer = imageio.get_writer(tmp, format="GIF", mode="I", duration=1000.0 / fps, loop=0)
        all_scores = _record(env, agent, writer, episodes, steps, every, width, height, on_episode, progress)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return all_scores


def _record(env: Any, agent: Any, writer: Any, episodes: int, steps: int, every: int, width: int, height: int,
            on_episode: Callable[[int, np.ndarray], None] | None, progress: bool) -> list[np.ndarray]:
    """Play the episodes into an open imageio writer, closing it at the end (a failure included)."""
    all_scores = []
    from tqdm.auto import tqdm

    # A progress bar over the frames (``progress``): a long render takes minutes.
    bar = tqdm(total=episodes * (1 + steps // every), disable=None if progress else True, unit="frame", leave=False)

    def add_frame(frame: np.ndarray) -> None:
        writer.append_data(frame)
        bar.update(1)

    try:
        for episode in range(1, episodes + 1):
            scores = run_episode(env, agent, steps, every, add_frame, width, height)
            all_scores.append(scores)
            if on_episode is not None:
                on_episode(episode, scores)
    finally:
        bar.close()
        writer.close()
    return all_scores


# ----------------------------------------------------------------------------- CLI


def build_parser() -> argparse.ArgumentParser:
    """The command-line options (also used by the tests)."""
    parser = argparse.ArgumentParser(allow_abbrev=False,
        prog="watch.py",
        description="Reload the trained checkpoints and watch the arms: the MuJoCo viewer when a "
        "display exists, otherwise (or with --out / --no-viewer) a video file written headless.")
    parser.add_argument("--run", default=None, metavar="DIR",
                        help="a run folder written by train.py: its checkpoints, with the architecture from its run.json")
    parser.add_argument("--actor", default=None,
                        help=f"actor state_dict, any layer sizes (default: {DEFAULT_ACTOR.name})")
    parser.add_argument("--critic", default=None,
                        help=f"critic state_dict, checked to load as in the course; 'none' skips it "
                             f"(default: {DEFAULT_CRITIC.name})")
    parser.add_argument("--episodes", type=positive_int, default=1, help="episodes to play (default: %(default)s)")
    parser.add_argument("--agents", type=positive_int, default=None,
                        help="number of arms, e.g. 1 or 20 (default: 20); for a run of a Gymnasium task, copies played "
                             "together, crawlers for the Crawler (default: 1; the video shows the first)")
    parser.add_argument("--steps", type=positive_int, default=EPISODE_DECISIONS,
                        help=f"decisions per episode, at most {EPISODE_DECISIONS} (default: %(default)s)")
    parser.add_argument("--out", default=None,
                        help="video file (.mp4 or .gif), or a filmstrip (.png: four stills spread over --steps "
                             "decisions, side by side, fewer for --steps under 3); writing one implies --no-viewer "
                             "(default when headless: watch.mp4)")
    parser.add_argument("--fps", type=positive_float, default=None,
                        help=f"video frames per second (default: real time, the task's decisions per second / --every: "
                             f"the Reacher's {DECISIONS_PER_SECOND:g}, the Crawler's {CRAWLER_DECISIONS_PER_SECOND:g}, a "
                             "Gymnasium task's render_fps)")
    parser.add_argument("--every", type=positive_int, default=1, help="render a frame every k decisions (default: %(default)s)")
    parser.add_argument("--width", type=positive_int, default=640, help="video width in pixels (default: %(default)s)")
    parser.add_argument("--height", type=positive_int, default=480, help="video height in pixels (default: %(default)s)")
    parser.add_argument("--seed", type=random_seed, default=0,
                        help="environment seed, 0 to 2**63 - 1: goals and their speeds (default: %(default)s)")
    add_device_option(parser, acting_only=True)
    parser.add_argument("--no-viewer", action="store_true", help="never open the interactive viewer; write a video instead")
    return parser


def _check_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Problems argparse cannot see on its own; parser.error exits with status 2."""
    if args.steps > EPISODE_DECISIONS:
        parser.error(f"--steps must be at most {EPISODE_DECISIONS} (an episode's length), got {args.steps}")
    if args.out is not None and Path(args.out).suffix.lower() not in (*VIDEO_SUFFIXES, FILMSTRIP_SUFFIX):
        parser.error(f"--out must end in .mp4 or .gif (a video) or .png (a filmstrip), got {args.out!r}")
    if args.width > MAX_WIDTH or args.height > MAX_HEIGHT:
        parser.error(f"--width/--height must be at most {MAX_WIDTH}x{MAX_HEIGHT} (the model's offscreen framebuffer), "
                     f"got {args.width}x{args.height}")
    if args.width < 16 or args.height < 16:
        parser.error(f"--width/--height must be at least 16, got {args.width}x{args.height}")
    if args.out is not None and Path(args.out).suffix.lower() == ".mp4" and (args.width % 2 or args.height % 2):
        parser.error(f"MP4 (H.264) needs an even width and height, got {args.width}x{args.height}")


def _unwritable(path: Path) -> str | None:
    """Why a file cannot be written at ``path`` (None: it can), found before minutes of
    rendering rather than after: its folder is made, as writing it would, and a file made and
    removed there (the name of a writer's temporary file, so nothing of another's is touched)."""
    probe = path.with_name(f".{path.name}{TEMPORARY_MARK}{os.getpid()}")
    try:  # (is_dir raises, rather than answers, for a name the file system refuses as too long)
        if path.is_dir():
            return "it is a folder"
        path.parent.mkdir(parents=True, exist_ok=True)
        probe.open("wb").close()
        probe.unlink()
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def display_works() -> bool:
    """True when a desktop display can really be opened.

    DISPLAY may be set with no X server behind it (a stale ssh session, a container);
    MuJoCo's passive viewer then fails silently in its own thread, so ask GLFW first.
    """
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        return False
    try:
        import warnings

        import glfw

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # glfw warns (GLFWError) rather than raising
            ok = bool(glfw.init())
            if ok:
                glfw.terminate()
        return ok
    except Exception:  # no glfw library, or it cannot load
        return False


def _viewer_is_open(env: Any) -> bool:
    # A built-in scene keeps its live window here (envkit.viewer.LiveViewer); a Unity binary has none.
    return bool(getattr(getattr(env, "_viewer", None), "is_open", False))


def _close(env: Any) -> None:
    """Close the environment and let MuJoCo's viewer thread finish.

    The passive viewer renders in a daemon thread that close() only asks to stop; if the
    interpreter exits while it is still drawing, the process can segfault at exit
    (`envkit.viewer.join_viewer_threads` finds the thread and waits for it).
    """
    env.close()
    join_viewer_threads()


def _report(episode: int, scores: np.ndarray, steps: int) -> None:
    partial = "" if steps >= EPISODE_DECISIONS else f" (first {steps} decisions)"
    print(f"Episode {episode}: score (mean over {len(scores)} agents) {scores.mean():.2f}{partial}, "
          f"min {scores.min():.2f}, max {scores.max():.2f}", flush=True)


def _watch_gym(parser: argparse.ArgumentParser, args: argparse.Namespace, agent: Any, env_id: str) -> int:
    """watch.py --run on a Gymnasium task's run: one copy of the task, frames at the task's
    own size and real-time rate (its render_fps), into --out (default watch.mp4)."""
    try:
        env = open_environment(env_id, args.agents, args.seed, render=True, own_episodes=False)  # every agent starts together
    except ValueError as exc:
        parser.error(f"--run: {exc}")
    try:
        out = args.out or DEFAULT_VIDEO
        fps = args.fps or env.fps / args.every
        copies = "" if args.agents == 1 else f"{args.agents} copies of "
        print(f"Writing {args.episodes} episode(s) of {copies}{env_id} to {out} (a frame every {args.every} step(s), "
              f"{fps:g} fps)", flush=True)
        over = "" if args.agents == 1 else f" (mean over {args.agents})"
        try:
            record_video(env, agent, out, args.episodes, args.steps, args.every, fps,
                         on_episode=lambda i, s: print(f"Episode {i}: return{over} {s.mean():.2f}", flush=True),
                         progress=True)
        except OSError as exc:  # an unwritable folder, a full disk: any older video is untouched
            return _error(f"cannot write {out}: {exc.strerror or exc}")
        print(f"Saved {out}")
        return 0
    finally:
        env.close()


def _error(message: str) -> int:
    """One line on stderr, as argparse's own errors read, and the exit status of a failure at run time."""
    print(f"watch.py: error: {message}", file=sys.stderr)
    return 1


def _filmstrip(args: argparse.Namespace, agent: Any) -> int:
    """watch.py --out strip.png: four stills of the greedy policy on the built-in Reacher."""
    env = _reacher_environment(num_agents=args.agents, seed=args.seed, verbose=False, show_viewer=False)
    try:
        scores = filmstrip(env, agent, args.out, steps=args.steps, width=args.width, height=args.height)
    except RuntimeError as exc:  # no GL backend: the environment's message says what to install
        return _error(str(exc))
    except OSError as exc:  # an unwritable folder, a full disk (ddpg.run_folder.atomic.SaveError): an older file is untouched
        return _error(f"cannot write {args.out}: {exc.strerror or exc}")
    finally:
        _close(env)
    stills = len(still_decisions(4, args.steps))
    decisions = f"{args.steps} decision" + ("s" if args.steps > 1 else "")
    print(f"Saved {args.out}: {NUMBER_WORDS[stills]} stills over {decisions} of {args.agents} arm(s), which scored "
          f"{scores.mean():.2f} on average over them")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    _check_args(parser, args)
    try:
        agent = load_agent(args.actor, args.critic, seed=args.seed, run=args.run, device=resolve_device(args.device))
    except (FileNotFoundError, ValueError) as exc:
        hint = " (train first: `make run` or `python train.py --out DIR`, then pass --run DIR)" \
            if isinstance(exc, FileNotFoundError) and args.run is None else ""
        if args.run is not None and hasattr(exc, "for_run"):  # ddpg.run_folder.checkpoints.NetworkMismatch: built from run.json already
            parser.error(f"--run {exc.for_run(args.run)}")
        parser.error(f"{exc}{hint}")
    if args.out is not None and (problem := _unwritable(Path(args.out))) is not None:  # before any rendering
        parser.error(f"--out {args.out} cannot be written ({problem}); expected a file in a folder that can be "
                     "written (missing folders are made)")
    if args.out is not None:  # not into a run folder while a run writes there
        from ddpg.run_folder import run_lock

        try:
            run_lock.refuse_if_in_use(Path(args.out).parent, f"--out {args.out}: its folder")
        except ValueError as exc:
            parser.error(str(exc))

    try:  # a bare checkpoint's task from its sizes (the Crawler's is not the Reacher's)
        env_id, agents = played_task(args.run, agent)
    except ValueError as exc:
        parser.error(str(exc))
    args.agents = agents if args.agents is None else args.agents
    strip = args.out is not None and Path(args.out).suffix.lower() == FILMSTRIP_SUFFIX
    if env_id != DEFAULT_ENV:  # a Gymnasium task: a video of its rgb_array frames
        if strip:
            parser.error(f"--out {args.out}: a filmstrip (.png) is for the built-in Reacher; {env_id} runs take "
                         ".mp4 or .gif")
        return _watch_gym(parser, args, agent, env_id)
    if strip:
        return _filmstrip(args, agent)
    want_viewer = args.out is None and not args.no_viewer and display_works()
    if not want_viewer and args.out is None and (problem := _unwritable(Path(DEFAULT_VIDEO))) is not None:
        parser.error(f"the video goes to {DEFAULT_VIDEO} when no viewer opens, and it cannot be written here ({problem}); "
                     "pass --out a file in a folder that can be written")  # before any rendering
    env = _reacher_environment(num_agents=args.agents, seed=args.seed, verbose=False, show_viewer=want_viewer)
    try:
        if want_viewer:
            env.reset(train_mode=False)  # opens the viewer, which then runs in real time
            if _viewer_is_open(env):
                print("Showing the arms in MuJoCo's viewer; close its window to stop.")
                for episode in range(1, args.episodes + 1):
                    scores = run_episode(env, agent, args.steps, train_mode=False)
                    _report(episode, scores, args.steps)
                    if not _viewer_is_open(env):
                        break
                return 0
            print("No viewer could open; writing a video instead.")
        out = args.out or DEFAULT_VIDEO
        if Path(out).suffix.lower() == ".mp4" and (args.width % 2 or args.height % 2):
            parser.error(f"MP4 (H.264) needs an even width and height, got {args.width}x{args.height}")
        fps = args.fps or default_fps(args.every)
        print(f"Writing {args.episodes} episode(s) of {args.agents} arm(s) to {out} "
              f"({args.width}x{args.height}, a frame every {args.every} decision(s), {fps:g} fps)", flush=True)
        try:
            record_video(env, agent, out, args.episodes, args.steps, args.every, fps, args.width, args.height,
                         on_episode=lambda i, s: _report(i, s, args.steps), progress=True)
        except RuntimeError as exc:  # no GL backend: the environment's message says what to install
            return _error(str(exc))
        except OSError as exc:  # an unwritable folder, a full disk: any older video is untouched
            return _error(f"cannot write {out}: {exc.strerror or exc}")
        print(f"Saved {out}")
        return 0
    finally:
        _close(env)


if __name__ == "__main__":
    sys.exit(main())
