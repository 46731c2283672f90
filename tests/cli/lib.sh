# Shared by the CLI test scripts (sourced): pass/fail counters, ok, not_ok and expect.
passed=0
failed=0

ok() { passed=$((passed + 1)); echo "ok   - $1"; }
not_ok() { failed=$((failed + 1)); echo "FAIL - $1"; [ -n "${2:-}" ] && echo "$2" | sed 's/^/       /'; }

# expect NAME RC PATTERN -- COMMAND...: exit code RC and PATTERN (grep -E) in stdout+stderr.
expect() {
  local name=$1 want_rc=$2 pattern=$3
  shift 4
  local out rc
  out=$("$@" 2>&1)
  rc=$?
  if [ "$rc" -ne "$want_rc" ]; then
    not_ok "$name (exit $rc, wanted $want_rc)" "$(echo "$out" | tail -5)"
  elif [ -n "$pattern" ] && ! echo "$out" | grep -qE -- "$pattern"; then
    not_ok "$name (output lacks /$pattern/)" "$(echo "$out" | tail -8)"
  else
    ok "$name"
  fi
}

# strict_csv FILE [COLUMNS]: FILE is a plain CSV as Python's csv module reads it with
# strict=True: no '#' comment line, a header first, every record as wide as the header (and
# COLUMNS wide when given), at least one record.
strict_csv() {
  python3 - "$1" "${2:-0}" <<'PY'
import csv, sys
path, want = sys.argv[1], int(sys.argv[2])
with open(path, newline="", encoding="utf-8") as f:
    rows = list(csv.reader(f, strict=True))
if not rows:
    sys.exit(f"{path}: empty")
header = rows[0]
if want and len(header) != want:
    sys.exit(f"{path}: header has {len(header)} columns, wanted {want}: {header}")
for n, row in enumerate(rows, 1):
    if row and row[0].lstrip().startswith("#"):
        sys.exit(f"{path}:{n}: a comment line")
    if len(row) != len(header):
        sys.exit(f"{path}:{n}: {len(row)} fields under a {len(header)}-column header")
if len(rows) < 2:
    sys.exit(f"{path}: no record under the header")
PY
}
