#!/usr/bin/env bash
CLI_DIR=$(cd "$(dirname "$0")" && pwd)
# Issue 14 (inputs): every bad-input item as a CLI test. Each bad input gets a clear message
# naming the file (and line), exit 2 (content) or 3 (files), and nothing is written.
# Usage: input_hardening.sh PATH/TO/winokit [SHARED_DIR]
set -u
WINOKIT=$(realpath "${1:?usage: input_hardening.sh PATH/TO/winokit [SHARED_DIR]}")
SHARED=$( [ -n "${2:-}" ] && realpath "$2" 2>/dev/null || echo "")
HFM="$SHARED/golden/clip/models/tiny-quickgelu-hf"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1
source "$CLI_DIR/lib.sh"

# Peak resident memory of a command in MB (GNU time), or empty when time is absent.
peak_mb() {
  [ -x /usr/bin/time ] || return 0
  /usr/bin/time -f '%M' -o peak.txt "$@" >/dev/null 2>&1
  echo $(($(tail -1 peak.txt) / 1024))
}

"$WINOKIT" synth --out syn --count 12 --seed 1 --image-size 64 >/dev/null 2>&1 || { echo "synth failed"; exit 1; }
"$WINOKIT" eval --data syn --scorer random --seed 2 --bootstrap 50 --scores-out s.jsonl --quiet

# --- A3: outputs all-or-nothing; --html naming a directory leaves every other output untouched
for f in r.json r.csv r.md; do echo "old $f" > "$f"; done
mkdir r.html
expect "A3: --html naming a directory is refused (exit 3)" 3 "r.html: cannot write: it is a directory" -- \
  "$WINOKIT" eval --data syn --scores s.jsonl --bootstrap 50 --json r.json --csv r.csv --markdown r.md --html r.html --per-example r.per.jsonl
same=1
for f in r.json r.csv r.md; do [ "$(cat "$f")" = "old $f" ] || same=0; done
[ "$same" = 1 ] && [ ! -e r.per.jsonl ] && [ -z "$(ls -A r.html)" ] && ok "A3: every other output untouched, none created" || not_ok "A3: other outputs untouched" "$(ls -la)"
[ -z "$(ls -A | grep -E '\.(tmp|old)-')" ] && ok "A3: no temporary left behind" || not_ok "A3: temporaries left" "$(ls -A)"
expect "A3: the same file for two outputs is refused" 2 "named for two outputs" -- \
  "$WINOKIT" eval --data syn --scores s.jsonl --bootstrap 50 --json r.json --csv r.json
[ "$(cat r.json)" = "old r.json" ] && ok "A3: ... and nothing written" || not_ok "A3: nothing written for a doubled target"

# --- A5: JSON number overflow -> exit 2 with file and line
sed '3s/"score":[^}]*/"score":1e400/' s.jsonl > over.jsonl
expect "A5: \"score\": 1e400 is exit 2 with file and line" 2 "over.jsonl:3: number out of range" -- \
  "$WINOKIT" eval --data syn --scores over.jsonl --json never.json
[ ! -e never.json ] && ok "A5: nothing written" || not_ok "A5: nothing written"
mkdir -p overds && { head -n 2 syn/examples.jsonl; sed -n 3p syn/examples.jsonl | sed 's/"id": *[0-9]*/"id": 1e400/'; } > overds/examples.jsonl
expect "A5: an id of 1e400 in examples.jsonl" 2 "overds/examples.jsonl:3: number out of range" -- \
  "$WINOKIT" eval --data overds --scorer random
printf '{"0": [], "1": [1e400]}\n' > overtags.json
expect "A5: a number overflow in a tag set names the line" 2 "overtags.json:1: number out of range" -- \
  "$WINOKIT" eval --data syn --scorer random --bootstrap 50 --tags overtags.json

# --- A6: file-system errors -> exit 3 naming the path
ln -s loop1 loop2 && ln -s loop2 loop1
expect "A6: a symlink-loop scores file is exit 3" 3 "loop1: too many levels of symbolic links" -- \
  "$WINOKIT" eval --data syn --scores loop1
expect "A6: a symlink-loop dataset is exit 3" 3 "loop1.*symbolic links" -- "$WINOKIT" eval --data loop1 --scorer random
if [ -n "$SHARED" ] && [ -d "$HFM" ]; then
  mkdir -p loopds && cp syn/examples.jsonl loopds/ && ln -s images loopds/images.zip && ln -s images.zip loopds/images
  expect "A6: a symlink-loop image folder is exit 3 (eval --model)" 3 "loopds/images.*symbolic links" -- \
    env WINOKIT_CACHE_DIR="$WORK/cache" "$WINOKIT" eval --data loopds --model "$HFM"
fi
expect "A6: a directory as the scores file is exit 3" 3 "syn: is a directory" -- "$WINOKIT" eval --data syn --scores syn
expect "A6: a symlink-loop tag set is exit 3" 3 "loop1.*symbolic links" -- "$WINOKIT" eval --data syn --scorer random --tags loop1

# --- A7: image names confined to the image folder
mkdir -p outside esc
cp syn/images/ex_0_img_0.png outside/secret.png
{ sed -n 1p syn/examples.jsonl | sed 's/"image_0": *"[^"]*"/"image_0": "..\/..\/outside\/secret"/'; sed -n '2,$p' syn/examples.jsonl; } > esc/examples.jsonl
cp -r syn/images esc/images
expect "A7: \"image_0\": \"../../outside/secret\" is refused (exit 2, line, field)" 2 \
  "esc/examples.jsonl:1: field 'image_0': '../../outside/secret' is not a name inside the image folder" -- \
  "$WINOKIT" eval --data esc --scorer random
sed -i '1s/\.\.\/\.\.\/outside\/secret/\/etc\/passwd/' esc/examples.jsonl
expect "A7: an absolute image name is refused" 2 "field 'image_0': '/etc/passwd' is not a name inside" -- \
  "$WINOKIT" eval --data esc --scorer random

# --- A8: line and file caps, refused quickly with little memory
head -c 2000 /dev/urandom | tr -d '\n' > garbage.jsonl && truncate -s 200M garbage.jsonl
expect "A8: a 200 MB one-line garbage scores file is refused" 2 "garbage.jsonl:1: line longer than 1 MiB" -- \
  "$WINOKIT" eval --data syn --scores garbage.jsonl
mb=$(peak_mb "$WINOKIT" eval --data syn --scores garbage.jsonl)
[ -z "$mb" ] || { [ "$mb" -lt 100 ] && ok "A8: ... with a peak of $mb MB" || not_ok "A8: 200 MB garbage took $mb MB"; }
mkdir -p bigds && cp garbage.jsonl bigds/examples.jsonl
expect "A8: a 200 MB one-line examples.jsonl is refused" 2 "bigds/examples.jsonl:1: line longer than 1 MiB" -- \
  "$WINOKIT" eval --data bigds --scorer random
printf 'ID,cue,candidates,associations,p\n1,sky,"[""sun"",""moon""]","[""sun""]","[""sun""]"\n' > wg.csv
expect "WinoGAViL CSV: a well-formed file scores" 0 "All" -- "$WINOKIT" winogavil --data wg.csv --predictions-column p --bootstrap 50
cp wg.csv wg_big.csv && truncate -s 1G wg_big.csv
expect "A8: a 1 GB WinoGAViL CSV is refused" 2 "wg_big.csv: file larger than 512 MiB" -- \
  "$WINOKIT" winogavil --data wg_big.csv --predictions-column p
{ printf 'ID,cue,candidates,associations,p\n'; head -c 1000 /dev/zero | tr '\0' 'x'; } > wg_line.csv && truncate -s 300M wg_line.csv
expect "A8: a 300 MB one-line WinoGAViL row is refused" 2 "wg_line.csv:2: line longer than 1 MiB" -- \
  "$WINOKIT" winogavil --data wg_line.csv --predictions-column p
mb=$(peak_mb "$WINOKIT" winogavil --data wg_line.csv --predictions-column p)
[ -z "$mb" ] || { [ "$mb" -lt 100 ] && ok "A8: ... with a peak of $mb MB" || not_ok "A8: the long row took $mb MB"; }

# --- A9: a UTF-8 BOM is skipped (a JSONL scores file with a BOM is still JSONL)
{ printf '\xef\xbb\xbf'; cat s.jsonl; } > bom.jsonl
"$WINOKIT" eval --data syn --scores s.jsonl --name m --bootstrap 50 --seed 1 --markdown plain.md >/dev/null 2>&1
expect "A9: a scores file with a BOM is read as JSONL" 0 "" -- \
  "$WINOKIT" eval --data syn --scores bom.jsonl --name m --bootstrap 50 --seed 1 --markdown bom.md
cmp -s plain.md bom.md && ok "A9: ... with the same results" || not_ok "A9: BOM changes the results"
mkdir -p bomds && { printf '\xef\xbb\xbf'; cat syn/examples.jsonl; } > bomds/examples.jsonl
expect "A9: an examples.jsonl with a BOM is read" 0 "N = 12" -- "$WINOKIT" eval --data bomds --scorer random --bootstrap 50

# --- A10 (tables): strict number syntax
{ echo "id,c0_i0,c0_i1,c1_i0,c1_i1"; for i in $(seq 0 11); do echo "$i,0.5,0.25,0.25,0.5"; done; } > t.csv
expect "A10: a decimal table scores" 0 "N = 12" -- "$WINOKIT" eval --data syn --scores t.csv --bootstrap 50
sed '4s/^2,0.5,/2,0x10,/' t.csv > hex.csv
expect "A10: 0x10 in a CSV score column is refused" 2 "hex.csv:4: field 'c0_i0': not a number: '0x10'" -- \
  "$WINOKIT" eval --data syn --scores hex.csv
sed '5s/^3,0.5,/3,1e400,/' t.csv > big.csv
expect "A10: 1e400 in a table is a non-finite score" 2 "big.csv:5: field 'c0_i0': non-finite score" -- \
  "$WINOKIT" eval --data syn --scores big.csv
printf 'ID,cue,candidates,associations,num_candidates,p\n1,sky,"[""sun"",""moon""]","[""sun""]",0x2,"[""sun""]"\n' > wghex.csv
expect "A10: 0x2 in a WinoGAViL count column is refused" 2 "wghex.csv:2: field 'num_candidates'" -- \
  "$WINOKIT" winogavil --data wghex.csv --predictions-column p

# --- crashes the fuzzers found (tests/fuzz/regressions), through the CLI
printf '\xc2\xa0 \xc2\xa0\n' > nbsp.txt
expect "fuzz_table: a scores file of only no-break spaces" 2 "nbsp.txt(:1)?: (empty table|not a recognised scores file)" -- \
  "$WINOKIT" eval --data syn --scores nbsp.txt

mkdir -p badmodel && printf '{"projection_dim": 8, "text_config": {"layer_norm_eps": 1e705}}\n' > badmodel/config.json
expect "fuzz_config: a config number beyond a double is exit 2" 2 "badmodel/config.json: number out of range" -- \
  "$WINOKIT" eval --data syn --model badmodel

# --- Issue 23, item 4: file names built from data stay inside their output folder
if [ -n "$SHARED" ] && [ -d "$HFM" ]; then
  mkdir -p evilid && cp -r syn/images evilid/ && sed '1s/"id": *[0-9]*/"id": "\/..\/..\/escaped"/' syn/examples.jsonl > evilid/examples.jsonl
  expect "heatmap: an example id '/../../escaped' renders" 0 "rendered [0-9]+ word-patch maps" -- \
    "$WINOKIT" heatmap --data evilid --model "$HFM" --examples /../../escaped --out-dir deep/a/maps --no-cache
  if [ -z "$(find deep -name '*.png' -not -path 'deep/a/maps/*')" ] && [ ! -e escaped ] && \
     [ -n "$(find deep/a/maps -name 'ex_.._.._escaped-*_i0_c0_t0*.png')" ]; then
    ok "heatmap: ... every PNG inside --out-dir, under a sanitised name"
  else
    not_ok "heatmap: files outside --out-dir" "$(find . -name '*escaped*')"
  fi
fi

# --- Issue 23, item 5: memory bounded by the configuration, checked under a 2 GB address space
if [ -n "$SHARED" ] && [ -d "$HFM" ]; then
  mkdir -p biglayers && for f in "$HFM"/*; do ln -s "$f" biglayers/; done
  rm biglayers/config.json && sed 's/"num_hidden_layers": 2/"num_hidden_layers": 1048576/' "$HFM/config.json" > biglayers/config.json
  expect "a config of 1,048,576 layers on a 16 MB checkpoint: exit 2 naming the missing tensor, in 2 GB" 2 "layers\.2\." -- \
    bash -c 'ulimit -v 2000000; exec "$0" eval --data syn --model biglayers --no-cache --bootstrap 10' "$WINOKIT"
fi

echo "# input hardening: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
