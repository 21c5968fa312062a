# Stripped load objects are said once: a stripped program linked with
# three stripped libraries, run as two processes (it forks), used to print
# one "has no function symbols" warning per object per process (8 lines
# before the function table).  Now sonde print says it in one line with the
# count (4) and -header lists the files; a warning that says a number may
# be wrong (an object rebuilt since the experiment) is still said on its own.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1

# The libraries export no function, only a table of one (as Open MPI's
# plugins export their component structure): stripped, they have no
# function symbols at all.
for l in x y z; do
	cat >lib$l.c <<SRC
volatile unsigned long sink_$l;
static void burn(unsigned long n) { for (unsigned long i = 0; i < n; i++) sink_$l += i ^ (i >> 3); }
__attribute__((visibility("default"))) void (*const ops_$l)(unsigned long) = burn;
SRC
	cc -O2 -fPIC -shared -fvisibility=hidden -Wl,--build-id -o lib$l.so lib$l.c || exit 1
	strip --strip-all lib$l.so
done
cat >prog.c <<'SRC'
#include <sys/wait.h>
#include <unistd.h>
extern void (*const ops_x)(unsigned long), (*const ops_y)(unsigned long), (*const ops_z)(unsigned long);
int main(void)
{
	pid_t pid = fork();
	for (int i = 0; i < 4; i++) {
		ops_x(20000000);
		ops_y(20000000);
		ops_z(20000000);
	}
	if (pid > 0)
		waitpid(pid, 0, 0);
	return 0;
}
SRC
cc -O2 -Wl,--build-id -o prog prog.c -L. -lx -ly -lz -Wl,-rpath,"$TMP" || exit 1
strip --strip-all prog

rc 0 "collect the stripped program and its child" "$SONDE" collect -p hi -F on -o s.er ./prog
rc 0 "sonde print -functions (founder and its child)" "$SONDE" print -functions s.er
n=$(grep -c 'no function symbols' err.txt)
if [ "$n" = 1 ]; then ok "one 'no function symbols' line (was one per object per process)"; else
	notok "$n 'no function symbols' lines, wanted 1"; sed 's/^/#   /' err.txt | head -12; fi
check "the line has the count of distinct files (4) and says where the list is" \
	grep -q '4 load objects with samples have no function symbols.*-header lists every such object' err.txt
check "the function table still prints the stripped functions as addresses" grep -q '<static>@0x' out.txt

rc 0 "sonde print -header" "$SONDE" print -header s.er
check "-header counts the files with no function symbols" grep -q 'No function symbols.*: 4 files' out.txt
for f in prog libx.so liby.so libz.so; do
	check "-header lists $f" grep -q "^  $TMP/$f\$" out.txt
done
rc 0 "sonde print -header json" "$SONDE" print -printmode json -header s.er
check "json: libx.so has function_symbols false" \
	sh -c "tr -d '\n ' <out.txt | grep -q '\"path\":\"$TMP/libx.so\"[^}]*\"function_symbols\":false'"

# A number-may-be-wrong warning keeps its own line: rebuild liby.so.
cc -O2 -fPIC -shared -fvisibility=hidden -o liby.so liby.c -Wl,--build-id=0x0123456789 || exit 1
rc 0 "sonde print after liby.so was rebuilt" "$SONDE" print -functions s.er
check "the rebuilt object's own warning is said" grep -q "liby.so' has changed since the experiment" err.txt
check "and the remaining stripped objects are one line (3)" grep -q '3 load objects with samples have no function symbols' err.txt
