#!/usr/bin/env bash
# bench/run.sh: entry point of `make bench` (run as `BUILD=build bash bench/run.sh`).
#
# Runs every benchmark of bench/ in turn from the repository root, so a relative BUILD is taken
# from there, as make does. Each benchmark prints its Markdown table on stdout and writes it under
# $BUILD/bench/; the figures quoted in docs/BENCHMARKS.md come from these tables. Benchmarks need
# root (kprofd loads BPF programs) and an otherwise idle machine: nothing here asserts on time.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
export BUILD=${BUILD:-build}

bash bench/slowdown.sh
bash bench/calls.sh
bash bench/paths.sh
bash bench/hwbp.sh
BU_SHORT=1 bash bench/budget.sh
mkdir -p "$BUILD/bench" && bash bench/spp.sh | tee "$BUILD/bench/spp.md"
bash bench/threads.sh # BEFORE=DIR adds a build to compare with
bash bench/http.sh
mkdir -p "$BUILD/bench" && SC_SHORT=1 bash bench/scale.sh | tee "$BUILD/bench/scale.md"
bash bench/http_fleet.sh
RP_SHORT=1 bash bench/replay.sh
mkdir -p "$BUILD/bench" && WF_SHORT=1 bash bench/window_files.sh | tee "$BUILD/bench/window_files.md"
mkdir -p "$BUILD/bench"
"$BUILD/bench_hcct" | tee "$BUILD/bench/hcct.md"
"$BUILD/bench_ksf" | tee "$BUILD/bench/ksf.md"
"$BUILD/bench_ingest" -n 400000 | tee "$BUILD/bench/ingest_replay.md"
