#!/usr/bin/env bash
# Prints the folder of a `node` binary of exactly the version given, installing it on first
# use, so that a run can put it first in PATH:
#
#   PATH="$(tools/node-bin.sh 22.23.3):$PATH" pnpm test
#
# The binary is the npm registry's `node` package (its preinstall script fetches
# node-<platform>-<arch> of the same version): no root, no version manager. It goes to a
# cache outside the workspace, ${SVC_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/svc-node}/<version>,
# and is reused while it answers `node --version` with that version. All npm output goes
# to stderr; stdout is the folder only. docs/decisions.md "Node versions" says why.
set -euo pipefail

version="${1:-}"
if [[ ! "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
  echo "usage: tools/node-bin.sh <exact Node.js version, e.g. 22.23.3>" >&2
  exit 2
fi

cache="${SVC_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/svc-node}"
dir="$cache/$version"
bin="$dir/node_modules/.bin"

answers() { [ "$("$1/node_modules/.bin/node" --version 2>/dev/null)" = "v$version" ]; }

if ! answers "$dir"; then
  mkdir -p "$cache"
  # Installed into a fresh folder and moved into place only once it answers, so an
  # interrupted download never leaves a cache entry that looks usable.
  tmp="$(mktemp -d "$cache/.$version.XXXXXX")"
  chmod 755 "$tmp"
  trap 'rm -rf "$tmp"' EXIT
  # A package.json of its own, whose `allowScripts` approves the `node` package's preinstall
  # script: npm 11 runs unapproved install scripts with a warning and says a future release
  # will block them (checked: with --strict-allow-scripts this install passes, without the
  # field it fails). --prefix keeps npm in this folder whatever lies above it.
  printf '{ "private": true, "dependencies": { "node": "%s" }, "allowScripts": { "node": true } }\n' \
    "$version" >"$tmp/package.json"
  echo "tools/node-bin.sh: installing node@$version into $dir" >&2
  npm install --prefix "$tmp" --no-audit --no-fund >&2
  if ! answers "$tmp"; then
    echo "tools/node-bin.sh: node@$version installed, but $tmp/node_modules/.bin/node does not answer v$version" >&2
    exit 1
  fi
  # A run that got there first in the meantime keeps its copy (mv -T then fails; ours goes).
  if ! answers "$dir"; then
    rm -rf "$dir"
    mv -T "$tmp" "$dir" 2>/dev/null || true
  fi
  answers "$dir" || { echo "tools/node-bin.sh: $bin/node does not answer v$version" >&2; exit 1; }
fi

echo "$bin"
