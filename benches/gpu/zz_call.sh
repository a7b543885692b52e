set -u
export BIN=.bin12
bash benches/gpu/run.sh --no-tests --no-race 2>&1 | tail -1
source benches/gpu/common.sh
"$sad" --device cuda fit "$WORK/chelsea.png" --iters 10 --out-dir /tmp/o0 >/dev/null 2>&1
RUNS=2 bash benches/gpu/env_ab.sh BURN_SAD_SORTED_SLOTS=0 chelsea:1 chelsea:16 astronaut:1 coffee:16 motorcycle:16 coffee-1080p:16 2>&1 | tail -12
bash benches/gpu/ncu_sass.sh render_backward chelsea 1 200 2>&1 | sed -n 2,22p
bash benches/gpu/ncu_sass.sh render_backward chelsea 16 200 2>&1 | sed -n 2,22p
