"""Tests of the training loop and its command line (real environment kept short)."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

import train as train_mod
from ddpg.agents import agent_from_run, make_agent
from ddpg.loop import GOOD_SCORE, GOOD_UPDATES, train
from ddpg.reporting import callbacks
from ddpg.reporting.callbacks import Printer
from ddpg.run_folder.score_files import read_metrics, read_scores
from ddpg.variants import parse_config
from ddpg_agent import Agent, DDPGConfig
from tests._agent_helpers import QUICK_LEARNING, FakeEnv

# Small, quick learning settings so a few dozen decisions already run updates.
FAST = QUICK_LEARNING


def test_cli_two_episodes_writes_all_outputs(tmp_path, capsys) -> None:
    out = tmp_path / "run"
    code = train_mod.main(["--episodes", "2", "--seed", "1", "--agents", "2", "--max-t", "40",
                           "--out", str(out), "--no-progress", "--config", json.dumps(FAST)])
    assert code == 0
    for name in ("checkpoint_actor.pth", "checkpoint_critic.pth", "scores.csv", "run.json",
                 "scores.png"):
        assert (out / name).stat().st_size > 0, name
    rows = list(csv.reader(open(out / "scores.csv")))
    assert rows[0] == ["episode", "agent_0", "agent_1"] and len(rows) == 3
    record = json.loads((out / "run.json").read_text())
    assert record["seed"] == 1 and record["episodes_run"] == 2 and record["learner"] == "readable"
    assert record["schedule"] == {"good_score": GOOD_SCORE, "good_updates": GOOD_UPDATES}
    assert record["config"]["batch_size"] == 32 and record["learner_updates"] > 0
    assert record["solved_at_episode"] is None and record["wall_time_s"] > 0
    assert set(record["versions"]) >= {"python", "torch", "numpy", "mujoco"}
    assert "git_commit" in record and record["command"].startswith("python train.py")
    assert "max_env_steps" not in record and "step_budget_spent" not in record  # no step budget: not written
    agent = Agent(33, 4, 0, batch_size=32)
    agent.actor_local.load_state_dict(torch.load(out / "checkpoint_actor.pth", weights_only=True))
    agent.critic_local.load_state_dict(torch.load(out / "checkpoint_critic.pth", weights_only=True))
    text = capsys.readouterr().out
    assert "Episode    2" in text and "avg100" in text
    assert "100-episode average per agent" in text


def test_cli_readable_learner(tmp_path) -> None:
    out = tmp_path / "run"
    code = train_mod.main(["--episodes", "1", "--agents", "2", "--max-t", "40", "--learner", "readable",
                           "--out", str(out), "--no-progress", "--quiet", "--config", json.dumps(FAST)])
    assert code == 0
    record = json.loads((out / "run.json").read_text())
    assert record["learner"] == "readable" and record["learner_updates"] > 0


def test_schedule_makes_fewer_updates_after_a_good_episode() -> None:
    """Episode scores alternate around good_score; the next episode's updates follow."""

    class AlternatingEnv(FakeEnv):
        def reset(self, train_mode: bool = True):
            self.reward = 0.04 if self.episode % 2 == 0 else 0.0  # episodes 1, 3, ... score 0.4
            return super().reset(train_mode)

    env = AlternatingEnv(num_agents=2, episode_len=10)
    agent = Agent(33, 4, 0, buffer_size=1000, batch_size=8, warmup=1, learn_every=1, learn_updates=3, n_step=1)
    per_episode = []

    def log(msg: str) -> None:
        if msg.startswith("Episode"):
            per_episode.append(agent.n_updates - sum(per_episode))

    train(env, agent, episodes=4, good_score=0.3, good_updates=1, callbacks=[Printer(progress=False, log=log)])
    assert per_episode == [3 * 10, 1 * 10, 3 * 10, 1 * 10]
    assert agent.learn_updates == 3  # episode 4 scored 0


def _run(seed: int) -> np.ndarray:
    from reacher import ReacherEnvironment

    env = ReacherEnvironment(num_agents=2, seed=seed, verbose=False)
    try:
        agent = Agent(33, 4, seed, **FAST)
        return train(env, agent, episodes=2, max_t=60)
    finally:
        env.close()


def test_same_seed_gives_same_scores() -> None:
    a, b = _run(4), _run(4)
    assert a.shape == (2, 2)
    np.testing.assert_array_equal(a, b)


def test_stops_when_solved_and_records_it(tmp_path) -> None:
    env = FakeEnv(num_agents=2, reward=0.04, episode_len=30)  # 1.2 per episode
    agent = Agent(33, 4, 0, buffer_size=1000, learn_updates=0)
    scores = train(env, agent, episodes=150, target_score=1.0,
                   callbacks=callbacks.standard(tmp_path, quiet=True, progress=False))
    assert scores.shape == (100, 2)
    record = json.loads((tmp_path / "run.json").read_text())
    assert record["solved_at_episode"] == 100 and record["time_to_solve_s"] is not None


def test_ctrl_c_stops_cleanly_and_saves(tmp_path) -> None:
    env = FakeEnv(num_agents=3, episode_len=10, interrupt_in_episode=3)
    agent = Agent(33, 4, 0, buffer_size=1000)
    scores = train(env, agent, episodes=10, callbacks=callbacks.standard(tmp_path, quiet=True, progress=False))
    assert scores.shape == (2, 3)
    record = json.loads((tmp_path / "run.json").read_text())
    assert record["interrupted"] is True and record["episodes_run"] == 2
    assert (tmp_path / "checkpoint_actor.pth").exists()
    assert not list(tmp_path.glob("*.tmp*"))


def test_the_step_budget_stops_before_the_step_past_it_and_drops_that_episode(tmp_path, capsys) -> None:
    """As Stable-Baselines3's learn(total_timesteps): every live arm's step counts, none past the
    budget is taken, the unfinished episode is not scored, and the run is finished, not interrupted."""
    for budget, steps_in_third in ((75, 5), (77, 5), (78, 6), (60, 0)):
        env = FakeEnv(num_agents=3, episode_len=10)
        agent = Agent(33, 4, 0, buffer_size=1000)
        out = tmp_path / str(budget)
        out.mkdir()
        scores = train(env, agent, episodes=10, max_env_steps=budget,
                       callbacks=callbacks.standard(out, quiet=True, progress=False))
        assert scores.shape == (2, 3) and env.episode == 3 and env.t == steps_in_third
        record = json.loads((out / "run.json").read_text())
        assert record["env_steps"] == 60 + 3 * steps_in_third <= budget
        assert record["max_env_steps"] == budget and record["step_budget_spent"] is True
        assert record["finished"] is True and record["interrupted"] is False and record["episodes_run"] == 2
        said = capsys.readouterr().out
        assert f"Step budget spent: {record['env_steps']} of {budget} environment steps" in said
        assert (f"the unfinished episode 3 ({steps_in_third} steps) is not counted" if steps_in_third
                else "environment steps, at the end of episode 2.") in said
    env = FakeEnv(num_agents=3, episode_len=10)  # a budget the episodes end first: not spent
    (tmp_path / "roomy").mkdir()
    train(env, Agent(33, 4, 0, buffer_size=1000), episodes=2, max_env_steps=61,
          callbacks=callbacks.standard(tmp_path / "roomy", quiet=True, progress=False))
    record = json.loads((tmp_path / "roomy" / "run.json").read_text())
    assert record["env_steps"] == 60 and record["step_budget_spent"] is False
    with pytest.raises(ValueError, match="max_env_steps must be >= 1"):
        train(FakeEnv(), Agent(33, 4, 0), max_env_steps=0)


def test_cli_step_budget_and_its_resume(tmp_path, capsys) -> None:
    out = tmp_path / "run"
    assert train_mod.main(["--episodes", "5", "--max-env-steps", "250", "--out", str(out), *SMALL_RUN]) == 0
    record = json.loads((out / "run.json").read_text())
    assert (record["episodes_run"], record["env_steps"], record["step_budget_spent"]) == (2, 250, True)
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:  # a resume needs a budget above what the run took
        train_mod.main(["--resume", str(out), "--episodes", "5", "--max-env-steps", "251", "--no-progress", "--quiet"])
    assert exc.value.code == 2 and "already took 250 environment steps" in capsys.readouterr().err
    assert train_mod.main(["--resume", str(out), "--episodes", "5", "--max-env-steps", "370", "--no-progress",
                           "--quiet"]) == 0
    record = json.loads((out / "run.json").read_text())
    assert (record["episodes_run"], record["env_steps"], record["step_budget_spent"]) == (3, 370, True)  # 250 + 120


@pytest.mark.parametrize(("args", "message"), [
    (["--episodes", "-3"], "--episodes: expected a positive integer"),
    (["--episodes", "ten"], "--episodes: expected a positive integer, got 'ten'"),
    (["--max-env-steps", "0"], "--max-env-steps: expected a positive integer"),
    (["--agents", "4", "--max-env-steps", "3"], "--max-env-steps: one step of the 4 arms or copies takes 4"),
    (["--seed", "-1"], "--seed: expected a seed: an integer from 0 to 2**63 - 1"),
    (["--config", '{"nope": 1}'], "unknown config key(s) ['nope']"),
    (["--config", '{"lr_actor": 0.001'], "malformed JSON"),
    (["--config", "[1, 2]"], "expected a JSON object"),
    (["--config", '{"batch_size": 0}'], "batch_size must be a whole number >= 1"),
    (["--config", '{"tau": "x"}'], "tau must be a number in (0, 1], got the string 'x'"),
    (["--config", "no/such/file.json"], "is neither a JSON object nor an existing file"),
    (["--max-t", "2000"], "--max-t must be at most 1000"),
    (["--learner", "quick"], "invalid choice: 'quick'"),
    (["--unity", "no/such/Reacher.x86_64"], "--unity: no such file"),
    (["--unity", "STANDIN"], "unityagents"),  # this venv has no unityagents client
    (["--target", "nan"], "--target: expected a finite number, got 'nan'"),
    (["--target=inf"], "--target: expected a finite number, got 'inf'"),
    (["--good-score", "nan"], "expected a finite number or 'off'"),
    (["--see", "3"], "unrecognized arguments: --see"),
])
def test_bad_cli_arguments_exit_2_with_clear_message(args, message, capsys, tmp_path) -> None:
    standin = Path(train_mod.__file__).parent / "Reacher_Linux_NoVis" / "Reacher.x86_64"
    args = [str(standin) if a == "STANDIN" else a for a in args]
    with pytest.raises(SystemExit) as exc:
        train_mod.main([*args, "--out", str(tmp_path)])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


# ------------------------------------------------------------- never lose a run
SMALL_RUN = ["--agents", "2", "--max-t", "60", "--no-progress", "--quiet", "--config",
             json.dumps({**FAST, "warmup": 32})]


def _weights(folder) -> list[torch.Tensor]:
    return [t for name in ("checkpoint_actor.pth", "checkpoint_critic.pth")
            for t in torch.load(folder / name, weights_only=True).values()]


def test_resume_with_the_buffer_is_bit_for_bit_the_uninterrupted_run(tmp_path) -> None:
    straight, split = tmp_path / "A", tmp_path / "B"
    common = ["--seed", "1", "--no-stop", "--save-buffer"]
    assert train_mod.main(["--episodes", "3", "--out", str(straight), *common, *SMALL_RUN]) == 0
    assert train_mod.main(["--episodes", "2", "--out", str(split), *common, *SMALL_RUN]) == 0
    assert train_mod.main(["--resume", str(split), "--episodes", "3", "--no-stop", "--no-progress", "--quiet"]) == 0
    assert (straight / "scores.csv").read_bytes() == (split / "scores.csv").read_bytes()
    for one, two in zip(_weights(straight), _weights(split), strict=True):
        assert torch.equal(one, two)
    record = json.loads((split / "run.json").read_text())
    assert record["episodes_run"] == 3 and record["resumed"][0]["from_episode"] == 2
    assert record["resumed"][0]["exact"] is True


def test_resume_without_the_buffer_refills_it_and_says_so(tmp_path) -> None:
    run = tmp_path / "run"
    assert train_mod.main(["--episodes", "2", "--out", str(run), *SMALL_RUN]) == 0
    assert not (run / "replay_buffer.pt").exists()
    assert train_mod.main(["--resume", str(run), "--episodes", "3", "--no-progress", "--quiet"]) == 0
    record = json.loads((run / "run.json").read_text())
    assert record["episodes_run"] == 3 and record["resumed"][0]["exact"] is False
    assert len(read_scores(run)) == 3


def test_periodic_saves_and_a_stopped_run_keep_finished_episodes(tmp_path) -> None:
    env = FakeEnv(num_agents=3, episode_len=10, interrupt_in_episode=4)
    agent = Agent(33, 4, 0, buffer_size=1000)
    train(env, agent, episodes=10, callbacks=callbacks.standard(tmp_path, quiet=True, progress=False, save_every=2))
    record = json.loads((tmp_path / "run.json").read_text())
    assert record["interrupted"] is True and record["signal"] == 2 and record["episodes_run"] == 3
    # The stop saved the run as it stood after episode 3, not the periodic save of episode 2,
    # and with the replay buffer although the run does not save it periodically.
    assert record["resumable_from_episode"] == 3
    state = torch.load(tmp_path / "training_state.pt", weights_only=True)
    assert len(state["loop"]["scores"]) == 3 and state["buffer"]["saved"] is True
    rows = torch.load(tmp_path / "replay_buffer.pt", weights_only=True)
    # 3 arms x 10 decisions x 3 episodes, less episode 3's last n - 1 = 2 steps per arm, which
    # wait in the 3-step returns (the state keeps them) until the next episode begins.
    assert len(rows["rows"]) == state["buffer"]["size"] == 3 * 10 * 3 - 3 * 2
    assert rows["t_step"] == state["agent"]["t_step"] == 30


def test_sigterm_saves_the_run_and_exits_143(tmp_path) -> None:
    """What a batch scheduler or a closed terminal does: the run is kept, the exit says why."""
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, str(Path(train_mod.__file__)), "--episodes", "1000", "--save-every", "1",
                             "--out", str(out), *SMALL_RUN], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not (out / "training_state.pt").exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 128 + signal.SIGTERM
    record = json.loads((out / "run.json").read_text())
    assert record["interrupted"] is True and record["signal"] == signal.SIGTERM
    assert record["episodes_run"] >= 1
    assert _weights(out)  # loadable with weights_only=True
    assert "Traceback" not in proc.stderr.read().decode()


def test_output_folder_is_checked_before_training(tmp_path, capsys) -> None:
    a_file = tmp_path / "file"
    a_file.write_text("x")
    for out, message in ((a_file, "is a file; expected a folder"),
                         (a_file / "below", "cannot be created")):
        with pytest.raises(SystemExit) as exc:
            train_mod.main(["--episodes", "1", "--out", str(out), *SMALL_RUN])
        assert exc.value.code == 2 and message in capsys.readouterr().err
    run = tmp_path / "run"
    assert train_mod.main(["--episodes", "1", "--out", str(run), *SMALL_RUN]) == 0
    with pytest.raises(SystemExit):
        train_mod.main(["--episodes", "1", "--out", str(run), *SMALL_RUN])
    err = capsys.readouterr().err
    assert "already holds a run" in err and "--resume" in err and "--force" in err
    assert train_mod.main(["--episodes", "1", "--out", str(run), "--force", *SMALL_RUN]) == 0


@pytest.fixture(scope="module")
def one_episode_run(tmp_path_factory) -> Path:
    """`train.py --episodes 1` of the small settings, trained once: each test resumes a copy."""
    run = tmp_path_factory.mktemp("one_episode") / "run"
    assert train_mod.main(["--episodes", "1", "--out", str(run), *SMALL_RUN]) == 0
    return run


@pytest.mark.parametrize(("args", "message"), [
    (["--resume", "nowhere"], "is not a run folder"),
    (["--resume", "RUN", "--seed", "3"], "leave out --seed"),
    # Every spelling counts: '=' forms, and an alias of an option.
    (["--resume", "RUN", "--episodes", "3", "--seed=5"], "leave out --seed"),
    (["--resume", "RUN", "--episodes", "3", '--config={"tau": 0.5}'], "leave out --config"),
    (["--resume", "RUN", "--episodes", "3", "--config", '{"tau": 0.5}'], "leave out --config"),
    (["--resume", "RUN", "--episodes", "3", "--target=20", "--seed=4"], "leave out --seed, --target"),
    (["--resume", "RUN", "--episodes", "3", "--out=elsewhere"], "leave out --out"),
    (["--resume", "RUN", "--episodes", "1"], "already has 1 episodes"),
    (["--resume", "RUN", "--max-episodes=1"], "already has 1 episodes"),  # the alias is applied
    # Abbreviations are refused, rather than taken for the option they begin.
    (["--resume", "RUN", "--episodes", "3", "--conf", '{"tau": 0.5}'], "unrecognized arguments: --conf"),
    (["--resume", "RUN", "--epi", "3"], "unrecognized arguments: --epi"),
])
def test_bad_resume_arguments(one_episode_run, tmp_path, capsys, args, message) -> None:
    run = tmp_path / "run"
    shutil.copytree(one_episode_run, run)
    args = [str(run) if a == "RUN" else str(tmp_path / a) if a == "nowhere" else a for a in args]
    with pytest.raises(SystemExit) as exc:
        train_mod.main([*args, "--no-progress", "--quiet"])
    assert exc.value.code == 2 and message in capsys.readouterr().err


def test_settings_given_on_resume_are_applied_or_refused_never_dropped(tmp_path) -> None:
    """What --resume applies (the budgets, saving, printing) reaches the run; anything else is
    refused above, and every option of train.py is one or the other."""
    from ddpg.command_line.options import applied_on_resume

    run = tmp_path / "run"
    assert train_mod.main(["--episodes", "1", "--out", str(run), *SMALL_RUN]) == 0
    assert train_mod.main(["--resume", str(run), "--max-episodes=2", "--save-every=1", "--no-stop",
                           "--no-progress", "--quiet"]) == 0
    record = json.loads((run / "run.json").read_text())
    assert record["episodes_run"] == 2 and record["stop_when_solved"] is False
    options = {o for a in train_mod.build_parser()._actions for o in a.option_strings if o.startswith("--")}
    assert set(applied_on_resume()) <= options


@pytest.mark.parametrize(("variant", "learner"), [({"replay": "prioritized"}, "readable"),
                                                  ({"exploration": "noisy"}, "readable"),
                                                  ({"batch_norm": True}, "readable"),
                                                  ({"critic_layer_norm": True}, "readable"),
                                                  ({"twin_critics": True, "target_noise": 0.2, "policy_delay": 2},
                                                   "readable"),
                                                  ({"n_step": 3}, "readable"),
                                                  ({"ensemble": 3}, "readable"),
                                                  ({"crossq": True, "twin_critics": True}, "readable"),
                                                  ({"goal_paths": 2}, "readable")])
def test_cli_runs_each_variant(tmp_path, variant, learner) -> None:
    out = tmp_path / "run"
    code = train_mod.main(["--episodes", "1", "--agents", "2", "--max-t", "60", "--out", str(out), "--no-progress",
                           "--quiet", "--config", json.dumps({**FAST, **variant})])
    assert code == 0
    record = json.loads((out / "run.json").read_text())
    plain = ("n_step", "critic_layer_norm")  # plain DDPG's own settings, not variants
    switched_on = {k: v for k, v in variant.items() if k not in plain}
    assert record["variants"] == switched_on and record["learner"] == learner and record["learner_updates"] > 0
    assert record["config"]["n_step"] == variant.get("n_step", DDPGConfig().n_step)
    replay = agent_from_run(out)  # watch.py and evaluate.py rebuild the variant's networks
    built = make_agent("auto", (33, 4, 0), parse_config(variant))
    assert type(replay.actor_local) is type(built.actor_local)
    assert [type(m) for m in replay.critic_local.modules()] == [type(m) for m in built.critic_local.modules()]


def test_metrics_csv_and_tensorboard_without_changing_the_run(tmp_path) -> None:
    out, board = tmp_path / "run", tmp_path / "tb"
    args = ["--episodes", "2", "--seed", "3", "--no-stop", *SMALL_RUN]
    assert train_mod.main([*args, "--out", str(out), "--tensorboard", str(board)]) == 0
    events = list(board.glob("events.out.tfevents*"))
    assert len(events) == 1 and events[0].stat().st_size > 0
    rows = read_metrics(out)
    assert [r["episode"] for r in rows] == [1, 2]
    assert set(rows[0]) >= {"score_mean", "average100", "critic_loss", "actor_loss", "mean_q", "exploration",
                            "updates", "updates_per_s", "episode_s"}
    assert rows[1]["critic_loss"] is not None and rows[1]["updates"] > 0 and rows[1]["exploration"] == 0.2
    np.testing.assert_allclose([r["score_mean"] for r in rows], read_scores(out).mean(axis=1), atol=1e-4)
    # probing draws from a generator of its own: the run is the one a run without metrics makes
    from reacher import ReacherEnvironment

    env = ReacherEnvironment(num_agents=2, seed=3)
    torch.manual_seed(3)
    agent = make_agent("auto", (33, 4, 3), DDPGConfig(**{**FAST, "warmup": 32}))
    plain = train(env, agent, episodes=2, max_t=60, stop_when_solved=False)
    np.testing.assert_allclose(plain, read_scores(out), atol=1e-4)


@pytest.mark.parametrize("variant", [{"replay": "prioritized", "n_step": 2}, {"n_step": 3}, {"ensemble": 3},
                                     {"crossq": True}, {"goal_paths": 2, "n_step": 3}])
def test_resume_of_a_variant_run_is_exact(tmp_path, variant) -> None:
    """Prioritized replay's priorities and pending n-step returns are saved with the state; so are
    torch's generator (the ensemble's draws), batch renormalisation's statistics and count, and the
    episode the goal paths will store again at the next start."""
    straight, split = tmp_path / "A", tmp_path / "B"
    config = json.dumps({**FAST, "warmup": 32, **variant})
    common = ["--seed", "2", "--no-stop", "--save-buffer", "--agents", "2", "--max-t", "60", "--no-progress",
              "--quiet", "--config", config]
    assert train_mod.main(["--episodes", "3", "--out", str(straight), *common]) == 0
    assert train_mod.main(["--episodes", "2", "--out", str(split), *common]) == 0
    assert train_mod.main(["--resume", str(split), "--episodes", "3", "--no-stop", "--no-progress", "--quiet"]) == 0
    assert (straight / "scores.csv").read_bytes() == (split / "scores.csv").read_bytes()
    for one, two in zip(_weights(straight), _weights(split), strict=True):
        assert torch.equal(one, two)
    assert [r["episode"] for r in read_metrics(split)] == [1, 2, 3]


def test_run_json_records_the_device_and_a_resume_may_change_the_learner(tmp_path, capsys) -> None:
    """Any learner takes any learner's training state: run.json says which ran, and where; a run
    the retired fast learner made resumes on auto (the readable learner here)."""
    run = tmp_path / "run"
    assert train_mod.main(["--episodes", "1", "--out", str(run), "--save-buffer", *SMALL_RUN]) == 0
    record = json.loads((run / "run.json").read_text())
    assert record["learner"] == "readable" and record["device"] == {"type": "cpu"}
    (run / "run.json").write_text(json.dumps({**record, "learner": "fast", "threads": 2}))  # as the fast learner wrote
    assert train_mod.main(["--resume", str(run), "--episodes", "2", "--quiet", "--no-progress"]) == 0
    record = json.loads((run / "run.json").read_text())
    assert record["learner"] == "readable" and record["episodes_run"] == 2
    assert record["resumed"][-1]["exact"] is True
    assert train_mod.main(["--resume", str(run), "--episodes", "3", "--device", "cpu", "--quiet",
                           "--no-progress"]) == 0
    assert json.loads((run / "run.json").read_text())["learner"] == "readable"  # the run's own, unless given
    with pytest.raises(SystemExit) as exc:
        train_mod.main(["--resume", str(run), "--episodes", "4", "--learner", "graph", "--quiet", "--no-progress"])
    assert exc.value.code == 2 and "it needs --device cuda" in capsys.readouterr().err


@pytest.mark.skipif(torch.cuda.is_available(), reason="resumes a GPU run where there is no GPU")
@pytest.mark.parametrize("learner", ["graph", "graph-overlap"])
def test_a_gpu_run_resumes_on_the_cpu_with_the_cpu_learner(tmp_path, capsys, learner) -> None:
    """A run a GPU trained (its record says so) resumes here on the CPU, with the CPU's learner
    rather than refusing its own graph learner, and says so in one line."""
    run = tmp_path / "run"
    assert train_mod.main(["--episodes", "1", "--out", str(run), *SMALL_RUN]) == 0
    record = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps({**record, "learner": learner, "device": {"type": "cuda"}}))
    capsys.readouterr()
    assert train_mod.main(["--resume", str(run), "--episodes", "2", "--quiet", "--no-progress"]) == 0
    assert "The run trained on CUDA; PyTorch sees no GPU here, so it resumes on the CPU" in capsys.readouterr().out
    record = json.loads((run / "run.json").read_text())
    assert record["learner"] == "readable" and record["device"] == {"type": "cpu"} and record["episodes_run"] == 2
