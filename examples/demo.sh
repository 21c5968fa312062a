#!/bin/sh
# make demo: profile examples/demo.c and show what was recorded.
set -e
cd "$(dirname "$0")/.."
SONDE=build/bin/sonde
mkdir -p build/demo
rm -rf build/demo/demo.er
echo "\$ sonde collect -p hi -o demo.er build/examples/demo"
$SONDE collect -p hi -d build/demo -o demo.er build/examples/demo
echo
echo "\$ sonde print -header demo.er"
$SONDE print -header build/demo/demo.er
echo
echo "\$ sonde print -dump profile demo.er   (first samples)"
$SONDE print -dump profile build/demo/demo.er | head -n 30
echo
echo "The experiment is in build/demo/demo.er."
