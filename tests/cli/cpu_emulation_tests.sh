#!/usr/bin/env bash
CLI_DIR=$(cd "$(dirname "$0")" && pwd)
# One binary on a mixed cluster (docs/cluster.md): the default build (x86-64-v2) runs on older
# CPUs and gives the same bits there. The binary built here runs under qemu-user's CPU models:
# - Nehalem (2008: SSE4.2, no AVX, no FMA): the kernels choose the portable kernel from CPUID,
#   and an instruction above the baseline anywhere in what runs stops it with SIGILL;
# - Haswell (2013: AVX2 + FMA, no AVX-512): the AVX2 kernel, and SIGILL on any AVX-512;
# and natively (this machine's kernel: AVX-512 or AVX2). Every family's tiny checkpoint is
# evaluated on the same small set, and the scores files, embeddings and perplexities must be
# the same bytes in the three runs; each run's provenance names the kernel its CPU chose.
# Usage: cpu_emulation_tests.sh PATH/TO/winokit SOURCE_DIR WINOKIT_MARCH
# Exit 77 (skipped) when the build is not for x86-64-v2 (WINOKIT_MARCH=native and the like are
# meant for one kind of machine).
set -u
WINOKIT=$(realpath "${1:?usage: cpu_emulation_tests.sh PATH/TO/winokit SOURCE_DIR WINOKIT_MARCH}")
SRC=$(realpath "${2:?usage: cpu_emulation_tests.sh PATH/TO/winokit SOURCE_DIR WINOKIT_MARCH}")
MARCH=${3:?usage: cpu_emulation_tests.sh PATH/TO/winokit SOURCE_DIR WINOKIT_MARCH}
if [ "$MARCH" != x86-64-v2 ]; then
  echo "# skipped: WINOKIT_MARCH=$MARCH builds for one kind of machine, not for older CPUs"
  exit 77
fi
source "$CLI_DIR/lib.sh"
if ! command -v qemu-x86_64 >/dev/null; then
  not_ok "qemu-x86_64 is installed (Debian's qemu-user; scripts/setup installs it)"
  echo "1..$((passed + failed))"
  exit 1
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1
export OMP_NUM_THREADS=2
SHARED=$SRC/../shared

# run CPU -- ARGS...: winokit on CPU (native, Nehalem, Haswell), with that CPU's own cache.
run() {
  local cpu=$1
  shift 2
  if [ "$cpu" = native ]; then
    WINOKIT_CACHE_DIR="$WORK/cache-$cpu" "$WINOKIT" "$@"
  else
    WINOKIT_CACHE_DIR="$WORK/cache-$cpu" qemu-x86_64 -cpu "$cpu" "$WINOKIT" "$@" 2>&1 |
      grep -v "TCG doesn't support requested feature"
    return "${PIPESTATUS[0]}"
  fi
}

if ! "$WINOKIT" synth --out demo --count 4 --seed 11 --image-size 64 > synth.log 2>&1; then
  not_ok "synth" "$(tail -3 synth.log)"
  echo "1..$((passed + failed))"
  exit 1
fi

families=(
  "clip-vit|$SHARED/golden/clip/models/tiny-quickgelu-hf|"
  "clip-resnet|$SRC/tests/fixtures/resnet/tiny-rn.pt|--tokenizer $SRC/tests/fixtures/resnet/tokenizer"
  "vilt|$SRC/tests/fixtures/vilt/tiny-rank|"
  "flava|$SRC/tests/fixtures/flava/tiny-pretraining|"
  "siglip|$SRC/tests/fixtures/siglip/tiny-a|"
  "blip|$SRC/tests/fixtures/blip/tiny-itm|"
)
mkdir -p native Nehalem Haswell
for cpu in native Nehalem Haswell; do
  for entry in "${families[@]}"; do
    IFS='|' read -r name model extra <<<"$entry"
    # shellcheck disable=SC2086
    run "$cpu" -- eval --data demo --model "$model" $extra --threads 2 --bootstrap 50 \
      --scores-out "$cpu/$name.scores.jsonl" --json "$cpu/$name.json" > "$cpu/$name.log" 2>&1 ||
      not_ok "eval $name on $cpu" "$(tail -5 "$cpu/$name.log")"
  done
  run "$cpu" -- embed --data demo --model "$SHARED/golden/clip/models/tiny-quickgelu-hf" \
    --threads 2 --out "$cpu/clip.safetensors" > "$cpu/embed.log" 2>&1 ||
    not_ok "embed on $cpu" "$(tail -5 "$cpu/embed.log")"
  run "$cpu" -- perplexity --model "$SRC/tests/golden/gpt2_tiny/f32" --data demo \
    --out "$cpu/ppl.csv" > "$cpu/ppl.log" 2>&1 ||
    not_ok "perplexity on $cpu" "$(tail -5 "$cpu/ppl.log")"
done

# Each CPU chose its kernel: Nehalem the portable one, Haswell AVX2 + FMA.
isa_of() { grep -o '"kernel_isa": *"[^"]*"' "$1" | head -1 | sed 's/.*: *"//; s/"$//'; }
native_isa=$(isa_of native/clip-vit.json)
[ "$(isa_of Nehalem/clip-vit.json)" = portable-fma ] && ok "Nehalem runs the portable kernel" ||
  not_ok "Nehalem's kernel" "$(isa_of Nehalem/clip-vit.json)"
[ "$(isa_of Haswell/clip-vit.json)" = avx2-fma ] && ok "Haswell runs the AVX2 kernel" ||
  not_ok "Haswell's kernel" "$(isa_of Haswell/clip-vit.json)"
[ -n "$native_isa" ] && ok "this machine runs $native_isa" || not_ok "native kernel_isa"

for f in $(cd native && ls -- *.scores.jsonl clip.safetensors ppl.csv 2>/dev/null); do
  for cpu in Nehalem Haswell; do
    if [ -s "native/$f" ] && cmp -s "native/$f" "$cpu/$f"; then
      ok "$f: the same bytes on $cpu as on this machine ($native_isa)"
    else
      not_ok "$f differs on $cpu"
    fi
  done
done
n_scores=$(cd native && ls -- *.scores.jsonl 2>/dev/null | wc -l)
[ "$n_scores" -eq "${#families[@]}" ] && ok "all ${#families[@]} families ran natively" ||
  not_ok "families run natively: $n_scores of ${#families[@]}"

echo "1..$((passed + failed))"
[ "$failed" -eq 0 ]
