# Two commands for a fresh machine: `make run` (train to solved, save checkpoints and
# the reward plot) and `make test` (every test, the notebook included). Both create
# .venv and install what is missing first.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
SWEEP_STAMP := $(VENV)/.installed-sweep
# Rendering headless: Mesa's EGL (llvmpipe) from Debian; Xvfb lets a test open the live viewer.
GL_PACKAGES := libegl1 libegl-mesa0 libgl1-mesa-dri libgbm1 xvfb
RUN_DIR ?= runs/latest

.PHONY: setup sweep-setup run test unity lint docs bench bench-gym bench-ablation bench-gpu gl clean

setup: $(STAMP) gl

$(STAMP): requirements.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	$(PY) -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (reacher)" > /dev/null
	touch $(STAMP)

# Ray Tune, optional: sweep.py and benchmarks/bench_ablation.py (the tests cover sweep.py too).
sweep-setup: $(SWEEP_STAMP)

$(SWEEP_STAMP): $(STAMP) requirements-sweep.txt
	$(PY) -m pip install --quiet -r requirements-sweep.txt
	touch $(SWEEP_STAMP)

# Installs the Debian GL libraries if any is missing (as root, or through sudo).
gl:
	@missing=$$(for p in $(GL_PACKAGES); do dpkg -s $$p > /dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		if ! command -v apt-get > /dev/null; then \
			echo "Rendering needs EGL or OSMesa; install the equivalent of: $$missing"; \
		else \
			sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
			echo "Installing $$missing for headless rendering"; \
			$$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq $$missing > /dev/null; \
		fi; \
	fi

# Each `make run` replaces the run in $(RUN_DIR) (train.py says so); pick another with RUN_DIR=...
run: setup
	$(PY) train.py --out $(RUN_DIR) --force

# The genuine unityagents 0.4.0 client in its own venv, for old notebooks (see README).
unity: setup
	sh envkit/unity/setup.sh $(PYTHON)

# PYTEST_ARGS: more pytest options (benchmarks/bench_tests.py times the suite through it).
test: setup sweep-setup unity
	$(PY) -m ruff check .
	REACHER_QUICK=1 $(PY) -m pytest tests --nbval-lax --nbval-current-env Continuous_Control.ipynb MountainCarContinuous.ipynb Crawler.ipynb \
		-n auto --dist loadfile $(PYTEST_ARGS)

bench: setup
	$(PY) -m benchmarks.bench_env
	$(PY) -m benchmarks.bench_train

# This project's DDPG against Stable-Baselines3's DDPG and TD3 (zoo hyperparameters), 5 seeds each.
bench-gym: setup
	$(PY) -m pip install --quiet -r requirements-bench.txt
	$(PY) -m benchmarks.bench_gym

# The default, each variant, the course's baseline and single changes, 5 seeds each (hours on 2 cores).
bench-ablation: setup sweep-setup
	$(PY) -m benchmarks.bench_ablation

# On a machine with a CUDA GPU: each device's costs, the default trained on both (bench_gpu.py).
bench-gpu: setup
	$(PY) -m benchmarks.bench_gpu --tests

# Every table and figure in README.md, Report.md, docs/ and benchmarks/results/README.md, regenerated
# from the result files (benchmarks/catalogue.py, through cog); the tests check the pages match.
docs: $(STAMP)
	$(PY) -m benchmarks.catalogue

lint: setup
	$(PY) -m ruff check .

clean:
	rm -rf $(VENV) .venv-unity .pytest_cache .ruff_cache
