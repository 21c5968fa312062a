#!/bin/sh
# Install what sonde needs to build and test, where it is missing.
# Debian 12; needs root (or sudo) only when something is missing.
set -e
need=""
have_cmd() { command -v "$1" >/dev/null 2>&1; }
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"; }

# libelf-dev, libdw-dev, zlib1g-dev: symbols (lib/symbols/symbols.c); g++: its tests build C++ programs;
# libcapstone-dev: disassembly (lib/symbols/disasm.c); clang: tests/t39-source.sh reads clang's DWARF.
for p in gcc make libc6-dev binutils libelf-dev libdw-dev zlib1g-dev g++ libcapstone-dev clang; do
	have_pkg "$p" || need="$need $p"
done
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
