#!/bin/sh
# Install what sonde needs to build and test, where it is missing.
# Debian 12; needs root (or sudo) only when something is missing.
#	sh scripts/deps.sh [build|check|bench]
# build (make, make demo): the compilers and libraries.  check and bench
# (make check, make bench) also: Debian's chromium and a font for the HTML
# report's browser test (tests/t61-report.sh, bench/report.sh), and its
# driver's npm package (playwright-core, pinned in tests/browser/package.json
# and package-lock.json) in tests/browser/node_modules.
set -e
mode=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
need=""
have_cmd() { command -v "$1" >/dev/null 2>&1; }
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"; }

# libelf-dev, libdw-dev, zlib1g-dev: symbols (lib/symbols/symbols.c); g++: its tests build C++ programs;
# libcapstone-dev: disassembly (lib/symbols/disasm.c); clang: tests/t39-source.sh reads clang's DWARF.
for p in gcc make libc6-dev binutils libelf-dev libdw-dev zlib1g-dev g++ libcapstone-dev clang; do
	have_pkg "$p" || need="$need $p"
done
# The HTML report's browser test: chromium, a font, node (the machine's
# Node.js 20 or later; Debian's nodejs when there is none).
if [ "$mode" != build ]; then
	for p in chromium fonts-dejavu-core; do
		have_pkg "$p" || need="$need $p"
	done
	have_cmd node || need="$need nodejs npm"
fi
# Peers for `make bench` (optional for build and tests).
if [ "${SONDE_BENCH_PEERS:-1}" = 1 ]; then
	have_cmd perf || need="$need linux-perf"
fi

if [ -n "$need" ]; then
	echo "deps: installing:$need"
	SUDO=""
	[ "$(id -u)" = 0 ] || SUDO="sudo"
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get update -qq || true
	# Peers are best effort: a build must not fail because perf is absent.
	$SUDO apt-get install -y -qq --no-install-recommends $need >/dev/null ||
		$SUDO apt-get install -y -qq --no-install-recommends gcc make libc6-dev binutils libelf-dev libdw-dev zlib1g-dev g++ libcapstone-dev clang >/dev/null
fi
# playwright-core for tests/browser (npm ci: exactly the lock file's).
if [ "$mode" != build ] && [ ! -d "$root/tests/browser/node_modules/playwright-core" ] && have_cmd npm; then
	echo "deps: installing tests/browser's npm packages (playwright-core)"
	(cd "$root/tests/browser" && npm ci --no-audit --no-fund --loglevel=error) ||
		echo "deps: npm ci in tests/browser failed; the browser tests will say so"
fi
