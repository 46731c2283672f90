#!/usr/bin/env bash
# Byte-identity check of every report-producing command between two winokit binaries.
#
# Usage: scripts/compare_outputs.sh BEFORE_BINARY AFTER_BINARY [WORK_DIR]
#
# Runs the same command list with each binary, each in its own folder (WORK_DIR/before,
# WORK_DIR/after; default a fresh temporary folder), with relative paths so that the paths
# written into the reports are the same, and a fresh embedding cache per binary
# (WINOKIT_CACHE_DIR inside its folder) so that "computed / from the cache" counts agree. Every
# command's stdout, stderr and exit status are kept beside its output files. Then `diff -r`.
#
# Covered: synth (the data), demo (baselines + in-process random CLIP; compare.html), eval with
# every output format (--json --csv --per-example --scores-out --html [embed, link, none]
# --markdown, stdout) from a baseline scorer, from a scores file in every format eval reads
# (official JSONL, per-example JSONL, CSV table, white-space table), with tag sets, covariates,
# --secondary-grouping exact, and from a model; compare (json, csv, html, markdown, run info);
# winogavil (predictions columns of the published fixtures with --types, and zero-shot with a
# model: json, csv, html, markdown, predictions-out); retrieval (from a model and from a matrix:
# json, markdown, html, matrix-out); variants eval (json, markdown, html); probe (from an
# embeddings file and from a model: json, markdown, html); heatmap (html and PNGs, tiny model).
# The model-based commands run when ../shared/golden/clip/models (tiny checkpoints) exists.
#
# Masked fields (inherently run-dependent, the only ones; each value becomes "MASKED"):
#   - probe's JSON "seconds" (wall time of the probe runs);
#   - a model scorer's "caption_seconds" / "image_seconds" (embedding wall time) in the JSON
#     reports and in the HTML provenance tables (scorer.embeddings.*_seconds);
#   - synth --zip's images.zip: the archive holds file modification times, so it is replaced by
#     a listing of each member's name, size and CRC-32 (the contents are still compared).
# Nothing else is masked: file paths are relative and the same in both runs.
set -u
BEFORE=$(realpath "${1:?usage: compare_outputs.sh BEFORE_BINARY AFTER_BINARY [WORK_DIR]}")
AFTER=$(realpath "${2:?usage: compare_outputs.sh BEFORE_BINARY AFTER_BINARY [WORK_DIR]}")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
FIXTURES="$ROOT/tests/fixtures"
SHARED=$(realpath "$ROOT/../shared" 2>/dev/null || echo "")
MODELS="$SHARED/golden/clip/models"
WORK=${3:-$(mktemp -d)}
mkdir -p "$WORK"
WORK=$(realpath "$WORK")

# run NAME CMD...: runs one command, keeping its stdout, stderr and exit status as files.
run() {
  local name=$1
  shift
  "$@" >"log/$name.stdout" 2>"log/$name.stderr"
  echo $? >"log/$name.rc"
}

run_all() {
  local W=$1
  export WINOKIT_CACHE_DIR="$PWD/cache"
  mkdir -p log
  # --- data ---
  run synth "$W" synth --out syn --count 35 --seed 3 --image-size 64
  run synth_zip "$W" synth --out synzip --count 35 --seed 3 --image-size 64 --zip
  # --- demo (baselines and in-process random CLIP) ---
  run demo "$W" demo --out demo --count 12 --seed 2 --threads 2
  run demo_noclip "$W" demo --out demo2 --count 10 --seed 4 --no-clip
  # --- eval: every output, every html image mode ---
  run eval_all "$W" eval --data syn --scorer random --seed 5 --bootstrap 300 \
    --json e/r.json --csv e/r.csv --per-example e/r.per.jsonl --scores-out e/r.scores.jsonl \
    --html e/r.html --markdown e/r.md
  run eval_stdout "$W" eval --data syn --scorer oracle --bootstrap 200
  run eval_bow "$W" eval --data syn --scorer bag-of-words --bootstrap 200 --json e/bow.json
  run eval_link "$W" eval --data syn --scorer oracle --bootstrap 50 --quiet --html e/link.html --html-images link
  run eval_none "$W" eval --data syn --scorer oracle --bootstrap 50 --quiet --html e/none.html --html-images none
  run eval_zip "$W" eval --data synzip --scorer oracle --bootstrap 50 --json e/zip.json --html e/zip.html
  # scores files in every format eval reads
  run eval_official "$W" eval --data syn --scores e/r.scores.jsonl --name random --seed 5 --bootstrap 300 \
    --json e/off.json --csv e/off.csv --markdown e/off.md --html e/off.html --html-images none
  run eval_perex "$W" eval --data syn --scores e/r.per.jsonl --name random --seed 5 --bootstrap 300 \
    --json e/per.json --markdown e/per.md
  {
    printf 'id,c0i0,c0i1,c1i0,c1i1\n'
    grep -o '"label":"[^"]*","score":[^}]*' e/r.scores.jsonl |
      sed -E 's/"label":"([^_]+)_c([01])_i([01])","score":(.*)/\1 \2\3 \4/' |
      awk '{v[$1","$2]=$3; ids[$1]=1} END {for (i in ids) printf "%s,%s,%s,%s,%s\n", i, v[i",00"], v[i",01"], v[i",10"], v[i",11"]}' |
      sort -n
  } >e/table.csv
  run eval_csv_table "$W" eval --data syn --scores e/table.csv --name table --bootstrap 300 \
    --json e/tab.json --csv e/tab.csv --markdown e/tab.md --per-example e/tab.per.jsonl
  tr ',' '\t' <e/table.csv >e/table.tsv
  run eval_tsv_table "$W" eval --data syn --scores e/table.tsv --bootstrap 300 --json e/tsv.json
  # tag sets, covariates, grouping
  printf '{"0": [], "1": ["Unusual Image"], "2": ["Unusual Image", "Visually Difficult"]}\n' >e/hard.json
  printf 'id,perplexity,length\n' >e/ppl.csv
  for i in $(seq 0 34); do echo "$i,$((i * 7 % 11)),$((i % 5))" >>e/ppl.csv; done
  run eval_tags "$W" eval --data syn --scorer random --seed 9 --bootstrap 200 --tags why=e/hard.json \
    --covariate e/ppl.csv --secondary-grouping exact --json e/tags.json --csv e/tags.csv \
    --markdown e/tags.md --html e/tags.html --per-example e/tags.per.jsonl
  run eval_perplexity "$W" eval --data syn --scorer random --bootstrap 100 --perplexity e/ppl.csv --json e/pp.json
  # --- compare ---
  run eval_oracle_scores "$W" eval --data syn --scorer oracle --bootstrap 100 --scores-out c/oracle.jsonl --quiet
  run compare "$W" compare c/oracle.jsonl rnd=e/r.scores.jsonl e/table.csv --data syn --bootstrap 300 \
    --json c/cmp.json --html c/cmp.html --csv c/cmp.csv --markdown c/cmp.md
  run compare_stdout "$W" compare c/oracle.jsonl e/r.scores.jsonl --data syn --bootstrap 100 --html c/none.html --html-images none
  printf 'run,pretraining_pairs,params\noracle,100,5\nrnd,10,3\ntable,50,4\n' >c/info.csv
  run compare_info "$W" compare c/oracle.jsonl rnd=e/r.scores.jsonl e/table.csv --data syn --bootstrap 100 \
    --run-info c/info.csv --exclude-from-correlation oracle --json c/info.json --markdown c/info.md --html c/info.html --html-images link
  # --- winogavil from prediction columns (published fixtures) ---
  local WGA="$FIXTURES/winogavil"
  cp -r "$WGA" wga
  run wg_types "$W" winogavil --data wga/test_sets_with_zero_shot_predictions/game_10_12_with_predictions.csv \
    --predictions-column clip_vit_32_predictions --types wga/model_analysis_on_different_association_types.csv \
    --bootstrap 100 --json w/t.json --csv w/t.csv --html w/t.html --markdown w/t.md --predictions-out w/t.pred.csv
  run wg_56 "$W" winogavil --data wga/test_sets_with_zero_shot_predictions/game_5_6_with_predictions.csv \
    --predictions-column clip_vit_32_predictions --bootstrap 100 --seed 7 --confidence 0.9 --json w/56.json
  run wg_swow "$W" winogavil --data wga/swow.csv --predictions-column associations --bootstrap 50 --name solvers \
    --json w/s.json --csv w/s.csv --html w/s.html
  if [ -d "$MODELS" ]; then
    local HFM="$MODELS/tiny-quickgelu-hf"
    # --- eval from a model ---
    run eval_model "$W" eval --data syn --model "$HFM" --name tiny --bootstrap 100 --json m/m.json \
      --html m/m.html --csv m/m.csv --per-example m/m.per.jsonl --scores-out m/m.scores.jsonl --markdown m/m.md
    # --- retrieval ---
    run retrieval_model "$W" retrieval --data syn --model "$HFM" --matrix-out rt/m.safetensors \
      --markdown rt/r1.md --json rt/r1.json --html rt/r1.html
    run retrieval_matrix "$W" retrieval --data syn --matrix rt/m.safetensors --k 1,3 --json rt/r2.json --html rt/r2.html
    run retrieval_stdout "$W" retrieval --data syn --matrix rt/m.safetensors --name tiny
    # --- variants ---
    printf 'word,replacement\ncircle,ring\nsquare,box\n' >v/subs.csv
    run variants_generate "$W" variants generate --data syn --method substitution --substitutions v/subs.csv --out v/variants.jsonl
    run variants_eval "$W" variants eval --data syn --variants v/variants.jsonl --model "$HFM" \
      --json v/var.json --markdown v/var.md --html v/var.html
    run variants_official "$W" variants eval --data syn --variants "$FIXTURES/variants/examples_augmented.jsonl" \
      --model "$HFM" --exclude-original --lambdas 0,0.5 --json v/off.json
    # --- probe: from an embeddings file and from the model ---
    run embed "$W" embed --model "$HFM" --data syn --variants v/variants.jsonl --hidden-states --out p/emb.safetensors
    run probe_emb "$W" probe --data syn --variants v/variants.jsonl --embeddings p/emb.safetensors --seeds 2 \
      --hidden 16 --epochs 3 --layers 0,2,final --name tiny --markdown p/p1.md --json p/p1.json --html p/p1.html
    run probe_emb_stdout "$W" probe --data syn --embeddings p/emb.safetensors --probes pair-text,pair-image \
      --seeds 1 --hidden 8 --epochs 1 --layers final --first-seed 4
    run probe_model "$W" probe --data syn --model "$HFM" --variants v/variants.jsonl --seeds 1 --hidden 8 \
      --epochs 1 --layers 1,final --json p/p2.json --html p/p2.html --quiet
    # --- heatmap ---
    run heatmap "$W" heatmap --data syn --model "$HFM" --examples 0,3 --html h/hm.html --out-dir h/maps
    # --- winogavil zero-shot with a model ---
    mkdir -p wg/images
    local i=0
    for w in sun moon star sea sand tree leaf dog cat fish rock snow "ice cream" fire rain wolf owl; do
      cp "syn/images/ex_$((i % 35))_img_$((i % 2)).png" "wg/images/$w.png"
      i=$((i + 1))
    done
    printf 'cue,R1,R2,R3\nsky,sun,moon,star\nbeach,sea,sand,sun\nforest,tree,leaf,owl\npet,dog,cat,fish\nwinter,snow,ice cream,fire\nnight,moon,owl,wolf\nstorm,rain,sea,rock\n' >wg/swow.csv
    run swow "$W" swow --graph wg/swow.csv --images wg/images --out wg/inst.csv --seed 3
    run wg_model "$W" winogavil --data wg/inst.csv --model "$HFM" --images wg/images --name tiny --bootstrap 200 \
      --predictions-out wg/pred.csv --json wg/r.json --html wg/r.html --csv wg/r.csv --markdown wg/r.md
    mkdir -p wg2/images
    printf 'cue,R1,R2,R3\n' >wg2/swow.csv
    local c s2
    for c in $(seq 0 59); do
      printf 'cue%02d,w%02da,w%02db,w%02dc\n' "$c" "$c" "$c" "$c" >>wg2/swow.csv
      for s2 in a b c; do cp "syn/images/ex_$((c % 35))_img_0.png" "wg2/images/w$(printf %02d "$c")$s2.png"; done
    done
    run swow2 "$W" swow --graph wg2/swow.csv --images wg2/images --out wg2/inst.csv --seed 1 --candidates 5
    run wg_supervised "$W" winogavil --data wg2/inst.csv --model "$HFM" --images wg2/images --supervised \
      --epochs 2 --bootstrap 100 --json wg2/r.json --markdown wg2/r.md
  fi
  rm -rf cache wga
  # Masks (see the header).
  local f
  for f in p/*.json; do
    [ -f "$f" ] && sed -i -E 's/^(  "seconds": )[-0-9.eE+]+,$/\1"MASKED",/' "$f"
  done
  find . -type f \( -name '*.json' -o -name '*.html' \) -print0 |
    xargs -0 -r sed -i -E \
      -e 's/("(caption|image)_seconds": )[-0-9.eE+]+/\1"MASKED"/g' \
      -e 's#(<td>[a-z_.]*(caption|image)_seconds</td><td>)[-0-9.eE+]+(</td>)#\1MASKED\3#g'
  find . -type f -name '*.zip' -print0 | while IFS= read -r -d '' f; do
    python3 -c 'import sys, zipfile
for i in zipfile.ZipFile(sys.argv[1]).infolist(): print(i.filename, i.file_size, i.CRC)' "$f" >"$f.members"
    rm "$f"
  done
}

for side in before after; do
  rm -rf "${WORK:?}/$side"
  mkdir -p "$WORK/$side"/{e,c,w,m,rt,v,p,h}
  bin=$BEFORE
  [ "$side" = after ] && bin=$AFTER
  echo "compare_outputs: running $side ($bin) in $WORK/$side" >&2
  (cd "$WORK/$side" && run_all "$bin")
done

n=$(cd "$WORK/before" && find . -type f | wc -l)
if diff -r "$WORK/before" "$WORK/after" >"$WORK/diff.txt"; then
  echo "compare_outputs: $n files compared, 0 differ ($WORK)"
  exit 0
fi
differ=$(grep -cE '^(diff -r|Only in|Binary files)' "$WORK/diff.txt")
echo "compare_outputs: $n files compared, $differ differ (see $WORK/diff.txt)"
head -40 "$WORK/diff.txt"
exit 1
