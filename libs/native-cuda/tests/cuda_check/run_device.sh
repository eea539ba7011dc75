#!/usr/bin/env bash
# The device checks of the CUDA backend, in one script for a lent GPU machine (no Node.js there):
#   bash libs/native-cuda/tests/cuda_check/run_device.sh probe   # nvidia-smi, nvcc, torch, cuBLAS path
#   bash libs/native-cuda/tests/cuda_check/run_device.sh full    # kernel check, timings, PyTorch peer
# Run from the repository root. Results go to $OUT (default /tmp/mnemo-cuda-check): check.jsonl
# (every op, CUDA against the CPU kernels), perf.jsonl (timings), torch.jsonl (the PyTorch peer),
# gpu.csv and run.log (every step's stderr and the build log: five files in all, since the
# device tool brings back only a few). Fold them into bench/results/engine-cuda.json on a machine with Node:
#   node libs/native-cuda/tests/cuda_check/summarize.mjs $OUT > bench/results/engine-cuda.json
# A prebuilt binary (libs/native-cuda/build-check/mnemo_cuda_check, carried with the tree) is used
# when it runs here; otherwise the script builds one with this machine's nvcc.
set -u
OUT=${OUT:-/tmp/mnemo-cuda-check}
mkdir -p "$OUT"
HERE=libs/native-cuda/tests/cuda_check
MODE=${1:-full}
log() { echo "[run_device $(date +%T)] $*" | tee -a "$OUT/run.log" >&2; }

cublas_lib() {
  # PyTorch's wheels carry cuBLAS (nvidia-cublas); prefer the one matching CUDA 13.
  python3 - <<'PY' 2>/dev/null
import glob, os, site, sys
roots = site.getsitepackages() + [site.getusersitepackages()]
hits = []
for r in roots:
    hits += glob.glob(os.path.join(r, 'nvidia', '**', 'libcublas.so.*'), recursive=True)
hits = sorted(h for h in hits if 'Lt' not in os.path.basename(h))
best = [h for h in hits if h.endswith('.so.13')] or hits
print(best[0] if best else '')
PY
}

probe() {
  log "probe"
  nvidia-smi 2>&1
  nvcc --version 2>&1 | tail -2
  cmake --version | head -1
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0))' 2>&1
  echo "cublas: $(cublas_lib)"
  ldd --version | head -1
}

gpu_csv() {
  nvidia-smi --query-gpu=name,pcie.link.gen.max,pcie.link.width.max,pcie.link.gen.current,pcie.link.width.current,memory.total,driver_version,clocks.max.sm \
    --format=csv,noheader > "$OUT/gpu.csv" 2>&1
}

binary() {
  local pre=libs/native-cuda/build-check/mnemo_cuda_check
  if [ -x "$pre" ]; then
    local err
    err=$("$pre" --shapes /dev/null 2>&1)
    if echo "$err" | grep -q "lists no model"; then
      log "using the prebuilt binary"
      echo "$pre"
      return
    fi
    log "prebuilt binary does not run here: ${err:0:300}"
  fi
  log "building mnemo_cuda_check (sm_90a)"
  local gen=()
  command -v ninja >/dev/null && gen=(-G Ninja)
  cmake "${gen[@]}" -S libs/native-cuda -B /tmp/mnemo-cc -DCMAKE_BUILD_TYPE=Release -DMNEMO_BUILD_ADDON=OFF \
    -DMNEMO_BUILD_CUDA_CHECK=ON -DMNEMO_ENABLE_URING=OFF -DCMAKE_CUDA_ARCHITECTURES=90a >/tmp/mnemo-cc.log 2>&1 &&
    cmake --build /tmp/mnemo-cc --target mnemo_cuda_check --parallel "$(nproc)" >>/tmp/mnemo-cc.log 2>&1 ||
    { log "build failed: $(tail -c 3000 /tmp/mnemo-cc.log)"; exit 1; }
  log "built"
  echo /tmp/mnemo-cc/mnemo_cuda_check
}

full() {
  gpu_csv
  local lib
  lib=$(cublas_lib)
  if [ -n "$lib" ]; then
    export MNEMO_CUBLAS_LIB="$lib"
    export LD_LIBRARY_PATH="$(dirname "$lib"):${LD_LIBRARY_PATH:-}"
  fi
  log "cuBLAS: ${lib:-none found}"
  local bin
  bin=$(binary) || exit 1
  log "kernel check (bf16, f16)"
  timeout 240 "$bin" --device --require-device --shapes "$HERE/shapes.txt" >"$OUT/check.jsonl" 2>>"$OUT/run.log"
  log "kernel check exit $?"
  log "device timings"
  timeout 240 "$bin" --perf ${QUICK:+--quick} --shapes "$HERE/shapes.txt" >"$OUT/perf.jsonl" 2>>"$OUT/run.log"
  log "timings exit $?"
  log "PyTorch peer"
  timeout 180 python3 "$HERE/torch_peer.py" ${QUICK:+--quick} >"$OUT/torch.jsonl" 2>>"$OUT/run.log"
  log "torch exit $?"
  grep -h '"pass":false' "$OUT/check.jsonl" | head -20 >&2
}

case "$MODE" in
  probe) probe ;;
  full) full ;;
  *) echo "usage: $0 probe|full" >&2; exit 2 ;;
esac
