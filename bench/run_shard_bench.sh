#!/usr/bin/env bash
# Sharding on one machine: `winokit eval --model` as 2 shards with 1 thread each (started
# together, one shared cache folder) against 1 process with 2 threads, on a ViT-B/32-shaped
# float32 checkpoint (Hugging Face layout, seeded random weights) over a Winoground-layout
# dataset of photo-like 1920x1280 JPEGs (both made by make_memory_bench_data, once, under WORK);
# then the merge of the 2 parts. Every case starts from an empty cache (weights hashed, every
# embedding computed), alternating the two setups RUNS times; prints one JSON line per run and the
# medians, with the machine and the load average (the machine may be shared).
# The merged scores must be the single process's bytes: the script checks it.
#
#   bench/run_shard_bench.sh [build-dir] [work-dir] [examples] [runs]
set -euo pipefail
BUILD=${1:-build}
WORK=${2:-/tmp/winokit-shard-bench}
EXAMPLES=${3:-100}
RUNS=${4:-3}
WINOKIT=$(realpath "$BUILD/winokit")
GENERATOR=$(realpath "$BUILD/bench/make_memory_bench_data")
mkdir -p "$WORK"
"$GENERATOR" --out "$WORK" --examples "$EXAMPLES" > /dev/null
DATA=$WORK/winoground-$EXAMPLES
MODEL=$WORK/vit-b32-random-hf
cd "$WORK"
now() { date +%s.%N; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
EVAL=(eval --data "$DATA" --model "$MODEL" --bootstrap 1000 --quiet --json out/report.json
  --scores-out out/scores.jsonl)

single_times=() shard_times=() merge_times=()
for run in $(seq 1 "$RUNS"); do
  rm -rf cache-single out
  t0=$(now)
  "$WINOKIT" "${EVAL[@]}" --threads 2 --cache-dir cache-single 2>/dev/null
  t1=$(now)
  single=$(printf '%.3f' "$(echo "$t1 - $t0" | bc)")
  mv out single-out
  rm -rf cache-shards parts
  t0=$(now)
  "$WINOKIT" "${EVAL[@]}" --threads 1 --cache-dir cache-shards --shard 0/2 --part parts/0.json 2>/dev/null &
  "$WINOKIT" "${EVAL[@]}" --threads 1 --cache-dir cache-shards --shard 1/2 --part parts/1.json 2>/dev/null &
  wait
  t1=$(now)
  "$WINOKIT" merge parts/0.json parts/1.json 2>/dev/null
  t2=$(now)
  shards=$(printf '%.3f' "$(echo "$t1 - $t0" | bc)")
  merge=$(printf '%.3f' "$(echo "$t2 - $t1" | bc)")
  cmp -s single-out/scores.jsonl out/scores.jsonl || { echo "merged scores differ" >&2; exit 1; }
  rm -rf single-out
  single_times+=("$single") shard_times+=("$shards") merge_times+=("$merge")
  echo "{\"bench\": \"shard\", \"run\": $run, \"examples\": $EXAMPLES, \"single_2_threads_s\": $single, \"shards_2x1_thread_s\": $shards, \"merge_s\": $merge, \"load\": \"$(load)\"}"
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
spread() { printf '%s\n' "$@" | sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {print lo "-" hi}'; }
echo "{\"bench\": \"shard\", \"median_single_2_threads_s\": $(median "${single_times[@]}"), \"range_single\": \"$(spread "${single_times[@]}")\", \"median_shards_2x1_thread_s\": $(median "${shard_times[@]}"), \"range_shards\": \"$(spread "${shard_times[@]}")\", \"median_merge_s\": $(median "${merge_times[@]}"), \"cpu\": \"$(lscpu | awk -F': +' '/Model name/ {print $2; exit}')\", \"cores\": $(nproc), \"winokit\": \"$("$WINOKIT" --version)\"}"
