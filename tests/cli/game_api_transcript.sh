#!/usr/bin/env bash
# The game's HTTP API as a transcript: a scripted session against `winokit serve` (register,
# login, qualification, a round created, solved by three players and exported, a second round
# reported and reviewed, leaderboard, dashboard, and the error cases), every response's status,
# headers and body written out with the random parts masked (session token, CSRF token, Date,
# timestamps). Compared with tests/cli/game_api_transcript.expected, so a refactoring of the
# game cannot change a byte of what clients see.
#   game_api_transcript.sh <winokit> [expected file]   (no expected file: print the transcript)
set -uo pipefail
HERE=$(dirname "$(realpath "$0")")
WINOKIT=$(realpath "$1")
EXPECTED=${2:+$(realpath "$2")}
WORK=$(mktemp -d)
PID=
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
cd "$WORK" || exit 1
"$WINOKIT" synth --out syn --count 12 --image-size 512 >/dev/null 2>&1 || exit 1
# shellcheck source=game_server.sh
source "$HERE/game_server.sh"
start_game_server server.log --images syn/images --db game.db --password-cost min --seed 5 \
  --rival-seed 3 --cache-dir cache --http-threads 2 --threads 1
URL=http://127.0.0.1:$PORT
OUT=transcript.txt
: > "$OUT"

mask() {
  sed -E -e 's/^(Date:).*/\1 <date>/I' \
    -e 's/(wk_session=)[0-9a-f]+/\1<token>/' \
    -e 's/"csrf":"[0-9a-f]+"/"csrf":"<csrf>"/g' \
    -e 's/"created_at":[0-9]+/"created_at":<time>/g' | tr -d '\r'
}
# call NAME USER METHOD PATH BODY [extra curl args]: one request, recorded (CSRF and CTYPE
# override the token and the content type sent).
csrf_of() { [ -f "csrf-$1" ] && cat "csrf-$1"; }
call() {
  local name=$1 user=$2 method=$3 path=$4 body=${5:-}
  shift 5
  local args=(-s -i -m 20 -X "$method" -b "jar-$user" -c "jar-$user")
  if [ "$method" = POST ]; then
    args+=(-H "Content-Type: ${CTYPE:-application/json}" -H "X-CSRF-Token: ${CSRF:-$(csrf_of "$user")}"
           --data-binary "$body")
  fi
  local resp
  resp=$(curl "${args[@]}" "$@" "$URL$path")
  local csrf
  csrf=$(sed -n 's/.*"csrf":"\([0-9a-f]*\)".*/\1/p' <<<"$resp" | head -1)
  [ -n "$csrf" ] && echo "$csrf" > "csrf-$user"
  { echo "=== $name: $method $path"; mask <<<"$resp"; echo; } >> "$OUT"
  LAST=$(awk 'BEGIN{b=0} /^\r?$/{b=1; next} b' <<<"$resp")
}
# field KEY...: a value of the last response's JSON body (keys, or indexes into lists).
field() {
  python3 -c 'import json, sys
v = json.loads(sys.stdin.read())
for k in sys.argv[1:]:
    v = v[int(k)] if isinstance(v, list) else v[k]
print(v)' "$@" <<<"$LAST"
}

call "status" anon GET /api/status ''
call "register spy" spy POST /api/register '{"name":"spy","password":"password1"}'
for u in sol1 sol2 sol3 boss; do
  call "register $u" "$u" POST /api/register "{\"name\":\"$u\",\"password\":\"password1\"}"
done
call "register: name taken (case)" x1 POST /api/register '{"name":"SPY","password":"password1"}'
call "register: bad name" x2 POST /api/register '{"name":"--","password":"password1"}'
call "register: short password" x3 POST /api/register '{"name":"shorty","password":"pw"}'
call "register: missing field" x4 POST /api/register '{"name":"nobody"}'
call "login: wrong password" x5 POST /api/login '{"name":"spy","password":"wrong-one"}'
call "login: no such account" x5 POST /api/login '{"name":"newcomer","password":"password1"}'
call "login" spy POST /api/login '{"name":"spy","password":"password1"}'
call "me: no session" anon GET /api/me ''
call "me" spy GET /api/me ''
call "qualification test" spy GET /api/qualification ''
call "qualification: no test" spy POST /api/qualification '{"answers":{}}'
CSRF=nope call "new round: bad csrf" spy POST /api/rounds '{}'
CTYPE=text/plain call "new round: not json" spy POST /api/rounds '{}'
call "new round: cross-site" spy POST /api/rounds '{}' -H 'Origin: http://evil.example'
call "new round" spy POST /api/rounds '{}'
R1=$(field id)
c0=$(field candidates 0)
c1=$(field candidates 1)
call "submit: bad cue" spy POST "/api/rounds/$R1/submit" "{\"cue\":\"two words\",\"associations\":[\"$c0\",\"$c1\"]}"
call "submit: cue names a candidate" spy POST "/api/rounds/$R1/submit" "{\"cue\":\"$c0\",\"associations\":[\"$c0\",\"$c1\"]}"
call "submit: one association" spy POST "/api/rounds/$R1/submit" "{\"cue\":\"ocean\",\"associations\":[\"$c0\"]}"
call "submit: not a candidate" spy POST "/api/rounds/$R1/submit" '{"cue":"ocean","associations":["nope","nada"]}'
call "submit: bad json" spy POST "/api/rounds/$R1/submit" '{"cue":'
call "submit: not a list" spy POST "/api/rounds/$R1/submit" '{"cue":"ocean","associations":"x"}'
call "submit: someone else's round" sol1 POST "/api/rounds/$R1/submit" "{\"cue\":\"ocean\",\"associations\":[\"$c0\",\"$c1\"]}"
call "submit" spy POST "/api/rounds/$R1/submit" "{\"cue\":\"ocean\",\"associations\":[\"$c0\",\"$c1\"]}"
call "submit: twice" spy POST "/api/rounds/$R1/submit" "{\"cue\":\"ocean\",\"associations\":[\"$c0\",\"$c1\"]}"
call "new round: solve first" spy POST /api/rounds '{}'
call "solve: own round" spy POST "/api/solve/$R1" "{\"picks\":[\"$c0\",\"$c1\"]}"
call "solve: not assigned" sol1 POST "/api/solve/$R1" "{\"picks\":[\"$c0\",\"$c1\"]}"
call "next solve: nothing for the creator" spy POST /api/solve/next '{}'
for u in sol1 sol2 sol3; do
  call "next solve $u" "$u" POST /api/solve/next '{}'
  call "next solve again $u" "$u" POST /api/solve/next '{}'
  a0=$(field candidates 0)
  a1=$(field candidates 2)
  [ "$u" = sol2 ] && call "solve: wrong count" "$u" POST "/api/solve/$R1" "{\"picks\":[\"$a0\"]}"
  [ "$u" = sol2 ] && call "solve: twice the same" "$u" POST "/api/solve/$R1" "{\"picks\":[\"$a0\",\"$a0\"]}"
  [ "$u" = sol3 ] && a1=$c1
  call "solve $u" "$u" POST "/api/solve/$R1" "{\"picks\":[\"$a0\",\"$a1\"]}"
done
call "solve: already solved" sol1 POST "/api/solve/$R1" "{\"picks\":[\"$c0\",\"$c1\"]}"
call "new round by sol1" sol1 POST /api/rounds '{}'
R2=$(field id)
d0=$(field candidates 0)
d1=$(field candidates 1)
d2=$(field candidates 2)
call "submit by sol1" sol1 POST "/api/rounds/$R2/submit" "{\"cue\":\"winter\",\"associations\":[\"$d0\",\"$d1\",\"$d2\"]}"
call "report: not seen" sol2 POST "/api/rounds/$R2/report" '{"reason":"spam"}'
call "report: no such round" sol2 POST /api/rounds/999/report '{"reason":"spam"}'
call "next solve spy" spy POST /api/solve/next '{}'
call "report" spy POST "/api/rounds/$R2/report" '{"reason":"offensive cue"}'
call "solve: hidden" spy POST "/api/solve/$R2" "{\"picks\":[\"$d0\",\"$d1\",\"$d2\"]}"
call "admin reports: not admin" boss GET /api/admin/reports ''
"$WINOKIT" game admin --db game.db --grant boss 2>/dev/null || echo "FAIL - game admin --grant"
call "admin reports" boss GET /api/admin/reports ''
REP=$(field reports 0 id)
call "review: bad action" boss POST "/api/admin/reports/$REP" '{"action":"burn"}'
call "review: no such report" boss POST /api/admin/reports/999 '{"action":"restore"}'
call "review: not admin" spy POST "/api/admin/reports/$REP" '{"action":"restore"}'
call "review" boss POST "/api/admin/reports/$REP" '{"action":"restore"}'
call "review: twice" boss POST "/api/admin/reports/$REP" '{"action":"remove"}'
# A restored association is not given back to the player who reported it.
call "next solve spy after the restore" spy POST /api/solve/next '{}'
# Reports after solving, and of one's own association (two reporters hide it); the admin
# restores it.
call "report after solving" sol2 POST "/api/rounds/$R1/report" '{"reason":"too easy"}'
call "report own association" spy POST "/api/rounds/$R1/report" '{"reason":"mine, on second thought"}'
call "admin reports: after solving and own" boss GET /api/admin/reports ''
call "review: restore" boss POST "/api/admin/reports/$(field reports 0 id)" '{"action":"restore"}'
call "leaderboard" anon GET /api/leaderboard ''
call "me spy" spy GET /api/me ''
call "me sol1" sol1 GET /api/me ''
call "new round: spy's next attempt" spy POST /api/rounds '{}'
call "export: not admin" spy GET /api/admin/export ''
call "export: bad number" boss GET '/api/admin/export?min_solvable=lots' ''
call "export" boss GET '/api/admin/export?min_solvable=0' ''
call "export default" boss GET /api/admin/export ''
call "image" anon GET "/images/$c0" '' -o /dev/null -w 'HTTP %{http_code} %{content_type} %{size_download}\n'
# Thumbnails at the sizes the pages show: a JPEG whose shorter side is w, or the original file
# when the JPEG would not be smaller (these synthetic images are flat PNGs that compress well;
# the unit test HttpGame.ImagesAndTheFaviconAreServedFromFiles has a large photo-like one).
for w in 160 320 640; do
  curl -s -m 20 -o "thumb-$w" -w "=== thumbnail w=$w: HTTP %{http_code} %{content_type}\n" "$URL/images/$c0?w=$w" >> "$OUT"
  echo "$(file -b "thumb-$w" | grep -oE '[0-9]+ ?x ?[0-9]+' | tail -1 | tr -d ' '), $(wc -c < "thumb-$w") bytes (original $(curl -s "$URL/images/$c0" | wc -c))" >> "$OUT"
done
for w in 160 320; do  # again: from the cache
  curl -s -m 20 -o /dev/null -w "=== thumbnail w=$w again: HTTP %{http_code} %{content_type} %{size_download}\n" "$URL/images/$c0?w=$w" >> "$OUT"
done
call "image: bad size" anon GET "/images/$c0?w=4000" ''
call "image: unknown" anon GET /images/nope ''
NAME0=$(basename "$(ls syn/images | head -1)"); NAME0=${NAME0%.*}
call "image: by name" anon GET "/images/$NAME0" ''
call "unknown page" anon GET /api/nothing ''
call "wrong method" anon DELETE /api/status ''
call "bad id" spy POST /api/solve/1234567890123456789 '{"picks":[]}'
call "logout" spy POST /api/logout '{}'
call "me after logout" spy GET /api/me ''
# What clients received never names an image (the admins' CSV export aside).
awk '/^=== /{skip = ($0 ~ /^=== export/); next} !skip' "$OUT" > replies.txt
leaked=0
for f in syn/images/*; do
  n=$(basename "$f"); n=${n%.*}
  if grep -q -- "$n" replies.txt; then echo "LEAK: $n is named in a reply" >> "$OUT"; leaked=1; fi
done
[ $leaked = 0 ] && echo "=== no image name in any reply" >> "$OUT"
"$WINOKIT" game export --db game.db --min-solvable 0 >> "$OUT" 2>&1

if [ -z "$EXPECTED" ]; then
  cat "$OUT"
  exit 0
fi
if diff -u "$EXPECTED" "$OUT"; then
  echo "ok   - the game's HTTP transcript matches $(basename "$EXPECTED") ($(grep -c '^===' "$OUT") requests)"
  exit 0
fi
echo "FAIL - the game's HTTP transcript differs from $(basename "$EXPECTED")"
exit 1
