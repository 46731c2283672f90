#!/usr/bin/env bash
CLI_DIR=$(cd "$(dirname "$0")" && pwd)
# End-to-end tests of ViLT through the winokit CLI, with the tiny seeded checkpoints of
# tests/fixtures/vilt (reference outputs in expected.safetensors).
# Usage: vilt_cli_tests.sh PATH/TO/winokit SOURCE_DIR
set -u
WINOKIT=$(realpath "${1:?usage: vilt_cli_tests.sh PATH/TO/winokit SOURCE_DIR}")
SRC=$(realpath "${2:?usage: vilt_cli_tests.sh PATH/TO/winokit SOURCE_DIR}")
RANK="$SRC/tests/fixtures/vilt/tiny-rank"
ITM="$SRC/tests/fixtures/vilt/tiny-itm"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
export WINOKIT_CACHE_DIR="$WORK/cache"
source "$CLI_DIR/lib.sh"

"$WINOKIT" synth --out syn --count 12 --seed 3 --image-size 64 >/dev/null || exit 1

# --- eval with both heads ---
expect "eval with a ViLT ranking checkpoint" 0 "\| tiny-rank \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \|" -- "$WINOKIT" eval --data syn --model "$RANK" --json rank.json
out=$("$WINOKIT" eval --data syn --model "$RANK" --json rank.json --quiet 2>&1)
echo "$out" | grep -qE "winokit: vilt: caption-image pairs: 0 computed, 48 from the cache \(0 images, 0 captions encoded\)" && ! echo "$out" | grep -q "images computed" \
  && ok "ViLT's second run: every pair from the pair cache, nothing encoded" || not_ok "ViLT run message" "$out"
echo "$out" | grep -q "winokit: loading the vilt checkpoint .*tiny-rank \.\.\." && echo "$out" | grep -qE "winokit: tiny-rank loaded in [0-9.]+ s" \
  && ok "ViLT start-up is announced" || not_ok "ViLT start-up lines" "$out"
[ "$(wc -l < tiny-rank.scores.jsonl)" -eq 48 ] && ok "a score for each of the 4 pairs of 12 examples" || not_ok "scores file" "$(head -3 tiny-rank.scores.jsonl)"
grep -q '"kind": "vilt"' rank.json && grep -q 'rank_output logit' rank.json && grep -q '"pairs_cached": 48' rank.json && ok "provenance names ViLT, its head and the pairs" || not_ok "provenance" "$(grep -A3 '"scorer"' rank.json | head)"
expect "eval with a ViLT ITM checkpoint" 0 "scores written to tiny-itm.scores.jsonl" -- "$WINOKIT" eval --data syn --model "$ITM" --json itm.json --quiet
grep -q 'ITM head softmax probability of match' itm.json && ok "ITM run names its score" || not_ok "ITM provenance"
awk -F'"score":' 'NR>0 {split($2,a,"}"); if (a[1] < 0 || a[1] > 1) bad=1} END {exit bad}' tiny-itm.scores.jsonl && ok "ITM scores are probabilities" || not_ok "ITM scores in [0, 1]"

# --- score: the same number as eval for the same pair ---
want=$(grep '"0_c1_i0"' tiny-rank.scores.jsonl | sed 's/.*"score":\([-0-9.e]*\).*/\1/')
cap1=$(head -1 syn/examples.jsonl | sed 's/.*"caption_1":"\([^"]*\)".*/\1/')
got=$("$WINOKIT" score --model "$RANK" syn/images/ex_0_img_0.png "$cap1" 2>/dev/null | grep -F "| $cap1 |" | sed 's/.*| \([-0-9.]*\) |$/\1/')
awk -v a="$want" -v b="$got" 'BEGIN {d = a - b; exit !(d < 1e-4 && d > -1e-4)}' && ok "score agrees with eval ($got)" || not_ok "score agrees with eval" "eval $want, score $got"
expect "score on the reference image gives the reference logit" 0 "\| a dog bites a man \| 1\.351[12] \|" -- "$WINOKIT" score --model "$RANK" "$SRC/../shared/golden/clip/images/chelsea_odd.jpg" "a dog bites a man"

# --- WinoGAViL: "A/An <cue>" against each candidate image ---
mkdir -p wg/images
i=0
for w in sun moon star sea sand tree leaf dog cat fish rock snow "ice cream" fire rain wolf owl; do
  cp "syn/images/ex_$((i % 12))_img_$((i % 2)).png" "wg/images/$w.png"; i=$((i + 1))
done
printf 'cue,R1,R2,R3\nsky,sun,moon,star\nbeach,sea,sand,sun\nforest,tree,leaf,owl\npet,dog,cat,fish\nwinter,snow,ice cream,fire\nnight,moon,owl,wolf\nstorm,rain,sea,rock\n' > wg/swow.csv
"$WINOKIT" swow --graph wg/swow.csv --images wg/images --out wg/inst.csv --seed 3 >/dev/null
expect "winogavil with ViLT" 0 "\| All \| 7 \| [0-9]+\.[0-9] \|" -- "$WINOKIT" winogavil --data wg/inst.csv --model "$RANK" --images wg/images --bootstrap 200 --json wg/r.json --predictions-out wg/pred.csv
grep -q '"kind": "vilt"' wg/r.json && ok "winogavil provenance names ViLT" || not_ok "winogavil provenance"
expect "winogavil --supervised is refused for ViLT" 2 "winogavil --supervised needs image and text embeddings \(a dual encoder\); tiny-rank is a vilt model" -- "$WINOKIT" winogavil --data wg/inst.csv --model "$RANK" --images wg/images --supervised
expect "winogavil --captions is refused for ViLT" 2 "winogavil --captions needs image and text embeddings" -- "$WINOKIT" winogavil --data wg/inst.csv --model "$RANK" --captions wg/swow.csv

# --- retrieval: full scoring ---
expect "retrieval with ViLT scores every pair" 0 "576 joint forward passes" -- "$WINOKIT" retrieval --data syn --model "$ITM" --markdown r.md --matrix-out m.safetensors
grep -qE "\| text -> image \| [0-9.]+ \|" r.md && ok "retrieval table" || not_ok "retrieval table" "$(cat r.md)"

# --- heatmap: IPOT word-patch alignment ---
mkdir -p hm
expect "heatmap with ViLT" 0 "rendered [0-9]+ word-patch maps for 2 example" -- "$WINOKIT" heatmap --data syn --model "$RANK" --examples 0,3 --html hm.html --out-dir hm
grep -q 'IPOT' hm.html && compgen -G 'hm/ex0_i0_c0_t0_*.png' >/dev/null && grep -q 'name="viewport"' hm.html && grep -q '<span>not aligned</span><span>most aligned</span>' hm.html \
  && ok "heatmap outputs (PNGs named by word, the shared page with its colour scale)" || not_ok "heatmap outputs" "$(ls hm | head -3)"

# --- serve: ViLT as the game's rival (the server starts with its pool embedded) ---
# shellcheck source=game_server.sh
. "$SRC/tests/cli/game_server.sh"
mkdir -p pool && cp syn/images/*.png pool/
start_game_server serve.log --images pool --db game.db --model "$RANK" --password-cost min
grep -q "rival $RANK (vilt)" serve.log && ok "serve starts with a ViLT rival" || not_ok "serve with ViLT" "$(cat serve.log)"
kill "$PID" 2>/dev/null; wait "$PID" 2>/dev/null

# --- commands that need embeddings refuse ViLT clearly ---
for cmd in "embed --data syn --out e.safetensors" "probe --data syn"; do
  # shellcheck disable=SC2086
  expect "$(echo "$cmd" | cut -d' ' -f1) refuses ViLT" 2 "needs .*; tiny-rank is a vilt model, which offers pair scores, word-region alignment maps" -- "$WINOKIT" $cmd --model "$RANK"
done
expect "bench times VILT end to end" 0 '"family": "vilt"' -- "$WINOKIT" bench --runs 1 --examples 1 --model "$RANK"
expect "flags of other families are refused" 2 "--preprocess is for [a-z, ]*clip models; .* is a (vilt|flava) model" -- "$WINOKIT" eval --data syn --model "$RANK" --preprocess hf

# --- bad checkpoints: clear errors, nothing written ---
mkdir -p bad1 bad2 bad3
cp "$RANK"/*.json "$RANK"/vocab.txt bad1/
expect "missing weights" 3 "no weights in" -- "$WINOKIT" eval --data syn --model bad1 --scores-out bad1.jsonl
[ ! -e bad1.jsonl ] && ok "no scores file after a failed run" || not_ok "half result written"
cp "$RANK"/* bad2/ && sed -i 's/"hidden_size": 32/"hidden_size": 48/' bad2/config.json
expect "shape mismatch names the tensor" 2 "vilt.embeddings.*shape|shape.*vilt.embeddings" -- "$WINOKIT" eval --data syn --model bad2
cp "$RANK"/* bad3/ && sed -i 's/"hidden_act": "gelu"/"hidden_act": "swish"/' bad3/config.json
expect "unsupported activation names the field" 2 "config.json.*hidden_act" -- "$WINOKIT" eval --data syn --model bad3

echo "# $passed passed, $failed failed"
[ "$failed" -eq 0 ]
