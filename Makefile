# The two commands a new user needs: `make scenario-8-players` and `make test`.
# Both build the virtual environment first; nothing is assumed installed.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup test lint scenario-8-players scenario-lan bench fishnet-study clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

lint: setup
	$(BIN)/ruff check .

test: setup lint
	$(BIN)/python -m pytest

scenario-8-players: setup
	$(BIN)/ring scenario 8-players

# Needs root (network namespaces); builds a bridged LAN, plays one game found
# by mDNS across it, and removes every namespace again however it ends.
scenario-lan: setup
	$(BIN)/ring scenario lan

bench: setup
	$(BIN)/python -m scenarios.bench

# The built-in FishNet players beside candidate rules, in-process (~20 s): the
# figures behind the ladder's open questions (docs/protocols/fishnet.md).
fishnet-study: setup
	$(BIN)/python -m scenarios.fishnet_study

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache
