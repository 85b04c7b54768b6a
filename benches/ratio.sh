#!/usr/bin/env bash
# Time-ratios of the small workloads' bars (the Rosenbrock gradients, the Iris batch-1 step),
# generated or library against hand-written, timed interleaved: the two alternate in blocks
# of about a millisecond, A B B A, and each round gives one ratio (benches/ratio.rs). The
# yardstick rows time a hand-written workload against a second copy of itself: their
# distance from 1 is what the method cannot tell apart on this machine.
#
# Each pair runs in PROCS separate processes (default 7): a process's addresses (where the
# allocator and the stack put the data, randomised per process) moved one pair's ratio by up
# to 30% between processes while the rounds within one agreed to a few percent, so the figure
# is the median over processes of each process's median ratio (the lower median of an even
# count), printed with that process's per-call times and the lowest and highest process
# medians. A process that fails is reported and left out.
#
#   bash benches/ratio.sh                 # all bars, the default build
#   NATIVE=1 bash benches/ratio.sh        # the same, built with -C target-cpu=native
#   PROCS=11 ROUNDS=300 bash benches/ratio.sh iris_paralens,iris_hand
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-200}
procs=${PROCS:-7}
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
printf '%-22s %-22s %9s %9s %7s %7s %7s %6s\n' a b "a ns" "b ns" ratio lowest highest procs
for p in "${pairs[@]}"; do
    rows=$(for _ in $(seq "$procs"); do PARALENS_RATIO="$p,$rounds" "$bin" || true; done)
    n=$(printf '%s\n' "$rows" | grep -c . || true)
    if [ "$n" -lt "$procs" ]; then
        echo "ratio.sh: $p: $((procs - n)) of $procs processes failed" >&2
    fi
    if [ "$n" -eq 0 ]; then
        continue
    fi
    # The median process by its median ratio (the lower one of an even count), and its times.
    printf '%s\n' "$rows" | LC_ALL=C sort -g -k5 | awk -v p="$p" '
        { a[NR] = $3; b[NR] = $4; r[NR] = $5 }
        END {
            split(p, w, ",")
            m = int((NR + 1) / 2)
            printf "%-22s %-22s %9.1f %9.1f %7.3f %7.3f %7.3f %6d\n", w[1], w[2], a[m], b[m], r[m], r[1], r[NR], NR
        }'
done
