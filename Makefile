# `make demo` and `make test` work on a fresh machine: the first run creates .venv and installs the whole stack
# (tools/misc/setup_env.sh, ~15-20 min with the mmcv compile); later runs reuse it.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.sapiens2-installed
PYTEST_ARGS ?=

.PHONY: install demo test test-fast test-deps web-deps teacher-deps lint clean-venv

install: $(STAMP)

$(STAMP): tools/misc/setup_env.sh setup.py $(filter-out requirements/web% requirements/teacher%,$(wildcard requirements/*.txt))
	VENV=$(VENV) bash tools/misc/setup_env.sh
	touch $@

# The web demo's venv (.venv-web: gradio apart from the stack's pillow) and the browser test's chromium (docs/install.md).
web-deps: $(STAMP)
	VENV=$(VENV) bash tools/misc/setup_web_env.sh

# The MediaPipe teacher's venv (.venv-teacher: mediapipe pins numpy<2 and protobuf<5), for making training labels
# (tools/dataset_converters/mediapipe_teacher.py); nothing else needs it.
teacher-deps:
	bash tools/misc/setup_teacher_env.sh

demo: $(STAMP)
	$(PY) tools/misc/demo.py

# The suite runs in TEST_WORKERS pytest processes (pytest-xdist), one torch thread each. Most tests keep one core
# busy, so two workers on two cores take 0.6 of the time (28 against 48 min measured). A test file stays in one worker
# (its module fixtures are built once), and files with slow tests start first (tests/conftest.py), so that no long
# test is left for the end.
TEST_WORKERS ?= 2
XDIST = -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

test: $(STAMP)
	OMP_NUM_THREADS=1 $(PY) -m pytest tests $(XDIST) $(PYTEST_ARGS)

# System packages some tests need (Debian/Ubuntu, as root): xvfb for the `--show` window test
# (tests/apis/test_video.py, which skips without xvfb-run outside CI and fails under CI=1).
test-deps:
	command -v xvfb-run >/dev/null || { apt-get update -q && apt-get install -y -q --no-install-recommends xvfb xauth; }

lint: $(STAMP)
	$(PY) -m ruff check .

test-fast: $(STAMP)
	OMP_NUM_THREADS=1 $(PY) -m pytest tests -m "not slow" $(XDIST) $(PYTEST_ARGS)

clean-venv:
	rm -rf $(VENV)
