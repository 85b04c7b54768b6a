#!/usr/bin/env bash
# Instructions per call of the small workloads (the Rosenbrock gradients, the Iris batch-1
# step), generated or library against hand-written, counted by valgrind's callgrind: the
# same count for the same binary whatever else the machine runs, where criterion's ratios
# on a shared 2-vCPU machine move by 10-30% between runs. Each workload runs once with
# n = 0 and once with n calls; the difference over n is its count per call, setup
# excluded. The default build only: valgrind does not run AVX-512 code, which a native
# build on such a machine contains.
#
#   bash benches/count.sh            # all workloads, n = 20000
#   N=5000 bash benches/count.sh chained_generated_64 chained_hand_64
set -euo pipefail
cd "$(dirname "$0")/.."
n=${N:-20000}
bin=$(cargo bench -q --bench paralens --no-run 2>&1 | sed -n 's/.*Executable.*(\(.*\)).*/\1/p' | tail -1)
if [ -z "$bin" ]; then
    # `-q` hides the line on some cargo versions: ask again without it.
    bin=$(cargo bench --bench paralens --no-run 2>&1 | sed -n 's/.*Executable.*(\(.*\)).*/\1/p' | tail -1)
fi
count() {
    PARALENS_COUNT="$1:$2" valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" 2>&1 |
        sed -n 's/.*Collected : *\([0-9]*\).*/\1/p'
}
if [ $# -gt 0 ]; then
    workloads=("$@")
else
    workloads=()
    for s in 16 64 256; do workloads+=("chained_generated_$s" "chained_hand_$s"); done
    for s in 8 16 32 64 128 256; do workloads+=("paired_generated_$s" "paired_hand_$s"); done
    workloads+=(iris_paralens iris_para_macro iris_hand)
fi
printf '%-24s %14s\n' workload "instr/call"
for w in "${workloads[@]}"; do
    base=$(count "$w" 0)
    full=$(count "$w" "$n")
    awk -v w="$w" -v a="$base" -v b="$full" -v n="$n" 'BEGIN { printf "%-24s %14.1f\n", w, (b - a) / n }'
done
