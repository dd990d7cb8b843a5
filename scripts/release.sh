#!/usr/bin/env bash
# Builds a release of acp-bridge: reproducible archives for darwin, linux
# and windows (amd64, arm64), SHA256SUMS, and the ACP Registry entry in
# OUTDIR/registry/acp-bridge-go/. Run from anywhere in a clean checkout of
# the commit to release; the same commit gives the same bytes.
#
#   scripts/release.sh VERSION OUTDIR      e.g. scripts/release.sh 0.2.0 dist
set -euo pipefail
if [ $# -ne 2 ]; then
	echo "usage: $0 VERSION OUTDIR" >&2
	exit 2
fi
out=$(mkdir -p "$2" && cd "$2" && pwd)
cd "$(dirname "$0")/.."
go run ./internal/release "$1" "$out"
(cd "$out" && if command -v sha256sum >/dev/null; then sha256sum -c --quiet SHA256SUMS; else shasum -a 256 -c --quiet SHA256SUMS; fi)
echo "release $1 in $out:"
ls -l "$out"
