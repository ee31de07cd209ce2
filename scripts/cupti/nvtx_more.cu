// nvtx_more.cu: what scripts/fixtures/nvtx_ranges.cu does not exercise, for
// checking deepprof's CUPTI library (scripts/cupti/build-and-check.sh runs it
// under the library): NVTX before cuInit, registered strings, start/end ranges
// (one ended on another thread), marks, a wide-character name, a name with a
// TAB, a newline and a backslash, a second thread with its own stream, every
// kind of copy and a memset, a templated kernel, and a CUDA graph launch.
//
// Build: nvcc -O2 -arch=sm_90 -o nvtx_more nvtx_more.cu -ldl -lpthread
// Modes (argv[1]):
//   all    everything above, then exit normally
//   hang   the same, then print "ready" and sleep 60 s (to be killed: the
//          record file must keep what was flushed, and have no E line)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <pthread.h>
#include <unistd.h>

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#define CHECK(call)                                                        \
  do {                                                                     \
    cudaError_t err_ = (call);                                             \
    if (err_ != cudaSuccess) {                                             \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,        \
              cudaGetErrorString(err_));                                   \
      exit(2);                                                             \
    }                                                                      \
  } while (0)

static const int N = 1 << 16;
static const int BLOCK = 256;
static const int GRID = (N + BLOCK - 1) / BLOCK;

__global__ void scale_kernel(float *x, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= s;
}

namespace deepprof_check {
template <typename T, int K>
struct Op {
  __device__ static T apply(T v) { return v * T(K); }
};
template <typename T, int K>
__global__ void templated_kernel(T *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = Op<T, K>::apply(x[i]);
}
}  // namespace deepprof_check

static void domain_push(nvtxDomainHandle_t dom, nvtxStringHandle_t msg) {
  nvtxEventAttributes_t ev;
  memset(&ev, 0, sizeof(ev));
  ev.version = NVTX_VERSION;
  ev.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  ev.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  ev.message.registered = msg;
  nvtxDomainRangePushEx(dom, &ev);
}

static nvtxRangeId_t domain_start(nvtxDomainHandle_t dom, const char *msg) {
  nvtxEventAttributes_t ev;
  memset(&ev, 0, sizeof(ev));
  ev.version = NVTX_VERSION;
  ev.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  ev.messageType = NVTX_MESSAGE_TYPE_ASCII;
  ev.message.ascii = msg;
  return nvtxDomainRangeStartEx(dom, &ev);
}

struct Worker {
  float *buf;
  nvtxDomainHandle_t dom;
  nvtxRangeId_t to_end;  // a start/end range begun on the main thread
};

static void *worker(void *arg) {
  Worker *w = (Worker *)arg;
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  nvtxRangePushA("worker_thread");
  for (int k = 0; k < 3; k++) scale_kernel<<<GRID, BLOCK, 0, s>>>(w->buf, 1.0f, N);
  CHECK(cudaStreamSynchronize(s));
  nvtxRangePop();
  nvtxDomainRangeEnd(w->dom, w->to_end);  // ends on this thread
  CHECK(cudaStreamDestroy(s));
  return NULL;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "all";
  bool hang = strcmp(mode, "hang") == 0;
  if (!hang && strcmp(mode, "all") != 0) {
    fprintf(stderr, "usage: %s all|hang\n", argv[0]);
    return 1;
  }

  // NVTX before any CUDA call: a named domain and an open range.
  nvtxDomainHandle_t early = nvtxDomainCreateA("early");
  nvtxRangePushA("before_cuinit");
  float *a, *b, *host;
  CHECK(cudaMalloc(&a, N * sizeof(float)));  // cuInit happens here
  CHECK(cudaMalloc(&b, N * sizeof(float)));
  CHECK(cudaMallocHost(&host, N * sizeof(float)));
  for (int i = 0; i < N; i++) host[i] = 1.0f;
  scale_kernel<<<GRID, BLOCK>>>(a, 1.0f, N);
  nvtxRangePop();  // before_cuinit

  // Copies and a memset, in a range of the early domain (registered name).
  nvtxStringHandle_t copies = nvtxDomainRegisterStringA(early, "copies");
  domain_push(early, copies);
  CHECK(cudaMemcpy(a, host, N * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(b, a, N * sizeof(float), cudaMemcpyDeviceToDevice));
  CHECK(cudaMemcpyAsync(host, b, N * sizeof(float), cudaMemcpyDeviceToHost, 0));
  CHECK(cudaMemset(b, 0, N * sizeof(float)));
  CHECK(cudaDeviceSynchronize());
  nvtxDomainRangePop(early);

  // Registered strings in domain LLM, pushed twice.
  nvtxDomainHandle_t llm = nvtxDomainCreateA("LLM");
  nvtxStringHandle_t step = nvtxDomainRegisterStringA(llm, "registered_step");
  for (int r = 0; r < 2; r++) {
    domain_push(llm, step);
    deepprof_check::templated_kernel<float, 3><<<GRID, BLOCK>>>(a, N);
    nvtxDomainRangePop(llm);
  }

  // Start/end ranges: default domain, and one in LLM ended by the worker.
  nvtxRangeId_t phase = nvtxRangeStartA("async_phase");
  scale_kernel<<<GRID, BLOCK>>>(a, 1.0f, N);
  nvtxRangeEnd(phase);
  Worker w = {b, llm, domain_start(llm, "cross_thread")};
  nvtxMarkA("mark_here");

  // Awkward names: wide characters; TAB, newline and backslash.
  nvtxRangePushW(L"wide_\u00fc\u4e2d");
  scale_kernel<<<GRID, BLOCK>>>(a, 1.0f, N);
  nvtxRangePop();
  nvtxRangePushA("tab\there\nnewline\\back");
  scale_kernel<<<GRID, BLOCK>>>(a, 1.0f, N);
  nvtxRangePop();

  // A second thread with its own stream.
  pthread_t t;
  if (pthread_create(&t, NULL, worker, &w) != 0) {
    perror("pthread_create");
    return 3;
  }
  pthread_join(t, NULL);

  // A CUDA graph of two kernels, launched twice.
  nvtxRangePushA("graph");
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  cudaGraph_t g;
  cudaGraphExec_t ge;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  scale_kernel<<<GRID, BLOCK, 0, s>>>(a, 1.0f, N);
  deepprof_check::templated_kernel<float, 3><<<GRID, BLOCK, 0, s>>>(a, N);
  CHECK(cudaStreamEndCapture(s, &g));
  CHECK(cudaGraphInstantiate(&ge, g, 0));
  CHECK(cudaGraphLaunch(ge, s));
  CHECK(cudaGraphLaunch(ge, s));
  CHECK(cudaStreamSynchronize(s));
  nvtxRangePop();  // graph

  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  if (hang) {
    printf("ready\n");
    fflush(stdout);
    sleep(60);
  }
  CHECK(cudaGraphExecDestroy(ge));
  CHECK(cudaGraphDestroy(g));
  CHECK(cudaStreamDestroy(s));
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  CHECK(cudaFreeHost(host));
  printf("nvtx_more: done\n");
  return 0;
}
