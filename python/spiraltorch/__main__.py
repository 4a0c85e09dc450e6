"""``python -m spiraltorch --cmake-dir``: where C++ users find SpiralTorchConfig.cmake.

    cmake -S app -B build -DSpiralTorch_DIR="$(python -m spiraltorch --cmake-dir)"
"""

from __future__ import annotations

import argparse
import os
import sys

from . import _sdk


def main(argv: list[str] | None = None) -> int:
    """Prints the requested SDK path; returns the exit status (1 when there is no SDK)."""
    parser = argparse.ArgumentParser(prog="python -m spiraltorch", description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--cmake-dir", action="store_true", help="the directory of SpiralTorchConfig.cmake")
    group.add_argument("--cmake-prefix-path", action="store_true", help="a CMAKE_PREFIX_PATH entry that finds it")
    group.add_argument("--include-dir", action="store_true", help="the C++ headers")
    args = parser.parse_args(argv)
    try:
        if args.cmake_dir:
            print(_sdk.cmake_dir())
        elif args.cmake_prefix_path:
            _sdk.cmake_dir()  # the same check
            print(_sdk.cmake_prefix_path)
        else:
            print(os.path.normpath(_sdk.include_dir()))
    except FileNotFoundError as exc:
        print(f"spiraltorch: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
