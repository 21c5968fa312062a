# Frames of every kind through the commands: test_frames' frames.er
# (tests/unit/framesexp.h: native, kernel and Java frames in one stack,
# named by its jit.map, kallsyms and method table), read by sonde print,
# sonde agg and sonde print -dump as a user runs them, against the truth
# of framesexp.h.  The exports and the report of the same experiment:
# t60, t61.
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
<kind 9>@0x1010|<unknown>|1000000|1000000
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
check "-dump stacks: a frame of a kind this sonde does not know" grep -q '^    #0 0x1010  kind 9  <kind 9>@0x1010$' dump.txt

# sonde agg: func, caller and object of every kind
"$SONDE" agg 'profile { @[func, caller, object] = sum(weight); }' frames.er >agg.txt 2>&1
for row in "do_syscall_64 entry_SYSCALL_64 <kernel> 5000000" "kfunc_low main <kernel> 2000000" \
	"<unknown method>@0x9999 main <JAVA> 1000000" "<kind 9>@0x1010 com.example.Main.<init> <unknown> 1000000" \
	"main <none> <unknown> 3000000"; do
	if tr -s ' ' <agg.txt | sed 's/^ //' | grep -qxF "$row"; then ok "sonde agg: $row"; else
		notok "sonde agg: no row '$row'"
		sed 's/^/#   /' agg.txt
	fi
done
