"""benchmarks/bench_crawler_genuine.py: the genuine-trained actor rebuilt from its weights alone, the
notebook's first-lives protocol, and the environment stepped by another engine (physics=...)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from torch import nn

from benchmarks import bench_crawler_genuine as bench
from crawler.environment import ACTION_SIZE, BRAIN_NAME, CrawlerEnvironment


def _checkpoint(tmp_path: Path, seed: int = 0) -> tuple[Path, nn.Sequential]:
    torch.manual_seed(seed)
    net = nn.Sequential(nn.Linear(129, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 40))
    path = tmp_path / "sac.pth"
    torch.save({"actor": {f"_actor.{k}": v for k, v in net.state_dict().items()}, "critic": {}}, path)
    return path, net


@pytest.mark.parametrize("seed", range(3))
def test_the_actor_is_tanh_of_the_mean(tmp_path: Path, seed: int) -> None:
    path, net = _checkpoint(tmp_path, seed)
    actor = bench.load_actor(path)
    x = torch.randn(7, 129)
    with torch.no_grad():
        assert torch.allclose(actor(x), torch.tanh(net(x)[:, :ACTION_SIZE]), atol=1e-6)


@pytest.mark.parametrize("state", [{"policy": {}}, [1, 2], {"actor": {"w.weight": torch.zeros(40, 10), "w.bias": torch.zeros(40)}}])
def test_a_checkpoint_of_another_shape_is_refused_in_one_line(tmp_path: Path, state: object) -> None:
    path = tmp_path / "other.pth"
    torch.save(state, path)
    with pytest.raises(SystemExit) as refused:
        bench.load_actor(path)
    assert str(path) in str(refused.value) and "\n" not in str(refused.value)


class _Scripted:
    """Crawler i is done at decision falls[i] (1-based), each decision earning i + 1; records actions."""

    def __init__(self, falls: list[int]) -> None:
        self.falls, self.t, self.actions = np.array(falls), 0, []

    def reset(self, train_mode: bool = True) -> dict:
        self.t = 0
        return {BRAIN_NAME: SimpleNamespace(vector_observations=np.zeros((12, 129)))}

    def step(self, actions: np.ndarray) -> dict:
        self.t += 1
        self.actions.append(np.array(actions))
        return {BRAIN_NAME: SimpleNamespace(vector_observations=np.zeros((12, 129)), rewards=list(np.arange(1.0, 13.0)),
                                            local_done=list(self.t % self.falls == 0))}


def test_first_lives_count_each_crawlers_first_life_and_zero_the_actions_of_the_done() -> None:
    falls = [3, 5, 1, 1000, 7, 2, 9, 4, 6, 8, 10, 11]
    env = _Scripted(falls)
    got = bench.first_lives(env, lambda obs: np.ones((len(obs), ACTION_SIZE)), resets=2)
    assert got["lives"] == [falls, falls]
    assert np.allclose(got["scores"], [np.array(falls) * np.arange(1, 13)] * 2)
    assert got["full_lives"] == pytest.approx(1 / 12, abs=1e-4)
    assert (env.actions[3][[0, 2, 5]] == 0).all() and (env.actions[3][[1, 3]] == 1).all()


def test_the_physx_options_need_the_reference(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        bench.main(["--physx-option=--locked"])
    assert "--physx" in capsys.readouterr().err


class _Mirror:
    """External physics that is MuJoCo again: another environment's rows, stepped from the raw actions."""

    def __init__(self, n: int) -> None:
        self.env = CrawlerEnvironment(n, verbose=False, show_viewer=False)
        self.env.reset()

    def restart(self, mask: np.ndarray) -> np.ndarray:
        self.env._restart(np.asarray(mask, bool))
        return self.env._record[:, -1].copy()

    def step(self, actions: np.ndarray) -> np.ndarray:
        self.env.step(actions)
        return self.env._record.copy()

    def close(self) -> None:
        self.env.close()


def test_an_environment_on_external_physics_computes_the_same_scene() -> None:
    """The rules (rewards, falls, resets, observations) come from the rows alone: the same rows from
    another engine give the same numbers, and such an environment refuses to save MuJoCo's state."""
    n = 3
    plain, mirrored = (CrawlerEnvironment(n, verbose=False, show_viewer=False),
                       CrawlerEnvironment(n, verbose=False, show_viewer=False, physics=_Mirror(n)))
    assert np.array_equal(plain.reset()[BRAIN_NAME].vector_observations, mirrored.reset()[BRAIN_NAME].vector_observations)
    actions = np.random.default_rng(0).uniform(-1, 1, (40, n, ACTION_SIZE))
    actions[:, 0, 12:] = -1.0  # crawler 0 without drives: it falls and starts again
    ended = 0
    for a in actions:
        p, m = plain.step(a)[BRAIN_NAME], mirrored.step(a)[BRAIN_NAME]
        assert np.array_equal(p.vector_observations, m.vector_observations)
        assert p.rewards == m.rewards and p.local_done == m.local_done
        ended += sum(p.local_done)
    assert ended >= 2
    with pytest.raises(ValueError, match="external physics"):
        _ = mirrored.random_state


def test_a_state_carried_from_sensor_rows_is_the_state() -> None:
    """bench_crawler_prediction carries the reference's rows into MuJoCo: from MuJoCo's own rows,
    mid-motion after random play, it gives back the same positions and velocities."""
    import mujoco

    from benchmarks.bench_crawler_prediction import carry
    from crawler.mjcf import build_mjcf

    env = CrawlerEnvironment(2, verbose=False, show_viewer=False)
    env.reset()
    rng = np.random.default_rng(1)
    for _ in range(6):
        env.step(np.c_[rng.uniform(-1, 1, (2, 12)), np.ones((2, 8))])
    for i in range(2):
        source = env._engine.datas[i]
        model = mujoco.MjModel.from_xml_string(build_mjcf(2, only=i))
        data = mujoco.MjData(model)
        carry(model, data, env._record[i, -1], i)
        assert np.allclose(data.qpos[7:], source.qpos[7:], atol=1e-7)  # the hinges
        assert np.allclose(data.qpos[:3], source.qpos[:3], atol=1e-9)
        assert abs(abs(np.dot(data.qpos[3:7], source.qpos[3:7])) - 1) < 1e-9  # the same rotation
        assert np.allclose(data.qvel, source.qvel, atol=1e-6)


def test_fidelity_plays_either_engine_and_keeps_the_closed_loop_side(tmp_path: Path) -> None:
    """crawler/fidelity.play under another engine scores by the same rules (here MuJoCo again, so the
    same numbers), and the closed-loop side written is the side read."""
    from crawler.fidelity import play, read_closed_loop, write_closed_loop

    plain, mirrored = play("uniform", episodes=3, decisions=60), play("uniform", episodes=3, decisions=60, engine=_Mirror)
    for field in ("decisions", "fell", "score", "height30", "top_speed"):
        assert np.array_equal(getattr(plain, field), getattr(mirrored, field))
    still = play("still", decisions=20)
    write_closed_loop(tmp_path / "side.json", {"uniform": plain, "still": still}, {"engine": "test"})
    back = read_closed_loop(tmp_path / "side.json")
    assert np.array_equal(back["uniform"].score, plain.score) and back["uniform"].trace is None
    assert np.array_equal(back["still"].trace, still.trace)
