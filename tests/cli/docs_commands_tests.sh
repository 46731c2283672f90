#!/usr/bin/env bash
CLI_DIR=$(cd "$(dirname "$0")" && pwd)
# Every command shown in README.md and docs/*.md runs: each line of a fenced sh/bash/console
# block is run on small data (a `winokit synth` set, the tiny checkpoints of tests/fixtures and
# ../shared) and must exit 0, or, in a console block, exit as the shown output says and print
# it; or it is in the short ALLOWLIST below with its reason. A line that is neither fails the
# test, so new docs stay covered. Downloads (`curl`) run against a stand-in for the network that
# serves each named file from the fixture of the same family, so the files a command names are
# checked to be the ones the loader needs. Synopses (```text blocks starting with `winokit`)
# are checked against `winokit COMMAND --help`, and every relative Markdown link against the
# files and headings it points to.
# Usage: docs_commands_tests.sh PATH/TO/winokit SOURCE_DIR
set -u
WINOKIT=$(realpath "${1:?usage: docs_commands_tests.sh PATH/TO/winokit SOURCE_DIR}")
SRC=$(realpath "${2:?usage: docs_commands_tests.sh PATH/TO/winokit SOURCE_DIR}")
SHARED=$(realpath -m "$SRC/../shared")
WORK=$(mktemp -d)
trap '[ -n "${PID:-}" ] && kill "$PID" 2>/dev/null; rm -rf "$WORK"' EXIT
source "$CLI_DIR/lib.sh"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
export WINOKIT_CACHE_DIR="$WORK/cache"
REAL_CURL=$(command -v curl || true)
FX="$WORK/fx"   # fixtures the stand-in network serves
RUN="$WORK/run" # where the documented commands run, as a user's working folder
mkdir -p "$FX" "$RUN/build" "$WORK/bin"
ln -s "$WINOKIT" "$WORK/bin/winokit"
ln -s "$WINOKIT" "$RUN/build/winokit"

# --- The stand-in network: URL prefix -> fixture folder (or file) --------------------------
# A repository's file is served from the fixture folder of the same family. The fixtures keep
# their weights as model.safetensors; a request for pytorch_model.bin is answered with it, saved
# as model.safetensors (the .bin reader is covered by cli_models and the unit tests).
FIX="$SRC/tests/fixtures"
cat > "$WORK/network.tsv" <<EOF
https://huggingface.co/datasets/facebook/winoground/resolve/main/data/	$FX/winoground
https://huggingface.co/openai/clip-vit-base-patch32/resolve/main/	$SHARED/golden/clip/models/tiny-quickgelu-hf
https://huggingface.co/laion/CLIP-ViT-B-32-laion2B-s34B-b79K/resolve/main/	$FIX/resnet/tiny-rn-openclip
https://huggingface.co/dandelin/vilt-b32-finetuned-coco/resolve/main/	$FIX/vilt/tiny-rank
https://huggingface.co/facebook/flava-full/resolve/main/	$FIX/flava/tiny-pretraining
https://huggingface.co/google/siglip-base-patch16-224/resolve/main/	$FIX/siglip/tiny-a
https://huggingface.co/Salesforce/blip-itm-base-coco/resolve/main/	$FIX/blip/tiny-itm
https://huggingface.co/google/siglip2-base-patch16-224/resolve/main/	$FIX/siglip/tiny-c
https://huggingface.co/HuggingFaceTB/SmolVLM-256M-Instruct/resolve/main/	$SRC/tests/golden/smolvlm_tiny/model
https://huggingface.co/llava-hf/llava-onevision-qwen2-0.5b-ov-hf/resolve/main/	$FIX/llava_onevision/model
https://huggingface.co/openai-community/gpt2/resolve/main/	$SRC/tests/golden/gpt2_tiny/f32
https://openaipublic.azureedge.net/clip/models/afeb0e10f9e5a86da6080e35cf09123aca3b358a0c3e3b6c78a7b63bc04b6762/	$FX/openai
https://github.com/openai/CLIP/raw/main/clip/	$FX/openai
https://github.com/WinoGAViL/WinoGAViL-experiments/raw/HEAD/assets/test_sets_with_zero_shot_predictions/	$FX/winogavil
EOF
# The family each downloaded folder must be read as.
declare -A DOWNLOADED_FAMILY=(
  [clip-vit-base-patch32]=clip [vit-b-32-laion2b]=clip [vilt-b32-finetuned-coco]=vilt
  [flava-full]=flava [siglip-base-patch16-224]=siglip [blip-itm-base-coco]=blip
  [siglip2-base-patch16-224]=siglip [SmolVLM-256M-Instruct]=smolvlm
  [llava-onevision-qwen2-0.5b-ov-hf]=llava-onevision
)
cat > "$WORK/bin/curl" <<'EOF'
#!/usr/bin/env python3
# A stand-in for curl: serves URLs from the fixtures listed in network.tsv. Understands -o
# (with #1 for a {a,b} glob), -O, and ignores -f -L -s --create-dirs -H VALUE.
import os, re, shutil, sys
table = [l.rstrip("\n").split("\t") for l in open(os.environ["DOCS_NETWORK"]) if l.strip()]
args, out, url, remote_name = sys.argv[1:], None, None, False
i = 0
while i < len(args):
    a = args[i]
    if a in ("-o", "--output"): out = args[i + 1]; i += 2; continue
    if a in ("-H", "--header"): i += 2; continue
    if a in ("-O", "--remote-name"): remote_name = True; i += 1; continue
    if a.startswith("-") and len(a) > 1:
        remote_name = remote_name or (not a.startswith("--") and "O" in a)
        i += 1; continue
    url = a; i += 1
if not url: sys.exit("curl stand-in: no URL")
m = re.search(r"\{([^}]*)\}", url)
items = m.group(1).split(",") if m else [None]
for item in items:
    u = url[:m.start()] + item + url[m.end():] if m else url
    src = None
    for prefix, folder in table:
        if u.startswith(prefix):
            src = os.path.join(folder, u[len(prefix):])
            break
    if src is None:
        sys.exit(f"curl stand-in: no fixture for {u} (add it to the network table of docs_commands_tests.sh)")
    dest = out.replace("#1", item) if out and item is not None else out
    if remote_name or dest is None:
        dest = os.path.basename(u)
    if not os.path.exists(src) and os.path.basename(src) == "pytorch_model.bin":
        src = os.path.join(os.path.dirname(src), "model.safetensors")
        dest = os.path.join(os.path.dirname(dest), "model.safetensors")
    if not os.path.isfile(src):
        print(f"curl: (22) The requested URL returned error: 404 ({u}: the fixture has no such file)", file=sys.stderr)
        sys.exit(22)
    d = os.path.dirname(dest)
    if d: os.makedirs(d, exist_ok=True)
    shutil.copyfile(src, dest)
EOF
chmod +x "$WORK/bin/curl"
export DOCS_NETWORK="$WORK/network.tsv"

# --- Fixtures and placeholders --------------------------------------------------------------
"$WINOKIT" synth --out "$FX/winoground" --count 8 --seed 3 --image-size 64 --zip >/dev/null 2>&1 || exit 1
mkdir -p "$FX/openai" "$FX/winogavil"
cp "$FIX/resnet/tiny-rn.pt" "$FX/openai/RN50.pt"
cp "$SHARED/golden/clip/vocab/bpe_simple_vocab_16e6.txt.gz" "$FX/openai/"
# WinoGAViL: an image pool, instances drawn from it with `winokit swow`, and the published test
# sets' layout (a clip_vit_32_predictions column).
cd "$RUN" || exit 1
"$WINOKIT" synth --out "$WORK/pool-src" --count 8 --seed 5 --image-size 64 >/dev/null 2>&1 || exit 1
mkdir -p my-pool
i=0
for w in sun moon star sea sand tree leaf dog cat fish rock snow fire rain wolf owl; do
  cp "$WORK/pool-src/images/ex_$((i % 8))_img_$((i % 2)).png" "my-pool/$w.png"; i=$((i + 1))
done
ln -s my-pool winogavil_images
printf 'cue,R1,R2,R3\nsky,sun,moon,star\nbeach,sea,sand,sun\nforest,tree,leaf,owl\npet,dog,cat,fish\nnight,moon,owl,wolf\nstorm,rain,sea,rock\n' > "$WORK/swow.csv"
"$WINOKIT" swow --graph "$WORK/swow.csv" --images my-pool --out test_set.csv --seed 3 >/dev/null 2>&1 || exit 1
for f in game_10_12 game_5_6 swow; do
  python3 - test_set.csv "$FX/winogavil/${f}_with_predictions.csv" <<'PY'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
with open(sys.argv[2], "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0]) + ["clip_vit_32_predictions"])
    w.writeheader()
    for r in rows:
        cands = json.loads(r["candidates"])
        r["clip_vit_32_predictions"] = json.dumps(cands[: len(json.loads(r["associations"]))])
        w.writerow(r)
PY
done
# The demo's set (docs/cli.md's eval example reads it before the demo section runs).
"$WINOKIT" synth --out winokit-demo/synthetic --count 8 --seed 1 --image-size 64 >/dev/null 2>&1 || exit 1
cp "$SHARED/golden/clip/images/chelsea_odd.jpg" dog.jpg   # the score example's image

# Files a user has from earlier steps (scores of other runs, facts about the runs, caption
# variants): made here from the same small set.
for run in clip:1 blip:2 flava:3 vilt:4 uniter:5 my_model:6; do
  "$WINOKIT" eval --data "$FX/winoground" --scorer random --seed "${run#*:}" --quiet --scores-out "${run%:*}.jsonl" >/dev/null 2>&1 \
    || { echo "FAIL - could not make ${run%:*}.jsonl"; exit 1; }
done
printf 'run,pretraining_pairs,arch\nclip,400000000,dual\nblip,129000000,cross\nflava,70000000,cross\nvilt,10000000,single\nuniter,9500000,single\n' > pretraining.csv
printf 'word,replacement\ncircle,ring\nsquare,box\nred,crimson\nblue,navy\n' > "$WORK/subs.csv"
"$WINOKIT" variants generate --data "$FX/winoground" --method substitution --substitutions "$WORK/subs.csv" --out v.jsonl >/dev/null 2>&1 \
  || { echo "FAIL - could not make v.jsonl"; exit 1; }

# Placeholder paths in documented commands -> what the test passes instead (regex, replacement).
# Kept short: most names are real folders made above or by the documented downloads.
MAPPING=(
  # openai/CLIP's real tokenizer cannot drive a tiny model (its vocabulary is 514 tokens).
  '--tokenizer bpe_simple_vocab_16e6\.txt\.gz'  "--tokenizer $FIX/resnet/tokenizer"
  '--model RN50\.pt( |$)(?!.*--tokenizer)'      "--model RN50.pt --tokenizer $FIX/resnet/tokenizer\\1"
  # The paper-sized probe takes hours; a tiny one checks the command.
  '^(winokit probe .*)$'                        '\1 --seeds 1 --epochs 2 --hidden 16 --layers final'
  # A server on a free port, with cheap password hashes.
  '^(winokit serve .*)$'                        '\1 --port 0 --password-cost min'
)

# Lines not run, each with its reason (regex over the command).
ALLOWLIST=(
  '^\./scripts/demo'      'apt installs and a full build; ./scripts/demo ends in `winokit demo`, run here from docs/cli.md'
  '^\./scripts/test'      'apt installs and a full build; CI (.ci/run) runs exactly this'
  '^\./scripts/fuzz'      'builds the clang fuzz targets (minutes); ./scripts/test ends with it'
  '^(sudo )?apt-get '     'installs Debian packages (root and a network)'
  '^sudo -u postgres '    'a system PostgreSQL; tests/cli/game_nginx.sh (ctest game_nginx) runs this setup on a private cluster'
  '^DB='                  'the deployment'"'"'s PostgreSQL URL: tests/cli/game_nginx.sh runs this setup'
  '^for port in '         'the deployment'"'"'s servers behind nginx: tests/cli/game_nginx.sh runs this setup'
  '^done$'                'end of the deployment loop above'
  '"\$DB"'                'the deployment'"'"'s PostgreSQL: tests/cli/game_nginx.sh runs this setup'
)
# Lines run as they are (setup a user types; no winokit involved).
RUN_AS_IS='^(export [A-Z_]+=|printf |curl )'

# --- Extract the documented commands --------------------------------------------------------
DOCS=("$SRC/README.md" "$SRC"/docs/*.md)
python3 - "$SRC" "${DOCS[@]}" > "$WORK/commands.tsv" <<'PY'
import os, re, sys
src, files = sys.argv[1], sys.argv[2:]
for path in files:
    rel = os.path.relpath(path, src)
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"^\s*```\s*([A-Za-z]*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        lang, start = m.group(1), i + 1
        indent = len(lines[i]) - len(lines[i].lstrip())
        j = start
        while j < len(lines) and not re.match(r"^\s*```\s*$", lines[j]):
            j += 1
        body = [l[indent:] if l[:indent].isspace() else l for l in lines[start:j]]
        i = j + 1
        if lang in ("sh", "bash", "shell"):
            k = 0
            while k < len(body):
                line, first = body[k], start + k + 1
                while line.endswith("\\") and k + 1 < len(body):
                    k += 1
                    line = line[:-1] + " " + body[k].strip()
                k += 1
                cmd = line.strip()
                if not cmd or cmd.startswith("#"):
                    continue
                print(f"{rel}:{first}\tsh\t{cmd}\t")
        elif lang == "console":
            k = 0
            while k < len(body):
                if body[k].startswith("$ "):
                    cmd, first, out = body[k][2:].strip(), start + k + 1, []
                    k += 1
                    while k < len(body) and not body[k].startswith("$ "):
                        out.append(body[k]); k += 1
                    print(f"{rel}:{first}\tconsole\t{cmd}\t" + "\\n".join(out))
                else:
                    k += 1
        elif lang == "text" and body and body[0].startswith("winokit "):
            print(f"{rel}:{start + 1}\tsynopsis\t" + " ".join(l.strip() for l in body) + "\t")
PY

# --- Run them, in order, in one working folder -----------------------------------------------
cd "$RUN" || exit 1
ran=0; allowed=0
export PATH="$WORK/bin:$PATH"
map_command() {
  python3 - "$1" "${MAPPING[@]}" <<'PY'
import re, sys
cmd, pairs = sys.argv[1], sys.argv[2:]
cmd = re.sub(r"^build/winokit ", "winokit ", cmd)
for pat, rep in zip(pairs[::2], pairs[1::2]):
    cmd = re.sub(pat, rep, cmd)
print(cmd)
PY
}
allow_reason() {
  local i
  for ((i = 0; i < ${#ALLOWLIST[@]}; i += 2)); do
    if [[ "$1" =~ ${ALLOWLIST[i]} ]]; then echo "${ALLOWLIST[i+1]}"; return 0; fi
  done
  return 1
}
run_serve() { # run_serve WHERE COMMAND: start the documented server, register ana, stop it
  local where=$1 cmd=$2 port=
  bash -c "exec $cmd" > serve.log 2>&1 &
  PID=$!
  for _ in $(seq 1 300); do
    port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\)/.*|\1|p' serve.log)
    [ -n "$port" ] && break
    kill -0 "$PID" 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$port" ]; then
    not_ok "$where: $cmd (the server did not start)" "$(tail -5 serve.log)"
  else
    ok "$where: $cmd (started, then stopped)"
    # The docs go on with "register ana, then winokit game admin --grant ana".
    "$REAL_CURL" -s -m 10 -H 'Content-Type: application/json' --data-binary '{"name":"ana","password":"password1"}' \
      "http://127.0.0.1:$port/api/register" > /dev/null
  fi
  kill "$PID" 2>/dev/null; wait "$PID" 2>/dev/null; PID=
}

while IFS=$'\t' read -r where kind cmd expected; do
  case $kind in
    synopsis)
      sub=$(sed -E 's/^winokit (game [a-z]+|variants [a-z]+|[a-z]+).*/\1/' <<<"$cmd")
      # A block may hold several synopses (variants generate / eval): check each line's flags.
      missing=""
      while read -r part; do
        [ -z "$part" ] && continue
        s=$(sed -E 's/^winokit (game [a-z]+|variants [a-z]+|[a-z]+).*/\1/' <<<"$part")
        help=$($WINOKIT $s --help 2>&1) || { missing+=" (no help for $s)"; continue; }
        for flag in $(grep -oE -- '--[a-z][a-z0-9-]*' <<<"$part" | sort -u); do
          grep -qE -- "(^|[ ,])$flag([ =,]|$)" <<<"$help" || missing+=" $s $flag"
        done
      done < <(sed 's/ winokit /\nwinokit /g' <<<"$cmd")
      [ -z "$missing" ] && ok "$where: synopsis of winokit $sub matches --help" \
        || not_ok "$where: synopsis flags not in --help:$missing"
      continue ;;
  esac
  if reason=$(allow_reason "$cmd"); then
    allowed=$((allowed + 1)); echo "skip - $where: $cmd ($reason)"; continue
  fi
  if [[ ! "$cmd" =~ ^(winokit|build/winokit)\  ]] && [[ ! "$cmd" =~ $RUN_AS_IS ]]; then
    not_ok "$where: documented command neither run nor allowlisted: $cmd"; continue
  fi
  mapped=$(map_command "$cmd")
  ran=$((ran + 1))
  if [[ "$mapped" =~ ^winokit\ serve ]]; then
    run_serve "$where" "$mapped"; continue
  fi
  t0=$(date +%s.%N)
  out=$(timeout 120 bash -c "$mapped" 2>&1 </dev/null)
  rc=$?
  [ -n "${DOCS_TIMES:-}" ] && echo "time $(awk -v a="$(date +%s.%N)" -v b="$t0" "BEGIN{print a - b}") $cmd"
  if [ "$kind" = console ]; then
    want=$(printf '%b' "$expected")
    want_rc=0; grep -q 'error:' <<<"$want" && want_rc=2
    if [ "$rc" -ne "$want_rc" ]; then not_ok "$where: $cmd (exit $rc, the doc shows $want_rc)" "$out"
    elif [ "$out" != "$want" ]; then not_ok "$where: $cmd prints other text than the doc shows" "$(diff <(echo "$want") <(echo "$out"))"
    else ok "$where: $cmd (output as shown)"; fi
  elif [ "$rc" -ne 0 ]; then
    not_ok "$where: $cmd (exit $rc)" "$(echo "$out" | tail -6)"
  else
    ok "$where: $cmd"
  fi
done < "$WORK/commands.tsv"

# The documented downloads gave folders the registry reads as the right family, from exactly
# the files each command names.
cd "$RUN" || exit 1
for dir in "${!DOWNLOADED_FAMILY[@]}"; do
  if [ ! -d "$dir" ]; then not_ok "download of $dir: no folder (is its command still in the README?)"; continue; fi
  fam=$("$WINOKIT" models --model "$dir" --json 2>&1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["family"])' 2>/dev/null)
  [ "$fam" = "${DOWNLOADED_FAMILY[$dir]}" ] && ok "download of $dir is read as a $fam model" \
    || not_ok "download of $dir is read as '${fam}', wanted ${DOWNLOADED_FAMILY[$dir]}"
done
grep -q 'N = 8' <("$WINOKIT" eval --data winoground --scorer random 2>&1) && ok "the downloaded Winoground layout (data/examples.jsonl, data/images.zip) reads" \
  || not_ok "the downloaded Winoground layout does not read"

# --- Every relative link points to a file and heading that exist ---------------------------
# docs/cluster.md is being written on another branch; its link is checked once the file exists.
links=$(python3 - "$SRC" "${DOCS[@]}" "$SRC/CONTRIBUTING.md" <<'PY'
import os, re, sys
src, files = sys.argv[1], sys.argv[2:]
pending = {"docs/cluster.md"}
def slugs(path):
    out, seen, fence = set(), {}, False
    for line in open(path, encoding="utf-8"):
        if re.match(r"^\s*```", line):
            fence = not fence
            continue
        m = None if fence else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        s = re.sub(r"[^\w\- ]", "", m.group(1).lower()).replace(" ", "-")
        n = seen.get(s, 0); seen[s] = n + 1
        out.add(s if n == 0 else f"{s}-{n}")
    return out
bad = 0
for path in files:
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"^[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
        rel = os.path.relpath(dest, src)
        where = os.path.relpath(path, src)
        if not os.path.exists(dest):
            if rel in pending:
                print(f"pending\t{where}: {target}")
            else:
                print(f"bad\t{where}: {target}: no such file"); bad += 1
            continue
        if anchor and dest.endswith(".md") and anchor not in slugs(dest):
            print(f"bad\t{where}: {target}: no heading #{anchor} in {rel}"); bad += 1
            continue
        print(f"good\t{where}: {target}")
PY
)
nlinks=$(grep -c '^good' <<<"$links")
nbad=$(grep -c '^bad' <<<"$links")
[ "$nbad" -eq 0 ] && ok "$nlinks relative links point to existing files and headings" \
  || not_ok "broken links" "$(grep '^bad' <<<"$links" | cut -f2)"
grep '^pending' <<<"$links" | cut -f2 | sed 's/^/skip - link to a page not merged yet: /'

echo "docs commands: $ran run, $allowed allowlisted; $passed passed, $failed failed"
[ "$failed" -eq 0 ]
