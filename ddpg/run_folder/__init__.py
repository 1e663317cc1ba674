"""The run folder: what a training run leaves behind, each file written and read by one module.

    checkpoint_actor.pth    the actor's state_dict  } plain state_dicts, loadable exactly as in
    checkpoint_critic.pth   the critic's state_dict } the course: net.load_state_dict(torch.load(f))
                            (checkpoints)
    run.json                config (the architecture included), seed, versions, commit, command,
                            solved-at episode, wall time (record_file; its fields:
                            record.RunRecord)
    scores.csv              one row per episode, one column per agent (score_files)
    metrics.csv             one row per episode: scores, critic/actor loss, mean Q, exploration
                            scale, updates and their rate, times (score_files; columns:
                            ddpg.reporting.metrics.COLUMNS)
    scores.png              the reward plot (score_files, drawn by plots)
    training_state.pt       everything needed to continue the run exactly (train.py --resume):
                            all four networks, the optimisers, the noise, the random generators,
                            the episode counter and the scores so far (run_state; what an
                            agent saves of itself: agent_state)
    replay_buffer.pt        the replay buffer's filled part (only with train.py --save-buffer)
    value_maps/, value_map.png, value_maps.mp4 (or .gif)
                            train.py --animate: Q(s, mu(s)) and mu(s) over a 2-D observation
                            space every few episodes, the last ones, and their animation
                            (ddpg.reporting.value_maps)

Every file goes through ``atomic.atomic_write`` (a temporary file in the same folder, then a
rename), so a reader never sees half a file, whatever stops the writer; the crash tests stop it
at the points of ``faults``. The folder as a whole (can ``--out`` hold a run, clearing one, can
it be resumed, a complete save) is ``folder``; the files' names are ``file_names``, the folder's
lock ``run_lock``, the run as it stood after its last complete episode ``snapshot``.

Each name is imported from the module that owns it (``from ddpg.run_folder.record_file import
read_record``): this package hands nothing on, so importing one module loads no other (the file
names load no PyTorch, for the commands' ``--help``).
"""
