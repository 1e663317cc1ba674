"""What training and a trained agent show.

    callbacks       what happens around the training loop, one callback a concern: the progress
                    bar and a line per episode, the metrics, and the run folder kept whole
                    whatever stops the run
    metrics         the learning metrics of each episode (metrics.csv, TensorBoard): why an agent
                    does not learn, where its scores only say that it does not
    value_maps      what the critic and the actor believe over a 2-D observation space, drawn
                    while training (train.py --animate)
    playing         a trained policy played: the agent from a run folder or checkpoint files, and
                    its greedy episode (watch.py's videos, evaluate.py's scores)

The package hands nothing on: each name is imported from its module.
"""
