/* The library's choice of targets and its cap (issue 52), host-only: this
 * file includes the library itself, whose CUPTI and CUDA functions
 * stubs.c answers (SYNTHETIC: nothing runs on a GPU); its static state is
 * set and read directly. TestMetricsChoiceInC compiles and runs it. */
#include "deepprof_cupti.c"

static int fails;
#define CHECK(c, ...) do { if (!(c)) { fails++; fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); } } while (0)

static int slot_of(int k) {
  char name[32];
  snprintf(name, sizeof name, "kernel%d", k);
  uint32_t dims[6] = {1, 1, 1, 128, 1, 1};
  return symbol_slot(config_hash(name, dims));
}
static void add_time(int k, uint64_t ns) {
  char name[32];
  snprintf(name, sizeof name, "kernel%d", k);
  uint32_t dims[6] = {1, 1, 1, 128, 1, 1};
  metrics_time(name, dims, 1000, 1000 + ns);
}
static int wanted(void) {
  int n = 0;
  for (int k = 0; k < 10; k++) n += atomic_load(&mx.state[slot_of(k)]) == TARGET_WANTED;
  return n;
}
static void count(int k) {
  char name[32];
  snprintf(name, sizeof name, "kernel%d", k);
  metrics_count(slot_of(k), name);
}
static int is(int k, int st) { return atomic_load(&mx.state[slot_of(k)]) == st; }

int main(void) {
  mx.at = 2; mx.budget = 24; mx.coverage = 85; mx.share = 30; mx.floor_ns = 1500000000ull;
  atomic_store(&mx.on, 1);
  /* 10 configurations, time 10..1 units, each launched 3 times */
  for (int k = 0; k < 10; k++) {
    add_time(k, (uint64_t)(10 - k) * 1000000);
    atomic_store(&mx.launches[slot_of(k)], 3);
  }
  metrics_choose();
  CHECK(wanted() == 4, "4 wanted, got %d", wanted());
  for (int k = 0; k < 4; k++) CHECK(is(k, TARGET_WANTED), "kernel%d wanted", k);
  /* cover 85% of 55 units: 10+9+8+7+6+5 = 45 < 46.75, +4 = 49 >= : 7 configs */
  CHECK(mx.cover == 7, "cover 7, got %u", mx.cover);
  CHECK(mx.left == 7, "left 7, got %u", mx.left);
  uint64_t g0 = mx.gpu_ns[slot_of(0)];
  CHECK(g0 == 5000000, "halved once: %llu", (unsigned long long)g0);
  /* no fresh time: nothing halved, the same wanted */
  metrics_choose();
  CHECK(mx.gpu_ns[slot_of(0)] == g0, "not halved without records: %llu", (unsigned long long)mx.gpu_ns[slot_of(0)]);
  CHECK(wanted() == 4 && is(0, TARGET_WANTED), "the same 4 wanted");
  /* kernel0 measured: kernel4 comes in */
  atomic_store(&mx.state[slot_of(0)], TARGET_DONE);
  metrics_choose();
  CHECK(wanted() == 4 && is(4, TARGET_WANTED) && is(0, TARGET_DONE), "kernel4 replaces the measured kernel0");
  CHECK(mx.left == 6, "left 6, got %u", mx.left);
  /* kernels 1..4 never launched again: released after METRICS_STALE choices */
  for (int i = 0; i < METRICS_STALE + 1; i++) metrics_choose();
  CHECK(is(1, TARGET_NONE) && is(2, TARGET_NONE) && is(3, TARGET_NONE) && is(4, TARGET_NONE), "1..4 released");
  CHECK(is(5, TARGET_WANTED) && is(6, TARGET_WANTED), "5 and 6 wanted next");
  CHECK(mx.left == 6, "left still 6, got %u", mx.left);
  /* kernel2 launched again: wanted again (5, 6, 2: the released 1, 3, 4 wait) */
  atomic_fetch_add(&mx.launches[slot_of(2)], 1);
  metrics_choose();
  CHECK(is(2, TARGET_WANTED), "kernel2 wanted again once launched");
  CHECK(is(1, TARGET_NONE), "kernel1 still released");
  /* a configuration launched once is not a target */
  add_time(9, 100000000); /* now the largest */
  atomic_store(&mx.launches[slot_of(9)], 1);
  metrics_choose();
  CHECK(!is(9, TARGET_WANTED), "kernel9 launched once is not wanted");
  /* the flusher hurried: by a configuration at its 2nd launch inside a
   * range pushed twice, before any record of it; not outside such a range,
   * not once timed, never by a collective; nothing wanted before the
   * records rank it */
  uint64_t step = text_hash("step"), setup = text_hash("setup");
  range_pushed(NULL, setup);
  count(20);
  count(20);
  CHECK(!atomic_load(&hurry), "kernel20 launched twice in a range pushed once hurries nothing");
  range_popped(NULL);
  range_pushed(NULL, step);
  count(21);
  range_popped(NULL);
  CHECK(!atomic_load(&hurry), "kernel21 at its first launch hurries nothing");
  range_pushed(NULL, step);
  range_pushed(NULL, setup); /* nested: the innermost range counts */
  count(23);
  range_popped(NULL);
  CHECK(!atomic_load(&hurry), "kernel23 at its first launch hurries nothing");
  count(21);
  CHECK(atomic_load(&hurry), "kernel21 at its 2nd launch in the 2nd step hurries the flusher");
  CHECK(is(21, TARGET_NONE), "kernel21 is not wanted before the records rank it");
  atomic_store(&hurry, 0);
  range_popped(NULL);
  CHECK(range_repeats() == 0, "outside any range: %u", range_repeats());
  range_pushed(NULL, step);
  add_time(24, 1000);
  count(24);
  count(24);
  CHECK(!atomic_load(&hurry), "kernel24, timed, waits for the flusher's period");
  uint32_t dims[6] = {1, 1, 1, 128, 1, 1};
  int nccl = symbol_slot(config_hash("_Z40ncclDevKernel_AllReduce_Sum_bf16_RING_LL", dims));
  metrics_count(nccl, "_Z40ncclDevKernel_AllReduce_Sum_bf16_RING_LL");
  metrics_count(nccl, "_Z40ncclDevKernel_AllReduce_Sum_bf16_RING_LL");
  CHECK(!atomic_load(&hurry), "a collective hurries nothing");
  range_popped(NULL);
  /* a kernel launched twice in the first step hurries in the second, once */
  uint64_t layer = text_hash("layer-step");
  range_pushed(NULL, layer);
  count(27);
  count(27);
  CHECK(!atomic_load(&hurry), "kernel27, twice in a range pushed once, hurries nothing yet");
  range_popped(NULL);
  range_pushed(NULL, layer);
  count(27);
  CHECK(atomic_load(&hurry), "kernel27 hurries in the range's second push");
  atomic_store(&hurry, 0);
  count(27);
  CHECK(!atomic_load(&hurry), "kernel27 hurries once");
  range_popped(NULL);
  /* each domain's ranges nest on their own: a domain's pop closes its
   * innermost range, not another domain's */
  int llm = 1;
  range_pushed(NULL, text_hash("outer"));
  range_pushed(&llm, text_hash("step"));
  range_pushed(NULL, text_hash("inner"));
  range_popped(&llm); /* the LLM domain's step closes */
  CHECK(tls_range_depth == 2 && tls_range_domains[0] == NULL && tls_range_domains[1] == NULL, "the step closed, outer and inner open: depth %d", tls_range_depth);
  range_popped(&llm); /* no open range of that domain: nothing */
  CHECK(tls_range_depth == 2, "a pop of a domain with no open range closes nothing");
  range_popped(NULL);
  range_popped(NULL);
  CHECK(tls_range_depth == 0 && range_repeats() == 0, "all closed");
  /* communication by its words, case and underscores aside */
  CHECK(collective("_ZN4vllm25cross_device_reduce_1stageI13__nv_bfloat16Li2EEEvPNS_8RankDataE"), "vLLM's custom all-reduce");
  CHECK(collective("void tensorrt_llm::kernels::oneShotAllReduceKernel<__nv_bfloat16, 2>(AllReduceParams)"), "TensorRT-LLM's all-reduce");
  CHECK(collective("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"), "NCCL");
  CHECK(collective("void c10d::symmetric_memory::multimem_all_reduce_kernel<float, 16>()"), "torch's symmetric memory");
  CHECK(!collective("void at::native::vectorized_gather_kernel<16, long>(char*, char*, long*, int, long, long, long, long, bool)"), "a gather computes");
  CHECK(!collective("nvjet_sm90_tst_64x8_64x16_2x1_v_bz_splitK_TNT"), "a GEMM computes");
  /* the cap */
  atomic_store(&mx.cut_ns, 1000000000ull);
  CHECK(metrics_affordable(1), "under the floor");
  uint64_t now = now_ns();
  mx.start_ns = now - 12000000000ull; /* 12 s ago */
  atomic_store(&mx.cut_ns, 2000000000ull); /* own 10 s: 20 % */
  CHECK(metrics_affordable(1), "20 %% affordable");
  atomic_store(&mx.cut_ns, 4000000000ull); /* own 8 s: 50 % */
  CHECK(!metrics_affordable(1), "50 %% not affordable");
  CHECK(atomic_load(&mx.capped) == 1, "capped noted");
  uint64_t ps = process_start_ns();
  CHECK(ps <= now_ns() && now_ns() - ps < 60000000000ull, "process start within a minute: %llu", (unsigned long long)(now_ns() - ps));
  printf("%s (%d failures)\n", fails ? "FAIL" : "PASS", fails);
  return fails != 0;
}
