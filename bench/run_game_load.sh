#!/usr/bin/env bash
# The game's load benchmark on loopback: `winokit serve` with SQLite and the default
# ViT-B/32-shaped (random-weight) rival, then build/bench/bench_game:
#   1. 200 players, 6,200 associations created by one spymaster stream (rival latency), then all
#      200 players solving for 60 s paced at 300 solves/s while one spymaster stream keeps
#      creating (rival latency under that load); every acknowledged write is verified
#      against the players' dashboards afterwards (no lost rounds);
#   2. the same solving unpaced (as fast as 200 players can go) for the maximum throughput.
#   bench/run_game_load.sh [build dir] [postgresql://... URL]
# With a PostgreSQL URL only the paced run is made, on that database (its public schema is
# emptied first: use a scratch database).
set -euo pipefail
HERE=$(dirname "$(realpath "$0")")
BUILD=${1:-build}
PGURL=${2:-}
WINOKIT=$(realpath "$BUILD/winokit")
BENCH=$(realpath "$BUILD/bench/bench_game")
WORK=$(mktemp -d)
PID=
trap '[ -n "$PID" ] && kill "$PID" 2>/dev/null; rm -rf "$WORK"' EXIT
cd "$WORK"
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; $(uname -sr)"
"$WINOKIT" synth --out syn --count 40 --image-size 224 >/dev/null

# shellcheck source=../tests/cli/game_server.sh
source "$HERE/../tests/cli/game_server.sh"
serve() {
  start_game_server server.log --images syn/images --db "$1" --password-cost min \
    --solves-per-creation 0 --creator-qualification-rounds 0 --rate-address 100000 \
    --burst-address 100000 --rate-account 1000 --auth-per-minute 100000 --http-threads 32 \
    --max-connections-per-address 1000 \
    --cache-dir cache
}

DB=paced.db
if [ -n "$PGURL" ]; then
  PSQL=$(ls /usr/lib/postgresql/*/bin/psql | sort -V | tail -1)
  "$PSQL" "$PGURL" -qc "DROP SCHEMA public CASCADE; CREATE SCHEMA public;" >/dev/null 2>&1
  DB=$PGURL
fi
echo "== paced: 200 players, 300 solves/s for 60 s ($([ -n "$PGURL" ] && echo PostgreSQL || echo SQLite)) =="
serve "$DB"
"$BENCH" --port "$PORT" --players 200 --rounds 6200 --creators 1 --seconds 60 --solve-rate 300 \
  --mixed-creators 1 --ack acks.jsonl
"$BENCH" --port "$PORT" --verify acks.jsonl
echo "server peak memory: $(grep VmHWM "/proc/$PID/status" | tr -s ' ')"
kill "$PID"; wait "$PID" 2>/dev/null || true

[ -n "$PGURL" ] && exit 0
echo "== unpaced: 200 players solving as fast as they can =="
serve unpaced.db
"$BENCH" --port "$PORT" --players 200 --rounds 3000 --creators 2 --seconds 60 --prefix fast
kill "$PID"; wait "$PID" 2>/dev/null || true
