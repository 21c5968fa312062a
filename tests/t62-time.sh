#!/bin/bash
# sonde print -time START-END: every view sees only the events of the
# window.  The truth is the events themselves, summed by sonde agg with a
# predicate on their time (a different reader of the same events: the
# profile's samples and the sync waits with their times): the function
# list's <Total>, the -sync view's total wait and sonde export's folded
# stacks over a window equal those sums exactly.  A window that ends before
# it starts is a usage error.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1

"$SONDE" collect -p hi -o b.er "$FIX/burn" 1 0.6 >/dev/null 2>&1 || notok "burn collected"
mkdir -p d
"$SONDE" collect -p off -s all -o s.er "$FIX/traceviews" "$TMP/d" >/dev/null 2>&1 || notok "traceviews collected"

# the agg sum of FIELD over KIND events with START <= time < END (ns; END 0: none)
agg_sum() {
	local kind=$1 field=$2 a=$3 b=$4 exp=$5
	local pred="time >= $a"
	[ "$b" != 0 ] && pred="$pred && time < $b"
	"$SONDE" agg "$kind /$pred/ { @ = sum($field); }" "$exp" | awk 'NF { print $1 }'
}

for w in "0.1-0.3 100000000 300000000" "0.25- 250000000 0" "-0.2 0 200000000" "0-1000 0 1000000000000"; do
	set -- $w
	want=$(agg_sum profile weight "$2" "$3" b.er)
	[ -n "$want" ] || want=0
	got=$("$SONDE" print -time "$1" -printmode csv -functions b.er | awk -F, '$1 == "<Total>" { print $3 }')
	if [ "$got" = "$want" ]; then ok "-time $1: <Total> $got ns = the samples' weights in the window"; else
		notok "-time $1: <Total> $got ns, the samples in the window weigh $want"
	fi
	folded=$("$SONDE" export --format folded -time "$1" b.er | awk '{ s += $NF } END { print s + 0 }')
	if [ "$folded" = "$want" ]; then ok "export -time $1: folded stacks sum to $folded ns"; else
		notok "export -time $1: folded stacks sum to $folded ns, wanted $want"
	fi
done

# A window of the whole run is the whole run; "all" ends a window.
all=$("$SONDE" print -printmode csv -functions b.er | awk -F, '$1 == "<Total>" { print $3 }')
again=$("$SONDE" print -time 0.1-0.2 -time all -printmode csv -functions b.er | awk -F, '$1 == "<Total>" { print $3 }')
if [ -n "$all" ] && [ "$all" = "$again" ]; then ok "-time all after a window: the whole run again ($all ns)"; else
	notok "-time all after a window: $again ns, the whole run is $all"
fi

# The tracing views read their events themselves: -sync over windows.
for w in "0-0.05 0 50000000" "0.05- 50000000 0"; do
	set -- $w
	want=$(agg_sum sync wait "$2" "$3" s.er)
	[ -n "$want" ] || want=0
	got=$("$SONDE" print -time "$1" -printmode csv -sync s.er | awk -F, '$1 == "<Total>" { print $(NF - 2) }')
	[ -n "$got" ] || got=0
	if [ "$got" = "$want" ]; then ok "-time $1 -sync: $got ns waited = the waits in the window"; else
		notok "-time $1 -sync: $got ns waited, the waits in the window took $want"
	fi
done

rc 2 "-time 2-1 is a usage error" "$SONDE" print -time 2-1 -functions b.er
if grep -q -- "-time: time range '2-1' ends before it starts" err.txt; then ok "-time 2-1 says why"; else
	notok "-time 2-1: $(cat err.txt)"
fi
rc 2 "-time abc is a usage error" "$SONDE" print -time abc -functions b.er
