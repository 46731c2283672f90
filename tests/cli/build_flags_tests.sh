#!/usr/bin/env bash
CLI_DIR=$(cd "$(dirname "$0")" && pwd)
# The build is for its baseline, not for the machine that built it (docs/design.md, "The
# baseline"):
# - every compile command of the build has -march=WINOKIT_MARCH and -ffp-contract=off, none has
#   -march=native unless WINOKIT_MARCH is native, and only the dispatched kernel files
#   (kernels_avx2.cpp, kernels_avx512.cpp) are compiled with -mavx2/-mfma/-mavx512*;
# - with the default baseline x86-64-v2, no object but those two contains an instruction above
#   x86-64-v2 (AVX, AVX2, FMA, AVX-512, BMI1/2, LZCNT, MOVBE, F16C), read from objdump; the two
#   kernel objects must show AVX2 and AVX-512 instructions, so the scan is seen to find them.
# Usage: build_flags_tests.sh BUILD_DIR WINOKIT_MARCH
set -u
BUILD=$(realpath "${1:?usage: build_flags_tests.sh BUILD_DIR WINOKIT_MARCH}")
MARCH=${2:?usage: build_flags_tests.sh BUILD_DIR WINOKIT_MARCH}
source "$CLI_DIR/lib.sh"

# The compile commands of the main build (CMAKE_EXPORT_COMPILE_COMMANDS), one line each:
# "<object>\t<source>\t<command>".
commands=$(python3 - "$BUILD/compile_commands.json" <<'PY'
import json, os, shlex, sys
for entry in json.load(open(sys.argv[1])):
    args = entry.get("arguments") or shlex.split(entry["command"])
    out = entry.get("output") or (args[args.index("-o") + 1] if "-o" in args else "")
    print(f"{os.path.join(entry['directory'], out)}\t{entry['file']}\t{' '.join(args)}")
PY
) || { not_ok "compile_commands.json readable"; echo "1..$((passed + failed))"; exit 1; }
total=$(echo "$commands" | wc -l)
if [ "$total" -ge 100 ]; then ok "compile_commands.json lists $total files"; else
  not_ok "compile_commands.json lists only $total files"; fi

is_kernel() { case "$1" in */src/model/kernels/kernels_avx2.cpp | */src/model/kernels/kernels_avx512.cpp) return 0 ;; esac; return 1; }

bad_march="" bad_native="" bad_contract="" bad_isa="" kernels=0
while IFS=$'\t' read -r object source cmd; do
  marches=$(echo "$cmd" | grep -oE -- '-march=[^ ]+' | sort -u | tr '\n' ' ')
  [ "$marches" = "-march=$MARCH " ] || bad_march+="$source: $marches"$'\n'
  if [ "$MARCH" != native ] && echo "$cmd" | grep -qE -- '-m(arch|tune)=native'; then
    bad_native+="$source"$'\n'
  fi
  echo "$cmd" | grep -q -- '-ffp-contract=off' || bad_contract+="$source"$'\n'
  if is_kernel "$source"; then
    kernels=$((kernels + 1))
  elif echo "$cmd" | grep -qE -- ' -m(avx|fma|bmi|f16c|lzcnt|movbe)'; then
    bad_isa+="$source"$'\n'
  fi
done <<<"$commands"
if [ -z "$bad_march" ]; then ok "every file is compiled with -march=$MARCH and no other"; else
  not_ok "files with another -march" "$bad_march"; fi
if [ -z "$bad_native" ]; then ok "no -march=native / -mtune=native"; else
  not_ok "files built for the building machine" "$bad_native"; fi
if [ -z "$bad_contract" ]; then ok "every file has -ffp-contract=off"; else
  not_ok "files without -ffp-contract=off" "$bad_contract"; fi
if [ -z "$bad_isa" ] && [ "$kernels" -ge 2 ]; then
  ok "only the $kernels dispatched kernel files have ISA flags"
else
  not_ok "ISA flags outside the kernels (or kernels missing: $kernels)" "$bad_isa"
fi

# Instructions above x86-64-v2 in an objdump listing: any VEX/EVEX instruction (mnemonics
# starting with v: AVX, AVX2, FMA, F16C, AVX-512), the ymm/zmm/mask registers, and the scalar
# instructions of BMI1, BMI2, LZCNT and MOVBE. (tzcnt is left out: GCC's generic tuning writes
# "rep bsf", which objdump shows as tzcnt and which runs as bsf on older CPUs.)
above_v2() {
  objdump -d --no-show-raw-insn "$1" |
    awk -F'\t' 'NF >= 2 { print $2 }' |
    grep -E '^(v[a-z0-9]+|andn|bextr|blsi|blsmsk|blsr|bzhi|mulx|pdep|pext|rorx|sarx|shlx|shrx|lzcnt|movbe)( |$)|%[yz]mm[0-9]|%k[0-7]' |
    awk '{ print $1 }' | sort | uniq -c | sort -rn | head -5
}

if [ "$MARCH" = x86-64-v2 ]; then
  if ! command -v objdump >/dev/null; then
    not_ok "objdump (binutils) is installed"
  else
    offenders="" scanned=0 avx2_seen="" avx512_seen=""
    while IFS=$'\t' read -r object source cmd; do
      [ -f "$object" ] || continue
      if is_kernel "$source"; then
        case "$source" in
          *kernels_avx2.cpp)
            objdump -d --no-show-raw-insn "$object" | grep -q 'vfmadd.*%ymm' && avx2_seen=yes ;;
          *kernels_avx512.cpp)
            objdump -d --no-show-raw-insn "$object" | grep -q '%zmm' && avx512_seen=yes ;;
        esac
        continue
      fi
      scanned=$((scanned + 1))
      found=$(above_v2 "$object")
      [ -z "$found" ] || offenders+="$source: $(echo "$found" | tr -s ' \n' ' ')"$'\n'
    done <<<"$commands"
    if [ -z "$offenders" ] && [ "$scanned" -ge 100 ]; then
      ok "no instruction above x86-64-v2 in $scanned objects outside the kernels"
    else
      not_ok "instructions above x86-64-v2 outside the kernels ($scanned scanned)" "$offenders"
    fi
    if [ "$avx2_seen" = yes ] && [ "$avx512_seen" = yes ]; then
      ok "the scan finds the kernels' AVX2 (vfmadd) and AVX-512 (zmm) instructions"
    else
      not_ok "the scan does not see the kernels' instructions (avx2: ${avx2_seen:-no}, avx512: ${avx512_seen:-no})"
    fi
  fi
else
  echo "# WINOKIT_MARCH=$MARCH: the x86-64-v2 instruction scan applies to the default build only"
fi

echo "1..$((passed + failed))"
[ "$failed" -eq 0 ]
