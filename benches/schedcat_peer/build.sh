#!/bin/sh
# Build the SchedCAT G-EDF benchmark driver out of tree (issue 13).
#   benches/schedcat_peer/build.sh SRC_DIR OUT_DIR
# SRC_DIR: a SchedCAT checkout (github.com/brandenburg/schedcat); OUT_DIR gets
# the objects and OUT_DIR/schedcat_gedf. Nothing of SchedCAT enters this repo.
# Flags: SchedCAT's native/Makefile (non-debug) uses
#   --std=gnu++14 -Wall -Wextra -Wno-unused-parameter -O2 -march=native
# We drop -march=native (criticore is built for the generic target too).
set -eu
SRC=$(cd "$1/native" && pwd)
OUT=$2
mkdir -p "$OUT"
HERE=$(cd "$(dirname "$0")" && pwd)
CXX=${CXX:-g++}
CXXFLAGS="--std=gnu++14 -Wall -Wextra -Wno-unused-parameter -O2 -I$SRC/include"
for f in src/schedule_sim.cpp src/tasks.cpp; do
    $CXX $CXXFLAGS -c "$SRC/$f" -o "$OUT/$(basename "$f" .cpp).o"
done
$CXX $CXXFLAGS -c "$HERE/driver.cpp" -o "$OUT/driver.o"
$CXX -o "$OUT/schedcat_gedf" "$OUT/driver.o" "$OUT/schedule_sim.o" "$OUT/tasks.o" -lgmpxx -lgmp
echo "$OUT/schedcat_gedf ($($CXX --version | head -1); $CXXFLAGS; SchedCAT $(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo '?'))"
