# Bootstrap needs only Python 3.11+ and make.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export PYTHONPATH := $(CURDIR):$(CURDIR)/protos

.PHONY: run test unit lock fuzz provider-fidelity protos check-protos bench bench-leads bench-webhooks bench-slow-provider bench-calls bench-messaging bench-signup bench-analytics bench-compliance bench-registry bench-runs bench-sdr bench-retention bench-export bench-export-archive bench-rolling-restart bench-all soak clean

$(STAMP): pyproject.toml
	$(PYTHON) -c 'import sys; sys.exit("Python 3.11+ is required") if sys.version_info < (3, 11) else None'
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,test]'
	touch $(STAMP)

run: $(STAMP)
	$(PY) -m deploy.local

test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports
	$(PY) -m deploy.audit
	$(PY) -m pytest -q --durations=30

# The fast tier alone: unit tests, no embedded stack (about 25 s).
unit: $(STAMP)
	$(PY) -m pytest -q tests/unit

# requirements.lock: every runtime dependency of pyproject.toml, transitive ones too, pinned with their hashes; the
# image installs it alone (pip --require-hashes). Run after changing the dependencies (ARGS=--upgrade: also move the
# transitive ones to their newest versions), then commit the lock; the suite fails while it disagrees with pyproject.
lock: $(STAMP)
	CUSTOM_COMPILE_COMMAND="make lock" $(VENV)/bin/pip-compile --quiet --generate-hashes --strip-extras \
		--no-emit-index-url --no-emit-find-links --output-file requirements.lock $(ARGS) pyproject.toml

# The schemathesis guard of `make test`, much deeper: FUZZ_EXAMPLES per operation, a random seed unless FUZZ_SEED.
fuzz: $(STAMP)
	FUZZ_EXAMPLES=$${FUZZ_EXAMPLES:-500} FUZZ_SEED=$${FUZZ_SEED:-} $(PY) -m pytest -q tests/guard/test_openapi_fuzz.py

# Our simulators and request checks against the providers' published documents in PROVIDER_SPECS (README: Provider
# fidelity); Stripe's come with the pinned stripe package. Fails on a difference not documented as deliberate.
provider-fidelity: $(STAMP)
	$(PY) -m providers.fidelity $(PROVIDER_SPECS)

protos: $(STAMP)
	$(PY) -m grpc_tools.protoc -Iprotos --python_out=protos --pyi_out=protos --grpc_python_out=protos protos/switchboard/v1/*.proto

bench: $(STAMP)
	$(PY) -m bench.gateway

bench-leads: $(STAMP)
	$(PY) -m bench.leads

bench-webhooks: $(STAMP)
	$(PY) -m bench.webhooks

bench-slow-provider: $(STAMP)
	$(PY) -m bench.slow_provider

bench-calls: $(STAMP)
	$(PY) -m bench.calls

bench-messaging: $(STAMP)
	$(PY) -m bench.messaging

bench-signup: $(STAMP)
	$(PY) -m bench.signup

bench-analytics: $(STAMP)
	$(PY) -m bench.analytics

bench-compliance: $(STAMP)
	$(PY) -m bench.compliance $(ARGS)

bench-registry: $(STAMP)
	$(PY) -m bench.registry $(ARGS)

bench-runs: $(STAMP)
	$(PY) -m bench.runs $(ARGS)

bench-sdr: $(STAMP)
	$(PY) -m bench.sdr $(ARGS)

# Every gateway and service replica of a REPLICAS=2 stack restarted one at a time under load: the failed requests
# (goal: none). Not in bench-all: a soak of several minutes.
bench-rolling-restart: $(STAMP)
	$(PY) -m bench.rolling_restart $(ARGS)

bench-retention: $(STAMP)
	$(PY) -m bench.retention $(ARGS)

bench-export-archive: $(STAMP)
	$(PY) -m bench.export_archive $(ARGS)
bench-export: $(STAMP)
	$(PY) -m bench.export.calls $(ARGS)

# Every bench above in sequence, then one table of their headlines (bench/results/latest.json); ARGS=--quick: a smoke
# run with lighter arguments.
bench-all: $(STAMP)
	$(PY) -m bench.all $(ARGS)

# The soak (bench/soak): a mixed load on the scaled-out stack under injected faults, then its ledger (README, The soak).
# SOAK_MINUTES (10), SOAK_SEED (random, printed), SOAK_PROFILE=short, SOAK_RESULTS (soak-results.json).
soak: $(STAMP)
	$(PY) -m bench.soak

clean:
	rm -rf $(VENV)
