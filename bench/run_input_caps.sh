#!/usr/bin/env bash
# Issue 14 (inputs): how fast, and in how much memory, `winokit` refuses hostile inputs: a
# 200 MB one-line garbage scores file and a 1 GB one-line WinoGAViL CSV (the file's size is
# over the cap), and a 300 MB CSV whose second line never ends. Each RUNS times after one
# warm-up; prints the median wall time and peak RSS (GNU time) with the machine and its load.
# Usage: bench/run_input_caps.sh [build-dir] [runs]
set -euo pipefail
BUILD=${1:-build}
RUNS=${2:-7}
WINOKIT=$(realpath "$BUILD/winokit")
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
"$WINOKIT" synth --out ds --count 40 --image-size 64 >/dev/null
head -c 4000 /dev/urandom | tr -d '\n' > garbage.jsonl && truncate -s 200M garbage.jsonl
printf 'ID,cue,candidates,associations,p\n1,sky,"[""sun"",""moon""]","[""sun""]","[""sun""]"\n' > wg1g.csv
truncate -s 1G wg1g.csv
{ printf 'ID,cue,candidates,associations,p\n'; head -c 4000 /dev/zero | tr '\0' 'x'; } > wgline.csv
truncate -s 300M wgline.csv

measure() {  # NAME COMMAND...: the command must exit 2
  local name=$1
  shift
  "$@" >/dev/null 2>&1 || true
  local times=() peaks=()
  for _ in $(seq "$RUNS"); do
    local start end rc
    start=$(date +%s%N)
    rc=0
    /usr/bin/time -f '%M' -o peak.txt "$@" >/dev/null 2>&1 || rc=$?
    end=$(date +%s%N)
    [ "$rc" -eq 2 ] || { echo "$name: exit $rc, wanted 2" >&2; exit 1; }
    times+=($(((end - start) / 1000)))
    peaks+=($(tail -1 peak.txt))
  done
  local t p
  t=($(printf '%s\n' "${times[@]}" | sort -n))
  p=($(printf '%s\n' "${peaks[@]}" | sort -n))
  echo "{\"bench\": \"input-caps\", \"case\": \"$name\", \"runs\": $RUNS, \"median_ms\": $((t[RUNS / 2] / 1000)).$(printf '%03d' $((t[RUNS / 2] % 1000))), \"max_ms\": $((t[RUNS - 1] / 1000)), \"median_peak_rss_mb\": $((p[RUNS / 2] / 1024)), \"cpu\": \"$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)\", \"cores\": $(nproc), \"load\": \"$(cut -d' ' -f1-3 /proc/loadavg)\"}"
}

measure "200 MB one-line garbage scores file" "$WINOKIT" eval --data ds --scores garbage.jsonl
measure "1 GB one-line WinoGAViL CSV" "$WINOKIT" winogavil --data wg1g.csv --predictions-column p
measure "300 MB WinoGAViL CSV, endless line 2" "$WINOKIT" winogavil --data wgline.csv --predictions-column p
