# The reader and the analyzer on hostile experiments (issue 15, items 9-11,
# 13-15): FIFOs named as objects or sources never hang sonde print; an
# impossible sample weight and a symlinked sub-experiment never give wrong
# totals silently; names that are not UTF-8 leave every document sonde
# writes well-formed (and read back exactly); sonde agg refuses programs
# nested too deeply instead of overflowing its stack; sonde archive never
# widens a source file's mode; tests/fuzz/run.sh is executable.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1

have() { # FILE STRING DESC
	if grep -qF -- "$2" "$1"; then ok "$3"; else
		notok "$3"
		echo "#   wanted: $2"
		sed 's/^/#   /' "$1" | head -10
	fi
}
# The <Total> e.totalcpu (ns) of a -functions json document.
total_of() {
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["rows"][0]["e.totalcpu"])' "$1"
}

# One program built here (its line table names src/burn.c), one experiment.
mkdir src bin
cp "$TOP/tests/fixtures/burn.c" src/burn.c
gcc -std=gnu11 -O2 -g -fomit-frame-pointer -o bin/burn src/burn.c -lpthread ||
	{ notok "cannot build the fixture"; exit 1; }
"$SONDE" collect -p hi -o base.er bin/burn 1 0.2 >/dev/null 2>&1
check "collect succeeds" test -s base.er/profile
"$SONDE" print -printmode json -functions base.er >base.json 2>/dev/null
base_total=$(total_of base.json)
note "total CPU of the experiment: $base_total ns"

# ---- 9. FIFOs: map.xml naming a FIFO as an object, a line table naming one as its source ----
mkfifo fifo.obj
cp -r base.er fifo.er
sed -i "s|path=\"[^\"]*/bin/burn\"|path=\"$TMP/fifo.obj\"|" fifo.er/map.xml
have fifo.er/map.xml "$TMP/fifo.obj" "the object path is now a FIFO"
timeout 30 "$SONDE" print -functions fifo.er >fifo.txt 2>fifo.err
r=$?
[ $r != 124 ] && ok "sonde print -functions does not hang on a FIFO named as an object (exit $r)" ||
	notok "sonde print -functions hangs on a FIFO named as an object (killed after 30 s)"
have fifo.err "not a regular file" "the FIFO object is reported as not a regular file"

cp -r base.er src.er
mv src/burn.c burn.c.orig
mkfifo src/burn.c
timeout 30 "$SONDE" print -source sort_cmp src.er >srcfifo.txt 2>srcfifo.err
r=$?
[ $r != 124 ] && ok "sonde print -source does not hang on a FIFO named by the line table (exit $r)" ||
	notok "sonde print -source hangs on a FIFO named by the line table (killed after 30 s)"
timeout 30 "$SONDE" print -lines src.er >/dev/null 2>&1
[ $? != 124 ] && ok "-lines does not hang either" || notok "-lines hangs on the FIFO source"
timeout 60 "$SONDE" archive -a src src.er >/dev/null 2>&1
[ $? != 124 ] && ok "sonde archive -a src does not hang on the FIFO source" ||
	notok "sonde archive -a src hangs on the FIFO source"
rm src/burn.c
mv burn.c.orig src/burn.c

# ---- 10. a weight with its top bit set; a symlinked sub-experiment ----
cp -r base.er w.er
python3 - w.er/profile <<'EOF'
import struct, sys
# Sets the top bit of the first profile packet's weight_ns (offset 16).
f = sys.argv[1]
d = bytearray(open(f, "rb").read())
hs, bs = struct.unpack_from("<II", d, 16)
off = hs
while off + 32 <= len(d):
    used = struct.unpack_from("<I", d, off + 12)[0]
    p, end = off + 32, off + 32 + used
    while p + 8 <= end:
        t, sz = struct.unpack_from("<HH", d, p)
        if t == 1:
            w = struct.unpack_from("<Q", d, p + 16)[0]
            struct.pack_into("<Q", d, p + 16, w | (1 << 63))
            open(f, "wb").write(d)
            print("weight %d at offset %d set to %d" % (w, p + 16, w | (1 << 63)))
            sys.exit(0)
        if sz < 8:
            break
        p += sz
    off += bs
sys.exit("no profile packet")
EOF
"$SONDE" print -printmode json -functions w.er >w.json 2>w.err
wt=$(total_of w.json)
note "total with one corrupted weight: $wt ns (uncorrupted: $base_total)"
if [ "$wt" -ge 0 ] && [ "$wt" -le "$base_total" ] && [ $((base_total - wt)) -le 100000000 ]; then
	ok "-functions: a sample with an impossible weight is skipped, not added (<Total> $wt ns)"
else notok "-functions: <Total> is $wt ns with one corrupted weight (uncorrupted: $base_total ns)"; fi
have w.err "impossible weight" "-functions warns about the impossible weight"
[ "$(grep -c "impossible weight" w.err)" = 1 ] && ok "... once" || notok "the warning is not said once"
"$SONDE" print -header w.er >wh.txt 2>&1
have wh.txt "impossible weight" "-header lists the skipped sample under Read problems"
rec=$(sed -n 's/^Recorded CPU time: *\([0-9.]*\) s$/\1/p' wh.txt)
if [ -n "$rec" ] && awk -v r="$rec" -v b="$base_total" 'BEGIN { exit !(r * 1e9 <= b + 1e6) }'; then
	ok "-header: recorded CPU time $rec s, without the impossible weight"
else notok "-header: recorded CPU time '$rec' (uncorrupted: $base_total ns)"; grep "Recorded CPU" wh.txt | sed 's/^/#   /'; fi

cp -r base.er sym.er
ln -s . sym.er/_f9.er
"$SONDE" print -printmode json -functions sym.er >sym.json 2>sym.err
st=$(total_of sym.json)
[ "$st" = "$base_total" ] && ok "a symlink _f9.er -> . does not double the totals ($st ns)" ||
	notok "a symlink _f9.er -> . makes the total $st ns (without it: $base_total ns)"
"$SONDE" print -experiment_list sym.er >symlist.txt 2>&1
n=$(grep -cE "^[* ] +[0-9]+ " symlist.txt)
[ "$n" = 1 ] && ok "-experiment_list lists the process once" || {
	notok "-experiment_list lists $n experiments"
	sed 's/^/#   /' symlist.txt
}
have sym.err "_f9.er" "the skipped symlink is warned about"

# ---- 11. names that are not UTF-8 ----
odd=$(printf 'dir\377\376')
mkdir "$odd"
cp bin/burn "$odd/burn"
"$SONDE" collect -p hi -a on -o u.er "$odd/burn" 1 0.2 >/dev/null 2>u.err
check "collect of a program under a non-UTF-8 path succeeds" test -s u.er/profile
python3 - u.er <<'EOF' >xml.txt 2>&1
import sys, xml.etree.ElementTree as ET
d = sys.argv[1]
for f in ("log.xml", "map.xml", "archives/index.xml"):
    try:
        ET.parse(d + "/" + f)
        print("parsed", f)
    except Exception as e:
        print("BAD", f, e)
EOF
for f in log.xml map.xml archives/index.xml; do
	if grep -qx "parsed $f" xml.txt; then ok "$f is well-formed XML"; else
		notok "$f is not well-formed XML: $(grep "$f" xml.txt)"; fi
done
"$SONDE" print -header u.er >uh.txt 2>&1
if grep -qF "Executable:        $TMP/$odd/burn" uh.txt; then ok "the reader reads the path back byte for byte"
else notok "the path is not read back exactly"; grep Executable uh.txt | od -c | head -5 | sed 's/^/#   /'; fi
bad=0
for v in functions callers-callees calltree objects threads lines pcs header processes statistics \
	samples overview experiment_list metric_list "source sort_cmp" "disasm sort_cmp" "fsingle sort_cmp"; do
	# shellcheck disable=SC2086
	"$SONDE" print -printmode json -$v u.er >v.json 2>/dev/null
	if [ ! -s v.json ]; then continue; fi
	if python3 -c 'import json,sys
for l in open(sys.argv[1], "rb").read().decode("utf-8").splitlines():
    json.loads(l)' v.json 2>v.py; then :; else
		bad=$((bad + 1))
		notok "json -$v does not decode: $(tail -n 1 v.py)"
	fi
	"$SONDE" print -printmode csv -$v u.er >v.csv 2>/dev/null
	python3 -c 'import sys; open(sys.argv[1], "rb").read().decode("utf-8")' v.csv 2>/dev/null ||
		{ bad=$((bad + 1)); notok "csv -$v is not UTF-8"; }
done
[ $bad = 0 ] && ok "every json view decodes and every csv view is UTF-8 (non-UTF-8 program path)"
"$SONDE" print -printmode json -objects u.er >o.json 2>/dev/null
python3 -c 'import json,sys
rows = json.load(open(sys.argv[1], encoding="utf-8"))["rows"]
want = sys.argv[2] + "/dir\uf7ff\uf7fe/burn"
sys.exit(0 if any(r.get("path") == want for r in rows) else 1)' o.json "$TMP" &&
	ok "json names the odd bytes as U+F7FF U+F7FE (the documented escape)" ||
	notok "json -objects does not carry the escaped path"

# ---- 13. sonde agg on deep programs ----
python3 -c "print('stdin { @ = sum(' + '('*20000 + '\$1' + ')'*20000 + '); }')" >paren.d
python3 -c "print('stdin { @ = sum(\$1' + ' + \$1'*50000 + '); }')" >chain.d
python3 -c "print('stdin { @ = sum(' + '-'*30000 + '\$1); }')" >neg.d
for p in paren chain neg; do
	echo 1 | "$SONDE" agg -s $p.d >agg.out 2>agg.err
	r=$?
	if [ $r = 2 ] && grep -q "too deep\|nested too deeply" agg.err && [ "$(wc -l <agg.err)" = 1 ]; then
		ok "sonde agg refuses $p.d with one line: $(cut -c1-90 agg.err)"
	else notok "sonde agg on $p.d: exit $r, $(head -c 200 agg.err)"; fi
done
python3 -c "print('stdin { @ = sum(' + '('*200 + '\$1' + ' + \$1'*300 + ')'*200 + '); }')" >ok.d
printf '3\n' | "$SONDE" agg -s ok.d >agg.out 2>agg.err
have agg.out "903" "a program 200 parentheses and 300 terms deep still runs (sum 903)"

# ---- 14. sonde archive -a src keeps a source file's mode ----
chmod 640 src/burn.c
gcc -std=gnu11 -O2 -g -fomit-frame-pointer -o bin/burn src/burn.c -lpthread
"$SONDE" collect -p hi -a src -o m.er bin/burn 1 0.1 >/dev/null 2>&1
copy="m.er/archives/src$(realpath src/burn.c)"
if [ -f "$copy" ]; then
	m=$(stat -c %a "$copy")
	[ "$m" = 640 ] && ok "sonde archive -a src copies a 640 source as 640" ||
		notok "sonde archive -a src copies a 640 source as $m"
else notok "no archived copy of the source at $copy"; fi

# ---- 15. the fuzz script is executable ----
mode=$(git -C "$TOP" ls-files -s tests/fuzz/run.sh | cut -d' ' -f1)
[ "$mode" = 100755 ] && ok "tests/fuzz/run.sh is executable in git (mode $mode)" ||
	notok "tests/fuzz/run.sh has git mode $mode"
