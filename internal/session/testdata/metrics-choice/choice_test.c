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
  /* at once: a configuration at its 2nd launch inside a range pushed twice,
   * before any record of it; not outside such a range, not once timed */
  uint64_t step = text_hash("step"), setup = text_hash("setup");
  range_pushed(setup);
  metrics_count(slot_of(20));
  metrics_count(slot_of(20));
  CHECK(is(20, TARGET_NONE), "kernel20 launched twice in a range pushed once is not wanted at once");
  range_popped();
  for (int s = 0; s < 2; s++) {
    range_pushed(step);
    metrics_count(slot_of(21));
    metrics_count(slot_of(22));
    range_pushed(setup); /* nested: the innermost range counts */
    metrics_count(slot_of(23));
    range_popped();
    range_popped();
  }
  CHECK(range_repeats() == 0, "outside any range: %u", range_repeats());
  CHECK(is(21, TARGET_WANTED) && is(22, TARGET_WANTED), "kernels 21, 22 wanted at their 2nd launch in the 2nd step");
  CHECK(is(23, TARGET_WANTED), "kernel23: its range, setup, was pushed a 2nd time");
  add_time(24, 1000);
  range_pushed(step);
  metrics_count(slot_of(24));
  metrics_count(slot_of(24));
  metrics_count(slot_of(25));
  metrics_count(slot_of(25));
  CHECK(is(24, TARGET_NONE), "kernel24, timed, waits for the ranking");
  CHECK(is(25, TARGET_WANTED), "kernel25: the 4th at once");
  metrics_count(slot_of(26));
  metrics_count(slot_of(26));
  CHECK(is(26, TARGET_NONE), "kernel26: no more than METRICS_NEXT at once");
  range_popped();
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
