#!/bin/sh
# Checks the layering of the analyzer's library (doc/internals.md): lib/ is
# in folders, one per layer, lowest first
#
#	base reader symbols model agg views kinds
#
# and a file may include headers of its own layer and of the layers below
# it, named with their folder ("reader/experiment.h"), never of a layer
# above it.  Also: nothing in lib/ includes cmd/'s headers; the collector
# and the tracing libraries (collector/, tracers/), which run inside the
# target, include nothing of lib/ or cmd/; and the include graph of lib/'s
# headers has no cycle; and only the output layer (lib/views/emit.[ch])
# names a print mode (SONDE_PM_*): views and commands write through the
# emitter and never branch on the mode.  Prints each violation as FILE: what, and exits 1
# if there is one.
#	sh scripts/check-layers.sh [ROOT]	(default: this checkout)
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root" || exit 2
LAYERS="base reader symbols model agg views kinds"

# Every quoted include of the sources that matter: "FILE HEADER" lines.
includes() {
	for f in "$@"; do
		[ -f "$f" ] || continue
		sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" | sed "s|^|$f |"
	done
}

{
	echo "layers $LAYERS"
	for h in cmd/*.h; do
		[ -f "$h" ] && echo "cmdheader ${h#cmd/}"
	done
	for d in lib/*/; do
		echo "folder ${d%/}"
	done
	for f in lib/*.c lib/*.h; do
		[ -f "$f" ] && echo "loose $f"
	done
	includes lib/*/*.c lib/*/*.h | sed 's/^/lib /'
	includes collector/*.c collector/*.h tracers/*.c tracers/*.h | sed 's/^/target /'
	grep -l 'SONDE_PM_' lib/*/*.c lib/*/*.h cmd/*.c cmd/*.h 2>/dev/null | grep -v '^lib/views/emit\.[ch]$' |
		sed 's/^/printmode /'
} | awk '
function fail(msg) { print msg; bad++ }
$1 == "layers" { for (i = 2; i <= NF; i++) rank[$i] = i - 1; next }
$1 == "folder" {
	n = split($2, p, "/")
	if (!(p[2] in rank))
		fail($2 ": a folder of lib/ that is no layer (add it to LAYERS in scripts/check-layers.sh)")
	next
}
$1 == "loose" { fail($2 ": a file directly in lib/; put it in the folder of its layer"); next }
$1 == "cmdheader" { cmdh[$2] = 1; next }
$1 == "printmode" { fail($2 ": names a print mode (SONDE_PM_); only the emitter (lib/views/emit.[ch]) may"); next }
$1 == "lib" {
	split($2, p, "/"); from = p[2]; file = $2; inc = $3
	if (inc ~ /^sonde\//)
		next				# the public headers (include/sonde)
	if (inc in cmdh) {
		fail(file ": includes cmd/" inc " (lib/ is below the commands)")
		next
	}
	n = split(inc, q, "/")
	if (n != 2 || !(q[1] in rank)) {
		fail(file ": includes \"" inc "\"; name a header of lib/ with its folder (\"reader/experiment.h\")")
		next
	}
	if (rank[q[1]] > rank[from])
		fail(file ": includes " inc ", a higher layer (" q[1] " is above " from ")")
	if (file ~ /\.h$/) {
		# an edge of the header graph
		edge[++ne] = file SUBSEP "lib/" inc
		node[file] = 1; node["lib/" inc] = 1
	}
	next
}
$1 == "target" {
	inc = $3
	n = split(inc, q, "/")
	if ((n == 2 && q[1] in rank) || inc in cmdh || inc ~ /(^|\/)(lib|cmd)\//)
		fail($2 ": includes \"" inc "\"; the collector side includes nothing of lib/ or cmd/")
	next
}
END {
	# Kahn: take away headers that include no header still left; what
	# stays is on a cycle.
	for (i = 1; i <= ne; i++) { split(edge[i], e, SUBSEP); out[e[1]]++ }
	do {
		changed = 0
		for (i = 1; i <= ne; i++) {
			if (done_edge[i]) continue
			split(edge[i], e, SUBSEP)
			if (!out[e[2]]) { done_edge[i] = 1; out[e[1]]--; changed = 1 }
		}
	} while (changed)
	for (h in out)
		if (out[h] > 0)
			fail(h ": on a cycle of includes")
	exit bad ? 1 : 0
}'
