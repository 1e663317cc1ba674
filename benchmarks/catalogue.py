"""What `make docs` runs: the pages (README.md, Report.md, docs/*.md, benchmarks/results/README.md)
keep their sentences, and each that quotes a result is a cog comment looking its values up, with
the generated text below it:

    <!-- [[[cog r = load("make_test.json"); out(f"`make test` took **{r.pytest_s:.0f} s**.") ]]] -->

`make docs` (``python -m benchmarks.catalogue``) rewrites the text below every comment; ``--check``
fails, showing the difference, when a page is not what the result files give (tests/test_docs_generated.py).
The comments' vocabulary: ``load``/``text``/``rows`` (a result by name), ``table`` (records as a
Markdown table), the formatting helpers here and benchmarks/figures.py's values derived from several
records. A result that does not parse, or lacks a key a page reads, is one line naming it (ResultError).
Each study folder's manifest, ``study.toml``, gives its title, question and results: ``index()``.
"""

from __future__ import annotations

import csv
import functools
import json
import os
import re
import statistics
import string
import sys
import tomllib
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from cogapp.cogapp import CogError

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
# The pages whose blocks `make docs` regenerates, in this order.
PAGES = ["README.md", "Report.md", "docs/*.md", "benchmarks/results/README.md"]
MANIFEST = "study.toml"


class ResultError(CogError):
    """A result file the docs cannot be made from. A CogError, so cog passes it up unwrapped and
    `make docs` prints its one line rather than a traceback of the page's code."""


class Record(dict):
    """A JSON object of a result file. A page reads its keys as attributes (``run.seed``); a key it
    lacks is a ResultError naming the file, since a page quoting it would otherwise say nothing useful."""

    def __init__(self, data: Mapping[str, Any] = (), source: str = "a computed value") -> None:
        super().__init__(data)
        self._source = source

    def __missing__(self, key: Any) -> Any:
        raise ResultError(f"{self._source}: no key {key!r} (its keys: {', '.join(map(str, self)) or 'none'})")

    def __getattr__(self, key: str) -> Any:
        if key.startswith("_"):
            raise AttributeError(key)
        return self[key]


# --------------------------------------------------------------------------- reading results

@functools.cache
def _files(results: Path) -> tuple[tuple[str, Path], ...]:
    """Every file under ``results``, listed once per ``run`` (the pages look up some 800 names)."""
    return tuple((p.as_posix(), p) for p in results.rglob("*") if p.is_file())


def path(name: str) -> Path:
    """A result file by its name (or its tail, e.g. ``gym_probes/ip_p3_s0.json``), in whichever
    study folder holds it; a name that is not exactly one file is an error."""
    found = [p for posix, p in _files(RESULTS) if posix.endswith("/" + name)]
    if len(found) != 1:  # a file written or removed since the listing: list again before saying so
        _files.cache_clear()
        found = [p for posix, p in _files(RESULTS) if posix.endswith("/" + name)]
    if len(found) != 1:
        raise ResultError(f"benchmarks/results/ holds {len(found)} files named {name}")
    return found[0]


def shown(file: Path) -> str:
    """A file's path as the docs name it, from the repository root (RESULTS may be a copy)."""
    for top, named in ((RESULTS, Path("benchmarks/results")), (ROOT, Path())):
        if Path(file).is_relative_to(top):
            return (named / Path(file).relative_to(top)).as_posix()
    return str(file)


def rel(name: str) -> str:
    """The path of a result file from the repository root."""
    return shown(path(name))


def read_json(file: Path) -> Any:
    """A JSON file's objects as Records; a file that does not parse is a ResultError naming it."""
    source = shown(file)
    try:
        return json.loads(Path(file).read_text(), object_hook=lambda d: Record(d, source))
    except json.JSONDecodeError as e:
        raise ResultError(f"{source}: not valid JSON ({e.msg} at line {e.lineno}, column {e.colno})") from None


def load(name: str) -> Any:
    """A result's JSON record, by its file name."""
    return read_json(path(name))


def text(name: str) -> str:
    return path(name).read_text()


def rows(name: str) -> list[Record]:
    """A CSV result's rows (a file under the repository root by its path, else a result by name)."""
    file = ROOT / name if (ROOT / name).is_file() else path(name)
    with open(file) as f:
        return [Record(r, shown(file)) for r in csv.DictReader(f)]


def seeds(*names: str) -> list[Record]:
    """The seeds of one or more bench_train files, in seed order."""
    return sorted((s for name in names for s in load(name).seeds), key=lambda s: s.seed)


def glob(pattern: str) -> list[str]:
    """The result files matching ``study/pattern``, as ``study/name`` (none is an error)."""
    if found := sorted(p.relative_to(RESULTS).as_posix() for p in RESULTS.glob(pattern.strip())):
        return found
    raise ResultError(f"benchmarks/results/ holds no result {pattern.strip()}")


def committed_run() -> Record:
    return read_json(ROOT / "checkpoint_run.json")


# --------------------------------------------------------------------------- formatting

def ep(value: float | None) -> str:
    """A solved-at episode, or 'unsolved'."""
    return "unsolved" if value is None else f"{value:g}"


def num(value: float | None, digits: int = 0) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def listing(values: Iterable[Any], last: str = "and") -> str:
    """'a, b and c'."""
    values = [str(v) for v in values]
    return values[0] if len(values) == 1 else ", ".join(values[:-1]) + f" {last} {values[-1]}"


def span(values: Iterable[float], form: str = "{:.1f}", unit: str = "") -> str:
    """'low-high' of some values ('low to high' when low is negative)."""
    values = sorted(values)
    low, high = form.format(values[0]), form.format(values[-1])
    if low == high:
        return f"{low}{unit}"
    return f"{low}{' to ' if values[0] < 0 else '-'}{high}{unit}"


median, mean = statistics.median, statistics.fmean


def short(commit: str | None) -> str:
    """A commit as the docs name it: seven digits, marked when the tree had edits."""
    if not commit:
        return "-"
    return commit.removesuffix("-dirty")[:7] + (" (uncommitted edits)" if commit.endswith("-dirty") else "")


def files(*patterns: str) -> str:
    """'`benchmarks/results/a`, `benchmarks/results/b`': the files a figure stands on."""
    return ", ".join(f"`benchmarks/results/{p}`" for p in patterns)


class _Cells(string.Formatter):
    """``str.format`` for table cells: None is '-', and ``!e`` writes an episode ('unsolved' for None)."""

    def convert_field(self, value: Any, conversion: str | None) -> Any:
        return ep(value) if conversion == "e" else super().convert_field(value, conversion)

    def format_field(self, value: Any, format_spec: str) -> str:
        return "-" if value is None else format(value, format_spec)


_CELLS = _Cells()


def table(columns: Mapping[str, str | Callable[[Any], Any]] | Iterable[str], records: Iterable[Any]) -> str:
    """The one table helper: a Markdown table of any records. ``columns`` maps each header to its
    cell, a ``str.format`` template over a record (``"{wall_s:.1f} s"``) or a function of it; a
    record that is a list or tuple is its cells already (a median row, say)."""
    columns = columns if isinstance(columns, Mapping) else dict.fromkeys(columns, "")
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for r in records:
        cells = r if isinstance(r, list | tuple) else [
            cell(r) if callable(cell) else _CELLS.vformat(cell, (), r) for cell in columns.values()]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines)


def out(generated: str) -> None:
    """Write generated text into the page cog is making (a page's comment calls this)."""
    import cog

    cog.outl(generated.rstrip("\n"))


# --------------------------------------------------------------------------- the results index

def manifest(study: Path) -> dict[str, Any]:
    try:
        return tomllib.loads((study / MANIFEST).read_text())
    except tomllib.TOMLDecodeError as e:
        raise ResultError(f"{shown(study / MANIFEST)}: not valid TOML ({e})") from None


def studies() -> list[Path]:
    return sorted(p for p in RESULTS.iterdir() if p.is_dir())


def _machine(data: Mapping[str, Any]) -> str | None:
    gpu, machine = data.get("gpu"), data.get("machine")
    if isinstance(gpu, dict) and gpu.get("name"):
        return gpu["name"] + (f", {machine['cpu']} x {machine['cpu_count']}" if isinstance(machine, dict) else "")
    if isinstance(machine, dict):
        return f"{machine.get('cpu', '?')} x {machine.get('cpu_count', '?')}"
    return f"{data['cpu_count']} CPUs" if data.get("cpu_count") else None


def own_record(file: Path) -> dict[str, str | None]:
    """What a JSON result says about itself: command, commit, machine."""
    data = read_json(file) if file.suffix == ".json" else None
    if not isinstance(data, dict):
        return {"command": None, "commit": None, "machine": None}
    command = data.get("command") or data.get("commands")
    commit = data.get("git_commit")
    if commit is None and isinstance(data.get("runs"), list):
        commits = sorted({r["git_commit"] for r in data["runs"] if isinstance(r, dict) and r.get("git_commit")})
        commit = ", ".join(short(c) for c in commits) or None
    return {"command": "; ".join(command.values()) if isinstance(command, dict) else command,
            "commit": commit if commit is None or "," in commit else short(commit), "machine": _machine(data)}


def _twins(found: list[Path]) -> dict[Path, list[Path]]:
    """Each result and the files that belong to it: X.json's printout X.txt (or .log, .md, .png of
    the same stem) and its scores/metrics CSVs; a run folder (one holding run.json) is one result,
    its run.json, whatever else it holds; a file with no JSON beside it stands alone."""
    out_: dict[Path, list[Path]] = {}
    primary = {Path(str(f.with_suffix("")).removesuffix("_run")): f for f in found if f.suffix == ".json"}
    runs = {f.parent: f for f in found if f.name == "run.json"}
    for f in found:
        if f.parent in runs:  # a run folder's file: its run.json's (run.json itself stands alone)
            owner = None if runs[f.parent] == f else runs[f.parent]
        else:
            owner = None if f.suffix == ".json" else (primary.get(f.with_suffix("")) or primary.get(
                Path(re.sub(r"_(scores|metrics)$", "", str(f.with_suffix(""))))))
        out_.setdefault(owner or f, []).extend([f] if owner else [])
    return out_


def catalogue() -> list[dict[str, Any]]:
    """Every study with its results: the records the index is made of. A result file missing from
    its study's manifest, or a manifest entry with no file, is an error."""
    out_ = []
    for study in studies():
        spec = manifest(study)
        entries = spec.get("files", {})
        owned = _twins([p for p in sorted(study.rglob("*")) if p.is_file() and p.name != MANIFEST])
        names = {p.relative_to(study).as_posix() for p in owned}
        if names != set(entries):
            raise ResultError(f"{shown(study / MANIFEST)}: results without an entry {sorted(names - set(entries))}, "
                              f"entries without a result {sorted(set(entries) - names)}")
        results = []
        for primary in sorted(owned, key=lambda p: p.relative_to(study).as_posix()):
            name = primary.relative_to(study).as_posix()
            entry = entries[name]
            record = {k: v or entry.get(k) for k, v in own_record(primary).items()}
            results.append({"name": name, "with": [p.relative_to(study).as_posix() for p in owned[primary]],
                            "date": entry["date"], "status": entry.get("status", "current"),
                            "superseded_by": entry.get("superseded_by"), "note": entry.get("note"), **record})
        out_.append({"folder": study.name, **{k: v for k, v in spec.items() if k != "files"}, "results": results})
    return out_


def _cell(value: str | None) -> str:
    return "-" if not value else value.replace("|", "\\|").replace("\n", " ")


_SCRIPT = re.compile(r"(?:-m\s+benchmarks\.(\w+)|benchmarks/(\w+)\.py)")
_RESULT_PATH = re.compile(r"benchmarks/results/[\w./-]+")


def command_now(command: str | None, folder: str) -> str:
    """A result's recorded command as it reads today: a result file it wrote where the file lives
    now (results moved into their study's folder), and, where its script has since been removed,
    a line saying so rather than a path that is gone (the record keeps the command as it ran)."""
    if not command:
        return "-"
    gone = sorted({m[0] or m[1] for m in _SCRIPT.findall(command)} - {p.stem for p in (ROOT / "benchmarks").glob("*.py")})
    if gone:
        return f"its script ({', '.join(gone)}) has since been removed: the record keeps the command it ran"

    def moved(match: re.Match[str]) -> str:
        path = match.group(0)
        if (ROOT / path).exists() or not path.endswith((".json", ".txt", ".csv")):
            return path
        here = RESULTS / folder / Path(path).name
        found = [here] if here.exists() else sorted(RESULTS.rglob(Path(path).name))
        return found[0].relative_to(ROOT).as_posix() if len(found) == 1 else path

    return f"`{_cell(_RESULT_PATH.sub(moved, command))}`"


def index() -> str:
    """benchmarks/results/README.md: each study, what it measured, its results, which are current."""
    found = catalogue()
    parts = [table(["study", "what it measured", "results", "current"],
                   [[f"[{s['folder']}/](#{s['folder']})", s["title"], len(s["results"]),
                     sum(r["status"] == "current" for r in s["results"])] for s in found])]
    for s in found:
        quoted = ", ".join(f"[{q.replace('.md#', '.md, ')}](../../{q})" for q in s.get("quoted_in", []))
        parts.append(f"### {s['folder']}\n\n**{s['title']}.** {s['question']}" + (f" Quoted in {quoted}." if quoted else ""))
        parts.append(table({
            "result": lambda r: f"`{r['name']}`" + (" with " + ", ".join(f"`{Path(w).name}`" for w in r["with"])
                                                      if r["with"] else ""),
            "status": lambda r: _cell(r["status"] + (f" by `{r['superseded_by']}`" if r["superseded_by"] else "")
                                      + (f": {r['note']}" if r["note"] else "")),
            "command": lambda r, folder=s["folder"]: command_now(r["command"], folder),
            "commit": lambda r: _cell(r["commit"]), "date": "{date}", "machine": lambda r: _cell(r["machine"])},
            s["results"]))
    return "\n\n".join(parts)


# --------------------------------------------------------------------------- the command

def pages() -> list[str]:
    return [p.relative_to(ROOT).as_posix() for pattern in PAGES for p in sorted(ROOT.glob(pattern))]


def run(check: bool = False) -> int:
    """Regenerate every page (or, with check, report the pages that would change): 0 when all is
    well; a result the pages cannot be made from is one line naming it, and status 1."""
    from cogapp import Cog

    argv = ["cog", "--verbosity=1", "-I", str(ROOT), "-p", "from benchmarks.catalogue import *; from benchmarks.figures import *"]
    argv += ["--check", "--diff", "--check-fail-msg", "run `make docs` and commit the result"] if check else ["-r"]
    cwd = Path.cwd()
    _files.cache_clear()  # the results as they are now
    try:
        os.chdir(ROOT)
        Cog().callable_main(argv + pages())
        return 0
    except ResultError as e:
        print(f"make docs: {e}")
        return 1
    except CogError as e:  # a --check that failed, or a page's own code in error (cog's traceback)
        print(e)
        return 5
    finally:
        os.chdir(cwd)


if __name__ == "__main__":
    sys.exit(run(check="--check" in sys.argv[1:]))
