# The two commands: `make up` (run everything on this machine) and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: bootstrap system-deps replay-bundle up test lint typecheck unit bench clean chaos-stops chaos hostile-full \
	compose-images compose-test

bootstrap: $(STAMP) system-deps replay-bundle

$(STAMP): pyproject.toml
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	@touch $(STAMP)

system-deps:
	@sh deploy/install-system-deps.sh

# ReplayWeb.page for "View as it was", at its pinned version: fetched from the npm registry
# once, its sha512 checked, into .cache/ (git-ignored); nothing to do when it is there
replay-bundle: $(STAMP)
	@$(PY) -m services.web.replay.bundle >/dev/null

up: bootstrap
	$(VENV)/bin/dla up

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: $(STAMP)
	$(VENV)/bin/mypy shared services plugins bench tests testkit

# The suite on TEST_WORKERS pytest-xdist workers, whole files to a worker (a module's shared
# stack or server starts once). Most tests wait on services, so 3 workers keep 2 cores busy
# (~17 min for 1,837 tests on 2 cores on 2026-11-29; 2 workers are slower, 4 contend more
# with the tests that time a stop). Measured: docs/architecture.md, "Tests".
# pytest's exit code 5 (no test collected) fails the target as any other non-zero code.
# Bytecode is cached even where PYTHONDONTWRITEBYTECODE is set (as on this machine): without
# it every worker compiles and assertion-rewrites all the test modules again (36 against 13
# CPU-s to collect the suite), and every service, hook host and `dla` run compiles the
# project's modules at start (a file's CPU 15-30 % more). docs/architecture.md, "Tests".
TEST_WORKERS ?= 3
test: bootstrap lint typecheck
	env -u PYTHONDONTWRITEBYTECODE $(VENV)/bin/pytest -q -n $(TEST_WORKERS) --dist loadfile -m "not compose"

# The compose stack for real: podman and debootstrap from Debian's packages, the images built
# here (deploy/containers/build-local.sh: no registry needed), then docker-compose.yml started,
# a post archived through the containers, two archivers, `compose down` (docs/operations.md).
compose-images: bootstrap
	sh deploy/containers/build-local.sh

compose-test: compose-images
	$(VENV)/bin/pytest -q -m compose tests/deploy/test_compose_stack.py

unit: $(STAMP)
	$(VENV)/bin/pytest -q -m "not integration"

# 50 stops of `dla up` at random moments, sent three ways (docs/reliability.md).
chaos-stops: bootstrap
	DLA_STOP_RUNS=50 DLA_STOP_REPORT=/tmp/dla-stops.json $(VENV)/bin/pytest -q -s \
		--timeout 3600 tests/supervisor/test_stops.py::test_dla_up_stops_every_time

# Fault runs with the issue's counts (figures into docs/reliability.md), the longer fuzzing,
# then the 50 stops; under 30 minutes on 2 cores. `make test` runs the same files small.
CHAOS_FIGURES ?= /tmp/dla-chaos-figures.jsonl
chaos: bootstrap
	rm -f $(CHAOS_FIGURES)
	CHAOS=1 CHAOS_FIGURES=$(CHAOS_FIGURES) CHAOS_LINKS=200 CHAOS_KILLS=20 \
		CHAOS_S3_DOWN_S=60 CHAOS_S3_LINKS=40 CHAOS_CLUSTER_LINKS=60 FUZZ_SECONDS=60 \
		SCHEMA_EXAMPLES=200 \
		$(VENV)/bin/pytest -q -s --timeout 1800 tests/chaos tests/hostile
	$(PY) -m tests.chaos.report $(CHAOS_FIGURES)
	$(MAKE) chaos-stops

# The hostile-page tests at full size (a million-node DOM; `make test` uses 100 000).
hostile-full: bootstrap
	DLA_HOSTILE_FULL=1 $(VENV)/bin/pytest -q tests/archiver/test_hostile.py

bench: bootstrap
	$(PY) bench/run_all.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
