"""watch.py: headless videos from checkpoints, and clear errors for bad input."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import imageio.v3 as iio
import numpy as np
import pytest

import train
import watch
from ddpg.reporting import playing
from ddpg.run_folder.checkpoints import save_checkpoints
from ddpg_agent import Agent
from reacher import ReacherEnvironment

ROOT = Path(__file__).resolve().parent.parent
W, H = 160, 120


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A fresh (untrained) agent's weights in the course's file format."""
    folder = tmp_path_factory.mktemp("ckpt")
    agent = Agent(state_size=33, action_size=4, random_seed=0, buffer_size=1024)
    actor, critic = folder / "checkpoint_actor.pth", folder / "checkpoint_critic.pth"
    save_checkpoints(agent, actor, critic)
    return actor, critic


def _video_args(checkpoints: tuple[Path, Path], out: Path, *extra: str) -> list[str]:
    actor, critic = checkpoints
    return ["--actor", str(actor), "--critic", str(critic), "--out", str(out), "--no-viewer",
            "--width", str(W), "--height", str(H), *extra]


def _assert_scene_frames(frames: np.ndarray, count: int) -> None:
    assert frames.shape == (count, H, W, 3)
    assert frames.dtype == np.uint8
    for frame in frames:  # not blank: a lit scene has many distinct colours
        assert frame.std() > 10
        assert len(np.unique(frame.reshape(-1, 3), axis=0)) > 50
    # The arms move, so the clip is not one still image.
    assert np.abs(frames[0].astype(int) - frames[-1].astype(int)).mean() > 0.5


def test_cli_writes_mp4_with_frames_of_the_requested_size(checkpoints, tmp_path, capsys):
    out = tmp_path / "clip.mp4"
    assert watch.main(_video_args(checkpoints, out, "--agents", "2", "--steps", "20", "--every", "2")) == 0
    frames = iio.imread(out, index=None)
    _assert_scene_frames(frames, 1 + 20 // 2)  # the start frame, then every 2nd decision
    printed = capsys.readouterr().out
    assert "Episode 1: score (mean over 2 agents)" in printed
    assert f"Saved {out}" in printed


def test_record_video_gif_one_agent_two_episodes(checkpoints, tmp_path):
    agent = playing.load_agent(*checkpoints)
    out = tmp_path / "clip.gif"
    with ReacherEnvironment(num_agents=1, seed=3, verbose=False) as env:
        scores = watch.record_video(env, agent, out, episodes=2, steps=9, every=3, width=W, height=H)
    assert [s.shape for s in scores] == [(1,), (1,)]
    frames = iio.imread(out, index=None)
    if frames.ndim == 4 and frames.shape[-1] == 4:  # Pillow may read GIFs back as RGBA
        frames = frames[..., :3]
    _assert_scene_frames(frames, 2 * (1 + 9 // 3))


def test_filmstrip_is_a_deterministic_png_of_evenly_spaced_stills(checkpoints, tmp_path):
    agent = playing.load_agent(*checkpoints)
    strips = []
    for name in ("a.png", "b.png"):
        with ReacherEnvironment(num_agents=3, seed=7, verbose=False) as env:
            scores = watch.filmstrip(env, agent, tmp_path / name, frames=3, steps=8, width=W, height=H)
        assert scores.shape == (3,)
        strips.append(iio.imread(tmp_path / name))
    assert strips[0].shape == (H, 3 * W + 2 * 4, 3)  # three stills, two white gaps
    np.testing.assert_array_equal(strips[0], strips[1])
    stills = [strips[0][:, i * (W + 4): i * (W + 4) + W] for i in range(3)]
    _assert_scene_frames(np.stack(stills), 3)


def test_run_folder_of_any_architecture_replays(tmp_path, capsys):
    """The issue's acceptance: train 64-64 networks for one episode, then watch the run."""
    run = tmp_path / "D"
    small = '{"actor_fc1": 64, "actor_fc2": 64, "critic_fc1": 64, "critic_fc2": 64, "warmup": 100000}'
    assert train.main(["--config", small, "--episodes", "1", "--max-t", "20", "--agents", "2",
                       "--out", str(run), "--no-progress", "--quiet"]) == 0
    assert watch.main(["--run", str(run), "--steps", "20", "--no-viewer", "--out", str(run / "w.gif"),
                       "--width", str(W), "--height", str(H), "--agents", "2"]) == 0
    assert (run / "w.gif").stat().st_size > 0
    # The same weights through --actor alone: their sizes come from the file.
    assert watch.main(["--actor", str(run / "checkpoint_actor.pth"), "--steps", "20", "--no-viewer", "--out",
                       str(tmp_path / "x.gif"), "--width", str(W), "--height", str(H), "--agents", "2"]) == 0
    assert (tmp_path / "x.gif").stat().st_size > 0
    with pytest.raises(SystemExit):
        watch.main(["--run", str(run), "--actor", str(run / "checkpoint_actor.pth")])
    assert "leave out --actor/--critic" in capsys.readouterr().err


def test_record_video_rejects_other_formats(checkpoints, tmp_path):
    agent = playing.load_agent(*checkpoints)
    with ReacherEnvironment(num_agents=1, verbose=False) as env, pytest.raises(ValueError, match=r"\.mp4 or \.gif"):
        watch.record_video(env, agent, tmp_path / "clip.avi", steps=2)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--agents", "0"], "argument --agents: expected a positive integer, got 0"),
        (["--episodes", "two"], "argument --episodes: expected a positive integer, got 'two'"),
        (["--steps", "1001"], "--steps must be at most 1000"),
        (["--fps", "-5"], "argument --fps: expected a positive number, got -5"),
        (["--width", "2000"], "at most 1920x1080"),
        (["--width", "161"], "even width and height"),
    ],
)
def test_bad_arguments_exit_2_with_a_message(checkpoints, tmp_path, capsys, extra, message):
    with pytest.raises(SystemExit) as exit_info:
        watch.main(_video_args(checkpoints, tmp_path / "clip.mp4", *extra))
    assert exit_info.value.code == 2
    assert re.search(message, capsys.readouterr().err)


def test_bad_output_extension_exits_2(checkpoints, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        watch.main(_video_args(checkpoints, tmp_path / "clip.avi"))
    assert exit_info.value.code == 2
    assert "--out must end in .mp4 or .gif" in capsys.readouterr().err


def test_corrupt_checkpoint_exits_2_naming_the_file(checkpoints, tmp_path, capsys):
    bad = tmp_path / "checkpoint_actor.pth"
    bad.write_bytes(b"not a torch file")
    with pytest.raises(SystemExit) as exit_info:
        watch.main(["--actor", str(bad), "--critic", str(checkpoints[1]), "--out", str(tmp_path / "x.mp4")])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"cannot read {bad}: it is not a checkpoint" in err and "Traceback" not in err
    assert not (tmp_path / "x.mp4").exists()


def test_missing_checkpoint_from_the_command_line(tmp_path):
    """The real CLI: exit status 2 and a message that names the file and how to get one."""
    missing = tmp_path / "nowhere_actor.pth"
    result = subprocess.run(
        [sys.executable, str(ROOT / "watch.py"), "--actor", str(missing), "--out", str(tmp_path / "x.mp4")],
        capture_output=True, text=True, cwd=tmp_path, timeout=120,
    )
    assert result.returncode == 2
    assert f"checkpoint not found: {missing}" in result.stderr
    assert "make run" in result.stderr


def test_headless_default_writes_watch_mp4(checkpoints, tmp_path, monkeypatch):
    """No display and no --out: the video goes to watch.mp4 in the current folder."""
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.chdir(tmp_path)
    actor, critic = checkpoints
    argv = ["--actor", str(actor), "--critic", str(critic), "--agents", "1", "--steps", "4", "--width", "64", "--height", "48"]
    assert watch.main(argv) == 0
    assert iio.imread(tmp_path / "watch.mp4", index=None).shape == (5, 48, 64, 3)


def test_a_display_variable_without_a_server_is_not_a_display(monkeypatch):
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.delenv("DISPLAY", raising=False)
    assert not watch.display_works()
    if Path("/tmp/.X11-unix/X57").exists():
        pytest.skip("an X server runs on :57 here")
    monkeypatch.setenv("DISPLAY", ":57")  # nothing listens there
    assert not watch.display_works()


def test_an_unwritable_default_video_is_refused_before_rendering(tmp_path, monkeypatch, capsys) -> None:
    """Headless without --out, the video goes to watch.mp4 here: a folder in its place is one line at once."""
    import watch as watch_mod

    monkeypatch.chdir(tmp_path)
    (tmp_path / watch_mod.DEFAULT_VIDEO).mkdir()

    def no_rendering(*args, **kwargs):
        raise AssertionError("the environment was made before the output was checked")

    monkeypatch.setattr(watch_mod, "_reacher_environment", no_rendering)
    with pytest.raises(SystemExit) as stop:
        watch_mod.main(["--no-viewer", "--steps", "5"])
    err = capsys.readouterr().err.strip().splitlines()
    assert stop.value.code == 2 and watch_mod.DEFAULT_VIDEO in err[-1] and "folder" in err[-1]
