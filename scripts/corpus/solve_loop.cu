// A C++ solver loop with NVTX ranges of its own and a one-time set-up in
// its first step (issue 54: the steady state over the steps of a
// one-instance phase): a `setup` range that allocates and fills (no
// cuBLAS yet), then one `solve` range holding ITERS `iteration` ranges,
// each SGEMMS cuBLAS SGEMMs of N x N and a small update kernel, then a
// synchronize. The cuBLAS handle is made lazily, in the first iteration,
// as a solver that creates it on first use does: that iteration pays
// cuBLAS's set-up. It prints its own clock, host timers after each
// iteration's synchronize:
//
//   solve-clock {"program": "solve_loop", "iterations": n, "first_ms": x, "steady_ms": y}
//
// first_ms the first iteration, steady_ms the mean of the others.
//
//   nvcc -O2 -arch=sm_90 -o solve_loop solve_loop.cu -lcublas && ./solve_loop
#include <chrono>
#include <cstdio>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

constexpr int N = 2048, ITERS = 20, SGEMMS = 4;

#define CHECK(x)                                                                         \
	do {                                                                                 \
		cudaError_t e = (x);                                                             \
		if (e != cudaSuccess) {                                                          \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); \
			return 1;                                                                    \
		}                                                                                \
	} while (0)

__global__ void fill(float *w, size_t n, unsigned seed) {
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
		unsigned h = (unsigned)i * 2654435761u ^ seed;
		w[i] = ((h >> 8) & 0xffff) / 65536.0f * 0.02f - 0.01f;
	}
}

// x = x * 0.5 + c: keeps the values bounded from one iteration to the next.
__global__ void update(float *x, const float *c, size_t n) {
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		x[i] = x[i] * 0.5f + c[i];
}

int main() {
	const size_t n = (size_t)N * N;
	float *a, *b, *c;
	nvtxRangePushA("setup");
	CHECK(cudaMalloc(&a, n * sizeof(float)));
	CHECK(cudaMalloc(&b, n * sizeof(float)));
	CHECK(cudaMalloc(&c, n * sizeof(float)));
	fill<<<1024, 256>>>(a, n, 1);
	fill<<<1024, 256>>>(b, n, 2);
	CHECK(cudaDeviceSynchronize());
	nvtxRangePop();

	cublasHandle_t h = nullptr;
	double ms[ITERS];
	const float one = 1.0f, zero = 0.0f;
	nvtxRangePushA("solve");
	for (int it = 0; it < ITERS; it++) {
		auto t0 = std::chrono::steady_clock::now();
		nvtxRangePushA("iteration");
		if (!h && cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
			fprintf(stderr, "cublasCreate failed\n");
			return 1;
		}
		for (int s = 0; s < SGEMMS; s++)
			cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, a, N, b, N, &zero, c, N);
		update<<<1024, 256>>>(a, c, n);
		CHECK(cudaDeviceSynchronize());
		nvtxRangePop();
		ms[it] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
	}
	nvtxRangePop();
	double steady = 0;
	for (int it = 1; it < ITERS; it++) steady += ms[it];
	printf("solve-clock {\"program\": \"solve_loop\", \"iterations\": %d, \"first_ms\": %.4f, \"steady_ms\": %.4f}\n", ITERS, ms[0],
	       steady / (ITERS - 1));
	cublasDestroy(h);
	return 0;
}
