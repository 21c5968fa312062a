# Frames of every kind through the commands: test_frames' frames.er
# (tests/unit/framesexp.h: native, kernel and Java frames in one stack,
# named by its jit.map, kallsyms and method table), read by sonde print,
# sonde agg and sonde print -dump as a user runs them, against the truth
# of framesexp.h; and framestate.er, the same with samples in the tests'
# build's extra thread state, read by that build (build/teststates).
# The exports and the report of the same experiments: t60, t61.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1

same() { # DESC GOT WANT
	if [ "$2" = "$3" ]; then ok "$1"; else notok "$1: got '$2', wanted '$3'"; fi
}

check "test_frames wrote frames.er" "$B/tests/test_frames" --write "$TMP"

# -functions: each function's load object and exclusive and inclusive time
"$SONDE" print -printmode '|' -metrics e.totalcpu:i.totalcpu:name -functions frames.er >fn.txt 2>err.txt
same "-functions: no warning about the files that name the frames" "$(cat err.txt)" ""
same "-functions: <Total> is 15 ms" "$(grep '^<Total>|' fn.txt)" "<Total>||15000000|15000000"
same "-functions: 12 functions" "$(($(wc -l <fn.txt) - 2))" 12
while read -r row; do
	if grep -qxF "$row" fn.txt; then ok "-functions: $row"; else notok "-functions: no row '$row'"; fi
done <<'EOF'
do_syscall_64|<kernel>|5000000|5000000
entry_SYSCALL_64|<kernel>|0|5000000
kfunc_low|<kernel>|2000000|2000000
<kernel>@0xffffffff81003010|<kernel>|1000000|1000000
main|<JIT>|3000000|14000000
work|<JIT>|2000000|7000000
leaf_native|<JIT>|0|5000000
com.example.Main.run(int, java.lang.String[])|Main.class|0|5000000
com.example.Util.hash(java.lang.Object)|Util.class|0|5000000
com.example.Main.<init>()|Main.class|0|1000000
<unknown method>@0x9999|<JAVA>|1000000|1000000
<kind 200>@0x1010|<unknown>|1000000|1000000
EOF

# -callers-callees of a Java method, by its name as shown
"$SONDE" print -csingle 'com.example.Main.run(int, java.lang.String[])' frames.er >cs.txt 2>&1
if grep -q '^0.005 100.00  0.002  13.33  0.007  46.67   work$' cs.txt &&
	grep -q '^0.005 100.00  0.      0.    0.005  33.33   com.example.Util.hash(java.lang.Object)$' cs.txt; then
	ok "-csingle of the Java method: called by work, calls Util.hash"
else
	notok "-csingle of the Java method"
	sed 's/^/#   /' cs.txt
fi
# the short name finds it too
"$SONDE" print -fsingle com.example.Main.run frames.er >fs.txt 2>&1
check "-fsingle com.example.Main.run (its short name): its class file" grep -q 'Load Object: com/example/Main.class' fs.txt

# -disasm and -source say why they have nothing
rc 1 "-disasm of a kernel function fails" "$SONDE" print -disasm do_syscall_64 frames.er
check "-disasm says there is no ELF file" grep -q "'do_syscall_64' is a kernel function, not code of a load object: there is no ELF file to disassemble" err.txt
rc 1 "-source of a Java method whose file is not here fails" "$SONDE" print -source com.example.Main.run frames.er
check "-source names the method's source file" grep -q "cannot find source file 'Main.java'" err.txt
mkdir -p src
seq 1 20 | sed 's/^/line /' >src/Main.java
rc 0 "-source of the Java method with -addpath" "$SONDE" print -addpath src -source com.example.Main.run frames.er
check "-source: line 11, where bytecode index 7 is, has the method's 5 ms, marked hot" \
	grep -qxF '## 0.      0.    0.005  33.33      11. line 11' out.txt
same "-source: no other line has time" "$(grep -c '^   0\.      0\.    0\.      0\.  ' out.txt)" 19

# -dump stacks: each frame's kind
"$SONDE" print -dump stacks frames.er >dump.txt 2>&1
check "-dump stacks: a kernel frame by its kind and kallsyms name" grep -q '^    #0 0xffffffff81001010  kernel  <kernel>:do_syscall_64+0x10$' dump.txt
check "-dump stacks: a Java frame by its kind, class file, method and bytecode index" \
	grep -q '^    #4 0x1010  java-interpreted  Main.class:com.example.Main.run(int, java.lang.String\[\]) bci 7$' dump.txt
check "-dump stacks: a frame of a kind this sonde does not know" grep -q '^    #0 0x1010  kind 200  <kind 200>@0x1010$' dump.txt

# sonde agg: func, caller and object of every kind
"$SONDE" agg 'profile { @[func, caller, object] = sum(weight); }' frames.er >agg.txt 2>&1
for row in "do_syscall_64 entry_SYSCALL_64 <kernel> 5000000" "kfunc_low main <kernel> 2000000" \
	"<unknown method>@0x9999 main <JAVA> 1000000" "<kind 200>@0x1010 com.example.Main.<init> <unknown> 1000000" \
	"main <none> <unknown> 3000000"; do
	if tr -s ' ' <agg.txt | sed 's/^ //' | grep -qxF "$row"; then ok "sonde agg: $row"; else
		notok "sonde agg: no row '$row'"
		sed 's/^/#   /' agg.txt
	fi
done

# ---- an extra thread state ----------------------------------------------------------------
# test_frames --write-state: framestate.er, frames.er's samples with 6 of
# them (framesexp.h: the first 2 of S1, 1 each of S2 to S5) in the tests'
# build's extra state TEST (id 3, metric teststate, sonde/states.h), read
# with the tests' build of sonde (build/teststates), against framesexp.h's
# truth: each function's time in the state, kernel, native and Java alike.
TS=$B/teststates
TSONDE=$TS/bin/sonde
if [ ! -x "$TSONDE" ] || [ ! -x "$TS/tests/test_frames" ]; then
	notok "the tests' build of the thread states ($TS: sonde, tests/test_frames) is built (make tests)"
	exit 0
fi
check "test_frames wrote framestate.er" "$B/tests/test_frames" --write-state "$TMP"
"$TS/tests/test_frames" >tsunit.txt 2>&1
if [ $? = 0 ] && grep -q '^[0-9]* passed, 0 failed$' tsunit.txt; then
	ok "the tests' build's test_frames: the reader and the model give the state's truth ($(tail -n 1 tsunit.txt))"
else
	grep '^not ok' tsunit.txt | sed 's/^not ok - /not ok - the tests'"'"' build'"'"'s test_frames: /'
	notok "the tests' build's test_frames: $(tail -n 1 tsunit.txt)"
fi

# -functions: the state's metric and CPU time of every function
"$TSONDE" print -printmode '|' -metrics e.teststate:i.teststate:e.totalcpu:i.totalcpu:name -functions framestate.er >sfn.txt 2>err.txt
same "state: -functions: no warning" "$(cat err.txt)" ""
same "state: -functions: <Total> is 6 ms in the state, 15 ms of CPU" "$(grep '^<Total>|' sfn.txt)" "<Total>||6000000|6000000|15000000|15000000"
same "state: -functions: 12 functions" "$(($(wc -l <sfn.txt) - 2))" 12
while read -r row; do
	if grep -qxF "$row" sfn.txt; then ok "state: -functions: $row"; else notok "state: -functions: no row '$row'"; fi
done <<'EOF2'
do_syscall_64|<kernel>|2000000|2000000|5000000|5000000
entry_SYSCALL_64|<kernel>|0|2000000|0|5000000
kfunc_low|<kernel>|1000000|1000000|2000000|2000000
<kernel>@0xffffffff81003010|<kernel>|0|0|1000000|1000000
main|<JIT>|1000000|6000000|3000000|14000000
work|<JIT>|0|2000000|2000000|7000000
leaf_native|<JIT>|0|2000000|0|5000000
com.example.Main.run(int, java.lang.String[])|Main.class|0|2000000|0|5000000
com.example.Util.hash(java.lang.Object)|Util.class|0|2000000|0|5000000
com.example.Main.<init>()|Main.class|0|1000000|0|1000000
<unknown method>@0x9999|<JAVA>|1000000|1000000|1000000|1000000
<kind 200>@0x1010|<unknown>|1000000|1000000|1000000|1000000
EOF2

# -callers-callees: the state's time attributed to the Java method's
# caller and callee, and to main's callees of every kind
"$TSONDE" print -printmode '|' -metrics a.teststate:a.totalcpu -csingle 'com.example.Main.run(int, java.lang.String[])' \
	-csingle main framestate.er >scs.txt 2>&1
same "state: -csingle of the Java method and of main: attributed test-state and CPU time" "$(grep -v -e '^function|' -e '^$' scs.txt)" \
	"com.example.Main.run(int, java.lang.String[])|caller|work|<JIT>|2000000|5000000
com.example.Main.run(int, java.lang.String[])|function|com.example.Main.run(int, java.lang.String[])|Main.class|0|0
com.example.Main.run(int, java.lang.String[])|callee|com.example.Util.hash(java.lang.Object)|Util.class|2000000|5000000
main|caller|<Total>||6000000|14000000
main|function|main|<JIT>|1000000|3000000
main|callee|work|<JIT>|2000000|7000000
main|callee|kfunc_low|<kernel>|1000000|2000000
main|callee|<unknown method>@0x9999|<JAVA>|1000000|1000000
main|callee|com.example.Main.<init>()|Main.class|1000000|1000000"

# -calltree: the state's time down the mixed stack
"$TSONDE" print -printmode '|' -metrics e.teststate:i.teststate:i.totalcpu -calltree framestate.er >sct.txt 2>&1
same "state: -calltree: each node's test-state time (exclusive, inclusive) and CPU time" "$(cut -d'|' -f3- sct.txt)" \
	"depth|name|object|e.teststate|i.teststate|i.totalcpu
0|<Total>||6000000|6000000|15000000
1|main|<JIT>|1000000|6000000|14000000
2|work|<JIT>|0|2000000|7000000
3|com.example.Main.run(int, java.lang.String[])|Main.class|0|2000000|5000000
4|com.example.Util.hash(java.lang.Object)|Util.class|0|2000000|5000000
5|leaf_native|<JIT>|0|2000000|5000000
6|entry_SYSCALL_64|<kernel>|0|2000000|5000000
7|do_syscall_64|<kernel>|2000000|2000000|5000000
2|kfunc_low|<kernel>|1000000|1000000|2000000
2|<unknown method>@0x9999|<JAVA>|1000000|1000000|1000000
2|com.example.Main.<init>()|Main.class|0|1000000|1000000
3|<kind 200>@0x1010|<unknown>|1000000|1000000|1000000
1|<kernel>@0xffffffff81003010|<kernel>|0|0|1000000"

# -dump profile: the samples in the state by its word, their leaf frames
# named by kind
"$TSONDE" print -dump profile framestate.er >sdump.txt 2>&1
same "state: -dump profile: 6 samples in state test-state, 1 ms each" \
	"$(grep -c '^sample .*  state test-state  weight 1.000 ms  ' sdump.txt)" 6
same "state: -dump profile: no sample in another state" "$(grep '^sample ' sdump.txt | grep ' state ' | grep -vc ' state test-state ')" 0
same "state: -dump profile: the leaves of the samples in the state, by kind" \
	"$(awk '/^sample/ { st = / state test-state /; getline; sub(/^ +/, ""); if (st) print }' sdump.txt | sort | uniq -c | sed 's/^ *//')" \
	"1 #0 0x1010  <JIT>:main+0x10
1 #0 0x1010  kind 200  <kind 200>@0x1010
1 #0 0x8000000000001010  kernel  <kernel>:kfunc_low+0x10
1 #0 0x9999  java-interpreted  <unknown method>@0x9999
2 #0 0xffffffff81001010  kernel  <kernel>:do_syscall_64+0x10"
check "state: -dump profile: a sample in the state with its Java frames by kind" \
	grep -A4 '^sample 0 .* state test-state ' sdump.txt | grep -q '^    #4 0x1010  java-interpreted  Main.class:com.example.Main.run(int, java.lang.String\[\]) bci 7$'

# sonde agg: the state field
"$TSONDE" agg 'profile { @[state] = sum(weight); }' framestate.er >sagg.txt 2>&1
same "state: agg's state field: test-state 6 ms, cpu 9 ms" "$(tr -s ' ' <sagg.txt | sed 's/^ //' | grep . | sort)" \
	"cpu 9000000
test-state 6000000"
"$TSONDE" agg 'profile /state == "test-state"/ { @[func, object] = sum(weight); }' framestate.er >sagg2.txt 2>&1
same "state: agg: the samples in test-state by leaf function and object" "$(tr -s ' ' <sagg2.txt | sed 's/^ //' | grep . | sort)" \
	"<kind 200>@0x1010 <unknown> 1000000
<unknown method>@0x9999 <JAVA> 1000000
do_syscall_64 <kernel> 2000000
kfunc_low <kernel> 1000000
main <unknown> 1000000"

# This sonde, whose table has no row 3: the state by its number, its time
# CPU time, frames.er's numbers
"$SONDE" print -dump profile framestate.er >sdump0.txt 2>&1
same "state: sonde without the row: -dump profile shows the state by its number" \
	"$(grep -c '^sample .*  state 15  weight 1.000 ms  ' sdump0.txt)" 6
"$SONDE" print -printmode '|' -metrics e.totalcpu:i.totalcpu:name -functions framestate.er >sfn0.txt 2>&1
check "state: sonde without the row: -functions as frames.er's" cmp sfn0.txt fn.txt
rc 2 "state: sonde without the row: no metric teststate" "$SONDE" print -metrics e.teststate -functions framestate.er
