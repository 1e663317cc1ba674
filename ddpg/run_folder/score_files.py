"""A run's scores: scores.csv (one row per episode, one column per agent), metrics.csv (one row
per episode: ``ddpg.reporting.metrics.COLUMNS``) and the reward plot scores.png, written and read here only.

Both CSVs only grow and are rewritten after every episode, so ``CsvLines`` keeps the rows
already formatted: a long run's save formats one new row, not all of them.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ddpg.run_folder import plots
from ddpg.run_folder.atomic import atomic_write
from ddpg.run_folder.file_names import METRICS_FILE, SCORES_FILE
from ddpg.solved import SOLVE_SCORE, SOLVE_WINDOW


class CsvLines:
    """The formatted lines of a CSV that only grows (scores.csv, metrics.csv), kept between
    writes, so rewriting it after every episode formats one new row, not all of them."""

    def __init__(self) -> None:
        self.header = ""
        self.lines: list[str] = []

    def text(self, header: list[str], rows: Any, format_row: Callable[[int, Any], list[Any]]) -> bytes:
        """The whole file; rows already formatted are reused when the header is unchanged."""
        head = _csv_line(header)
        if head != self.header or len(self.lines) > len(rows):
            self.header, self.lines = head, []
        for number in range(len(self.lines), len(rows)):
            self.lines.append(_csv_line(format_row(number, rows[number])))
        return (self.header + "".join(self.lines)).encode()


def _csv_line(values: list[Any]) -> str:
    text = io.StringIO()
    csv.writer(text, lineterminator="\n").writerow(values)
    return text.getvalue()


def write_scores(path: str | os.PathLike[str], scores: np.ndarray, lines: CsvLines | None = None) -> None:
    """scores.csv: a header, then one row per episode (episode number, then each agent);
    ``lines`` keeps the rows formatted by earlier writes of the same run."""
    data = (lines or CsvLines()).text(["episode"] + [f"agent_{i}" for i in range(scores.shape[1])], scores,
                                      lambda i, row: [i + 1] + [f"{v:.4f}" for v in row])
    atomic_write(path, lambda fh: fh.write(data))


def read_scores(path: str | os.PathLike[str]) -> np.ndarray:
    """The (episodes, agents) array of a scores.csv, or of the run folder holding one."""
    path = Path(path)
    if path.is_dir():
        path = path / SCORES_FILE
    table = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    return table[:, 1:]


def episodes_written(run: str | os.PathLike[str]) -> int:
    """Episodes whose scores the folder holds (scores.csv is rewritten after every episode)."""
    path = Path(run) / SCORES_FILE
    if not path.is_file():
        return 0
    with open(path) as fh:
        return max(0, sum(1 for line in fh if line.strip()) - 1)


def write_metrics(out_dir: str | os.PathLike[str], rows: list[dict[str, Any]], lines: CsvLines | None = None) -> None:
    """metrics.csv: one row per episode, the columns in the rows' key order (empty: unknown);
    ``lines`` keeps the rows formatted by earlier writes of the same run."""
    if not rows:
        return
    data = (lines or CsvLines()).text(list(rows[0]), rows, lambda _, row: [
        "" if v is None else (f"{v:.6g}" if isinstance(v, float) else v) for v in row.values()])
    atomic_write(Path(out_dir) / METRICS_FILE, lambda fh: fh.write(data))


def read_metrics(run: str | os.PathLike[str]) -> list[dict[str, float | None]]:
    """The rows of a run's metrics.csv as numbers (None where empty); [] when it has none."""
    path = Path(run) / METRICS_FILE
    if not path.is_file():
        return []
    with open(path, newline="") as fh:
        return [{k: (float(v) if v != "" else None) for k, v in row.items()} for row in csv.DictReader(fh)]


def plot_scores(scores: np.ndarray, path: str | os.PathLike[str], target: float | None = SOLVE_SCORE,
                window: int = SOLVE_WINDOW, unit: str = "episode") -> None:
    """The reward plot (``ddpg.run_folder.plots.scores_figure``) as a PNG, atomically."""
    import matplotlib.pyplot as plt

    fig = plots.scores_figure(scores, target, window, unit)
    atomic_write(path, lambda fh: fig.savefig(fh, format="png", dpi=100))
    plt.close(fig)


__all__ = ["CsvLines", "episodes_written", "plot_scores", "read_metrics", "read_scores", "write_metrics", "write_scores"]
