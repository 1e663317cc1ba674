"""What a learner edits is what runs, tried with many edits (mutations) of the kinds a course learner makes.

Each edit is made as a learner makes it: a changed line in ``model.py`` or ``ddpg_agent.py`` (a copy of
the file, edited and imported in place of the original), a subclass, or a patch of a class or an
instance. Each agent is then built and attached by the default learner (``auto``) and trained for
a few hundred decisions in a small deterministic world, and the edit must either

* keep the fast learner, for a comment, a docstring, or code the fast learner does not restate
  (which it calls as the readable learner does), with a run bitwise the unedited run's for the
  first and differing from it for the others; or
* run on the readable learner with one line that names what differs, in a run that differs from
  the unedited code's own on the readable learner (so the difference is the edit's).

None may end in a traceback. Several edits take effect only on data the check never sees or after
many updates (a clip that binds late, a change after N updates, a clamp of the target): a check
that compares one update at one synthetic point admits them (ddpg.backends.proof alone did).
"""

from __future__ import annotations

import ast
import importlib.util
import sys
import textwrap
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import ddpg_agent
import model
from ddpg import backends
from ddpg_agent import Agent, DDPGConfig
from tests._agent_helpers import QUICK_JSON

ROOT = Path(__file__).resolve().parent.parent
SMALL = {"buffer_size": 4000, "batch_size": 16, "warmup": 48, "learn_every": 2, "learn_updates": 4}
LATE = 60  # the update after which the time-dependent edits act (a run makes about 150)


def _world(agent: Agent, decisions: int = 90, arms: int = 2, seed: int = 3, change: Any = None, at: int = 45,
           episode: Any = None) -> torch.Tensor:
    """A small deterministic world (smooth dynamics, a reward for moving the first coordinate up):
    every weight of the four networks after ``decisions`` steps of acting and learning; ``change(agent)``
    made at decision ``at`` and ``episode(agent)`` at each episode's end, as a learner's loop would
    (``tests/test_mutations_live.py``)."""
    rng = np.random.default_rng(seed)
    w, u = rng.standard_normal((33, 33)) * 0.15, rng.standard_normal((4, 33)) * 0.6
    states = rng.standard_normal((arms, 33))
    decide = getattr(agent.backend, "decisions", None) or agent  # as the training loop chooses, once
    for t in range(decisions):
        if t and t % 30 == 0:
            agent.reset()
            if episode is not None:
                episode(agent)
        if t == at and change is not None:
            change(agent)
        actions = decide.act(states)
        next_states = np.tanh(states @ w + actions @ u)
        rewards = 0.2 * (next_states[:, 0] > states[:, 0]) + 0.05 * np.abs(actions).mean(1)
        decide.step(states, actions, rewards, next_states)
        states = next_states
    if agent.backend is not None:
        agent.backend.settle()
    nets = (agent.actor_local, agent.critic_local, agent.actor_target, agent.critic_target)
    return torch.cat([p.detach().reshape(-1) for net in nets for p in net.parameters()])


def _node(tree: ast.Module, where: str) -> ast.AST | None:
    """The class or function ``where`` names ("Agent.td_target", "Critic", "<module>") in a parsed file."""
    if where == "<module>":
        return tree
    body: list[ast.stmt] = tree.body
    found: ast.AST | None = None
    for part in where.split("."):
        found = next((n for n in body if isinstance(n, ast.ClassDef | ast.FunctionDef) and n.name == part), None)
        if found is None:
            return None
        body = found.body
    return found


def _statements_at(node: ast.AST, old: str) -> ast.stmt | None:
    """A statement inside ``node`` that is ``old`` by syntax tree (whatever its layout), for an ``old``
    that is one whole statement."""
    try:
        wanted = ast.parse(textwrap.dedent(old)).body
    except SyntaxError:
        return None
    if len(wanted) != 1:
        return None
    target = ast.unparse(wanted[0])
    return next((n for n in ast.walk(node) if isinstance(n, ast.stmt) and not isinstance(n, ast.FunctionDef | ast.ClassDef)
                 and ast.unparse(n) == target), None)


def _edited_source(file: str, edits: list[tuple[str, str]], where: str | tuple[str, ...], key: str,
                   source: str | None = None) -> str:
    """``file`` with each (old, new) made inside the function or class it edits (``where``: one for all the
    edits, or one each), found by syntax tree: an edit breaks only when the code it edits changes, and
    then says so. ``old`` is found in that code's text, or, being a whole statement, by its syntax tree."""
    source = (ROOT / file).read_text() if source is None else source
    places = (where,) * len(edits) if isinstance(where, str) else where
    for place, (old, new) in zip(places, edits, strict=True):
        tree = ast.parse(source)
        node = _node(tree, place)
        assert node is not None, (f"the edit {key!r}: {place} is no longer in {file} (renamed or moved?); "
                                  f"anchor it in tests/test_mutations.py on where that code is now")
        lines = source.splitlines(keepends=True)
        if old == "":  # new lines at the start of the function's body, after its docstring: any refactor keeps them
            assert isinstance(node, ast.FunctionDef), f"the edit {key!r} inserts at the start of a function; {place} is none"
            body = node.body
            docstring = isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant)
            at = body[0].end_lineno if docstring and len(body) > 1 else body[0].lineno - 1
            first = lines[body[1 if docstring and len(body) > 1 else 0].lineno - 1]
            indent = first[:len(first) - len(first.lstrip())]
            source = "".join(lines[:at]) + textwrap.indent(textwrap.dedent(new).strip("\n"), indent) + "\n" + "".join(lines[at:])
            continue
        lo, hi = (0, len(lines)) if place == "<module>" else (node.lineno - 1, node.end_lineno)
        segment = "".join(lines[lo:hi])
        if segment.count(old) == 1:
            segment = segment.replace(old, new)
        else:
            statement = _statements_at(node, old) if segment.count(old) == 0 else None
            assert statement is not None, (
                f"the edit {key!r} finds {old!r} {segment.count(old)} times in {place} ({file}), not once: {place} "
                f"was changed. If its math is the same, rewrite this edit (tests/test_mutations.py) against the code "
                f"{place} has now; the other edits are unaffected")
            first, last = statement.lineno - 1 - lo, statement.end_lineno - lo
            seg_lines = segment.splitlines(keepends=True)
            indent = seg_lines[first][:len(seg_lines[first]) - len(seg_lines[first].lstrip())]
            body = textwrap.indent(textwrap.dedent(new).strip("\n"), indent) + "\n"
            segment = "".join(seg_lines[:first]) + body + "".join(seg_lines[last:])
        source = "".join(lines[:lo]) + segment + "".join(lines[hi:])
    return source


def _edited_module(tmp_path: Path, file: str, edits: list[tuple[str, str]], name: str,
                   where: str | tuple[str, ...]) -> types.ModuleType:
    """``file`` with each (old, new) made once inside ``where`` (``_edited_source``), imported from a file
    so its source can be read."""
    source = _edited_source(file, edits, where, name)
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _use_edited_model(monkeypatch, module: types.ModuleType) -> None:
    monkeypatch.setattr(ddpg_agent, "Actor", module.Actor)
    monkeypatch.setattr(ddpg_agent, "Critic", module.Critic)


def _use_edited_agent(monkeypatch, module: types.ModuleType) -> None:
    """The edited ddpg_agent.py's classes in place of the loaded ones (their methods, and its config class)."""
    for name in ("Agent", "ReplayBuffer", "NStepReturns", "OUNoise"):
        edited, loaded = getattr(module, name), getattr(ddpg_agent, name)
        for attr, value in vars(edited).items():
            if isinstance(value, (types.FunctionType, staticmethod)):
                monkeypatch.setattr(loaded, attr, value)
    monkeypatch.setattr(Agent, "config_class", module.DDPGConfig)


# ------------------------------------------------------------------ the edits
# Each: (id, file, [(old, new), ...], expected). expected: "same" (fast, bitwise the unedited run),
# "fast" (fast, the run differs: the edit is in code the fast learner calls), "decisions: part" (the
# fast update, acting and storing by the loaded code, the line naming the part), or the text the
# readable learner's line must contain (the part that differs).
MODEL_EDITS = [
    ("model-comment", [("        x = F.relu(self.fc1(state))\n", "        # the first layer\n        x = F.relu(self.fc1(state))\n")],
     "same"),
    ("model-docstring", [('"""Map a batch of states (B, state_size) to actions (B, action_size)."""', '"""The policy."""')], "same"),
    ("model-actor-widths", [("        fc1_units: int = 128,\n        fc2_units: int = 128,\n    ) -> None:\n        super().__init__()\n"
                             "        # Seeding", "        fc1_units: int = 64,\n        fc2_units: int = 32,\n    ) -> None:\n"
                             "        super().__init__()\n        # Seeding")], "fast"),
    ("model-critic-widths", [("        fcs1_units: int = 128,\n        fc2_units: int = 128,",
                              "        fcs1_units: int = 256,\n        fc2_units: int = 64,")], "fast"),
    ("model-final-init", [("FINAL_INIT = 3e-3", "FINAL_INIT = 3e-2")], "fast"),
    ("model-leaky-actor", [("        x = F.relu(self.fc1(state))", "        x = F.leaky_relu(self.fc1(state))")], "Actor.forward"),
    ("model-width-in-code", [("self.fc1 = nn.Linear(state_size, fc1_units)\n        self.fc2 = nn.Linear(fc1_units, fc2_units)",
                              "self.fc1 = nn.Linear(state_size, 64)\n        self.fc2 = nn.Linear(64, fc2_units)")], "Actor.__init__"),
    ("model-action-at-input", [("self.fcs1 = nn.Linear(state_size, fcs1_units)\n        self.fc2 = nn.Linear(fcs1_units + action_size, fc2_units)",
                                "self.fcs1 = nn.Linear(state_size + action_size, fcs1_units)\n        self.fc2 = nn.Linear(fcs1_units, fc2_units)"),
                               ("xs = F.relu(self.ln1(self.fcs1(state)))\n        x = F.relu(self.ln2(self.fc2(torch.cat((xs, action), dim=1))))",
                                "xs = F.relu(self.ln1(self.fcs1(torch.cat((state, action), dim=1))))\n        x = F.relu(self.ln2(self.fc2(xs)))")],
     "Critic.__init__"),
    ("model-batch-norm-actor", [("        self.fc3 = nn.Linear(fc2_units, action_size)\n        self.reset_parameters()",
                                 "        self.fc3 = nn.Linear(fc2_units, action_size)\n        self.bn1 = nn.BatchNorm1d(fc1_units)\n"
                                 "        self.reset_parameters()"),
                                ("x = F.relu(self.fc1(state))", "x = F.relu(self.bn1(self.fc1(state)))")], "Actor.__init__"),
    ("model-dropout-actor", [("        x = F.relu(self.fc2(x))\n        return torch.tanh",
                              "        x = F.dropout(F.relu(self.fc2(x)), 0.2, self.training)\n        return torch.tanh")], "Actor.forward"),
    ("model-doubled-q", [("        return self.fc3(x)\n", "        return 2.0 * self.fc3(x)\n")], "Critic.forward"),
    ("model-layer-norm-eps", [("self.ln1 = nn.LayerNorm(fcs1_units) if", "self.ln1 = nn.LayerNorm(fcs1_units, eps=1e-2) if")],
     "Critic.__init__"),
]
AGENT_EDITS = [
    ("agent-comment", [("        self.n_updates += 1\n", "        self.n_updates += 1  # one more update\n")], "same"),
    ("agent-docstring", [('"""y = r + d * Q\'(s\', mu\'(s\')) from the target networks, without gradients."""',
                          '"""The TD target."""')], "same"),
    ("agent-actor-clip", [("        self.critic_optimizer.step()\n        self.actor_optimizer.step()",
                           "        self.critic_optimizer.step()\n        nn.utils.clip_grad_norm_(self.actor_local.parameters(), 0.01)\n"
                           "        self.actor_optimizer.step()")], "Agent.optimise"),
    ("agent-hard-copy-late", [("        self.n_updates += 1\n", f"        self.n_updates += 1\n        if self.n_updates % {LATE} == 0:\n"
                               "            self.actor_target.load_state_dict(self.actor_local.state_dict())\n")], "Agent.optimise"),
    ("agent-target-late", [("", f"if self.n_updates > {LATE}:\n    discounts = 0.5 * discounts")],
     "Agent.td_target"),
    ("agent-new-setting", [('    n_step: int = setting(3, "count",', '    actor_clip: float = setting(0.01, ">=0", "max norm of the actor\'s '
                            'gradient")\n    n_step: int = setting(3, "count",'),
                           ("        self.critic_optimizer.step()\n        self.actor_optimizer.step()",
                            "        self.critic_optimizer.step()\n        nn.utils.clip_grad_norm_(self.actor_local.parameters(), cfg.actor_clip)\n"
                            "        self.actor_optimizer.step()")], "Agent.optimise"),
    ("agent-gamma-default", [('gamma: float = setting(0.95,', 'gamma: float = setting(0.8,')], "fast"),
    ("agent-adam-eps", [("lr=cfg.lr_actor, fused=True)", "lr=cfg.lr_actor, eps=1e-3, fused=True)")], "Agent.__init__"),
    ("agent-huber", [("return F.mse_loss(self.critic_local(states, actions), y)",
                      "return F.smooth_l1_loss(self.critic_local(states, actions), y)")], "Agent.critic_loss"),
    ("agent-course-order", [("        critic_loss = self.critic_loss(states, actions, y)  # the critic's loss\n"
                             "        actor_loss = self.actor_loss(states)  # the actor's loss\n"
                             "        self.optimise(actor_loss, critic_loss)  # the step",
                             "        critic_loss = self.critic_loss(states, actions, y)\n        self.critic_optimizer.zero_grad()\n"
                             "        critic_loss.backward()\n        self.critic_optimizer.step()\n"
                             "        actor_loss = self.actor_loss(states)\n        self.actor_optimizer.zero_grad()\n"
                             "        actor_loss.backward()\n        self.actor_optimizer.step()\n"
                             "        self.soft_update(self.critic_local, self.critic_target, self.config.tau)\n"
                             "        self.soft_update(self.actor_local, self.actor_target, self.config.tau)\n"
                             "        self.n_updates += 1")], "Agent.learn"),
    ("agent-soft-update", [("target.lerp_(local, tau)", "target.lerp_(local, min(1.0, 3 * tau))")], "Agent.soft_update"),
    ("agent-recent-batches", [("index = torch.randint(self.size, (self.batch_size,), generator=self.generator)",
                               "index = torch.randint(self.size // 2, self.size, (self.batch_size,), generator=self.generator)")],
     "ReplayBuffer.sample"),
    ("agent-policy-scaled", [("            actions = self.actor_local(torch.from_numpy(states).to(self.device)).cpu().numpy()",
                              "            actions = 0.5 * self.actor_local(torch.from_numpy(states).to(self.device)).cpu().numpy()")],
     "Agent.policy"),
    ("agent-act-clip", [("actions = np.clip(actions, -1.0, 1.0)", "actions = np.clip(actions, -0.5, 0.5)")],
     "decisions: Agent.act"),
    ("agent-ou-code", [("self.state += -self.theta * self.state", "self.state += -2 * self.theta * self.state")],
     "decisions: OUNoise.sample"),
    ("agent-n-step-discount", [("discounts = np.where(terminated[rows], 0.0, self.gamma ** k)",
                                "discounts = np.where(terminated[rows], 0.0, self.gamma ** (k + 1))")],
     "decisions: NStepReturns.transitions"),
    ("agent-n-step-early", [("ready, ended = terminated | (len(self.steps) == self.n)",
                             "ready, ended = terminated | (len(self.steps) >= self.n - 1)")], "decisions: NStepReturns.push"),
    ("agent-buffer-reward-scale", [("rows = np.column_stack([states, actions, np.reshape(rewards, (n, 1)),",
                                    "rows = np.column_stack([states, actions, 2.0 * np.reshape(rewards, (n, 1)),")],
     "decisions: ReplayBuffer.add"),
    ("agent-act-without-noise-late", [("        if add_noise:\n", "        if add_noise and self.t_step < 40:\n")],
     "decisions: Agent.act"),
    ("agent-step-learns-directly", [("            self.learn_many(self.learn_updates)",
                                     "            for _ in range(self.learn_updates - 1):\n                self.learn(self.memory.sample())")],
     "Agent.step"),
    ("agent-twice-per-batch", [("            self.learn(self.memory.sample())",
                                "            batch = self.memory.sample()\n            self.learn(batch)\n            self.learn(batch)")],
     "Agent.learn_many"),
]


class ClampedTarget(Agent):
    """A subclass whose target is clamped: it binds on this world's data, never at a synthetic point."""

    def td_target(self, rewards, next_states, discounts):
        return super().td_target(rewards, next_states, discounts).clamp(max=0.3)


class ExtraStep(Agent):
    """A subclass that steps the actor's optimiser once more after each update, late in the run."""

    def optimise(self, actor_loss, critic_loss):
        super().optimise(actor_loss, critic_loss)
        if self.n_updates > LATE:
            self.actor_optimizer.step()


def _huber_loss(self, states, actions, y):
    return F.smooth_l1_loss(self.critic_local(states, actions), y)


def _doubled_mse(input, target, *args, **kwargs):
    return 2.0 * ((input - target) ** 2).mean()


def _halved_actions(module, inputs, output):
    return 0.5 * output


# (id, how the edit is made, expected): the subclass and patch edits.
OTHER_EDITS = ["subclass-clamped-target", "subclass-extra-step", "patch-instance-critic-loss", "patch-class-actor-forward",
               "patch-library-mse", "patch-forward-hook"]
OTHER_EXPECTED = {"subclass-clamped-target": "Agent.td_target", "subclass-extra-step": "Agent.optimise",
                  "patch-instance-critic-loss": "Agent.critic_loss", "patch-class-actor-forward": "Actor.forward",
                  "patch-library-mse": "update", "patch-forward-hook": "hook"}


def _build(cls: type = Agent) -> Agent:
    return cls(33, 4, 0, config=Agent.config_class(**SMALL))


def _attach(agent: Agent, capsys) -> tuple[str, str]:
    capsys.readouterr()
    name = backends.attach(agent, "auto", threads=1)
    out = capsys.readouterr().out.strip()
    return name, out


@pytest.fixture(scope="module")
def unedited() -> dict[str, torch.Tensor]:
    runs = {}
    for learner in ("fast", "readable"):
        agent = _build()
        backends.attach(agent, learner, threads=1)
        runs[learner] = _world(agent)
    assert not torch.equal(runs["fast"], runs["readable"])  # rounding: compare each learner with its own
    agent = _build()
    backends.attach(agent, "fast", threads=1)
    agent.backend.decisions = None  # the fast update, acting and storing by ddpg_agent.py's own code
    assert torch.equal(_world(agent), runs["fast"])  # so a decision edit's run differs by the edit alone
    return runs


def _check(agent: Agent, name: str, line: str, expected: str, unedited: dict[str, torch.Tensor]) -> None:
    fast_decisions = name == "fast" and agent.backend.decisions is not None
    weights = _world(agent)
    assert len(line.splitlines()) == 1 and line.startswith(f"Learner: {name}.")
    if expected == "same":
        assert name == "fast" and fast_decisions and torch.equal(weights, unedited["fast"])
    elif expected == "fast":
        assert name == "fast" and fast_decisions
        assert weights.shape != unedited["fast"].shape or not torch.equal(weights, unedited["fast"])
    elif expected.startswith("decisions: "):
        assert name == "fast" and not fast_decisions, "the edit ran on the fast decisions"
        assert expected.removeprefix("decisions: ") in line
        assert not torch.equal(weights, unedited["fast"])
    else:
        assert name == "readable", f"the edit ran on the {name} learner"
        assert expected in line
        assert weights.shape != unedited["readable"].shape or not torch.equal(weights, unedited["readable"])


# Where each edit is made: the function or class whose code it changes (one each for edits in two places).
WHERE: dict[str, str | tuple[str, ...]] = {
    "model-comment": "Actor.forward", "model-docstring": "Actor.forward", "model-actor-widths": "Actor.__init__",
    "model-critic-widths": "Critic.__init__", "model-final-init": "<module>", "model-leaky-actor": "Actor.forward",
    "model-width-in-code": "Actor.__init__", "model-action-at-input": ("Critic.__init__", "Critic.forward"),
    "model-batch-norm-actor": ("Actor.__init__", "Actor.forward"), "model-dropout-actor": "Actor.forward",
    "model-doubled-q": "Critic.forward", "model-layer-norm-eps": "Critic.__init__",
    "agent-comment": "Agent.optimise", "agent-docstring": "Agent.td_target", "agent-actor-clip": "Agent.optimise",
    "agent-hard-copy-late": "Agent.optimise", "agent-target-late": "Agent.td_target",
    "agent-new-setting": ("DDPGConfig", "Agent.optimise"), "agent-gamma-default": "DDPGConfig",
    "agent-adam-eps": "Agent.__init__", "agent-huber": "Agent.critic_loss", "agent-course-order": "Agent.learn",
    "agent-soft-update": "Agent.soft_update", "agent-recent-batches": "ReplayBuffer.sample",
    "agent-policy-scaled": "Agent.policy", "agent-act-clip": "Agent.act", "agent-ou-code": "OUNoise.sample",
    "agent-n-step-discount": "NStepReturns.transitions", "agent-n-step-early": "NStepReturns.push",
    "agent-buffer-reward-scale": "ReplayBuffer.add", "agent-act-without-noise-late": "Agent.act",
    "agent-step-learns-directly": "Agent.step", "agent-twice-per-batch": "Agent.learn_many",
}
FILE_EDITS = [("model.py", *e) for e in MODEL_EDITS] + [("ddpg_agent.py", *e) for e in AGENT_EDITS]
USE_EDITED = {"model.py": _use_edited_model, "ddpg_agent.py": _use_edited_agent}


@pytest.mark.parametrize(("file", "key", "edits", "expected"), FILE_EDITS, ids=[e[1] for e in FILE_EDITS])
def test_an_edit_of_model_py_or_ddpg_agent_py_runs(tmp_path, monkeypatch, capsys, unedited, file, key, edits,
                                                  expected) -> None:
    USE_EDITED[file](monkeypatch, _edited_module(tmp_path, file, edits, f"edited_{key.replace('-', '_')}", WHERE[key]))
    agent = _build()
    name, line = _attach(agent, capsys)
    _check(agent, name, line, expected, unedited)


@pytest.mark.parametrize("key", OTHER_EDITS)
def test_a_subclass_or_a_patch_runs(monkeypatch, capsys, unedited, key) -> None:
    cls = {"subclass-clamped-target": ClampedTarget, "subclass-extra-step": ExtraStep}.get(key, Agent)
    if key == "patch-class-actor-forward":
        monkeypatch.setattr(model.Actor, "forward", lambda self, state: torch.tanh(self.fc3(F.relu(self.fc2(F.elu(self.fc1(state)))))))
    if key == "patch-library-mse":  # what no fingerprint of this project's code sees: the numerical check does
        monkeypatch.setattr(F, "mse_loss", _doubled_mse)
    agent = _build(cls)
    if key == "patch-instance-critic-loss":
        agent.critic_loss = types.MethodType(_huber_loss, agent)
    if key == "patch-forward-hook":
        agent.actor_local.register_forward_hook(_halved_actions)
    name, line = _attach(agent, capsys)
    _check(agent, name, line, OTHER_EXPECTED[key], unedited)


def test_there_are_enough_mutations() -> None:
    assert len(MODEL_EDITS) + len(AGENT_EDITS) + len(OTHER_EDITS) >= 25
    kinds = [e[2] for e in MODEL_EDITS + AGENT_EDITS]
    assert kinds.count("same") >= 4 and kinds.count("fast") >= 4
    assert sum(k.startswith("decisions: ") for k in kinds) >= 5


def test_a_config_value_the_fast_learner_handles_keeps_it(capsys) -> None:
    agent = Agent(33, 4, 0, config=DDPGConfig(**{**SMALL, "gamma": 0.9, "tau": 0.05, "actor_fc1": 32}))
    name, line = _attach(agent, capsys)
    assert name == "fast" and line.startswith("Learner: fast.") and agent.actor_local.fc1.out_features == 32


BATCH_NORM_ACTOR = MODEL_EDITS[[e[0] for e in MODEL_EDITS].index("model-batch-norm-actor")][1]


def test_batch_norm_written_in_model_py_is_trained_then_evaluated_and_watched_with_one_arm(tmp_path, monkeypatch, capsys) -> None:
    import evaluate
    import train
    import watch

    _use_edited_model(monkeypatch, _edited_module(tmp_path, "model.py", BATCH_NORM_ACTOR, "edited_batch_norm_run", WHERE["model-batch-norm-actor"]))
    run = tmp_path / "run"
    config = QUICK_JSON
    assert train.main(["--episodes", "2", "--agents", "2", "--max-t", "50", "--no-progress", "--quiet", "--config", config,
                       "--out", str(run)]) == 0
    assert "Learner: readable." in capsys.readouterr().out
    record = __import__("json").loads((run / "run.json").read_text())
    assert record["learners"] == ["readable"] and "bn1.running_mean" in record["networks"]["actor"]
    assert evaluate.main(["--run", str(run), "--agents", "1", "--episodes", "1", "--no-progress"]) == 0
    assert watch.main(["--run", str(run), "--agents", "1", "--steps", "20", "--no-viewer",
                       "--out", str(tmp_path / "arm.png")]) == 0
    assert (tmp_path / "arm.png").stat().st_size > 0


SMALL_AGENT = """class Agent:
    def td_target(self, rewards, next_states, discounts):
        \"\"\"The target.\"\"\"
        with torch.no_grad():
            return rewards + discounts * self.target_value(next_states, self.target_action(next_states))

    def critic_loss(self, states, actions, y):
        return F.mse_loss(self.critic_local(states, actions), y)
"""


def test_an_edit_is_anchored_on_the_function_it_edits() -> None:
    """A refactor of td_target that keeps its math: an edit of another part still applies; an edit written as
    a whole statement follows a reformatted one; an edit at the start of td_target's body applies whatever its
    body; an edit of td_target's old text fails, naming td_target and what to do."""
    refactored = SMALL_AGENT.replace(
        "            return rewards + discounts * self.target_value(next_states, self.target_action(next_states))",
        "            next_value = self.target_value(next_states, self.target_action(next_states))\n"
        "            return rewards + discounts * next_value").replace(
        "        return F.mse_loss(self.critic_local(states, actions), y)",
        "        return F.mse_loss(\n            self.critic_local(states, actions), y\n        )")
    assert refactored.count("next_value") == 2 and "F.mse_loss(\n" in refactored
    huber = [("return F.mse_loss(self.critic_local(states, actions), y)", "return F.smooth_l1_loss(self.critic_local(states, actions), y)")]
    assert "smooth_l1_loss(self.critic_local(states, actions), y)" in _edited_source(
        "", huber, "Agent.critic_loss", "huber", refactored)
    late = dict((k, e) for k, e, _ in AGENT_EDITS)["agent-target-late"]
    inserted = _edited_source("", late, "Agent.td_target", "agent-target-late", refactored)
    assert '"""The target."""\n        if self.n_updates > ' in inserted and "next_value" in inserted
    ast.parse(inserted)
    old_text = [("            return rewards + discounts * self.target_value(", "            return rewards + 0.5 * discounts * self.target_value(")]
    assert "0.5 * discounts" in _edited_source("", old_text, "Agent.td_target", "old-text", SMALL_AGENT)
    with pytest.raises(AssertionError, match=r"in Agent\.td_target \(\), not once: Agent\.td_target was "
                                             r"changed\. If its math is the same, rewrite this edit"):
        _edited_source("", old_text, "Agent.td_target", "old-text", refactored)
