#!/usr/bin/env bash
# MNIST and Fashion-MNIST in their original IDX layout (gzip), checked against the published
# SHA-256 sums, for the examples' `--data DIR` and the tests' PARALENS_DATA.
#
#   bash scripts/fetch-data.sh DIR            # download into DIR/mnist and DIR/fashion-mnist, then verify
#   bash scripts/fetch-data.sh --verify DIR   # verify a folder already there (no network)
#
# Then: export PARALENS_DATA=DIR (the tests), `--data DIR/mnist` (the examples).
set -euo pipefail

# The files' SHA-256 (the originals, byte for byte).
SUMS='440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609  mnist/train-images-idx3-ubyte.gz
3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c  mnist/train-labels-idx1-ubyte.gz
8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6  mnist/t10k-images-idx3-ubyte.gz
f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6  mnist/t10k-labels-idx1-ubyte.gz
3aede38d61863908ad78613f6a32ed271626dd12800ba2636569512369268a84  fashion-mnist/train-images-idx3-ubyte.gz
a04f17134ac03560a47e3764e11b92fc97de4d1bfaf8ba1a3aa29af54cc90845  fashion-mnist/train-labels-idx1-ubyte.gz
346e55b948d973a97e58d2351dde16a484bd415d4595297633bb08f03db6a073  fashion-mnist/t10k-images-idx3-ubyte.gz
67da17c76eaffca5446c3361aaab5c3cd6d1c2608764d35dfb1850b086bf8dd5  fashion-mnist/t10k-labels-idx1-ubyte.gz'

# Where each set is published (the mirrors torchvision and the Fashion-MNIST authors use).
MNIST_URL=https://ossci-datasets.s3.amazonaws.com/mnist
FASHION_URL=http://fashion-mnist.s3-website.eu-central-1.amazonaws.com

usage() {
    echo "usage: bash scripts/fetch-data.sh [--verify] DIR" >&2
    exit 2
}

verify() {
    local dir=$1 bad=0 sum path
    while read -r sum path; do
        if [ ! -f "$dir/$path" ]; then
            echo "missing: $dir/$path" >&2
            bad=1
        elif [ "$(sha256sum "$dir/$path" | cut -d' ' -f1)" != "$sum" ]; then
            echo "wrong SHA-256 (a partial or altered download): $dir/$path" >&2
            bad=1
        fi
    done <<<"$SUMS"
    if [ "$bad" -ne 0 ]; then
        echo "$dir does not hold MNIST and Fashion-MNIST as published" >&2
        exit 1
    fi
    echo "$dir: MNIST and Fashion-MNIST verified (8 files)"
}

fetch() {
    local dir=$1 sum path url
    mkdir -p "$dir/mnist" "$dir/fashion-mnist"
    while read -r sum path; do
        [ -f "$dir/$path" ] && [ "$(sha256sum "$dir/$path" | cut -d' ' -f1)" = "$sum" ] && continue
        case $path in
        mnist/*) url=$MNIST_URL/${path#mnist/} ;;
        *) url=$FASHION_URL/${path#fashion-mnist/} ;;
        esac
        echo "downloading $url" >&2
        curl --fail --location --silent --show-error --output "$dir/$path.part" "$url"
        mv "$dir/$path.part" "$dir/$path"
    done <<<"$SUMS"
    verify "$dir"
}

case ${1:-} in
--verify) [ $# -eq 2 ] || usage; verify "$2" ;;
-h | --help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//' ;;
"" | -*) usage ;;
*) [ $# -eq 1 ] || usage; fetch "$1" ;;
esac
