"""Devices and update back-ends (ddpg/command_line/device.py, ddpg/backends): which learner runs an agent, the
errors for one that cannot, the GPU buffer's staging, the CUDA graph back-end's bookkeeping
(run eagerly where there is no GPU), and checkpoints and training states that cross devices.

The tests marked ``cuda`` need a GPU and are skipped without one; ``benchmarks/bench_gpu.py``
runs them on a GPU machine."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from ddpg import backends
from ddpg.agents import agent_from_checkpoints, make_agent
from ddpg.backends.cuda_graph import WARMUP, CudaGraph, DeviceReplayBuffer
from ddpg.command_line.device import describe, resolve_device
from ddpg.run_folder import agent_state
from ddpg.run_folder.checkpoints import save_checkpoints
from ddpg.run_folder.record_file import read_record
from ddpg.run_folder.run_state import load_training_state, save_training_state
from ddpg.run_folder.score_files import read_metrics
from ddpg.variants import VariantAgent, parse_config
from ddpg_agent import Agent, DDPGConfig, ReplayBuffer
from tests._agent_helpers import fill

ROOT = Path(__file__).resolve().parents[1]
cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
SMALL = {"buffer_size": 5000, "batch_size": 32}


# ------------------------------------------------------------------ devices
def test_device_names_resolve_and_bad_ones_are_one_clear_error(monkeypatch) -> None:
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device("auto") == torch.device("cuda" if torch.cuda.is_available() else "cpu")
    assert describe(torch.device("cpu")) == {"type": "cpu"}
    with pytest.raises(ValueError, match=r"--device: expected one of auto, cpu, cuda \(or cuda:N\), got 'gpu'"):
        resolve_device("gpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert resolve_device("auto") == torch.device("cpu")
    with pytest.raises(ValueError, match=r"--device cuda: .*; use --device cpu or auto"):
        resolve_device("cuda")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    assert resolve_device("auto") == torch.device("cuda")
    with pytest.raises(ValueError, match=r"--device cuda:3: there are 1 CUDA device\(s\), numbered from 0"):
        resolve_device("cuda:3")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message where there is no GPU")
@pytest.mark.parametrize("script", ["train.py", "evaluate.py", "watch.py"])
def test_device_cuda_without_a_gpu_is_one_line_and_exit_2(script, tmp_path) -> None:
    done = subprocess.run([sys.executable, script, "--device", "cuda", *(["--out", str(tmp_path / "r")]
                                                                       if script == "train.py" else [])],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1].startswith(f"{script}: error: --device cuda: ")
    assert "Traceback" not in done.stderr and not (tmp_path / "r").exists()


# ------------------------------------------------------------------ which learner
def _on(device: str, config: DDPGConfig | None = None, agent_class: type[Agent] = Agent) -> SimpleNamespace:
    """What ``backends.choose`` reads of an agent, for a device this machine may not have."""
    real = agent_class(33, 4, 0, config=config or DDPGConfig(buffer_size=10))
    if device == "cpu":
        return real
    return SimpleNamespace(device=torch.device(device), config=real.config, actor_local=real.actor_local,
                           critic_local=real.critic_local)


def test_auto_runs_the_agents_own_code_on_the_cpu_and_captures_it_on_cuda() -> None:
    td3 = parse_config({"preset": "td3", "buffer_size": 10})
    assert backends.choose(_on("cpu")) == "readable"
    assert backends.choose(_on("cpu", td3, VariantAgent)) == "readable"
    assert backends.choose(_on("cuda")) == "graph-overlap"
    assert backends.choose(_on("cuda", td3, VariantAgent)) == "graph-overlap"  # TD3: one graph per phase
    assert backends.choose(_on("cuda"), "graph") == "graph"  # in step with the environment
    assert backends.choose(_on("cuda"), "readable") == "readable"  # eager autograd, as the course


@pytest.mark.parametrize(("device", "learner", "config", "message"), [
    ("cpu", "graph", {}, "--learner graph captures the update as a CUDA graph: it needs --device cuda"),
    ("cpu", "graph-overlap", {}, "--learner graph-overlap captures the update as a CUDA graph: it needs --device cuda"),
    ("cuda", "auto", {"replay": "prioritized"}, "prioritized replay keeps its sum tree on the host"),
    ("cuda", "readable", {"exploration": "noisy"}, "NoisyNet draws its weight noise from a CPU generator"),
    ("cuda", "overlap", {}, "--learner overlap runs on the CPU (on CUDA, graph-overlap overlaps)"),
    ("cpu", "overlap", {"exploration": "noisy"}, "--learner overlap is not combined with exploration 'noisy'"),
    ("cpu", "turbo", {}, "--learner: expected one of auto, graph, graph-overlap, overlap, readable, got 'turbo'"),
    ("cpu", "fast", {}, "--learner: expected one of auto, graph, graph-overlap, overlap, readable, got 'fast'"),
])
def test_a_learner_that_cannot_serve_the_agent_is_refused(device, learner, config, message) -> None:
    cfg = parse_config({**config, "buffer_size": 10})
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        backends.choose(_on(device, cfg, VariantAgent if config else Agent), learner)


def test_make_agent_on_the_cpu_attaches_nothing_and_says_what_runs(capsys) -> None:
    plain = make_agent("auto", (33, 4, 0), DDPGConfig(**SMALL))
    assert agent_state.learner(plain) == "readable" and plain.backend is None
    line = capsys.readouterr().out.strip()
    assert line.startswith("Learner: readable.") and len(line.splitlines()) == 1
    variant = make_agent("auto", (33, 4, 0), parse_config({"twin_critics": True, **SMALL}))
    assert agent_state.learner(variant) == "readable" and isinstance(variant, VariantAgent)
    assert "ddpg/variants/twin.py" in capsys.readouterr().out  # the line names the code the variant runs
    graph = Agent(33, 4, 0, **SMALL)
    CudaGraph(graph, capture=False)
    with pytest.raises(ValueError, match="already runs on the graph learner"):  # never two back-ends, nor a false line
        backends.attach(graph, "readable")


# ------------------------------------------------------------------ the GPU buffer's staging
def _rows(buffer: ReplayBuffer, n: int, start: int) -> None:
    """Add n transitions whose state's first entry is their running number."""
    states = np.zeros((n, 33))
    states[:, 0] = np.arange(start, start + n)
    buffer.add(states, np.zeros((n, 4)), np.zeros(n), states, 0.9)


def test_staged_rows_reach_the_device_copy_once_and_in_place_when_the_ring_wraps() -> None:
    host = ReplayBuffer(33, 4, 100, 16, seed=0)
    _rows(host, 30, 0)
    buffer = DeviceReplayBuffer.wrap(host, torch.device("cpu"))
    assert buffer.data is host.data and buffer.pending == 30  # shared, and the rows so far still to copy
    buffer.flush()
    assert torch.equal(buffer.device_rows[:30], host.data[:30]) and int(buffer.rows_on_device) == 30
    _rows(buffer, 50, 30)
    assert buffer.pending == 50 and not torch.equal(buffer.device_rows[30:80], buffer.data[30:80])
    buffer.flush()
    _rows(buffer, 40, 80)  # rows 80-99, then 0-19: the ring wraps
    assert buffer.pos == 20 and buffer.size == 100
    buffer.device_rows[20:80] = -1.0  # rows the flush must not touch (already on the device)
    buffer.flush()
    assert torch.equal(buffer.device_rows[80:], buffer.data[80:]) and torch.equal(buffer.device_rows[:20],
                                                                                  buffer.data[:20])
    assert (buffer.device_rows[20:80] == -1.0).all() and int(buffer.rows_on_device) == 100
    assert buffer.device_rows[:20, 0].tolist() == list(range(100, 120))
    buffer.mark_all()
    buffer.flush()
    assert torch.equal(buffer.device_rows, buffer.data)


def test_draws_come_uniformly_from_the_filled_rows() -> None:
    host = ReplayBuffer(33, 4, 1000, 4096, seed=0)
    _rows(host, 10, 0)
    buffer = DeviceReplayBuffer.wrap(host, torch.device("cpu"))
    buffer.flush()
    torch.manual_seed(0)
    states, *_ = buffer.draw()
    counts = np.bincount(states[:, 0].numpy().astype(int), minlength=10)
    assert len(counts) == 10  # never an unfilled row
    assert counts.min() > 4096 / 10 * 0.8 and counts.max() < 4096 / 10 * 1.2


# ------------------------------------------------------------------ the CUDA graph back-end, eagerly
def _graph_agent(capture: bool = False, device: str = "cpu", overlap: bool = False, **config: object) -> Agent:
    agent = Agent(33, 4, 0, device=device, **{**SMALL, **config})  # type: ignore[arg-type]
    CudaGraph(agent, capture=capture, overlap=overlap)
    return fill(agent)


def test_the_graph_back_end_runs_agent_learn_on_its_draws_and_acts_on_a_cpu_copy(monkeypatch) -> None:
    """Each update is ``Agent.learn`` on a batch the back-end drew: fed the same batches, a plain
    agent ends bitwise where it does; the acting copy follows the learned actor."""
    agent, plain = _graph_agent(), fill(Agent(33, 4, 0, **SMALL))
    batches: list[tuple[torch.Tensor, ...]] = []
    draw = agent.memory.draw
    monkeypatch.setattr(agent.memory, "draw", lambda: batches.append(draw()) or batches[-1])
    states = np.random.default_rng(1).standard_normal((5, 33)).astype(np.float32)
    before = agent.policy(states).copy()  # the written-out pass reuses its output buffer
    agent.learn_many(4)
    for batch in batches:
        plain.learn(batch)
    assert agent.n_updates == plain.n_updates == 4 and len(batches) == 4
    for a, b in zip(agent.critic_target.parameters(), plain.critic_target.parameters(), strict=True):
        assert torch.equal(a, b)
    assert np.array_equal(agent.policy(states), plain.policy(states)) and not np.array_equal(before,
                                                                                           agent.policy(states))
    assert agent.backend.acting is not agent.actor_local  # a copy, on the CPU


def test_the_graph_back_end_keeps_the_policy_delay_of_td3() -> None:
    """TD3's actor learns every second update; the back-end keeps one graph per phase, picked by
    the update count (eagerly here: the same choice)."""
    agent = VariantAgent(33, 4, 0, config=parse_config({"preset": "td3", **SMALL}))
    CudaGraph(agent, capture=False)
    fill(agent)
    assert agent.backend.period == 2
    actor = [p.clone() for p in agent.actor_local.parameters()]
    agent.learn_many(1)  # update 0: the actor learns
    moved = [p.clone() for p in agent.actor_local.parameters()]
    assert any(not torch.equal(a, b) for a, b in zip(actor, moved, strict=True))
    agent.learn_many(1)  # update 1: the critic only
    assert all(torch.equal(a, b) for a, b in zip(moved, agent.actor_local.parameters(), strict=True))


def test_overlapped_replays_leave_the_arms_acting_one_learning_step_behind() -> None:
    """With ``overlap`` the acting copy keeps the actor of the learning step before, and takes the
    new one at the start of the next learning step (a pause's, with no updates, too); the updates
    themselves are the synchronous back-end's, draw for draw."""
    states = np.random.default_rng(1).standard_normal((5, 33)).astype(np.float32)
    torch.manual_seed(0)
    overlap = _graph_agent(overlap=True)
    torch.manual_seed(0)
    sync = _graph_agent()
    assert agent_state.learner(overlap) == "graph-overlap" and agent_state.learner(sync) == "graph"
    start = overlap.policy(states).copy()
    torch.manual_seed(5)
    overlap.learn_many(4)
    torch.manual_seed(5)
    sync.learn_many(4)
    for a, b in zip(overlap.critic_local.parameters(), sync.critic_local.parameters(), strict=True):
        assert torch.equal(a, b)
    assert np.array_equal(overlap.policy(states), start) and not np.array_equal(sync.policy(states), start)
    overlap.learn_many(0)  # the schedule's pause: no updates, but the last step's actor now acts
    assert np.array_equal(overlap.policy(states), sync.policy(states))
    one_behind = overlap.policy(states).copy()
    overlap.learn_many(2)
    assert np.array_equal(overlap.policy(states), one_behind) and overlap.backend.stale


def test_a_training_state_crosses_between_the_graph_and_the_readable_learners(tmp_path) -> None:
    """What the graph back-end saves, the readable learner resumes (and back): the networks, Adam's
    moments and the buffer's rows, whatever device and back-end wrote them."""
    graph = _graph_agent()
    graph.learn_many(5)
    save_training_state(tmp_path, graph, {"scores": []}, None, save_buffer=True)
    readable = make_agent("readable", (33, 4, 0), DDPGConfig(**SMALL))
    assert load_training_state(tmp_path, readable)["exact"]
    assert torch.equal(readable.memory.data, graph.memory.data) and readable.n_updates == 5
    for a, b in zip(readable.critic_local.parameters(), graph.critic_local.parameters(), strict=True):
        assert torch.equal(a, b)
    for mine, theirs in ((readable.critic_optimizer, graph.critic_optimizer),
                         (readable.actor_optimizer, graph.actor_optimizer)):
        for p, q in zip(mine.param_groups[0]["params"], theirs.param_groups[0]["params"], strict=True):
            assert torch.equal(mine.state[p]["exp_avg_sq"], theirs.state[q]["exp_avg_sq"])
    readable.learn_many(3)
    save_training_state(tmp_path, readable, {"scores": []}, None, save_buffer=True)
    back = _graph_agent()
    assert load_training_state(tmp_path, back)["exact"] and back.n_updates == 8
    assert back.memory.pending == back.memory.size  # every row goes to the device again
    for a, b in zip(back.actor_local.parameters(), readable.actor_local.parameters(), strict=True):
        assert torch.equal(a, b)
    states = np.zeros((2, 33), np.float32)
    assert np.array_equal(back.policy(states), readable.policy(states))  # the acting copy followed
    back.learn_many(2)


@pytest.mark.parametrize(("change", "says"), [
    (lambda a: a.actor_local.fc1.requires_grad_(False), "the actor"),
    (lambda a: a.critic_local.fc3.weight.register_hook(lambda g: g * 0.0), "the critic"),
    (lambda a: setattr(a.actor_local, "fc2", torch.nn.Sequential(a.actor_local.fc2, torch.nn.Dropout(0.2))),
     "the actor"),
    (lambda a: a.actor_local.load_state_dict({k: v + 1 for k, v in a.actor_local.state_dict().items()}, assign=True),
     "the actor"),
    (lambda a: a.critic_optimizer.param_groups[0].update(lr=0.05), "the critic's optimiser"),
    (lambda a: setattr(a.config, "tau", 0.5), "the config"),
    (lambda a: setattr(a.critic_target, "__class__", type("Mine", (type(a.critic_target),), {})), "the target critic"),
])
def test_the_graph_back_end_captures_again_when_what_it_holds_changes(change, says, capsys) -> None:
    """A graph replays the tensors, hooks and numbers it captured: after a run-time change to what
    the update reads, the back-end starts again (eagerly here, as it would capture again on a GPU),
    says so in one line, and its updates are then the agent's own update with the change."""
    agent = _graph_agent()
    agent.learn_many(2)
    capsys.readouterr()
    change(agent)
    torch.manual_seed(3)
    agent.learn_many(2)
    line = capsys.readouterr().err.strip()
    assert agent.backend.recaptures == 1 and says in line and len(line.splitlines()) == 1
    states = np.random.default_rng(1).standard_normal((4, 33)).astype(np.float32)
    assert np.array_equal(agent.policy(states), agent.actor_local.eval()(torch.from_numpy(states)).detach().numpy())
    agent.actor_local.train()
    agent.learn_many(2)
    assert agent.backend.recaptures == 1  # nothing changed since


def test_checkpoints_are_saved_from_cpu_tensors_whatever_device_holds_the_networks(tmp_path, monkeypatch) -> None:
    """A GPU-trained run's checkpoints load where there is no GPU: every tensor is copied to the
    CPU on its way to the file (``.to("cpu")``, which is what moves a GPU tensor; recorded here,
    where no GPU is at hand; the cuda test below saves from a GPU)."""
    agent = Agent(33, 4, 0, buffer_size=10)
    moved: list[str] = []
    to = torch.Tensor.to

    def recording_to(self: torch.Tensor, *args: object, **kwargs: object) -> torch.Tensor:
        moved.append(str(args[0] if args else kwargs.get("device")))
        return to(self, *args, **kwargs)

    monkeypatch.setattr(torch.Tensor, "to", recording_to)
    save_checkpoints(agent, tmp_path / "a.pth", tmp_path / "c.pth")
    monkeypatch.undo()
    n_tensors = len(agent.actor_local.state_dict()) + len(agent.critic_local.state_dict())
    assert moved.count("cpu") >= n_tensors
    for name in ("a.pth", "c.pth"):
        assert all(t.device.type == "cpu" for t in torch.load(tmp_path / name, weights_only=True).values())
    loaded = agent_from_checkpoints(tmp_path / "a.pth", tmp_path / "c.pth")
    assert torch.equal(loaded.actor_local.fc1.weight, agent.actor_local.fc1.weight)


# ------------------------------------------------------------------ on a GPU
@cuda
def test_cuda_checkpoints_and_states_load_on_the_cpu(tmp_path) -> None:
    agent = _graph_agent(capture=True, device="cuda")
    agent.learn_many(WARMUP + 4)
    save_checkpoints(agent, tmp_path / "a.pth", tmp_path / "c.pth")
    save_training_state(tmp_path, agent, {"scores": []}, None, save_buffer=True)
    cpu = agent_from_checkpoints(tmp_path / "a.pth", tmp_path / "c.pth")
    assert torch.equal(cpu.actor_local.fc1.weight, agent.actor_local.fc1.weight.cpu())
    readable = make_agent("auto", (33, 4, 0), DDPGConfig(**SMALL))
    assert load_training_state(tmp_path, readable)["exact"] and readable.n_updates == WARMUP + 4
    readable.learn_many(2)
    save_training_state(tmp_path, readable, {"scores": []}, None, save_buffer=True)
    again = _graph_agent(capture=True, device="cuda")
    assert load_training_state(tmp_path, again)["exact"]
    again.learn_many(WARMUP + 2)
    assert again.n_updates == 2 * WARMUP + 8


@cuda
def test_the_device_buffer_holds_the_host_rows() -> None:
    agent = _graph_agent(capture=True, device="cuda")
    agent.memory.flush()
    size = agent.memory.size
    assert torch.equal(agent.memory.device_rows[:size].cpu(), agent.memory.data[:size])
    assert int(agent.memory.rows_on_device) == size


@cuda
def test_one_replayed_update_equals_the_eager_update_to_float32_rounding() -> None:
    """The graph replays the kernels ``Agent.learn`` launched while it was captured, on a batch
    drawn from the same random state: from the same weights, Adam state and generator state, the
    weights' change of one replay and of one eager update agree. They may differ only where a
    kernel sums in another order, so the bound is gamma_N of a chain of N roundings (the batch's
    sum and the widest layer's, each way), relative to the change."""

    agent = _graph_agent(capture=True, device="cuda")
    agent.learn_many(WARMUP + 1)  # captured, and replayed once
    nets = [agent.actor_local, agent.critic_local, agent.actor_target, agent.critic_target]
    tensors = [p for net in nets for p in net.parameters()] + [
        t for opt in (agent.actor_optimizer, agent.critic_optimizer) for s in opt.state.values() for t in s.values()]
    start = [t.detach().clone() for t in tensors]
    rng = torch.cuda.get_rng_state()
    agent.learn_many(1)  # a replay
    replayed = [t.detach().clone() for t in tensors]
    with torch.no_grad():
        for t, s in zip(tensors, start, strict=True):
            t.copy_(s)
    torch.cuda.set_rng_state(rng)
    agent.learn(agent.memory.draw())  # the same update, eagerly
    torch.cuda.synchronize()
    n, u = agent.config.batch_size + 4 * 133, 2.0 ** -24
    bound = n * u / (1 - n * u) * 8
    for s, r, e in zip(start, replayed, tensors, strict=True):
        change = (r - s).double()
        if change.norm() > 0:
            assert float((r.double() - e.detach().double()).norm() / change.norm()) <= bound


@cuda
@pytest.mark.parametrize("learner", ["graph", "graph-overlap"])
def test_train_py_learns_on_the_gpu_and_the_run_resumes_on_the_cpu(tmp_path, learner) -> None:
    """train.py end to end on CUDA (the metrics' probe and the saves read the GPU's networks),
    then the same run continued on the CPU."""
    run = tmp_path / "run"
    common = ["--agents", "2", "--max-t", "200", "--no-progress", "--quiet", "--config", '{"warmup": 64}']
    done = subprocess.run([sys.executable, "train.py", "--device", "cuda", "--learner", learner, "--episodes", "2",
                           "--out", str(run), *common], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    record = read_record(run)
    assert record.learner == learner and record.device["type"] == "cuda"
    assert [row["critic_loss"] is not None for row in read_metrics(run)] == [True, True]  # probed
    done = subprocess.run([sys.executable, "train.py", "--resume", str(run), "--episodes", "3", "--device", "cpu",
                           "--no-progress", "--quiet"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    record = read_record(run)
    assert record.learner == "readable" and record.device["type"] == "cpu" and record.episodes_run == 3


@cuda
def test_the_same_seed_on_the_same_gpu_gives_the_same_updates() -> None:
    one, two = _graph_agent(capture=True, device="cuda"), _graph_agent(capture=True, device="cuda")
    for agent in (one, two):
        torch.cuda.manual_seed(0)
        agent.learn_many(WARMUP + 20)
    for a, b in zip(one.critic_local.parameters(), two.critic_local.parameters(), strict=True):
        assert torch.equal(a, b)


@pytest.mark.parametrize("overlap", [False, True], ids=["graph", "graph-overlap"])
def test_the_training_loop_saves_and_resumes_a_graph_back_end_run(tmp_path, overlap) -> None:
    """The whole path train.py takes (episodes, the schedule, the per-episode snapshot, saving,
    resuming) with the graph back-end's GPU buffer copy, run eagerly: a run stopped after two
    episodes and resumed ends with the weights of the run that was not stopped (the fake
    environment's rewards are constant: the weights, not the scores, tell). With ``overlap`` the
    saved state holds the acting copy a learning step behind, which the next steps act with."""
    from ddpg.loop import train
    from ddpg.reporting import callbacks
    from tests._agent_helpers import FakeEnv

    config = {**SMALL, "warmup": 64, "learn_every": 5, "learn_updates": 2}

    class Env(FakeEnv):  # its random observations restored on resume, as the real environments' are
        @property
        def random_state(self) -> dict:
            return self.rng.bit_generator.state

        @random_state.setter
        def random_state(self, state: dict) -> None:
            self.rng.bit_generator.state = state

    def agent() -> Agent:
        a = Agent(33, 4, 0, **config)  # type: ignore[arg-type]
        CudaGraph(a, capture=False, overlap=overlap)
        return a

    whole = agent()
    train(Env(num_agents=2, episode_len=40), whole, episodes=4, max_t=40,
          callbacks=callbacks.standard(tmp_path / "whole", seed=0, progress=False, save_buffer=True))
    first = agent()
    train(Env(num_agents=2, episode_len=40), first, episodes=2, max_t=40,
          callbacks=callbacks.standard(tmp_path / "cut", seed=0, progress=False, save_buffer=True))
    torch.manual_seed(123)  # whatever happened in between: the draws come back with the run folder's state
    resumed = agent()
    saved = load_training_state(tmp_path / "cut", resumed)
    assert saved["exact"] and resumed.memory.pending == resumed.memory.size > 0
    assert resumed.backend.stale == overlap  # the copy a learning step behind came back with the state
    env = Env(num_agents=2, episode_len=40)
    env.random_state = saved["environment"]
    train(env, resumed, episodes=4, max_t=40, resume=saved["loop"])
    assert resumed.n_updates == whole.n_updates > first.n_updates > 0
    for a, b in zip(resumed.actor_local.parameters(), whole.actor_local.parameters(), strict=True):
        assert torch.equal(a, b)
    states = np.zeros((2, 33), np.float32)
    assert np.array_equal(resumed.policy(states), whole.policy(states))


def test_a_capture_that_fails_says_why_and_the_updates_go_on_eagerly(monkeypatch, capsys) -> None:
    """Should a PyTorch or a GPU refuse the capture, the run goes on with the same update, eagerly,
    and says why in one line (the capture itself is faked here: there is no GPU)."""
    agent = _graph_agent()
    backend = agent.backend
    backend.capture = True

    def eager(n: int) -> int:  # the warm-up without a CUDA stream
        for _ in range(n):
            backend._one_update()
        backend.eager_updates += n
        return n

    def refuse() -> None:
        raise RuntimeError("operation not permitted when stream is capturing\nmore detail")

    monkeypatch.setattr(backend, "_eager", eager)
    monkeypatch.setattr(backend, "_capture", refuse)
    agent.learn_many(WARMUP + 4)
    assert agent.n_updates == WARMUP + 4 and not backend.graphs and not backend.capture
    assert backend.fallback == "RuntimeError: operation not permitted when stream is capturing"
    assert capsys.readouterr().err.strip() == (f"The CUDA graph capture failed ({backend.fallback}); the updates run "
                                               "eagerly on the GPU instead")
    agent.learn_many(2)
    assert agent.n_updates == WARMUP + 6
