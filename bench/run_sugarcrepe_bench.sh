#!/usr/bin/env bash
# Wall time and peak memory of `winokit run sugarcrepe --model` at SugarCrepe's full size: the
# seven subset files with the release's item counts (add_obj 2,062, add_att 692, replace_obj
# 1,652, replace_att 788, replace_rel 1,406, swap_obj 246, swap_att 666: 7,512 items), each
# item's image drawn (seeded) from a pool of 5,000 COCO-sized JPEGs (val2017's count; 640x480,
# photo-like noise), captions of COCO length; a ViT-B/32-shaped float32 checkpoint with seeded
# random weights (make_memory_bench_data). Images shared between items are encoded once: the run
# reports how many were computed.
#   cold:   an empty cache folder;
#   cached: the same command again (median of RUNS runs).
# Each run under /usr/bin/time -v; one JSON line per case, with the machine and its load.
#
#   bench/run_sugarcrepe_bench.sh [build-dir] [work-dir] [runs] [threads]
set -euo pipefail
BUILD=${1:-build}
WORK=${2:-/tmp/winokit-sugarcrepe-bench}
RUNS=${3:-3}
THREADS=${4:-0}
WINOKIT=$(realpath "$BUILD/winokit")
mkdir -p "$WORK"
"$(realpath "$BUILD/bench/make_memory_bench_data")" --out "$WORK" --examples 1 > /dev/null
MODEL=$WORK/vit-b32-random-hf
if [ ! -f "$WORK/sugar-crepe/data/swap_att.json" ]; then
  /usr/bin/python3 - "$WORK" <<'PY'
import json, os, random, sys
import numpy as np
from PIL import Image
work = sys.argv[1]
images = os.path.join(work, "val2017")
data = os.path.join(work, "sugar-crepe", "data")
os.makedirs(images, exist_ok=True)
os.makedirs(data, exist_ok=True)
rng = random.Random(7)
gen = np.random.default_rng(7)
names = [f"{i:012d}.jpg" for i in range(1, 5001)]
for n in names:
    p = os.path.join(images, n)
    if os.path.exists(p):
        continue
    # smooth colour fields plus noise: JPEG sizes and decode cost close to photos
    base = gen.integers(0, 256, (6, 8, 3), dtype=np.uint8)
    im = Image.fromarray(base).resize((640, 480), Image.BICUBIC)
    arr = np.asarray(im).astype(np.int16) + gen.integers(-20, 21, (480, 640, 3))
    Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8)).save(p, quality=90)
words = ("a man woman dog cat red blue green small large wooden table chair street car bus "
         "sitting standing next to on top of under holding riding eating two three white black "
         "kitchen field beach plate pizza bicycle horse sign tree building").split()
counts = {"add_obj": 2062, "add_att": 692, "replace_obj": 1652, "replace_att": 788,
          "replace_rel": 1406, "swap_obj": 246, "swap_att": 666}
for subset, n in counts.items():
    items = {}
    for i in range(n):
        cap = " ".join(rng.choice(words) for _ in range(rng.randint(8, 13))) + "."
        neg = cap.split()
        rng.shuffle(neg)
        items[str(i)] = {"filename": rng.choice(names), "caption": cap,
                         "negative_caption": " ".join(neg)}
    with open(os.path.join(data, subset + ".json"), "w") as f:
        json.dump(items, f)
PY
fi
DATA=$WORK/sugar-crepe/data
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, $(grep -o -w -m1 'avx512f' /proc/cpuinfo || echo 'no avx512f'); threads ${THREADS} (0: all)"
unique=$(/usr/bin/python3 -c "import json,glob; print(len({v['filename'] for f in glob.glob('$DATA/*.json') for v in json.load(open(f)).values()}))")
echo "items: 7512, distinct images: $unique"

measure() {  # measure CACHE LABEL -> "peak_kb wall_s"
  local out=$WORK/time-$2.txt
  /usr/bin/time -v -o "$out" "$WINOKIT" run sugarcrepe --data "$DATA" --images "$WORK/val2017" \
    --model "$MODEL" --cache-dir "$1" --threads "$THREADS" --json "$WORK/report-$2.json" \
    --quiet > /dev/null 2> "$WORK/stderr-$2.txt"
  local peak wall
  peak=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$out")
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$out" |
    awk -F: '{ if (NF == 3) print $1 * 3600 + $2 * 60 + $3; else print $1 * 60 + $2 }')
  echo "$peak $wall"
}
cache=$WORK/cache
rm -rf "$cache"
cold=$(measure "$cache" cold)
# what the model computed: the last progress line of each stage (images, captions)
computed=$( (grep -oE '(images|captions) [0-9]+/[0-9]+' "$WORK/stderr-cold.txt" || true) |
  awk '{last[$1] = $2} END {for (k in last) printf "%s %s ", k, last[k]}')
echo "{\"bench\": \"sugarcrepe\", \"case\": \"cold\", \"peak_rss_mb\": $(( ${cold% *} / 1024 )), \"wall_s\": ${cold#* }, \"stderr\": \"$computed\", \"load\": \"$(cut -d' ' -f1-3 /proc/loadavg)\"}"
walls=()
peaks=()
for ((r = 0; r < RUNS; r++)); do
  m=$(measure "$cache" "cached-$r")
  walls+=("${m#* }")
  peaks+=("${m% *}")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
echo "{\"bench\": \"sugarcrepe\", \"case\": \"cached\", \"runs\": $RUNS, \"peak_rss_mb\": $(( $(median "${peaks[@]}") / 1024 )), \"wall_s\": $(median "${walls[@]}"), \"walls\": \"${walls[*]}\", \"load\": \"$(cut -d' ' -f1-3 /proc/loadavg)\"}"
