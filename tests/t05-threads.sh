# Every thread is sampled: threads created through the old symbol version
# pthread_create@GLIBC_2.2.5, and a thread started by a library constructor
# before the collector initialised.  Recorded CPU within 2% of the truth.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1

for fx in oldsym early; do
	"$SONDE" collect -p hi -o $fx.er "$FIX/$fx" >truth.$fx 2>&1
	"$EXPCHECK" threads $fx.er >rec.$fx
	n=0
	good=0
	while read -r _ tid _ real; do
		n=$((n + 1))
		rec=$(awk -v t="$tid" '$1 == t { print $3 }' rec.$fx)
		note "$fx: tid $tid real $real recorded ${rec:-none}"
		[ -n "$rec" ] && within "$rec" "$real" 2 && good=$((good + 1))
	done <<EOT
$(grep '^thread ' truth.$fx)
EOT
	if [ $n -gt 0 ] && [ $good = $n ]; then ok "$fx: all $n threads sampled, CPU within 2%"; else
		notok "$fx: $good of $n threads sampled within 2%"; fi
done
check "oldsym really calls pthread_create@GLIBC_2.2.5" sh -c "objdump -T '$FIX/oldsym' | grep -q 'GLIBC_2.2.5.*pthread_create'"
check "early: log.xml notes the adopted thread" grep -q 'existed before the collector started' early.er/log.xml

# Threads shorter than the sampling interval: the counter never fires in
# them, yet their CPU time is recorded (charged to their start routine).
"$SONDE" collect -p hi -o churn.er "$FIX/churn" >truth.churn 2>&1
truth=$(awk '/^threads_cpu_ns/ {print $2}' truth.churn)
W=$(sym_range "$FIX/churn" short_worker)
set -- $("$EXPCHECK" reach churn.er "$FIX/churn" --leaf "$W" "$W")
note "short threads: real $truth ns, recorded in short_worker $8 ns ($2 samples)"
if [ -n "$truth" ] && within "$8" "$truth" 2; then ok "2000 threads shorter than the interval: CPU recorded within 2%"; else
	notok "short threads: recorded $8 ns vs real $truth ns"; fi
