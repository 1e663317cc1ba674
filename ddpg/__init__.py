"""Everything around the course's agent, for training it well and reading its runs.

The algorithm to learn DDPG from is ``ddpg_agent.py`` (with ``model.py``) at the top level of the
repository; this package holds the rest. Its own top level is what a reader of one training step
needs (the loop, the agent it drives, the task, when it is solved, what stops it); everything else
is a package grouped by its job. From the top down, each part imports only parts below it:

    reporting/      what training and a trained agent show: the callbacks around the loop
                    (printing, metrics, saving), the value maps, playing a trained policy
    agents.py       where agents come from: a new one for training, or one rebuilt from a run
                    or from checkpoint files
    backends/       how an agent's updates run: its own code, on a second CPU thread, or
                    captured as a CUDA graph (proven equal to it per update)
    command_line/   what the commands share before anything trains: the options, their
                    argument types, one run's resolved configuration, the device, the
                    reproducible mode, the memory a setting needs
    loop.py         the training loop: episodes of the agent in the environment, with callbacks
    run_folder/     the run folder: each file written and read by one module, written whole or
                    not at all, one writer at a time, taken back up by --resume
    variants/       DDPG variants, each a small piece beside the readable agent, and the checks
                    of every setting
    solved.py       what "solved" means, and the statistics of runs that may not solve
    tasks.py        each task's settings, and the one way to open a run's environment (the
                    only module that opens a scene)
    signals.py      Ctrl-C, SIGTERM and SIGHUP stop training cleanly

Importing it runs nothing: no environment is registered and no GL backend chosen until asked.
"""
