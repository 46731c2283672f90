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
