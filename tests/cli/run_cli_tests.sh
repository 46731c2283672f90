#!/usr/bin/env bash
CLI_DIR=$(cd "$(dirname "$0")" && pwd)
# End-to-end tests of the winokit CLI on synthetic datasets and score files it makes itself.
# Usage: run_cli_tests.sh PATH/TO/winokit
set -u
WINOKIT=$(realpath "${1:?usage: run_cli_tests.sh PATH/TO/winokit [SHARED_DIR]}")
SHARED=$( [ -n "${2:-}" ] && realpath "$2" 2>/dev/null || echo "")
FIXTURES=$(realpath "$(dirname "$0")/../fixtures")
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1
source "$CLI_DIR/lib.sh"

# --- synthetic data ---
expect "synth writes a dataset" 0 "wrote 35 examples" -- "$WINOKIT" synth --out syn --count 35 --seed 3 --image-size 64
expect "synth refuses to overwrite" 3 "already exists.*--force" -- "$WINOKIT" synth --out syn --count 35
expect "synth --zip" 0 "wrote" -- "$WINOKIT" synth --out synzip --count 35 --seed 3 --image-size 64 --zip
[ -f synzip/images.zip ] && [ ! -d synzip/images ] && ok "zip layout" || not_ok "zip layout"
cmp -s syn/examples.jsonl synzip/examples.jsonl && ok "synth is deterministic" || not_ok "synth is deterministic"
mkdir -p clone/data && cp syn/examples.jsonl clone/data/

# --- eval with baselines ---
expect "oracle scores 100" 0 "\| oracle \| 100.00 \| 100.00 \| 100.00 \|" -- "$WINOKIT" eval --data syn --scorer oracle --bootstrap 200
expect "bag-of-words ties explain its zero" 0 "Ties: 140 of 140 comparisons" -- "$WINOKIT" eval --data syn --scorer bag-of-words --bootstrap 200
expect "oracle on the zip dataset" 0 "\| oracle \| 100.00" -- "$WINOKIT" eval --data synzip --scorer oracle --bootstrap 200
expect "eval accepts a clone's parent folder" 0 "N = 35" -- "$WINOKIT" eval --data clone --scorer random --bootstrap 200

# --- every output, then re-score the written files ---
expect "eval writes every output" 0 "" -- "$WINOKIT" eval --data syn --scorer random --seed 5 --bootstrap 500 \
  --json r.json --csv r.csv --per-example r.per.jsonl --scores-out r.scores.jsonl --html r.html --markdown r.md
for f in r.json r.csv r.per.jsonl r.scores.jsonl r.html r.md; do
  [ -s "$f" ] && ok "wrote $f" || not_ok "wrote $f"
done
strict_csv r.csv && ok "eval --csv is a plain CSV" || not_ok "eval --csv strict" "$(head -3 r.csv)"
[ "$(wc -l < r.scores.jsonl)" -eq 140 ] && ok "official scores: 4 lines per example" || not_ok "official scores line count"
[ "$(wc -l < r.per.jsonl)" -eq 35 ] && ok "per-example: 1 line per example" || not_ok "per-example line count"
grep -q '"sha256"' r.json && grep -q '"bootstrap_resamples": 500' r.json && ok "json has hashes and options" || not_ok "json provenance"
"$WINOKIT" eval --data syn --scores r.scores.jsonl --name random --seed 5 --bootstrap 500 --markdown again.md >/dev/null 2>&1
cmp -s r.md again.md && ok "re-scoring the official scores reproduces the tables" || not_ok "re-score reproduces tables" "$(diff r.md again.md | head)"
"$WINOKIT" eval --data syn --scores r.per.jsonl --name random --seed 5 --bootstrap 500 --markdown again2.md >/dev/null 2>&1
cmp -s r.md again2.md && ok "per-example JSONL is a scores file too" || not_ok "per-example as scores"
# Table format with extra columns, upper-case headers and no-break spaces.
{
  printf 'id\xc2\xa0model C0I0 C0I1 C1I0 C1I1\n'
  grep -o '"label":"[^"]*","score":[^}]*' r.scores.jsonl | sed -E 's/"label":"([^_]+)_c([01])_i([01])","score":(.*)/\1 \2\3 \4/' |
    awk '{v[$1","$2]=$3; ids[$1]=1} END {for (i in ids) printf "%s\xc2\xa0m %s %s %s %s\n", i, v[i",00"], v[i",01"], v[i",10"], v[i",11"]}'
} > table.txt
"$WINOKIT" eval --data syn --scores table.txt --name random --seed 5 --bootstrap 500 --markdown again3.md >/dev/null 2>&1
cmp -s r.md again3.md && ok "white-space table with NBSP gives the same tables" || not_ok "table format" "$(head -3 table.txt)"

# --- the paper's intervals (Appendix A) from a published-layout score table ---
# 400 examples whose outcomes are FLAVA contrastive's (recomputed from the published
# baselines/FLAVA/FLAVA_contrastive_scores.txt; digit = text + 2 x image), written in that file's
# layout: multi-word tags ("Negation, Scope") and empty secondary tags.
mkdir -p paper400
python3 - paper400 <<'PY'
import json, sys
out = sys.argv[1]
outcomes = ("0003020330000013000001000131010000000110000003010003133001010003000100001132100200001200203202"
            "1110010001000000001000000001003100010011103000000120110030030000000020000100323000000100010100"
            "0000000000000031130000010000200000003000000000030100001000000012200000000300010101001000000002"
            "0010000000000001100001030000010002003003331003000010000001010200110001000000311003301000000303"
            "131300002000021010001000")
# c0i0 c0i1 c1i0 c1i1 for: neither, text only, image only, both.
scores = {0: (1, 1, 1, 1), 1: (3, 4, 1, 5), 2: (3, 1, 4, 5), 3: (4, 1, 1, 4)}
with open(f"{out}/examples.jsonl", "w") as ex, open(f"{out}/scores.txt", "w") as sc:
    sc.write("ID tag secondary_tag num_main_preds collapsed_tag C0I0 C0I1 C1I0 C1I1\n")
    for i, d in enumerate(outcomes):
        tag = "Negation, Scope" if i % 3 == 0 else "Noun"
        second = "Symbolic, Series" if i % 5 == 0 else ""
        ex.write(json.dumps({"id": i, "caption_0": "a b", "caption_1": "b a", "image_0": f"ex_{i}_img_0",
                             "image_1": f"ex_{i}_img_1", "tag": tag, "secondary_tag": second,
                             "num_main_preds": 1, "collapsed_tag": "Relation"}) + "\n")
        sc.write(f"{i} {tag} {second} 1 Relation " + " ".join(map(str, scores[int(d)])) + "\n")
PY
expect "published score table: the paper's Appendix A row for FLAVA contrastive" 0 "\| text \| 25\.25 \| \[19\.99, 30\.51\]" -- "$WINOKIT" eval --data paper400 --scores paper400/scores.txt --bootstrap 100
"$WINOKIT" eval --data paper400 --scores paper400/scores.txt --bootstrap 100 --markdown paper.md >/dev/null 2>&1
grep -q "| image | 13.50 | \[8.55, 18.45\]" paper.md && grep -q "| group | 9.00 | \[5.10, 12.90\]" paper.md && ok "image and group intervals as published" || not_ok "Appendix A image/group" "$(grep -E '^\| (text|image|group) \|' paper.md)"
grep -q "t over 4 folds (paper)" paper.md && grep -q "random.shuffle" paper.md && ok "the paper's interval is named with its method" || not_ok "interval label"
"$WINOKIT" eval --data paper400 --scores paper400/scores.txt --bootstrap 100 --fold-split id-order --markdown idorder.md >/dev/null 2>&1
grep -q "t over 4 folds (id order)" idorder.md && ! grep -q "folds (paper)" idorder.md && ok "the id-order split is never labelled paper" || not_ok "id-order label"

# --- tag sets, covariates, grouping option ---
printf '{"0": [], "1": ["Unusual Image"], "2": ["Unusual Image", "Visually Difficult"]}\n' > hard.json
printf 'id,perplexity\n' > ppl.csv; for i in $(seq 0 34); do echo "$i,$((i * 7 % 11))" >> ppl.csv; done
expect "extra tag set with No Tag group" 0 "\| No Tag \| 1 \|" -- "$WINOKIT" eval --data syn --scorer oracle --bootstrap 100 --tags hard.json
expect "named tag set" 0 "Tag set: why" -- "$WINOKIT" eval --data syn --scorer oracle --bootstrap 100 --tags why=hard.json
expect "covariate correlations" 0 "\| perplexity \| group \| 35 \|" -- "$WINOKIT" eval --data syn --scorer random --bootstrap 100 --covariate ppl.csv
expect "exact secondary grouping is stated" 0 "exact: only examples whose secondary_tag is exactly one tag" -- "$WINOKIT" eval --data syn --scorer oracle --bootstrap 100 --secondary-grouping exact

# --- retrieval ties: strict (default) and the official metrics.py convention ---
# An order-blind matrix: both captions of a pair score 1 on both of its images, 0 elsewhere.
python3 - <<'PY'
import json, struct
n = 70  # syn: 35 examples, 2N x 2N
vals = [1.0 if r // 2 == c // 2 else 0.0 for r in range(n) for c in range(n)]
head = json.dumps({"scores": {"dtype": "F32", "shape": [n, n], "data_offsets": [0, 4 * n * n]}}).encode()
head += b" " * (-len(head) % 8)
open("blind.safetensors", "wb").write(struct.pack("<Q", len(head)) + head + struct.pack(f"<{n * n}f", *vals))
PY
expect "retrieval: ties count against the model by default" 0 "\| text -> image \| 0\.00 \| 100\.00 \| 100\.00 \| 100\.00 \| 2 \|" -- "$WINOKIT" retrieval --data syn --matrix blind.safetensors
expect "retrieval --ties official: the correct item first among ties (metrics.py)" 0 "\| text -> image \| 100\.00 \| 100\.00 \| 100\.00 \| 100\.00 \| 1 \|" -- "$WINOKIT" retrieval --data syn --matrix blind.safetensors --ties official

# --- compare ---
"$WINOKIT" eval --data syn --scorer oracle --bootstrap 100 --scores-out oracle.jsonl --quiet 2>/dev/null
expect "compare: leaderboard and McNemar" 0 "\| 1 \| oracle \| 100.00" -- "$WINOKIT" compare oracle.jsonl rnd=r.scores.jsonl --data syn --bootstrap 300 --json cmp.json --html cmp.html --csv cmp.csv
grep -q '"mcnemar_exact_p"' cmp.json && [ -s cmp.html ] && [ -s cmp.csv ] && ok "compare outputs" || not_ok "compare outputs"
strict_csv cmp.csv && ok "compare --csv is a plain CSV" || not_ok "compare --csv strict" "$(head -3 cmp.csv)"
expect "compare needs two runs" 2 "" -- "$WINOKIT" compare oracle.jsonl --data syn

# --- bad input: clear message, non-zero exit, nothing written ---
head -n 139 r.scores.jsonl > missing.jsonl
expect "missing score" 2 "missing score for 34_c1_i1" -- "$WINOKIT" eval --data syn --scores missing.jsonl --json never.json --html never.html
[ ! -e never.json ] && [ ! -e never.html ] && ok "nothing written on invalid input" || not_ok "nothing written on invalid input"
{ cat r.scores.jsonl; head -n 1 r.scores.jsonl; } > dup.jsonl
expect "duplicate score" 2 "dup.jsonl:141: field 'score': duplicate score for 0_c0_i0 \(first on line 1\)" -- "$WINOKIT" eval --data syn --scores dup.jsonl
sed '5s/"score":[^}]*/"score":NaN/' r.scores.jsonl > nan.jsonl
expect "non-finite score" 2 "nan.jsonl:5: field 'score': non-finite" -- "$WINOKIT" eval --data syn --scores nan.jsonl
sed '9s/"label":"2_/"label":"999_/' r.scores.jsonl > unknown.jsonl
expect "unknown id" 2 "unknown.jsonl:9: field 'score': unknown example id '999'" -- "$WINOKIT" eval --data syn --scores unknown.jsonl
sed '7s/.*/{"label": oops/' r.scores.jsonl > broken.jsonl
expect "malformed line" 2 "broken.jsonl:7: malformed JSON" -- "$WINOKIT" eval --data syn --scores broken.jsonl
mkdir -p badds && { head -n 3 syn/examples.jsonl; echo '{"id": 99, "caption_0": "x"}'; } > badds/examples.jsonl
expect "bad examples.jsonl names line and field" 2 "badds/examples.jsonl:4: field 'caption_1': missing" -- "$WINOKIT" eval --data badds --scorer random
expect "missing dataset" 3 "nowhere: not found" -- "$WINOKIT" eval --data nowhere --scorer random
expect "missing scores file" 3 "absent.jsonl: not found" -- "$WINOKIT" eval --data syn --scores absent.jsonl
expect "scores and scorer are exclusive" 2 "exactly one of --scores" -- "$WINOKIT" eval --data syn --scores r.scores.jsonl --scorer random
mkdir -p realish && printf '{"id": 0, "caption_0": "a b", "caption_1": "b a", "image_0": "x", "image_1": "y"}\n' > realish/examples.jsonl
expect "oracle refuses real data" 2 "needs scene descriptions" -- "$WINOKIT" eval --data realish --scorer oracle
python3 -c 'import json; print(json.dumps({str(i): [] for i in range(400)}))' > alltags.json
expect "a 400-id tag file on a 35-example subset: the extra ids ignored, one line" 0 "alltags.json: 365 ids not in the dataset ignored \(the file covers all 35 examples" -- "$WINOKIT" eval --data syn --scorer random --bootstrap 50 --tags alltags.json
python3 -c 'print("id,caption,perplexity"); [print(f"{i},{c},{i + c + 1}") for i in range(400) for c in (0, 1)]' > allppl.csv
expect "a 400-id perplexity table on the subset" 0 "allppl.csv: 365 ids not in the dataset ignored" -- "$WINOKIT" eval --data syn --scorer random --bootstrap 50 --perplexity allppl.csv
printf '{"0": [], "777": ["X"]}' > badtags.json
expect "bad tag set" 2 "badtags.json:1: field '777': unknown example id" -- "$WINOKIT" eval --data syn --scorer random --tags badtags.json
expect "missing output folders are created" 0 "" -- "$WINOKIT" eval --data syn --scorer random --bootstrap 50 --json no/such/dir/r.json --quiet
[ -s no/such/dir/r.json ] && ok "output written in the created folder" || not_ok "output folder creation"
expect "unwritable output" 3 "cannot" -- "$WINOKIT" eval --data syn --scorer random --bootstrap 50 --json syn/examples.jsonl/r.json
expect "unknown flag" 2 "" -- "$WINOKIT" eval --data syn --bogus

# --- messages: did you mean, one error format with the usage line, files named once ---
expect "unknown subcommand: did you mean" 2 "^winokit: error: unknown subcommand 'evl', did you mean 'eval'\?" -- "$WINOKIT" evl --data x
expect "unknown subcommand: usage line" 2 "^usage: winokit <subcommand> \[options\]" -- "$WINOKIT" evl --data x
expect "unknown option: did you mean" 2 "^winokit: error: unknown option '--htm' for 'winokit eval', did you mean '--html'\?" -- "$WINOKIT" eval --data syn --scorer oracle --htm x.html
expect "unknown option: the subcommand's usage" 2 "^usage: winokit eval --data TEXT \[options\]  \(see 'winokit eval --help'\)" -- "$WINOKIT" eval --data syn --scorer oracle --htm x.html
expect "unknown option far from any: no guess" 2 "^winokit: error: unknown option '--zzzzzzzz' for 'winokit eval'$" -- "$WINOKIT" eval --data syn --zzzzzzzz
expect "missing required option: same format" 2 "^winokit: error: --data is required" -- "$WINOKIT" eval --scorer oracle
expect "bad option value: same format, compare's usage" 2 "^usage: winokit compare runs\.\.\. --data TEXT" -- "$WINOKIT" compare a b --data syn --html-images sometimes
expect "unknown action of a nested command" 2 "unknown action 'exprot', did you mean 'export'\?" -- "$WINOKIT" game exprot --db x
expect "no subcommand" 2 "^winokit: error: a subcommand is required" -- "$WINOKIT"
out=$("$WINOKIT" eval --data syn --scorer oracle --bootstrap 50 --quiet --html named.html --json named.json 2>&1 >/dev/null)
[ "$(echo "$out" | grep -c '^winokit: wrote named.html$')" -eq 1 ] && [ "$(echo "$out" | grep -c '^winokit: wrote named.json$')" -eq 1 ] \
  && ok "every written file is named once on stderr" || not_ok "written files named once" "$out"
echo "$out" | grep -q $'\r' && not_ok "no progress bar when stderr is not a terminal" || ok "no progress bar when stderr is not a terminal"
expect "an HTML file is not a scores file" 2 "named.html:1: not a recognised scores file \(expected the official JSONL" -- "$WINOKIT" eval --data syn --scores named.html
grep -q 'data:image/jpeg;base64,' named.html && ok "eval --html embeds thumbnails" || not_ok "embedded thumbnails"
[ "$(grep -o '<li class="ex"' named.html | wc -l)" -eq 35 ] && ok "example browser lists every example" || not_ok "example browser count"
"$WINOKIT" eval --data syn --scorer oracle --bootstrap 50 --quiet --html none.html --html-images none 2>/dev/null
! grep -q '<img' none.html && [ "$(grep -o '<li class="ex"' none.html | wc -l)" -eq 35 ] && ok "--html-images none: no images, examples kept" || not_ok "--html-images none"
"$WINOKIT" eval --data syn --scorer oracle --bootstrap 50 --quiet --html link.html --html-images link 2>/dev/null
grep -q 'src="syn/images/ex_0_img_0.png"' link.html && ok "--html-images link: relative links" || not_ok "--html-images link" "$(grep -o 'src="[^"]*"' link.html | head -2)"
expect "--html-images link on a zip dataset" 2 "inside a zip archive \(use --html-images embed\)" -- "$WINOKIT" eval --data synzip --scorer oracle --bootstrap 50 --quiet --html zl.html --html-images link
[ ! -e zl.html ] && ok "nothing written when the links cannot be made" || not_ok "zl.html written"
expect "eval --html on a dataset without its images" 0 "wrote noimg.html" -- "$WINOKIT" eval --data clone --scorer random --bootstrap 50 --quiet --html noimg.html
grep -q 'No images shown' noimg.html && ! grep -q '<img' noimg.html && ok "the report says why it has no images" || not_ok "no-image note"

# --- in-process CLIP (golden tiny checkpoints from ../shared) ---
if [ -n "$SHARED" ] && [ -d "$SHARED/golden/clip/models" ]; then
  HFM="$SHARED/golden/clip/models/tiny-quickgelu-hf"
  OCM="$SHARED/golden/clip/models/tiny-quickgelu-openclip"
  export WINOKIT_CACHE_DIR="$WORK/cache"
  expect "eval --model (HF layout)" 0 "\| tiny \| [0-9]+\.[0-9]{2} \|" -- "$WINOKIT" eval --data syn --model "$HFM" --name tiny --bootstrap 100 --json m.json
  [ -s tiny.scores.jsonl ] && [ "$(wc -l < tiny.scores.jsonl)" -eq 140 ] && ok "model run keeps its official scores" || not_ok "model scores file"
  expect "second run comes from the cache" 0 "0 images computed, 70 from the cache" -- "$WINOKIT" eval --data syn --model "$HFM" --name tiny --bootstrap 100 --quiet
  cp tiny.scores.jsonl first.scores.jsonl
  expect "--no-cache recomputes" 0 "70 images computed" -- "$WINOKIT" eval --data synzip --model "$HFM" --name tiny --bootstrap 100 --quiet --no-cache --threads 1 --batch-size 3
  cmp -s first.scores.jsonl tiny.scores.jsonl && ok "same scores: zip vs folder, cache vs none, 1 thread batch 3 vs default" || not_ok "scores identical across runs"
  grep -q '"weights_sha256"' m.json && grep -q '"pipeline": "hf"' m.json && ok "json records model hash and preprocessing" || not_ok "model provenance"
  # Issue 23, item 8: the default scores file goes beside the other outputs and never silently
  # replaces another run's scores.
  rm -f tiny-quickgelu-hf.scores.jsonl
  expect "eval --model: the scores file beside the outputs, and where it went" 0 "scores written to out8/tiny-quickgelu-hf.scores.jsonl" -- "$WINOKIT" eval --data syn --model "$HFM" --bootstrap 50 --json out8/r.json --quiet
  [ -s out8/tiny-quickgelu-hf.scores.jsonl ] && [ ! -e tiny-quickgelu-hf.scores.jsonl ] && ok "... in out8/, not in the current folder" || not_ok "scores file placement" "$(ls out8 .)"
  sed -i '1s/"score":[-0-9.e]*/"score":12.5/' out8/tiny-quickgelu-hf.scores.jsonl && cp out8/tiny-quickgelu-hf.scores.jsonl other.jsonl
  expect "eval --model refuses to replace another run's scores" 2 "holds other scores.*--force" -- "$WINOKIT" eval --data syn --model "$HFM" --bootstrap 50 --json out8/r.json --quiet
  cmp -s other.jsonl out8/tiny-quickgelu-hf.scores.jsonl && ok "... and leaves it as it was" || not_ok "the other run's scores were replaced"
  expect "eval --model --force replaces it" 0 "scores written to out8/tiny-quickgelu-hf.scores.jsonl" -- "$WINOKIT" eval --data syn --model "$HFM" --bootstrap 50 --json out8/r.json --quiet --force
  ! cmp -s other.jsonl out8/tiny-quickgelu-hf.scores.jsonl && ok "... with this run's scores" || not_ok "--force did not replace"
  expect "eval --model (OpenCLIP layout, bpe gz tokenizer)" 0 "N = 35" -- "$WINOKIT" eval --data syn --model "$OCM" --tokenizer "$SHARED/golden/clip/vocab/bpe_simple_vocab_16e6.txt.gz" --bootstrap 100 --scores-out oc.jsonl
  expect "score an image" 0 "\| a red cube \| [-0-9.]+ \| [0-9.]+ \|" -- "$WINOKIT" score --model "$HFM" "$SHARED/golden/clip/images/astronaut_q90.jpg" "a red cube" "an astronaut"
  # A terminal (script(1)) gets the progress bar: a finite rate over the stage's own work and its time.
  # A rate needs a stage of at least 50 ms: 200 images one at a time on one thread take about 0.4 s
  # (the 70 images of syn in batches on 2 threads can finish in less).
  if command -v script >/dev/null; then
    "$WINOKIT" synth --out synbar --count 100 --seed 5 --image-size 64 > /dev/null
    script -qec "$WINOKIT eval --data synbar --model $HFM --name tiny --bootstrap 50 --quiet --no-cache --threads 1 --batch-size 1" /dev/null > tty.txt 2>&1
    rate_ok=$(tr '\r' '\n' < tty.txt | grep -oE '[0-9.]+/s' | awk -F/ '$1 > 100000 {bad=1} END {print (bad ? 0 : (NR > 0))}')
    grep -q 'elapsed' tty.txt && [ "$rate_ok" = 1 ] && ok "progress bar on a terminal: rate and elapsed time" || not_ok "progress bar" "$(tr '\r' '\n' < tty.txt | tail -5)"
  fi
  expect "embed a dataset" 0 "wrote 70 image and 70 text embeddings" -- "$WINOKIT" embed --model "$HFM" --data syn --out emb.safetensors --hidden-states
  head -c 8 emb.safetensors | od -An -tu8 | grep -q '[0-9]' && grep -q 'image_hidden_cls' emb.safetensors && ok "embeddings file has hidden states" || not_ok "embeddings file"
  expect "out-of-memory-sized batch is refused" 2 "needs about .* GB of working memory.*lower --batch-size" -- "$WINOKIT" eval --data syn --model "$HFM" --batch-size 100000 --no-cache --bootstrap 10
  expect "missing checkpoint" 3 "no config.json" -- "$WINOKIT" eval --data syn --model "$WORK" --bootstrap 10
  mkdir -p badimg/images && cp syn/examples.jsonl badimg/ && cp syn/images/* badimg/images/
  head -c 100 syn/images/ex_4_img_1.png > badimg/images/ex_4_img_1.png
  expect "truncated image names the file" 2 "ex_4_img_1.png: corrupt PNG" -- "$WINOKIT" eval --data badimg --model "$HFM" --bootstrap 10 --no-cache --json never2.json
  [ ! -e never2.json ] && ok "nothing written when an image is bad" || not_ok "nothing written when an image is bad"
  rm badimg/images/ex_2_img_0.png
  expect "missing image names it" 3 "image 'ex_2_img_0': not found" -- "$WINOKIT" eval --data badimg --model "$HFM" --bootstrap 10
  # --- retrieval over the whole dataset ---
  expect "retrieval from a model" 0 "" -- "$WINOKIT" retrieval --data syn --model "$HFM" --matrix-out m.safetensors --markdown r1.md --json r1.json
  grep -qE "\| text -> image \| [0-9.]+ \| [0-9.]+ \|" r1.md && grep -q "R@1 needs the minimal pair resolved" r1.md && ok "retrieval table and note" || not_ok "retrieval table" "$(cat r1.md)"
  "$WINOKIT" retrieval --data syn --matrix m.safetensors --name tiny-quickgelu-hf --markdown r2.md >/dev/null 2>&1
  diff <(sed 1d r1.md) <(sed 1d r2.md) >/dev/null && ok "retrieval from the written matrix gives the same recalls" || not_ok "retrieval matrix round trip"
  expect "retrieval needs one source" 2 "exactly one of --model DIR or --matrix FILE" -- "$WINOKIT" retrieval --data syn

  # --- caption variants ---
  printf 'word,replacement\ncircle,ring\nsquare,box\n' > subs.csv
  expect "variants generate (WordNet and a substitution list)" 0 "wrote [0-9]+ variants" -- "$WINOKIT" variants generate --data syn --method wordnet-synonym,substitution --substitutions subs.csv --out variants.jsonl
  grep -q '"augmentation":"substitution"' variants.jsonl && ok "substitution variants written" || not_ok "substitution variants"
  expect "variants eval: S_aug table" 0 "Augmented \(best: (mean|max), lambda" -- "$WINOKIT" variants eval --data syn --variants variants.jsonl --model "$HFM" --json var.json
  grep -q '"lambda": 0.25' var.json && ok "variants json has every setting" || not_ok "variants json"
  # Variants made elsewhere, in the official examples_augmented.jsonl layout (issue 12).
  printf '%s\n' '{"id": 0, "caption_0": [{"type": "original", "name": "original", "variant": "a red triangle and a green circle"}, {"type": "paraphrasing", "name": "backtranslation", "variant": "a green circle and a red triangle"}], "caption_1": [{"type": "original", "name": "original", "variant": "a green triangle and a red circle"}, {"type": "rulebased", "name": "propbanksrlroles", "variant": "a red circle and a green triangle"}]}' > aug_official.jsonl
  expect "variants eval imports the official augmented layout" 0 "### family:paraphrasing \(1 variants of 1 captions\)" -- "$WINOKIT" variants eval --data syn --variants aug_official.jsonl --model "$HFM"
  expect "variants eval: the original is the identity variant by default" 0 "over the original caption T \(the identity variant" -- "$WINOKIT" variants eval --data syn --variants aug_official.jsonl --model "$HFM"
  expect "variants eval --exclude-original" 0 "variants T_i of caption T only" -- "$WINOKIT" variants eval --data syn --variants aug_official.jsonl --model "$HFM" --exclude-original

  # --- probes: per-layer states from the model, or from an embeddings file ---
  expect "embed with variants" 0 "wrote 70 image and [0-9]+ text embeddings" -- "$WINOKIT" embed --model "$HFM" --data syn --variants variants.jsonl --hidden-states --out embvar.safetensors
  PROBE_ARGS=(--data syn --variants variants.jsonl --seeds 2 --hidden 16 --epochs 3 --layers 0,2,final)
  expect "probe from the model" 0 "" -- "$WINOKIT" probe "${PROBE_ARGS[@]}" --model "$HFM" --name tiny --markdown p1.md --json p1.json --html p1.html
  grep -q "### Pair probe, text score" p1.md && grep -q "### Text-only probe" p1.md && grep -q "### Linear separability" p1.md && grep -qE "^\| final \| [0-9]+ / [0-9]+ \|" p1.md && ok "probe tables" || not_ok "probe tables" "$(cat p1.md)"
  grep -q '"control_test_percent"' p1.json && grep -q '<table>' p1.html && ok "probe json and html" || not_ok "probe json and html"
  [ "$(grep -o '<svg role="img"' p1.html | wc -l)" -eq 4 ] && grep -q "SVM separability: share of items separated by layer" p1.html && ok "probe html has per-layer SVG plots (3 probes + SVM)" || not_ok "probe per-layer plots"
  "$WINOKIT" probe "${PROBE_ARGS[@]}" --embeddings embvar.safetensors --name tiny --markdown p2.md >/dev/null 2>&1
  cmp -s p1.md p2.md && ok "probe from the embeddings file equals probe from the model" || not_ok "probe file round trip" "$(diff p1.md p2.md | head)"
  expect "probe: unknown layer lists the layers" 2 "no layer '7' in the embeddings \(have: 0, 1, 2, final\)" -- "$WINOKIT" probe --data syn --embeddings embvar.safetensors --layers 7
  # Mean@l / Max@l pooling (issue 12): from the model, and the same from the file embed writes.
  for t in image_hidden_mean image_hidden_max text_hidden_mean text_hidden_max; do
    grep -aqE "\"$t\":\{[^}]*\"shape\":\[3,[0-9]+,[0-9]+\]" embvar.safetensors && ok "embed --hidden-states writes $t [3, rows, width]" || not_ok "embed writes $t" "$(grep -aoE '"[a-z_]+_hidden_[a-z]+":\{[^}]*\}' embvar.safetensors)"
  done
  POOL_ARGS=(--data syn --probes pair-text,pair-image --seeds 1 --hidden 8 --epochs 2 --layers 0,2 --name tiny)
  expect "probe --pooling mean with a model" 0 "Mean@l, the mean over tokens" -- "$WINOKIT" probe "${POOL_ARGS[@]}" --model "$HFM" --pooling mean
  "$WINOKIT" probe "${POOL_ARGS[@]}" --model "$HFM" --pooling max --markdown pm1.md >/dev/null 2>&1
  "$WINOKIT" probe "${POOL_ARGS[@]}" --embeddings embvar.safetensors --pooling max --markdown pm2.md >/dev/null 2>&1
  grep -q "Max@l" pm1.md && cmp -s pm1.md pm2.md && ok "probe --pooling max: the model and its embeddings file give the same tables" || not_ok "probe --pooling max round trip" "$(diff pm1.md pm2.md | head)"
  "$WINOKIT" probe "${POOL_ARGS[@]}" --model "$HFM" --pooling cls --markdown pc.md >/dev/null 2>&1
  ! cmp -s pc.md pm1.md && ok "max pooling probes other states than cls" || not_ok "pooling changes the states"
  # Train/test splits (issue 12 item 11).
  expect "probe --split stratified says how" 0 "stratified as the paper did by tag: Pragmatics / Symbolic / Morpheme-Level, Both" -- "$WINOKIT" probe "${POOL_ARGS[@]}" --embeddings embvar.safetensors --layers 0
  expect "probe --split random" 0 "split at random \(train share 0.75\), not stratified" -- "$WINOKIT" probe "${POOL_ARGS[@]}" --embeddings embvar.safetensors --layers 0 --split random
  expect "probe --split paper needs Winoground's 400 ids" 2 "the paper's probe split lists Winoground's 400 ids" -- "$WINOKIT" probe "${POOL_ARGS[@]}" --embeddings embvar.safetensors --split paper
  expect "probe --paper-split conflicts with another --split" 2 "--paper-split conflicts with --split random" -- "$WINOKIT" probe "${POOL_ARGS[@]}" --embeddings embvar.safetensors --paper-split --split random
  expect "probe --split rejects an unknown kind" 2 "--split: tags not in \{stratified,collapsed,random,paper\}" -- "$WINOKIT" probe "${POOL_ARGS[@]}" --embeddings embvar.safetensors --split tags
  expect "probe: svm needs variants" 2 "need caption variants" -- "$WINOKIT" probe --data syn --embeddings emb.safetensors --probes svm
  expect "probe: one source" 2 "exactly one of --model DIR or --embeddings" -- "$WINOKIT" probe --data syn --model "$HFM" --embeddings emb.safetensors
  expect "probe: a file without embeddings is refused" 2 "m.safetensors: holds none of image_embeds" -- "$WINOKIT" probe --data syn --embeddings m.safetensors
  "$WINOKIT" embed --model "$HFM" --images syn/images/ex_0_img_0.png --text "a caption" --out partial.safetensors >/dev/null 2>&1
  expect "probe: missing rows are named" 2 "no row for image 'ex_0_img_0' of example 0" -- "$WINOKIT" probe --data syn --embeddings partial.safetensors
  expect "retrieval html" 0 "" -- "$WINOKIT" retrieval --data syn --matrix m.safetensors --html r.html --quiet
  grep -q "<th>Direction</th>" r.html && ok "retrieval html table" || not_ok "retrieval html"

  # --- word-patch heat maps ---
  expect "heatmap report" 0 "rendered [0-9]+ word-patch maps for 2 example" -- "$WINOKIT" heatmap --data syn --model "$HFM" --examples 0,3 --html hm.html --out-dir .
  grep -q 'data:image/png;base64,' hm.html && compgen -G 'ex0_i0_c0_t0_*.png' >/dev/null && ok "heatmap html embeds the PNG maps" || not_ok "heatmap outputs"
  # Each PNG is named by its word: ex<id>_i<image>_c<caption>_t<token>_<word>.png, the word from the caption.
  cap0=$(head -1 syn/examples.jsonl | sed 's/.*"caption_0":"\([^"]*\)".*/\1/')
  first=$(echo "$cap0" | awk '{print tolower($1)}' | tr -cd 'a-z0-9')
  [ -s "ex0_i0_c0_t0_$first.png" ] && ok "heatmap PNGs are named by word (ex0_i0_c0_t0_$first.png)" || not_ok "heatmap PNG names" "$(ls ex0_i0_c0_* | head -3)"
  grep -q 'name="viewport"' hm.html && grep -q 'class="heat-scale"' hm.html && grep -q '<table class="prov">' hm.html \
    && ok "heatmap report: viewport, colour scale, provenance table" || not_ok "heatmap report page"
  # --images: a dataset whose images are not images/ beside examples.jsonl (issue 12, item 4).
  mkdir -p apart && cp syn/examples.jsonl apart/
  "$WINOKIT" eval --data syn --model "$HFM" --scores-out s_syn.jsonl --markdown m_syn.md --bootstrap 50 >/dev/null 2>&1
  "$WINOKIT" eval --data apart --images syn/images --model "$HFM" --scores-out s_apart.jsonl --markdown m_apart.md --bootstrap 50 >/dev/null 2>&1
  want=$(grep -m1 '^| tiny-quickgelu-hf |' m_syn.md)
  got=$(grep -m1 '^| tiny-quickgelu-hf |' m_apart.md)
  [ -n "$want" ] && [ "$want" = "$got" ] && ok "eval --images DIR gives the same scores" || not_ok "eval --images" "$want vs $got"
  expect "eval --images ZIP" 0 "\| tiny-quickgelu-hf \|" -- "$WINOKIT" eval --data apart --images synzip/images.zip --model "$HFM" --scores-out s_zip.jsonl --bootstrap 50
  expect "eval without --images names the hint" 3 "pass --images" -- "$WINOKIT" eval --data apart --model "$HFM" --scores-out s_none.jsonl --bootstrap 50
  expect "eval --images that does not exist" 3 "nowhere: no such image folder or zip" -- "$WINOKIT" eval --data apart --images nowhere --model "$HFM" --bootstrap 50
  expect "retrieval --images" 0 "text -> image" -- "$WINOKIT" retrieval --data apart --images syn/images --model "$HFM"
  expect "heatmap --images, --out-dir created when missing" 0 "rendered [0-9]+ word-patch maps" -- "$WINOKIT" heatmap --data apart --images syn/images --model "$HFM" --examples 0 --out-dir new/maps/here
  compgen -G 'new/maps/here/ex0_i0_c0_t0_*.png' >/dev/null && ok "heatmap made the missing output folders" || not_ok "heatmap --out-dir"
  expect "variants eval --images" 0 "Augmented \(best" -- "$WINOKIT" variants eval --data apart --images syn/images --variants variants.jsonl --model "$HFM"
  expect "probe --images" 0 "" -- "$WINOKIT" probe --data apart --images syn/images --model "$HFM" --seeds 1 --hidden 8 --epochs 1 --layers final --probes pair-text
  # Progress in logs (stderr not a terminal): one line per interval and a closing line per stage.
  expect "probe fits report progress in logs" 0 "winokit: probe fits 2/2 \(100%\), ([0-9.e+]+/s, [0-9]+:[0-9]{2} elapsed|done)" -- env WINOKIT_PROGRESS_SECONDS=0 "$WINOKIT" probe --data syn --model "$HFM" --seeds 1 --hidden 8 --epochs 1 --layers final --probes pair-text --no-cache
  expect "embedding progress in logs: a line per batch (interval 0) and a closing line" 0 "winokit: images 8/70 \(11%\).*winokit: images 70/70 \(100%\)" -- bash -c 'WINOKIT_PROGRESS_SECONDS=0 "$0" eval --data syn --model "$1" --no-cache --batch-size 8 --bootstrap 50 --scores-out s_prog.jsonl 2>&1 | tr "\n" " "' "$WINOKIT" "$HFM"
  out=$("$WINOKIT" eval --data syn --model "$HFM" --no-cache --bootstrap 50 --scores-out s_quiet.jsonl 2>&1 >/dev/null)
  echo "$out" | grep -q "winokit: images" && not_ok "a run shorter than the interval writes no progress lines" "$out" || ok "a run shorter than the interval writes no progress lines"
  expect "heatmap unknown example" 2 "unknown example id '999'" -- "$WINOKIT" heatmap --data syn --model "$HFM" --examples 999 --html x.html

  # --- WinoGAViL: SWOW instances from a small graph, solved zero-shot, re-scored, supervised ---
  mkdir -p wg/images
  i=0
  for w in sun moon star sea sand tree leaf dog cat fish rock snow "ice cream" fire rain wolf owl; do
    cp "syn/images/ex_$((i % 35))_img_$((i % 2)).png" "wg/images/$w.png"; i=$((i + 1))
  done
  printf 'cue,R1,R2,R3\nsky,sun,moon,star\nbeach,sea,sand,sun\nforest,tree,leaf,owl\npet,dog,cat,fish\nwinter,snow,ice cream,fire\nnight,moon,owl,wolf\nstorm,rain,sea,rock\n' > wg/swow.csv
  expect "swow generates instances" 0 "wrote 7 instances" -- "$WINOKIT" swow --graph wg/swow.csv --images wg/images --out wg/inst.csv --seed 3
  expect "winogavil zero-shot with a model" 0 "\| All \| 7 \| [0-9]+\.[0-9] \| [0-9]+ \|" -- "$WINOKIT" winogavil --data wg/inst.csv --model "$HFM" --images wg/images --name tiny --bootstrap 200 --predictions-out wg/pred.csv --json wg/r.json --html wg/r.html --csv wg/r.csv
  [ -s wg/r.html ] && [ -s wg/r.csv ] && grep -q '"chance_percent"' wg/r.json && ok "winogavil outputs" || not_ok "winogavil outputs"
  for f in wg/r.csv wg/pred.csv wg/inst.csv; do
    strict_csv "$f" && ok "$f is a plain CSV" || not_ok "$f strict" "$(head -3 "$f")"
  done
  want=$(grep -o '| All | 7 | [0-9.]* |' <("$WINOKIT" winogavil --data wg/inst.csv --model "$HFM" --images wg/images --name tiny --bootstrap 200))
  got=$(grep -o '| All | 7 | [0-9.]* |' <("$WINOKIT" winogavil --data wg/pred.csv --predictions-column tiny_predictions --bootstrap 200))
  [ -n "$want" ] && [ "$want" = "$got" ] && ok "re-scoring the written predictions reproduces the model's row" || not_ok "predictions round trip" "$want vs $got"
  expect "text-only solving from captions" 0 "\| All \| 7 \|" -- "$WINOKIT" winogavil --data wg/inst.csv --model "$HFM" --captions <(printf 'image,caption\n'; for w in sun moon star sea sand tree leaf dog cat fish rock snow "ice cream" fire rain wolf owl; do echo "$w,a photo of $w"; done) --bootstrap 100
  expect "too few instances for the supervised baseline is an error" 2 "too few instances for the supervised baseline" -- "$WINOKIT" winogavil --data wg/inst.csv --model "$HFM" --images wg/images --supervised --epochs 1 --bootstrap 100
  mkdir -p wg2/images
  printf 'cue,R1,R2,R3\n' > wg2/swow.csv
  for c in $(seq 0 59); do
    printf 'cue%02d,w%02da,w%02db,w%02dc\n' "$c" "$c" "$c" "$c" >> wg2/swow.csv
    for s2 in a b c; do cp "syn/images/ex_$((c % 35))_img_0.png" "wg2/images/w$(printf %02d "$c")$s2.png"; done
  done
  "$WINOKIT" swow --graph wg2/swow.csv --images wg2/images --out wg2/inst.csv --seed 1 --candidates 5 >/dev/null
  expect "supervised baseline" 0 "Test Jaccard on 5&6, mean \+- standard deviation over runs" -- "$WINOKIT" winogavil --data wg2/inst.csv --model "$HFM" --images wg2/images --supervised --epochs 2 --bootstrap 100
  mv "wg/images/owl.png" wg/owl.png; mv "wg/images/ice cream.png" wg/ic.png
  expect "every missing image is listed" 3 "2 candidate image\(s\) not found.*'ice cream'.*'owl'|2 candidate image\(s\) not found.*'owl'.*'ice cream'" -- "$WINOKIT" winogavil --data wg/inst.csv --model "$HFM" --images wg/images
else
  echo "skip - golden checkpoints not found beside the checkout"
fi

# --- WinoGAViL on files in the published layouts (issue 12) ---
WGA="$FIXTURES/winogavil"
expect "winogavil reads the published test set with predictions and the types file" 0 "\| Non Visual, Concept Related \| 2 \|" -- "$WINOKIT" winogavil --data "$WGA/test_sets_with_zero_shot_predictions/game_10_12_with_predictions.csv" --predictions-column clip_vit_32_predictions --types "$WGA/model_analysis_on_different_association_types.csv" --bootstrap 50
"$WINOKIT" winogavil --data "$WGA/test_sets_with_zero_shot_predictions/game_5_6_with_predictions.csv" --predictions-column clip_vit_32_predictions --bootstrap 50 --csv wga.csv --predictions-out wgp.csv --quiet >/dev/null 2>&1
for f in wga.csv wgp.csv; do
  strict_csv "$f" && ok "winogavil: $f is a plain CSV" || not_ok "winogavil $f strict" "$(head -3 "$f")"
done
expect "winogavil: the game rival's column of Table 10 (100 - score_fool_the_ai)" 0 "\| 6 \| - \| 67\.0 \(1\) \|" -- "$WINOKIT" winogavil --data "$WGA/test_sets_with_zero_shot_predictions/game_5_6_with_predictions.csv" --predictions-column clip_vit_32_predictions --bootstrap 50
expect "winogavil prints Table 10 (candidates x k with N)" 0 "^\| 12 \| 33\.3 \(1\) \| 20\.0 \(1\) \|" -- "$WINOKIT" winogavil --data "$WGA/test_sets_with_zero_shot_predictions/game_10_12_with_predictions.csv" --predictions-column clip_vit_32_predictions --bootstrap 50
expect "winogavil labels the solvers' column and quotes the paper" 0 "Human performance \(new annotators" -- "$WINOKIT" winogavil --data "$WGA/swow.csv" --predictions-column associations --bootstrap 50
sed 's/,1,0,random,0$/,77.78,0,random,0/' "$WGA/game_10_12.csv" > wg_percent.csv
expect "winogavil rejects solvers' scores on 0-100 naming the row and column" 2 "wg_percent.csv:2: field 'solvers_jaccard_mean': '77.78' is outside the 0-1 scale" -- "$WINOKIT" winogavil --data wg_percent.csv --predictions-column associations

# --- demo and help ---
expect "demo runs end to end" 0 "winokit eval --data" -- "$WINOKIT" demo --out demo --count 21
[ -s demo/compare.html ] && [ -s demo/oracle.html ] && ok "demo wrote reports" || not_ok "demo reports"
grep -q 'Random weights.' demo/clip-random-vit-b32.html && grep -q 'Random weights.' demo/compare.html && ! grep -q 'Random weights.' demo/oracle.html \
  && ok "random-weight CLIP reports say so in their header" || not_ok "random-weights warning"
"$WINOKIT" demo --out demo --count 21 --no-clip 2>/dev/null | grep -q 'Reports (open in a browser): demo/oracle.html, demo/bag-of-words.html, demo/random.html, demo/compare.html' \
  && ok "demo lists its reports" || not_ok "demo report list"
# --- the game's command line (the game itself: unit, browser, durability, PostgreSQL tests) ---
expect "serve: missing image folder" 3 "nowhere: not a folder" -- "$WINOKIT" serve --images nowhere
mkdir -p fewimages && cp syn/images/ex_0_img_0.png syn/images/ex_0_img_1.png fewimages/
expect "serve: too few images" 3 "holds 2 images; the game needs at least 12" -- "$WINOKIT" serve --images fewimages
expect "serve: bad bonus table" 2 "bonus tiers must be in increasing order" -- "$WINOKIT" serve --images syn/images --bonus-tiers 60:0.1,50:0.2
printf 'candidates,cue,associations\n"[""nope"",""ex_0_img_0""]",x,"[""nope""]"\n' > q.csv
expect "serve: bad qualification file names the line" 2 "q.csv:2: field 'candidates': image 'nope' is not in syn/images" -- "$WINOKIT" serve --images syn/images --qualification q.csv
expect "game export: missing database" 3 "absent.db: no such database" -- "$WINOKIT" game export --db absent.db
expect "game export: not a game database" 2 "examples.jsonl: not a winokit game database" -- "$WINOKIT" game export --db syn/examples.jsonl
: > syn/empty.db
expect "game export: an empty SQLite file is not one either" 2 "not a winokit game database" -- "$WINOKIT" game export --db syn/empty.db
expect "serve: a zero request deadline" 2 "must be positive" -- "$WINOKIT" serve --images syn/images --request-seconds 0
expect "serve: a host name instead of an address" 2 "numeric IPv4 or IPv6 address" -- "$WINOKIT" serve --images syn/images --host example.org
expect "game admin: missing database" 3 "absent.db: no such database" -- "$WINOKIT" game admin --db absent.db --list
expect "game admin: not a game database" 2 "not a winokit game database" -- "$WINOKIT" game admin --db syn/empty.db --grant ana
expect "game admin: nothing to do" 2 "--grant NAME, --revoke NAME or --list" -- "$WINOKIT" game admin --db syn/empty.db
# A fresh game database (the server made it and stopped): the export says why it is empty.
# shellcheck source=game_server.sh
. "$CLI_DIR/game_server.sh"
"$WINOKIT" synth --out pool12 --count 6 --seed 2 --image-size 64 >/dev/null
start_game_server fresh.log --images pool12/images --db fresh.db --password-cost min --rival-seed 1 --no-cache
kill "$PID"; wait "$PID" 2>/dev/null
expect "game export with no complete round says why" 0 "no associations reach --min-solvable 80; 0 exist: no round is complete yet" -- "$WINOKIT" game export --db fresh.db --out fresh.csv
[ "$(wc -l < fresh.csv)" -eq 1 ] && ok "the empty export still has its header" || not_ok "empty export" "$(cat fresh.csv)"

for sub in eval compare synth demo embed score bench winogavil swow retrieval variants heatmap probe serve game; do
  expect "help: $sub" 0 "Usage|OPTIONS" -- "$WINOKIT" "$sub" --help
done
expect "version" 0 "winokit 0\." -- "$WINOKIT" --version

echo
echo "cli: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
