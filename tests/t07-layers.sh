#!/bin/bash
# The library's layers (scripts/check-layers.sh, doc/internals.md): this
# checkout keeps them, and the check fails on each way of breaking them,
# tried on a copy of the sources.
. "$(dirname "$0")/lib.sh"

check "the checkout: no upward include, no cycle, the collector includes nothing of lib/" \
	sh "$TOP/scripts/check-layers.sh" "$TOP"

# A copy of what the check reads, broken one way at a time.
copy() {
	rm -rf "$TMP/src"
	mkdir -p "$TMP/src"
	cp -r "$TOP/lib" "$TOP/cmd" "$TOP/collector" "$TOP/tracers" "$TMP/src/"
}
breaks() {
	desc=$1
	shift
	copy
	"$@"
	if sh "$TOP/scripts/check-layers.sh" "$TMP/src" >"$TMP/layers.out" 2>&1; then
		notok "$desc: the check passed"
	else
		ok "$desc: the check fails ($(head -n 1 "$TMP/layers.out"))"
	fi
}
add_include() { # FILE HEADER: an include after the file's first line
	sed -i "1a #include \"$2\"" "$TMP/src/$1"
}

breaks "base includes the reader (upward)" add_include lib/base/safeopen.c reader/experiment.h
breaks "the reader includes a view (upward)" add_include lib/reader/experiment.h views/view.h
breaks "a symbols file includes the model (upward)" add_include lib/symbols/symbols.c model/profile.h
breaks "lib/ includes a command's header" add_include lib/views/view.c commands.h
breaks "an include without its folder" add_include lib/model/metrics.c experiment.h
breaks "the collector includes the reader" add_include collector/clock.c reader/experiment.h
breaks "a tracer includes lib/ by a relative path" add_include tracers/heap.c ../lib/base/u64map.h
breaks "a cycle within a layer" add_include lib/views/view_table.h views/view_common.h
breaks "a file directly in lib/" touch "$TMP/src/lib/loose.c"
breaks "a folder that is no layer" mkdir "$TMP/src/lib/extra"
breaks "a view that branches on the print mode" sed -i '1a static int pm = SONDE_PM_JSON;' "$TMP/src/lib/views/view_samples.c"
breaks "a command that branches on the print mode" sed -i '1a static int pm = SONDE_PM_CSV;' "$TMP/src/cmd/print.c"
