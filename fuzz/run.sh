#!/usr/bin/env bash
# Run every fuzz target (or those named as arguments) for FUZZ_SECONDS each and print a
# summary line per target: executions, coverage (libFuzzer cov/ft), crashes and the corpus
# size. Needs the nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`). See
# docs/fuzzing.md.
#
#   FUZZ_SECONDS  seconds per target (default 60)
#   FUZZ_JOBS     targets run at the same time (default 1)
#   FUZZ_CMIN     1: minimise each target's corpus after its run (`cargo fuzz cmin`) and
#                 report its size before and after (default 0)
#   FUZZ_TRACES   optional directory of real traces used as extra seeds (read in place,
#                 never copied into the repository; only files up to 1 MiB)
set -u
cd "$(dirname "$0")"
secs=${FUZZ_SECONDS:-60}
jobs=${FUZZ_JOBS:-1}
cmin=${FUZZ_CMIN:-0}
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(cargo +nightly fuzz list)
fi
cargo +nightly fuzz build -a || exit 1
mkdir -p corpus artifacts logs
extra=()
if [ -n "${FUZZ_TRACES:-}" ] && [ -d "$FUZZ_TRACES" ]; then
    rm -rf corpus/.traces && mkdir -p corpus/.traces
    find "$FUZZ_TRACES" -type f -size -1024k -print0 |
        while IFS= read -r -d '' f; do ln -sf "$(realpath "$f")" "corpus/.traces/$(echo "$f" | tr / _)"; done
    extra=(corpus/.traces)
fi
# The same limits for the run and the minimisation.
limits=(-timeout=10 -rss_limit_mb=2048 -max_len=8192)
# "files/bytes" of a corpus directory.
size() {
    echo "$(find "$1" -type f | wc -l)/$(find "$1" -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}')"
}
run_one() {
    local t=$1
    mkdir -p "corpus/$t" "artifacts/$t"
    cargo +nightly fuzz run -a "$t" "corpus/$t" "seeds/$t" "${extra[@]}" -- \
        -max_total_time="$secs" "${limits[@]}" \
        -artifact_prefix="artifacts/$t/" -print_final_stats=1 >"logs/$t.log" 2>&1
    local rc=$?
    local last runs cov ft crashes corpus
    last=$(grep -E '^#[0-9]+' "logs/$t.log" | tail -1)
    runs=$(grep -E '^stat::number_of_executed_units' "logs/$t.log" | awk '{print $2}')
    cov=$(echo "$last" | grep -oE 'cov: [0-9]+' | awk '{print $2}')
    ft=$(echo "$last" | grep -oE 'ft: [0-9]+' | awk '{print $2}')
    crashes=$(find "artifacts/$t" -type f | wc -l)
    corpus=$(size "corpus/$t")
    if [ "$cmin" = 1 ]; then
        cargo +nightly fuzz cmin -a "$t" "corpus/$t" -- "${limits[@]}" >"logs/$t.cmin.log" 2>&1 ||
            corpus="$corpus->cmin-failed"
        corpus="$corpus->$(size "corpus/$t")"
    fi
    printf '%-20s rc=%s execs=%s cov=%s ft=%s seconds=%s artifacts=%s corpus=%s\n' \
        "$t" "$rc" "${runs:-?}" "${cov:-?}" "${ft:-?}" "$secs" "$crashes" "$corpus"
}
# Up to FUZZ_JOBS targets at a time; the summary keeps the order of the targets.
for t in "${targets[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
    run_one "$t" >"logs/$t.summary" &
done
wait
for t in "${targets[@]}"; do cat "logs/$t.summary"; done | tee logs/summary.txt
! grep -qE 'rc=[1-9]|artifacts=[1-9]|cmin-failed' logs/summary.txt
