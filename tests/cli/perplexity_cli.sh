#!/usr/bin/env bash
CLI_DIR=$(cd "$(dirname "$0")" && pwd)
# End-to-end tests of `winokit perplexity`, `eval --perplexity/--lm` (Table 6, left) and
# `compare --run-info` (Table 7), on the tiny GPT-2 checkpoints of tests/golden/gpt2_tiny.
# Usage: perplexity_cli.sh PATH/TO/winokit
set -u
WINOKIT=$(realpath "${1:?usage: perplexity_cli.sh PATH/TO/winokit}")
TINY=$(realpath "$(dirname "${BASH_SOURCE[0]}")/../golden/gpt2_tiny")
VOCAB=$(realpath "$(dirname "${BASH_SOURCE[0]}")/../fixtures/gpt2_vocab")
LLAMA=$(realpath "$(dirname "${BASH_SOURCE[0]}")/../golden/llama_tiny")
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1
export WINOKIT_CACHE_DIR="$WORK/cache"
source "$CLI_DIR/lib.sh"

mkdir -p ds
captions=("an old dog" "a young cat" "the red cup" "a blue cup" "it's a fire" "a fire truck"
  "more birds" "more snakes" "a big tree" "a small tree" "two people" "one person")
for i in 0 1 2 3 4 5; do
  printf '{"id": %d, "caption_0": "%s", "caption_1": "%s", "image_0": "ex_%d_0", "image_1": "ex_%d_1", "tag": "Noun", "secondary_tag": "", "num_main_preds": 1, "collapsed_tag": "Object"}\n' \
    "$i" "${captions[$((2 * i))]}" "${captions[$((2 * i + 1))]}" "$i" "$i" >> ds/examples.jsonl
done

expect "perplexity writes the table" 0 "12 captions \(0 from the cache\)" -- "$WINOKIT" perplexity --model "$TINY/f32" --data ds --out ppl.csv
grep -q '"definition": "mean_nll = mean negative log-likelihood (nats) of caption tokens 2..n' ppl.csv.json && grep -q 'perplexity_exp2 = 2^mean_nll' ppl.csv.json && ok "the sidecar states the definition" || not_ok "definition sidecar" "$(cat ppl.csv.json)"
[ "$(head -1 ppl.csv)" = "id,caption,tokens,mean_nll,perplexity,perplexity_exp2" ] && [ "$(wc -l < ppl.csv)" -eq 13 ] && ok "one row per caption, header first" || not_ok "rows" "$(cat ppl.csv)"
strict_csv ppl.csv 6 && ok "perplexity --out is a plain CSV" || not_ok "plain CSV" "$(head -3 ppl.csv)"
python3 -c '
import csv, math, sys
for r in csv.DictReader(open("ppl.csv")):
    n = float(r["mean_nll"])
    assert math.isclose(float(r["perplexity"]), math.exp(n), rel_tol=1e-15), r
    assert math.isclose(float(r["perplexity_exp2"]), 2 ** n, rel_tol=1e-15), r
' && ok "perplexity = e^mean_nll and perplexity_exp2 = 2^mean_nll" || not_ok "perplexity columns"
expect "perplexity reports progress in logs (done/total, rate)" 0 "winokit: perplexity 12/12 \(100%\), ([0-9.e+]+/s, [0-9]+:[0-9]{2} elapsed|done)" -- env WINOKIT_PROGRESS_SECONDS=0 "$WINOKIT" perplexity --model "$TINY/f32" --data ds --out ppl_progress.csv --no-cache
expect "a second run comes from the cache" 0 "12 captions \(12 from the cache\)" -- "$WINOKIT" perplexity --model "$TINY/f32" --data ds --out ppl2.csv
cmp -s ppl.csv ppl2.csv && ok "cached figures are identical" || not_ok "cached figures" "$(diff ppl.csv ppl2.csv | head)"
"$WINOKIT" perplexity --model "$TINY/f32" --data ds --out ppl3.csv --no-cache --threads 1 2>/dev/null
cmp -s ppl.csv ppl3.csv && ok "one thread gives the same figures" || not_ok "thread invariance"
expect "the .bin checkpoint (bf16, transformer. prefix) runs too" 0 "12 captions" -- "$WINOKIT" perplexity --model "$TINY/bf16_bin" --data ds --out bin.csv
expect "--bos states its definition" 0 "<\|endoftext\|> prepended" -- "$WINOKIT" perplexity --model "$TINY/f32" --data ds --out bos.csv --bos
printf '{"id": 9, "caption_0": "a", "caption_1": "a b", "image_0": "x", "image_1": "y"}\n' > one.jsonl
mkdir -p one && cp one.jsonl one/examples.jsonl
expect "a one-token caption without --bos is an error naming it" 2 "example 9, caption 0 \('a'\) has 1 GPT-2 token.*--bos" -- "$WINOKIT" perplexity --model "$TINY/f32" --data one --out x.csv
[ ! -e x.csv ] && ok "nothing written on error" || not_ok "nothing written on error"
expect "the same caption with --bos" 0 "2 captions" -- "$WINOKIT" perplexity --model "$TINY/f32" --data one --out x.csv --bos

# Bad model folders.
mkdir -p cut && cp "$TINY/f32/"* cut/ && head -c 100 "$TINY/f32/merges.txt" > cut/merges.txt
expect "a truncated merges.txt is refused" 2 "merges.txt.*(truncated|two symbols)" -- "$WINOKIT" perplexity --model cut --data ds --out y.csv
mkdir -p big && cp "$TINY/f32/"* big/ && cp "$VOCAB/encoder.json" big/vocab.json && cp "$VOCAB/vocab.bpe" big/merges.txt
expect "a tokenizer larger than the model's vocabulary is refused" 2 "ids go up to 50256 but the model's vocabulary has 297" -- "$WINOKIT" perplexity --model big --data ds --out y.csv
mkdir -p badcfg && cp "$TINY/f32/"* badcfg/ && sed -i 's/"n_embd": 21/"n_embd": 21.5/' badcfg/config.json
expect "a fractional size is refused" 2 "config.json: field 'n_embd': expected an integer from 1 to 65536" -- "$WINOKIT" perplexity --model badcfg --data ds --out y.csv
expect "a missing model folder" 3 "not found|no such" -- "$WINOKIT" perplexity --model nowhere --data ds --out y.csv

# The Llama decoder's families through the same interface (tests/golden/llama_tiny: byte-level BPE
# tokenizer.json beside the llama/ and qwen2/ checkpoints).
expect "perplexity under a Llama checkpoint" 0 "LlamaForCausalLM\(ids, labels=ids\)\.loss" -- "$WINOKIT" perplexity --model "$LLAMA/llama" --tokenizer "$LLAMA" --data ds --out llama.csv
[ "$(wc -l < llama.csv)" -eq 13 ] && grep -q '"definition": ".*LlamaForCausalLM' llama.csv.json && ok "the Llama table and its definition" || not_ok "Llama table" "$(cat llama.csv llama.csv.json)"
expect "perplexity under a Qwen2 checkpoint, tokenizer.json given as a file" 0 "Qwen2ForCausalLM\(ids, labels=ids\)\.loss" -- "$WINOKIT" perplexity --model "$LLAMA/qwen2" --tokenizer "$LLAMA/tokenizer.json" --data ds --out qwen2.csv
cmp -s llama.csv qwen2.csv && not_ok "two different checkpoints give different tables" || ok "two different checkpoints give different tables"
expect "a second Llama run comes from the cache" 0 "12 captions \(12 from the cache\)" -- "$WINOKIT" perplexity --model "$LLAMA/llama" --tokenizer "$LLAMA" --data ds --out llama2.csv
cmp -s llama.csv llama2.csv && ok "cached Llama figures are the computed ones" || not_ok "Llama cache" "$(diff llama.csv llama2.csv)"
"$WINOKIT" perplexity --model "$LLAMA/llama" --tokenizer "$LLAMA" --data ds --out llama1.csv --no-cache --threads 1 2>/dev/null
cmp -s llama.csv llama1.csv && ok "Llama: 1 thread gives the bits of 2" || not_ok "Llama threads" "$(diff llama.csv llama1.csv)"
expect "--bos without bos_token_id: the token the tokenizer puts before a text" 0 "with <\|im_start\|> prepended as a start token" -- "$WINOKIT" perplexity --model "$LLAMA/llama" --tokenizer "$LLAMA" --data ds --out x.csv --bos
mkdir -p llbos && cp "$LLAMA/llama/"* llbos/ && cp "$LLAMA/tokenizer.json" llbos/ && sed -i 's/"model_type": "llama",/"model_type": "llama", "bos_token_id": 406,/' llbos/config.json
expect "--bos prepends config.json's bos_token_id" 0 "with <\|endoftext\|> prepended as a start token" -- "$WINOKIT" perplexity --model llbos --data ds --out llbos.csv --bos
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); j["post_processor"]=None; json.dump(j,open("nobos.json","w"))' "$LLAMA/tokenizer.json"
expect "--bos on a model without a start token names what is missing" 2 "no start token.*bos_token_id" -- "$WINOKIT" perplexity --model "$LLAMA/llama" --tokenizer nobos.json --data ds --out x.csv --bos
sed -i 's/"bos_token_id": 406/"bos_token_id": 4060/' llbos/config.json
expect "a bos_token_id outside the vocabulary is refused, naming the field" 2 "config.json: field 'bos_token_id'" -- "$WINOKIT" perplexity --model llbos --data ds --out x.csv --bos
sed -i 's/"bos_token_id": 4060/"bos_token_id": 406/' llbos/config.json
mkdir -p notlm && cp "$LLAMA/llama/"* notlm/ && sed -i 's/"model_type": "llama"/"model_type": "bert"/' notlm/config.json
expect "a model_type that is no language model is refused, naming the field and the choices" 2 "config.json: field 'model_type': model_type 'bert' is not a language model.*gpt2, llama, qwen2" -- "$WINOKIT" perplexity --model notlm --tokenizer "$LLAMA" --data ds --out x.csv
expect "eval --lm with a Llama checkpoint" 0 "Llama perplexity of 12 captions" -- "$WINOKIT" eval --data ds --scorer random --bootstrap 100 --lm llbos --markdown llm.md

# Table 6 (left) in eval, from the file and computed.
expect "eval --perplexity: pair correlations with N = 4 x examples" 0 "\| perplexity \| 24 \|" -- "$WINOKIT" eval --data ds --scorer random --bootstrap 100 --perplexity ppl.csv
"$WINOKIT" eval --data ds --scorer random --bootstrap 100 --perplexity ppl.csv --markdown t6.md 2>/dev/null
grep -q "| perplexity_exp2 | 24 |" t6.md && ok "Table 6 left has the official perplexity_exp2 row" || not_ok "perplexity_exp2 row" "$(grep perplexity t6.md)"
grep -q "Correlations with image-caption scores (Table 6, left)" t6.md && grep -q "each of an example's two captions with each of its two images" t6.md && ok "the report states the definition" || not_ok "definition in report"
"$WINOKIT" eval --data ds --scorer random --bootstrap 100 --lm "$TINY/f32" --markdown t6lm.md --json t6.json --html t6.html 2>/dev/null
grep "| perplexity | 24 |" t6.md > a.txt; grep "| perplexity | 24 |" t6lm.md > b.txt
[ -s a.txt ] && cmp -s a.txt b.txt && ok "eval --lm gives the figures of eval --perplexity" || not_ok "--lm vs --perplexity" "$(cat a.txt b.txt)"
grep -q '"pair_correlations"' t6.json && grep -q "Table 6, left" t6.html && ok "JSON and HTML carry Table 6" || not_ok "JSON/HTML Table 6"
printf 'id,caption,length\n0,0,1\n0,1,2\n' > noppl.csv
expect "eval --perplexity needs the perplexity column" 2 "noppl.csv:1: field 'perplexity': no perplexity column" -- "$WINOKIT" eval --data ds --scorer random --perplexity noppl.csv

# Table 7 in compare.
seed=0
for r in a b c d; do
  seed=$((seed + 1))
  "$WINOKIT" eval --data ds --scorer random --seed "$seed" --bootstrap 100 --scores-out "$r.jsonl" >/dev/null 2>&1
done
printf 'run,pretraining_pairs,params\na,400000000,1\nb,1800000000,\nc,12000000,\nd,5000000,\n' > info.csv
expect "compare --run-info: Table 7" 0 "needs at least 3" -- "$WINOKIT" compare a.jsonl b.jsonl c.jsonl d.jsonl --data ds --bootstrap 100 --run-info info.csv --exclude-from-correlation a --markdown t7.md --json t7.json --html t7.html
grep -q "| pretraining_pairs | group | 4 |" t7.md && grep -q "Without a:" t7.md && grep -q "| pretraining_pairs | group | 3 |" t7.md && ok "with and without the excluded run" || not_ok "Table 7 rows" "$(cat t7.md | tail -20)"
grep -q "Not computed: 'params': 1 run(s) with a value; a correlation across runs needs at least 3" t7.md && ok "too few runs: a message, not NaN" || not_ok "too few runs message"
grep -q '"run_correlations"' t7.json && grep -q "Table 7" t7.html && ok "JSON and HTML carry Table 7" || not_ok "JSON/HTML Table 7"
grep -q "Scores against run information (Appendix B)" t7.html && [ "$(grep -o '<circle' t7.html | wc -l)" -eq 15 ] && ok "compare --html: Appendix B scatter, a point per run and score" || not_ok "Appendix B scatter" "$(grep -o '<circle' t7.html | wc -l)"
printf 'run,arch,attention\na,dual encoder,none\nb,dual encoder,none\nc,cross encoder,merged\nd,cross encoder,co-attention\n' > cat.csv
expect "compare --run-info: categorical columns grouped, not refused" 0 "\| dual encoder \| 2 \| a, b \|" -- "$WINOKIT" compare a.jsonl b.jsonl c.jsonl d.jsonl --data ds --bootstrap 100 --run-info cat.csv --json cat.json
grep -q '"category_definition"' cat.json && ok "JSON carries the categorical groups" || not_ok "categorical JSON"
expect "compare: two runs are a message" 0 "at least 3" -- "$WINOKIT" compare a.jsonl b.jsonl --data ds --bootstrap 100 --run-info info.csv
expect "compare: unknown excluded run" 2 "no run of that name" -- "$WINOKIT" compare a.jsonl b.jsonl c.jsonl --data ds --bootstrap 100 --run-info info.csv --exclude-from-correlation clip
expect "help: perplexity" 0 "Usage|OPTIONS" -- "$WINOKIT" perplexity --help

echo
echo "perplexity cli: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
