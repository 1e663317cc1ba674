"""The fast paths' guard: at every entry, the agent still holds what they were admitted for.

``admission`` admits a fast path once, when it is attached, for the code it restates. A course
learner changes the agent while it trains: a new optimiser, another buffer or noise, a config
replaced, a part patched, a library function swapped, a module hook, another default dtype. The
fast paths read every setting where the readable code reads it (``agent.config``, the optimisers'
``param_groups``), so a changed value is honoured; what they cannot follow is an object that is not
the one admitted. ``Guard.problem`` names the first such change in a few words, and the fast path
steps aside from then on, with one line (``aside_line``), for the readable code, which runs on the
agent's own state (the fast paths keep no copy of it).

What it checks, by path (``restated``'s table):

* every path: torch's default dtype is float32, and each library function the path's parts call is
  the object that was PyTorch's own when this module was imported (``LIBRARY``);
* acting: the actor (the same module, its parameters still the flat tensor's views, no hook) and
  the functions ``Actor.forward`` and ``Agent.policy`` that the agent would call;
* the update: the four networks, both optimisers (the same objects, one parameter group holding
  the network's parameters, the same flags, no step hook; an lr scheduler's own wrapper of ``step``
  is torch's and allowed), the buffer and the config objects, and every restated part's function;
* the decisions: the noise, the n-step returns, the buffer and the config objects, and their parts.

Each check is an identity test or a comparison of a few numbers: ``benchmarks/bench_guard.py``
measures its cost against an update and a decision.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import operator
import os
from typing import Any

import torch
from torch import nn

from ddpg.backends import restated
from ddpg.backends.restated import DECISIONS, UPDATE
from ddpg_agent import DDPGConfig

_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__))
READABLE = "the readable learner runs ddpg_agent.py's update as loaded (autograd: slower per update, docs/training.md)"
NETWORKS = ("actor_local", "critic_local", "actor_target", "critic_target")
OPTIMIZERS = {"actor_optimizer": "actor_local", "critic_optimizer": "critic_local"}
OBJECTS = {UPDATE: (*NETWORKS, *OPTIMIZERS, "memory", "config"), DECISIONS: ("noise", "returns", "memory", "config")}
FLAGS = ("amsgrad", "maximize", "foreach", "capturable", "differentiable", "fused", "decoupled_weight_decay")
SAY = {"actor_local": "the actor", "critic_local": "the critic", "actor_target": "the actor's target",
       "critic_target": "the critic's target", "actor_optimizer": "the actor's optimiser",
       "critic_optimizer": "the critic's optimiser", "memory": "the replay buffer (agent.memory)",
       "config": "the config (agent.config)", "noise": "the noise (agent.noise)", "returns": "the n-step returns"}


def _resolve(name: str) -> tuple[Any, str]:
    """The object a library function is looked up on, and the attribute: "torch.nn:Linear.forward"."""
    module, _, path = name.partition(":")
    owner: Any = importlib.import_module(module)
    *outer, attr = path.split(".")
    for part in outer:
        owner = getattr(owner, part)
    return owner, attr


def _torch_own(obj: Any) -> bool:
    """Whether ``obj`` is PyTorch's code: compiled into it, or written in its package's files."""
    try:
        file = inspect.getfile(obj)  # a wrapper's own file, not the wrapped function's
    except TypeError:  # a builtin: compiled code, which a Python patch is not
        return not inspect.isfunction(obj) and type(obj).__module__ == "builtins"
    return os.path.abspath(file).startswith(_TORCH_DIR + os.sep)


# The library's own objects, taken when this module is first imported (ddpg.backends imports it).
_LOOKUP = {name: _resolve(name) for name in restated.LIBRARY}
ORIGINAL = {name: getattr(owner, attr) for name, (owner, attr) in _LOOKUP.items()}
NOT_TORCH = sorted(name for name, obj in ORIGINAL.items() if not _torch_own(obj))


def library_problem(names: list[str]) -> str | None:
    """Which of these library functions is not PyTorch's own object (replaced since import, or
    before it by code outside torch), or None."""
    for name in names:
        owner, attr = _LOOKUP[name]
        now = getattr(owner, attr, None)
        if now is not ORIGINAL[name]:
            # PyTorch wraps some of its own functions later (an optimiser's first instance wraps its
            # class's step for the profiler): its own wrapper of the same function is still its own.
            if not (_torch_own(now) and inspect.unwrap(now) is inspect.unwrap(ORIGINAL[name])):
                return f"{name.replace(':', '.')} is not PyTorch's own (patched)"
            ORIGINAL[name] = now
        if name in NOT_TORCH:
            return f"{name.replace(':', '.')} is not PyTorch's own (patched before ddpg was imported)"
    return None


def called(obj: Any, name: str) -> Any:
    """What ``obj`` runs for ``name``: an attribute set on the instance, else its class's (the first in
    the MRO); None where nothing defines it."""
    if name != "__init__" and name in getattr(obj, "__dict__", {}):
        return obj.__dict__[name]
    for cls in type(obj).__mro__:
        if name in cls.__dict__:
            return cls.__dict__[name]
    return None


def global_hooks() -> list[dict[Any, Any]]:
    """PyTorch's dicts of module hooks that every module runs (each empty unless one is registered)."""
    from torch.nn.modules import module as torch_module

    return [getattr(torch_module, name, {}) for name in ("_global_forward_hooks", "_global_forward_pre_hooks",
                                                         "_global_backward_hooks", "_global_backward_pre_hooks")]


def hook_dicts(m: nn.Module) -> tuple[dict[Any, Any], ...]:
    """A module's own dicts of hooks around its forward and backward passes."""
    return m._forward_hooks, m._forward_pre_hooks, m._backward_hooks, m._backward_pre_hooks


def runs_more(m: nn.Module) -> bool:
    """Whether calling the module runs code a fast path would skip: a hook, or a forward set on the instance."""
    return any(hook_dicts(m)) or "forward" in m.__dict__


def hooked(module: nn.Module, label: str) -> str | None:
    """A module hook runs code around a forward or backward pass that a fast path would skip."""
    if any(global_hooks()):
        return "a global module hook"
    for path, m in module.named_modules():
        if runs_more(m):
            return f"a hook or a forward set on {label}{'.' + path if path else ''}"
    return None


def _optimizer_problem(opt: torch.optim.Optimizer, params: list[nn.Parameter], flags: dict[str, Any],
                       label: str) -> str | None:
    """Why the fast learner's Adam is not this optimiser's step any more, or None."""
    from torch.optim import optimizer as torch_optimizer

    if len(opt.param_groups) != 1:
        return f"{label} has {len(opt.param_groups)} parameter groups"
    group = opt.param_groups[0]
    mine = group["params"]
    if len(mine) != len(params) or any(a is not b for a, b in zip(mine, params, strict=True)):
        return f"{label}'s parameters are not its network's"
    for flag, value in flags.items():
        if group.get(flag) != value:
            return f"{label}'s {flag} is {group.get(flag)!r}"
    step = opt.__dict__.get("step")
    if step is not None and not (getattr(step, "_wrapped_by_lr_sched", False)  # a scheduler's counter
                                 and getattr(step, "__wrapped__", None) is type(opt).__dict__.get("step")):
        return f"{label}'s step is replaced"
    if (opt._optimizer_step_pre_hooks or opt._optimizer_step_post_hooks or torch_optimizer._global_optimizer_pre_hooks
            or torch_optimizer._global_optimizer_post_hooks):
        return f"a hook on {label}'s step"
    return None


# What the fast learner's Adam (flat.FlatAdam) restates: ddpg_agent.py's fused torch.optim.Adam, L2 weight decay.
ADAM = {"amsgrad": False, "maximize": False, "capturable": False, "differentiable": False, "fused": True,
        "decoupled_weight_decay": False}


def optimizers_problem(agent: Any) -> str | None:
    """Why the agent's optimisers are not what the fast learner's Adam restates (at admission), or None."""
    for name, net in OPTIMIZERS.items():
        opt = getattr(agent, name)
        if type(opt) is not torch.optim.Adam:
            return f"{SAY[name]} is {type(opt).__name__}, and the fast learner restates torch.optim.Adam"
        found = _optimizer_problem(opt, list(getattr(agent, net).parameters()), ADAM, SAY[name])
        if found:
            return found
    return None


class Guard:
    """What a fast path was admitted for, taken when it is attached; ``problem(path)`` at each entry."""

    def __init__(self, agent: Any) -> None:
        self.agent, self.type = agent, type(agent)
        self.objects = {name: getattr(agent, name) for path in OBJECTS.values() for name in path}
        self.functions = {path: [self._function(label) for label in labels]
                          for path, labels in (("acting", restated.ACTING), (UPDATE, restated.parts(UPDATE)),
                                               (DECISIONS, restated.parts(DECISIONS)))}
        self.library = {UPDATE: restated.library(restated.parts(UPDATE)), DECISIONS: restated.library(set(restated.ACTING))}
        self.library["acting"] = self.library[DECISIONS]
        self.params = {net: [(p, p.data_ptr()) for p in getattr(agent, net).parameters()] for net in NETWORKS}
        self.modules = {net: list(getattr(agent, net).modules()) for net in NETWORKS}
        self.global_hooks = global_hooks()
        self.optimizers = {name: (list(getattr(agent, name).param_groups[0]["params"]),
                                  {f: getattr(agent, name).param_groups[0].get(f) for f in FLAGS})
                           for name in OPTIMIZERS}
        self._quick: dict[str, tuple[Any, ...]] = {}  # by path: the lists _unchanged compares, made at first use
        # The settings the fast paths do not handle, at their defaults when admitted: they must stay there.
        plain = {f.name for f in dataclasses.fields(DDPGConfig)}
        self.unhandled = [(f.name, f.default) for f in dataclasses.fields(agent.config)
                          if f.name in plain and f.name not in restated.SETTINGS]

    def _function(self, label: str) -> tuple[str, dict[str, Any], str, tuple[Any, ...], Any, Any]:
        """(label, the instance's __dict__, the name, the class dicts before the one defining it, that
        class's dict (None: none defines it), the function)."""
        where, name = restated.PARTS[label][0], label.split(".")[1]
        obj = getattr(self.agent, where) if where else self.agent
        before, owner = [], None
        for cls in type(obj).__mro__:
            if name in cls.__dict__:
                owner = cls.__dict__
                break
            before.append(cls.__dict__)
        mine = {} if name == "__init__" else obj.__dict__  # an instance's __init__ never runs again
        return label, mine, name, tuple(before), owner, called(obj, name)

    def _functions(self, path: str) -> str | None:
        for label, mine, name, before, owner, func in self.functions[path]:
            if name in mine or (owner is not None and owner.get(name) is not func):
                return f"{label} was replaced or patched"
            for d in before:
                if name in d:
                    return f"{label} was replaced or patched"
        return None

    def _networks(self, names: tuple[str, ...]) -> str | None:
        agent = self.agent
        for hooks in self.global_hooks:
            if hooks:
                return "a global module hook"
        for net in names:
            if getattr(agent, net) is not self.objects[net]:
                return f"{SAY[net]} (agent.{net}) was replaced"
            for p, ptr in self.params[net]:
                if p.data_ptr() != ptr:  # .data replaced, or moved to another dtype or device
                    return f"{SAY[net]}'s parameters were replaced (their .data, or their dtype)"
            if any(map(runs_more, self.modules[net])):
                return f"a hook or a forward set on {net}"
        return None

    def problem(self, path: str) -> str | None:
        """The first change since admission that the fast path ``path`` ("acting", UPDATE or
        DECISIONS, which acts too) cannot follow, in a few words; None when there is none.

        ``_unchanged`` answers first, with the checks done as a few C-level passes over lists made
        once (it runs before every decision); only where it finds something does ``_problem``
        look again, one check at a time, to name it."""
        try:
            if self._unchanged(path):
                return None
        except Exception:  # a part deleted, an attribute gone: the checks below name it
            pass
        found = self._problem(path)
        if found is None:  # PyTorch wrapped one of its own functions (library_problem took it): look again
            self._quick = {}
        return found

    def _quick_lists(self, path: str) -> tuple[Any, ...]:
        """The lists ``_unchanged`` compares, for ``path``."""
        names = OBJECTS[path] if path != "acting" else ()
        nets = NETWORKS if path == UPDATE else ("actor_local",)
        getter = operator.attrgetter(*names, *nets)
        objects = tuple(self.objects[n] for n in (*names, *nets))
        params = [p for net in nets for p, _ in self.params[net]]
        ptrs = [ptr for net in nets for _, ptr in self.params[net]]
        modules = [m for net in nets for m in self.modules[net]]
        hooks = [*self.global_hooks, *(d for m in modules for d in hook_dicts(m))]
        functions = self.functions[path]
        instance = ([m.__dict__ for m in modules] + [mine for _, mine, _, _, _, _ in functions],
                    ["forward"] * len(modules) + [name for _, _, name, _, _, _ in functions])
        owned = [(owner, name, func) for _, _, name, _, owner, func in functions if owner is not None]
        before = [(d, name) for _, _, name, dicts, _, _ in functions for d in dicts]
        library = [(*_LOOKUP[name], ORIGINAL[name]) for name in self.library[path] if name not in NOT_TORCH]
        if len(library) != len(self.library[path]):
            raise ValueError("a library function is not PyTorch's own")
        return (getter, objects, params, ptrs, hooks, instance, [o for o, _, _ in owned], [n for _, n, _ in owned],
                [f for _, _, f in owned], [d for d, _ in before], [n for _, n in before],
                [o for o, _, _ in library], [a for _, a, _ in library], [x for _, _, x in library])

    def _unchanged(self, path: str) -> bool:
        """Whether everything ``path`` relies on is as admitted: identities, pointers and empty hook
        dicts compared by ``map`` over lists (True), or something to look at (False)."""
        lists = self._quick.get(path)
        if lists is None:
            lists = self._quick[path] = self._quick_lists(path)
        (getter, objects, params, ptrs, hooks, (dicts, keys), owners, names, funcs, before, before_names,
         lib_owners, lib_attrs, lib_originals) = lists
        agent = self.agent
        return (torch.get_default_dtype() is torch.float32 and type(agent) is self.type
                and all(map(operator.is_, getter(agent) if len(objects) > 1 else (getter(agent),), objects))
                and list(map(torch.Tensor.data_ptr, params)) == ptrs and not any(hooks)
                and not any(map(operator.contains, dicts, keys))
                and all(map(operator.is_, map(operator.getitem, owners, names), funcs))
                and not any(map(operator.contains, before, before_names))
                and all(map(operator.is_, map(getattr, lib_owners, lib_attrs), lib_originals))
                and (path != UPDATE or (self._optimizers_unchanged()
                                        and all(getattr(agent.config, n) == d for n, d in self.unhandled))))

    def _optimizers_unchanged(self) -> bool:
        agent = self.agent
        for name in OPTIMIZERS:
            if _optimizer_problem(getattr(agent, name), *self.optimizers[name], SAY[name]):
                return False
        return True

    def _problem(self, path: str) -> str | None:
        agent = self.agent
        if torch.get_default_dtype() is not torch.float32:
            return f"torch's default dtype is {torch.get_default_dtype()}"
        if type(agent) is not self.type:
            return "the agent's class was changed"
        if path != "acting":
            for name in OBJECTS[path]:
                if getattr(agent, name) is not self.objects[name]:
                    return f"{SAY[name]} was replaced"
        if path == UPDATE:
            for name, default in self.unhandled:
                if getattr(agent.config, name) != default:
                    return f"the setting {name} is {getattr(agent.config, name)!r}, which the fast learner does not know"
            for name in OPTIMIZERS:
                params, flags = self.optimizers[name]
                found = _optimizer_problem(getattr(agent, name), params, flags, SAY[name])
                if found:
                    return found
        return (self._networks(NETWORKS if path == UPDATE else ("actor_local",)) or self._functions(path)
                or library_problem(self.library[path]))


def aside_line(what: str, n: int, why: str) -> str:
    """The one line a fast path prints when it steps aside: ``what`` runs readable from update or decision ``n``."""
    if what == UPDATE:
        return f"Learner: readable from update {n}: {why}, so {READABLE}."
    return f"Decisions: ddpg_agent.py's act and step as loaded from decision {n}: {why}."


__all__ = ["ADAM", "NOT_TORCH", "ORIGINAL", "READABLE", "Guard", "aside_line", "called", "hooked", "library_problem",
           "optimizers_problem"]
