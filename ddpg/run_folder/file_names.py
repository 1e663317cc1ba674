"""The names of a run folder's files, which the command lines name in their help too. Here,
importing nothing, so that a script's ``--help`` is answered before PyTorch loads; which module
writes and reads each file is in ``ddpg.run_folder``'s docstring (one owner per file)."""

ACTOR_FILE = "checkpoint_actor.pth"
CRITIC_FILE = "checkpoint_critic.pth"
RECORD_FILE = "run.json"
SCORES_FILE = "scores.csv"
METRICS_FILE = "metrics.csv"
PLOT_FILE = "scores.png"
STATE_FILE = "training_state.pt"
BUFFER_FILE = "replay_buffer.pt"
# The buffer of a save under way, until its training_state.pt is in place: replacing
# replay_buffer.pt first would leave, if the process died in between, the old state with a
# buffer that is not its own.
NEXT_BUFFER_FILE = "replay_buffer.next.pt"
VALUE_MAPS_DIR = "value_maps"  # train.py --animate: one PNG per drawn episode...
VALUE_MAP_FILE = "value_map.png"  # ...the final picture...
ANIMATION_STEM = "value_maps"  # ...and the animation, value_maps.mp4 (or .gif without ffmpeg)
ANIMATION_SUFFIXES = (".mp4", ".gif")
TEMPORARY_MARK = ".tmp"  # atomic_write's temporary files: .<name>.tmp<pid>
RUN_FILES = (ACTOR_FILE, CRITIC_FILE, RECORD_FILE, SCORES_FILE, METRICS_FILE, PLOT_FILE, STATE_FILE, BUFFER_FILE,
             NEXT_BUFFER_FILE,
             VALUE_MAP_FILE, *(ANIMATION_STEM + suffix for suffix in ANIMATION_SUFFIXES))

__all__ = ["ACTOR_FILE", "ANIMATION_STEM", "ANIMATION_SUFFIXES", "BUFFER_FILE", "CRITIC_FILE", "METRICS_FILE",
           "NEXT_BUFFER_FILE", "PLOT_FILE", "RECORD_FILE", "RUN_FILES", "SCORES_FILE", "STATE_FILE", "TEMPORARY_MARK",
           "VALUE_MAPS_DIR", "VALUE_MAP_FILE"]
