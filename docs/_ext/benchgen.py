"""Pages for the raw benchmark results: docs/bench/results/<name>.md includes bench/results/<name>.md.

The pages sit at the same relative path as the files they include, so the README's links
(``bench/results/cpu_models.md``) and the result files' links to each other resolve on the
site as they do on GitHub. Files that are not Markdown (profiles) are copied beside them.
"""

from __future__ import annotations

import pathlib
import shutil
from typing import List

ROOT = pathlib.Path(__file__).resolve().parents[2]
RESULTS = ROOT / "bench" / "results"
PAGES = ROOT / "docs" / "bench" / "results"


def write(pages: pathlib.Path = PAGES) -> List[str]:
    pages.mkdir(parents=True, exist_ok=True)
    wanted = set()
    for src in sorted(RESULTS.iterdir()):
        if src.suffix == ".md":
            text = f"```{{include}} ../../../bench/results/{src.name}\n```\n"
            first = next((line for line in src.read_text().splitlines() if line.startswith("#")), "")
            if not first.startswith("# "):
                # The page needs a title of its own when the file starts below H1 (or has no heading).
                text = f"# `bench/results/{src.name}`\n\n" + text
        elif src.suffix == ".txt":
            text = None
        else:
            continue  # raw JSON: the Markdown tables carry the same figures
        dst = pages / src.name
        wanted.add(src.name)
        if text is None:
            if not dst.exists() or dst.read_bytes() != src.read_bytes():
                shutil.copyfile(src, dst)
        elif not dst.exists() or dst.read_text() != text:
            dst.write_text(text)
    for old in pages.iterdir():
        if old.name not in wanted:
            old.unlink()
    return sorted(wanted)
