"""benchmarks/bench_crawler_falls.py: a fall's cause read from the observation's contact flags."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.bench_crawler_falls import CAUSES, cause, main, touching
from crawler import observation as obs
from crawler.mjcf import PARTS


@pytest.mark.parametrize("part", range(len(PARTS)))
def test_each_parts_contact_flag_is_read_from_its_own_place(part) -> None:
    observations = np.random.default_rng(part).uniform(-1, 1, size=(3, obs.OBSERVATION_SIZE))
    for p in range(len(PARTS)):
        observations[:, obs.part_start(p) + obs.CONTACT] = 0.0
    observations[1, obs.part_start(part) + obs.CONTACT] = 1.0
    flags = touching(observations)
    assert flags.shape == (3, len(PARTS)) and flags.sum() == 1 and flags[1, part]


@pytest.mark.parametrize(("parts", "expected"), [(("body",), CAUSES[0]), (("body", "upper2"), CAUSES[0]),
                                                 (("upper0",), CAUSES[1]), (("upper3", "lower3"), CAUSES[1]),
                                                 (("lower1",), CAUSES[2]), ((), CAUSES[2])])
def test_the_body_comes_first_then_an_upper_leg(parts, expected) -> None:
    assert cause(np.array([name in parts for name in PARTS])) == expected


def test_a_folder_without_a_run_is_refused_by_name(tmp_path, capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["--run", str(tmp_path)])
    assert stop.value.code == 2 and "run.json" in capsys.readouterr().err
