#!/usr/bin/env bash
# Reproduces the figures BENCHMARKS.md leads with, and prints them as
# tables ready to paste there: grep and glob through the release binary
# over stdio against ripgrep (the first call of a fresh bridge and the same
# call again), and start-up to the initialize answer against a minimal Go
# program, the same plus jsonschema/v6 (the floor), the same plus every
# package the bridge links but its own (deps) and the acp-go-sdk example
# agent. With a commit (say, the one before a change), that commit's
# release build is timed in the same runs as the comparison.
#
#   scripts/bench-user.sh [COMMIT]      needs rg (apt-get install ripgrep)
#
# The tree searched is ACP_BRIDGE_SEARCH_TREE, else the Go module cache,
# filled by `go mod download`; the regexp shapes of
# tools/fs/testdata/grep-shapes.txt (a literal word, then character
# classes, a repeat and an escaped parenthesis) are searched in
# ACP_BRIDGE_SHAPES_TREE, else the Go toolchain's own source. BENCH_RUNS (default 7) is the bridge runs per
# search pattern, BENCH_STARTS (default 40) the starts of each program per
# start-up run (two runs). Every command is printed before it runs, with
# the load average; the raw output is kept in the directory printed last.
# About four minutes on two idle cores, eight with a COMMIT.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v rg >/dev/null || { echo "rg is not installed" >&2; exit 2; }
runs=${BENCH_RUNS:-7}
starts=${BENCH_STARTS:-40}
out=$(mktemp -d "${TMPDIR:-/tmp}/bench-user.XXXXXX")
bins=$(mktemp -d "${TMPDIR:-/tmp}/bench-user-bins.XXXXXX")
export ACP_BRIDGE_BENCH_DIR="$bins"
wt=""
other=""
cleanup() {
	[ -z "$wt" ] || git worktree remove --force "$wt" >/dev/null 2>&1 || true
	rm -rf "$bins" ${other:+"$other"}
}
trap cleanup EXIT

say() { echo "## $(date -u '+%Y-%m-%d %H:%M:%S UTC'), load $(cut -d' ' -f1-3 /proc/loadavg): $*" >&2; }
# run prints a command, runs it and keeps its output in $out/$1.txt.
run() {
	local name=$1
	shift
	say "$*"
	"$@" 2>&1 | tee "$out/$name.txt" >&2
}

go mod download
tree=${ACP_BRIDGE_SEARCH_TREE:-$(go env GOMODCACHE)}
say "commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ' (with uncommitted changes)'), $(go version | cut -d' ' -f3-), $(nproc) cores"
say "tree $tree: $(find "$tree" -type f | wc -l) files, $(du -sm "$tree" | cut -f1) MB"
shapes=${ACP_BRIDGE_SHAPES_TREE:-$(go env GOROOT)/src}
say "shapes tree $shapes: $(find "$shapes" -type f | wc -l) files, $(du -sm "$shapes" | cut -f1) MB"
if [ $# -ge 1 ]; then
	wt="$out/src"
	git worktree add --detach "$wt" "$1" >/dev/null
	other="$out/bridge-$1"
	say "building $1: CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o $other ./cmd/acp-bridge"
	(cd "$wt" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$other" ./cmd/acp-bridge)
fi

run search go test ./cmd/acp-bridge -run '^$' -bench 'BinaryGrep|BinaryGlob' -benchtime "${runs}x"
if [ -n "$other" ]; then
	ACP_BRIDGE_SEARCH_BIN="$other" run search-other go test ./cmd/acp-bridge -run '^$' -bench 'BinaryGrep|BinaryGlob' -benchtime "${runs}x"
fi
ACP_BRIDGE_STARTUP_COMPARE="$other" run startup go test ./cmd/acp-bridge -run '^$' -bench ColdStart -benchtime "${starts}x" -count 2
say "done"

# The tables. A benchmark line is its name, the iterations, then value
# and unit pairs; the search benchmark also logs "NAME ARGS: first line of
# the result".
search_table() {
	awk '
	/^Benchmark(BinaryGrep|BinaryGrepShapes|BinaryGlob)\// {
		split($1, p, "/"); name = p[2]; sub(/-[0-9]+$/, "", name)
		tool = ($1 ~ /Shapes/) ? "grep shape" : ($1 ~ /Grep/) ? "grep" : "glob"
		for (i = 3; i < NF; i += 2) v[$(i + 1)] = $i
		rows[++n] = sprintf("| %s %s | %s | %s | %s | %s | %.2f | %.2f | %.2f | %s–%s |", tool, name, v["card-ms"], v["cold-ms"], v["again-ms"], v["rg-ms"], v["card-x-rg"], v["cold-x-rg"], v["again-x-rg"], v["load-start"], v["load-end"])
	}
	END {
		print "| search | card (ms) | cold (ms) | again (ms) | rg (ms) | card / rg | cold / rg | again / rg | load |"
		print "|---|---|---|---|---|---|---|---|---|"
		for (i = 1; i <= n; i++) print rows[i]
	}' "$1"
}
startup_table() {
	awk -v other="$2" '
	/^BenchmarkColdStart/ {
		for (i = 3; i < NF; i += 2) v[$(i + 1)] = $i
		cmp = other != "" ? sprintf(" %s ms |", v["compare-ms"]) : ""
		rows[++n] = sprintf("| run %d | %s ms | %s ms | %s ms | %s ms | %s ms | %s ms |%s %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %s–%s |", n, v["minimal-ms"], v["floor-ms"], v["deps-ms"], v["sdk-example-ms"], v["acp-bridge-ms"], v["release-ms"], cmp, v["release-x-minimal"], v["release-x-floor"], v["release-x-deps"], v["floor-x-minimal"], v["deps-x-minimal"], v["sdk-x-minimal"], v["load-start"], v["load-end"])
	}
	END {
		h = other != "" ? " " other " |" : ""
		s = other != "" ? "---|" : ""
		print "| | minimal | floor | deps | sdk example | acp-bridge (dev) | release |" h " release / minimal | release / floor | release / deps | floor / minimal | deps / minimal | sdk / minimal | load |"
		print "|---|---|---|---|---|---|---|" s "---|---|---|---|---|---|---|"
		for (i = 1; i <= n; i++) print rows[i]
	}' "$1"
}
matches() {
	grep -E '^ +search_bench_test.go:[0-9]+: ' "$1" | sed -E 's/^ +search_bench_test.go:[0-9]+: /- /'
}

echo
echo "Search, release build at $(git rev-parse --short HEAD), first call of a fresh bridge and the same call again, medians of $runs; tree $tree (grep shape rows: $shapes):"
echo
search_table "$out/search.txt"
echo
matches "$out/search.txt"
if [ -n "$other" ]; then
	echo
	echo "The same with the release build of $1:"
	echo
	search_table "$out/search-other.txt"
fi
echo
echo "Start-up to the initialize answer, medians of $starts starts each, two runs:"
echo
startup_table "$out/startup.txt" "${1:-}"
echo
say "raw output in $out"
