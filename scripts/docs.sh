#!/usr/bin/env bash
# Builds the documentation site (docs/ -> docs/_build/html) with warnings as errors, then opens it
# in headless Chromium: screenshots of the index and of an API page go to docs/_build/screenshots/,
# and the search page must find `Hypergrad`. Installs what it needs when missing: the Python
# packages of docs/requirements.txt, Debian's doxygen (the C++ reference) and chromium.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v doxygen >/dev/null || need_apt+=(doxygen)
command -v chromium >/dev/null || need_apt+=(chromium)
if [ ${#need_apt[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq && $SUDO apt-get install -y -qq "${need_apt[@]}"
fi
python -m pip install -q -r docs/requirements.txt

out=docs/_build/html
shots=docs/_build/screenshots
start=$(date +%s)
python -m sphinx -b html -W --keep-going -q -j auto docs "$out"
echo "docs: built $out in $(( $(date +%s) - start )) s"

# Chromium refuses to run as root without --no-sandbox; a private profile keeps runs apart, and a
# time limit keeps a hung browser from holding up the test command.
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
chrome() {
  timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars \
    --user-data-dir="$profile" "$@" 2>/dev/null
}
site="file://$(pwd)/$out"
mkdir -p "$shots"
rm -f "$shots"/*.png
chrome --window-size=1280,900 --screenshot="$shots/index.png" "$site/index.html" >/dev/null
chrome --window-size=1280,900 --screenshot="$shots/api_zspace.png" "$site/api/spiraltorch.zspace.html" >/dev/null
for png in "$shots/index.png" "$shots/api_zspace.png"; do
  # A PNG of a rendered page, not an error page: the signature, and more than a blank canvas's bytes.
  if [ "$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')" != 89504e470d0a1a0a ] || [ "$(stat -c %s "$png")" -lt 20000 ]; then
    echo "docs: $png is not a screenshot of a rendered page" >&2
    exit 1
  fi
  echo "docs: screenshot $png ($(stat -c %s "$png") bytes)"
done

# The search page runs its JavaScript (virtual time lets it finish) and lists its results.
dom=$(chrome --virtual-time-budget=20000 --dump-dom "$site/search.html?q=Hypergrad")
if ! grep -q 'href="[^"]*#spiraltorch\.Hypergrad"' <<<"$dom"; then
  echo "docs: the search page did not find Hypergrad (search.html?q=Hypergrad)" >&2
  exit 1
fi
echo "docs: search.html?q=Hypergrad lists $(grep -o 'href="[^"]*Hypergrad[^"]*"' <<<"$dom" | sort -u | wc -l) results for Hypergrad"
echo "docs: open $out/index.html"
