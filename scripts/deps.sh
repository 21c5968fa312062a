#!/bin/sh
# Install what sonde needs to build and test, where it is missing.
# Debian 12; needs root (or sudo) only when something is missing.
#	sh scripts/deps.sh [build|check|bench]
# build (make, make demo): the compilers and libraries.  check and bench
# (make check, make bench) also the tests' real readers: Debian's
# chromium and a font (the HTML report's browser test, tests/t61-report.sh,
# and speedscope reading sonde export's files, tests/t60-export.sh), go
# tool pprof (golang-go), node and npm, and the npm packages pinned in
# tests/browser/package-lock.json (playwright-core, speedscope), into
# tests/browser/node_modules; and heaptrack, whose peak consumers and
# temporary allocations tests/t68-heapviews.sh compares with sonde's
# (gprofng, which t67 runs, comes with binutils); and gdb, which
# tests/t73-debugger.sh runs sonde under and over; and Open MPI, MPICH and
# gfortran, for MPI tracing (libsonde_mpi.so and tests/t77-mpi-trace.sh).
set -e
mode=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
need=""
have_cmd() { command -v "$1" >/dev/null 2>&1; }
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"; }

# libelf-dev, libdw-dev, zlib1g-dev: symbols (lib/symbols/symbols.c); g++: its tests build C++ programs;
# libcapstone-dev: disassembly (lib/symbols/disasm.c); clang: tests/t39-source.sh reads clang's DWARF;
# libdeflate-dev: inflating compressed debug sections (lib/symbols/plaindebug.c);
# libomp-dev: LLVM's OpenMP runtime, for the clang builds of the OpenMP fixtures
# (tests/t78-omp-states.sh; gcc's libgomp comes with gcc); libiberty-dev: the
# demangler of C++ and Rust names (lib/symbols/symbols.c).
for p in gcc make libc6-dev binutils libelf-dev libdw-dev zlib1g-dev libdeflate-dev libiberty-dev g++ libcapstone-dev clang libomp-dev; do
	have_pkg "$p" || need="$need $p"
done
# Peers for `make bench` (optional for build and tests).
if [ "${SONDE_BENCH_PEERS:-1}" = 1 ]; then
	have_cmd perf || need="$need linux-perf"
fi
# The tests' readers (make check, make bench): installed apart, so that a
# build never fails for them; a test that needs one fails and says so.
readers=""
if [ "$mode" != build ]; then
	for p in golang-go chromium fonts-dejavu-core heaptrack gdb; do
		have_pkg "$p" || readers="$readers $p"
	done
	# imagemagick: a real OpenMP program nobody here wrote
	# (tests/t80-omp-viewmode.sh runs convert-im6.q16 -resize)
	have_pkg imagemagick || readers="$readers imagemagick"
	# MPI (tests/t75-mpi-launch.sh and the MPI tracing tests): both
	# implementations, their compilers and gfortran for the Fortran fixtures;
	# libsonde_mpi.so is built against both headers, and t77's fixtures
	# with each one's compilers and mpirun.
	for p in openmpi-bin libopenmpi-dev mpich libmpich-dev gfortran; do
		have_pkg "$p" || readers="$readers $p"
	done
	# OpenJDK 17: a JDK's jvmti.h builds the Java agent (libsonde_java.so),
	# and javac and java run tests/t82-java.sh's fixtures
	have_pkg openjdk-17-jdk-headless || readers="$readers openjdk-17-jdk-headless"
	have_cmd node || readers="$readers nodejs"
	# Debian's rustc: tests/t89-names.sh's Rust fixtures (gfortran, above,
	# builds its Fortran one)
	have_pkg rustc || readers="$readers rustc"
	have_cmd npm || readers="$readers npm"
fi

if [ -n "$need" ]; then
	echo "deps: installing:$need"
	SUDO=""
	[ "$(id -u)" = 0 ] || SUDO="sudo"
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get update -qq || true
	# Peers are best effort: a build must not fail because perf is absent.
	$SUDO apt-get install -y -qq --no-install-recommends $need >/dev/null ||
		$SUDO apt-get install -y -qq --no-install-recommends gcc make libc6-dev binutils libelf-dev libdw-dev zlib1g-dev libdeflate-dev libiberty-dev g++ libcapstone-dev clang >/dev/null
fi
if [ -n "$readers" ]; then
	echo "deps: installing (the tests' readers):$readers"
	SUDO=""
	[ "$(id -u)" = 0 ] || SUDO="sudo"
	export DEBIAN_FRONTEND=noninteractive
	[ -n "$need" ] || $SUDO apt-get update -qq || true
	$SUDO apt-get install -y -qq --no-install-recommends $readers >/dev/null ||
		echo "deps: could not install$readers; the tests that need them fail and say so"
fi
if [ "$mode" != build ] && command -v npm >/dev/null 2>&1; then
	b=$root/tests/browser
	# the versions package-lock.json pins, once (npm ci when they differ)
	if ! cmp -s "$b/package-lock.json" "$b/node_modules/.package-lock.json.sonde" 2>/dev/null; then
		echo "deps: npm ci in tests/browser (playwright-core, speedscope)"
		(cd "$b" && npm ci --no-audit --no-fund --loglevel=error >/dev/null &&
			cp package-lock.json node_modules/.package-lock.json.sonde) ||
			echo "deps: npm ci failed in tests/browser; the browser tests fail and say so"
	fi
fi
