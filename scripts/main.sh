#!/usr/bin/env bash
# README command 1: installs what the main job needs and runs it. Fashion-MNIST comes from
# Debian's dataset-fashion-mnist (/usr/share/datasets/fashion-mnist); where apt cannot install it
# the recipe says so and trains on its built-in data instead. Extra arguments go to the recipe
# (e.g. ./scripts/main.sh --epochs 3).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! [ -d /usr/share/datasets/fashion-mnist ] && command -v apt-get >/dev/null; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq && $SUDO apt-get install -y -qq dataset-fashion-mnist ||
    echo "main.sh: could not install Debian's dataset-fashion-mnist; the recipe will use its built-in data" >&2
fi
python -m pip install -q --upgrade pip
python -m pip install -q .
spiral-model-zoo run fashion_mlp -- "$@"
