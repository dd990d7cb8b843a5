#!/usr/bin/env bash
# Reproduces the figures BENCHMARKS.md leads with: grep and glob through the
# release binary over stdio against ripgrep (first call of a fresh bridge and
# the same call again), and start-up to the initialize answer against a
# minimal Go program, the same plus jsonschema/v6 (the floor) and the
# acp-go-sdk example agent. With a commit (say, the one before a change),
# that commit's build is timed in the same runs as the comparison.
#
#   scripts/bench-user.sh [COMMIT]      needs rg (apt-get install ripgrep)
#
# The tree searched is ACP_BRIDGE_SEARCH_TREE, else the Go module cache,
# filled by `go mod download`. Each figure is printed with the load average.
set -euo pipefail
cd "$(dirname "$0")/.."
go mod download
command -v rg >/dev/null || { echo "rg is not installed" >&2; exit 2; }
other=""
if [ $# -ge 1 ]; then
	tmp=$(mktemp -d)
	trap 'git worktree remove --force "$tmp/src" >/dev/null 2>&1; rm -rf "$tmp"' EXIT
	git worktree add --detach "$tmp/src" "$1" >/dev/null
	(cd "$tmp/src" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$tmp/bridge-other" ./cmd/acp-bridge)
	other="$tmp/bridge-other"
fi
uptime
go test ./cmd/acp-bridge -run '^$' -bench 'BinaryGrep|BinaryGlob' -benchtime 10x
if [ -n "$other" ]; then
	uptime
	ACP_BRIDGE_SEARCH_BIN="$other" go test ./cmd/acp-bridge -run '^$' -bench 'BinaryGrep|BinaryGlob' -benchtime 10x
fi
uptime
ACP_BRIDGE_STARTUP_COMPARE="$other" go test ./cmd/acp-bridge -run '^$' -bench ColdStart -benchtime 60x -count 2
uptime
