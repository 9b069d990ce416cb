# The two commands a new user needs: `make scenario-8-players` and `make test`.
# Both build the virtual environment first; nothing is assumed installed.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup sandbox-tool test lint scenario-8-players scenario-lan bench bench-ring bench-fishnet bench-reversi bench-notipping bench-capacity bench-fairness bench-stall bench-tournament bench-check bench-compare bench-hot \
	fishnet-study oldclients-sweep fuzz clean

# Our modules byte-compiled, each run (only what changed since): where
# PYTHONDONTWRITEBYTECODE is set, as on this machine, every process of a test,
# scenario or bench otherwise compiled them from source again (a ring peer
# started in 0.48 s, 0.26 s with them compiled).
setup: $(STAMP) sandbox-tool
	$(BIN)/python -m compileall -q ring services scenarios

# The box every tournament program runs in is bubblewrap (scenarios/sandbox), from the
# distribution: installed here when missing and we are root on a Debian-like system;
# elsewhere `ring tournament` says what is missing and how to go on.
sandbox-tool:
	@command -v bwrap >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null; }; } || \
		echo "make: no bubblewrap (install the bubblewrap package): tournaments will refuse to run unboxed"

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

lint: setup
	$(BIN)/ruff check .

# One worker more than the cores (pytest-xdist), each taking the next test as it
# frees up (worksteal): the suite is much waiting on real sockets, processes and
# exits, so a third worker on a 2-core machine fills the waits (4 min 12 s
# against 5 min 9 s with one a core, and over six serially).
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))
test: setup lint
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist worksteal

scenario-8-players: setup
	$(BIN)/ring scenario 8-players

# Needs root (network namespaces); builds a bridged LAN, plays one game found
# by mDNS across it, and removes every namespace again however it ends.
scenario-lan: setup
	$(BIN)/ring scenario lan

bench: setup
	$(BIN)/python -m scenarios.bench

# One bench, a revision against the working tree, alternated: make bench-compare REV=bf07d4b
# [BENCH="--part fishnet"] [ROUNDS=5] (the revision installed in a venv of its own);
# MODULE=scenarios.bench.fishnet_saturation SERVER_ONLY=1 BENCH="--games 500": our load,
# each side's server.
bench-compare: setup
	$(BIN)/python -m scenarios.bench.compare $(REV) --rounds $(or $(ROUNDS),3) \
		$(if $(MODULE),--module $(MODULE)) $(if $(SERVER_ONLY),--server-only) \
		-- $(or $(BENCH),$(if $(MODULE),,--part ring))

# The hot paths' micro-benchmarks (pyperf); compare two files with pyperf compare_to.
bench-hot: setup
	$(BIN)/python -m scenarios.bench.hot_paths --quiet $(if $(OUT),-o $(OUT))

bench-ring: setup
	$(BIN)/python -m scenarios.bench --part ring

bench-fishnet: setup
	$(BIN)/python -m scenarios.bench --part fishnet

# The Reversi ladder through the real server, deep's clock, the rules' speed (~5 min).
bench-reversi: setup
	$(BIN)/python -m scenarios.bench --part reversi

# The No Tipping solver against random and greedy through the real server, and its clock.
bench-notipping: setup
	$(BIN)/python -m scenarios.bench --part notipping

# One ring serve with all four services under a class's load from other
# processes, each load alone then all at once, at full speed and at a
# class's pace, with and without hostile clients (~5 min).
bench-capacity: setup
	$(BIN)/python -m scenarios.bench --part capacity

# What each hostile kind costs a class's games at a class's pace, each kind
# against the same round's honest phase, rounds rotated (~13 min).
bench-fairness: setup
	$(BIN)/python -m scenarios.bench --part fairness

# The Old Maid table's status replies, every 10 ms, alone and while smarx
# searches for always-pass FishNet clients in the same ring serve (~1 min).
bench-stall: setup
	$(BIN)/python -m scenarios.bench --part stall

# ring tournament's cost beyond the games: the same deep-vs-deep Reversi games
# as bare server-and-bots and as a tournament, alternately (~3 min).
bench-tournament: setup
	$(BIN)/python -m scenarios.bench --part tournament

# How strong ring check is: our own clients' protocol code mutated one change at
# a time (up to 80 mutants a game), each game's cases run against every mutant,
# and each survivor played against the unmutated client in seeded games through
# the real server: killed, equivalent, or a gap the cases miss (~20 min).
bench-check: setup
	$(BIN)/python -m scenarios.bench --part check

# Mixed Old Maid rings of 2-8 players with one 2013-style client: each old
# habit alone and all together, two seeds a size, on an idle machine and then
# with every core kept busy by other processes (~25 min); docs/measurements/interop.md.
SWEEP_SEEDS ?= 2
oldclients-sweep: setup
	$(BIN)/python tests/interop/student_rings.py --seeds $(SWEEP_SEEDS) --load both

# Each built-in FishNet player beside itself with one idea taken away,
# in-process (~90 s): why the ladder's order holds (docs/protocols/fishnet.md).
fishnet-study: setup
	$(BIN)/python -m scenarios.bench.fishnet_study

# Hostile byte streams through real sockets against every service and a peer,
# beside an honest game in each: FUZZ_EXAMPLES rounds (~1-3 s each).
FUZZ_EXAMPLES ?= 300
fuzz: setup
	FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(BIN)/python -m pytest -q -s tests/scenarios/bench/test_fuzz.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache
	find ring services scenarios tests -name __pycache__ -prune -exec rm -rf {} +
