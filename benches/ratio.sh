#!/usr/bin/env bash
# Time-ratios of the small workloads' bars (the Rosenbrock gradients, the Iris batch-1 step),
# generated or library against hand-written, timed interleaved: the two alternate in blocks
# of about a millisecond, A B B A, and each round gives one ratio (benches/ratio.rs). Prints
# each pair's median per-call times, the median ratio and its quartiles over the rounds. The
# yardstick rows time a hand-written workload against a second copy of itself: their
# distance from 1 is what the method cannot tell apart on this machine.
#
#   bash benches/ratio.sh                 # all bars, the default build, 400 rounds
#   NATIVE=1 bash benches/ratio.sh        # the same, built with -C target-cpu=native
#   ROUNDS=1000 bash benches/ratio.sh iris_paralens,iris_hand
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-400}
if [ "${NATIVE:-0}" = 1 ]; then
    export RUSTFLAGS="-C target-cpu=native" CARGO_TARGET_DIR=target/native
fi
bin=$(cargo bench -q --bench paralens --no-run 2>&1 | sed -n 's/.*Executable.*(\(.*\)).*/\1/p' | tail -1)
if [ -z "$bin" ]; then
    bin=$(cargo bench --bench paralens --no-run 2>&1 | sed -n 's/.*Executable.*(\(.*\)).*/\1/p' | tail -1)
fi
if [ $# -gt 0 ]; then
    pairs=("$@")
else
    pairs=(iris_hand,iris_hand chained_hand_64,chained_hand_64)
    pairs+=(iris_paralens,iris_hand iris_para_macro,iris_hand)
    for s in 16 64 256; do pairs+=("chained_generated_$s,chained_hand_$s"); done
    for s in 8 16 32 64 128 256; do pairs+=("paired_generated_$s,paired_hand_$s"); done
fi
printf '%-22s %-22s %9s %9s %7s %7s %7s %8s %6s\n' a b "a ns" "b ns" ratio q1 q3 calls rounds
for p in "${pairs[@]}"; do
    PARALENS_RATIO="$p,$rounds" "$bin"
done
