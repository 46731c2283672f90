#!/usr/bin/env bash
# SIGKILL under load: `winokit serve` is killed while players create and solve associations;
# after a restart on the same database every acknowledged round and solve is still there.
#   game_durability.sh <winokit> <bench_game> [shared dir]
set -uo pipefail
HERE=$(dirname "$(realpath "$0")")
WINOKIT=$1
BENCH=$2
SHARED=${3:-}
WORK=$(mktemp -d)
PID=
cleanup() { [ -n "$PID" ] && kill -9 "$PID" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
cd "$WORK" || exit 1
"$WINOKIT" synth --out syn --count 12 --image-size 64 >/dev/null
MODEL=()
[ -n "$SHARED" ] && [ -d "$SHARED/golden/clip/models/tiny-quickgelu-hf" ] && MODEL=(--model "$SHARED/golden/clip/models/tiny-quickgelu-hf")

# shellcheck source=game_server.sh
source "$HERE/game_server.sh"
start_server() {
  start_game_server server.log --images syn/images --db game.db --password-cost min \
    --solves-per-creation 0 --creator-qualification-rounds 0 --rate-address 100000 \
    --burst-address 100000 --rate-account 10000 --auth-per-minute 100000 --cache-dir cache \
    "${MODEL[@]}"
}

start_server
"$BENCH" --port "$PORT" --players 20 --rounds 1000 --seconds 30 --creators 4 --solve-rate 400 --ack acks.jsonl > load.log 2>&1 &
LOAD=$!
# Kill while solves are being acknowledged.
for _ in $(seq 1 300); do
  grep -q '"kind":"solve"' acks.jsonl 2>/dev/null && break
  sleep 0.05
done
sleep 1
kill -9 "$PID"
wait "$PID" 2>/dev/null
wait "$LOAD" 2>/dev/null
rounds=$(grep -c '"kind":"round"' acks.jsonl)
solves=$(grep -c '"kind":"solve"' acks.jsonl)
echo "killed the server after $rounds acknowledged rounds and $solves acknowledged solves"
if [ "$solves" -eq 0 ]; then echo "FAIL - no solve was acknowledged before the kill"; cat load.log; exit 1; fi
start_server
if "$BENCH" --port "$PORT" --verify acks.jsonl; then
  echo "ok   - every acknowledged write survived SIGKILL"
else
  echo "FAIL - acknowledged writes lost"; exit 1
fi
kill "$PID"; wait "$PID" 2>/dev/null; PID=
# The game feeds the benchmark: the export is evaluated by `winokit winogavil`.
said=$("$WINOKIT" game export --db game.db --min-solvable 0 --out export.csv 2>&1)
complete=$(($(wc -l < export.csv) - 1))
# A plain CSV (Python's csv, strict) with fool-the-AI as the official backend stores it: an
# integer, 100 - int(100 J).
if python3 - export.csv <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline=""), strict=True))
head = rows[0]
assert not head[0].startswith("#") and all(len(r) == len(head) for r in rows), "ragged"
col = head.index("score_fool_the_ai")
assert all(r[col].isdigit() and 0 <= int(r[col]) <= 100 for r in rows[1:]), "fool not an integer"
PY
then
  echo "ok   - game export is a plain CSV with integer fool-the-AI scores"
else
  echo "FAIL - game export CSV"; head -3 export.csv; exit 1
fi
noun=associations; [ "$complete" -eq 1 ] && noun=association
if echo "$said" | grep -q "wrote $complete $noun to export.csv"; then
  echo "ok   - the export says how many it wrote, in the right number ($complete $noun)"
else
  echo "FAIL - export message: $said"; exit 1
fi
said=$("$WINOKIT" game export --db game.db --min-solvable 101 --out none.csv 2>&1)
verb=exist; [ "$complete" -eq 1 ] && verb=exists
if echo "$said" | grep -q "0 associations reach --min-solvable 101; $complete $verb"; then
  echo "ok   - an export with nothing above the bar says how many exist"
else
  echo "FAIL - empty export message: $said"; exit 1
fi
if [ "$complete" -gt 0 ] && "$WINOKIT" winogavil --data export.csv --images syn/images "${MODEL[@]}" \
     --bootstrap 10 --cache-dir cache > eval.md 2>&1 && grep -q "| All | $complete |" eval.md &&
   awk -F'|' '$2 ~ /^ All $/ { s = $(NF-1) + 0; ok = (s >= 0 && s <= 100) } END { exit !ok }' eval.md; then
  echo "ok   - $complete exported associations evaluate with winokit winogavil (solvers' score in 0-100%)"
else
  echo "FAIL - export evaluation"; cat eval.md; exit 1
fi
echo "durability: passed"
