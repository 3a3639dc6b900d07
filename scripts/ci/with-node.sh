#!/usr/bin/env bash
# scripts/ci/with-node.sh VERSION COMMAND...: runs COMMAND with Node VERSION first on PATH, so CI can test another
# LTS than the machine's. The binary comes from the npm registry (the node-linux-<arch> package: `npm pack` gives a
# tarball whose package/bin/node is the official build) and is cached in ~/.cache/ratchet/node-VERSION.
set -euo pipefail
version=$1
shift
case "$(uname -m)" in
  x86_64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) echo "no node-linux package for $(uname -m)" >&2; exit 1 ;;
esac
cache="${XDG_CACHE_HOME:-$HOME/.cache}/ratchet/node-$version"
if [ ! -x "$cache/bin/node" ]; then
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  tarball=$(cd "$work" && npm pack --silent "node-linux-$arch@$version")
  tar -xzf "$work/$tarball" -C "$work" package/bin/node
  mkdir -p "$cache/bin"
  # Moved in whole: a run killed midway leaves no half-written binary for the next one to trust.
  mv "$work/package/bin/node" "$cache/bin/node.partial"
  mv "$cache/bin/node.partial" "$cache/bin/node"
  rm -rf "$work"
  trap - EXIT
fi
PATH="$cache/bin:$PATH" exec "$@"
