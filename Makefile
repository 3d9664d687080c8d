# Two commands a new user needs (README): `make run` and `make test`.
# Both bootstrap their own virtualenv in .venv; nothing else must be installed
# beyond Python 3.11, Java 17 (for Spark) and a C compiler.

PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
# pyenv keeps each interpreter behind its own version; make them all visible to tox.
PYENV_ALL := $(shell command -v pyenv >/dev/null 2>&1 && pyenv versions --bare | grep -E '^3\.1[0-3]\.' | sort -t. -k2,2n -r | tr '\n' ':' | sed 's/:$$//')
export PYENV_VERSION := $(if $(PYENV_ALL),$(PYENV_ALL),$(PYENV_VERSION))

.PHONY: run test venv clean

$(BIN)/mote: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet ".[test,spark]"
	touch $@

venv: $(BIN)/mote

# The main job: emulated network -> gateway -> Spark.
run: $(BIN)/mote
	$(BIN)/mote run

# The whole test matrix (tox.ini): py310-py313, lint, c (ASan/UBSan), spark.
test:
	$(PYTHON) -m venv $(VENV)-tox
	$(VENV)-tox/bin/pip install --quiet "tox>=4.20"
	$(VENV)-tox/bin/tox run-parallel --parallel 2 --parallel-no-spinner

clean:
	rm -rf $(VENV) $(VENV)-tox .tox build *.egg-info
