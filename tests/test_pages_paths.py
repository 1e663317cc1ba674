"""The pages name only what exists: every repository path that README.md, Report.md, docs/ and the
results index name in code or in a link is in the repository, unless the page marks it as one to
create (``<!-- paths to create: .venv/ runs/ run.json -->``: a prefix or a file name, made by its
commands or by the reader).

A path counts as the repository's when it starts with one of the repository's top-level entries
(``benchmarks/...``, ``docs/...``, ``.venv/...``), is relative to the page (``../crawler/...``), or is
a bare file name with a code or data extension (``bench_env.py``, looked up anywhere in the tree:
the pages name results and modules by name within a section about their folder). Paths of other
projects (``Crawler/Scripts/CrawlerAgent.cs`` of ML-Agents) start with none of those and are not
checked. A name ending in ``_`` or ``.`` is a prefix the page completes (``bench_train_5seeds.``).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path, PurePosixPath

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted({ROOT / "README.md", ROOT / "Report.md", *(ROOT / "docs").glob("*.md"), ROOT / "benchmarks/results/README.md"})
_EXT = r"(?:py|md|json|csv|txt|ipynb|pth|pt|toml|sh|cpp|png|mp4|gif|npy|yml|yaml)"
_TOKEN = re.compile(r"(?<![\w./-])((?:\.{0,2}/)?(?:[\w.-]+/)*[\w.-]+\." + _EXT + r"|(?:\.{0,2}/)?(?:[\w.-]+/)+[\w.*-]*)(?![\w/])")
_CODE = re.compile(r"`([^`\n]+)`|\]\(([^)\s#]+)(?:#[^)\s]*)?\)")
_COG = re.compile(r"<!-- \[\[\[cog.*?\]\]\] -->", re.DOTALL)
_MADE = re.compile(r"<!--\s*paths to create:([^>]*)-->")


def _tree() -> tuple[set[str], set[str]]:
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    folders = {str(PurePosixPath(*PurePosixPath(f).parts[:i])) for f in files for i in range(1, len(PurePosixPath(f).parts))}
    return set(files), folders


FILES, FOLDERS = _tree()
TOP = {PurePosixPath(p).parts[0] for p in FILES | FOLDERS} | {".venv", ".venv-unity", "runs"}
NAMES = {PurePosixPath(p).name for p in FILES | FOLDERS}


def missing_paths(text: str, page: Path) -> set[str]:
    """The repository paths a page names that are neither in the tree nor marked as ones to create
    (a cog directive is code, not prose: what it generates follows it and is checked)."""
    made = {m for block in _MADE.findall(text) for m in block.split()}
    text = _COG.sub("", text)
    here = PurePosixPath(page.parent.relative_to(ROOT).as_posix())
    missing = set()
    for code, link in _CODE.findall(text):
        chunk = code or link
        if "://" in chunk:
            continue
        for token in _TOKEN.findall(chunk):
            if token.startswith("/") or "*" in token:
                continue
            relative = token.startswith(("./", "../"))
            path = PurePosixPath(str(here / token) if relative else token.removeprefix("./"))
            normal = PurePosixPath(*[p for p in _normalise(path.parts)]) if path.parts else path
            first = normal.parts[0] if normal.parts else ""
            bare = len(normal.parts) == 1 and "." in normal.name and not token.endswith("/")
            if not (relative or first in TOP or bare):
                continue  # another project's path
            name = str(normal)
            if _exists(name, bare) or any(name == m.rstrip("/") or name.startswith(m) for m in made):
                continue
            missing.add(token)
    return missing


def _normalise(parts: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    for part in parts:
        if part == "..":
            if out:
                out.pop()
        elif part != ".":
            out.append(part)
    return out


def _exists(name: str, bare: bool) -> bool:
    name = name.rstrip("/")
    if name in FILES or name in FOLDERS:
        return True
    if bare and PurePosixPath(name).name in NAMES:
        return True
    if name.endswith(("_", ".", "-")):  # a prefix the page completes
        return any(f.startswith(name) or f"/{name}" in f for f in FILES)
    return False


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_a_page_names_only_paths_that_exist(page: Path) -> None:
    missing = missing_paths(page.read_text(), page)
    assert not missing, f"{page.relative_to(ROOT)} names {sorted(missing)}, which are not in the repository"


@pytest.mark.parametrize("named", ["`benchmarks/bench_nothing.py`", "[the script](benchmarks/bench_nothing.py)",
                                   "`python -m benchmarks.bench_env --json benchmarks/results/nothing/x.json`",
                                   "`nothing_here_at_all.json`", "`ddpg/no_such_module.py`", "`docs/nothing.md`"])
def test_a_missing_path_is_caught(named: str) -> None:
    assert missing_paths(f"Run {named} first.\n", ROOT / "README.md")


@pytest.mark.parametrize("named", ["`benchmarks/bench_env.py`", "[docs](docs/crawler.md)", "`bench_env.py`",
                                   "`Crawler/Scripts/CrawlerAgent.cs`", "`https://github.com/x/y.py`",
                                   "`runs/latest/run.json`"])
def test_a_present_or_foreign_or_marked_path_passes(named: str) -> None:
    text = f"<!-- paths to create: runs/ -->\nSee {named}.\n"
    assert not missing_paths(text, ROOT / "README.md")


def test_a_path_relative_to_the_page_is_resolved_there() -> None:
    docs = ROOT / "docs" / "crawler.md"
    assert not missing_paths("[the scene](../crawler/scene.py)", docs)
    assert missing_paths("[the scene](../crawler/no_scene.py)", docs)
