#!/usr/bin/env bash
CLI_DIR=$(cd "$(dirname "$0")" && pwd)
# The model matrix: every registered family's tiny fixture x every command that takes --model.
# Each cell either runs (exit 0) or is refused with the one message of the model interface
# ("winokit CMD needs ABILITY; NAME is a FAMILY model, which offers ...", exit 2), as the
# family's abilities say (`winokit models --model DIR --json`). The table of abilities per
# family is also pinned here, so a family cannot silently lose one.
# Usage: model_matrix_tests.sh PATH/TO/winokit SOURCE_DIR
set -u
WINOKIT=$(realpath "${1:?usage: model_matrix_tests.sh PATH/TO/winokit SOURCE_DIR}")
SRC=$(realpath "${2:?usage: model_matrix_tests.sh PATH/TO/winokit SOURCE_DIR}")
WORK=$(mktemp -d)
trap '[ -n "${PID:-}" ] && kill "$PID" 2>/dev/null; rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
export WINOKIT_CACHE_DIR="$WORK/cache"
source "$CLI_DIR/lib.sh"

# family fixture (one tiny checkpoint per registered family)
declare -A FIXTURE=(
  [clip]="$SRC/../shared/golden/clip/models/tiny-quickgelu-hf"
  [vilt]="$SRC/tests/fixtures/vilt/tiny-rank"
  [flava]="$SRC/tests/fixtures/flava/tiny-pretraining"
  [siglip]="$SRC/tests/fixtures/siglip/tiny-a"
  [blip]="$SRC/tests/fixtures/blip/tiny-itm"
  [smolvlm]="$SRC/tests/golden/smolvlm_tiny/model"
  [llava-onevision]="$SRC/tests/fixtures/llava_onevision/model"
)
# what each family can do (pinned)
declare -A ABILITIES=(
  [clip]="pair scores;image and text embeddings (a dual encoder);per-layer hidden states;word-region alignment maps"
  [vilt]="pair scores;word-region alignment maps"
  [flava]="pair scores"
  [siglip]="pair scores;image and text embeddings (a dual encoder)"
  [blip]="pair scores"
  [smolvlm]="pair scores"
  [llava-onevision]="pair scores"
)

# Every registered family has a fixture here.
families=$("$WINOKIT" models --json | python3 -c 'import json,sys; print(" ".join(f["family"] for f in json.load(sys.stdin)))')
for fam in $families; do
  [ -n "${FIXTURE[$fam]:-}" ] && ok "family $fam has a matrix fixture" || not_ok "family $fam has no fixture in model_matrix_tests.sh"
done

"$WINOKIT" synth --out syn --count 8 --seed 5 --image-size 64 >/dev/null || exit 1
mkdir -p wg/images
i=0
for w in sun moon star sea sand tree leaf dog cat fish rock snow fire rain wolf owl; do
  cp "syn/images/ex_$((i % 8))_img_$((i % 2)).png" "wg/images/$w.png"; i=$((i + 1))
done
printf 'cue,R1,R2,R3\nsky,sun,moon,star\nbeach,sea,sand,sun\nforest,tree,leaf,owl\npet,dog,cat,fish\nnight,moon,owl,wolf\nstorm,rain,sea,rock\n' > wg/swow.csv
"$WINOKIT" swow --graph wg/swow.csv --images wg/images --out wg/inst.csv --seed 3 >/dev/null || exit 1
printf 'name,caption\n' > wg/captions.csv
for f in wg/images/*.png; do n=$(basename "$f" .png); printf '%s,a photo of %s\n' "$n" "$n" >> wg/captions.csv; done
printf 'word,replacement\ncircle,ring\nsquare,box\n' > subs.csv
"$WINOKIT" variants generate --data syn --method substitution --substitutions subs.csv --out variants.jsonl >/dev/null || exit 1

# cell FAMILY ABILITY NAME -- COMMAND...: runs when FAMILY offers ABILITY, else the refusal.
cell() {
  local fam=$1 ability=$2 name=$3
  shift 4
  if [[ ";${have};" == *";${ability};"* ]]; then
    expect "$fam: $name runs" 0 "" -- "$@"
  else
    expect "$fam: $name is refused with the one message" 2 "needs ${ability//(/\\(}; .* is a $fam model, which offers" -- "$@"
  fi
}

for fam in clip vilt flava siglip blip smolvlm llava-onevision; do
  M=${FIXTURE[$fam]}
  if [ ! -f "$M/config.json" ]; then
    not_ok "$fam: fixture $M missing"
    continue
  fi
  have=$("$WINOKIT" models --model "$M" --json | python3 -c 'import json,sys; print(";".join(json.load(sys.stdin)["abilities"]))')
  [ "$have" = "${ABILITIES[$fam]}" ] && ok "$fam: abilities as pinned" || not_ok "$fam: abilities" "got: $have"
  fam_of=$("$WINOKIT" models --model "$M" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["family"])')
  [ "$fam_of" = "$fam" ] && ok "$fam: the registry reads the checkpoint as $fam" || not_ok "$fam: read as $fam_of"
  P="pair scores"; E="image and text embeddings (a dual encoder)"; S="per-layer hidden states"; A="word-region alignment maps"
  cell "$fam" "$P" "eval" -- "$WINOKIT" eval --data syn --model "$M" --quiet --scores-out "$fam.scores.jsonl"
  cell "$fam" "$P" "eval again, from the cache" -- "$WINOKIT" eval --data syn --model "$M" --quiet --scores-out "$fam.again.jsonl"
  cmp -s "$fam.scores.jsonl" "$fam.again.jsonl" && ok "$fam: a cached run gives the same scores" || not_ok "$fam: cached scores differ"
  cell "$fam" "$P" "run winoground" -- "$WINOKIT" run winoground --data syn --model "$M" --quiet
  cell "$fam" "$P" "score" -- "$WINOKIT" score --model "$M" syn/images/ex_0_img_0.png "a red circle" "a blue square"
  cell "$fam" "$P" "retrieval" -- "$WINOKIT" retrieval --data syn --model "$M" --quiet
  cell "$fam" "$P" "winogavil --images" -- "$WINOKIT" winogavil --data wg/inst.csv --model "$M" --images wg/images --bootstrap 50 --quiet
  cell "$fam" "$E" "winogavil --captions" -- "$WINOKIT" winogavil --data wg/inst.csv --model "$M" --captions wg/captions.csv --bootstrap 50 --quiet
  cell "$fam" "$P" "variants eval" -- "$WINOKIT" variants eval --data syn --variants variants.jsonl --model "$M" --quiet
  cell "$fam" "$E" "embed" -- "$WINOKIT" embed --data syn --model "$M" --out "$fam.emb.safetensors"
  cell "$fam" "$S" "embed --hidden-states" -- "$WINOKIT" embed --data syn --model "$M" --hidden-states --out "$fam.hid.safetensors"
  cell "$fam" "$S" "probe" -- "$WINOKIT" probe --data syn --model "$M" --quiet --layers final --seeds 1 --epochs 2 --hidden 16 --probes pair-text,pair-image
  cell "$fam" "$P" "bench" -- "$WINOKIT" bench --model "$M" --runs 1 --examples 1 --images 2 --captions 4 --batch-size 2 --json "$fam.bench.json"
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["family"] == sys.argv[2] and j["pairs"] == 4 and j["pairs_per_second_median"] > 0' "$fam.bench.json" "$fam" && ok "$fam: bench reports pairs/s" || not_ok "$fam: bench JSON"
  cell "$fam" "$A" "heatmap" -- "$WINOKIT" heatmap --data syn --model "$M" --examples 0 --out-dir "hm-$fam"
  expect "$fam: models --model" 0 "a $fam model" -- "$WINOKIT" models --model "$M"
  # Family-specific options: taken where the registry says so, else the one refusal.
  takes=$("$WINOKIT" models --json | python3 -c 'import json,sys; print(" ".join(next(f for f in json.load(sys.stdin) if f["family"] == sys.argv[1])["options"]))' "$fam")
  for flag in --preprocess --tokenizer; do
    [[ " $takes " == *" $flag "* ]] && continue
    expect "$fam: $flag is refused with the one message" 2 "$flag is for [a-z, ]+ models; .* is a $fam model" -- "$WINOKIT" score --model "$M" "$flag" x syn/images/ex_0_img_0.png "a red circle"
  done
done

# A language model passed as --model says where it belongs.
expect "a GPT-2 folder as --model points to --lm" 2 "model_type \"gpt2\".*GPT-2 language model .*--lm DIR" -- "$WINOKIT" eval --data syn --model "$SRC/tests/golden/gpt2_tiny/f16"

# serve: every family can be the game's rival (pair scores), its pool encoded at start-up.
# shellcheck source=game_server.sh
. "$SRC/tests/cli/game_server.sh"
for fam in clip vilt flava siglip blip smolvlm llava-onevision; do
  M=${FIXTURE[$fam]}
  [ -f "$M/config.json" ] || continue
  start_game_server "serve-$fam.log" --images wg/images --db "game-$fam.db" --model "$M" --password-cost min
  grep -q "rival ready for 16 images" "serve-$fam.log" && ok "$fam: serve starts with it as the rival" || not_ok "$fam: serve" "$(cat "serve-$fam.log")"
  kill "$PID" 2>/dev/null
  wait "$PID" 2>/dev/null
  PID=
done

# No model-specific branch outside model/: the commands, benchmarks, reports and the game only
# know the interface (comments aside).
FAMILY_NAMES='vilt|flava|siglip|blip|smolvlm|idefics3|llava|Vilt|Flava|Siglip|Blip|SmolVlm|Idefics3|Llava|clip_model|clip_family|ClipRuntime|ClipModel|ClipConfig'
named=$(grep -nE "$FAMILY_NAMES" "$SRC"/tools/winokit/*.cpp "$SRC"/tools/winokit/*.hpp "$SRC"/src/eval/*.cpp \
  "$SRC"/src/game/*.cpp "$SRC"/src/report/*.cpp "$SRC"/src/data/*.cpp "$SRC"/include/winokit/eval/*.hpp \
  "$SRC"/include/winokit/game/*.hpp "$SRC"/include/winokit/report/*.hpp | grep -v '^\S*:[0-9]*: *//')
if [ -n "$named" ]; then
  not_ok "tools/, eval/, game/, report/ and data/ name a model family" "$(echo "$named" | head -5)"
else
  ok "tools/, eval/, game/, report/ and data/ name no model family"
fi

echo "model matrix: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
