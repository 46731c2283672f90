#!/usr/bin/env bash
CLI_DIR=$(cd "$(dirname "$0")" && pwd)
# End-to-end tests of FLAVA through the winokit CLI on the demo set, with the tiny seeded
# checkpoints of tests/fixtures/flava (reference outputs in expected.safetensors), both heads,
# and retrieval --rerank K for the ITM models (FLAVA and ViLT).
# Usage: flava_cli_tests.sh PATH/TO/winokit SOURCE_DIR
set -u
WINOKIT=$(realpath "${1:?usage: flava_cli_tests.sh PATH/TO/winokit SOURCE_DIR}")
SRC=$(realpath "${2:?usage: flava_cli_tests.sh PATH/TO/winokit SOURCE_DIR}")
PRE="$SRC/tests/fixtures/flava/tiny-pretraining"   # FlavaForPreTraining: both heads
MOD="$SRC/tests/fixtures/flava/tiny-model"         # FlavaModel: contrastive only
VILT="$SRC/tests/fixtures/vilt/tiny-itm"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
export WINOKIT_CACHE_DIR="$WORK/cache"
source "$CLI_DIR/lib.sh"

"$WINOKIT" demo --out demo --count 12 --no-clip >/dev/null 2>&1 || exit 1
DATA=demo/synthetic

# --- eval with each head ---
expect "eval: the ITM head by default" 0 "\| tiny-pretraining-itm \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \|" -- "$WINOKIT" eval --data $DATA --model "$PRE" --json itm.json
[ "$(wc -l < tiny-pretraining-itm.scores.jsonl)" -eq 48 ] && ok "a score for each of the 4 pairs of 12 examples" || not_ok "scores file" "$(head -3 tiny-pretraining-itm.scores.jsonl)"
grep -q '"kind": "flava"' itm.json && grep -q '"head": "itm"' itm.json && grep -q '"head_choice": "default: the checkpoint has the ITM head' itm.json && grep -q '"pairs_computed": 48' itm.json \
  && ok "provenance names FLAVA, the head and why" || not_ok "ITM provenance" "$(grep -n head itm.json | head)"
awk -F'"score":' '{split($2,a,"}"); if (a[1] < 0 || a[1] > 1) bad=1} END {exit bad}' tiny-pretraining-itm.scores.jsonl && ok "ITM scores are probabilities" || not_ok "ITM scores in [0, 1]"
expect "eval: FLAVA's second run takes every pair from the pair cache, and announces its start-up" 0 "winokit: loading the flava checkpoint .*winokit: tiny-pretraining-itm loaded in [0-9.]+ s.*winokit: flava: caption-image pairs: 0 computed, 48 from the cache" -- bash -c '"$0" eval --data "$1" --model "$2" --quiet --scores-out again.jsonl 2>&1 | tr "\n" " "' "$WINOKIT" "$DATA" "$PRE"
expect "eval --head contrastive" 0 "scores written to tiny-pretraining-contrastive.scores.jsonl" -- "$WINOKIT" eval --data $DATA --model "$PRE" --head contrastive --json con.json --quiet
grep -q '"head": "contrastive"' con.json && grep -q 'exp(logit_scale)' con.json && ok "contrastive run names its head and score" || not_ok "contrastive provenance"
cmp -s tiny-pretraining-itm.scores.jsonl tiny-pretraining-contrastive.scores.jsonl && not_ok "the two heads give different scores" || ok "the two heads give different scores"
expect "eval: a FlavaModel checkpoint defaults to contrastive" 0 "scores written to tiny-model-contrastive.scores.jsonl" -- "$WINOKIT" eval --data $DATA --model "$MOD" --json mod.json --quiet
grep -q 'has no ITM head' mod.json && ok "the default is explained" || not_ok "FlavaModel head_choice"
cmp -s tiny-model-contrastive.scores.jsonl tiny-pretraining-contrastive.scores.jsonl && ok "both layouts give the same contrastive scores" || not_ok "layouts agree"
expect "--head itm without the ITM head" 2 "no ITM head|without the ITM head" -- "$WINOKIT" eval --data $DATA --model "$MOD" --head itm
expect "an unknown head" 2 "FLAVA's heads are itm and contrastive, not 'pooled'" -- "$WINOKIT" eval --data $DATA --model "$PRE" --head pooled
expect "--head on a ViLT checkpoint" 2 "--head is for FLAVA" -- "$WINOKIT" eval --data $DATA --model "$VILT" --head itm

# --- score: the reference's numbers, and the same numbers as eval ---
expect "score on the reference image gives the reference ITM probability" 0 "\| a dog bites a man \| 0\.3230 \|" -- "$WINOKIT" score --model "$PRE" "$SRC/../shared/golden/clip/images/chelsea_odd.jpg" "a dog bites a man"
expect "score --head contrastive gives the reference contrastive logit" 0 "\| a dog bites a man \| 0\.567[56] \|" -- "$WINOKIT" score --model "$PRE" --head contrastive "$SRC/../shared/golden/clip/images/chelsea_odd.jpg" "a dog bites a man"
want=$(grep '"0_c0_i0"' tiny-pretraining-itm.scores.jsonl | sed 's/.*"score":\([-0-9.e]*\).*/\1/')
cap0=$(head -1 $DATA/examples.jsonl | sed 's/.*"caption_0":"\([^"]*\)".*/\1/')
got=$("$WINOKIT" score --model "$PRE" $DATA/images/ex_0_img_0.png "$cap0" 2>/dev/null | grep -F "| $cap0 |" | awk -F'|' '{gsub(/ /, "", $3); print $3}')
awk -v a="$want" -v b="$got" 'BEGIN {d = a - b; exit !(b != "" && d < 1e-4 && d > -1e-4)}' && ok "score agrees with eval ($got)" || not_ok "score agrees with eval" "eval $want, score $got"
expect "score with a FlavaModel checkpoint: contrastive only" 0 "has no ITM head" -- "$WINOKIT" score --model "$MOD" $DATA/images/ex_0_img_0.png "a caption"

# --- WinoGAViL: "A/An <cue>" against each candidate image ---
mkdir -p wg/images
i=0
for f in $DATA/images/*; do
  [ $i -ge 17 ] && break
  w=$(echo sun moon star sea sand tree leaf dog cat fish rock snow ice fire rain wolf owl | cut -d' ' -f$((i + 1)))
  cp "$f" "wg/images/$w.${f##*.}"; i=$((i + 1))
done
printf 'cue,R1,R2,R3\nsky,sun,moon,star\nbeach,sea,sand,sun\nforest,tree,leaf,owl\npet,dog,cat,fish\nwinter,snow,ice,fire\nnight,moon,owl,wolf\nstorm,rain,sea,rock\n' > wg/swow.csv
"$WINOKIT" swow --graph wg/swow.csv --images wg/images --out wg/inst.csv --seed 3 >/dev/null
expect "winogavil with FLAVA" 0 "\| All \| 7 \| [0-9]+\.[0-9] \|" -- "$WINOKIT" winogavil --data wg/inst.csv --model "$PRE" --images wg/images --bootstrap 200 --json wg/r.json
grep -q '"kind": "flava"' wg/r.json && grep -q '"head": "itm"' wg/r.json && ok "winogavil provenance names FLAVA and its head" || not_ok "winogavil provenance"
expect "winogavil --captions is refused for FLAVA" 2 "winogavil --captions needs image and text embeddings" -- "$WINOKIT" winogavil --data wg/inst.csv --model "$PRE" --captions wg/swow.csv

# --- retrieval: full scoring, the contrastive head, and --rerank K ---
expect "retrieval with FLAVA ITM scores every pair" 0 "576 joint forward passes" -- "$WINOKIT" retrieval --data $DATA --model "$PRE" --json full.json --markdown full.md
grep -qE "\| text -> image \| [0-9.]+ \|" full.md && ok "retrieval table" || not_ok "retrieval table" "$(cat full.md)"
expect "retrieval with the contrastive head" 0 "text -> image" -- "$WINOKIT" retrieval --data $DATA --model "$PRE" --head contrastive --json con_r.json
expect "retrieval --rerank 3 (FLAVA's own contrastive candidates)" 0 "re-ranking the top 3 of 24 x 24 candidates: [0-9]+ pairs re-scored by tiny-pretraining-itm instead of 576" -- "$WINOKIT" retrieval --data $DATA --model "$PRE" --rerank 3 --json rr3.json
grep -q '"pairs_scored"' rr3.json && grep -q '"k": 3' rr3.json && ok "the re-ranked run records K and the pairs scored" || not_ok "rerank provenance"
# K = every item: the re-ranked order is the ITM order, so the recalls equal full scoring's.
"$WINOKIT" retrieval --data $DATA --model "$PRE" --rerank 24 --json rr24.json >/dev/null 2>&1
pct() { grep -A5 "\"$1\"" "$2" | tr -d ' \n' | sed 's/.*\[\([^]]*\)\].*/\1/'; }
[ -n "$(pct text_to_image_percent full.json)" ] && [ "$(pct text_to_image_percent full.json)" = "$(pct text_to_image_percent rr24.json)" ] \
  && [ "$(pct image_to_text_percent full.json)" = "$(pct image_to_text_percent rr24.json)" ] \
  && ok "--rerank with K = all equals full ITM scoring" || not_ok "--rerank 24 vs full" "$(pct text_to_image_percent full.json) / $(pct text_to_image_percent rr24.json)"
expect "ViLT --rerank with FLAVA's contrastive candidates" 0 "pairs re-scored by tiny-itm instead of 576" -- "$WINOKIT" retrieval --data $DATA --model "$VILT" --rerank 2 --rerank-with "$PRE"
CLIP="$SRC/tests/fixtures/resnet/tiny-rn-openclip"
expect "ViLT --rerank with a CLIP folder's candidates" 0 "re-ranking the top 2 of 24 x 24 candidates" -- "$WINOKIT" retrieval --data $DATA --model "$VILT" --rerank 2 --rerank-with "$CLIP" --no-cache --json vr2.json
grep -q '"kind": "vilt"' vr2.json && grep -q '"candidates"' vr2.json && ok "the ViLT re-ranked run records its candidates" || not_ok "ViLT rerank provenance"
"$WINOKIT" retrieval --data $DATA --model "$VILT" --json vfull.json >/dev/null 2>&1
"$WINOKIT" retrieval --data $DATA --model "$VILT" --rerank 24 --rerank-with "$CLIP" --no-cache --json vr24.json >/dev/null 2>&1
[ -n "$(pct text_to_image_percent vfull.json)" ] && [ "$(pct text_to_image_percent vfull.json)" = "$(pct text_to_image_percent vr24.json)" ] \
  && [ "$(pct image_to_text_percent vfull.json)" = "$(pct image_to_text_percent vr24.json)" ] \
  && ok "ViLT --rerank with K = all equals full scoring" || not_ok "ViLT --rerank 24 vs full" "$(pct text_to_image_percent vfull.json) / $(pct text_to_image_percent vr24.json)"
expect "--rerank on a dual encoder is refused" 2 "is for image-text matching models" -- "$WINOKIT" retrieval --data $DATA --model "$CLIP" --rerank 2
expect "ViLT --rerank needs candidates" 2 "needs --rerank-with DIR" -- "$WINOKIT" retrieval --data $DATA --model "$VILT" --rerank 2
expect "--rerank with the contrastive head is refused" 2 "drop --head contrastive" -- "$WINOKIT" retrieval --data $DATA --model "$PRE" --head contrastive --rerank 2
expect "--rerank-with alone is refused" 2 "needs --rerank K" -- "$WINOKIT" retrieval --data $DATA --model "$PRE" --rerank-with "$PRE"

# --- serve: FLAVA as the game's rival (the server starts with its pool encoded) ---
# shellcheck source=game_server.sh
. "$SRC/tests/cli/game_server.sh"
mkdir -p pool && cp $DATA/images/*.png pool/
start_game_server serve.log --images pool --db game.db --model "$PRE" --password-cost min
grep -q "rival $PRE (flava, itm head)" serve.log && ok "serve starts with a FLAVA rival" || not_ok "serve with FLAVA" "$(cat serve.log)"
kill "$PID" 2>/dev/null; wait "$PID" 2>/dev/null

# --- commands FLAVA is not for: clear errors ---
expect "heatmap refuses FLAVA" 2 "heatmap needs word-region alignment maps; tiny-pretraining-itm is a flava model, which offers pair scores" -- "$WINOKIT" heatmap --data $DATA --model "$PRE" --examples 0 --html hm.html
for cmd in "embed --data $DATA --out e.safetensors" "probe --data $DATA"; do
  # shellcheck disable=SC2086
  expect "$(echo "$cmd" | cut -d' ' -f1) refuses FLAVA" 2 "needs .*; tiny-pretraining-itm is a flava model, which offers pair scores" -- "$WINOKIT" $cmd --model "$PRE"
done
expect "bench times FLAVA end to end" 0 '"family": "flava"' -- "$WINOKIT" bench --runs 1 --examples 1 --model "$PRE"
expect "flags of other families are refused" 2 "--preprocess is for [a-z, ]*clip models; .* is a (vilt|flava) model" -- "$WINOKIT" eval --data $DATA --model "$PRE" --preprocess hf

# --- bad checkpoints: clear errors, nothing written ---
mkdir -p bad1 bad2 bad3
cp "$PRE"/*.json "$PRE"/vocab.txt bad1/
expect "missing weights" 3 "no weights in" -- "$WINOKIT" eval --data $DATA --model bad1 --scores-out bad1.jsonl
[ ! -e bad1.jsonl ] && ok "no scores file after a failed run" || not_ok "half result written"
cp "$PRE"/* bad2/ && sed -i 's/"projection_dim": 20/"projection_dim": 28/' bad2/config.json
expect "shape mismatch names the tensor and both shapes" 2 "flava.image_projection.*expected shape.*28.*found.*20" -- "$WINOKIT" eval --data $DATA --model bad2
cp "$PRE"/* bad3/ && sed -i '0,/"hidden_act": "gelu"/s//"hidden_act": "swish"/' bad3/config.json
expect "unsupported activation names the field" 2 "config.json.*hidden_act" -- "$WINOKIT" eval --data $DATA --model bad3

echo "# $passed passed, $failed failed"
[ "$failed" -eq 0 ]
