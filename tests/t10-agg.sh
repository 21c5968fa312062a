# sonde agg end to end: programs over stdin (exact DTrace text), options,
# errors and exit statuses, and aggregations over a recorded experiment.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1

# same DESCRIPTION FILE: passes when the command's output (in out.txt)
# equals FILE byte for byte.
same() {
	if cmp -s out.txt "$2"; then ok "$1"; else
		notok "$1"
		diff "$2" out.txt | sed 's/^/#   /' | head -20
	fi
}

# ---- stdin ------------------------------------------------------------------

seq 1 1000 | "$SONDE" agg 'stdin { @ = quantize($1); }' >out.txt 2>err.txt
rc=$?
cat >want.txt <<'EOF'


           value  ------------- Distribution ------------- count    
               0 |                                         0        
               1 |                                         1        
               2 |                                         2        
               4 |                                         4        
               8 |                                         8        
              16 |@                                        16       
              32 |@                                        32       
              64 |@@@                                      64       
             128 |@@@@@                                    128      
             256 |@@@@@@@@@@                               256      
             512 |@@@@@@@@@@@@@@@@@@@@                     489      
            1024 |                                         0        

EOF
same "seq 1 1000 | sonde agg quantize: DTrace's text" want.txt
check "... exits 0 with nothing on stderr" test $rc = 0 -a ! -s err.txt

printf 'read 100\nwrite 50\nread 35\nopen -5\nwrite 0\nopen 1000\n' >in.txt
"$SONDE" agg 'stdin /$2 > 0/ { @[$1] = sum($2); } END { normalize(@, 10); }' <in.txt >out.txt
printf '\n  %-50s %16s\n  %-50s %16s\n  %-50s %16s\n' write 5 read 13 open 100 >want.txt
same "keyed sum with a predicate, normalized in END" want.txt

"$SONDE" agg -x aggsortkey 'stdin /$2 > 0/ { @[$1] = sum($2); }' <in.txt >out.txt
printf '\n  %-50s %16s\n  %-50s %16s\n  %-50s %16s\n' open 1000 read 135 write 50 >want.txt
same "-x aggsortkey sorts by key" want.txt
"$SONDE" agg -x aggsortrev 'stdin /$2 > 0/ { @[$1] = sum($2); }' <in.txt >out.txt
printf '\n  %-50s %16s\n  %-50s %16s\n  %-50s %16s\n' open 1000 read 135 write 50 >want.txt
same "-x aggsortrev reverses the order" want.txt

printf 'a 1\nb 10\na 2\nc 7\n' | "$SONDE" agg -x aggsortpos=1 \
	'stdin { @c[$1] = count(); @s[$1] = sum($2); } END { printa(@c, @s); }' >out.txt
printf '\n  %-50s %16s %16s\n  %-50s %16s %16s\n  %-50s %16s %16s\n\n' a 2 3 c 1 7 b 1 10 >want.txt
same "-x aggsortpos=1: printa of two aggregations sorted by the second" want.txt
printf '1 b\n2 a\n3 a\n' | "$SONDE" agg -xaggsortkey -x aggsortkeypos=1 'stdin { @[$1, $2] = count(); }' >out.txt
printf '\n %16s  %-50s %16s\n %16s  %-50s %16s\n %16s  %-50s %16s\n' 2 a 1 3 a 1 1 b 1 >want.txt
same "-x aggsortkeypos=1: by the second key first" want.txt
fails "-x aggsortpos needs a number" "$SONDE" agg -x aggsortpos=x 'stdin { @ = count(); }'

seq 0 1499 | "$SONDE" agg 'stdin { @ = llquantize($1, 10, 0, 6, 20); }' >out.txt
check "llquantize: underflow row '< 1'" grep -q '^             < 1 |                                         1        $' out.txt
check "llquantize: the 1000 row" grep -q '^            1000 |@@@@@@@@@@@@@                            500      $' out.txt

cat >prog.d <<'EOF'
/* a program file */
stdin
/$1 >= 0/
{
	@lat = lquantize($1, 0, 100, 25);
	@n[$1 % 2 == 0] = count();
}
END
{
	printa(@n);
}
EOF
seq 0 99 | "$SONDE" agg -s prog.d >out.txt
cat >want.txt <<'EOF'

                0               50
                1               50


           value  ------------- Distribution ------------- count    
             < 0 |                                         0        
               0 |@@@@@@@@@@                               25       
              25 |@@@@@@@@@@                               25       
              50 |@@@@@@@@@@                               25       
              75 |@@@@@@@@@@                               25       
          >= 100 |                                         0        

EOF
same "-s FILE: printa in END, then the rest at exit" want.txt

printf '1\nabc\n3\n' | "$SONDE" agg 'stdin { @ = sum($1); }' >out.txt 2>err.txt
rc=$?
printf '\n                4\n' >want.txt
same "a non-integer value: the other events still count" want.txt
check "... exit status 1" test $rc = 1
check "... stderr names the line and the field" grep -q "stdin line 2: sum() needs an integer, and \$1 is 'abc'" err.txt

# ---- errors ------------------------------------------------------------------

"$SONDE" agg 'stdin { @ = quantize($1) @b = count(); }' </dev/null >out.txt 2>err.txt
rc=$?
check "syntax error: exit 2" test $rc = 2
check "... names line:column and what was expected" grep -q "^sonde agg: 1:26: expected ';' or '}' after the statement, found '@b'" err.txt
check "... shows the line and a caret" grep -q '^                           \^$' err.txt
check "... prints nothing on stdout" test ! -s out.txt

printf 'stdin {\n  @ = lquantize($1, 0, 10, 0);\n}\n' >bad.d
"$SONDE" agg -s bad.d </dev/null 2>err.txt
check "lquantize step 0: DTrace's reason, with the file name" \
	grep -q "^sonde agg: bad.d:2:7: lquantize() argument #3 must be a non-zero positive integer constant" err.txt
"$SONDE" agg 'stdin { @ = llquantize($1, 10, 0, 2, 15); }' </dev/null 2>err.txt
check "llquantize steps not fitting the factor: DTrace's reason" \
	grep -q "must evenly divide the number of steps per magnitude" err.txt
"$SONDE" agg 'stdin { @ = lquantize($1, 0, 10); @ = lquantize($1, 0, 20); }' </dev/null 2>err.txt
check "mismatched lquantize arguments: DTrace's reason" \
	grep -q "limit (argument #2) doesn't match previous declaration: expected 10, found 20" err.txt
fails "no program" "$SONDE" agg
fails "unknown -x option" "$SONDE" agg -x aggsortfoo 'stdin { @ = count(); }'
fails "unknown option" "$SONDE" agg -q 'stdin { @ = count(); }'
fails "profile events without an experiment" "$SONDE" agg 'profile { @ = count(); }'
fails "an experiment that does not exist" "$SONDE" agg 'profile { @ = count(); }' nowhere.er
"$SONDE" agg 'profile { @ = count(); }' nowhere.er 2>err.txt
check "... the error is one line naming it" sh -c "[ \$(wc -l <err.txt) = 1 ] && grep -q nowhere.er err.txt"
"$SONDE" agg -h >out.txt
check "-h prints the usage" grep -q '^usage: sonde agg' out.txt
"$SONDE" help >out.txt
check "sonde help lists agg" grep -q '^  agg ' out.txt

# ---- an experiment ---------------------------------------------------------------

"$SONDE" collect -p hi -o x.er "$FIX/burn" 1 1 >/dev/null 2>&1
set -- $("$EXPCHECK" summary x.er)
samples=$2
weight=$4
note "x.er: $samples samples, $weight ns"
check "the experiment has samples" test "${samples:-0}" -gt 100

"$SONDE" agg 'profile { @ = count(); @w = sum(weight); }' x.er >out.txt 2>err.txt
rc=$?
printf '\n%17s\n%17s\n' "$samples" "$weight" >want.txt
same "profile: count() and sum(weight) equal the experiment's samples and CPU time" want.txt
check "... exit 0" test $rc = 0 -a ! -s err.txt

"$SONDE" agg 'profile { @[func] = count(); }' x.er >out.txt
total=$(awk 'NF { s += $NF } END { print s }' out.txt)
check "profile by func: the counts add up to the samples" test "$total" = "$samples"
check "... functions are named (burn+0x... until symbols are plugged in)" \
	grep -Eq '^  (burn\+0x[0-9a-f]+|spin|deep|sort_cmp|[a-z_]+) +[0-9]+$' out.txt
"$SONDE" agg 'profile { @[object] = count(); }' x.er >out.txt
check "profile by object: the burn executable is there" grep -Eq '^  burn +[0-9]+$' out.txt
"$SONDE" agg 'profile { @[thread] = sum(weight); @c[caller] = count(); }' x.er >out.txt
check "profile by thread and by caller" sh -c "[ \$(grep -c . out.txt) -ge 2 ]"
"$SONDE" agg 'profile /weight > 0/ { @ = quantize(weight); @t = lquantize(time / 1000000000, 0, 10); }' x.er >out.txt
check "profile: quantize of the weights" grep -q 'Distribution' out.txt
"$SONDE" agg 'profile { @ = count(); }' x.er 'stdin' >/dev/null 2>&1
check "one experiment at most" test $? = 2
"$SONDE" agg 'stdin { @ = count(); }' x.er 2>err.txt
check "stdin events with an experiment are an error" grep -q "stdin events come only without an experiment" err.txt
"$SONDE" agg 'profile { @ = count(); @f[unknownfield] = count(); }' x.er 2>err.txt
check "unknown profile field: the known ones are listed" \
	grep -q "unknown field 'unknownfield' for profile events (their fields: thread, cpu, time, weight, object, func, caller, pc, depth, state, user, system, waitcpu, syscall, ompstate, javaframe; and pid, rank)" err.txt

# A damaged experiment: what could be read is aggregated, the status is 1.
cp -r x.er d.er
size=$(stat -c %s d.er/profile)
truncate -s $((size / 2 + 100)) d.er/profile
"$SONDE" agg 'profile { @ = count(); }' d.er >out.txt 2>err.txt
rc=$?
check "damaged experiment: exit 1" test $rc = 1
check "... says it is damaged" grep -q "is damaged" err.txt
check "... still prints the aggregation" grep -Eq '^ +[0-9]+$' out.txt
