# Bad input to `sonde collect`: a one-line error, a non-zero exit, and
# nothing created half-way.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1
mkdir work && cd work || exit 1

# one_line_error DESC ARGS...: non-zero exit, exactly one line on stderr,
# no experiment directory left behind.
one_line_error() {
	desc=$1
	shift
	before=$(ls -A | sort)
	"$SONDE" collect "$@" >/dev/null 2>"$TMP/err"
	rc=$?
	after=$(ls -A | sort)
	lines=$(wc -l <"$TMP/err")
	if [ "$rc" != 0 ] && [ "$lines" = 1 ] && [ "$before" = "$after" ]; then
		ok "$desc: $(cat "$TMP/err")"
	else
		notok "$desc (rc=$rc, $lines stderr lines, dir before [$before] after [$after])"
		sed 's/^/#   /' "$TMP/err"
	fi
}

one_line_error "missing program" ./no-such-program
one_line_error "missing program on PATH" no-such-program-anywhere-xyz
one_line_error "static binary" "$FIX/static_hello"
one_line_error "invalid -p value" -p fast "$FIX/burn" 1 0.01
one_line_error "invalid -p number" -p -3 "$FIX/burn" 1 0.01
one_line_error "unknown option" -Q "$FIX/burn" 1 0.01
one_line_error "no program" -p hi
one_line_error "directory as program" /tmp
printf 'not a program\n' >data.txt && chmod +x data.txt
one_line_error "non-ELF file" ./data.txt
chmod -x data.txt
one_line_error "non-executable file" ./data.txt
rm -f data.txt
cp "$FIX/burn" ./suid && chmod u+s ./suid
one_line_error "setuid program" ./suid
rm -f suid
one_line_error "experiment name without .er" -o results "$FIX/burn" 1 0.01
one_line_error "missing -d directory" -d ./nowhere "$FIX/burn" 1 0.01
one_line_error "-o path whose last part lacks .er" -o sub/results "$FIX/burn" 1 0.01
one_line_error "-o path into a missing directory" -o nowhere/x.er "$FIX/burn" 1 0.01
one_line_error "-o bare .er" -o sub/.er "$FIX/burn" 1 0.01
mkdir host.er
one_line_error "-o inside another experiment" -o host.er/x.er "$FIX/burn" 1 0.01
rmdir host.er
one_line_error "-o absolute path with -d" -d . -o "$TMP/abs.er" "$FIX/burn" 1 0.01
# gprofng's -h selects hardware counters: refused with status 2 until
# sonde has them, not taken for help.
one_line_error "-h (counters) is refused" -h cycles "$FIX/burn" 1 0.01
"$SONDE" collect -h cycles "$FIX/burn" 1 0.01 >/dev/null 2>&1
rc=$?
if [ "$rc" = 2 ]; then ok "-h exits with status 2"; else notok "-h exits with status 2 (got $rc)"; fi
if "$SONDE" collect --help >"$TMP/out" 2>&1 && grep -q '^usage: sonde collect' "$TMP/out"; then
	ok "--help prints the usage and exits 0"
else
	notok "--help prints the usage and exits 0"
fi

mkdir exists.er
one_line_error "existing experiment name" -o exists.er "$FIX/burn" 1 0.01
rmdir exists.er

# An unwritable directory; root ignores permission bits, so run as nobody.
mkdir ro && chmod 555 ro
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	if setpriv --reuid=65534 --regid=65534 --clear-groups "$SONDE" collect -d ro "$FIX/burn" 1 0.01 \
		>/dev/null 2>"$TMP/err"; then
		notok "unwritable directory accepted"
	elif [ "$(wc -l <"$TMP/err")" = 1 ] && [ -z "$(ls -A ro)" ]; then
		ok "unwritable directory: $(cat "$TMP/err")"
	else
		notok "unwritable directory: $(cat "$TMP/err")"
	fi
else
	one_line_error "unwritable directory" -d ro "$FIX/burn" 1 0.01
fi

# -n creates nothing and says what it would do.
before=$(ls -A)
if "$SONDE" collect -n -p hi "$FIX/burn" 1 0.01 >"$TMP/out" && [ "$before" = "$(ls -A)" ] &&
	grep -q 'test.1.er' "$TMP/out"; then ok "-n is a dry run"; else notok "-n is a dry run"; fi

# Names: test.1.er, then test.2.er; an existing experiment is never reused.
"$SONDE" collect -p hi "$FIX/burn" 1 0.01 >/dev/null 2>&1
"$SONDE" collect -p hi "$FIX/burn" 1 0.01 >/dev/null 2>&1
check "test.1.er and test.2.er created in turn" test -f test.1.er/log.xml -a -f test.2.er/log.xml

# Exit status is the program's; 128+N when killed by signal N.
"$SONDE" collect -o exit3.er sh -c 'exit 3' >/dev/null 2>&1
rc=$?
if [ "$rc" = 3 ]; then ok "exit status passed through"; else notok "exit status passed through (got $rc)"; fi
"$SONDE" collect -o killed.er sh -c 'kill -TERM $$' >/dev/null 2>&1
rc=$?
if [ "$rc" = 143 ]; then ok "killed by SIGTERM gives 143"; else notok "killed by SIGTERM gives 143 (got $rc)"; fi
check "log.xml records the signal" grep -q 'kind="signal" .*signal="15"' killed.er/log.xml
check "-C comment is in notes" sh -c "'$SONDE' collect -o c.er -C 'hello notes' '$FIX/burn' 1 0.01 >/dev/null && grep -q 'hello notes' c.er/notes"

# -o takes a path, as gprofng and perf do: relative to the current
# directory, relative to -d, or absolute.
mkdir -p sub dsub/inner
check "-o DIR/NAME.er creates the experiment there" sh -c "'$SONDE' collect -o sub/p.er '$FIX/burn' 1 0.01 >/dev/null && test -f sub/p.er/log.xml"
check "-o with -d is relative to -d" sh -c "'$SONDE' collect -d dsub -o inner/q.er '$FIX/burn' 1 0.01 >/dev/null && test -f dsub/inner/q.er/log.xml"
check "-o absolute path" sh -c "'$SONDE' collect -o '$TMP/work/sub/abs.er' '$FIX/burn' 1 0.01 >/dev/null && test -f sub/abs.er/log.xml"
check "an experiment made with a path reads back" sh -c "'$SONDE' print -header sub/p.er | grep -q 'Samples:'"
one_line_error "-o path to an existing experiment" -o sub/p.er "$FIX/burn" 1 0.01
