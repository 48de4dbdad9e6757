#!/usr/bin/env bash
# The Python wheel and the TypeScript package as a user gets them: the wheel built with maturin
# from the release build (`cargo build --release -p apistend`, reused when fresh), installed into
# a fresh virtual environment, and both suites run with no cargo on PATH — the binary comes from
# the wheel. Called by .ci/run; runs as is on a developer's machine (python3, node >= 20, npm).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=target/packages
mkdir -p "$work"

cargo build --release -p apistend --locked

# maturin, pinned, in a venv of its own (the build tool, not the user's environment).
if [ ! -x "$work/build-venv/bin/maturin" ] || ! "$work/build-venv/bin/maturin" --version | grep -q '^maturin 1.16.0$'; then
  rm -rf "$work/build-venv"
  python3 -m venv "$work/build-venv"
  "$work/build-venv/bin/pip" install --quiet --disable-pip-version-check maturin==1.16.0
fi
rm -rf "$work/wheels"
# python/pyproject.toml names the crate; cargo finds this workspace's target/release fresh.
(cd python && "$root/$work/build-venv/bin/maturin" build --release --locked --out "$root/$work/wheels")
wheel=$(ls "$work"/wheels/apistend-*.whl)
echo "wheel: $wheel ($(du -h "$wheel" | cut -f1))"

# A fresh environment with the wheel; PATH without cargo, rustc or ~/.cargo/bin.
rm -rf "$work/venv"
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check "$wheel" -r python/tests/requirements.txt
clean_path="$root/$work/venv/bin"
for dir in /usr/local/bin /usr/bin /bin; do clean_path="$clean_path:$dir"; done
node_dir=$(dirname "$(command -v node)")
clean_path="$clean_path:$node_dir"
if PATH="$clean_path" command -v cargo >/dev/null 2>&1; then
  echo "cargo is still on the test PATH ($clean_path)" >&2
  exit 1
fi
env -u APISTEND_URL -u APISTEND_BIN PATH="$clean_path" apistend --version
env -u APISTEND_URL -u APISTEND_BIN PATH="$clean_path" \
  "$work/venv/bin/python" -m pytest -p no:cacheprovider -q python/tests

# The TypeScript package: its dev tools from the lock, then node's runner and Vitest.
(
  cd js
  npm ci --no-audit --no-fund --loglevel=error
  env -u APISTEND_URL -u APISTEND_BIN PATH="$clean_path" npm test
)
