"""The environment kit: what every re-created Unity scene shares.

Each scene (`reacher/`, `crawler/`) holds only its own task; what any scene behind the
unityagents 0.4 interface needs lives here, once, so the two stay the same where the original's
client sees them the same:

- `envkit.brain`: the interface's data classes (`BrainParameters`, `BrainInfo`);
- `envkit.checks`: the constructor's and `step`'s checks, one message for one mistake in any scene;
- `envkit.display`, `envkit.mujoco_gl`: the headless GL choice before MuJoCo loads, the offscreen
  buffer and the renderer `render` draws with;
- `envkit.viewer`: the live window `reset(train_mode=False)` opens on a desktop;
- `envkit.gym`: the Gymnasium registration and what the scenes' Gymnasium wrappers share;
- `envkit.gym_as_unity`: the reverse, any Gymnasium task behind the unityagents interface;
- `envkit.exports`: a package's lazy exports, so importing a scene loads no MuJoCo;
- `envkit.cpus`: the CPU count the scenes' threads (and the learner's) size by;
- `envkit.unity`: the stand-in for the Unity binaries, serving any scene to the genuine client.

It imports no scene: the layers (tests/test_layers.py) put it below them.
"""
