#!/usr/bin/env bash
# Times the whole `winokit eval` process (start-up, reading files, 10,000 resamples, writing
# every report) on a 400-example synthetic dataset, RUNS times after one warm-up; prints the
# median and the spread with the machine.
# Usage: bench/run_cli_eval.sh [build-dir] [runs]
set -euo pipefail
BUILD=${1:-build}
RUNS=${2:-9}
WINOKIT=$(realpath "$BUILD/winokit")
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
"$WINOKIT" synth --out ds --count 400 --image-size 64 >/dev/null
"$WINOKIT" eval --data ds --scorer random --bootstrap 100 --scores-out scores.jsonl --quiet
run() {
  "$WINOKIT" eval --data ds --scores scores.jsonl --bootstrap 10000 --json r.json --csv r.csv \
    --html r.html --per-example p.jsonl --scores-out s.jsonl --markdown r.md
}
run
times=()
for _ in $(seq "$RUNS"); do
  start=$(date +%s%N)
  run
  end=$(date +%s%N)
  times+=($(( (end - start) / 1000 )))
done
sorted=($(printf '%s\n' "${times[@]}" | sort -n))
median_us=${sorted[$((RUNS / 2))]}
echo "{\"bench\": \"cli-eval\", \"cpu\": \"$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)\", \"cores\": $(nproc), \"examples\": 400, \"resamples\": 10000, \"runs\": $RUNS, \"median_ms\": $((median_us / 1000)).$(printf '%03d' $((median_us % 1000))), \"min_ms\": $((sorted[0] / 1000)), \"max_ms\": $((sorted[RUNS - 1] / 1000))}"
