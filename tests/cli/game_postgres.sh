#!/usr/bin/env bash
# The game on PostgreSQL: a private cluster (initdb in a temporary folder, Unix socket only),
# the game's unit tests against it, and two `winokit serve` processes sharing the database
# (an account made on one signs in on the other; a round made on one is solved on the other).
#   game_postgres.sh <unit test binary> <winokit>
set -uo pipefail
HERE=$(dirname "$(realpath "$0")")
TESTS=$1
WINOKIT=$2
BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
if [ -z "$BIN" ] || [ ! -x "$BIN/initdb" ]; then
  echo "FAIL - PostgreSQL server binaries not found (scripts/setup installs postgresql)"; exit 1
fi
WORK=$(mktemp -d)
AS=()
if [ "$(id -u)" -eq 0 ]; then AS=(runuser -u postgres --); chown postgres "$WORK"; fi
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  "${AS[@]}" "$BIN/pg_ctl" -D "$WORK/data" -m immediate stop >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT
"${AS[@]}" "$BIN/initdb" -D "$WORK/data" -U postgres --auth=trust >/dev/null || exit 1
"${AS[@]}" "$BIN/pg_ctl" -D "$WORK/data" -l "$WORK/pg.log" -w \
  -o "-k $WORK -c listen_addresses='' -c fsync=off" start >/dev/null || { cat "$WORK/pg.log"; exit 1; }
URL="postgresql://postgres@/postgres?host=$WORK"

fail=0
if WINOKIT_TEST_POSTGRES="$URL" "$TESTS" --gtest_filter='Game.*:HttpGame.*:GameServerLimits.*:GameStore.*:GameErrors.*' --gtest_brief=1; then
  echo "ok   - game unit tests on PostgreSQL"
else
  echo "FAIL - game unit tests on PostgreSQL"; fail=1
fi

# Two servers, one database.
cd "$WORK" || exit 1
"$WINOKIT" synth --out syn --count 12 --image-size 64 >/dev/null
"$BIN/psql" "$URL" -qc "DROP SCHEMA public CASCADE; CREATE SCHEMA public;" >/dev/null 2>&1
# shellcheck source=game_server.sh
source "$HERE/game_server.sh"
start() {
  start_game_server "server$1.log" --images syn/images --db "$URL" --password-cost min \
    --cache-dir cache --creator-qualification-rounds 0
  PIDS+=("$PID")
  eval "PORT$1=$PORT"
}
start 1
start 2
api() {  # api PORT COOKIEJAR METHOD PATH [JSON]
  local csrf
  csrf=$(cat "$2.csrf" 2>/dev/null)
  if [ "$3" = GET ]; then curl -s -b "$2" -c "$2" "http://127.0.0.1:$1$4"
  else curl -s -b "$2" -c "$2" -H 'Content-Type: application/json' -H "X-CSRF-Token: $csrf" -d "$5" "http://127.0.0.1:$1$4"; fi
}
json_get() { node -e "let s='';process.stdin.on('data',c=>s+=c).on('end',()=>{const d=JSON.parse(s);console.log($1)})"; }
api "$PORT1" spy POST /api/register '{"name":"spy","password":"password1"}' | json_get 'd.csrf' > spy.csrf
api "$PORT2" spy POST /api/login '{"name":"spy","password":"password1"}' | json_get 'd.csrf' > spy.csrf
[ -s spy.csrf ] && echo "ok   - an account made on server 1 signs in on server 2" || { echo "FAIL - sign-in across servers"; fail=1; }
draft=$(api "$PORT2" spy POST /api/rounds '{}')
id=$(echo "$draft" | json_get 'd.id')
assoc=$(echo "$draft" | json_get 'JSON.stringify(d.candidates.slice(0, 2))')
api "$PORT2" spy POST "/api/rounds/$id/submit" "{\"cue\":\"ocean\",\"associations\":$assoc}" > /dev/null
for s in 1 2 3; do
  port=$([ $((s % 2)) -eq 1 ] && echo "$PORT1" || echo "$PORT2")
  api "$port" "s$s" POST /api/register "{\"name\":\"solver$s\",\"password\":\"password1\"}" | json_get 'd.csrf' > "s$s.csrf"
  got=$(api "$port" "s$s" POST /api/solve/next '{}' | json_get 'd.id')
  [ "$got" = "$id" ] || { echo "FAIL - solver $s got '$got', not $id"; fail=1; }
  api "$port" "s$s" POST "/api/solve/$id" "{\"picks\":$assoc}" > /dev/null
done
state=$(api "$PORT1" spy GET /api/me | json_get 'd.rounds[0].state + " " + d.rounds[0].solvable_by_humans.toFixed(1)')
[ "$state" = "complete 100.0" ] && echo "ok   - a round made on server 2 is solved through both and completes" || { echo "FAIL - round state '$state'"; fail=1; }
rows=$("$WINOKIT" game export --db "$URL" --min-solvable 80 | wc -l)
[ "$rows" -eq 2 ] && echo "ok   - export from PostgreSQL" || { echo "FAIL - export rows $rows"; fail=1; }
exit $fail
