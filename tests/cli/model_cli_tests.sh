#!/usr/bin/env bash
CLI_DIR=$(cd "$(dirname "$0")" && pwd)
# End-to-end tests of the model paths of the winokit CLI: ResNet CLIPs (OpenCLIP folder and
# OpenAI TorchScript .pt), a hostile archive, and bad model configs / non-finite outputs.
# Usage: model_cli_tests.sh PATH/TO/winokit SOURCE_DIR
set -u
WINOKIT=$(realpath "${1:?usage: model_cli_tests.sh PATH/TO/winokit SOURCE_DIR}")
SRC=$(realpath "${2:?usage: model_cli_tests.sh PATH/TO/winokit SOURCE_DIR}")
FIX="$SRC/tests/fixtures/resnet"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1
export WINOKIT_CACHE_DIR="$WORK/cache"
source "$CLI_DIR/lib.sh"

"$WINOKIT" synth --out syn --count 6 --seed 4 --image-size 64 >/dev/null 2>&1 || not_ok "synth"

# --- ResNet CLIP: the same weights as an OpenCLIP folder and as a TorchScript archive ---
expect "eval --model OpenCLIP ResNet folder" 0 "N = 6" -- "$WINOKIT" eval --data syn --model "$FIX/tiny-rn-openclip" --no-cache --bootstrap 50 --scores-out folder.jsonl
expect "eval --model RN .pt with --tokenizer" 0 "N = 6" -- "$WINOKIT" eval --data syn --model "$FIX/tiny-rn.pt" --tokenizer "$FIX/tokenizer" --no-cache --bootstrap 50 --scores-out archive.jsonl
if [ -s folder.jsonl ] && cmp -s folder.jsonl archive.jsonl; then ok "folder and .pt give identical scores"; else not_ok "folder and .pt give identical scores" "$(diff folder.jsonl archive.jsonl | head -4)"; fi
expect "eval --model ViT .pt" 0 "N = 6" -- "$WINOKIT" eval --data syn --model "$FIX/tiny-vit.pt" --tokenizer "$FIX/tokenizer" --no-cache --bootstrap 50
expect ".pt without a tokenizer says what to pass" 2 "bpe_simple_vocab_16e6.txt.gz.*--tokenizer|--tokenizer.*bpe_simple_vocab_16e6.txt.gz" -- "$WINOKIT" eval --data syn --model "$FIX/tiny-rn.pt" --no-cache
expect "cached re-run of the .pt" 0 "N = 6" -- "$WINOKIT" eval --data syn --model "$FIX/tiny-rn.pt" --tokenizer "$FIX/tokenizer" --bootstrap 50
expect "embed from a .pt" 0 "" -- "$WINOKIT" embed --model "$FIX/tiny-rn.pt" --tokenizer "$FIX/tokenizer" --data syn --out rn.safetensors --no-cache
[ -s rn.safetensors ] && ok "embed wrote the ResNet embeddings" || not_ok "embed wrote the ResNet embeddings"
expect "score with a .pt" 0 "" -- "$WINOKIT" score --model "$FIX/tiny-rn.pt" --tokenizer "$FIX/tokenizer" --no-cache "$(ls syn/images/* | head -1)" "a cat" "a dog"
expect "heatmap says ResNet has no token states" 2 "not available for ResNet" -- "$WINOKIT" heatmap --model "$FIX/tiny-rn.pt" --tokenizer "$FIX/tokenizer" --data syn --examples 0 --html hm.html --no-cache
# Per-layer states of a ResNet (issue 11): refused with the route that works, nothing written.
expect "embed --hidden-states says ResNet has no per-layer states" 2 "not available for ResNet.*--layers final" -- "$WINOKIT" embed --model "$FIX/tiny-rn.pt" --tokenizer "$FIX/tokenizer" --data syn --out rnh.safetensors --hidden-states --no-cache
[ ! -e rnh.safetensors ] && ok "nothing written when ResNet states are refused" || not_ok "nothing written when ResNet states are refused"
expect "probe --pooling mean with a ResNet is refused" 2 "not available for ResNet" -- "$WINOKIT" probe --data syn --model "$FIX/tiny-rn.pt" --tokenizer "$FIX/tokenizer" --pooling mean --no-cache
expect "the hinted route: probe a ResNet's final embeddings from its file" 0 "\| final \|" -- "$WINOKIT" probe --data syn --embeddings rn.safetensors --layers final --probes pair-text --seeds 1 --hidden 8 --epochs 2
expect "hostile TorchScript archive refused by name" 2 "refusing to load os\.system" -- "$WINOKIT" eval --data syn --model "$FIX/hostile.pt" --tokenizer "$FIX/tokenizer" --no-cache

# --- A1 / A10: config sizes are positive integers in range, named with their file ---
# make_vit DIR VISION_FIELDS TEXT_FIELDS: a Hugging Face config with the given extra fields.
make_vit() {
  mkdir -p "$1"
  printf '{"projection_dim": 48, "text_config": {"hidden_size": 64, "num_attention_heads": 1, "num_hidden_layers": 1, "vocab_size": 514 %s}, "vision_config": {"hidden_size": 64, "num_attention_heads": 1, "num_hidden_layers": 1, "image_size": 64 %s}}\n' "$3" "$2" > "$1/config.json"
  cp "$FIX/tokenizer/vocab.json" "$FIX/tokenizer/merges.txt" "$1/"
  touch "$1/model.safetensors"
}
make_vit p0 ', "patch_size": 0' ''
expect "patch_size 0 is refused (no SIGFPE)" 2 "p0/config.json.*vision_config.patch_size" -- "$WINOKIT" eval --data syn --model p0 --no-cache
make_vit h645 ', "hidden_size": 64.5' ''
expect "hidden_size 64.5 is refused" 2 "h645/config.json.*vision_config.hidden_size.*64.5" -- "$WINOKIT" eval --data syn --model h645 --no-cache
make_vit hbig '' ', "hidden_size": 18446744073709551680'
expect "hidden_size 2^64+64 is refused with the field named" 2 "hbig/config.json.*text_config.hidden_size" -- "$WINOKIT" eval --data syn --model hbig --no-cache
make_vit neg ', "num_hidden_layers": -3' ''
expect "negative layers are refused" 2 "vision_config.num_hidden_layers" -- "$WINOKIT" eval --data syn --model neg --no-cache
make_vit eps ', "layer_norm_eps": -1' ''
expect "layer_norm_eps -1 is refused" 2 "eps/config.json.*vision_config.layer_norm_eps" -- "$WINOKIT" eval --data syn --model eps --no-cache
mkdir -p ocl && echo '{"model_cfg": {"vision_cfg": {"image_size": 96, "layers": [2, 0, 1, 1], "width": 8}}}' > ocl/open_clip_config.json
expect "OpenCLIP ResNet stage of 0 blocks is refused" 2 "open_clip_config.json.*vision_cfg.layers" -- "$WINOKIT" eval --data syn --model ocl --no-cache

# --- A2: non-finite model outputs are an error naming the model and the first input ---
expect "NaN weights: exit 2 naming the model and the input" 2 "tiny-nan-openclip.*(image|caption).*not finite" -- "$WINOKIT" eval --data syn --model "$FIX/tiny-nan-openclip" --no-cache --scores-out nan.jsonl --json nan.json
[ ! -e nan.jsonl ] && [ ! -e nan.json ] && ok "NaN model wrote nothing" || not_ok "NaN model wrote nothing"
expect "NaN weights: embed writes nothing" 2 "not finite" -- "$WINOKIT" embed --model "$FIX/tiny-nan-openclip" --data syn --out nan.safetensors --no-cache
[ ! -e nan.safetensors ] && ok "NaN embed wrote nothing" || not_ok "NaN embed wrote nothing"
expect "logit_scale 1000: exit 2 naming the model and the example" 2 "tiny-hot-openclip.*non-finite score for example 0" -- "$WINOKIT" eval --data syn --model "$FIX/tiny-hot-openclip" --no-cache --scores-out hot.jsonl
[ ! -e hot.jsonl ] && ok "huge logit_scale wrote nothing" || not_ok "huge logit_scale wrote nothing"

# --- --model-option KEY=VALUE: a family's settings (SmolVLM's VQAScore question, answer, image
# splitting), refused by the families that do not declare them ---
SMOL="$SRC/tests/golden/smolvlm_tiny/model"
expect "smolvlm with the default question" 0 "N = 6" -- "$WINOKIT" eval --data syn --model "$SMOL" --no-cache --bootstrap 20 --scores-out smol-default.jsonl --json smol-default.json
expect "smolvlm with another question and no image splitting" 0 "N = 6" -- "$WINOKIT" eval --data syn --model "$SMOL" --no-cache --bootstrap 20 --model-option 'question=Is this "{}"? Answer yes or no.' --model-option image-splitting=false --scores-out smol-q.jsonl --json smol-q.json
if [ -s smol-q.jsonl ] && ! cmp -s smol-default.jsonl smol-q.jsonl; then ok "another question gives other scores"; else not_ok "another question gives other scores"; fi
grep -q 'Is this \\"{}\\"? Answer yes or no.' smol-q.json && grep -q '"do_image_splitting": false' smol-q.json && ok "the report names the question and the splitting" || not_ok "the report names the question and the splitting" "$(grep -o '"question_template[^,]*\|"do_image_splitting[^,]*' smol-q.json | head -3)"
expect "a question without {} is refused" 2 "no \{\} for the caption" -- "$WINOKIT" eval --data syn --model "$SMOL" --no-cache --model-option question=Why
expect "image-splitting takes true or false" 2 "true or false" -- "$WINOKIT" eval --data syn --model "$SMOL" --no-cache --model-option image-splitting=maybe
expect "a setting without = is refused" 2 "expected KEY=VALUE" -- "$WINOKIT" eval --data syn --model "$SMOL" --no-cache --model-option answer
expect "a CLIP refuses SmolVLM's setting with the one message" 2 "--model-option question is for smolvlm, llava-onevision models.*clip model" -- "$WINOKIT" eval --data syn --model "$FIX/tiny-rn-openclip" --no-cache --model-option 'question={}?'
expect "an unknown setting is named" 2 "--model-option colour: no model family has this setting" -- "$WINOKIT" eval --data syn --model "$SMOL" --no-cache --model-option colour=red

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
