#!/bin/sh
# make demo: profile examples/demo.c and show its function list,
# callers-callees and hottest source lines.
set -e
cd "$(dirname "$0")/.."
SONDE=build/bin/sonde
mkdir -p build/demo
rm -rf build/demo/demo.er
echo "\$ sonde collect -p hi -o demo.er build/examples/demo"
$SONDE collect -p hi -d build/demo -o demo.er build/examples/demo
echo
echo "\$ sonde print -limit 12 -functions demo.er"
$SONDE print -limit 12 -functions build/demo/demo.er
echo
echo "\$ sonde print -csingle count_words demo.er"
$SONDE print -csingle count_words build/demo/demo.er
echo
echo "\$ sonde print -csingle sort_table demo.er"
$SONDE print -csingle sort_table build/demo/demo.er
echo
echo "\$ sonde print -limit 6 -lines demo.er"
$SONDE print -limit 6 -lines build/demo/demo.er
echo
echo "The experiment is in build/demo/demo.er; try also -source count_words,"
echo "-disasm hash_word, -callers-callees, -calltree, -objects, -threads and"
echo "-header (see doc/sonde-print.md)."
