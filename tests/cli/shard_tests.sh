#!/usr/bin/env bash
CLI_DIR=$(cd "$(dirname "$0")" && pwd)
# Sharded runs (--shard I/N + winokit merge) and the shared cache.
# - For each command that splits: the single-process run, then N = 1, 3 and 4 shards as separate
#   processes started together (sharing one cache folder), merged: the same output bytes as the
#   single run, except wall times (JSON keys *_seconds).
# - merge refuses parts that do not belong together, naming what is wrong.
# - The stress test: 8 processes write the same cache keys at once, one killed with SIGKILL in the
#   middle of a write; every entry then reads back complete, and the merged result is the same.
# - docs/cluster.md: the Slurm script passes bash -n and a dry run with faked Slurm variables;
#   the Kubernetes manifest is valid YAML with what an Indexed Job needs.
# Usage: shard_tests.sh PATH/TO/winokit SOURCE_DIR
set -u
WINOKIT=$(realpath "${1:?usage: shard_tests.sh PATH/TO/winokit SOURCE_DIR}")
SRC=$(realpath "${2:?usage: shard_tests.sh PATH/TO/winokit SOURCE_DIR}")
WORK=$(mktemp -d)
trap '[ -n "${KEEP_WORK:-}" ] && echo "kept $WORK" || rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1
export OMP_NUM_THREADS=1
export WINOKIT_PROGRESS_SECONDS=0
source "$CLI_DIR/lib.sh"

CLIP="$SRC/../shared/golden/clip/models/tiny-quickgelu-hf"   # a dual encoder
VILT="$SRC/tests/fixtures/vilt/tiny-rank"                     # a cross-encoder
LM="$SRC/tests/golden/gpt2_tiny/f32"                          # GPT-2 (perplexity, eval --lm)

"$WINOKIT" synth --out syn --count 10 --seed 5 --image-size 64 >/dev/null 2>&1 || exit 1
mkdir -p wg/images
i=0
for w in sun moon star sea sand tree leaf dog cat fish rock snow; do
  cp "syn/images/ex_$((i % 10))_img_$((i / 10)).png" "wg/images/$w.png"; i=$((i + 1))
done
printf 'cue,R1,R2,R3\nsky,sun,moon,star\nbeach,sea,sand,sun\nforest,tree,leaf,cat\npet,dog,cat,fish\n' > wg/swow.csv
"$WINOKIT" swow --graph wg/swow.csv --images wg/images --out wg/inst.csv --seed 3 >/dev/null 2>&1 || exit 1
printf 'word,replacement\ncircle,ring\nsquare,box\n' > subs.csv
"$WINOKIT" variants generate --data syn --method substitution --substitutions subs.csv --out variants.jsonl >/dev/null 2>&1 || exit 1

# same_tree A B [KEY]: every file of A is in B with the same bytes; JSON files may differ only in
# keys ending in _seconds (wall times), and in KEY when given.
same_tree() {
  python3 - "$1" "$2" "${3:-}" <<'PY'
import json, os, re, sys
a, b, also = sys.argv[1], sys.argv[2], sys.argv[3]
def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if not k.endswith("_seconds") and k != also}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x
bad = []
files = 0
for root, _, names in os.walk(a):
    for n in names:
        pa = os.path.join(root, n)
        pb = os.path.join(b, os.path.relpath(pa, a))
        files += 1
        if not os.path.exists(pb):
            bad.append(f"{pb}: missing"); continue
        da, db = open(pa, "rb").read(), open(pb, "rb").read()
        if da == db:
            continue
        if n.endswith(".json"):
            ja, jb = json.loads(da), json.loads(db)
            if json.dumps(strip(ja), indent=2) == json.dumps(strip(jb), indent=2):
                continue
        else:
            # A report's provenance table or block: the value after a *_seconds name.
            wall = re.compile(rb'(_seconds(?:"|</td>|\|)?\s*:?\s*(?:<td>)?)-?[0-9][0-9.eE+-]*')
            if wall.sub(rb"\1T", da) == wall.sub(rb"\1T", db):
                continue
        bad.append(f"{pb}: differs from {pa}")
if files == 0:
    bad.append(f"{a}: no outputs")
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
}

# sharded NAME -- COMMAND...: COMMAND writes its outputs under out-NAME/. Runs it once (its own
# cache), then as N = 1, 3, 4 shards started together (one shared cache per N), merges each and
# compares the outputs.
sharded() {
  local name=$1 ignore=""
  if [ "$2" != "--" ]; then ignore=$2; shift; fi
  shift 2
  rm -rf "out-$name"
  if ! WINOKIT_CACHE_DIR="$WORK/cache-single-$name" "$@" --threads 1 >"single-$name.log" 2>&1; then
    not_ok "$name: the single run" "$(tail -5 "single-$name.log")"
    return
  fi
  mv "out-$name" "single-$name"
  for n in 1 3 4; do
    local pids=() rcs=0
    for ((i = 0; i < n; i++)); do
      WINOKIT_CACHE_DIR="$WORK/cache-$name-$n" "$@" --threads 1 --shard "$i/$n" \
        --part "parts-$name-$n/part-$i.json" >"shard-$name-$n-$i.log" 2>&1 &
      pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || rcs=$((rcs + 1)); done
    if [ "$rcs" -ne 0 ]; then
      not_ok "$name: $n shards run" "$(tail -3 shard-"$name"-"$n"-*.log)"
      continue
    fi
    if [ -e "out-$name" ]; then
      not_ok "$name: a shard wrote the command's outputs"
      rm -rf "out-$name"
    fi
    # Merged where the shards ran, to the paths of the command line (out-NAME/...).
    if ! "$WINOKIT" merge "parts-$name-$n"/part-*.json >"merge-$name-$n.log" 2>&1; then
      not_ok "$name: merge of $n shards" "$(tail -5 "merge-$name-$n.log")"
      continue
    fi
    mkdir -p "merged-$name-$n" && mv "out-$name" "merged-$name-$n/"
    local diff
    if diff=$(same_tree "single-$name" "merged-$name-$n/out-$name" "$ignore"); then
      ok "$name: $n shards merge to the single run's outputs"
    else
      not_ok "$name: $n shards merge to other outputs" "$diff"
    fi
  done
}

sharded eval-clip -- "$WINOKIT" eval --data syn --model "$CLIP" --quiet --json out-eval-clip/r.json \
  --csv out-eval-clip/r.csv --markdown out-eval-clip/r.md --per-example out-eval-clip/pe.jsonl \
  --scores-out out-eval-clip/s.jsonl --html out-eval-clip/r.html --bootstrap 200
sharded eval-vilt -- "$WINOKIT" eval --data syn --model "$VILT" --quiet --json out-eval-vilt/r.json \
  --markdown out-eval-vilt/r.md --scores-out out-eval-vilt/s.jsonl --bootstrap 200
# The other families (a dual encoder without heads; cross-encoders with heads): eval.
for fam in siglip:tests/fixtures/siglip/tiny-a blip:tests/fixtures/blip/tiny-itm \
  flava:tests/fixtures/flava/tiny-pretraining; do
  sharded "eval-${fam%%:*}" -- "$WINOKIT" eval --data syn --model "$SRC/${fam#*:}" --quiet \
    --json "out-eval-${fam%%:*}/r.json" --scores-out "out-eval-${fam%%:*}/s.jsonl" --bootstrap 50
done
sharded eval-clip-lm -- "$WINOKIT" eval --data syn --model "$CLIP" --lm "$LM" --quiet \
  --json out-eval-clip-lm/r.json --markdown out-eval-clip-lm/r.md --scores-out out-eval-clip-lm/s.jsonl \
  --bootstrap 200
sharded perplexity -- "$WINOKIT" perplexity --data syn --model "$LM" --out out-perplexity/p.csv
# probe: the units are the probes (a task on a layer: its 2 x seeds fits) and the SVM layers, over
# states written once by embed.
"$WINOKIT" embed --data syn --model "$CLIP" --variants variants.jsonl --hidden-states \
  --out states.safetensors --no-cache >/dev/null 2>&1 || not_ok "embed the probe's states"
sharded probe seconds -- "$WINOKIT" probe --data syn --embeddings states.safetensors \
  --variants variants.jsonl --split random --seeds 3 --depth 2 --hidden 16 --epochs 3 \
  --json out-probe/p.json --markdown out-probe/p.md --html out-probe/p.html --quiet
expect "probe --shard with --model says to write the states first" 2 \
  "give --embeddings FILE.*winokit embed --model DIR --hidden-states" -- \
  "$WINOKIT" probe --data syn --model "$CLIP" --shard 0/2
sharded run-clip -- "$WINOKIT" run winoground --data syn --model "$CLIP" --quiet \
  --json out-run-clip/r.json --markdown out-run-clip/r.md --csv out-run-clip/r.csv
sharded run-vilt -- "$WINOKIT" run winoground --data syn --model "$VILT" --quiet \
  --json out-run-vilt/r.json --markdown out-run-vilt/r.md
sharded embed-clip -- "$WINOKIT" embed --data syn --model "$CLIP" --out out-embed-clip/e.safetensors
sharded retrieval-clip -- "$WINOKIT" retrieval --data syn --model "$CLIP" --quiet \
  --json out-retrieval-clip/r.json --markdown out-retrieval-clip/r.md
# A cross-encoder's full caption x image matrix is one block: its units are the images, and every
# shard encodes the captions again, so the provenance's captions_computed counts them per shard
# (the one figure that differs; the scores and reports are the single run's).
sharded retrieval-vilt captions_computed -- "$WINOKIT" retrieval --data syn --model "$VILT" --quiet \
  --json out-retrieval-vilt/r.json --markdown out-retrieval-vilt/r.md
sharded winogavil-clip -- "$WINOKIT" winogavil --data wg/inst.csv --images wg/images \
  --model "$CLIP" --bootstrap 50 --quiet --json out-winogavil-clip/r.json \
  --markdown out-winogavil-clip/r.md
sharded variants-clip -- "$WINOKIT" variants eval --data syn --variants variants.jsonl \
  --model "$CLIP" --quiet --json out-variants-clip/r.json --markdown out-variants-clip/r.md

# ---- merge refuses parts that do not belong together ----
P=parts-eval-clip-4
expect "merge: a missing shard is named" 2 "shard 2 of 4 is missing \(given: 0, 1, 3\)" -- \
  "$WINOKIT" merge $P/part-0.json $P/part-1.json $P/part-3.json -o bad
expect "merge: a shard given twice is named" 2 "shard 1 of 4 is given twice" -- \
  "$WINOKIT" merge $P/part-0.json $P/part-1.json $P/part-1.json $P/part-2.json $P/part-3.json -o bad
expect "merge: parts of another split are refused" 2 "is shard 0 of 3, .* is of 4 shards" -- \
  "$WINOKIT" merge $P/part-1.json parts-eval-clip-3/part-0.json -o bad
expect "merge: parts of another command are refused" 2 "the command line .* differs" -- \
  "$WINOKIT" merge $P/part-0.json parts-run-clip-4/part-1.json -o bad
expect "merge: parts of another model are refused" 2 "differs" -- \
  "$WINOKIT" merge $P/part-0.json $P/part-1.json parts-eval-vilt-4/part-2.json $P/part-3.json -o bad
[ ! -e bad ] && ok "merge: a refused merge writes nothing" || not_ok "merge: a refused merge wrote files"
expect "--shard: an index out of range is refused" 2 "shard 4 of 4 does not exist" -- \
  "$WINOKIT" eval --data syn --model "$CLIP" --shard 4/4
expect "--shard: a command that does not split refuses it" 2 "does not take --shard" -- \
  "$WINOKIT" heatmap --data syn --model "$CLIP" --examples 0 --out-dir hm --shard 0/2
expect "--shard without --model is refused" 2 "give --model" -- \
  "$WINOKIT" eval --data syn --scorer random --shard 0/2
expect "--shard env/N without a scheduler's variable is refused" 2 "SLURM_ARRAY_TASK_ID" -- \
  env -u SLURM_ARRAY_TASK_ID -u JOB_COMPLETION_INDEX -u WINOKIT_SHARD_INDEX \
  "$WINOKIT" eval --data syn --model "$CLIP" --shard env/2
# The index from the schedulers' variables.
mkdir -p envparts
export WINOKIT_CACHE_DIR="$WORK/cache-env"
SLURM_ARRAY_TASK_ID=0 "$WINOKIT" eval --data syn --model "$CLIP" --quiet --threads 1 \
  --json out-eval-clip/r.json --csv out-eval-clip/r.csv --markdown out-eval-clip/r.md \
  --per-example out-eval-clip/pe.jsonl --scores-out out-eval-clip/s.jsonl \
  --html out-eval-clip/r.html --bootstrap 200 --shard env/2 --part envparts/a.json 2>/dev/null
env -u SLURM_ARRAY_TASK_ID JOB_COMPLETION_INDEX=1 "$WINOKIT" eval --data syn --model "$CLIP" \
  --quiet --threads 1 --json out-eval-clip/r.json --csv out-eval-clip/r.csv \
  --markdown out-eval-clip/r.md --per-example out-eval-clip/pe.jsonl \
  --scores-out out-eval-clip/s.jsonl --html out-eval-clip/r.html --bootstrap 200 \
  --shard env/2 --part envparts/b.json 2>/dev/null
unset WINOKIT_CACHE_DIR
if "$WINOKIT" merge envparts/a.json envparts/b.json -o merged-env >merge-env.log 2>&1 &&
  d=$(same_tree single-eval-clip merged-env/out-eval-clip); then
  ok "--shard env/2 from SLURM_ARRAY_TASK_ID and JOB_COMPLETION_INDEX merges to the single run"
else
  not_ok "--shard env/2" "$(tail -3 merge-env.log) ${d:-}"
fi
grep -q "merge: 2 parts of \`winokit eval" merge-env.log && grep -q "merged shards 0-1 of 2" merge-env.log &&
  ok "merge says what it merged" || not_ok "merge says what it merged" "$(cat merge-env.log)"
grep -q "shard 2/4: wrote" shard-eval-clip-4-2.log && ok "a shard reports its own progress" ||
  not_ok "a shard reports its progress" "$(cat shard-eval-clip-4-2.log)"

# ---- the stress test: 8 writers of the same keys, one killed mid-write ----
# stress LABEL MODEL CACHED REFERENCE: LABEL's 8 writers share cache-stress-LABEL; CACHED is what
# a later run prints when everything comes from the cache; REFERENCE the scores of a clean run.
stress() {
  local label=$1 model=$2 cached=$3 reference=$4
  local cache="$WORK/cache-stress-$label" out="out-stress-$label"
  local run=(eval --data syn --model "$model" --quiet --threads 1 --json "$out/r.json"
    --scores-out "$out/s.jsonl" --bootstrap 50)
  export WINOKIT_CACHE_DIR="$cache"
  local pids=() victim rcs=0 half d=""
  WINOKIT_TEST_STALL_SHARED_WRITE=30 "$WINOKIT" "${run[@]}" --shard 0/1 \
    --part "stress-$label/victim.json" >"stress-$label-victim.log" 2>&1 &
  victim=$!
  # The victim stops half-way through its first entry (up to 2 minutes for it to get there on a
  # loaded 2-core machine). The other writers start once it is there: started together, they
  # could write every entry first, and the victim, finding them cached, would write none.
  for _ in $(seq 1 1200); do
    find "$cache" -name ".*.part-*-$victim-*" 2>/dev/null | grep -q . && break
    sleep 0.1
  done
  for i in 0 1 2 3 4 5 6; do
    "$WINOKIT" "${run[@]}" --shard 0/1 --part "stress-$label/w$i.json" >"stress-$label-$i.log" 2>&1 &
    pids+=($!)
  done
  # Kill it there, while the 7 others compute and write the same keys.
  sleep 1
  half=$(find "$cache" -name ".*.part-*-$victim-*" | wc -l)
  kill -KILL "$victim"
  wait "$victim" 2>/dev/null
  [ "$half" -ge 1 ] && ok "stress $label: the victim was killed in the middle of a write" ||
    not_ok "stress $label: no half-written temporary seen"
  for p in "${pids[@]}"; do wait "$p" || rcs=$((rcs + 1)); done
  [ "$rcs" -eq 0 ] && ok "stress $label: 7 concurrent writers of the same keys succeed" ||
    not_ok "stress $label: writers failed" "$(tail -3 stress-"$label"-*.log)"
  if d=$(python3 - "$cache" <<'PY'
import hashlib, json, os, sys
root = sys.argv[1]
entries = bad = 0
for d, _, names in os.walk(os.path.join(root, "embeddings")):
    for n in names:
        if n.startswith("."):
            continue  # a temporary (the victim's): never read as an entry
        b = open(os.path.join(d, n), "rb").read()
        entries += 1
        ok = (len(b) >= 8 + 128 and b[:8] == b"WKEMB001" and b[8:72].decode() == n
              and hashlib.sha256(b[:-64]).hexdigest().encode() == b[-64:])
        bad += not ok
hashes = 0
for d, _, names in os.walk(os.path.join(root, "file-hashes")):
    for n in names:
        if not n.startswith("."):
            j = json.load(open(os.path.join(d, n)))
            assert len(j["sha256"]) == 64
            hashes += 1
print(f"{entries} entries, {bad} incomplete, {hashes} file hashes")
sys.exit(0 if entries > 0 and bad == 0 else 1)
PY
  ); then
    ok "stress $label: every cache entry is complete (magic, key, checksum): $d"
  else
    not_ok "stress $label: incomplete cache entries" "$d"
  fi
  expect "stress $label: a later run reads everything from the cache" 0 "$cached" -- \
    "$WINOKIT" "${run[@]}"
  cmp -s "$out/s.jsonl" "$reference" && ok "stress $label: the scores are a clean run's" ||
    not_ok "stress $label: the stressed cache gives other scores"
  mv "$out" "single-stress-$label"
  "$WINOKIT" "${run[@]}" --shard 0/2 --part "stress2-$label/a.json" 2>/dev/null &
  "$WINOKIT" "${run[@]}" --shard 1/2 --part "stress2-$label/b.json" 2>/dev/null &
  wait
  if "$WINOKIT" merge "stress2-$label/a.json" "stress2-$label/b.json" >/dev/null 2>&1 &&
    d=$(same_tree "single-stress-$label" "$out"); then
    ok "stress $label: the merged result from the stressed cache is the single run's"
  else
    not_ok "stress $label: merged result" "${d:-}"
  fi
  unset WINOKIT_CACHE_DIR
}
stress pairs "$VILT" "pairs: 0 computed" single-eval-vilt/s.jsonl
stress embeddings "$CLIP" "0 images computed, 20 from the cache; 0 captions computed" \
  single-eval-clip/s.jsonl

# ---- docs/cluster.md: the recipes ----
DOC="$SRC/docs/cluster.md"
python3 - "$DOC" <<'PY' || not_ok "docs/cluster.md: its recipes can be extracted"
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
blocks = re.findall(r"```(\w+)\n(.*?)```", text, re.S)
# The recipes are scripts to submit, not lines to type: fenced as sbatch, yaml and text, so
# the docs test (which runs every line of a sh/bash block) leaves them to this test.
slurm = [b for lang, b in blocks if lang == "sbatch" and "#SBATCH" in b]
k8s = [b for lang, b in blocks if lang == "yaml" and "Indexed" in b]
local = [b for lang, b in blocks if lang == "text" and ("xargs" in b or "parallel" in b)]
assert slurm and k8s and local, (len(slurm), len(k8s), len(local))
open("slurm.sh", "w").write(slurm[0])
open("job.yaml", "w").write(k8s[0])
open("local.sh", "w").write(local[0])
PY
bash -n slurm.sh && ok "docs/cluster.md: the Slurm script passes bash -n" || not_ok "Slurm script: bash -n"
# The array arithmetic: each task of --array=0-N-1 runs shard TASK/N, and the merge names all N.
grep -qE -- '--array=0-3' slurm.sh && ok "Slurm: --array=0-3 for 4 shards" || not_ok "Slurm: --array"
mkdir -p fakebin
cat > fakebin/winokit <<'SH'
#!/bin/sh
echo "winokit $*" >> "$FAKE_LOG"
SH
chmod +x fakebin/winokit
dry_ok=1
for t in 0 1 2 3; do
  FAKE_LOG=$WORK/fake.log PATH="$WORK/fakebin:$PATH" SLURM_ARRAY_TASK_ID=$t SLURM_ARRAY_TASK_COUNT=4 \
    SLURM_ARRAY_JOB_ID=77 SLURM_JOB_ID=$((77 + t)) SLURM_CPUS_PER_TASK=8 OUT=$WORK/slurm-out \
    DATA=$WORK/syn MODEL=$CLIP CACHE=$WORK/slurm-cache bash slurm.sh >/dev/null 2>&1 || dry_ok=0
  grep -q -- "--shard env/4 --part $WORK/slurm-out/parts/$t.json" fake.log || dry_ok=0
done
if [ "$dry_ok" -eq 1 ] && [ "$(grep -c -- '--shard env/4' fake.log)" -eq 4 ]; then
  ok "Slurm dry run: tasks 0..3 each run one shard of 4"
else
  not_ok "Slurm dry run" "$(cat fake.log 2>/dev/null)"
fi
python3 - job.yaml <<'PY' && ok "Kubernetes: a valid Indexed Job manifest" || not_ok "Kubernetes manifest"
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
job = next(d for d in docs if d.get("kind") == "Job")
spec = job["spec"]
assert job["apiVersion"] == "batch/v1"
assert spec["completionMode"] == "Indexed"
assert spec["completions"] == spec["parallelism"] or spec["parallelism"] >= 1
pod = spec["template"]["spec"]
assert pod["restartPolicy"] in ("Never", "OnFailure")
text = open(sys.argv[1]).read()
assert "JOB_COMPLETION_INDEX" in text or "env/" in text
assert "--shard" in text and "merge" in text
PY
bash -n local.sh && grep -q "merge" local.sh && ok "the one-machine recipe parses and ends with the merge" ||
  not_ok "one-machine recipe"

echo "shard: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
