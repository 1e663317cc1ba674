"""The fast learner (ddpg.backends.fast_cpu.FastCPU) is the readable agent's update (ddpg_agent.Agent) made fast:
the same update, the same schedule, and its two-thread mode is bitwise its one-thread mode."""

from __future__ import annotations

import copy
import dataclasses
import gc
from collections.abc import Callable

import numpy as np
import pytest
import torch

from ddpg.backends import fast_cpu as ddpg_fast
from ddpg.backends import passes as ddpg_passes
from ddpg.backends.fast_cpu import FastCPU, FlatAdam
from ddpg_agent import Agent, DDPGConfig
from tests._agent_helpers import fast_agent, fill

# Every configuration the fast learner supports: threads, clipping, weight decay, sizes.
CONFIGS = [
    {"threads": 2},
    {"threads": 1},
    {"threads": 2, "grad_clip": 0.0},
    {"threads": 2, "grad_clip": 2e-4},  # below every critic gradient's norm on the data below: clips always
    {"threads": 2, "weight_decay": 1e-3, "lr_actor": 3e-4, "lr_critic": 1e-3},
    {"threads": 1, "grad_clip": 2e-4, "weight_decay": 1e-3},  # clipping and decay: their order matters
    {"threads": 1, "actor_fc1": 64, "actor_fc2": 32, "critic_fc1": 48, "critic_fc2": 24,
     "batch_size": 100, "tau": 0.2, "gamma": 0.9},
    {"threads": 2, "critic_layer_norm": True},
    {"threads": 1, "critic_layer_norm": True, "weight_decay": 1e-3, "critic_fc1": 48, "critic_fc2": 24,
     "batch_size": 100},
]
# Every setting of DDPGConfig, by its own fields: the value the per-update comparison tries it at (a config
# of its own where the list above has none), or why one update does not read it. A new setting fails
# test_every_setting_is_covered_or_named until it is one or the other.
SETTINGS: dict[str, object] = {
    "buffer_size": "storage: an update draws from whatever rows the buffer holds",
    "batch_size": 100, "gamma": 0.9, "tau": 0.2, "lr_actor": 3e-4, "lr_critic": 1e-3, "weight_decay": 1e-3,
    "actor_fc1": 64, "actor_fc2": 32, "critic_fc1": 48, "critic_fc2": 24,
    "learn_every": "schedule: when updates run, not what one computes (tests/test_fast_steps.py runs it whole)",
    "learn_updates": "schedule: how many updates a learning step makes (learn_many, tests/test_fast_steps.py)",
    "warmup": "schedule: when the first update runs (tests/test_fast_steps.py)",
    "grad_clip": 2e-4,
    "noise_sigma": "acting: the OU noise (tests/test_fast_steps.py)", "noise_theta": "acting: the OU noise",
    "noise_decay": "acting: the OU noise's scale per episode", "noise_min": "acting: the floor of that scale",
    "n_step": "storing: the n-step return and its discount arrive in the batch (tests/test_n_step.py)",
    "critic_layer_norm": True,
}
CONFIGS += [{"threads": 1, name: value} for name, value in SETTINGS.items()
            if not isinstance(value, str) and not any(c.get(name) == value for c in CONFIGS)]
_IDS = [",".join(f"{k}={v}" for k, v in o.items()) for o in CONFIGS]

# Float32's unit roundoff: a stored float32 result is the exact result times (1 + d), |d| <= U.
U = 2.0 ** -24


def _gamma(n: int) -> float:
    """gamma_n = nU / (1 - nU): the bound on the relative error, against the same sum of
    absolute values, of n float32 multiply-adds evaluated in *any* order (Higham, "Accuracy
    and Stability of Numerical Algorithms", section 3.1). No CPU, BLAS kernel or SIMD width
    can exceed it, which is why the comparison below holds on every machine."""
    return n * U / (1 - n * U)


def _chain_length(cfg: DDPGConfig, state_size: int = 33, action_size: int = 4) -> int:
    """How many roundings can stack up in one gradient element: the summed lengths of the dot
    products along the longest dependency chain of an update. The actor's first-layer
    gradient passes through the actor's three layers, the critic's second and third, back
    through all five and a sum over the batch; the critic's own chain through the target
    networks is shorter. Counted generously: every hidden width twice. Layer norm adds, per
    critic layer, the sums over its units of its mean and variance and the two means of its
    backward pass: four more widths each."""
    widths = cfg.actor_fc1 + cfg.actor_fc2 + cfg.critic_fc1 + cfg.critic_fc2
    norm_sums = 4 * (cfg.critic_fc1 + cfg.critic_fc2) if cfg.critic_layer_norm else 0
    return cfg.batch_size + state_size + 2 * widths + 2 * action_size + 1 + norm_sums


def _fast(threads: int = 2, **options: object) -> Agent:
    """A filled agent on the fast back-end using ``threads`` threads, even on a one-CPU machine."""
    agent = fill(fast_agent(33, 4, 0, threads=threads, **{"buffer_size": 10_000, "batch_size": 64, **options}))
    agent.backend.two_threads = threads == 2
    return agent


def _relative_error(a: torch.Tensor, b: torch.Tensor) -> float:
    return float(torch.linalg.vector_norm(a - b) / torch.linalg.vector_norm(b))


def _readable_state(agent: Agent) -> dict[str, torch.Tensor]:
    """Weights, target weights and Adam moments of the readable agent, flattened in the
    fast agent's order ([actor | critic])."""
    nets = [agent.actor_local, agent.critic_local]
    opts = [agent.actor_optimizer, agent.critic_optimizer]
    flat = lambda tensors: torch.cat([t.detach().reshape(-1) for t in tensors])  # noqa: E731
    params = [p for net in nets for p in net.parameters()]
    zero = torch.zeros(0)
    moments = [(opt.state[p].get("exp_avg", zero), opt.state[p].get("exp_avg_sq", zero))
               for opt, net in zip(opts, nets, strict=True) for p in net.parameters()]
    return {"weights": flat(params),
            "targets": flat([p for net in (agent.actor_target, agent.critic_target) for p in net.parameters()]),
            "exp_avg": flat([m for m, _ in moments]), "exp_avg_sq": flat([v for _, v in moments])}


def _fast_state(agent: Agent) -> dict[str, torch.Tensor]:
    return {"weights": agent.backend.flat, "targets": agent.backend.target_flat,
            "exp_avg": agent.backend.optimizer.exp_avg, "exp_avg_sq": agent.backend.optimizer.exp_avg_sq}


def _gradient(agent: Agent, critic_before: torch.Tensor) -> torch.Tensor:
    """The readable agent's last gradient as Adam used it: clipped, plus the critic's L2 term
    (torch.optim.Adam adds weight_decay times the weights, as they were before its step)."""
    grad = torch.cat([p.grad.reshape(-1) for net in (agent.actor_local, agent.critic_local) for p in net.parameters()])
    n_actor = sum(p.numel() for p in agent.actor_local.parameters())
    return torch.cat([grad[:n_actor], grad[n_actor:] + agent.config.weight_decay * critic_before])


def _share_state(fast: Agent, readable: Agent) -> None:
    """Give the fast learner the readable one's weights, targets, Adam moments and step count."""
    state = _readable_state(readable)
    for name, tensor in _fast_state(fast).items():
        tensor.copy_(state[name])
    fast.backend.optimizer.steps.fill_(float(readable.actor_optimizer.state[next(readable.actor_local.parameters())]["step"]))


# The layers whose output a ReLU takes, with how often each runs: the critic runs on (s, a)
# for its own loss, then on (s, mu(s)) for the actor's; the actor runs once. The critic's are
# its layer norms (nn.Identity without layer norm: the linear layer's output as it is).
_RELU_LAYERS = {"actor_local.fc1": 1, "actor_local.fc2": 1, "critic_local.ln1": 2, "critic_local.ln2": 2}
# The linear layer before each.
_LINEAR = {"actor_local.fc1": "actor_local.fc1", "actor_local.fc2": "actor_local.fc2",
           "critic_local.ln1": "critic_local.fcs1", "critic_local.ln2": "critic_local.fc2"}


def _layer(agent: Agent, name: str) -> torch.nn.Module:
    net, layer = name.split(".")
    return getattr(getattr(agent, net), layer)


def _readable_masks(agent: Agent) -> tuple[dict[str, list[torch.Tensor]], Callable[[], None]]:
    """Record which ReLU units the readable agent's next update finds active (z > 0), by layer
    and call; returns the record and a function that stops recording."""
    masks: dict[str, list[torch.Tensor]] = {name: [] for name in _RELU_LAYERS}
    handles = [_layer(agent, name).register_forward_hook(
        lambda _layer, _inputs, z, name=name: masks[name].append(z.detach() > 0)) for name in _RELU_LAYERS]
    return masks, lambda: [h.remove() for h in handles]


def _fast_masks(agent: Agent, batch_size: int) -> dict[str, list[torch.Tensor]]:
    """The same record for the fast learner's last update, read from its saved activations
    (a unit is active where its ReLU output is > 0, as both backward passes take it)."""
    ws = agent.backend._work[batch_size]
    x = ws["xa"][:, :agent.config.critic_fc1] > 0
    return {"actor_local.fc1": [ws["h1"] > 0], "actor_local.fc2": [ws["h2"] > 0],
            "critic_local.ln1": [x, x], "critic_local.ln2": [ws["h"] > 0, ws["hp"] > 0]}


def _exact_gradient(agent: Agent, batch: tuple[torch.Tensor, ...],
                    masks: dict[str, list[torch.Tensor]]) -> tuple[torch.Tensor, float]:
    """The gradient of the agent's next update computed in float64 (exact, to float32's eyes),
    taking at every ReLU the branch a float32 learner took (``masks``).

    A unit whose pre-activation z lies within rounding of 0 may land on either side of the
    kink in float32, depending on the order of the sums; both are float32 evaluations of the
    same update, with different gradients. Following the learner's branch there moves z by
    at most 2|z|. Also returns the largest clearance |z| / (|W||x| + |b|) among the units so
    followed: a float32 z errs by at most gamma_n times that denominator, so it must be
    below gamma_N (else the learner took a branch that no rounding explains)."""
    exact = copy.deepcopy(agent)
    for net in (exact.actor_local, exact.actor_target, exact.critic_local, exact.critic_target):
        net.double()
    for opt in (exact.actor_optimizer, exact.critic_optimizer):
        for state in opt.state.values():
            for key in ("exp_avg", "exp_avg_sq"):
                state[key] = state[key].double()
    calls = {name: iter(m) for name, m in masks.items()}
    followed = [0.0]
    linear_scale: dict[str, torch.Tensor] = {}  # |W||x| + |b| of each linear layer's last call

    def remember(layer: torch.nn.Linear, inputs: tuple[torch.Tensor], name: str) -> None:
        linear_scale[name] = torch.nn.functional.linear(inputs[0].abs(), layer.weight.abs(), layer.bias.abs()).detach()

    def follow(layer: torch.nn.Module, inputs: tuple[torch.Tensor], z: torch.Tensor, name: str) -> torch.Tensor:
        differs = next(calls[name]) != (z > 0)
        if not differs.any():
            return z
        scale = linear_scale[_LINEAR[name]]
        if isinstance(layer, torch.nn.LayerNorm):
            # z = w (pre - mean) / std + b: pre's error (up to scale) and the mean's reach z
            # divided by std; the normalised value's own rounding is relative to it.
            pre = inputs[0].detach()
            var, mean = torch.var_mean(pre, dim=1, keepdim=True, correction=0)
            rstd = (var + layer.eps).rsqrt()
            scale = layer.weight.abs() * (rstd * (scale + scale.mean(1, keepdim=True)) + ((pre - mean) * rstd).abs()) \
                + layer.bias.abs()
        followed[0] = max(followed[0], float((z.abs() / scale).detach()[differs].max()))
        return z - 2 * z.detach() * differs  # -z there: the other side of the kink, the same slope

    for name in _RELU_LAYERS:
        _layer(exact, _LINEAR[name]).register_forward_pre_hook(lambda layer, i, name=_LINEAR[name]: remember(layer, i, name))
        _layer(exact, name).register_forward_hook(lambda layer, i, z, name=name: follow(layer, i, z, name))
    critic_before = torch.cat([p.detach().reshape(-1) for p in exact.critic_local.parameters()])
    exact.learn(tuple(t.double() for t in batch))
    return _gradient(exact, critic_before), followed[0]


@pytest.fixture(scope="module")
def reacher_transitions() -> tuple[np.ndarray, ...]:
    """3,000 transitions of the built-in 20-arm Reacher under uniformly random actions."""
    from reacher import ReacherEnvironment

    rng = np.random.default_rng(0)
    rows: list[tuple[np.ndarray, ...]] = []
    with ReacherEnvironment(num_agents=20, seed=0, verbose=False) as env:
        states = env.reset(train_mode=True)["ReacherBrain"].vector_observations
        for _ in range(150):
            actions = rng.uniform(-1, 1, (20, 4))
            info = env.step(actions)["ReacherBrain"]
            rows.append((states, actions, np.asarray(info.rewards), info.vector_observations))
            states = info.vector_observations
    return tuple(np.concatenate(column) for column in zip(*rows, strict=True))


@pytest.mark.parametrize("options", CONFIGS, ids=_IDS)
def test_one_update_equals_the_readable_learners_to_float32_rounding(options: dict, reacher_transitions) -> None:
    """The learners' equivalence, as a claim about one update, checked at 20 states along the
    readable learner's trajectory on real Reacher transitions: from the same weights, targets,
    Adam moments and batch, the fast update gives what the readable one gives, to float32
    rounding. The bounds come from float32's rounding model, not from what a CPU printed:

    * gradient: each learner's is within gamma_N (``_gamma``, ``_chain_length``) of the exact
      gradient, computed by a float64 copy of the readable agent, whatever the order of its
      sums; at a ReLU unit within rounding of its kink, "exact" takes the branch the learner
      took (``_exact_gradient``: either is a correct float32 evaluation).
    * what Adam and the soft update make of it is elementwise: each moment moves by its
      weight times the gradient's difference, the step's difference follows from the moments'
      (first order, doubled for safety), the targets' is tau times the weights'. On top, each
      learner rounds each stored result a few times: 8U of the result.
    """
    _compare_updates(options, reacher_transitions, n_states=20)


def _clip_then_decay(agent: FastCPU) -> None:
    """Broken on purpose: the critic's L2 term added before clipping."""
    agent.critic_grad.add_(agent.flat[agent.n_actor:], alpha=agent.config.weight_decay)
    agent.critic_grad.mul_(torch.clamp(agent.config.grad_clip / (agent.critic_grad.norm() + 1e-6), max=1.0))


def _clip_both(agent: FastCPU) -> None:
    """Broken on purpose: the actor's gradient clipped with the critic's."""
    agent.grad.mul_(torch.clamp(agent.config.grad_clip / (agent.grad.norm() + 1e-6), max=1.0))
    agent.critic_grad.add_(agent.flat[agent.n_actor:], alpha=agent.config.weight_decay)


def _no_decay(agent: FastCPU) -> None:
    """Broken on purpose: no L2 term."""
    agent.critic_grad.mul_(torch.clamp(agent.config.grad_clip / (agent.critic_grad.norm() + 1e-6), max=1.0))


def _swapped_tau(agent: FastCPU) -> None:
    """Broken on purpose: the targets move by 1 - tau."""
    agent.optimizer.step()
    agent.target_flat.lerp_(agent.flat, 1 - agent.config.tau)


@pytest.mark.parametrize(("method", "broken", "options", "caught"), [
    ("_clip_critic_gradient", _no_decay, CONFIGS[4], "fast gradient"),
    ("_clip_critic_gradient", _clip_then_decay, CONFIGS[5], "fast gradient"),
    ("_clip_critic_gradient", _clip_both, CONFIGS[5], "fast gradient"),
    ("_apply_gradients", _swapped_tau, CONFIGS[0], "targets"),
], ids=["no weight decay", "clip after decay", "clip the actor too", "1 - tau"])
def test_the_comparison_catches_a_wrong_update(method: str, broken: Callable[[FastCPU], None], options: dict,
                                               caught: str, reacher_transitions,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The per-update comparison fails on each of these small mistakes in the fast update."""
    monkeypatch.setattr(FastCPU, method, broken)
    with pytest.raises(AssertionError, match=caught):
        _compare_updates(options, reacher_transitions, n_states=2)


def _layer_norm_backward_without_centring(grad_out, out, pre, mean, rstd, weight, bias, grad_relu, grad_pre,
                                          grad_weight, grad_bias):
    """Broken on purpose: layer norm's backward pass as if the mean and the std were constants."""
    dy = ddpg_passes._RELU_GRAD(grad_out, out, 0.0, grad_input=grad_relu)
    torch.sum(dy * (pre - mean) * rstd, 0, out=grad_weight)
    torch.sum(dy, 0, out=grad_bias)
    return torch.mul(dy * weight, rstd, out=grad_pre)


def test_the_comparison_catches_a_wrong_layer_norm_backward(reacher_transitions,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """With layer norm, the per-update comparison fails when its backward pass drops a term."""
    monkeypatch.setattr(ddpg_passes, "_layer_norm_relu_backward", _layer_norm_backward_without_centring)
    with pytest.raises(AssertionError, match="fast gradient"):
        _compare_updates(CONFIGS[7], reacher_transitions, n_states=2)


def _compare_updates(options: dict, transitions: tuple[np.ndarray, ...], n_states: int) -> None:
    """The comparison of ``test_one_update_equals_the_readable_learners_to_float32_rounding`` at
    ``n_states`` states, every tenth update of the readable learner."""
    options = dict(options)
    threads = options.pop("threads")
    states, actions, rewards, next_states = transitions
    fast = fast_agent(33, 4, 0, threads=threads, **{"buffer_size": 10_000, "batch_size": 64, **options})
    fast.backend.two_threads = threads == 2
    readable = Agent(33, 4, 0, **{"buffer_size": 10_000, "batch_size": 64, **options})
    readable.memory.add(states, actions, rewards, next_states, readable.config.gamma)
    cfg = readable.config
    gamma_n = _gamma(_chain_length(cfg))
    beta1, beta2 = 0.9, 0.999
    lr = torch.full_like(fast.backend.flat, cfg.lr_critic)
    lr[:fast.backend.n_actor] = cfg.lr_actor
    clipped = 0
    for k in range(10 * n_states):
        batch = readable.memory.sample()
        if k % 10 != 1:  # the readable learner walks on; every tenth state is compared
            readable.learn(batch)
            continue
        _share_state(fast, readable)
        before = {name: t.clone() for name, t in _readable_state(readable).items()}
        before_agent = copy.deepcopy(readable)
        record, stop = _readable_masks(readable)
        readable.learn(tuple(t.clone() for t in batch))
        stop()
        fast.backend.learn(tuple(t.clone() for t in batch))
        grad = _gradient(readable, before["weights"][fast.backend.n_actor:])
        for name, g, masks in (("readable", grad, record), ("fast", fast.backend.grad, _fast_masks(fast, len(batch[0])))):
            exact, followed = _exact_gradient(before_agent, batch, masks)
            error = _relative_error(g.double(), exact)
            assert error <= gamma_n, f"{name} gradient at update {k}: {error:.2e} > gamma_N {gamma_n:.2e}"
            assert followed <= gamma_n, f"{name} took a ReLU branch {followed:.2e} from its kink at update {k}"
        ours, theirs = _fast_state(fast), _readable_state(readable)
        norm = torch.linalg.vector_norm
        dg = (fast.backend.grad - grad).double()
        dm = (ours["exp_avg"] - theirs["exp_avg"]).double()
        dv = (ours["exp_avg_sq"] - theirs["exp_avg_sq"]).double()
        v, step = theirs["exp_avg_sq"].double(), (before["weights"] - theirs["weights"]).double()
        t = readable.n_updates
        denominator = (v / (1 - beta2 ** t)).sqrt() + 1e-8
        step_bound = lr.double() / (1 - beta1 ** t) * dm.abs() / denominator + step.abs() * dv.abs() / (2 * v + 1e-30)
        bounds = {
            "exp_avg": (1 - beta1) * norm(dg),
            "exp_avg_sq": (1 - beta2) * norm(dg * (fast.backend.grad + grad).double()),
            "weights": 2 * norm(step_bound) + 8 * U * norm(step),
            "targets": cfg.tau * (norm(ours["weights"] - theirs["weights"]) + 8 * U * norm(theirs["weights"] - before["targets"])),
        }
        for name, bound in bounds.items():
            difference = float(norm(ours[name] - theirs[name]))
            allowed = float(bound) + 8 * U * float(norm(theirs[name]))
            assert difference <= allowed, f"{name} after update {k}: {difference:.3e} > {allowed:.3e}"
        # The comparison is not empty: both parts had a gradient, the update moved the weights
        # by more than the rounding allowed above (8U), and clipping clipped.
        assert all(norm(grad[part]) > 0 for part in (slice(0, fast.backend.n_actor), slice(fast.backend.n_actor, None)))
        assert _relative_error(ours["weights"], before["weights"]) > 16 * U
        if cfg.grad_clip > 0:
            probe = copy.deepcopy(before_agent)
            probe.config = dataclasses.replace(cfg, grad_clip=0.0)
            probe.learn(batch)
            clipped += float(norm(torch.cat([p.grad.reshape(-1) for p in probe.critic_local.parameters()]))) > cfg.grad_clip
    if cfg.grad_clip == 2e-4:  # on this data the critic's gradient norm stays about 4x above it
        assert clipped > n_states // 2


@pytest.mark.parametrize("n", [1, 20])
def test_written_out_policy_acts_bitwise_as_the_module(n: int) -> None:
    """FastCPU.policy skips the nn.Module calls; from the same weights (after updates, and
    after loading other weights in place) its actions are Agent.act's to the last bit."""
    fast = _fast(1, actor_fc1=64, actor_fc2=32)
    readable = Agent(33, 4, 0, buffer_size=1024, actor_fc1=64, actor_fc2=32)
    rng = np.random.default_rng(3)
    fast.learn_many(5)  # weights moved away from their initial values
    for _ in range(2):
        readable.actor_local.load_state_dict(fast.actor_local.state_dict())
        states = rng.standard_normal((n, 33)) * 3
        np.testing.assert_array_equal(fast.act(states, add_noise=False), readable.act(states, add_noise=False))
        np.testing.assert_array_equal(fast.act(states[0], add_noise=False), readable.act(states[0], add_noise=False))
        fast.actor_local.load_state_dict(Agent(33, 4, 7, actor_fc1=64, actor_fc2=32).actor_local.state_dict())
    assert fast.act(states).shape == (n, 4) and not np.array_equal(fast.act(states), fast.act(states))  # + noise


def test_training_steps_follow_the_readable_schedule() -> None:
    """step() stores, learns on the same schedule and draws the same batches: fed the same
    transitions, both agents hold the same rows, have made the same number of updates and
    have drawn the same random numbers after every step. (What each update computes is
    compared above; free-running weights drift apart by rounding, differently on each CPU.)"""
    fast = fast_agent(33, 4, 0, buffer_size=5000, batch_size=32, warmup=200, learn_every=5,
                     learn_updates=3)
    readable = Agent(33, 4, 0, buffer_size=5000, batch_size=32, warmup=200, learn_every=5,
                     learn_updates=3)
    rng = np.random.default_rng(0)
    for _ in range(40):
        s, ns, r = rng.standard_normal((10, 33)), rng.standard_normal((10, 33)), rng.uniform(0, 0.04, 10)
        actions = [agent.act(s) for agent in (fast, readable)]
        if readable.n_updates == 0:  # the same weights and noise: the same actions, bitwise
            np.testing.assert_array_equal(actions[0], actions[1])
        for agent in (fast, readable):
            agent.step(s, actions[1], r, ns)
        assert fast.n_updates == readable.n_updates
        assert torch.equal(fast.memory.generator.get_state(), readable.memory.generator.get_state())
    # 3-step returns store each arm's first transition at step 3: the buffer holds 200 from
    # step 22 on, so learning happens at steps 25, 30, 35 and 40.
    assert fast.config.n_step == readable.config.n_step == 3
    assert fast.n_updates == readable.n_updates == 4 * 3
    assert torch.equal(fast.memory.data, readable.memory.data)
    assert not torch.equal(fast.backend.flat, _fast(1).backend.flat)  # it did learn


def _learner_state(agent: Agent) -> list[torch.Tensor]:
    """Everything an update changes: weights, targets, Adam moments, sampler state."""
    return [agent.backend.flat, agent.backend.target_flat, agent.backend.optimizer.exp_avg, agent.backend.optimizer.exp_avg_sq,
            agent.memory.generator.get_state()]


@pytest.mark.parametrize("options", [{}, {"weight_decay": 1e-4}, {"grad_clip": 0.0}])
def test_two_threads_are_bitwise_one_thread(options: dict) -> None:
    states = []
    for threads in (1, 2):
        agent = _fast(threads, batch_size=256, **options)
        agent.learn_many(150)  # the prefetching path
        for _ in range(5):
            agent.backend.learn(agent.memory.sample())
        states.append(_learner_state(agent))
        assert agent.n_updates == 155
    for one, two in zip(*states, strict=True):
        assert torch.equal(one, two)


@pytest.mark.parametrize("threads", [1, 2])
def test_learn_many_is_learn_in_a_loop(threads: int) -> None:
    looped, batched = _fast(threads), _fast(threads)
    for _ in range(12):
        looped.backend.learn(looped.memory.sample())
    batched.learn_many(12)
    for one, two in zip(_learner_state(looped), _learner_state(batched), strict=True):
        assert torch.equal(one, two)


def test_learner_error_leaves_weights_untouched_and_agent_usable() -> None:
    agents = [_fast(t) for t in (1, 2)]
    for agent in agents:
        agent.learn_many(3)
        before = [t.clone() for t in _learner_state(agent)[:4]]
        s, a, r, ns, disc = (t.clone() for t in agent.memory.sample())
        with pytest.raises(RuntimeError):  # next states of the wrong width (the helper's part)
            agent.backend.learn((s, a, r, ns[:, :5], disc))
        with pytest.raises(RuntimeError):  # states of the wrong width (the caller's part)
            agent.backend.learn((s[:, :5], a, r, ns, disc))
        for old, new in zip(before, _learner_state(agent)[:4], strict=True):
            assert torch.equal(old, new)
        agent.learn_many(4)
    for one, two in zip(*(_learner_state(agent) for agent in agents), strict=True):
        assert torch.equal(one, two)


def test_helper_thread_only_with_a_second_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ddpg_fast, "available_cpus", lambda: 2)
    assert fast_agent(33, 4, 0, buffer_size=100).backend.two_threads
    assert not fast_agent(33, 4, 0, buffer_size=100, threads=1).backend.two_threads
    monkeypatch.setattr(ddpg_fast, "available_cpus", lambda: 1)
    agent = fill(fast_agent(33, 4, 0, buffer_size=10_000, batch_size=64))
    assert not agent.backend.two_threads
    agent.learn_many(2)
    assert agent.backend._helper is None
    with pytest.raises(ValueError, match="threads must be 1 or 2"):
        fast_agent(33, 4, 0, buffer_size=100, threads=3)


@pytest.mark.timeout(60)  # a regression hangs
def test_update_after_an_interrupted_hand_over_does_not_hang() -> None:
    """Ctrl-C can land between handing a job over and the ``try`` that releases it, or
    between marking a job pending and handing it over; the next update must settle it."""
    agent = _fast(2)
    agent.learn_many(1)
    helper = agent.backend._helper
    assert helper is not None
    reached = []

    def stuck_job() -> None:  # like the real job: waits for the caller's signal
        helper.to_helper.acquire()
        reached.append("released")
        raise RuntimeError("error of the aborted update")

    helper.submit(stuck_job)  # ... and the caller never gets to release it
    agent.learn_many(3)  # settles the stuck job (dropping its error), then learns
    assert reached == ["released"] and not helper.pending
    helper.pending = True  # marked, never handed over
    agent.learn_many(1)
    assert not helper.pending and agent.n_updates == 5
    reference = _fast(1)
    reference.learn_many(5)
    assert torch.equal(reference.backend.flat, agent.backend.flat)


def test_helper_thread_ends_with_its_agent() -> None:
    agent = _fast(2)
    agent.learn_many(1)
    assert agent.backend._helper is not None
    thread = agent.backend._helper._thread
    assert thread.is_alive()
    del agent
    gc.collect()
    thread.join(timeout=5)
    assert not thread.is_alive()


def test_every_setting_is_covered_or_named() -> None:
    """The comparison's configurations come from DDPGConfig's fields: each is tried, or named as not the update's."""
    fields = [f.name for f in dataclasses.fields(DDPGConfig)]
    new = [name for name in fields if name not in SETTINGS]
    assert not new, (f"the new setting(s) {new}: give each in SETTINGS (tests/test_fast_agent.py) the value the "
                     "per-update comparison should try, or the reason one update does not read it")
    assert set(SETTINGS) == set(fields), f"SETTINGS names settings DDPGConfig no longer has: {set(SETTINGS) - set(fields)}"
    tried = [name for name, value in SETTINGS.items() if not isinstance(value, str)]
    assert all(any(c.get(name) == SETTINGS[name] for c in CONFIGS) for name in tried)


def test_flat_adam_matches_torch_adam_and_is_its_state() -> None:
    """FlatAdam steps as two fused torch Adams would, and their state is its own: a step of either
    torch optimiser moves FlatAdam's moments and step count too."""
    torch.manual_seed(0)
    params, grad = torch.randn(1000), torch.zeros(1000)
    mine = [torch.nn.Parameter(params[:300]), torch.nn.Parameter(params[300:])]
    ref = [torch.nn.Parameter(params[:300].clone()), torch.nn.Parameter(params[300:].clone())]
    held = (torch.optim.Adam([mine[0]], lr=3e-3, fused=True), torch.optim.Adam([mine[1]], lr=2e-3, fused=True))
    opts = [torch.optim.Adam([ref[0]], lr=3e-3, fused=True), torch.optim.Adam([ref[1]], lr=2e-3, fused=True)]
    flat = FlatAdam(params, grad, held)
    for k in range(20):
        grad.copy_(torch.randn(1000) * torch.rand(1000))
        ref[0].grad, ref[1].grad = grad[:300].clone(), grad[300:].clone()
        if k == 10:  # the optimisers' own step, on the shared state
            mine[0].grad, mine[1].grad = grad[:300].clone(), grad[300:].clone()
            for opt in held:
                opt.step()
        else:
            assert flat.read_settings() is None
            flat.step()
            flat.sync_steps()  # as the fast learner does at the end of each learning step
        for opt in opts:
            opt.step()
    torch.testing.assert_close(params, torch.cat([r.detach() for r in ref]), rtol=1e-6, atol=1e-7)
    torch.testing.assert_close(held[1].state[mine[1]]["exp_avg_sq"], opts[1].state[ref[1]]["exp_avg_sq"])
    assert flat.t == 20 and held[0].state[mine[0]]["exp_avg"].data_ptr() == flat.exp_avg.data_ptr()
