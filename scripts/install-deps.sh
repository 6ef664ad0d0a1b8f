#!/usr/bin/env bash
# Installs the Debian packages gpumux needs to build, test and benchmark, only those missing
# (Debian bookworm). Safe to run repeatedly; does nothing when everything is present.
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config libboost-random-dev libboost-program-options-dev
  libeigen3-dev             # gpumux calibrate: non-negative least squares
  libhdf5-dev zlib1g-dev hdf5-tools pybind11-dev python3-dev python3-pybind11 libgtest-dev
  libgmock-dev libbenchmark-dev libyaml-cpp-dev nlohmann-json3-dev libfmt-dev libsqlite3-dev
  python3-numpy python3-h5py python3-pandas python3-matplotlib python3-scipy python3-pytest
  python3-tqdm python3-yaml python3-dask python3-distributed python3-nbclient python3-nbconvert
  python3-ipykernel jupyter-nbconvert python3-simpy3 clang-format
  clang libclang-rt-14-dev  # scripts/ci-sanitize.sh: ASan + UBSan + libFuzzer (clang 14)
  ccache                    # the Makefile and setup.py compile through it when present
  python3-wheel-whl         # wheel-*.whl: offline `pip install` from a venv without wheel
  pyflakes3 mypy            # .ci/run: the Python lint and type checks
  mkdocs                    # make docs: docs/ as a site (tests/cli/test_docs_links.py)
  chromium                  # tests/cli/test_plot_report.py: report --html at 1400 px, headless
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "installing: ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
"${sudo_cmd[@]}" apt-get update -q
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
