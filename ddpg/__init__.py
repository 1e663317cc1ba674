"""Everything around the course's agent, for training it well and reading its runs.

The algorithm to learn DDPG from is ``ddpg_agent.py`` (with ``model.py``) at the top level;
this package holds the rest: the update back-ends (``backends``: by hand on a CPU, proven equal
to it per update, or captured as a CUDA graph) and the device (``device``), the
variants (``variants``), the tasks and their environments (``tasks``), the training loop
(``loop``), the run folder (``run_folder``) and the pinned mode (``reproducible``). Importing it
runs nothing: no environment is registered and no GL backend chosen until asked.
"""
