# Two commands a new user needs (README): `make run` and `make test`.
# Both bootstrap their own virtualenv in .venv; nothing else must be installed
# beyond Python 3.11, Java 17 (for Spark) and a C compiler.

PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
# pyenv keeps each interpreter behind its own version and its shims answer only for the
# selected ones: put every installed 3.10-3.13 on PATH so tox finds the whole matrix.
PYENV_BINS := $(shell command -v pyenv >/dev/null 2>&1 && for v in $$(pyenv versions --bare | grep -E '^3\.1[0-3]\.[0-9]+$$'); do printf '%s/versions/%s/bin:' "$$(pyenv root)" "$$v"; done)
export PATH := $(PYENV_BINS)$(PATH)

.PHONY: run test fuzz bench papers venv clean avr

$(BIN)/mote: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet ".[test,spark]"
	touch $@

venv: $(BIN)/mote

# The main job: emulated network -> gateway -> Spark.
run: $(BIN)/mote
	$(BIN)/mote run

# The whole test matrix (tox.ini): py310-py313, lint, c (ASan/UBSan), fuzz (short), spark,
# avr, plot (the pictures, docs/make_pictures.py). tox-uv makes the envs and installs into
# them with uv: pip took 30-45 s of each env's set-up, five minutes of the 20 `make test` has.
test:
	$(PYTHON) -m venv $(VENV)-tox
	$(VENV)-tox/bin/pip install --quiet "tox>=4.20" "tox-uv>=1.11"
	$(VENV)-tox/bin/tox run-parallel --parallel 2 --parallel-no-spinner

# Long runs that `make test` holds to a small budget: TinySQL grammar fuzzing (10,000
# mutated queries, each must compile or be refused with a position: it prints the count of
# tracebacks, which must be 0), the differential test (random queries on random networks
# against the emulator's ground truth; counterexamples go to
# tests/data/differential_regressions.json), then FUZZ_SECONDS each of the firmware's
# libFuzzer harness (clang, ASan/UBSan; clang is apt-installed if missing, skipped if it
# cannot be) and the gateway deframer/decoder fuzzer (atheris, else hypothesis); findings
# stop the run and leave their input in build/fuzz (tests/fuzz/).
FUZZ_SECONDS ?= 60
fuzz: $(BIN)/mote
	$(BIN)/python tests/fuzz_tinysql.py --cases 10000
	$(BIN)/python tests/fuzz_differential.py --cases 1000
	$(BIN)/python tests/fuzz_differential.py --cases 300 --lossy
	FUZZ_BUILD=build/fuzz tests/fuzz/run_firmware.sh $(FUZZ_SECONDS)
	$(BIN)/pip install --quiet atheris || echo "fuzz: atheris not installable, the gateway fuzzer uses hypothesis"
	mkdir -p build/fuzz/corpus-gateway
	$(BIN)/python tests/fuzz/gateway_fuzz.py --seconds $(FUZZ_SECONDS) -artifact_prefix=build/fuzz/ \
		build/fuzz/corpus-gateway tests/fuzz/corpus/gateway

# The mote images (issue 12): build/avr/{mica2,mica2dot}.{elf,hex} from firmware/avr with
# avr-gcc (cmake/avr-gcc.cmake), then their flash and RAM use. tests/avr/ensure_avr.sh
# apt-installs the toolchain when it is missing.
AVR_BUILD := build/avr/cmake
avr:
	cmake -S firmware/avr -B $(AVR_BUILD) -DCMAKE_TOOLCHAIN_FILE=$(CURDIR)/cmake/avr-gcc.cmake \
		-DCMAKE_BUILD_TYPE=MinSizeRel >/dev/null
	cmake --build $(AVR_BUILD) -j 2
	@for p in mica2 mica2dot; do \
		avr-size -A build/avr/$$p.elf | awk -v p=$$p \
			'$$1==".text"{t=$$2} $$1==".data"{d=$$2} $$1==".bss"{b=$$2} \
			END{printf "%-9s flash %6d B (text %d + data %d)   RAM %5d B (data %d + bss %d)\n", \
			p, t+d, t, d, d+b, d, b}'; \
	done

bench: $(BIN)/mote
	$(BIN)/python bench/emulator.py
	$(BIN)/python bench/emulate_e2e.py
	$(BIN)/python bench/gateway_decode.py
	$(BIN)/python bench/gateway_rows.py
	$(BIN)/python bench/spark_ingest.py
	$(BIN)/python bench/spark_latency.py
	$(BIN)/python bench/issue10.py --seeds 30
	$(BIN)/python bench/beside.py --seeds 30
	$(BIN)/python bench/loops.py --out bench/results/loops.json

# The TinyDB paper's experiments rerun (docs/papers.md; bench/results/<name>.json), each
# through `mote sweep`'s points on local Spark.
papers: $(BIN)/mote
	$(BIN)/python bench/papers/snooping.py
	$(BIN)/python bench/papers/slotting.py
	$(BIN)/python bench/papers/rate_falloff.py
	$(BIN)/python bench/papers/deployment.py
	$(BIN)/python bench/papers/lifetime.py
	$(BIN)/python bench/papers/table5.py
	$(BIN)/python bench/papers/plan_energy.py

clean:
	rm -rf $(VENV) $(VENV)-tox .tox build *.egg-info
