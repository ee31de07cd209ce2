#!/usr/bin/env bash
# build-and-check.sh: build deepprof's CUPTI library (internal/session/src)
# with the flags internal/session uses, run CUDA programs and a PyTorch script
# under it, check their record files, and measure the library's overhead.
# Run on a machine with a GPU, the CUDA toolkit (CUPTI, nvcc), gcc and
# PyTorch; no Go needed. Results go to $OUT:
#   $OUT/check.log     everything this script printed (set -x: every command)
#   $OUT/records.tgz   rec/<run>/cupti-<pid>.tsv for every run, and the
#                      overhead runs' JSON lines
# Usage: OUT=/some/dir bash scripts/cupti/build-and-check.sh [quick]
#   quick: skip the overhead measurement
#        bash scripts/cupti/build-and-check.sh --build-only SRC.c LIB.so
set -u
set -o pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export PATH=$CUDA_HOME/bin:$PATH

# The toolkit's folders, looked for as session.FindToolkit does.
INC_CANDIDATES=("$CUDA_HOME/include" "$CUDA_HOME/extras/CUPTI/include" "$CUDA_HOME"/targets/*/include)
INCS=()
for h in cuda.h nvtx3/nvToolsExt.h cupti.h generated_nvtx_meta.h; do
  for d in "${INC_CANDIDATES[@]}"; do
    if [ -f "$d/$h" ]; then
      case " ${INCS[*]-} " in *" -I$d "*) ;; *) INCS+=("-I$d") ;; esac
      break
    fi
  done
done
LIBDIR=
for d in "$CUDA_HOME/lib64" "$CUDA_HOME/extras/CUPTI/lib64" "$CUDA_HOME/lib" "$CUDA_HOME"/targets/*/lib; do
  if [ -f "$d/libcupti.so" ]; then LIBDIR=$d; break; fi
done

# The same argv as session.Argv (cuptilib's tests check these two lines).
CFLAGS=(-shared -fPIC -O2 -std=gnu11 -Wall -Icxx-shim)
LDLIBS=(-lcupti -ldl -lpthread)
# build_lib SRC.c LIB.so: the library built from SRC.c.
build_lib() {
  mkdir -p cxx-shim && : >cxx-shim/string # session.ShimDir: cupti_profiler_host.h includes <string>
  gcc "${CFLAGS[@]}" "${INCS[@]}" -o "$2" "$1" "-L$LIBDIR" "-Wl,-rpath,$LIBDIR" "${LDLIBS[@]}"
}
# --build-only SRC.c LIB.so: build one library with the argv above and stop
# (scripts/cupti/overhead.sh builds the libraries it compares this way).
if [ "${1-}" = --build-only ]; then
  set -x
  build_lib "$2" "$3"
  exit
fi

OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
exec > >(tee "$OUT/check.log") 2>&1
set -x

W=/tmp/deepprof-cupti-check
rm -rf "$W"
mkdir -p "$W/rec"

# Versions, as printed here.
nvidia-smi --query-gpu=name,driver_version --format=csv
nvidia-smi | head -5
nvcc --version | tail -2
gcc --version | head -1
head -c 400 "$CUDA_HOME/version.json"; echo
grep -rh "define CUPTI_API_VERSION" "$CUDA_HOME/include" "$CUDA_HOME/extras/CUPTI/include" 2>/dev/null
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
uname -a

LIB=$W/libdeepprof_cupti.so
build_lib "$REPO/internal/session/src/deepprof_cupti.c" "$LIB" || { echo LIBRARY BUILD FAILED; exit 1; }
nm -D --defined-only "$LIB" | grep -E 'InitializeInjection'
ldd "$LIB"

nvcc -O2 -arch=sm_90 -o "$W/nvtx_ranges" "$REPO/scripts/fixtures/nvtx_ranges.cu" -ldl || { echo BUILD FAILED; exit 1; }
nvcc -O2 -arch=sm_90 -o "$W/nvtx_more" "$REPO/scripts/cupti/nvtx_more.cu" -ldl -lpthread || { echo BUILD FAILED; exit 1; }

# rec NAME CMD...: run CMD under the library, records into rec/NAME, then check them.
rec() {
  local name=$1
  shift
  mkdir -p "$W/rec/$name"
  env CUDA_INJECTION64_PATH="$LIB" NVTX_INJECTION64_PATH="$LIB" DEEPPROF_CUPTI_DIR="$W/rec/$name" \
    timeout 300 "$@"
  echo "exit status: $?"
  python3 "$REPO/scripts/cupti/check.py" "$W/rec/$name"
  echo "check status: $?"
}

rec ranges "$W/nvtx_ranges" ranges
rec domains "$W/nvtx_ranges" domains
rec twoproc "$W/nvtx_ranges" twoproc
rec twoproc_exec "$W/nvtx_ranges" twoproc_exec
rec more "$W/nvtx_more" all

# Killed: the file keeps what was flushed, and has no E line.
mkdir -p "$W/rec/killed"
env CUDA_INJECTION64_PATH="$LIB" NVTX_INJECTION64_PATH="$LIB" DEEPPROF_CUPTI_DIR="$W/rec/killed" \
  "$W/nvtx_more" hang &
KPID=$!
sleep 6
kill -9 "$KPID"
wait "$KPID"
echo "exit status: $?"
python3 "$REPO/scripts/cupti/check.py" --cut "$W/rec/killed"
echo "check status: $?"

# PyTorch: a small recording (1 timed repeat, 4 decode steps) for the fixture.
rec torch python3 "$REPO/scripts/cupti/torch_nvtx.py" --repeats 1 --decode-steps 4

if [ "${1-}" != quick ]; then
  # Overhead: the timed part (median of 5 repeats after a warm-up), plain and
  # under the library, alternated twice; and each process's wall time.
  for i in 1 2; do
    for how in plain cupti; do
      mkdir -p "$W/rec/overhead-$how-$i"
      t0=$(date +%s%N)
      if [ $how = plain ]; then
        python3 "$REPO/scripts/cupti/torch_nvtx.py" --repeats 5 | tail -1 > "$W/rec/overhead-$how-$i.json"
      else
        env CUDA_INJECTION64_PATH="$LIB" NVTX_INJECTION64_PATH="$LIB" DEEPPROF_CUPTI_DIR="$W/rec/overhead-$how-$i" \
          python3 "$REPO/scripts/cupti/torch_nvtx.py" --repeats 5 | tail -1 > "$W/rec/overhead-$how-$i.json"
      fi
      t1=$(date +%s%N)
      echo "overhead $how $i: process wall $(( (t1 - t0) / 1000000 )) ms, timed part $(cat "$W/rec/overhead-$how-$i.json")"
    done
  done
  python3 "$REPO/scripts/cupti/check.py" "$W/rec/overhead-cupti-1" | grep -E 'CHECK|records:'
  wc -c "$W"/rec/overhead-cupti-*/*.tsv
fi

ls -la "$W/rec"/*
(cd "$W" && tar -czf "$OUT/records.tgz" rec)
ls -la "$OUT"
