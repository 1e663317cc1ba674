"""Admitting the fast learner only for the exact code it restates: a fingerprint of each part.

``fast_cpu.FastCPU`` computes by hand what some of the loaded code computes (``RESTATED``: the
networks' forward passes and constructors, the agent's update and its constructor, where its
optimisers are made, and the buffer's draws). It may run only while each of those parts is the code
it was written from, so each is fingerprinted and compared with the record kept beside the fast
learner (``fast_cpu_restates.json``):

* the fingerprint is taken from the objects the agent will actually call (its class's method, or an
  attribute set on the instance), so an edit of the file, a subclass and a monkeypatch all show;
* it is the function's syntax tree printed back (``ast.unparse``) without docstrings, so comments,
  docstrings and layout do not count; the networks' constructors are taken without their
  defaults: the widths written there are read from the networks built, which the fast learner takes;
* the config's fields must be the ones the fast learner handles (a new field may be used anywhere);
* a function whose code in memory is not the one in its file (edited after import) does not pass.

What differs is named in one line, and the readable learner (autograd over the loaded code) runs.
An edit anywhere else (``model.py``'s initialisation, a default setting) keeps the fast learner,
which calls that code as the readable learner does. The training loop's acting and storing
(``fast_steps.FastSteps``) are admitted the same way, apart (``DECIDES``, the record's "decisions"):
an edit of the noise keeps the fast update and runs the edited noise.

The record is data: ``python -m ddpg.backends.admission --write`` remakes it from the code on disk,
to be run only once ``fast_cpu.py`` restates the edited code again. ``tests/test_admission.py``
fails while the record and the source disagree.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import inspect
import json
import textwrap
import types
from dataclasses import fields
from pathlib import Path
from typing import Any

from ddpg.variants.compose import code_names

RECORD = Path(__file__).with_name("fast_cpu_restates.json")

# What the fast learner restates, by where the agent keeps it: "" the agent itself, else an attribute.
# "Actor" and "Critic" are the classes of the agent's networks (model.py's unless edited). The parts
# of ``variants.VariantAgent`` are checked where the agent has them (data-only variants run fast).
RESTATED: dict[str, tuple[str, tuple[str, ...]]] = {
    "Actor": ("actor_local", ("__init__", "forward")),
    "Critic": ("critic_local", ("__init__", "forward")),
    "Agent": ("", ("__init__", "step", "policy", "learn_many", "learn", "td_target", "critic_loss", "actor_loss", "optimise",
                   "soft_update", "target_action", "target_value", "critic_values", "smallest", "value_loss")),
    "ReplayBuffer": ("memory", ("__init__", "sample", "split")),
}
# What ``fast_steps.FastSteps`` restates for the training loop: acting, and storing a decision's transitions.
# Admitted apart from the update: an edit of the noise keeps the fast update and runs the edited noise.
DECIDES: dict[str, tuple[str, tuple[str, ...]]] = {
    "Agent": ("", ("act", "step", "policy")),
    "OUNoise": ("noise", ("sample",)),
    "NStepReturns": ("returns", ("push", "transitions")),
    "ReplayBuffer": ("memory", ("add", "__len__")),
}
# The record's key for each set of restated parts, and what restates them (as the one line names it).
PARTS = {"code": RESTATED, "decisions": DECIDES}
RESTATER = {"code": "the fast learner", "decisions": "the fast decisions"}
WITHOUT_DEFAULTS = {"Actor.__init__", "Critic.__init__"}  # widths: read from the networks built
FILES = {"Actor": "model.py", "Critic": "model.py", "Agent": "ddpg_agent.py", "ReplayBuffer": "ddpg_agent.py",
         "OUNoise": "ddpg_agent.py", "NStepReturns": "ddpg_agent.py"}


class Differs(Exception):
    """A restated part that is not the code the fast learner was written from."""


def _strip_docstrings(tree: ast.AST) -> None:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                node.body = node.body[1:] or [ast.Pass()]


def fingerprint(func: Any, label: str = "") -> str:
    """The function's code without docstrings and comments (and, for the networks' constructors,
    defaults), hashed. Differs when it cannot be read as the plain function it claims to be."""
    if isinstance(func, (staticmethod, classmethod)):
        func = func.__func__
    if not isinstance(func, types.FunctionType) or hasattr(func, "__wrapped__"):
        raise Differs(f"{label} is not a plain function ({type(func).__name__})")
    try:
        source = textwrap.dedent(inspect.getsource(func))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError) as exc:
        raise Differs(f"{label}'s source cannot be read ({exc})") from None
    node = tree.body[0] if tree.body else None
    if not isinstance(node, ast.FunctionDef) or node.name != func.__name__:
        raise Differs(f"{label} is not a function defined by def")
    _strip_docstrings(node)
    if label in WITHOUT_DEFAULTS:
        node.args.defaults, node.args.kw_defaults = [], [None] * len(node.args.kwonlyargs)
    # The code in memory must be the one in the file (a file edited after import is not what runs).
    compiled = compile(ast.Module(body=[node], type_ignores=[]), "<admission>", "exec").co_consts
    code = next((c for c in compiled if isinstance(c, types.CodeType)), None)
    if code is None or code_names(code) != code_names(func.__code__):
        raise Differs(f"{label} in memory is not the code in its file (edited after import?)")
    return hashlib.sha256(ast.unparse(node).encode()).hexdigest()[:16]


def _data_only_pieces() -> tuple[type, ...]:
    from ddpg.variants import registry

    return tuple(v.piece for v in registry.VARIANTS if v.data_only)


def _called(obj: Any, name: str, label: str) -> Any:
    """What ``obj`` runs for ``name``: an attribute set on the instance, else the first definition
    in its class's MRO that is not a data-only variant's piece (those may only wrap a part, calling
    ``super()``); None where nothing defines it."""
    if name != "__init__" and name in getattr(obj, "__dict__", {}):
        return obj.__dict__[name]
    skip = _data_only_pieces()
    for cls in type(obj).__mro__:
        if name in cls.__dict__:
            if cls in skip:
                func = cls.__dict__[name]
                if "super" not in getattr(getattr(func, "__code__", None), "co_names", ()):
                    raise Differs(f"{label} is replaced by the data-only variant {cls.__name__}")
                continue
            return cls.__dict__[name]
    return None


def fingerprints(agent: Any, parts: dict[str, tuple[str, tuple[str, ...]]] = RESTATED) -> dict[str, str | None]:
    """Each restated part's fingerprint as the agent would run it (None: it has no such part;
    ``Differs`` for one that cannot be read)."""
    if type(agent.actor_target) is not type(agent.actor_local) or type(agent.critic_target) is not type(agent.critic_local):
        raise Differs("the target networks are not of the networks' own classes")
    out: dict[str, str | None] = {}
    for owner, (where, names) in parts.items():
        obj = getattr(agent, where) if where else agent
        for name in names:
            label = f"{owner}.{name}"
            func = _called(obj, name, label)
            out[label] = None if func is None else fingerprint(func, label)
    return out


def source_fingerprints(parts: dict[str, tuple[str, tuple[str, ...]]] = RESTATED) -> dict[str, list[str | None]]:
    """For each restated part, the fingerprints of the code on disk that may run it: ``ddpg_agent.py``'s
    and ``model.py``'s, and for the agent's parts ``variants.VariantAgent``'s with no update variant on."""
    import ddpg_agent
    import model
    from ddpg.variants.agent import VariantAgent

    # The update's parts may be VariantAgent's (a data-only variant runs fast); the decisions run for Agent alone.
    classes = {"Actor": [model.Actor], "Critic": [model.Critic],
               "Agent": [ddpg_agent.Agent] + ([VariantAgent] if parts is RESTATED else []),
               "ReplayBuffer": [ddpg_agent.ReplayBuffer], "OUNoise": [ddpg_agent.OUNoise],
               "NStepReturns": [ddpg_agent.NStepReturns]}
    out: dict[str, list[str | None]] = {}
    for owner, (_, names) in parts.items():
        for name in names:
            label = f"{owner}.{name}"
            found = [fingerprint(cls.__dict__[name], label) if name in cls.__dict__ else None for cls in classes[owner]]
            out[label] = sorted(set(found) - {None}) + ([None] if name not in ddpg_agent.Agent.__dict__ and owner == "Agent"
                                                       else [])
    return out


def plain_fields() -> list[str]:
    import ddpg_agent

    return [f.name for f in fields(ddpg_agent.DDPGConfig)]


def read_record(path: Path = RECORD) -> dict[str, Any]:
    return json.loads(path.read_text())


def _hooked(agent: Any) -> str | None:
    """A module hook runs code around a forward or backward pass that the fast learner would skip."""
    from torch.nn.modules import module as torch_module

    if any(getattr(torch_module, name, None) for name in ("_global_forward_hooks", "_global_forward_pre_hooks",
                                                            "_global_backward_hooks", "_global_backward_pre_hooks")):
        return "a global module hook"
    for net in ("actor_local", "critic_local", "actor_target", "critic_target"):
        for path, m in getattr(agent, net).named_modules():
            if m._forward_hooks or m._forward_pre_hooks or m._backward_hooks or getattr(m, "_backward_pre_hooks", None):
                return f"a hook on {net}{'.' + path if path else ''}"
    return None


def differences(agent: Any, record: dict[str, Any] | None = None, key: str = "code") -> str | None:
    """None when every part the fast learner restates (``key`` "code": the update; "decisions": acting
    and storing, ``DECIDES``) is the code it was written from; else what differs, in a few words.
    Never raises: anything unexpected is a difference."""
    try:
        record = read_record() if record is None else record
        known = set(record["config_fields"])
        import ddpg_agent
        from ddpg.variants.config import VariantConfig  # its fields are off here: fast_cpu.supports rules variants out

        variant_fields = {f.name for f in fields(VariantConfig)} - {f.name for f in fields(ddpg_agent.DDPGConfig)}
        unknown = [f.name for f in fields(agent.config) if f.name not in known and f.name not in variant_fields]
        if unknown:
            return f"the setting{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}, which {RESTATER[key]} does not know"
        got = fingerprints(agent, PARTS[key])
        edited = [label for label, allowed in record[key].items() if got.get(label) not in allowed]
        if edited:
            where = sorted({FILES[label.split(".")[0]] for label in edited})
            return (f"your code of {', '.join(edited[:4])}{', ...' if len(edited) > 4 else ''} "
                    f"(in {' or '.join(where)}, a subclass or a patch) is not what {RESTATER[key]} restates")
        return _hooked(agent)
    except Differs as exc:
        return str(exc)
    except Exception as exc:  # the check must never stop a run: anything odd runs the readable learner
        return f"the admission check could not read the agent ({type(exc).__name__}: {exc})"


def write_record(path: Path = RECORD) -> dict[str, Any]:
    """Record the code on disk as the code the fast learner restates (after checking fast_cpu.py does)."""
    record = {"what": "fingerprints of the code ddpg/backends/fast_cpu.py (code) and fast_steps.py (decisions) restate "
                      "(python -m ddpg.backends.admission --write)",
              "code": source_fingerprints(), "decisions": source_fingerprints(DECIDES), "config_fields": plain_fields()}
    path.write_text(json.dumps(record, indent=1) + "\n")
    return record


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description="Compare (or, with --write, remake) the record of the code the fast "
                                     "learner restates with ddpg_agent.py and model.py on disk.")
    parser.add_argument("--write", action="store_true", help="remake the record from the code on disk: only once "
                        "ddpg/backends/fast_cpu.py restates that code")
    args = parser.parse_args(argv)
    if args.write:
        write_record()
        print(f"Wrote {RECORD}")
        return 0
    record = read_record()
    edited = [f"{label} ({key})" for key, parts in PARTS.items() for label, now in source_fingerprints(parts).items()
              if record.get(key, {}).get(label) != now]
    fields_now = plain_fields()
    if edited or fields_now != record["config_fields"]:
        print("The fast learner's record differs from the code on disk: " + ", ".join(edited or ["DDPGConfig's fields"]))
        return 1
    print("The fast learner's record matches ddpg_agent.py and model.py")
    return 0

if __name__ == "__main__":
    raise SystemExit(main())
