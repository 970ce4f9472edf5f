# One entry point for people and CI. Only python3 (3.11+) and pip are assumed;
# the first target that needs them creates .venv and installs costpress into it,
# with the fastest build of python3's version on the machine (scripts/pick-python.py
# says why), or the one PYTHON names. An existing .venv keeps its Python: making one over it
# with another Python would leave it half of each.
ifdef PYTHON
NEW_VENV = $(PYTHON) -m venv $(VENV)
else
NEW_VENV = python=$$(python3 scripts/pick-python.py || echo python3) && $$python -m venv $(VENV)
endif
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: site test check lint fix clean docs bench bench-large

$(STAMP): pyproject.toml
	test -x $(BIN)/python || { $(NEW_VENV); }
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	$(BIN)/python -m compileall -q generator  # an editable install is not compiled; builds would compile it each run
	touch $(STAMP)

site: $(STAMP)  ## build content/ into site/
	$(BIN)/costpress build

test: $(STAMP)  ## run the test suite, one process per core (a module's tests stay together, the longest modules first)
	$(BIN)/python -m pytest -n auto --dist loadfile --no-loadscope-reorder

check: $(STAMP)  ## fail when site/ is not what content/ builds
	$(BIN)/costpress build --check --strict

lint: $(STAMP)
	$(BIN)/ruff check generator tests benchmarks scripts
	$(BIN)/ruff format --check generator tests benchmarks scripts

fix: $(STAMP)
	$(BIN)/ruff check --fix generator tests benchmarks scripts
	$(BIN)/ruff format generator tests benchmarks scripts

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .site.build-state .site.page-cache .site.parse-cache .site.row-cache .site.listing-cache-*

docs: $(STAMP)  ## regenerate docs/commands.md from --help
	$(BIN)/python -m generator.clidoc

bench: $(STAMP)  ## build-speed figures for 100, 1,000 and 10,000 pages (prints, asserts nothing)
	$(BIN)/python benchmarks/run.py

bench-large: $(STAMP)  ## the same, with 100,000 pages added (several minutes, a few GB of disk)
	$(BIN)/python benchmarks/run.py --large
