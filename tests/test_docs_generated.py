"""The figures in README.md, Report.md, docs/ and the results index are what `make docs` makes of
the result files (benchmarks/catalogue.py): a re-run benchmark, or a hand-edited figure, fails
here until the pages are regenerated. What generation cannot say is checked below too."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from benchmarks import catalogue, figures

ROOT = Path(__file__).resolve().parent.parent


def test_the_committed_pages_are_what_make_docs_generates(capsys):
    status = catalogue.run(check=True)
    assert status == 0, "the pages are not what the result files give:\n" + capsys.readouterr().out


def _mutated_results(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, change, raw=None) -> str:
    """The catalogue reading a copy of benchmarks/results/ in which ``name``'s record was changed
    (``change`` edits its JSON, ``raw`` its text); the file's path as the docs name it."""
    copy = tmp_path / "results"
    shutil.copytree(catalogue.RESULTS, copy)
    target = next(copy.rglob(name))
    if change:
        data = json.loads(target.read_text())
        change(data)
        target.write_text(json.dumps(data))
    if raw:
        target.write_text(raw(target.read_text()))
    monkeypatch.setattr(catalogue, "RESULTS", copy)
    return "benchmarks/results/" + target.relative_to(copy).as_posix()


def test_a_changed_number_in_a_result_fails_the_check(tmp_path, monkeypatch, capsys):
    """Seed 4 of today's 20-seed default solved at 100; were its file to say 103, the Report's
    table and the README's would no longer be what the results give."""
    def later(data: dict) -> None:
        seed = next(s for s in data["seeds"] if s["seed"] == 4)
        assert seed["solved_at"] == 100
        seed["solved_at"] = 103

    _mutated_results(tmp_path, monkeypatch, "bench_train_readable_20seeds_0-9.json", later)
    assert next(s for s in figures.twenty("today") if s["seed"] == 4)["solved_at"] == 103
    assert catalogue.run(check=True) != 0
    out = capsys.readouterr().out
    assert "Report.md" in out and "| 4 | 103 |" in out


def _no_solved_at(data: dict) -> None:
    del next(s for s in data["seeds"] if s["seed"] == 4)["solved_at"]


@pytest.mark.parametrize("change, raw, wrong", [
    (None, lambda t: t.replace("\"learner\": \"fast\",", "\"learner\": \"fast\"", 1), "JSON"),  # a comma removed
    (_no_solved_at, None, "solved_at"),  # a key the pages read, missing
])
def test_a_broken_result_stops_make_docs_with_one_line_naming_it(tmp_path, monkeypatch, capsys, change, raw, wrong):
    """A result file that does not parse, or lacks a key a page reads, is named in one line with
    what is wrong (no traceback), by `make docs` and by its check alike, and the status is not 0."""
    name = _mutated_results(tmp_path, monkeypatch, "bench_train_gamma095_20seeds_2_5_7_10.json", change, raw)
    for check in (True, False):
        pages = {p: (ROOT / p).read_text() for p in catalogue.pages()}
        try:
            status = catalogue.run(check=check)
        finally:  # a run that regenerated pages before it met the file leaves them as they were
            for p, content in pages.items():
                (ROOT / p).write_text(content)
        lines = capsys.readouterr().out.strip().splitlines()
        assert status != 0 and len(lines) == 1, lines
        assert name in lines[0] and wrong in lines[0] and "Traceback" not in lines[0], lines


def test_every_result_is_in_the_index_and_the_folder_holds_only_studies():
    top = sorted(p.name for p in catalogue.RESULTS.iterdir() if not p.is_dir())
    assert top == ["README.md"], "benchmarks/results/ holds the index and one folder per study, nothing else"
    listed = {(s["folder"], r["name"]) for s in catalogue.catalogue() for r in s["results"]}
    listed |= {(s["folder"], w) for s in catalogue.catalogue() for r in s["results"] for w in r["with"]}
    for study in catalogue.studies():
        for path in study.rglob("*"):
            if path.is_file() and path.name != catalogue.MANIFEST:
                assert (study.name, path.relative_to(study).as_posix()) in listed, path
    for study in catalogue.catalogue():
        for r in study["results"]:
            assert r["status"] in ("current", "superseded"), r
            if r["status"] == "superseded":  # by a result that exists
                assert r["superseded_by"] and list(catalogue.RESULTS.glob(r["superseded_by"])), r


def test_the_committed_checkpoints_are_the_ones_the_readme_run_produced():
    """The committed run is seed 0 of today's 20-seed benchmark, made on the same machine with the
    defaults: the checkpoints the README describes are that run's."""
    from ddpg.variants import parse_config
    from ddpg_agent import DDPGConfig

    run = json.loads((ROOT / "checkpoint_run.json").read_text())
    seed_0 = next(s for s in figures.twenty("today") if s["seed"] == 0)
    assert run["seed"] == 0 and run["solved_at_episode"] == seed_0["solved_at"]
    assert run["machine"]["cpu"] == catalogue.load(figures.TWENTY["today"][0])["machine"]["cpu"]
    assert parse_config(run["config"]) == figures.with_built_widths(DDPGConfig())
    assert run["command"].startswith("python train.py --out runs/latest")
    scores = (ROOT / "checkpoint_scores.csv").read_text().splitlines()
    assert len(scores) == 1 + run["episodes_run"]


def test_the_links_in_the_pages_resolve():
    pages = [ROOT / p for p in catalogue.pages()]
    for page in pages:
        for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", page.read_text()):
            if not target.startswith("http"):
                assert (page.parent / target).exists(), f"{page.relative_to(ROOT)} links {target}, which does not exist"


def test_a_new_setting_gets_its_row_and_meaning_in_the_report(monkeypatch, capsys):
    """The Report's hyperparameter table reads each setting's meaning from its field's metadata: a
    field added to DDPGConfig shows up with its defaults and its doc, no cell left empty."""
    import dataclasses

    import ddpg_agent

    field = ("reward_clip", float, ddpg_agent.setting(2.5, ">=0", "rewards clipped to +- this"))
    monkeypatch.setattr(ddpg_agent, "DDPGConfig", dataclasses.make_dataclass("DDPGConfig", [field],
                                                                             bases=(ddpg_agent.DDPGConfig,)))
    rows = figures.setting_rows()
    assert {"name": "reward_clip", "doc": "rewards clipped to +- this", "twenty": 2.5, "one": 2.5} in rows
    assert all(str(v).strip() for r in rows for v in r.values()), rows
    assert catalogue.run(check=True) != 0  # the committed Report lacks the row: the page is stale
    assert "| `reward_clip` | 2.5 | 2.5 | rewards clipped to +- this |" in capsys.readouterr().out


def test_the_learner_and_variant_tables_come_from_their_registries() -> None:
    """docs/training.md's learners and docs/variants.md's variants are made from the registries that drive the
    code (make docs); each learner train.py takes has its row, each registered variant its row."""
    from benchmarks.figures import learner_rows, variant_rows
    from ddpg.command_line.options import LEARNERS
    from ddpg.variants import registry

    assert {r.learner for r in learner_rows()} == set(LEARNERS) - {"auto"}
    assert len(variant_rows()) == len(registry.VARIANTS)
    pages = {p: (ROOT / p).read_text() for p in ("docs/training.md", "docs/variants.md")}
    assert all(f"| `{r.learner}` |" in pages["docs/training.md"] for r in learner_rows())
    assert all(f"| `{r.config}` |" in pages["docs/variants.md"] for r in variant_rows())
