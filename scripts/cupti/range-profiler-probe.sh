#!/bin/bash
# range-profiler-probe.sh: whether CUPTI's range profiler measures, on this
# GPU and toolkit, the metrics the summary reads (issue 52's way 1: the deep
# metrics collected in the CUPTI run's own process), and how many passes they
# take. Builds the toolkit's own sample (extras/CUPTI/samples/range_profiling,
# NVIDIA's code, copied to a temporary folder, not to this repository) and
# runs it with auto ranges and kernel replay, then user ranges and replay.
set -uo pipefail
cuda=${CUDA_HOME:-/usr/local/cuda}
tmp=$(mktemp -d)
cp -r "$cuda/extras/CUPTI/samples" "$tmp/s"
cd "$tmp/s/range_profiling" || exit 1
"$cuda/bin/nvcc" -O2 -arch=sm_90 -I"$cuda/include" -I"$cuda/extras/CUPTI/include" -I../common -o rp range_profiling.cu \
	-L"$cuda/extras/CUPTI/lib64" -Xlinker -rpath -Xlinker "$cuda/extras/CUPTI/lib64" -lcupti -lnvperf_host -lnvperf_target -lcuda || exit 1
metrics=sm__throughput.avg.pct_of_peak_sustained_elapsed,gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes.sum,gpu__time_duration.sum
for mode in "-r auto -e kernel" "-r user -e user"; do
	t0=$(date +%s.%N)
	# shellcheck disable=SC2086
	./rp $mode -m "$metrics"
	echo "range-profiler-probe: $mode: wall $(python3 -c "print(round($(date +%s.%N)-$t0, 2))") s"
done
rm -rf "$tmp"
