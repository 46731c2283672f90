#!/usr/bin/env bash
# Checks that two winokit binaries (e.g. main's and a refactoring branch's) give byte-identical
# model outputs: `eval --model` scores and per-example files, and `embed` embeddings, for every
# golden checkpoint in ../shared/golden/clip/models on the same synthetic demo set, `eval` scores
# of the other families' tiny fixtures (ViLT, FLAVA, SigLIP, BLIP), plus the demo's own random
# ViT-B/32 run. Exit 0 when everything is identical.
#
#   scripts/compare_model_scores.sh OLD_WINOKIT NEW_WINOKIT [SHARED_DIR]
set -u
OLD=$(realpath "${1:?usage: compare_model_scores.sh OLD_WINOKIT NEW_WINOKIT [SHARED_DIR]}")
NEW=$(realpath "${2:?usage: compare_model_scores.sh OLD_WINOKIT NEW_WINOKIT [SHARED_DIR]}")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SHARED=$(realpath "${3:-$ROOT/../shared}")
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1
different=0
same=0
check() {  # check LABEL FILE
  if cmp -s "old/$2" "new/$2"; then
    same=$((same + 1)); echo "same      $1 ($2, $(wc -c < "new/$2") bytes)"
  else
    different=$((different + 1)); echo "DIFFERENT $1 ($2)"
  fi
}
"$NEW" synth --out demo --count 24 --seed 7 --image-size 96 > /dev/null
mkdir -p old new
for m in "$SHARED"/golden/clip/models/*/; do
  name=$(basename "$m")
  tok=()  # OpenCLIP folders carry no tokenizer: use the golden vocabulary
  [ -f "$m/vocab.json" ] || tok=(--tokenizer "$SHARED/golden/clip/vocab")
  for side in old new; do
    bin=$OLD; [ "$side" = new ] && bin=$NEW
    "$bin" eval --data demo --model "$m" "${tok[@]}" --no-cache --threads 2 --bootstrap 100 \
      --scores-out "$side/$name.scores.jsonl" --per-example "$side/$name.per.jsonl" > /dev/null 2>&1 \
      || echo "eval failed: $side $name"
    "$bin" embed --data demo --model "$m" "${tok[@]}" --no-cache --threads 2 --out "$side/$name.safetensors" \
      > /dev/null 2>&1 || echo "embed failed: $side $name"
  done
  check "$name eval scores" "$name.scores.jsonl"
  check "$name per-example" "$name.per.jsonl"
  check "$name embeddings" "$name.safetensors"
done
# The other families' tiny fixtures (tests/fixtures): eval scores (and embeddings where the family
# has them).
for m in "$ROOT"/tests/fixtures/vilt/tiny-rank "$ROOT"/tests/fixtures/vilt/tiny-itm \
         "$ROOT"/tests/fixtures/flava/tiny-pretraining "$ROOT"/tests/fixtures/siglip/tiny-a \
         "$ROOT"/tests/fixtures/blip/tiny-itm; do
  [ -f "$m/config.json" ] || continue
  name=$(basename "$(dirname "$m")")-$(basename "$m")
  for side in old new; do
    bin=$OLD; [ "$side" = new ] && bin=$NEW
    "$bin" eval --data demo --model "$m" --no-cache --threads 2 --bootstrap 100 \
      --scores-out "$side/$name.scores.jsonl" --per-example "$side/$name.per.jsonl" > /dev/null 2>&1 \
      || echo "eval failed: $side $name"
  done
  check "$name eval scores" "$name.scores.jsonl"
  check "$name per-example" "$name.per.jsonl"
done
for side in old new; do
  bin=$OLD; [ "$side" = new ] && bin=$NEW
  "$bin" demo --out "$side/demo-run" --count 24 --seed 7 --threads 2 > "$side/demo.txt" 2>&1
done
for f in $(cd new/demo-run && find . -name '*.jsonl' | sort); do
  check "demo (random ViT-B/32)" "demo-run/$f"
done
echo "$same identical, $different different"
[ "$different" -eq 0 ] && [ "$same" -gt 0 ]
