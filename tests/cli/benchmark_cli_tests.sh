#!/usr/bin/env bash
# The benchmark registry from the CLI: `winokit benchmarks`, the --help listing, and `winokit run`
# for each registered benchmark, checked against the benchmark's own front end (eval, winogavil)
# on the same data and scores.
# Usage: benchmark_cli_tests.sh PATH/TO/winokit [SHARED_DIR]
set -u
CLI_DIR=$(cd "$(dirname "$0")" && pwd)
WINOKIT=$(realpath "${1:?usage: benchmark_cli_tests.sh PATH/TO/winokit [SHARED_DIR]}")
SHARED=$( [ -n "${2:-}" ] && realpath "$2" 2>/dev/null || echo "")
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1
source "$CLI_DIR/lib.sh"
export WINOKIT_CACHE_DIR="$WORK/cache"

# percent KEYPATH FILE: a number from a JSON file (python3 is in scripts/setup).
num() { python3 -c 'import json,sys
d=json.load(open(sys.argv[2]))
for k in sys.argv[1].split("."):
    d=d[int(k)] if k.isdigit() else d[k]
print(f"{d:.9f}")' "$1" "$2"; }

# html_report NAME FILE N [thumbs]: FILE is a whole HTML report whose example browser lists N
# items, each with its texts (one marked true) and a check; with "thumbs", embedded thumbnails,
# else the note saying why no image is shown.
html_report() {
  local name=$1 file=$2 n=$3 want=${4:-}
  if [ ! -s "$file" ]; then not_ok "$name: no $file"; return; fi
  local items trues checks thumbs
  items=$(grep -o '<li class="ex"' "$file" | wc -l)
  trues=$(grep -o '<li class="true"><b>t' "$file" | wc -l)
  checks=$(grep -o '<table class="ineq">' "$file" | wc -l)
  thumbs=$(grep -o 'src="data:image/jpeg;base64,' "$file" | wc -l)
  if ! tail -c 20 "$file" | grep -q '</html>'; then not_ok "$name: $file is cut short"
  elif [ "$items" -ne "$n" ] || [ "$trues" -lt "$n" ] || [ "$checks" -lt "$n" ]; then
    not_ok "$name: $items items, $trues true texts, $checks checks (wanted $n each)"
  elif [ "$want" = thumbs ] && [ "$thumbs" -lt 1 ]; then not_ok "$name: no thumbnail"
  elif [ "$want" != thumbs ] && ! grep -q 'No images shown' "$file"; then not_ok "$name: no note on the missing images"
  else ok "$name: $n items in the example browser${want:+ with thumbnails}"; fi
}

expect "benchmarks lists the registry" 0 "winoground .*Winoground.*" -- "$WINOKIT" benchmarks
expect "benchmarks lists winogavil" 0 "winogavil .*WinoGAViL" -- "$WINOKIT" benchmarks
expect "--help lists the benchmarks" 0 "Benchmarks \(winokit run NAME\):" -- "$WINOKIT" --help
expect "an unknown benchmark names the known ones" 2 "unknown benchmark 'nope' \(known: winoground, winogavil, sugarcrepe, whatsup, aro, aro-order, mmvp-vlm, valse, eqben\)" -- "$WINOKIT" run nope --data x --scores y

"$WINOKIT" synth --out syn --count 24 --seed 4 --image-size 64 >/dev/null 2>&1
"$WINOKIT" eval --data syn --scorer random --seed 2 --scores-out s.jsonl --json e.json --quiet >/dev/null 2>&1
expect "run winoground from the official scores layout" 0 "\| group score \| [0-9]+\.[0-9]{2} \| 24 \|" -- "$WINOKIT" run winoground --data syn --scores s.jsonl
expect "run winoground writes json, csv and markdown" 0 "wrote r.md" -- "$WINOKIT" run winoground --data syn --scores s.jsonl --json r.json --csv r.csv --markdown r.md
grep -qE "\| group score \| [0-9]+\.[0-9]{2} \| 24 \|" r.md && ok "run --markdown holds the summary" || not_ok "run --markdown" "$(head -12 r.md)"
for m in text image group; do
  i=$(case $m in text) echo 0;; image) echo 1;; group) echo 2;; esac)
  want=$(num overall.metrics.$m.percent e.json); got=$(num metrics.$i.percent r.json)
  [ "$want" = "$got" ] && ok "run winoground $m score = eval's ($got)" || not_ok "run winoground $m" "$want vs $got"
done
[ "$(wc -l < r.csv)" -eq 25 ] && head -1 r.csv | grep -q "^id,group,image,text$" && ok "run --csv: one row per item" || not_ok "run --csv" "$(head -2 r.csv)"
strict_csv r.csv 4 && ok "run --csv is a plain CSV" || not_ok "run --csv strict" "$(head -3 r.csv)"
grep -q '"sha256"' r.json && grep -q "Provenance" r.md && ok "run records provenance" || not_ok "run provenance"

# The generic scores layout gives the same result as the official one.
python3 - s.jsonl > generic.jsonl <<'PY'
import json, sys
rows = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    i, pair = r["label"].rsplit("_", 2)[0], r["label"].split("_", 1)[1]
    rows.setdefault(i, {})[pair] = r["score"]
for i, s in rows.items():
    print(json.dumps({"id": i, "scores": [[s["c0_i0"], s["c0_i1"]], [s["c1_i0"], s["c1_i1"]]]}))
PY
if [ -s generic.jsonl ]; then
  "$WINOKIT" run winoground --data syn --scores generic.jsonl --json g.json --quiet 2>/dev/null
  [ "$(num metrics.2.percent g.json 2>/dev/null)" = "$(num metrics.2.percent r.json)" ] && ok "generic scores layout = official layout" || not_ok "generic scores layout"
  head -3 generic.jsonl | sed '2s/\]\]}/], [1, 2]]}/' > bad.jsonl
  expect "a bad generic row names file, line and field" 2 "bad.jsonl:2: field 'scores'" -- "$WINOKIT" run winoground --data syn --scores bad.jsonl --quiet
else
  not_ok "could not write the generic layout from s.jsonl" "$(head -2 s.jsonl)"
fi
expect "run winoground --html from scores" 0 "wrote rw.html" -- "$WINOKIT" run winoground --data syn --scores s.jsonl --html rw.html --quiet
html_report "winoground --html (scores)" rw.html 24
expect "run winoground --html --images shows them" 0 "wrote rwi.html" -- "$WINOKIT" run winoground --data syn --scores s.jsonl --images syn/images --html rwi.html --quiet
html_report "winoground --html (scores and --images)" rwi.html 24 thumbs
expect "run needs exactly one scorer" 2 "exactly one of --model" -- "$WINOKIT" run winoground --data syn
expect "run writes nothing on error" 2 "" -- "$WINOKIT" run winoground --data syn --scores bad.jsonl --json never.json --quiet
[ ! -e never.json ] && ok "no half result file" || not_ok "never.json was written"

if [ -n "$SHARED" ] && [ -d "$SHARED/golden/clip/models" ]; then
  HFM="$SHARED/golden/clip/models/tiny-quickgelu-hf"
  "$WINOKIT" eval --data syn --model "$HFM" --json em.json --quiet >/dev/null 2>&1
  "$WINOKIT" run winoground --data syn --model "$HFM" --json rm.json --quiet >/dev/null 2>&1
  [ -s rm.json ] && [ "$(num overall.metrics.group.percent em.json)" = "$(num metrics.2.percent rm.json)" ] && [ "$(num overall.metrics.text.percent em.json)" = "$(num metrics.0.percent rm.json)" ] \
    && ok "run winoground --model = eval --model" || not_ok "run winoground --model"

  mkdir -p wg/images
  i=0
  for w in sun moon star sea sand tree leaf dog cat fish rock snow fire rain wolf owl; do
    cp "syn/images/ex_$((i % 24))_img_$((i % 2)).png" "wg/images/$w.png"; i=$((i + 1))
  done
  printf 'cue,R1,R2,R3\nsky,sun,moon,star\nbeach,sea,sand,sun\nforest,tree,leaf,owl\npet,dog,cat,fish\nwinter,snow,rain,fire\nnight,moon,owl,wolf\nstorm,rain,sea,rock\n' > wg/swow.csv
  "$WINOKIT" swow --graph wg/swow.csv --images wg/images --out wg/inst.csv --seed 3 >/dev/null 2>&1
  "$WINOKIT" winogavil --data wg/inst.csv --model "$HFM" --images wg/images --bootstrap 200 --json wj.json --quiet >/dev/null 2>&1
  expect "run winogavil with a model" 0 "\| Jaccard \| [0-9]+\.[0-9]{2} \| 7 \|" -- "$WINOKIT" run winogavil --data wg/inst.csv --images wg/images --model "$HFM" --bootstrap 200 --json rj.json
  [ -s rj.json ] && [ "$(num overall.mean_jaccard_percent wj.json)" = "$(num metrics.0.percent rj.json)" ] && ok "run winogavil Jaccard = winogavil's" || not_ok "run winogavil Jaccard" "$(num overall.mean_jaccard_percent wj.json) vs $(num metrics.0.percent rj.json)"
  expect "run winogavil without --images" 2 "winogavil needs --images" -- "$WINOKIT" run winogavil --data wg/inst.csv --model "$HFM"
  # A scores file needs no images (generic layout: one score per candidate of each instance).
  python3 - wg/inst.csv > wg/scores.jsonl <<'PY'
import csv, json, sys
for row in csv.DictReader(open(sys.argv[1], newline="", encoding="utf-8")):
    n = len(json.loads(row["candidates"]))
    print(json.dumps({"id": row["ID"], "scores": [[float(n - j) for j in range(n)]]}))
PY
  expect "run winogavil --scores needs no --images" 0 "\| Jaccard \| [0-9]+\.[0-9]{2} \| 7 \|" -- "$WINOKIT" run winogavil --data wg/inst.csv --scores wg/scores.jsonl --bootstrap 200
  expect "run winogavil --scores --html" 0 "wrote wgs.html" -- "$WINOKIT" run winogavil --data wg/inst.csv --scores wg/scores.jsonl --bootstrap 200 --html wgs.html --quiet
  html_report "winogavil --html (scores, no images)" wgs.html 7
  expect "run winogavil --html with a model" 0 "wrote wg.html" -- "$WINOKIT" run winogavil --data wg/inst.csv --images wg/images --model "$HFM" --bootstrap 200 --html wg.html --quiet
  html_report "winogavil --html (a model)" wg.html 7 thumbs
  grep -q '<p class="note">Jaccard [0-9.]*%</p>' wg.html && ok "winogavil --html: each instance's Jaccard" || not_ok "winogavil Jaccard note"
  mkdir -p wg/few && cp wg/images/sun.png wg/few/
  expect "a missing-image error lists a few names and the count" 3 "15 candidate image\(s\) not found in wg/few: ('[^']+', ){9}'[^']+' and 5 more" -- "$WINOKIT" run winogavil --data wg/inst.csv --images wg/few --model "$HFM"
fi

# --- SugarCrepe: the release's layout (one JSON file per subset; COCO images by file name) ---
mkdir -p sc/data sc/images
for i in 0 1 2 3; do cp "syn/images/ex_${i}_img_0.png" "sc/images/00000000000$i.png"; done
# All 7 subsets (add_obj under its older name add_ent.json): swap_att holds 3 items, the others 1.
python3 - <<'PY'
import json
names = ["add_obj", "add_att", "replace_obj", "replace_att", "replace_rel", "swap_obj", "swap_att"]
caps = {"swap_att": [("a red circle above a blue square", "a blue circle above a red square"),
                     ("a green square", "a square green"), ("two circles", "one circle")]}
# scores: swap_att right, tie (wrong, as main_eval.py), right; add_obj wrong; the others right
rows = {"swap_att": [(0.9, 0.1), (0.5, 0.5), (0.3, 0.2)], "add_obj": [(0.1, 0.2)]}
with open("sc.jsonl", "w") as f:
    for n, s in enumerate(names):
        items = caps.get(s, [("a circle", "a circle and a dog")])
        file = "add_ent" if s == "add_obj" else s
        json.dump({str(7 * n + k): {"filename": "00000000000%d.png" % (k + 1 if s == "swap_att" else 0),
                                    "caption": c, "negative_caption": d}
                   for k, (c, d) in enumerate(items)}, open("sc/data/%s.json" % file, "w"), indent=4)
        for k, (p, q) in enumerate(rows.get(s, [(0.6, 0.4)])):
            f.write(json.dumps({"id": "%s/%d" % (s, 7 * n + k), "scores": [[p], [q]]}) + "\n")
PY
expect "benchmarks lists sugarcrepe" 0 "sugarcrepe .*SugarCrepe" -- "$WINOKIT" benchmarks
expect "run sugarcrepe from scores: a tie is wrong (2 of 3 = 66.67)" 0 "\| swap_att \| 66\.67 \| 3 \|" -- "$WINOKIT" run sugarcrepe --data sc/data --scores sc.jsonl --json sc.json --csv sc.csv
# the mean of the 7 subsets: (0 + 5 x 100 + 66.67) / 7 = 80.95
[ "$(num metrics.0.percent sc.json)" = "0.000000000" ] && [ "$(num metrics.7.percent sc.json)" = "80.952380952" ] && ok "sugarcrepe: add_obj 0, mean of subsets 80.95" || not_ok "sugarcrepe metrics" "$(head -c 600 sc.json)"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); t=[s for s in j["sections"] if s["title"]=="Accuracy per subset"][0]; assert t["rows"][6]["Ties"] == "1", t' sc.json 2>/dev/null && ok "sugarcrepe counts the tie" || not_ok "sugarcrepe ties column" "$(grep -o '"rows".\{0,300\}' sc.json | head -2)"
[ "$(wc -l < sc.csv)" -eq 10 ] && strict_csv sc.csv 8 && ok "sugarcrepe --csv: one row per item" || not_ok "sugarcrepe csv" "$(head -3 sc.csv)"
expect "run sugarcrepe --html from scores" 0 "wrote sc.html" -- "$WINOKIT" run sugarcrepe --data sc/data --scores sc.jsonl --html sc.html --quiet
html_report "sugarcrepe --html (scores, no images)" sc.html 9
grep -q 'data-id="swap_att/43" data-text="[^"]*" data-subset="swap_att" data-o="0" data-ties="1"' sc.html && grep -q '<td class="d">tie</td>' sc.html && ok "sugarcrepe --html: the tie is wrong and shown as a tie" || not_ok "sugarcrepe --html tie" "$(grep -o 'data-id="swap_att/43"[^>]*' sc.html)"
expect "run sugarcrepe --scores --images --html shows thumbnails" 0 "wrote sc-img.html" -- "$WINOKIT" run sugarcrepe --data sc/data --scores sc.jsonl --images sc/images --html sc-img.html --quiet
html_report "sugarcrepe --html (scores and --images)" sc-img.html 9 thumbs
expect "--html-images link links the image files" 0 "wrote sc-link.html" -- "$WINOKIT" run sugarcrepe --data sc/data --scores sc.jsonl --images sc/images --html sc-link.html --html-images link --quiet
grep -q '<img src="sc/images/000000000001.png"' sc-link.html && ! grep -q 'data:image' sc-link.html && ok "sugarcrepe --html-images link: relative paths" || not_ok "sugarcrepe link" "$(grep -o '<img src="[^"]*"' sc-link.html | head -2)"
mkdir -p sc/broken && cp sc/images/*.png sc/broken/ && echo "not a png" > sc/broken/000000000002.png
expect "a broken image at report time names it, and nothing is written" 2 "000000000002.png" -- "$WINOKIT" run sugarcrepe --data sc/data --scores sc.jsonl --images sc/broken --html sc-broken.html --json sc-broken.json --quiet
[ ! -e sc-broken.html ] && [ ! -e sc-broken.json ] && ok "no half report on a broken image" || not_ok "a report was written despite the broken image"
if [ -n "$SHARED" ]; then
  expect "run sugarcrepe --model --html" 0 "wrote sc-model.html" -- "$WINOKIT" run sugarcrepe --data sc/data --images sc/images --model "$SHARED/golden/clip/models/tiny-quickgelu-hf" --html sc-model.html --quiet
  html_report "sugarcrepe --html (a model)" sc-model.html 9 thumbs
fi
expect "sugarcrepe with a model needs --images" 2 "sugarcrepe needs --images DIR: COCO's val2017" -- "$WINOKIT" run sugarcrepe --data sc/data --model "$SHARED/golden/clip/models/tiny-quickgelu-hf"
if [ -n "$SHARED" ]; then
  expect "run sugarcrepe with a model" 0 "wrote sc.md" -- "$WINOKIT" run sugarcrepe --data sc/data --images sc/images --model "$SHARED/golden/clip/models/tiny-quickgelu-hf" --quiet --markdown sc.md
  grep -qE "\| swap_att \| [0-9]+\.[0-9]{2} \| 3 \|" sc.md && ok "sugarcrepe with a model: a row per subset" || not_ok "sugarcrepe model report" "$(head -12 sc.md)"
fi
mkdir -p sc/few && cp sc/images/000000000000.png sc/few/
expect "a missing image for the HTML report is named, nothing written" 3 "3 image\(s\) not found in sc/few" -- "$WINOKIT" run sugarcrepe --data sc/data --scores sc.jsonl --images sc/few --html sc-few.html --quiet
[ ! -e sc-few.html ] && ok "no report with a missing image" || not_ok "sc-few.html written"
expect "sugarcrepe names the missing images" 3 "3 image\(s\) not found in sc/few: 000000000001.png, 000000000002.png, 000000000003.png" -- "$WINOKIT" run sugarcrepe --data sc/data --images sc/few --model "${SHARED:-.}/golden/clip/models/tiny-quickgelu-hf"
printf '{"0": {"filename": "a.png", "caption": "x"}}' > sc/swap_obj.json
mkdir -p sc/part && cp sc/data/swap_att.json sc/data/add_att.json sc/part/
expect "a folder missing subsets names them (never a smaller N)" 2 "subset file\(s\) missing: add_obj.json, replace_obj.json, replace_att.json, replace_rel.json, swap_obj.json" -- "$WINOKIT" run sugarcrepe --data sc/part --scores sc.jsonl
grep '"swap_att/' sc.jsonl > sc-swap.jsonl
expect "one subset's file runs that subset alone" 0 "\| swap_att \| 66\.67 \| 3 \|" -- "$WINOKIT" run sugarcrepe --data sc/data/swap_att.json --scores sc-swap.jsonl
expect "a malformed subset names the file and the field" 2 "swap_obj.json.*0\.negative_caption.*non-empty string" -- "$WINOKIT" run sugarcrepe --data sc/swap_obj.json --scores sc.jsonl
# compare --benchmark: B gets add_obj right (A wrong) and replace_att, replace_rel (a tie),
# swap_obj wrong (A right): 3 and 1 discordant items; exact McNemar p = 2 * P(X <= 1 | 4, 1/2)
# = 2 * 5/16 = 0.625; A 7/9, B 5/9, difference 2/9 = 22.22 points.
python3 -c 'import json
flip = {"add_obj": [[0.3], [0.2]], "replace_att": [[0.1], [0.9]], "replace_rel": [[0.2], [0.2]], "swap_obj": [[0.0], [0.5]]}
with open("sc-b.jsonl", "w") as f:
    for line in open("sc.jsonl"):
        r = json.loads(line); r["scores"] = flip.get(r["id"].split("/")[0], r["scores"]); f.write(json.dumps(r) + "\n")'
expect "compare --benchmark sugarcrepe: discordant counts, McNemar p, difference" 0 "\| A \| B \| all \| 9 \| 3 \| 1 \| \+22\.22 \| \[[-0-9.]+, [0-9.]+\] \| 0\.6250 \|" -- "$WINOKIT" compare --benchmark sugarcrepe --data sc/data A=sc.jsonl B=sc-b.jsonl --bootstrap 500 --csv scc.csv --json scc.json
grep -qE "^\| A \| all \| 9 \| 7 \| 77\.78 \|" <("$WINOKIT" compare --benchmark sugarcrepe --data sc/data A=sc.jsonl B=sc-b.jsonl --bootstrap 500) && ok "compare --benchmark: each run's accuracy" || not_ok "compare accuracy rows"
grep -qE "^\| A \| B \| swap_att \| 3 \| 0 \| 0 \| 0\.00 \|.*\| 1\.0000 \|$" <("$WINOKIT" compare --benchmark sugarcrepe --data sc/data A=sc.jsonl B=sc-b.jsonl --bootstrap 500) && ok "compare --benchmark: per subset (swap_att: no discordant item, p = 1)" || not_ok "compare per subset"
[ "$(wc -l < scc.csv)" -eq 10 ] && strict_csv scc.csv 4 && grep -q "^add_obj/0,add_obj,0,1$" scc.csv && grep -q "^replace_rel/28,replace_rel,1,0$" scc.csv && ok "compare --benchmark --csv: one row per item, each run's outcome" || not_ok "compare per-item csv" "$(head -3 scc.csv)"
expect "compare --benchmark: an unknown benchmark names the known ones" 2 "unknown benchmark 'sugarcrep'" -- "$WINOKIT" compare --benchmark sugarcrep --data sc/data sc.jsonl sc-b.jsonl
expect "compare --benchmark: a scores file for other items names the line" 2 "generic.jsonl:1: field 'id'" -- "$WINOKIT" compare --benchmark sugarcrepe --data sc/data sc.jsonl generic.jsonl

# --- SugarCrepe: the published GPT-4V figures from the repository's per-item results ---
# tests/fixtures/make_sugarcrepe_gpt4v.py converted RAIVNLab/sugar-crepe's gpt-4v-results into
# the generic scores layout; a stand-in data folder with the release's subsets and keys (all the
# metric reads) is written here. Published (gpt-4v-results/readme.md): right/N per subset.
python3 - "$CLI_DIR/../fixtures/sugarcrepe_gpt4v" <<'PY'
import gzip, json, os, sys
keys = {}
for setting in ["positive_first", "negative_first"]:
    with gzip.open(os.path.join(sys.argv[1], setting + ".jsonl.gz"), "rt") as f, open("gpt4v-%s.jsonl" % setting, "w") as out:
        for line in f:
            out.write(line)
            subset, key = json.loads(line)["id"].split("/")
            keys.setdefault(subset, set()).add(key)
os.makedirs("gpt4v", exist_ok=True)
for subset, ks in keys.items():
    json.dump({k: {"filename": k + ".jpg", "caption": "caption " + k, "negative_caption": "negative " + k}
               for k in sorted(ks, key=int)}, open("gpt4v/%s.json" % subset, "w"))
PY
for setting in positive_first negative_first; do
  "$WINOKIT" run sugarcrepe --data gpt4v --scores "gpt4v-$setting.jsonl" --json "gpt4v-$setting.json" --bootstrap 200 --quiet 2>/dev/null
  python3 - "gpt4v-$setting.json" "$setting" "$CLI_DIR/../fixtures/sugarcrepe_gpt4v/manifest.json" <<'PY' && ok "sugarcrepe reproduces GPT-4V's published $setting accuracies (readme: 7 subsets, to the item)" || not_ok "sugarcrepe GPT-4V $setting"
import json, sys
published = {  # gpt-4v-results/readme.md: right / N
    "positive_first": {"swap_att": (607, 666), "swap_obj": (211, 246), "add_att": (604, 692), "add_obj": (1859, 2062),
                       "replace_att": (734, 788), "replace_obj": (1578, 1652), "replace_rel": (1240, 1406)},
    "negative_first": {"swap_att": (593, 666), "swap_obj": (198, 246), "add_att": (666, 692), "add_obj": (1918, 2062),
                       "replace_att": (740, 788), "replace_obj": (1604, 1652), "replace_rel": (1298, 1406)}}[sys.argv[2]]
got = {m["name"]: m for m in json.load(open(sys.argv[1]))["metrics"]}
manifest = json.load(open(sys.argv[3]))["subsets"]
for subset, (right, n) in published.items():
    # Results without an item in the released data (swap_obj key 108, right in both settings)
    # count in the readme's figure and not in a run on the release.
    extra = manifest[subset][sys.argv[2]]["results_without_a_release_item"]
    want_right, want_n = right - sum(extra.values()), n - len(extra)
    m = got[subset]
    assert m["n"] == want_n and abs(m["percent"] - 100.0 * want_right / want_n) < 1e-9, (subset, m, want_right, want_n)
    if not extra:
        assert round(m["percent"] / 100, 4) == round(right / n, 4), (subset, m["percent"], right / n)
PY
done
expect "the GPT-4V swap_obj figure on the release: 210/245 (the readme's 211/246 holds key 108, absent from data/)" 0 "\| swap_obj \| Swap \| 245 \| 85\.71 \|" -- "$WINOKIT" run sugarcrepe --data gpt4v --scores gpt4v-positive_first.jsonl --bootstrap 200

# --- What'sUp: the release's data folder (annotation files and image folders) ---
mkdir -p wu/data/controlled_images wu/data/controlled_clevr wu/data/val2017 wu/data/vg_images
python3 - <<'PY'
import json, shutil
img = "syn/images/ex_%d_img_0.png"
a = [("dog_left_of_table.jpeg", "left of"), ("dog_right_of_table.jpeg", "right of"),
     ("dog_on_table.jpeg", "on"), ("dog_under_table.jpeg", "under")]
b = [("cube_left_of_ball.jpeg", "left of"), ("cube_right_of_ball.jpeg", "right of"),
     ("cube_in-front_of_ball.jpeg", "in front of"), ("cube_behind_ball.jpeg", "behind")]
for sub, folder, rows, objs in [("controlled_images_dataset.json", "controlled_images", a, ("dog", "table")),
                                ("controlled_clevr_dataset.json", "controlled_clevr", b, ("cube", "ball"))]:
    items = []
    for k, (name, prep) in enumerate(rows):
        shutil.copy(img % k, "wu/data/%s/%s" % (folder, name))
        others = [p for _, p in rows if p != prep]
        items.append({"image_path": "data/%s/%s" % (folder, name),
                      "caption_options": ["A %s %s a %s" % (objs[0], p, objs[1]) for p in [prep] + others]})
    json.dump(items, open("wu/data/" + sub, "w"))
shutil.copy(img % 0, "wu/data/val2017/000000397133.jpg")
shutil.copy(img % 1, "wu/data/vg_images/2345.jpg")
json.dump([[397133, "A dog on the left", "A dog on the right"]], open("wu/data/coco_qa_one_obj.json", "w"))
json.dump([[397133, "A dog to the left of a cat", "A dog to the right of a cat"]], open("wu/data/coco_qa_two_obj.json", "w"))
json.dump([[2345, "A cup on the top", "A cup on the bottom"]], open("wu/data/vg_qa_one_obj.json", "w"))
json.dump([[2345, "A cup in front of a plate", "A cup behind a plate"]], open("wu/data/vg_qa_two_obj.json", "w"))
# controlled_a: right, tie (strict wrong, argmax right), right, wrong; everything else right
a_scores = [[0.9, 0.1, 0.1, 0.1], [0.5, 0.5, 0.1, 0.1], [0.9, 0.1, 0.2, 0.3], [0.1, 0.9, 0.1, 0.1]]
with open("wu.jsonl", "w") as f:
    for k, row in enumerate(a_scores):
        f.write(json.dumps({"id": "controlled_a/%d" % k, "scores": [[v] for v in row]}) + "\n")
    for k in range(4):
        f.write(json.dumps({"id": "controlled_b/%d" % k, "scores": [[0.9], [0.1], [0.1], [0.1]]}) + "\n")
    for sub in ["coco_one", "coco_two", "gqa_one", "gqa_two"]:
        f.write(json.dumps({"id": sub + "/0", "scores": [[0.7], [0.3]]}) + "\n")
PY
expect "benchmarks lists whatsup" 0 "whatsup .*What'sUp" -- "$WINOKIT" benchmarks
expect "run whatsup from scores: strict and argmax accuracy, pair and set (controlled A)" 0 "\| controlled_a \| 4 \| 25\.00 \| 50\.00 \| \[[0-9.]+, [0-9.]+\] \| 75\.00 \| 1 \| 0\.00 \| 50\.00 \| 0\.00 \| 0\.00 \|" -- "$WINOKIT" run whatsup --data wu/data --scores wu.jsonl --json wu.json --csv wu.csv
grep -qE "\| controlled_b \| 4 \| 25\.00 \| 100\.00 \| .* \| 100\.00 \| 0 \| 100\.00 \| 100\.00 \| 100\.00 \| 100\.00 \|" <("$WINOKIT" run whatsup --data wu/data --scores wu.jsonl) && ok "whatsup: controlled B pair and set 100" || not_ok "whatsup controlled B"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); t=[s for s in j["sections"] if s["title"]=="Accuracy per preposition"][0]; p={(r["Subset"], r["Preposition"]) for r in t["rows"]}; assert {("controlled_a","left_of"),("controlled_a","on"),("controlled_b","in-front_of"),("coco_one","left"),("coco_two","left"),("gqa_one","top"),("gqa_two","front")} <= p, p' wu.json && ok "whatsup groups prepositions as the official code" || not_ok "whatsup prepositions" "$(grep -o '"Preposition": "[^"]*"' wu.json | sort -u | tr '\n' ' ')"
[ "$(wc -l < wu.csv)" -eq 13 ] && strict_csv wu.csv 8 && ok "whatsup --csv: one row per item" || not_ok "whatsup csv" "$(head -2 wu.csv)"
if [ -n "$SHARED" ]; then
  expect "run whatsup with a model" 0 "wrote wu.md" -- "$WINOKIT" run whatsup --data wu/data --model "$SHARED/golden/clip/models/tiny-quickgelu-hf" --quiet --markdown wu.md
  grep -qE "\| gqa_two \| 1 \| 50\.00 \|" wu.md && ok "whatsup with a model: every subset" || not_ok "whatsup model report" "$(head -14 wu.md)"
fi
expect "run whatsup --html from scores" 0 "wrote wu.html" -- "$WINOKIT" run whatsup --data wu/data --scores wu.jsonl --html wu.html --quiet
html_report "whatsup --html (scores)" wu.html 12
grep -q 'right by the official np.argmax' wu.html && ok "whatsup --html notes the official argmax on a tie" || not_ok "whatsup argmax note"
if [ -n "$SHARED" ]; then
  expect "run whatsup --model --html" 0 "wrote wu-model.html" -- "$WINOKIT" run whatsup --data wu/data --model "$SHARED/golden/clip/models/tiny-quickgelu-hf" --html wu-model.html --quiet
  html_report "whatsup --html (a model)" wu-model.html 12 thumbs
fi
rm wu/data/vg_qa_two_obj.json
expect "a What'sUp folder missing a file names it" 2 "annotation file\(s\) missing: vg_qa_two_obj.json" -- "$WINOKIT" run whatsup --data wu/data --scores wu.jsonl
grep '"controlled_a/' wu.jsonl > wu-a.jsonl
expect "one annotation file runs that subset" 0 "\| controlled_a \| 4 \|" -- "$WINOKIT" run whatsup --data wu/data/controlled_images_dataset.json --scores wu-a.jsonl
rm wu/data/controlled_images/dog_on_table.jpeg
expect "a missing What'sUp image is named" 3 "1 image\(s\) not found in .*: dog_on_table.jpeg" -- "$WINOKIT" run whatsup --data wu/data/controlled_images_dataset.json --model "${SHARED:-.}/golden/clip/models/tiny-quickgelu-hf"

# --- ARO (VG-Relation, VG-Attribution): the release's folder (two annotation files, images/) ---
mkdir -p aro/images
cp syn/images/ex_0_img_0.png aro/images/2345.jpg
cp syn/images/ex_1_img_0.png aro/images/2346.jpg
python3 - <<'PY'
import json
def item(image, group, box=(8, 4, 40, 30)):
    d = {"image_id": image, "image_path": image, "bbox_x": box[0], "bbox_y": box[1],
         "bbox_w": box[2], "bbox_h": box[3], "true_caption": "the dog is on the table",
         "false_caption": "the table is on the dog"}
    d.update(group)
    return d
# VG-R: on (right, tie), wearing (right), near (wrong; a symmetric relation, out of the macro);
# item 1's box is the whole image.
rel = [item("2345.jpg", {"relation_name": r}) for r in ["on", "on", "wearing", "near"]]
rel[1].update({"bbox_x": 0, "bbox_y": 0, "bbox_w": 64, "bbox_h": 64})
json.dump(rel, open("aro/visual_genome_relation.json", "w"))
# VG-A: white_black 25 items (24 right), red_blue 1 item (right; fewer than 25, out of the macro)
att = [item("2346.jpg", {"attributes": ["white", "black"]}) for _ in range(25)]
att.append(item("2346.jpg", {"attributes": ["red", "blue"]}, (-5, -5, 30, 50)))
json.dump(att, open("aro/visual_genome_attribution.json", "w"))
with open("aro.jsonl", "w") as f:
    for k, (fs, ts) in enumerate([(0.1, 0.9), (0.5, 0.5), (0.2, 0.4), (0.9, 0.1)]):
        f.write(json.dumps({"id": "vg_relation/%d" % k, "scores": [[fs], [ts]]}) + "\n")
    for k in range(26):
        f.write(json.dumps({"id": "vg_attribution/%d" % k,
                            "scores": [[0.6], [0.4]] if k == 3 else [[0.1], [0.2]]}) + "\n")
PY
expect "benchmarks lists aro" 0 "aro .*ARO: VG-Relation and VG-Attribution" -- "$WINOKIT" benchmarks
# VG-R macro: mean(on 50, wearing 100) = 75 (near dropped); accuracy 2 of 4, the tie wrong
expect "run aro from scores: VG-R macro without symmetric relations, the tie wrong" 0 "\| vg_relation \| 4 \| 3 \| 2 \| 3 \| 75\.00 \| 50\.00 \| \[[0-9.]+, [0-9.]+\] \| 1 \|" -- "$WINOKIT" run aro --data aro --scores aro.jsonl --json aro.json --csv aro.csv
[ "$(num metrics.2.percent aro.json)" = "96.000000000" ] && [ "$(num metrics.3.percent aro.json)" = "96.153846154" ] && ok "aro: VG-A macro over pairs of 25+ items (96), accuracy 25/26" || not_ok "aro VG-A metrics" "$(head -c 600 aro.json)"
[ "$(wc -l < aro.csv)" -eq 31 ] && strict_csv aro.csv 9 && head -1 aro.csv | grep -q "false_score" && ok "aro --csv: one row per item" || not_ok "aro csv" "$(head -2 aro.csv)"
grep -q '2345.jpg@8,4,40,30' aro.csv && ok "aro names each crop with its box" || not_ok "aro crop names" "$(sed -n 2p aro.csv)"
expect "run aro --html from scores, crops as thumbnails with --images" 0 "wrote aro.html" -- "$WINOKIT" run aro --data aro --scores aro.jsonl --images aro/images --html aro.html --html-images link --quiet
html_report "aro --html (scores, crops embedded even with link)" aro.html 30 thumbs
expect "run aro --html without images" 0 "wrote aro-none.html" -- "$WINOKIT" run aro --data aro --scores aro.jsonl --html aro-none.html --quiet
html_report "aro --html (scores, no images)" aro-none.html 30
grep '"vg_relation/' aro.jsonl > aro-r.jsonl
expect "one ARO annotation file runs that subset" 0 "\| vg_relation \| 4 \|" -- "$WINOKIT" run aro --data aro/visual_genome_relation.json --scores aro-r.jsonl
if [ -n "$SHARED" ]; then
  SRC=$(cd "$CLI_DIR/../.." && pwd)
  for fm in "clip:$SHARED/golden/clip/models/tiny-quickgelu-hf" "vilt:$SRC/tests/fixtures/vilt/tiny-rank" "flava:$SRC/tests/fixtures/flava/tiny-pretraining" "siglip:$SRC/tests/fixtures/siglip/tiny-a" "blip:$SRC/tests/fixtures/blip/tiny-itm"; do
    fam=${fm%%:*} m=${fm#*:}
    expect "run aro with a model ($fam): the crops are read and scored" 0 "wrote aro-$fam.json" -- "$WINOKIT" run aro --data aro --model "$m" --quiet --json "aro-$fam.json" --bootstrap 200
    # The crop reaches the model: item 0 (a box) and item 1 (the whole image) score differently.
    python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["details"]["per_item"]; assert p[0]["true_score"] != p[1]["true_score"], p[:2]' "aro-$fam.json" 2>/dev/null && ok "aro ($fam): a crop and the whole image score differently" || not_ok "aro ($fam): the crop does not reach the model"
  done
fi
mkdir -p aro/part && cp aro/visual_genome_relation.json aro/part/
expect "an ARO folder missing a file names it" 2 "annotation file\(s\) missing: visual_genome_attribution.json" -- "$WINOKIT" run aro --data aro/part --scores aro.jsonl
expect "ARO images are looked for in images/" 3 "1 image\(s\) not found in aro/part/images: 2345.jpg" -- "$WINOKIT" run aro --data aro/part/visual_genome_relation.json --model "${SHARED:-.}/golden/clip/models/tiny-quickgelu-hf"
expect "run aro --images finds them elsewhere" 0 "\| vg_relation \| 4 \|" -- "$WINOKIT" run aro --data aro/part/visual_genome_relation.json --images aro/images --scores aro-r.jsonl
python3 -c 'import json; j=json.load(open("aro/visual_genome_relation.json")); j[2]["bbox_h"]=0; json.dump(j, open("aro/part/visual_genome_relation.json","w"))'
expect "a box of no height names the file, the item and the field" 2 "visual_genome_relation.json.*2\.bbox_h" -- "$WINOKIT" run aro --data aro/part/visual_genome_relation.json --scores aro-r.jsonl

# --- ARO COCO-/Flickr30k-Order: the official dataset's test cases written out as JSON ---
mkdir -p ord/val2014
cp syn/images/ex_3_img_0.png ord/val2014/COCO_val2014_000000000001.jpg
cp syn/images/ex_4_img_0.png ord/val2014/COCO_val2014_000000000002.jpg
python3 - <<'PY'
import json
opts = ["a dog on a mat", "mat a on dog a", "a mat on a dog", "on a dog a mat", "dog a mat on a"]
json.dump([{"image": "val2014/COCO_val2014_000000000001.jpg", "caption_options": opts},
           {"image": "val2014/COCO_val2014_000000000002.jpg", "caption_options": opts}],
          open("ord/coco_order.json", "w"))
with open("ord.jsonl", "w") as f:  # right; a tie with a reordering (strict wrong, official right)
    f.write(json.dumps({"id": "0", "scores": [[0.9], [0.1], [0.2], [0.3], [0.4]]}) + "\n")
    f.write(json.dumps({"id": "1", "scores": [[0.5], [0.5], [0.1], [0.1], [0.1]]}) + "\n")
PY
expect "run aro-order from scores: Precision@1 strict and official, the tie" 0 "\| coco_order \| 2 \| 50\.00 \| \[[0-9.]+, [0-9.]+\] \| 100\.00 \| 1 \|" -- "$WINOKIT" run aro-order --data ord/coco_order.json --scores ord.jsonl
if [ -n "$SHARED" ]; then
  expect "run aro-order with a model" 0 "\| coco_order \| 2 \|" -- "$WINOKIT" run aro-order --data ord/coco_order.json --model "$SHARED/golden/clip/models/tiny-quickgelu-hf" --bootstrap 200
fi
expect "run aro-order --html from scores" 0 "wrote ord.html" -- "$WINOKIT" run aro-order --data ord/coco_order.json --scores ord.jsonl --html ord.html --quiet
html_report "aro-order --html (scores)" ord.html 2
if [ -n "$SHARED" ]; then
  expect "run aro-order --model --html" 0 "wrote ord-model.html" -- "$WINOKIT" run aro-order --data ord/coco_order.json --model "$SHARED/golden/clip/models/tiny-quickgelu-hf" --bootstrap 200 --html ord-model.html --quiet
  html_report "aro-order --html (a model)" ord-model.html 2 thumbs
fi
expect "aro-order images are looked for under --images" 3 "2 image\(s\) not found in sc: COCO_val2014_000000000001.jpg, COCO_val2014_000000000002.jpg" -- "$WINOKIT" run aro-order --data ord/coco_order.json --images sc --model "${SHARED:-.}/golden/clip/models/tiny-quickgelu-hf"

# --- MMVP-VLM: the release's folder (Questions.csv, "MLLM_VLM Images"/TYPE/ID.jpg) ---
python3 - <<'PY'
import json, os, shutil
types = ["Orientation", "Presence", "State", "Quantity", "Spatial", "Color",
         "Structural Character", "Text", "Camera Perspective"]
rows = ["Question ID,Type,Statement"]
for i in range(1, 271):
    t = types[(i - 1) // 30]
    os.makedirs("mv/MLLM_VLM Images/" + t, exist_ok=True)
    shutil.copy("syn/images/ex_%d_img_%d.png" % ((i // 2) % 24, i % 2), "mv/MLLM_VLM Images/%s/%d.jpg" % (t, i))
    rows.append('%d,%s,"the %s thing, number %d"' % (i, t, t.lower(), i))
open("mv/Questions.csv", "w").write("\n".join(rows) + "\n")
# pattern 1: all right but pair 2 (tie on its second statement: strict wrong, official right);
# pattern 2: all right but pair 17 (tie on its first statement: wrong under both); others wrong
with open("mv.jsonl", "w") as f:
    for k in range(135):
        s = [[0.9, 0.1], [0.1, 0.9]] if k < 30 else [[0.1, 0.9], [0.9, 0.1]]
        if k == 1: s = [[0.9, 0.1], [0.5, 0.5]]
        if k == 16: s = [[0.5, 0.5], [0.1, 0.9]]
        f.write(json.dumps({"id": "%d-%d" % (2 * k + 1, 2 * k + 2), "scores": s}) + "\n")
PY
expect "benchmarks lists mmvp-vlm" 0 "mmvp-vlm .*MMVP-VLM" -- "$WINOKIT" benchmarks
# strict: 14/15, 14/15, 0 x 7 -> mean 20.74; official: 15/15, 14/15 -> mean 21.48
expect "run mmvp-vlm from scores: strict and official pair accuracy" 0 "\| Orientation and Direction \| 15 \| 93\.33 \| \[[0-9.]+, [0-9.]+\] \| 100\.00 \| 1 \|" -- "$WINOKIT" run mmvp-vlm --data mv --scores mv.jsonl --json mv.json --csv mv.csv
[ "$(num details.average_percent mv.json)" = "20.740740741" ] && [ "$(num details.average_official_percent mv.json)" = "21.481481481" ] && ok "mmvp-vlm: average 20.74, official 21.48" || not_ok "mmvp-vlm averages" "$(grep -o '"average[^,]*' mv.json | head -4)"
[ "$(wc -l < mv.csv)" -eq 136 ] && strict_csv mv.csv 8 && ok "mmvp-vlm --csv: one row per pair" || not_ok "mmvp-vlm csv" "$(head -2 mv.csv)"
if [ -n "$SHARED" ]; then
  expect "run mmvp-vlm with a model" 0 "\| Viewpoint and Perspective \| 15 \|" -- "$WINOKIT" run mmvp-vlm --data mv --model "$SHARED/golden/clip/models/tiny-quickgelu-hf" --bootstrap 200
  expect "run mmvp-vlm with a cross-encoder (blip)" 0 "\| average \| 135 \|" -- "$WINOKIT" run mmvp-vlm --data mv --model "$(cd "$CLI_DIR/../.." && pwd)/tests/fixtures/blip/tiny-itm" --bootstrap 200
fi
expect "run mmvp-vlm --html from scores" 0 "wrote mv.html" -- "$WINOKIT" run mmvp-vlm --data mv --scores mv.jsonl --html mv.html --quiet
html_report "mmvp-vlm --html (scores)" mv.html 135
grep -q 'official (a tie picks the second image): solved' mv.html && ok "mmvp-vlm --html notes the official convention where it differs" || not_ok "mmvp-vlm official note"
expect "run mmvp-vlm --html --html-items 20: a seeded sample" 0 "wrote mv-20.html" -- "$WINOKIT" run mmvp-vlm --data mv --scores mv.jsonl --html mv-20.html --html-items 20 --quiet
html_report "mmvp-vlm --html --html-items 20" mv-20.html 20
grep -q "a seeded random sample of 20 of the 135 items" mv-20.html && "$WINOKIT" run mmvp-vlm --data mv --scores mv.jsonl --html mv-20b.html --html-items 20 --quiet 2>/dev/null && cmp -s <(grep -o 'data-id="[^"]*"' mv-20.html) <(grep -o 'data-id="[^"]*"' mv-20b.html) && ok "--html-items: the sample is named and the same on every run" || not_ok "--html-items sample"
if [ -n "$SHARED" ]; then
  expect "run mmvp-vlm --model --html" 0 "wrote mv-model.html" -- "$WINOKIT" run mmvp-vlm --data mv --model "$SHARED/golden/clip/models/tiny-quickgelu-hf" --bootstrap 200 --html mv-model.html --quiet
  html_report "mmvp-vlm --html (a model)" mv-model.html 135 thumbs
fi
# compare --benchmark: run A solves 28 pairs (strict), run B none: 28 discordant items one way,
# exact McNemar p = 2 * 0.5^28 = 2^-27 = 7.450580596923828e-09; the difference 28/135 = 20.74 points.
python3 -c 'import json
with open("mv-none.jsonl", "w") as f:
    for k in range(135): f.write(json.dumps({"id": "%d-%d" % (2 * k + 1, 2 * k + 2), "scores": [[0.1, 0.9], [0.9, 0.1]]}) + "\n")'
expect "compare --benchmark mmvp-vlm: the paired test on the pairs" 0 "\| A \| B \| all \| 135 \| 28 \| 0 \| \+20\.74 \| \[[0-9.]+, [0-9.]+\] \| 7\.45e-09 \|" -- "$WINOKIT" compare --benchmark mmvp-vlm --data mv A=mv.jsonl B=mv-none.jsonl --bootstrap 500 --json mvc.json
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); r=[p for p in j["pairwise"] if p["subset"] is None][0]; assert abs(r["p_mcnemar_exact"] - 2.0**-27) < 1e-20 and r["a_only"] == 28 and r["b_only"] == 0, r
s=[p for p in j["pairwise"] if p["subset"] == "Orientation and Direction"][0]; assert (s["a_only"], s["b_only"], s["n"]) == (14, 0, 15), s' mvc.json && ok "compare --benchmark: McNemar p = 2^-27 overall, 14 vs 0 in one pattern" || not_ok "compare mmvp json" "$(head -c 600 mvc.json)"
head -269 mv/Questions.csv > mv-short.csv
expect "a Questions.csv short of the release's 135 pairs is refused" 2 "expected the release's 135 pairs \(270 rows\), got 134" -- "$WINOKIT" run mmvp-vlm --data mv-short.csv --scores mv.jsonl
rm "mv/MLLM_VLM Images/Text/211.jpg"
expect "a missing MMVP image is named" 3 "1 image\(s\) not found in .*MLLM_VLM Images: 211.jpg" -- "$WINOKIT" run mmvp-vlm --data mv --model "${SHARED:-.}/golden/clip/models/tiny-quickgelu-hf"

# --- VALSE: the release's data/ folder (11 piece files; images in config.py's folders) ---
python3 - <<'PY'
import json, os, shutil
folders = {"existence": "visual7w/images", "plurals": "plurals/test_images",
           "counting-hard": "visual7w/images", "counting-small-quant": "visual7w/images",
           "counting-adversarial": "visual7w/images", "relations": "relations/test_images",
           "action-replacement": "actions/images_512", "actant-swap": "actions/images_512",
           "coreference-standard": "coref/release_too_many_is_this_in_color/images",
           "coreference-hard": "coref/release_v18/test_images", "foil-it": "val2014"}
with open("va.jsonl", "w") as f:
    for n, (piece, folder) in enumerate(folders.items()):
        os.makedirs("va/data/" + folder, exist_ok=True)
        items = {}
        for k in range(3):
            image = "%s_%d.jpg" % (piece, k)
            shutil.copy("syn/images/ex_%d_img_%d.png" % (n, k % 2), "va/data/%s/%s" % (folder, image))
            # the third item of each piece is not in the valid set (1 of 3 annotators)
            items["%s_%d" % (piece, k)] = {"dataset": "x", "image_file": image,
                                           "caption": "two dogs on a sofa", "foil": "two cats on a sofa",
                                           "mturk": {"foil": 0, "caption": 3 if k < 2 else 1, "other": 0}}
            if k < 2:
                # existence: right, tie (wrong); every other piece: right, right
                s = [[0.5], [0.5]] if (piece == "existence" and k == 1) else [[0.8], [0.2]]
                f.write(json.dumps({"id": "%s/%s_%d" % (piece, piece, k), "scores": s}) + "\n")
        json.dump(items, open("va/data/%s.json" % piece, "w"))
PY
expect "benchmarks lists valse" 0 "valse .*VALSE" -- "$WINOKIT" benchmarks
expect "run valse from scores: acc_r over the valid set, a tie wrong" 0 "\| existence \| existence \| 3 \| 2 \| 50\.00 \| \[[0-9.]+, [0-9.]+\] \| 1 \|" -- "$WINOKIT" run valse --data va/data --scores va.jsonl --json va.json --csv va.csv
[ "$(num metrics.11.percent va.json)" = "95.454545455" ] && ok "valse: mean of the 11 pieces (10 x 100 + 50) / 11" || not_ok "valse mean" "$(head -c 400 va.json)"
[ "$(wc -l < va.csv)" -eq 23 ] && strict_csv va.csv 8 && ok "valse --csv: one row per valid item" || not_ok "valse csv" "$(head -2 va.csv)"
grep '"plurals/' va.jsonl > va-plurals.jsonl
expect "one VALSE piece file runs that piece" 0 "\| plurals \| plurality \| 3 \| 2 \| 100\.00 \|" -- "$WINOKIT" run valse --data va/data/plurals.json --scores va-plurals.jsonl
if [ -n "$SHARED" ]; then
  expect "run valse with a model" 0 "\| foil-it \| foil-it \| 3 \| 2 \|" -- "$WINOKIT" run valse --data va/data --model "$SHARED/golden/clip/models/tiny-quickgelu-hf" --bootstrap 200
fi
expect "run valse --html from scores" 0 "wrote va.html" -- "$WINOKIT" run valse --data va/data --scores va.jsonl --html va.html --quiet
html_report "valse --html (scores)" va.html 22
if [ -n "$SHARED" ]; then
  expect "run valse --model --html" 0 "wrote va-model.html" -- "$WINOKIT" run valse --data va/data --model "$SHARED/golden/clip/models/tiny-quickgelu-hf" --bootstrap 200 --html va-model.html --quiet
  html_report "valse --html (a model)" va-model.html 22 thumbs
fi
rm va/data/actions/images_512/actant-swap_1.jpg
expect "a missing VALSE image is named" 3 "1 image\(s\) not found in va/data: actant-swap_1.jpg" -- "$WINOKIT" run valse --data va/data --model "${SHARED:-.}/golden/clip/models/tiny-quickgelu-hf"
rm va/data/relations.json
expect "a VALSE folder missing a piece names it" 2 "piece file\(s\) missing: relations.json" -- "$WINOKIT" run valse --data va/data --scores va.jsonl

# --- EqBen: the released subset (a Winoground-style JSON list; image_subset/, YouCook2 as .npy) ---
mkdir -p eq/image_subset/eqbenag/v1 eq/image_subset/eqbenyoucook2
cp syn/images/ex_2_img_0.png eq/image_subset/eqbenag/v1/a.png
cp syn/images/ex_2_img_1.png eq/image_subset/eqbenag/v1/b.png
python3 - <<'PY'
import json, struct, zlib
w, h = 32, 24
px = [[((x * 8) % 256, (y * 10) % 256, (x * y) % 256) for x in range(w)] for y in range(h)]
def png(rows):
    raw = b"".join(b"\x00" + bytes(c for p in row for c in p) for row in rows)
    chunk = lambda t, d: struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
def npy(rows):  # uint8, height x width x 3, BGR
    header = "{'descr': '|u1', 'fortran_order': False, 'shape': (%d, %d, 3), }" % (h, w)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + bytes(c for row in rows for p in row for c in p[::-1])
open("eq/image_subset/eqbenag/v1/c.png", "wb").write(png(px))
open("eq/image_subset/eqbenyoucook2/c.npy", "wb").write(npy(px))
open("eq/image_subset/eqbenyoucook2/d.npy", "wb").write(npy([row[::-1] for row in px]))
pair = lambda a, b: {"image0": a, "caption0": "the door is open", "image1": b, "caption1": "the door is closed"}
json.dump([pair("eqbenag/v1/a.png", "eqbenag/v1/b.png"), pair("eqbenag/v1/c.png", "eqbenag/v1/a.png"),
           pair("eqbenyoucook2/c.npy", "eqbenyoucook2/d.npy")], open("eq/eqben_subset_10percent_final.json", "w"))
with open("eq.jsonl", "w") as f:  # as the unit test: all right; a text tie; image wrong
    for k, s in enumerate([[[0.9, 0.1], [0.2, 0.8]], [[0.9, 0.1], [0.9, 0.95]], [[0.5, 0.6], [0.1, 0.9]]]):
        f.write(json.dumps({"id": str(k), "scores": s}) + "\n")
PY
expect "benchmarks lists eqben" 0 "eqben .*EqBen" -- "$WINOKIT" benchmarks
expect "run eqben from scores: Winoground scores, a tie wrong" 0 "\| group score \| 33\.33 \| 3 \|" -- "$WINOKIT" run eqben --data eq/eqben_subset_10percent_final.json --scores eq.jsonl --json eq.json --csv eq.csv
[ "$(num metrics.0.percent eq.json)" = "66.666666667" ] && [ "$(num metrics.1.percent eq.json)" = "66.666666667" ] && ok "eqben: text and image 66.67" || not_ok "eqben metrics" "$(head -c 400 eq.json)"
[ "$(wc -l < eq.csv)" -eq 4 ] && strict_csv eq.csv 13 && ok "eqben --csv: one row per item" || not_ok "eqben csv" "$(head -2 eq.csv)"
if [ -n "$SHARED" ]; then
  expect "run eqben with a model (png and .npy frames)" 0 "wrote eqm.json" -- "$WINOKIT" run eqben --data eq/eqben_subset_10percent_final.json --model "$SHARED/golden/clip/models/tiny-quickgelu-hf" --quiet --json eqm.json --bootstrap 200
  # c.png and c.npy (the same pixels, BGR) score the same with the same caption
  [ -s eqm.json ] && [ "$(num details.per_item.1.c0_i0 eqm.json)" = "$(num details.per_item.2.c0_i0 eqm.json)" ] && ok "eqben: a .npy frame scores as the same pixels in a PNG" || not_ok "eqben npy frame" "$(num details.per_item.1.c0_i0 eqm.json) vs $(num details.per_item.2.c0_i0 eqm.json)"
fi
expect "run eqben --html from scores, .npy frames as thumbnails" 0 "wrote eq.html" -- "$WINOKIT" run eqben --data eq/eqben_subset_10percent_final.json --scores eq.jsonl --images eq/image_subset --html eq.html --quiet
html_report "eqben --html (scores and --images)" eq.html 3 thumbs
[ "$(grep -o '<p class="check"><b>text score</b>: ' eq.html | wc -l)" -eq 3 ] && grep -q '<option value="2:0">image score wrong</option>' eq.html && ok "eqben --html: group, text and image checks, each filterable" || not_ok "eqben checks"
if [ -n "$SHARED" ]; then
  expect "run eqben --model --html" 0 "wrote eq-model.html" -- "$WINOKIT" run eqben --data eq/eqben_subset_10percent_final.json --model "$SHARED/golden/clip/models/tiny-quickgelu-hf" --bootstrap 200 --html eq-model.html --quiet
  html_report "eqben --html (a model)" eq-model.html 3 thumbs
fi
rm eq/image_subset/eqbenyoucook2/d.npy
expect "a missing EqBen image is named" 3 "1 image\(s\) not found in eq/image_subset: d.npy" -- "$WINOKIT" run eqben --data eq/eqben_subset_10percent_final.json --model "${SHARED:-.}/golden/clip/models/tiny-quickgelu-hf"

# --- winokit run all: the benchmarks of a config file, one summary table and one report each ---
python3 - <<'PY'
import json
json.dump({"sugarcrepe": {"data": "sc/data", "scores": "sc.jsonl"},
           "whatsup": {"data": "wu-all/data", "scores": "wu.jsonl"},
           "aro": {"data": "aro", "scores": "aro.jsonl"}}, open("all-scores.json", "w"))
json.dump({"sugarcrepe": {"data": "sc/data", "images": "sc/images"}, "aro": {"data": "aro"}},
          open("all-model.json", "w"))
json.dump({"sugarcrepe": {"data": "sc/data", "images": "sc/images"}, "aro": {"data": "nowhere"}},
          open("all-missing.json", "w"))
json.dump({"sugarcrepe": {"data": "sc/data", "imgs": "sc/images"}}, open("all-badkey.json", "w"))
json.dump({"sugarcrep": {"data": "sc/data"}}, open("all-unknown.json", "w"))
PY
mkdir -p wu-all && cp -r wu/data wu-all/ && python3 -c 'import json; json.dump([[2345, "A cup in front of a plate", "A cup behind a plate"]], open("wu-all/data/vg_qa_two_obj.json", "w"))'
expect "run all from scores files: one summary table" 0 "\| aro \| vg_relation macro accuracy \| 75\.00 \| 3 \|" -- "$WINOKIT" run all --config all-scores.json --reports all-s --json all-s.json
[ -s all-s/sugarcrepe.json ] && [ -s all-s/whatsup.md ] && [ -s all-s/aro.csv ] && [ -s all-s/summary.md ] && ok "run all writes every benchmark's report and the summary" || not_ok "run all reports" "$(ls all-s)"
[ "$(num metrics.7.percent all-s/sugarcrepe.json)" = "$(num metrics.7.percent sc.json)" ] && [ "$(num metrics.0.percent all-s/aro.json)" = "$(num metrics.0.percent aro.json)" ] && ok "run all = each benchmark run alone" || not_ok "run all figures"
grep -q "| sugarcrepe | mean of subsets | 80.95 | 9 |" all-s/summary.md && ok "run all summary holds every headline metric" || not_ok "run all summary" "$(head -8 all-s/summary.md)"
expect "run all --html: the summary page and each benchmark's report" 0 "wrote all-h.html" -- "$WINOKIT" run all --config all-scores.json --reports all-h --html all-h.html --quiet
html_report "run all --html: sugarcrepe.html" all-h/sugarcrepe.html 9
html_report "run all --html: aro.html" all-h/aro.html 30
grep -q "mean of subsets" all-h.html && grep -q "<h2>Provenance</h2>" all-h.html && ok "run all --html: the summary table as a page" || not_ok "run all summary page"
if [ -n "$SHARED" ]; then
  expect "run all with a model" 0 "\| aro \| vg_attribution \| [0-9.]+ \| 26 \|" -- "$WINOKIT" run all --config all-model.json --model "$SHARED/golden/clip/models/tiny-quickgelu-hf" --reports all-m --bootstrap 200
  [ "$(num details.per_item.3.true_score all-m/aro.json)" = "$(num details.per_item.3.true_score aro-clip.json)" ] && ok "run all --model scores as run aro" || not_ok "run all --model scores"
  expect "run all --model --html" 0 "wrote all-mh/aro.html" -- "$WINOKIT" run all --config all-model.json --model "$SHARED/golden/clip/models/tiny-quickgelu-hf" --reports all-mh --bootstrap 200 --html all-mh.html --quiet
  html_report "run all --model --html: aro.html (crops)" all-mh/aro.html 30 thumbs
fi
expect "run all: a missing data folder is named before any model work" 3 "all-missing.json: aro.data: nowhere: not found" -- "$WINOKIT" run all --config all-missing.json --model no-such-model --reports never
[ ! -e never ] && ok "run all wrote nothing on error" || not_ok "run all wrote on error"
expect "run all: an unknown key names the file and the key" 2 "all-badkey.json: field 'sugarcrepe.imgs'" -- "$WINOKIT" run all --config all-badkey.json --model no-such-model --reports never
expect "run all: an unknown benchmark names the known ones" 2 "unknown benchmark 'sugarcrep'" -- "$WINOKIT" run all --config all-unknown.json --model no-such-model --reports never
expect "run all needs --config" 2 "winokit run all needs --config FILE" -- "$WINOKIT" run all --model no-such-model --reports never
expect "run all without a model needs scores for every benchmark" 2 "or a scores file for every benchmark" -- "$WINOKIT" run all --config all-model.json --reports never

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
