# Archives (issue 6): an experiment collected with -a on is analysed from
# its archived copies after the binary is rebuilt; one collected with the
# default (build ids only) says that the binary changed; -a src copies the
# sources; sonde archive rejects bad input.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1

has() {
	if grep -qF -- "$2" "$1"; then ok "$3"; else
		notok "$3"
		echo "#   wanted: $2"
		sed 's/^/#   /' "$1" | head -20
	fi
}
hasnt() {
	if grep -qF -- "$2" "$1"; then
		notok "$3"
		grep -F -- "$2" "$1" | head -5 | sed 's/^/#   /'
	else ok "$3"; fi
}

# The fixture is built here, as a user builds a program, so that it can be
# rebuilt in place.  Rebuilding inserts 4 KiB of code in front of the
# others (a top-level asm comes before the functions): every function
# moves, and the build id changes.
mkdir src bin
cp "$TOP/tests/fixtures/burn.c" src/burn.c
build() { gcc -std=gnu11 -O2 -g -fomit-frame-pointer -o bin/burn src/burn.c -lpthread; }
build || { notok "cannot build the fixture"; exit 1; }
cp src/burn.c burn.c.orig
spin1=$(nm bin/burn | awk '$3 ~ /^spin/ { print $1; exit }')

"$SONDE" collect -p hi -a on -o on.er bin/burn 1 0.5 >truth.txt 2>collect.err
check "collect -a on succeeds" test -s on.er/archives/index.xml
bid=$(sed -n 's/.*path="[^"]*\/bin\/burn" [^>]*buildid="\([0-9a-f]*\)".*/\1/p' on.er/map.xml | head -n 1)
check "-a on: the executable is copied under its build id" cmp bin/burn "on.er/archives/$bid/burn"
has on.er/archives/index.xml 'status="archived" file="'"$bid"'/burn"' "-a on: the index names the copy"
has on.er/archives/index.xml 'libsonde_collector.so' "the index lists sonde's own objects"
hasnt on.er/archives/index.xml 'status="archived" file="'"$bid"'/libsonde' "sonde's own objects are not copied"
[ ! -e on.er/archives/src ] && ok "-a on: no sources" || notok "-a on copied sources"
"$SONDE" print -printmode csv -functions on.er >before.csv 2>before.err
"$SONDE" print -header on.er >hdr-on.txt 2>&1
has hdr-on.txt "from the archive" "-header says objects are read from the archive"

# The truth: the fixture's own thread-CPU measurement names the functions
# the profile must show (spin, deep, sort_cmp).
for f in spin deep sort_cmp; do
	grep -q "^func $f " truth.txt || notok "fixture printed no truth for $f"
	has before.csv "$f" "before the rebuild: $f is named"
done

# Rebuild with different code.
sed -i 's/^#define DEPTH 50$/#define DEPTH 50\n__asm__(".text\\n.skip 4096\\n");/' src/burn.c
build || { notok "cannot rebuild the fixture"; exit 1; }
spin2=$(nm bin/burn | awk '$3 ~ /^spin/ { print $1; exit }')
bid2=$(readelf -n bin/burn | awk '/Build ID/ { print $3 }')
if [ "$bid2" != "$bid" ] && [ -n "$spin1" ] && [ "$spin1" != "$spin2" ]; then
	ok "the rebuilt binary differs (build id and function addresses)"
else notok "the rebuild did not change the binary ($bid/$bid2, spin $spin1/$spin2)"; fi

"$SONDE" print -printmode csv -functions on.er >after.csv 2>after.err
check "after the rebuild, -functions from the archive is unchanged" cmp before.csv after.csv
hasnt after.err "has changed" "after the rebuild, no warning with an archive"
# (Only the program's: libc may have a sampled address that no symbol
# covers, rebuild or not.)
hasnt after.csv " (burn)," "after the rebuild, none of the program's functions shown as an address"
for f in spin deep sort_cmp; do has after.csv "$f" "after the rebuild: $f is still named"; done
# The two heaviest are spin (with deep's calls of it) and sort_cmp, about
# 49% and 47% of 500 samples: either may come first, both named.
top=$(sed -n 3p after.csv | cut -d, -f1,2)
case $top in spin*,burn | sort_cmp,burn) ok "top function from the archive: $top" ;; *) notok "top function: $top" ;; esac

# The archive is what made it right: without it the analysis cannot name
# the executable's functions, and says why.
mv on.er/archives on.er/archives.away
"$SONDE" print -functions on.er >noarch.txt 2>noarch.err
has noarch.err "has changed since the experiment" "archive moved away: -functions warns that the binary changed"
has noarch.err "no archived copy" "the warning says there is no archived copy"
has noarch.txt "<static>@0x" "archive moved away: functions shown as addresses, not misnamed"
mv on.er/archives.away on.er/archives

# Sub-experiments read their founder's archives/.
mkdir founder.er
cp -r on.er founder.er/_f1.er
rm -rf founder.er/_f1.er/archives
cp -r on.er/archives founder.er/archives
"$SONDE" print -printmode csv -functions founder.er/_f1.er >sub.csv 2>sub.err
check "a sub-experiment is analysed from its founder's archives" cmp before.csv sub.csv

# Separate debug files are archived too (when the system has one for libc,
# as Debian's libc6-dbg provides): with the system's debug files out of
# reach, libc's internal functions are still named from the archive.
if grep -q 'libc.so.6"[^>]*debug="' on.er/archives/index.xml; then
	SONDE_DEBUG_ROOT=/nonexistent "$SONDE" print -printmode csv -functions on.er >nodbg.csv 2>&1
	check "libc's separate debug file is read from the archive" cmp before.csv nodbg.csv
else
	note "no separate debug file for libc on this system: debug-file archiving not exercised"
fi

# The default: build ids only, nothing copied.
"$SONDE" collect -p hi -o ids.er bin/burn 1 0.3 >/dev/null 2>&1
n=$(find ids.er/archives -type f | wc -l)
[ "$n" = 1 ] && ok "default collect writes only archives/index.xml" || notok "default archives has $n files"
has ids.er/archives/index.xml 'status="recorded"' "default: the index records the objects"
sz=$(wc -c <ids.er/archives/index.xml)
[ "$sz" -lt 4096 ] && ok "default archive is small ($sz bytes)" || notok "default archive is $sz bytes"
cp burn.c.orig src/burn.c
build
"$SONDE" print -functions ids.er >ids.txt 2>ids.err
has ids.err "has changed since the experiment" "no archive, rebuilt: -functions warns that the binary changed"
has ids.txt "<static>@0x" "no archive, rebuilt: functions shown as addresses"
"$SONDE" print -header ids.er >hdr-ids.txt 2>&1
has hdr-ids.txt "WARNING: '$TMP/bin/burn' has changed since the experiment" "no archive, rebuilt: -header warns"
has hdr-ids.txt "1 changed" "no archive, rebuilt: the Load objects line counts it"
# Archiving now is too late for the executable, and says so.
rc 1 "sonde archive after the rebuild: exit 1" "$SONDE" archive ids.er
has err.txt "has changed since the experiment" "sonde archive says the binary changed"
has ids.er/archives/index.xml 'status="changed"' "the index marks it changed"

# -a src: the line tables' source files, as they were.
"$SONDE" collect -p hi -a src -o src.er bin/burn 1 0.2 >/dev/null 2>&1
real=$(realpath src/burn.c)
check "-a src copies the source file" cmp src/burn.c "src.er/archives/src$real"
has src.er/archives/index.xml "<source path=" "-a src: the index lists the source"
n=$(find src.er/archives/src -path '*/usr/include/*' | wc -l)
[ "$n" = 0 ] && ok "-a src: no system headers" || notok "-a src copied $n system headers"

# sonde archive on an existing experiment, and again (kept copies).
"$SONDE" collect -p hi -o later.er bin/burn 1 0.2 >/dev/null 2>&1
rc 0 "sonde archive: exit 0" "$SONDE" archive later.er
has out.txt "archived" "sonde archive prints a summary"
bid3=$(readelf -n bin/burn | awk '/Build ID/ { print $3 }')
check "sonde archive (default on) copies the executable" cmp bin/burn "later.er/archives/$bid3/burn"
rc 0 "sonde archive twice: exit 0" "$SONDE" archive later.er
has out.txt "0.0 KiB copied" "the second run copies nothing"

# Bad input: one line, non-zero, never a crash.
rc 1 "archive of a missing directory: exit 1" "$SONDE" archive nowhere.er
[ "$(wc -l <err.txt)" = 1 ] && grep -q nowhere.er err.txt && ok "missing: one line naming it" ||
	notok "missing: $(cat err.txt)"
mkdir notexp
rc 1 "archive of a directory that is not an experiment: exit 1" "$SONDE" archive notexp
echo x >afile
rc 1 "archive of a plain file: exit 1" "$SONDE" archive afile
rc 2 "archive -a bogus: exit 2" "$SONDE" archive -a bogus later.er
rc 2 "archive with two experiments: exit 2" "$SONDE" archive later.er ids.er
rc 2 "collect -a bogus: exit 2" "$SONDE" collect -a bogus bin/burn 1 0.1
rc 0 "archive with no arguments prints the usage" "$SONDE" archive
has out.txt "usage: sonde archive" "the usage names the command"
# A hostile map.xml: a build id that is a path, a base name "..", junk.
mkdir evil.er
echo '<experiment>' >evil.er/log.xml
cat >evil.er/map.xml <<EOF
<map>
<object id="1" event="load" path="$TMP/bin/burn" buildid="../../../escape" lo="0x1000" hi="0x2000"/>
<object id="2" event="load" path="/.." buildid="aabb" lo="0x1000" hi="0x2000"/>
<object id="3" event="load" path="/nonexistent/libfoo.so" buildid="aabbcc" lo="0x1000" hi="0x2000"/>
<object id="4" event="load" path=
EOF
rc 0 "archive of a hostile map.xml: exit 0 (ids only)" "$SONDE" archive -a off evil.er
rc 1 "archive -a on of a hostile map.xml: exit 1 (objects missing)" "$SONDE" archive evil.er
[ ! -e escape ] && [ ! -e "$TMP/../escape" ] && ok "a build id that is a path writes nothing outside" ||
	notok "a build id escaped the archive"
grep 'buildid="../../../escape"' evil.er/archives/index.xml >evil.txt
has evil.txt 'status="no-buildid"' \
	"an invalid build id is not archived"
has evil.er/archives/index.xml 'status="missing"' "a missing object is marked missing"
