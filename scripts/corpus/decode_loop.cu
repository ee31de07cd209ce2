// A decoder-shaped CUDA C++ program with no NVTX range and no framework,
// for deepprof's phases inferred from the kernel stream (issue 39): an
// embedding, LAYERS blocks (norm, up projection, activation, down
// projection, residual add), a final norm, the output head on the last
// token and an argmax, whose token is copied to the host after every
// pass. Each generate is one prefill over PROMPT tokens, then STEPS
// decode steps of one token; GENERATES generates. It prints the count of
// each so that a test can check the phases found, and its own clock: a
// deepprof-clock line a generate (scripts/corpus/README.md), host timers
// read once each token is on the host.
//
//   nvcc -O2 -arch=sm_90 -o decode_loop decode_loop.cu && ./decode_loop
#include <chrono>
#include <cstdio>
#include <cuda_runtime.h>

constexpr int H = 1024, F = 4 * H, V = 8192, LAYERS = 6, PROMPT = 128, STEPS = 16, GENERATES = 3;

#define CHECK(x)                                                                         \
	do {                                                                                 \
		cudaError_t e = (x);                                                             \
		if (e != cudaSuccess) {                                                          \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); \
			return 1;                                                                    \
		}                                                                                \
	} while (0)

__global__ void init(float *w, size_t n, unsigned seed) {
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
		unsigned h = (unsigned)i * 2654435761u ^ seed;
		w[i] = ((h >> 8) & 0xffff) / 65536.0f * 0.02f - 0.01f;
	}
}

__global__ void embed(const float *table, const int *ids, float *x) {
	int t = blockIdx.x;
	for (int j = threadIdx.x; j < H; j += blockDim.x) x[t * H + j] = table[(size_t)ids[t] * H + j];
}

__global__ void rmsnorm(float *x) {
	__shared__ float sum[256];
	float *row = x + blockIdx.x * H;
	float s = 0;
	for (int j = threadIdx.x; j < H; j += blockDim.x) s += row[j] * row[j];
	sum[threadIdx.x] = s;
	__syncthreads();
	for (int k = blockDim.x / 2; k > 0; k /= 2) {
		if (threadIdx.x < k) sum[threadIdx.x] += sum[threadIdx.x + k];
		__syncthreads();
	}
	float r = rsqrtf(sum[0] / H + 1e-6f);
	for (int j = threadIdx.x; j < H; j += blockDim.x) row[j] *= r;
}

// y[t][n] = sum_k x[t][k] w[k][n]: one thread a column, one grid row a token.
__global__ void matmul(const float *x, const float *w, float *y, int N, int K) {
	int t = blockIdx.y, n = blockIdx.x * blockDim.x + threadIdx.x;
	if (n >= N) return;
	float acc = 0;
	for (int k = 0; k < K; k++) acc += x[t * K + k] * w[(size_t)k * N + n];
	y[t * N + n] = acc;
}

__global__ void gelu(float *y, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) y[i] = 0.5f * y[i] * (1.0f + tanhf(0.79788456f * (y[i] + 0.044715f * y[i] * y[i] * y[i])));
}

__global__ void add(float *x, const float *y, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) x[i] += y[i];
}

__global__ void argmax(const float *logits, int *out) {
	__shared__ float best[256];
	__shared__ int at[256];
	float b = -1e30f;
	int a = 0;
	for (int j = threadIdx.x; j < V; j += blockDim.x)
		if (logits[j] > b) b = logits[j], a = j;
	best[threadIdx.x] = b, at[threadIdx.x] = a;
	__syncthreads();
	for (int k = blockDim.x / 2; k > 0; k /= 2) {
		if (threadIdx.x < k && best[threadIdx.x + k] > best[threadIdx.x]) best[threadIdx.x] = best[threadIdx.x + k], at[threadIdx.x] = at[threadIdx.x + k];
		__syncthreads();
	}
	if (threadIdx.x == 0) *out = at[0];
}

struct Model {
	float *table, *up[LAYERS], *down[LAYERS], *head;
	float *x, *u, *d, *logits;
	int *ids, *token;
};

// forward runs one pass over T tokens (ids already on the GPU) and leaves
// the next token in m.token.
static void forward(Model &m, int T) {
	embed<<<T, 256>>>(m.table, m.ids, m.x);
	for (int l = 0; l < LAYERS; l++) {
		rmsnorm<<<T, 256>>>(m.x);
		matmul<<<dim3(F / 128, T), 128>>>(m.x, m.up[l], m.u, F, H);
		gelu<<<(T * F + 255) / 256, 256>>>(m.u, T * F);
		matmul<<<dim3(H / 128, T), 128>>>(m.u, m.down[l], m.d, H, F);
		add<<<(T * H + 255) / 256, 256>>>(m.x, m.d, T * H);
	}
	rmsnorm<<<T, 256>>>(m.x);
	matmul<<<dim3(V / 128, 1), 128>>>(m.x + (T - 1) * H, m.head, m.logits, V, H);
	argmax<<<1, 256>>>(m.logits, m.token);
}

int main() {
	Model m;
	auto alloc = [](float **p, size_t n, unsigned seed) {
		cudaMalloc(p, n * sizeof(float));
		init<<<1024, 256>>>(*p, n, seed);
	};
	alloc(&m.table, (size_t)V * H, 1);
	for (int l = 0; l < LAYERS; l++) alloc(&m.up[l], (size_t)H * F, 10 + l), alloc(&m.down[l], (size_t)F * H, 20 + l);
	alloc(&m.head, (size_t)H * V, 2);
	CHECK(cudaMalloc(&m.x, PROMPT * H * sizeof(float)));
	CHECK(cudaMalloc(&m.u, PROMPT * F * sizeof(float)));
	CHECK(cudaMalloc(&m.d, PROMPT * H * sizeof(float)));
	CHECK(cudaMalloc(&m.logits, V * sizeof(float)));
	CHECK(cudaMalloc(&m.ids, PROMPT * sizeof(int)));
	CHECK(cudaMalloc(&m.token, sizeof(int)));
	int prompt[PROMPT];
	for (int i = 0; i < PROMPT; i++) prompt[i] = (i * 7919) % V;
	long sum = 0;
	using clock = std::chrono::steady_clock;
	auto ms = [](clock::time_point a, clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
	for (int g = 0; g < GENERATES; g++) {
		CHECK(cudaDeviceSynchronize());
		auto call = clock::now();
		CHECK(cudaMemcpy(m.ids, prompt, sizeof prompt, cudaMemcpyHostToDevice));
		forward(m, PROMPT); // the prefill
		int tok;
		CHECK(cudaMemcpy(&tok, m.token, sizeof tok, cudaMemcpyDeviceToHost));
		auto first = clock::now(), last = first;
		for (int s = 0; s < STEPS; s++) { // the decode steps: one token each
			CHECK(cudaMemcpy(m.ids, m.token, sizeof(int), cudaMemcpyDeviceToDevice));
			forward(m, 1);
			CHECK(cudaMemcpy(&tok, m.token, sizeof tok, cudaMemcpyDeviceToHost));
			last = clock::now();
			sum += tok;
		}
		printf("deepprof-clock {\"batch\": 1, \"generate\": %d, \"program\": \"decode_loop\", \"steps\": %d, \"tokens\": %d, \"tpot_ms\": %.4f, \"ttft_ms\": %.4f}\n",
		       g, STEPS, STEPS + 1, ms(first, last) / STEPS, ms(call, first));
	}
	CHECK(cudaDeviceSynchronize());
	printf("generates=%d prefills=%d decode_steps=%d checksum=%ld\n", GENERATES, GENERATES, GENERATES * STEPS, sum);
	return 0;
}
