#!/usr/bin/env bash
# The wheel as a user meets it: install dist/ssdlab-*.whl into a fresh virtual environment with no
# Rust toolchain on PATH, then run `ssdlab run` and the README's first Python example with it.
# Run after `make wheel` from a clone with ../shared beside it (`make wheel-check` does both).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
say() { echo "wheel-check: $*" >&2; }

shopt -s nullglob
wheels=(dist/ssdlab-*.whl)
if [ ${#wheels[@]} -ne 1 ]; then
  say "expected one wheel in dist/, found ${#wheels[@]} (make wheel builds it)"
  exit 1
fi
wheel=$root/${wheels[0]}
case $(basename "$wheel") in
  ssdlab-*-cp311-abi3-manylinux*_x86_64*.whl | ssdlab-*-cp311-abi3-manylinux*_aarch64*.whl) ;;
  *)
    say "$(basename "$wheel") is not an abi3 manylinux wheel"
    exit 1
    ;;
esac

# No cargo, rustc or rustup from here on: the wheel must install and run without them.
PATH=$(printf '%s' "$PATH" | tr ':' '\n' | grep -v -e cargo -e rustup | paste -sd: -)
export PATH
unset CARGO_HOME RUSTUP_HOME RUSTUP_TOOLCHAIN
for tool in cargo rustc rustup; do
  if command -v "$tool" >/dev/null; then
    say "$tool is still on PATH at $(command -v "$tool")"
    exit 1
  fi
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
say "installing $(basename "$wheel") into a fresh virtual environment"
python3 -m venv "$tmp/venv"
# Binary packages only: nothing may be compiled on the way.
"$tmp/venv/bin/pip" install --quiet --no-compile --only-binary :all: "$wheel"

# A folder with ../shared beside it, as in a clone, so that the README's relative paths hold;
# outside the clone, so that only the installed package can be imported.
mkdir "$tmp/work"
ln -s "$(cd ../shared && pwd)" "$tmp/shared"
cd "$tmp/work"
where=$("$tmp/venv/bin/python" -c 'import ssdlab; print(ssdlab.__file__)')
case $where in
  "$tmp/venv/"*) ;;
  *)
    say "ssdlab was imported from $where, not from the wheel"
    exit 1
    ;;
esac

say "ssdlab run"
"$tmp/venv/bin/ssdlab" run --set workload.kind=zipf --set buffer.bytes=8MiB --json out.json
"$tmp/venv/bin/python" -c 'import json; m = json.load(open("out.json"))["metrics"]; assert m["host.write_pages"] > 0, m'

say "the README's first Python example"
"$tmp/venv/bin/python" "$root/.ci/readme_example.py" "$root/README.md"
say "passed"
