"""What the commands (train.py, watch.py, evaluate.py, sweep.py) share before anything trains or plays.

    parsing         the argument types that turn a bad value into a one-line usage error, and which
                    options a command line gave
    options         train.py's options, each in the group that says what it is to a run
    run_config      the command line, the task and a resumed run's record resolved into one RunConfig
    device          --device resolved once, and what run.json says of it
    reproducible    --reproducible (the math libraries pinned to one code path) and the machine a
                    run records
    memory_need     the settings the machine cannot hold, refused before anything is allocated

The package hands nothing on: a command imports each name from its module, and ``options``,
``parsing`` and ``device`` load no PyTorch before ``--help`` is answered.
"""
