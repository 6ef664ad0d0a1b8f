# The two commands of the README:
#   make run    install what is missing, configure, build, run scenarios/quickstart.yaml
#   make test   install what is missing, configure, build, run every test (ctest + pytest)
# Other targets: make test-fast (every test but the end-to-end ones labelled slow: install,
# notebook, validation, Dask, plot/report), make build (everything: tests, benchmarks, Python
# module), make gpumux (the binary and the Python module), make docs (docs/ as a site in
# build/site), make bench, make clean.
BUILD ?= build
JOBS ?= 2
PYTHON := /usr/bin/python3
SCENARIO ?= scenarios/quickstart.yaml

.PHONY: deps configure build gpumux run test test-fast docs bench clean

deps:
	@scripts/install-deps.sh

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE=$(PYTHON) \
	  $(if $(shell command -v ccache),-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

configure: deps $(BUILD)/build.ninja

build: configure
	cmake --build $(BUILD) -j$(JOBS)

# `make run` builds only what its commands run: the gpumux binary and the Python module that
# `gpumux report --html` and `gpumux plot` draw with (not the tests or benchmarks).
gpumux: configure
	cmake --build $(BUILD) -j$(JOBS) --target gpumux _gpumux

run: gpumux
	$(BUILD)/gpumux run $(SCENARIO) -o quickstart.h5

# ctest runs the GoogleTest programs and one entry per pytest file side by side (JOBS at once).
test: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

test-fast: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS) --label-exclude slow

# docs/ as a browsable site (mkdocs.yml; open $(BUILD)/site/index.html); --strict: a broken
# link or a page missing from the nav fails the build.
docs: deps
	$(PYTHON) -m mkdocs build --strict --site-dir $(BUILD)/site

# Every figure of docs/performance.md's speed and memory tables, one command (about 16 min on 2 cores
# before bench_scaling.py's one-queue column and bench_fleet.py's 10 min and 1 h fleets, which
# roughly double the scaling runs and add the fleet's; bench_memory.py --long adds the 6 h and
# 24 h runs, ~15 min more; the fleet's whole day is `bench_fleet.py --lengths 24h --workers 2`).
bench: build
	$(BUILD)/bench/bench_engine --benchmark_min_time=0.5
	$(BUILD)/bench/bench_result_io
	$(PYTHON) bench/compare_simpy.py --gpumux $(BUILD)/gpumux
	$(PYTHON) bench/bench_scaling.py --gpumux $(BUILD)/gpumux --one-queue
	$(PYTHON) bench/bench_fleet.py --gpumux $(BUILD)/gpumux --lengths 10min,1h --output
	GPUMUX_BIN=$(BUILD)/gpumux $(PYTHON) bench/bench_memory.py
	GPUMUX_BIN=$(BUILD)/gpumux $(PYTHON) bench/bench_memory.py --trace

clean:
	rm -rf $(BUILD)
