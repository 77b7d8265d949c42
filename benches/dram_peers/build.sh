#!/usr/bin/env bash
# Rebuild the two DRAM simulators criticore's request-level DRAM model is compared with
# (bench-only; nothing here is linked into criticore, and no peer code lives in this repo).
#
# Sources (public GitHub repositories, cloned from local snapshots; no network needed here):
#   DRAMSim3     github.com/umd-memsys/DRAMsim3     master @ 29817593b3389f1337235d63cac515024ab8fd6e
#                ("fix DTHERMAL compile error"), built with its Makefile (-O3, C++11, fmt header-only),
#                plus one bench patch (below) to src/main.cc and src/cpu.h: stop as soon as the last trace line
#                has been accepted (the trace front end itself is unchanged; the harness writes cycle 0 on every line).
#   Ramulator 2  github.com/CMU-SAFARI/ramulator2   tag v2.0a @ be93be78055d922aa1d4d33e15bcc8f2b0c61a9d
#                (branch legacy/v2.0a), CMake Release (-O3 -DNDEBUG), C++20.
#     its CMake FetchContent deps, given as local source dirs instead of being downloaded:
#                github.com/jbeder/yaml-cpp tag yaml-cpp-0.7.0, github.com/gabime/spdlog tag v1.11.0,
#                github.com/p-ranav/argparse tag v2.9 (the tags the v2.0a CMakeLists pins).
#
# Usage:  benches/dram_peers/build.sh [PEERS_DIR]        (default /work/peers-dram)
#   expects  PEERS_DIR/src/DRAMsim3, PEERS_DIR/src/ramulator2 (checked out at the commits above),
#            PEERS_DIR/src/deps/{yaml-cpp,spdlog,argparse} (checked out at the tags above).
#   To recreate them from clones:  git clone <url> PEERS_DIR/src/<name> && git -C ... checkout <commit/tag>
#   produces PEERS_DIR/bin/dramsim3main and PEERS_DIR/bin/ramulator2 (+ libramulator.so next to it).
# Env: JOBS (default 2; the bench machine has 2 cores), CXX (default g++; tested with g++ 12.2).
set -euo pipefail
PEERS=${1:-/work/peers-dram}
JOBS=${JOBS:-2}
CXX=${CXX:-g++}
SRC=$PEERS/src
BIN=$PEERS/bin
mkdir -p "$BIN" "$PEERS/build"

check_commit() {  # dir expected-commit
  local got; got=$(git -C "$1" rev-parse HEAD 2>/dev/null || echo unknown)
  [ "$got" = "$2" ] || echo "WARNING: $1 is at $got, expected $2" >&2
}

# ---------------------------------------------------------------- DRAMSim3
D3=$SRC/DRAMsim3
check_commit "$D3" 29817593b3389f1337235d63cac515024ab8fd6e
B3=$PEERS/build/dramsim3
rm -rf "$B3"; mkdir -p "$B3"
( cd "$D3" && git archive HEAD ) | tar -x -C "$B3"
# Bench patch: (1) main loop ends once the whole trace has been accepted by the memory system
# (same end condition as Ramulator 2's LoadStoreTrace front end), -c stays an upper bound;
# (2) TraceBasedCPU otherwise unchanged (one AddTransaction per cycle at most, when
# WillAcceptTransaction says the transaction queue has room, and only once added_cycle <= clk).
patch -d "$B3" -p1 <<'PATCH'
diff --git a/src/cpu.h b/src/cpu.h
index 9ec28e7..342bc98 100644
--- a/src/cpu.h
+++ b/src/cpu.h
@@ -18,6 +18,7 @@ class CPU {
               std::bind(&CPU::WriteCallBack, this, std::placeholders::_1)),
           clk_(0) {}
     virtual void ClockTick() = 0;
+    virtual bool Done() { return false; }
     void ReadCallBack(uint64_t addr) { return; }
     void WriteCallBack(uint64_t addr) { return; }
     void PrintStats() { memory_system_.PrintStats(); }
@@ -60,6 +61,8 @@ class TraceBasedCPU : public CPU {
                   const std::string& trace_file);
     ~TraceBasedCPU() { trace_file_.close(); }
     void ClockTick() override;
+    // bench patch: true once every trace line has been accepted by the memory system
+    bool Done() override { return get_next_ && (trace_file_ >> std::ws).eof(); }
 
    private:
     std::ifstream trace_file_;
diff --git a/src/main.cc b/src/main.cc
index 9ca252e..6f53c0c 100644
--- a/src/main.cc
+++ b/src/main.cc
@@ -63,6 +63,7 @@ int main(int argc, const char **argv) {
 
     for (uint64_t clk = 0; clk < cycles; clk++) {
         cpu->ClockTick();
+        if (cpu->Done()) break;  // bench patch: stop when the trace is issued
     }
     cpu->PrintStats();
 
PATCH
make -C "$B3" -j"$JOBS" CXX="$CXX" dramsim3main.out >/dev/null
cp "$B3/dramsim3main.out" "$BIN/dramsim3main"

# ---------------------------------------------------------------- Ramulator 2.0a
R2=$SRC/ramulator2
check_commit "$R2" be93be78055d922aa1d4d33e15bcc8f2b0c61a9d
BR=$PEERS/build/ramulator2
rm -rf "$BR"; mkdir -p "$BR/src"
( cd "$R2" && git archive HEAD ) | tar -x -C "$BR/src"
cmake -S "$BR/src" -B "$BR/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$CXX" \
  -DFETCHCONTENT_FULLY_DISCONNECTED=ON \
  -DFETCHCONTENT_SOURCE_DIR_YAML-CPP="$SRC/deps/yaml-cpp" \
  -DFETCHCONTENT_SOURCE_DIR_SPDLOG="$SRC/deps/spdlog" \
  -DFETCHCONTENT_SOURCE_DIR_ARGPARSE="$SRC/deps/argparse" >/dev/null
cmake --build "$BR/build" -j"$JOBS" >/dev/null
cp "$BR/build/ramulator2" "$BIN/ramulator2"
cp "$BR/src/libramulator.so" "$BIN/"
# ramulator2 has a RUNPATH into the build tree; the harness also sets LD_LIBRARY_PATH=$BIN so the copy next to it is used.
echo "built: $BIN/dramsim3main $BIN/ramulator2"
