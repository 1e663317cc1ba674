"""The run folder: what a training run leaves behind, each file written and read by one module.

    checkpoint_actor.pth    the actor's state_dict  } plain state_dicts, loadable exactly as in
    checkpoint_critic.pth   the critic's state_dict } the course: net.load_state_dict(torch.load(f))
                            (ddpg.checkpoints)
    run.json                config (the architecture included), seed, versions, commit, command,
                            solved-at episode, wall time (ddpg.record_file; its fields:
                            ddpg.record.RunRecord)
    scores.csv              one row per episode, one column per agent (ddpg.score_files)
    metrics.csv             one row per episode: scores, critic/actor loss, mean Q, exploration
                            scale, updates and their rate, times (columns: ddpg.metrics.COLUMNS)
    scores.png              the reward plot (ddpg.score_files, drawn by ddpg.plots)
    training_state.pt       everything needed to continue the run exactly (train.py --resume):
                            all four networks, the optimisers, the noise, the random generators,
                            the episode counter and the scores so far (ddpg.run_state)
    replay_buffer.pt        the replay buffer's filled part (only with train.py --save-buffer)
    value_maps/, value_map.png, value_maps.mp4 (or .gif)
                            train.py --animate: Q(s, mu(s)) and mu(s) over a 2-D observation
                            space every few episodes, the last ones, and their animation
                            (ddpg.value_maps)

Every file goes through ``ddpg.atomic.atomic_write`` (a temporary file in the same folder, then
a rename), so a reader never sees half a file, whatever stops the writer. The folder as a whole
(can ``--out`` hold a run, clearing one, can it be resumed, a complete save) is
``ddpg.run_folder``; the files' names are ``ddpg.run_files``, the folder's lock ``ddpg.run_lock``.

This module only hands those names on, as one place to reach the run folder from: the commands,
the notebooks, the benchmarks and the tests read and write runs through ``rundir.NAME``.
"""

from __future__ import annotations

from ddpg.atomic import SaveError, atomic_write, remove_leftovers, write_json
from ddpg.checkpoints import (
    LAYER_NORM_KEY,
    NetworkMismatch,
    load_checkpoints,
    read_state_dict,
    save_checkpoints,
    write_checkpoints,
)
from ddpg.record_file import environment_id, git_commit, read_record, versions
from ddpg.run_files import (
    ACTOR_FILE,
    ANIMATION_STEM,
    ANIMATION_SUFFIXES,
    BUFFER_FILE,
    CRITIC_FILE,
    METRICS_FILE,
    NEXT_BUFFER_FILE,
    PLOT_FILE,
    RECORD_FILE,
    RUN_FILES,
    SCORES_FILE,
    STATE_FILE,
    TEMPORARY_MARK,
    VALUE_MAP_FILE,
    VALUE_MAPS_DIR,
)
from ddpg.run_folder import check_out_dir, clear_run, resumable_record, write_run
from ddpg.run_state import STATE_PARTS, load_training_state, save_training_state, training_state, write_training_state
from ddpg.score_files import (
    CsvLines,
    episodes_written,
    plot_scores,
    read_metrics,
    read_scores,
    write_metrics,
    write_scores,
)

__all__ = [
    "ACTOR_FILE", "ANIMATION_STEM", "ANIMATION_SUFFIXES", "BUFFER_FILE", "CRITIC_FILE", "LAYER_NORM_KEY",
    "METRICS_FILE", "NEXT_BUFFER_FILE", "PLOT_FILE", "RECORD_FILE", "RUN_FILES", "SCORES_FILE", "STATE_FILE",
    "STATE_PARTS", "TEMPORARY_MARK", "VALUE_MAPS_DIR", "VALUE_MAP_FILE",
    "CsvLines", "NetworkMismatch", "SaveError",
    "atomic_write", "check_out_dir", "clear_run", "environment_id", "episodes_written", "git_commit",
    "load_checkpoints", "load_training_state", "plot_scores", "read_metrics", "read_record", "read_scores",
    "read_state_dict", "remove_leftovers", "resumable_record", "save_checkpoints", "save_training_state",
    "training_state", "versions", "write_checkpoints", "write_json", "write_metrics", "write_run", "write_scores",
    "write_training_state",
]
