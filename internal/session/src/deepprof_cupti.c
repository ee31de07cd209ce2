/*
 * deepprof_cupti.c: deepprof's CUPTI injection library.
 *
 * Loaded into every CUDA process of a workload by the CUDA driver
 * (CUDA_INJECTION64_PATH=<this library>, entry point InitializeInjection) and
 * by NVTX (NVTX_INJECTION64_PATH=<this library>, entry point
 * InitializeInjectionNvtx2, which starts recording, hands NVTX to CUPTI's
 * own NVTX support, then wraps the domain functions CUPTI installed so that
 * the left-out domains stop before CUPTI). It writes one file per process,
 * $DEEPPROF_CUPTI_DIR/cupti-<pid>.tsv, in the format deepprof-cupti/1
 * (one record a line, tab-separated; package session's documentation and
 * the Go reader, package cupti, describe it):
 *
 *   K  kernels (CUPTI Activity API, CONCURRENT_KERNEL), mangled and demangled
 *   C  memcpys (MEMCPY, MEMCPY2), S memsets (MEMSET)
 *   A  the runtime/driver API calls that launch kernels or start copies and
 *      sets (Callback API, ENTER/EXIT of only those calls)
 *   N  NVTX push/pop, start/end and marks (Callback API, NVTX domain), with
 *      domain names and registered strings resolved to their text; the
 *      domains named in DEEPPROF_CUPTI_SKIP_DOMAINS (comma-separated; XLA's
 *      "TSL" when it is unset, none when it is empty) are left out before
 *      they reach CUPTI (see "NVTX domains left out" below)
 *   M  metrics of a launch the library measured, W the host time that took
 *      (DEEPPROF_CUPTI_METRICS: "Deep metrics in this process" below)
 *   X  notes (dropped records, NVTX state, the domains left out), E the last
 *      line at a normal exit
 *
 * A workload may pause and resume the recording, and end it for the rest of
 * the process by detaching CUPTI (deepprof_cupti_pause, _resume, _detach,
 * below).
 *
 * The launch path is lean: an A record's fields are copied into a ring of
 * the launching thread (no formatting, no lock, no system call) and the
 * flusher thread formats them. Memory is bounded: CUPTI buffers are written
 * out as they complete (cuptiActivityFlushPeriod for full ones, and the
 * flusher asks for the completed ones every second with
 * cuptiActivityFlushAll), each thread's ring and our line buffer have fixed
 * sizes and the flusher writes them out every second (a ring also when it is
 * a quarter full), so a crash or a kill keeps all but about the last second.
 * Built by package session (gcc, argv, no shell); it needs cupti.h, the
 * nvtx3 headers and libcupti.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtCuda.h>
#include <nvtx3/nvToolsExtCudaRt.h>
#include <nvtx3/nvToolsExtSync.h>
#include <generated_nvtx_meta.h>
#if defined(__has_include)
#if __has_include(<cupti_range_profiler.h>) && __has_include(<cupti_profiler_host.h>)
#define DP_METRICS 1
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#endif
#endif

#ifndef NVTX_NO_PUSH_POP_TRACKING /* nvToolsExt.h's, what a push or pop returns with no tool */
#define NVTX_NO_PUSH_POP_TRACKING ((int)-2)
#endif

#define DP_FORMAT "deepprof-cupti/1"
#define DP_EXPORT __attribute__((visibility("default")))

/* Activity record versions of the CUPTI we compile against. */
#if CUPTI_API_VERSION >= 130000
typedef CUpti_ActivityKernel10 dp_kernel_rec;
#else
typedef CUpti_ActivityKernel9 dp_kernel_rec;
#endif
#if CUPTI_API_VERSION >= 26
typedef CUpti_ActivityMemcpy6 dp_memcpy_rec;
#else
typedef CUpti_ActivityMemcpy5 dp_memcpy_rec;
#endif
typedef CUpti_ActivityMemcpyPtoP4 dp_p2p_rec;
typedef CUpti_ActivityMemset4 dp_memset_rec;

#define OUT_BUF_SIZE (1u << 20)       /* our line buffer */
#define CUPTI_BUF_SIZE (8u << 20)     /* one CUPTI activity buffer */
#define FLUSH_PERIOD_MS 1000u
/* CUPTI's buffers are also flushed once FLUSH_RECORDS launch calls have been
 * recorded since the last flush, at most one such flush each FLUSH_MIN_MS: a
 * process killed soon after its GPU work began keeps what ran before. */
#define FLUSH_RECORDS 256u
#define FLUSH_MIN_MS 100u
/* The least time between the flushes a loop's new kernels hurry
 * (metrics_count). */
#define FLUSH_HURRY_MS 10u

/* ---- output: one fd, one fixed buffer, whole lines ---------------------- */

static struct {
  pthread_mutex_t mu;
  int fd;            /* -1: not recording */
  pid_t pid;         /* the process that opened fd */
  int closed;        /* E written */
  char *buf;
  size_t len;
  uint64_t records;  /* lines after the header */
  uint64_t dropped;  /* CUPTI records dropped */
  int write_failed;
} out = {PTHREAD_MUTEX_INITIALIZER, -1, 0, 0, NULL, 0, 0, 0, 0};

/* Writes p[0:n] to the output file; called with out.mu held. */
static void write_locked(const char *p, size_t n) {
  size_t off = 0;
  while (off < n && out.fd >= 0 && !out.write_failed) {
    ssize_t w = write(out.fd, p + off, n - off);
    if (w < 0) {
      if (errno == EINTR) continue;
      fprintf(stderr, "deepprof-cupti: write: %s (records after this are lost)\n", strerror(errno));
      out.write_failed = 1;
      break;
    }
    off += (size_t)w;
  }
}

static void flush_locked(void) {
  write_locked(out.buf, out.len);
  out.len = 0;
}

/* A growable string, for composing one line before it is appended whole. */
typedef struct {
  char *p;
  size_t len, cap;
} sbuf;

static void sb_grow(sbuf *b, size_t need) {
  if (b->len + need + 1 <= b->cap) return;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + need + 1) cap *= 2;
  char *p = realloc(b->p, cap);
  if (!p) abort();
  b->p = p;
  b->cap = cap;
}

static void sb_put(sbuf *b, const char *s, size_t n) {
  sb_grow(b, n);
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = 0;
}

static void sb_str(sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }

static void sb_fmt(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_fmt(sbuf *b, const char *fmt, ...) {
  char tmp[160];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n < sizeof tmp) {
    sb_put(b, tmp, (size_t)n);
    return;
  }
  sb_grow(b, (size_t)n);
  va_start(ap, fmt);
  vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

/* s escaped: \ as \\, TAB as \t, LF as \n, CR as \r; nothing else. */
static void sb_escaped(sbuf *b, const char *s) {
  if (!s) return;
  const char *run = s;
  for (const char *c = s; *c; c++) {
    const char *esc = NULL;
    switch (*c) {
      case '\\': esc = "\\\\"; break;
      case '\t': esc = "\\t"; break;
      case '\n': esc = "\\n"; break;
      case '\r': esc = "\\r"; break;
      default: continue;
    }
    sb_put(b, run, (size_t)(c - run));
    sb_put(b, esc, 2);
    run = c + 1;
  }
  sb_str(b, run);
}

/* A tab, then s escaped. */
static void sb_field(sbuf *b, const char *s) {
  sb_put(b, "\t", 1);
  sb_escaped(b, s);
}

/* Appends n finished lines (each ending in '\n') to the output. */
static void emit_lines(const sbuf *b, uint64_t n) {
  pthread_mutex_lock(&out.mu);
  if (out.fd >= 0 && !out.closed && out.pid == getpid()) {
    if (out.len + b->len > OUT_BUF_SIZE) flush_locked();
    if (b->len > OUT_BUF_SIZE) {
      write_locked(b->p, b->len); /* longer than the whole buffer */
    } else {
      memcpy(out.buf + out.len, b->p, b->len);
      out.len += b->len;
    }
    out.records += n;
  }
  pthread_mutex_unlock(&out.mu);
}

/* Appends one finished line to the output. */
static void emit(const sbuf *b) { emit_lines(b, 1); }

static __thread sbuf tls_line;

static sbuf *line_start(const char *tag) {
  sbuf *b = &tls_line;
  b->len = 0;
  sb_str(b, tag);
  return b;
}

static void line_end(sbuf *b) {
  sb_put(b, "\n", 1);
  emit(b);
}

static void note(const char *key, const char *value) {
  sbuf b = {0};
  sb_str(&b, "X");
  sb_field(&b, key);
  sb_field(&b, value);
  sb_put(&b, "\n", 1);
  emit(&b);
  free(b.p);
}

static __thread pid_t tls_tid;

static uint32_t thread_id(void) {
  if (tls_tid == 0) tls_tid = (pid_t)syscall(SYS_gettid);
  return (uint32_t)tls_tid;
}

/* A monotonic clock in ms, for the flusher's timing. */
static uint64_t mono_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

static uint64_t now_ns(void) {
  uint64_t ts = 0;
  cuptiGetTimestamp(&ts);
  return ts;
}

/* ---- small maps: pointer -> string ------------------------------------- */

typedef struct entry {
  uintptr_t key;
  char *val;
  struct entry *next;
} entry;

#define MAP_BUCKETS 1024
typedef struct {
  pthread_mutex_t mu;
  entry *b[MAP_BUCKETS];
} ptrmap;

static size_t map_slot(uintptr_t k) { return (size_t)((k >> 4) ^ (k >> 14)) % MAP_BUCKETS; }

/* Stores a copy of val under k (replacing an earlier one). */
static void map_put(ptrmap *m, uintptr_t k, const char *val) {
  char *copy = strdup(val ? val : "");
  if (!copy) return;
  pthread_mutex_lock(&m->mu);
  entry **pp = &m->b[map_slot(k)];
  for (entry *e = *pp; e; e = e->next)
    if (e->key == k) {
      free(e->val);
      e->val = copy;
      pthread_mutex_unlock(&m->mu);
      return;
    }
  entry *e = malloc(sizeof *e);
  if (e) {
    e->key = k;
    e->val = copy;
    e->next = *pp;
    *pp = e;
  } else {
    free(copy);
  }
  pthread_mutex_unlock(&m->mu);
}

/* Copies the string stored under k into dst (as a field); 0 when absent. */
static int map_field(ptrmap *m, uintptr_t k, sbuf *dst) {
  int found = 0;
  pthread_mutex_lock(&m->mu);
  for (entry *e = m->b[map_slot(k)]; e; e = e->next)
    if (e->key == k) {
      sb_field(dst, e->val);
      found = 1;
      break;
    }
  pthread_mutex_unlock(&m->mu);
  return found;
}

static ptrmap domains = {PTHREAD_MUTEX_INITIALIZER, {0}};     /* nvtxDomainHandle_t -> name */
static ptrmap strings = {PTHREAD_MUTEX_INITIALIZER, {0}};     /* nvtxStringHandle_t -> text */
static ptrmap demangled = {PTHREAD_MUTEX_INITIALIZER, {0}};   /* kernel name pointer -> demangled */

/* wchar_t (UTF-32 on Linux) to a malloc'd UTF-8 string. */
static char *utf8_from_wide(const wchar_t *w) {
  if (!w) return strdup("");
  size_t n = wcslen(w);
  char *s = malloc(4 * n + 1), *p = s;
  if (!s) return NULL;
  for (size_t i = 0; i < n; i++) {
    uint32_t c = (uint32_t)w[i];
    if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) c = 0xFFFD;
    if (c < 0x80) {
      *p++ = (char)c;
    } else if (c < 0x800) {
      *p++ = (char)(0xC0 | (c >> 6));
      *p++ = (char)(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      *p++ = (char)(0xE0 | (c >> 12));
      *p++ = (char)(0x80 | ((c >> 6) & 0x3F));
      *p++ = (char)(0x80 | (c & 0x3F));
    } else {
      *p++ = (char)(0xF0 | (c >> 18));
      *p++ = (char)(0x80 | ((c >> 12) & 0x3F));
      *p++ = (char)(0x80 | ((c >> 6) & 0x3F));
      *p++ = (char)(0x80 | (c & 0x3F));
    }
  }
  *p = 0;
  return s;
}

/* ---- kernels: demangling ------------------------------------------------ */

typedef char *(*cxa_demangle_fn)(const char *, char *, size_t *, int *);
static cxa_demangle_fn cxa_demangle;

/* Writes the demangled form of a kernel name as a field. CUPTI shares one
 * name pointer among all records of a kernel, so the result is cached by
 * pointer; a name that does not demangle is written as it is. */
static void demangled_field(sbuf *b, const char *name) {
  if (!name) {
    sb_field(b, "");
    return;
  }
  if (map_field(&demangled, (uintptr_t)name, b)) return;
  char *d = NULL;
  int status = -1;
  if (cxa_demangle && name[0] == '_' && name[1] == 'Z') d = cxa_demangle(name, NULL, NULL, &status);
  const char *val = (d && status == 0) ? d : name;
  map_put(&demangled, (uintptr_t)name, val);
  sb_field(b, val);
  free(d);
}

/* ---- activity records ---------------------------------------------------- */

static const char *copy_kind(uint32_t k) {
  switch (k) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "PtoP";
    default: return "other";
  }
}

/* ---- GPU identity ----------------------------------------------------------
 * A GPU record's device is the ordinal this process sees (after
 * CUDA_VISIBLE_DEVICES): the first record of each device (kernel, copy or
 * set) is preceded by a
 * note "device.<ordinal>" holding the GPU's UUID as nvidia-smi writes it
 * (GPU-xxxxxxxx-...), or "unknown", so that runs of several processes and
 * nodes tell their GPUs apart. */
typedef CUresult (*cu_device_get_fn)(CUdevice *, int);
typedef CUresult (*cu_device_uuid_fn)(CUuuid *, CUdevice);
static cu_device_get_fn cu_device_get;
static cu_device_uuid_fn cu_device_uuid;
static _Atomic uint64_t devices_noted; /* bit d: device d's note was written */

static void note_device(uint32_t d) {
  if (d >= 64) return;
  uint64_t bit = (uint64_t)1 << d;
  if (atomic_fetch_or(&devices_noted, bit) & bit) return;
  char key[32], v[64];
  snprintf(key, sizeof key, "device.%u", (unsigned)d);
  CUdevice dev;
  CUuuid u;
  if (!cu_device_get || !cu_device_uuid || cu_device_get(&dev, (int)d) != CUDA_SUCCESS ||
      cu_device_uuid(&u, dev) != CUDA_SUCCESS) {
    note(key, "unknown");
    return;
  }
  const unsigned char *x = (const unsigned char *)u.bytes;
  snprintf(v, sizeof v,
           "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", x[0], x[1],
           x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[9], x[10], x[11], x[12], x[13], x[14], x[15]);
  note(key, v);
}

static void metrics_time(const char *name, const uint32_t dims[6], uint64_t start, uint64_t end); /* below */

static void write_record(const CUpti_Activity *rec) {
  switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const dp_kernel_rec *k = (const dp_kernel_rec *)rec;
      note_device((uint32_t)k->deviceId);
      sbuf *b = line_start("K");
      sb_fmt(b, "\t%" PRIu64 "\t%" PRIu64 "\t%u\t%u\t%u\t%u\t%d,%d,%d\t%d,%d,%d\t%u\t%d\t%d",
             (uint64_t)k->start, (uint64_t)k->end, (unsigned)k->deviceId, (unsigned)k->contextId,
             (unsigned)k->streamId, (unsigned)k->correlationId, (int)k->gridX, (int)k->gridY,
             (int)k->gridZ, (int)k->blockX, (int)k->blockY, (int)k->blockZ,
             (unsigned)k->registersPerThread, (int)k->staticSharedMemory, (int)k->dynamicSharedMemory);
      sb_field(b, k->name ? k->name : "");
      demangled_field(b, k->name);
      line_end(b);
      uint32_t dims[6] = {(uint32_t)k->gridX, (uint32_t)k->gridY, (uint32_t)k->gridZ,
                          (uint32_t)k->blockX, (uint32_t)k->blockY, (uint32_t)k->blockZ};
      metrics_time(k->name, dims, (uint64_t)k->start, (uint64_t)k->end);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const dp_memcpy_rec *m = (const dp_memcpy_rec *)rec;
      note_device((uint32_t)m->deviceId);
      sbuf *b = line_start("C");
      sb_fmt(b, "\t%" PRIu64 "\t%" PRIu64 "\t%u\t%u\t%u\t%u\t%s\t%" PRIu64, (uint64_t)m->start,
             (uint64_t)m->end, (unsigned)m->deviceId, (unsigned)m->contextId, (unsigned)m->streamId,
             (unsigned)m->correlationId, copy_kind(m->copyKind), (uint64_t)m->bytes);
      line_end(b);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
      const dp_p2p_rec *m = (const dp_p2p_rec *)rec;
      note_device((uint32_t)m->deviceId);
      sbuf *b = line_start("C");
      sb_fmt(b, "\t%" PRIu64 "\t%" PRIu64 "\t%u\t%u\t%u\t%u\t%s\t%" PRIu64, (uint64_t)m->start,
             (uint64_t)m->end, (unsigned)m->deviceId, (unsigned)m->contextId, (unsigned)m->streamId,
             (unsigned)m->correlationId, "PtoP", (uint64_t)m->bytes);
      line_end(b);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const dp_memset_rec *m = (const dp_memset_rec *)rec;
      note_device((uint32_t)m->deviceId);
      sbuf *b = line_start("S");
      sb_fmt(b, "\t%" PRIu64 "\t%" PRIu64 "\t%u\t%u\t%u\t%u\t%" PRIu64, (uint64_t)m->start,
             (uint64_t)m->end, (unsigned)m->deviceId, (unsigned)m->contextId, (unsigned)m->streamId,
             (unsigned)m->correlationId, (uint64_t)m->bytes);
      line_end(b);
      break;
    }
    default:
      break;
  }
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records) {
  void *p = NULL;
  if (posix_memalign(&p, 8, CUPTI_BUF_SIZE) != 0) p = NULL;
  *buffer = p;
  *size = p ? CUPTI_BUF_SIZE : 0;
  *max_records = 0;
}

/* Completed CUPTI buffers wait here for the flusher, which formats them
 * outside CUPTI's callback: the callback only queues the buffer and wakes
 * the flusher, so CUPTI (and any launch waiting on it) is held for a queue
 * append, not for formatting tens of thousands of records. */
typedef struct done_buf {
  struct done_buf *next;
  uint8_t *buffer;
  size_t valid;
} done_buf;
static pthread_mutex_t done_mu = PTHREAD_MUTEX_INITIALIZER;
static done_buf *done_head, **done_tail = &done_head;
/* wakes the flusher: a completed buffer, a ring a quarter full, FLUSH_RECORDS
 * launch calls recorded, a hurry (metrics_count) */
static pthread_cond_t wake_cv = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t wake_mu = PTHREAD_MUTEX_INITIALIZER;
/* 1: a flush and a choice of targets are wanted soon (metrics_count), at
 * most each FLUSH_HURRY_MS */
static atomic_int hurry;
/* launch calls recorded since the flusher's last CUPTI flush */
static atomic_uint unflushed;

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                      size_t valid) {
  (void)size;
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped > 0) {
    char v[32];
    snprintf(v, sizeof v, "%zu", dropped);
    note("dropped_records", v);
    pthread_mutex_lock(&out.mu);
    out.dropped += dropped;
    pthread_mutex_unlock(&out.mu);
  }
  done_buf *d = valid > 0 ? malloc(sizeof *d) : NULL;
  if (!d) {
    /* nothing in it, or no memory to queue it: format it here */
    CUpti_Activity *rec = NULL;
    if (valid > 0)
      while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) write_record(rec);
    free(buffer);
    return;
  }
  d->next = NULL;
  d->buffer = buffer;
  d->valid = valid;
  pthread_mutex_lock(&done_mu);
  *done_tail = d;
  done_tail = &d->next;
  pthread_mutex_unlock(&done_mu);
  pthread_cond_signal(&wake_cv);
}

/* Formats the queued buffers (the flusher, and finish). */
static void drain_done(void) {
  pthread_mutex_lock(&done_mu);
  done_buf *d = done_head;
  done_head = NULL;
  done_tail = &done_head;
  pthread_mutex_unlock(&done_mu);
  while (d) {
    CUpti_Activity *rec = NULL;
    while (cuptiActivityGetNextRecord(d->buffer, d->valid, &rec) == CUPTI_SUCCESS) write_record(rec);
    done_buf *next = d->next;
    free(d->buffer);
    free(d);
    d = next;
  }
  pthread_mutex_lock(&out.mu);
  flush_locked();
  pthread_mutex_unlock(&out.mu);
}

/* Declared with the pause and the error text, below. */
static atomic_int paused;
static atomic_int detached; /* below */
static const char *cupti_error(CUptiResult r);

/* ---- Deep metrics in this process (CUPTI's range profiler) ---------------
 *
 * With DEEPPROF_CUPTI_METRICS set (metric names, comma-separated), the
 * library measures them itself on one launch of each of the kernels that run
 * most of the GPU time, so that the figures a deep pass under ncu gives need
 * no second start of the program. The targets are chosen as the program
 * runs: after each flush, from the GPU time of every kernel launch
 * configuration (a symbol with a grid and a block, as ncu's per-launch-config
 * filter counts them; their K records), halved at each choice so that the
 * latest time weighs most, the top ones that cover
 * DEEPPROF_CUPTI_METRICS_COVERAGE percent of it (default 85) among those
 * launched at least DEEPPROF_CUPTI_METRICS_AT times (default 2), and soon
 * after a configuration no record has timed yet reaches its AT-th launch
 * inside an NVTX range pushed AT times (a loop's step: metrics_count); a chosen
 * configuration is measured at its next launch, at most
 * DEEPPROF_CUPTI_METRICS_KERNELS launches in all (default 24), on the first
 * context a launch is measured in. One that ran early and never again (a
 * warm-up's) costs nothing: it is never launched again to be measured. The
 * measuring's time is capped against the program's own (metrics_affordable):
 * a target waits while the cap is reached, and those never measured are
 * counted at the end (metrics_left).
 *
 * A launch is measured with CUPTI's range profiler, automatic ranges (the
 * launch is the range) and kernel replay (CUPTI replays it once a pass,
 * saving and restoring the memory it writes), enabled on the context at
 * the first measured launch and left enabled (CUPTI 13.0 crashes enabling it
 * again after a disable, measured on an H200): at the launch call's entry the
 * context is synchronized (the work queued before it runs as it would) and
 * the profiler started; at its exit it is stopped, decoded and evaluated, on
 * the launching thread, one launch at a time. While it is enabled, CUPTI
 * 13.0 completes the context's activity buffers only at the end, so each
 * measured launch's exit forces a flush, when the GPU has just run
 * everything queued (a forced flush at any other time gives the kernels
 * still running records with no time): the records up to each measurement
 * reach the choice of targets. Only while one thread launches on one
 * context (metrics_launcher; else the note metrics_held). A launch into a stream being captured into a CUDA graph is not
 * measured (it does not run, and the synchronization would end the capture). CUPTI gives the replayed
 * launch's K record no time (start and end 0). Each metric of the launch is
 * one M line (its correlation id, the metric's name, CUPTI's value in the
 * metric's base unit), and the host time the measuring took, from after the
 * synchronization to the end of the evaluation, one W line (the correlation
 * id, start, end): a reader cuts those windows out of the timeline. The note
 * "metrics" gives the passes a launch takes, "metrics_stopped" why nothing
 * (more) is measured (the first refusal ends the measuring in the process),
 * "metric_refused" a
 * metric the device does not have (left out, the others measured), and
 * "metrics_done" the launches measured. Built only where the toolkit has the
 * range profiler's headers (CUDA 12.6 and later); elsewhere the note says
 * so. */

#define METRICS_MAX 64      /* metric names */
#define METRICS_SLOTS 8192u /* launch configurations followed, a power of two */
#define METRICS_NEXT 4      /* configurations wanted at once */
#define METRICS_STALE 20    /* choices a wanted configuration may go unlaunched before it is released */

enum { TARGET_NONE, TARGET_WANTED, TARGET_DONE };

static struct {
  pthread_mutex_t mu;  /* held from a measured launch's entry to its exit */
  pthread_mutex_t tmu; /* the GPU times and the choice of targets */
  atomic_int on;       /* 0: nothing (more) to measure */
  char *env;           /* the names' storage */
  const char *names[METRICS_MAX];
  size_t n;
  uint32_t at, budget, chosen, done, coverage;
  uint32_t share;            /* percent: the measuring's time against the program's own */
  uint64_t floor_ns, start_ns; /* the time always allowed; the process's start */
  _Atomic uint64_t cut_ns;     /* the measuring's time so far */
  atomic_int capped;           /* metrics_capped written */
  int ended; /* metrics_done written */
  _Atomic uint64_t key[METRICS_SLOTS]; /* symbol hashes; 0: empty */
  _Atomic uint32_t launches[METRICS_SLOTS];
  _Atomic uint8_t state[METRICS_SLOTS];
  _Atomic uint8_t timed[METRICS_SLOTS];   /* 1: a record gave its GPU time */
  _Atomic uint8_t comm[METRICS_SLOTS];    /* 0: not yet told, 1: computes, 2: communicates (slot_collective) */
  _Atomic uint8_t hurried[METRICS_SLOTS]; /* 1: has hurried the flusher (metrics_count) */
  uint64_t gpu_ns[METRICS_SLOTS];
  int fresh; /* GPU time added since the last ranking */
  /* the last ranking: configurations by GPU time, the first cover of them
   * covering the coverage asked */
  uint32_t order[METRICS_SLOTS], ranked, cover;
  /* a wanted configuration's launches when last seen launched, and the
   * choices since; a released one's launches plus one (chosen again once
   * launched since) */
  uint32_t seen[METRICS_SLOTS], released[METRICS_SLOTS];
  uint8_t age[METRICS_SLOTS];
  uint32_t left; /* of the last choice: targets covering the coverage, not measured */
#ifdef DP_METRICS
  CUcontext ctx;
  CUpti_RangeProfiler_Object *obj;
  CUpti_Profiler_Host_Object *host;
  uint8_t *config, *counter, *avail;
  size_t config_size, counter_size;
  double values[METRICS_MAX];
#endif
} mx = {.mu = PTHREAD_MUTEX_INITIALIZER, .tmu = PTHREAD_MUTEX_INITIALIZER};

/* The correlation id of the launch this thread measures, plus one (0: none),
 * and when its window began. */
static __thread uint32_t tls_measuring;
static __thread uint64_t tls_window_start;

static uint32_t env_u32(const char *key, uint32_t def) {
  const char *p = getenv(key);
  if (!p || !*p) return def;
  char *end = NULL;
  unsigned long v = strtoul(p, &end, 10);
  return (end && *end == 0 && v <= UINT32_MAX) ? (uint32_t)v : def;
}

/* When the process started, on now_ns's clock: the library starts with
 * CUDA, after the program's imports, which its own time includes. Now, where
 * /proc does not say. */
static uint64_t process_start_ns(void) {
  uint64_t now = now_ns();
  char buf[1024];
  int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return now;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return now;
  buf[n] = 0;
  char *p = strrchr(buf, ')'); /* the command's name may hold spaces */
  unsigned long long ticks = 0;
  /* after the name: state (field 3) ... starttime (field 22) */
  if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu", &ticks) != 1)
    return now;
  long hz = sysconf(_SC_CLK_TCK);
  struct timespec bt;
  if (hz <= 0 || clock_gettime(CLOCK_BOOTTIME, &bt) != 0) return now;
  uint64_t since_boot = (uint64_t)bt.tv_sec * 1000000000ull + (uint64_t)bt.tv_nsec;
  uint64_t started = (uint64_t)(ticks * (1000000000ull / (uint64_t)hz));
  return started < since_boot && since_boot - started < now ? now - (since_boot - started) : now;
}

#ifdef DP_METRICS
typedef CUresult (*cu_ctx_sync_fn)(void);
typedef CUresult (*cu_stream_is_capturing_fn)(CUstream, CUstreamCaptureStatus *);

/* The driver functions the measuring calls, from libcuda itself (a program
 * linked with the static CUDA runtime loads libcuda RTLD_LOCAL: its symbols
 * are not global). Set once, by metrics_parse. */
static cu_ctx_sync_fn cu_ctx_sync;
static cu_stream_is_capturing_fn cu_stream_is_capturing;
#endif

static void metrics_parse(void) {
  const char *p = getenv("DEEPPROF_CUPTI_METRICS");
  if (!p || !*p) return;
#ifndef DP_METRICS
  (void)env_u32, (void)process_start_ns;
  note("metrics_stopped", "not measured: this toolkit has no range profiler (cupti_range_profiler.h)");
#else
  mx.env = strdup(p);
  if (!mx.env) return;
  char *save = NULL;
  for (char *s = strtok_r(mx.env, ",", &save); s && mx.n < METRICS_MAX; s = strtok_r(NULL, ",", &save))
    if (*s) mx.names[mx.n++] = s;
  mx.at = env_u32("DEEPPROF_CUPTI_METRICS_AT", 2);
  mx.budget = env_u32("DEEPPROF_CUPTI_METRICS_KERNELS", 24);
  mx.coverage = env_u32("DEEPPROF_CUPTI_METRICS_COVERAGE", 85);
  if (mx.coverage > 100) mx.coverage = 100;
  mx.share = env_u32("DEEPPROF_CUPTI_METRICS_SHARE", 20);
  if (mx.share > 1000) mx.share = 1000;
  mx.floor_ns = (uint64_t)env_u32("DEEPPROF_CUPTI_METRICS_FLOOR_MS", 1500) * 1000000ull;
  mx.start_ns = process_start_ns();
  void *cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (cuda) {
    cu_ctx_sync = (cu_ctx_sync_fn)dlsym(cuda, "cuCtxSynchronize");
    cu_stream_is_capturing = (cu_stream_is_capturing_fn)dlsym(cuda, "cuStreamIsCapturing");
  }
  if (!cu_ctx_sync || !cu_stream_is_capturing) {
    note("metrics_stopped", "not measured: libcuda.so.1's cuCtxSynchronize or cuStreamIsCapturing not found");
    return;
  }
  if (mx.n > 0 && mx.budget > 0) atomic_store(&mx.on, 1);
#endif
}

#define FNV_BASIS 1469598103934665603ull
/* FNV-1a of n bytes, continuing h. */
static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *c = p;
  for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 1099511628211ull;
  return h;
}

/* A kernel launch configuration's key: its symbol, grid and block. */
static uint64_t config_hash(const char *s, const uint32_t dims[6]) {
  uint64_t h = fnv(FNV_BASIS, s, strlen(s));
  for (int i = 0; i < 6; i++) h = (h ^ dims[i]) * 1099511628211ull;
  return h ? h : 1;
}

/* The grid and block of a launch call (x, y, z each) and its stream; 0 for
 * a call whose parameters this library does not read. */
static int launch_dims(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *params, uint32_t d[6],
                       CUstream *stream) {
  if (!params) return 0;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    switch (cbid) {
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000: {
        const cudaLaunchKernel_v7000_params *p = params;
        *stream = (CUstream)p->stream;
        d[0] = p->gridDim.x, d[1] = p->gridDim.y, d[2] = p->gridDim.z;
        d[3] = p->blockDim.x, d[4] = p->blockDim.y, d[5] = p->blockDim.z;
        return 1;
      }
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060:
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060: {
        const cudaLaunchKernelExC_v11060_params *p = params;
        if (!p->config) return 0;
        *stream = (CUstream)p->config->stream;
        d[0] = p->config->gridDim.x, d[1] = p->config->gridDim.y, d[2] = p->config->gridDim.z;
        d[3] = p->config->blockDim.x, d[4] = p->config->blockDim.y, d[5] = p->config->blockDim.z;
        return 1;
      }
      default:
        return 0;
    }
  }
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz: {
      const cuLaunchKernel_params *p = params;
      *stream = p->hStream;
      d[0] = p->gridDimX, d[1] = p->gridDimY, d[2] = p->gridDimZ;
      d[3] = p->blockDimX, d[4] = p->blockDimY, d[5] = p->blockDimZ;
      return 1;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
      const cuLaunchKernelEx_params *p = params;
      if (!p->config) return 0;
      *stream = p->config->hStream;
      d[0] = p->config->gridDimX, d[1] = p->config->gridDimY, d[2] = p->config->gridDimZ;
      d[3] = p->config->blockDimX, d[4] = p->config->blockDimY, d[5] = p->config->blockDimZ;
      return 1;
    }
    default:
      return 0;
  }
}

/* The slot of the hash h (not 0) in a table of cap keys (a power of two),
 * made on first sight; -1 when the table is full. Lock-free: slots are only
 * ever claimed. */
static int slot_in(_Atomic uint64_t *keys, uint32_t cap, uint64_t h) {
  uint32_t i = (uint32_t)h & (cap - 1);
  for (uint32_t probes = 0; probes < cap; probes++, i = (i + 1) & (cap - 1)) {
    uint64_t k = atomic_load_explicit(&keys[i], memory_order_acquire);
    if (k == h) return (int)i;
    if (k == 0) {
      uint64_t zero = 0;
      if (atomic_compare_exchange_strong(&keys[i], &zero, h) || zero == h) return (int)i;
    }
  }
  return -1;
}

/* The slot of the launch configuration whose hash is h. */
static int symbol_slot(uint64_t h) { return slot_in(mx.key, METRICS_SLOTS, h); }

/* Whether a kernel communicates with other ranks: NCCL's collectives, and
 * the all-reduces and all-gathers of others (vLLM's cross_device_reduce,
 * TensorRT-LLM's, torch's symmetric memory, NVSHMEM's), by the words of
 * package kernels' communication category, case and underscores aside, in
 * the name's first COLLECTIVE_SCAN bytes. Its replay would wait for the
 * other ranks (or spin on flags they set), and its counters read their
 * traffic. */
#define COLLECTIVE_SCAN 1024
static int collective(const char *name) {
  static const char *const words[] = {"nccl",     "allreduce",   "allgather", "reducescatter",
                                      "alltoall", "crossdevice", "nvshmem",   "multimem"};
  char folded[COLLECTIVE_SCAN + 1];
  size_t n = 0;
  for (const char *c = name; *c && c - name < COLLECTIVE_SCAN; c++)
    if (*c != '_') folded[n++] = (char)((*c >= 'A' && *c <= 'Z') ? *c - 'A' + 'a' : *c);
  folded[n] = 0;
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
    if (strstr(folded, words[i])) return 1;
  return 0;
}

/* collective(name) for configuration i, decided once (mx.comm). */
static int slot_collective(int i, const char *name) {
  uint8_t c = atomic_load_explicit(&mx.comm[i], memory_order_relaxed);
  if (c == 0) {
    c = collective(name) ? 2 : 1;
    atomic_store_explicit(&mx.comm[i], c, memory_order_relaxed);
  }
  return c == 2;
}

/* How many times each NVTX range name has been pushed (on any thread), and,
 * for each range this thread is inside, that count at its push and its
 * domain (each domain's ranges nest on their own: a pop closes the
 * innermost range of its domain): a launch inside a range pushed at least
 * mx.at times is inside a step of a loop. */
#define RANGE_SLOTS 1024u /* range names counted, a power of two */
#define RANGE_DEPTH 64    /* the nesting followed on a thread */
static _Atomic uint64_t range_key[RANGE_SLOTS];
static _Atomic uint32_t range_pushes[RANGE_SLOTS];
static __thread uint32_t tls_ranges[RANGE_DEPTH];
static __thread const void *tls_range_domains[RANGE_DEPTH];
static __thread int tls_range_depth;

static void range_pushed(const void *domain, uint64_t h) {
  int i = slot_in(range_key, RANGE_SLOTS, h ? h : 1);
  uint32_t n = i >= 0 ? atomic_fetch_add(&range_pushes[i], 1) + 1 : 0;
  if (tls_range_depth < RANGE_DEPTH) {
    tls_ranges[tls_range_depth] = n;
    tls_range_domains[tls_range_depth] = domain;
  }
  tls_range_depth++;
}

static void range_popped(const void *domain) {
  int d = tls_range_depth;
  if (d <= 0) return;
  if (d > RANGE_DEPTH) { /* nested past what is followed: the innermost */
    tls_range_depth--;
    return;
  }
  int j = d - 1;
  while (j >= 0 && tls_range_domains[j] != domain) j--;
  if (j < 0) return; /* no open range of that domain */
  for (; j < d - 1; j++) {
    tls_ranges[j] = tls_ranges[j + 1];
    tls_range_domains[j] = tls_range_domains[j + 1];
  }
  tls_range_depth--;
}

/* How many times the innermost range this thread is inside had been pushed
 * at its push; 0 outside any range (or one nested too deep to follow). */
static uint32_t range_repeats(void) {
  int d = tls_range_depth;
  return d > 0 && d <= RANGE_DEPTH ? tls_ranges[d - 1] : 0;
}

/* Counts a launch of configuration i, of kernel name. Once it has been
 * launched mx.at times, at a launch inside a range pushed at least mx.at
 * times (on any thread: a step of a loop), while no record has given its
 * GPU time yet, it hurries the flusher, once: the flusher flushes and
 * chooses the targets within FLUSH_HURRY_MS, by the GPU time of the loop's
 * first steps, instead of at its next period, so that a loop of a few
 * milliseconds still has its kernels of most time measured. Never for a
 * collective (never a target). */
static void metrics_count(int i, const char *name) {
  uint32_t n = atomic_fetch_add(&mx.launches[i], 1) + 1;
  if (n < mx.at || atomic_load(&mx.timed[i]) || range_repeats() < mx.at || atomic_load(&hurry) ||
      atomic_load(&mx.hurried[i]) || slot_collective(i, name) || atomic_exchange(&mx.hurried[i], 1))
    return;
  pthread_mutex_lock(&wake_mu);
  atomic_store(&hurry, 1);
  pthread_cond_signal(&wake_cv);
  pthread_mutex_unlock(&wake_mu);
}

/* Adds a kernel record's GPU time to its configuration's (the flusher's
 * side); a collective's is not counted, so it is never chosen. */
static void metrics_time(const char *name, const uint32_t dims[6], uint64_t start, uint64_t end) {
  if (!name || end <= start || !atomic_load_explicit(&mx.on, memory_order_relaxed)) return;
  int i = symbol_slot(config_hash(name, dims));
  if (i < 0 || slot_collective(i, name)) return;
  atomic_store(&mx.timed[i], 1);
  pthread_mutex_lock(&mx.tmu);
  mx.gpu_ns[i] += end - start;
  mx.fresh = 1;
  pthread_mutex_unlock(&mx.tmu);
}

static int by_gpu_time(const void *a, const void *b) {
  uint64_t x = mx.gpu_ns[*(const uint32_t *)a], y = mx.gpu_ns[*(const uint32_t *)b];
  return x < y ? 1 : x > y ? -1 : 0;
}

/* Ranks the configurations by GPU time, where time was added since the
 * last ranking (each configuration's then halved: the latest weighs most);
 * mx.tmu held. */
static void metrics_rank(void) {
  if (!mx.fresh) return;
  uint32_t n = 0;
  uint64_t total = 0;
  for (uint32_t i = 0; i < METRICS_SLOTS; i++)
    if (mx.gpu_ns[i] > 0) {
      mx.order[n++] = i;
      total += mx.gpu_ns[i];
    }
  qsort(mx.order, n, sizeof mx.order[0], by_gpu_time);
  uint64_t covered = 0;
  uint32_t cover = 0;
  while (cover < n && covered * 100 < total * mx.coverage) covered += mx.gpu_ns[mx.order[cover++]];
  for (uint32_t j = 0; j < n; j++) mx.gpu_ns[mx.order[j]] /= 2;
  mx.ranked = n;
  mx.cover = cover;
  mx.fresh = 0;
}

/* Marks as wanted the METRICS_NEXT configurations of most GPU time not yet
 * measured, among those of the last ranking that cover the coverage asked
 * and were launched at least mx.at times (after each flush): the
 * measuring's cap spends itself on the kernels of most time first. A wanted
 * one not launched for METRICS_STALE choices (a warm-up's, or one only
 * captured into a graph) is released until it is launched again; every
 * other wanted one goes back to none. mx.left is how many targets of the
 * ranking are not measured. */
static void metrics_choose(void) {
  if (!atomic_load_explicit(&mx.on, memory_order_relaxed)) return;
  static uint8_t keep[METRICS_SLOTS]; /* the flusher's alone */
  memset(keep, 0, sizeof keep);
  pthread_mutex_lock(&mx.tmu);
  metrics_rank();
  uint32_t next = 0, left = 0;
  for (uint32_t j = 0; j < mx.cover; j++) {
    uint32_t i = mx.order[j];
    uint8_t st = atomic_load(&mx.state[i]);
    uint32_t n = atomic_load(&mx.launches[i]);
    if (st == TARGET_DONE || n < mx.at) continue; /* measured, or not a target (yet) */
    left++;
    if (st == TARGET_WANTED) {
      if (n != mx.seen[i]) {
        mx.seen[i] = n;
        mx.age[i] = 0;
      } else if (++mx.age[i] >= METRICS_STALE) {
        mx.released[i] = n + 1;
        continue;
      }
    } else if (mx.released[i] == n + 1) {
      continue;
    }
    if (next < METRICS_NEXT) {
      keep[i] = 1;
      next++;
    }
  }
  mx.left = left;
  for (uint32_t i = 0; i < METRICS_SLOTS; i++) {
    uint8_t st = atomic_load(&mx.state[i]);
    if (keep[i] && st == TARGET_NONE) {
      mx.seen[i] = atomic_load(&mx.launches[i]);
      mx.age[i] = 0;
      if (atomic_compare_exchange_strong(&mx.state[i], &st, TARGET_WANTED)) mx.chosen++;
    } else if (!keep[i] && st == TARGET_WANTED) {
      atomic_compare_exchange_strong(&mx.state[i], &st, TARGET_NONE);
    }
  }
  pthread_mutex_unlock(&mx.tmu);
}

/* Whether a launch call launches one kernel whose symbol CUPTI names. */
static int launches_kernel(const CUpti_CallbackData *cb) {
  const char *f = cb->functionName;
  return cb->symbolName && f &&
         (strncmp(f, "cudaLaunchKernel", 16) == 0 || strncmp(f, "cuLaunchKernel", 14) == 0 ||
          strncmp(f, "cudaLaunchCooperativeKernel", 27) == 0 || strncmp(f, "cuLaunchCooperativeKernel", 25) == 0);
}

#ifdef DP_METRICS

/* Whether stream is being captured into a CUDA graph (or that cannot be
 * told): a launch captured does not run, and a synchronization during a
 * capture would end it. */
static int capturing(CUstream stream) {
  CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
  return cu_stream_is_capturing(stream, &st) != CUDA_SUCCESS || st != CU_STREAM_CAPTURE_STATUS_NONE;
}

/* Stops the measuring for the rest of the process, saying why; mx.mu held. */
static void metrics_refused(const char *what, CUptiResult r) {
  char v[320];
  if (r == CUPTI_SUCCESS)
    snprintf(v, sizeof v, "stopped after %u launches: %s", mx.done, what);
  else
    snprintf(v, sizeof v, "stopped after %u launches: %s: %s", mx.done, what, cupti_error(r));
  note("metrics_stopped", v);
  atomic_store(&mx.on, 0);
}

#define MX_TRY(call, what)       \
  do {                           \
    CUptiResult r_ = (call);     \
    if (r_ != CUPTI_SUCCESS) {   \
      metrics_refused(what, r_); \
      return 0;                  \
    }                            \
  } while (0)

/* Adds n metric names to the host object's configuration. */
static CUptiResult metrics_config_add(const char **names, size_t n) {
  CUpti_Profiler_Host_ConfigAddMetrics_Params am = {CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
  am.pHostObject = mx.host;
  am.ppMetricNames = names;
  am.numMetrics = n;
  return cuptiProfilerHostConfigAddMetrics(&am);
}

/* Adds the metrics to the host object's configuration one at a time: a
 * metric the chip does not have is said and left out. A refused add leaves
 * the host object refusing every later one (CUPTI 13.0 on an H200: after
 * sm__ops_path_tensor_src_bf16_dst_bf16.sum, which Hopper lacks, every
 * tensor metric it has), so the object is made again from hi and given the
 * metrics kept so far. 0 when none is kept, or the object cannot be made
 * again (said). */
static int metrics_add(CUpti_Profiler_Host_Initialize_Params *hi) {
  size_t kept = 0;
  for (size_t i = 0; i < mx.n; i++) {
    CUptiResult r = metrics_config_add(&mx.names[i], 1);
    if (r == CUPTI_SUCCESS) {
      mx.names[kept++] = mx.names[i];
      continue;
    }
    char v[320];
    snprintf(v, sizeof v, "%s: %s", mx.names[i], cupti_error(r));
    note("metric_refused", v);
    CUpti_Profiler_Host_Deinitialize_Params hd = {CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
    hd.pHostObject = mx.host;
    cuptiProfilerHostDeinitialize(&hd);
    mx.host = NULL;
    hi->pHostObject = NULL;
    MX_TRY(cuptiProfilerHostInitialize(hi), "cuptiProfilerHostInitialize again after a refused metric");
    mx.host = hi->pHostObject;
    if (kept > 0) MX_TRY(metrics_config_add(mx.names, kept), "cuptiProfilerHostConfigAddMetrics of the metrics kept");
  }
  mx.n = kept;
  return kept > 0;
}

/* Makes the range profiler's host side ready, the first time: the host
 * object for ctx's chip, the configuration of the metrics and the passes a
 * launch takes. 0 when refused (said). mx.mu held. */
static int metrics_ready(CUcontext ctx) {
  if (mx.config) return 1;
  CUpti_Profiler_Initialize_Params ip = {CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
  MX_TRY(cuptiProfilerInitialize(&ip), "cuptiProfilerInitialize");
  uint32_t dev = 0;
  MX_TRY(cuptiGetDeviceId(ctx, &dev), "cuptiGetDeviceId");
  CUpti_Device_GetChipName_Params cn = {CUpti_Device_GetChipName_Params_STRUCT_SIZE};
  cn.deviceIndex = dev;
  MX_TRY(cuptiDeviceGetChipName(&cn), "cuptiDeviceGetChipName");
  CUpti_Profiler_GetCounterAvailability_Params ca = {CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
  ca.ctx = ctx;
  MX_TRY(cuptiProfilerGetCounterAvailability(&ca), "cuptiProfilerGetCounterAvailability");
  mx.avail = calloc(1, ca.counterAvailabilityImageSize);
  if (!mx.avail) {
    metrics_refused("out of memory for the counter availability image", CUPTI_SUCCESS);
    return 0;
  }
  ca.pCounterAvailabilityImage = mx.avail;
  MX_TRY(cuptiProfilerGetCounterAvailability(&ca), "cuptiProfilerGetCounterAvailability");
  CUpti_Profiler_Host_Initialize_Params hi = {CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
  hi.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  hi.pChipName = cn.pChipName;
  hi.pCounterAvailabilityImage = mx.avail;
  MX_TRY(cuptiProfilerHostInitialize(&hi), "cuptiProfilerHostInitialize");
  mx.host = hi.pHostObject;
  if (!metrics_add(&hi)) {
    if (atomic_load(&mx.on)) metrics_refused("the device has none of the metrics asked", CUPTI_SUCCESS);
    return 0;
  }
  CUpti_Profiler_Host_GetConfigImageSize_Params cs = {CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
  cs.pHostObject = mx.host;
  MX_TRY(cuptiProfilerHostGetConfigImageSize(&cs), "cuptiProfilerHostGetConfigImageSize");
  uint8_t *config = calloc(1, cs.configImageSize);
  if (!config) {
    metrics_refused("out of memory for the configuration image", CUPTI_SUCCESS);
    return 0;
  }
  CUpti_Profiler_Host_GetConfigImage_Params ci = {CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
  ci.pHostObject = mx.host;
  ci.pConfigImage = config;
  ci.configImageSize = cs.configImageSize;
  CUptiResult r = cuptiProfilerHostGetConfigImage(&ci);
  if (r != CUPTI_SUCCESS) {
    free(config);
    metrics_refused("cuptiProfilerHostGetConfigImage", r);
    return 0;
  }
  CUpti_Profiler_Host_GetNumOfPasses_Params np = {CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
  np.pConfigImage = config;
  np.configImageSize = cs.configImageSize;
  r = cuptiProfilerHostGetNumOfPasses(&np);
  if (r != CUPTI_SUCCESS) {
    free(config);
    metrics_refused("cuptiProfilerHostGetNumOfPasses", r);
    return 0;
  }
  mx.config = config;
  mx.config_size = cs.configImageSize;
  mx.ctx = ctx;
  char v[240];
  snprintf(v, sizeof v,
           "%zu passes a launch; device %u (%s); %zu metrics; the launch configurations covering %u%% of the latest GPU "
           "time, at most %u launches, each launched %u times or more",
           (size_t)np.numOfPasses, dev, cn.pChipName, mx.n, mx.coverage, mx.budget, mx.at);
  note("metrics", v);
  return 1;
}

/* Enables the range profiler on mx.ctx, the first time, and makes the
 * counter data image of one range. mx.mu held. */
static int metrics_enable(void) {
  if (mx.counter) return 1;
  CUpti_RangeProfiler_Enable_Params en = {CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
  en.ctx = mx.ctx;
  MX_TRY(cuptiRangeProfilerEnable(&en), "cuptiRangeProfilerEnable");
  mx.obj = en.pRangeProfilerObject;
  CUpti_RangeProfiler_GetCounterDataSize_Params gs = {CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
  gs.pRangeProfilerObject = mx.obj;
  gs.pMetricNames = mx.names;
  gs.numMetrics = mx.n;
  gs.maxNumOfRanges = 1;
  gs.maxNumRangeTreeNodes = 1;
  MX_TRY(cuptiRangeProfilerGetCounterDataSize(&gs), "cuptiRangeProfilerGetCounterDataSize");
  mx.counter = calloc(1, gs.counterDataSize);
  if (!mx.counter) {
    metrics_refused("no memory for the counter data image", CUPTI_SUCCESS);
    return 0;
  }
  mx.counter_size = gs.counterDataSize;
  return 1;
}

/* Starts measuring the launch cb enters; 0 when it is not measured. mx.mu held. */
static int metrics_start(const CUpti_CallbackData *cb) {
  if (mx.config && cb->context != mx.ctx) return 0; /* one context a process */
  CUresult sr = cu_ctx_sync();
  if (sr != CUDA_SUCCESS) {
    char v[96];
    snprintf(v, sizeof v, "stopped after %u launches: cuCtxSynchronize returned %d", mx.done, (int)sr);
    note("metrics_stopped", v);
    atomic_store(&mx.on, 0);
    return 0;
  }
  tls_window_start = now_ns();
  if (!metrics_ready(cb->context) || !metrics_enable()) return 0;
  CUpti_RangeProfiler_CounterDataImage_Initialize_Params di = {
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
  di.pRangeProfilerObject = mx.obj;
  di.pCounterData = mx.counter;
  di.counterDataSize = mx.counter_size;
  MX_TRY(cuptiRangeProfilerCounterDataImageInitialize(&di), "cuptiRangeProfilerCounterDataImageInitialize");
  CUpti_RangeProfiler_SetConfig_Params sc = {CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
  sc.pRangeProfilerObject = mx.obj;
  sc.pConfig = mx.config;
  sc.configSize = mx.config_size;
  sc.pCounterDataImage = mx.counter;
  sc.counterDataImageSize = mx.counter_size;
  sc.range = CUPTI_AutoRange;
  sc.replayMode = CUPTI_KernelReplay;
  sc.maxRangesPerPass = 1;
  sc.numNestingLevels = 1;
  sc.minNestingLevel = 1;
  sc.passIndex = 0;
  sc.targetNestingLevel = 1;
  MX_TRY(cuptiRangeProfilerSetConfig(&sc), "cuptiRangeProfilerSetConfig");
  CUpti_RangeProfiler_Start_Params st = {CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
  st.pRangeProfilerObject = mx.obj;
  MX_TRY(cuptiRangeProfilerStart(&st), "cuptiRangeProfilerStart");
  return 1;
}

/* Stops the measuring of the launch with correlation id corr and writes its
 * M lines. mx.mu held. */
static int metrics_finish(uint32_t corr) {
  CUpti_RangeProfiler_Stop_Params sp = {CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
  sp.pRangeProfilerObject = mx.obj;
  MX_TRY(cuptiRangeProfilerStop(&sp), "cuptiRangeProfilerStop");
  if (!sp.isAllPassSubmitted) {
    metrics_refused("cuptiRangeProfilerStop: not every pass was submitted with kernel replay", CUPTI_SUCCESS);
    return 0;
  }
  CUpti_RangeProfiler_DecodeData_Params dd = {CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
  dd.pRangeProfilerObject = mx.obj;
  MX_TRY(cuptiRangeProfilerDecodeData(&dd), "cuptiRangeProfilerDecodeData");
  CUpti_RangeProfiler_GetCounterDataInfo_Params gi = {CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
  gi.pCounterDataImage = mx.counter;
  gi.counterDataImageSize = mx.counter_size;
  MX_TRY(cuptiRangeProfilerGetCounterDataInfo(&gi), "cuptiRangeProfilerGetCounterDataInfo");
  if (gi.numTotalRanges < 1) {
    note("metrics_missed", "a measured launch gave no range");
    return 1;
  }
  CUpti_Profiler_Host_EvaluateToGpuValues_Params ev = {CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
  ev.pHostObject = mx.host;
  ev.pCounterDataImage = mx.counter;
  ev.counterDataImageSize = mx.counter_size;
  ev.ppMetricNames = mx.names;
  ev.numMetrics = mx.n;
  ev.rangeIndex = 0;
  ev.pMetricValues = mx.values;
  MX_TRY(cuptiProfilerHostEvaluateToGpuValues(&ev), "cuptiProfilerHostEvaluateToGpuValues");
  sbuf b = {0};
  for (size_t i = 0; i < mx.n; i++) {
    sb_fmt(&b, "M\t%u", (unsigned)corr);
    sb_field(&b, mx.names[i]);
    sb_fmt(&b, "\t%.17g\n", mx.values[i]);
  }
  emit_lines(&b, mx.n);
  free(b.p);
  mx.done++;
  return 1;
}

/* Disables the range profiler (before CUPTI detaches). mx.mu held. */
static void metrics_disable(void) {
  if (!mx.obj) return;
  CUpti_RangeProfiler_Disable_Params dp = {CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
  dp.pRangeProfilerObject = mx.obj;
  CUptiResult r = cuptiRangeProfilerDisable(&dp);
  mx.obj = NULL;
  if (r != CUPTI_SUCCESS) metrics_refused("cuptiRangeProfilerDisable", r);
}

/* The first context and thread that launched a kernel, and whether another
 * did: a measured launch's forced flush (metrics_exit) is safe only while
 * one thread launches on one context, which its measurement drained. */
static _Atomic(uintptr_t) first_ctx;
static _Atomic(uint32_t) first_launcher;
static atomic_int many_launchers;

static void metrics_launcher(CUcontext ctx) {
  if (atomic_load_explicit(&many_launchers, memory_order_relaxed)) return;
  uintptr_t c = 0;
  uint32_t t = 0, me = thread_id();
  int other = (!atomic_compare_exchange_strong(&first_ctx, &c, (uintptr_t)ctx) && c != (uintptr_t)ctx) ||
              (!atomic_compare_exchange_strong(&first_launcher, &t, me) && t != me);
  if (other && !atomic_exchange(&many_launchers, 1))
    note("metrics_held",
         "kernels launched from more than one thread or context: the records are not flushed at measured launches "
         "(a kernel of another still running would lose its times), so later choices of targets see the GPU time "
         "before the first measurement");
}

/* Whether one more launch may be measured now: while the measuring's time
 * so far is under DEEPPROF_CUPTI_METRICS_FLOOR_MS (default 1500), or at most
 * DEEPPROF_CUPTI_METRICS_SHARE percent (default 20) of the program's own
 * time since its process started (its time less the measuring's). A target
 * not affordable stays wanted, measured at a later launch once the
 * program's time has grown; the first refusal of a wanted target is noted
 * (metrics_capped), where say. */
static int metrics_affordable(int say) {
  uint64_t cut = atomic_load(&mx.cut_ns);
  if (cut < mx.floor_ns) return 1;
  uint64_t now = now_ns(), own = now > mx.start_ns + cut ? now - mx.start_ns - cut : 0;
  if (cut * 100 <= own * (uint64_t)mx.share) return 1;
  if (say && !atomic_exchange(&mx.capped, 1)) {
    char v[200];
    snprintf(v, sizeof v,
             "after %u launches, %.2f s: the measuring reached %u%% of the program's own time (%.2f s so far); "
             "targets wait until it has run longer",
             mx.done, (double)cut / 1e9, mx.share, (double)own / 1e9);
    note("metrics_capped", v);
  }
  return 0;
}

/* At a launch call's entry (the program's own call, not a driver call made
 * inside a runtime one): counts the kernel's launches and, at a wanted
 * kernel's launch, starts the range profiler and keeps mx.mu until the exit. */
static void metrics_enter(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData *cb) {
  uint32_t dims[6];
  CUstream stream = NULL;
  if (!launches_kernel(cb) || atomic_load(&paused) || !launch_dims(domain, cbid, cb->functionParams, dims, &stream))
    return;
  int i = symbol_slot(config_hash(cb->symbolName, dims));
  if (i < 0) return;
  metrics_count(i, cb->symbolName);
  metrics_launcher(cb->context);
  if (atomic_load(&mx.state[i]) != TARGET_WANTED || !atomic_load(&mx.on) || !metrics_affordable(1) ||
      capturing(stream))
    return;
  pthread_mutex_lock(&mx.mu);
  uint8_t wanted = TARGET_WANTED;
  if (!atomic_load(&mx.on) || !metrics_affordable(1) ||
      !atomic_compare_exchange_strong(&mx.state[i], &wanted, TARGET_DONE)) {
    pthread_mutex_unlock(&mx.mu);
    return;
  }
  if (!metrics_start(cb)) {
    pthread_mutex_unlock(&mx.mu);
    return;
  }
  tls_measuring = cb->correlationId + 1;
}

/* At the exit of the launch call metrics_enter started measuring: its M
 * lines, then its W line. */
static void metrics_exit(void) {
  uint32_t corr = tls_measuring - 1;
  tls_measuring = 0;
  metrics_finish(corr);
  sbuf b = {0};
  uint64_t end = now_ns();
  atomic_fetch_add(&mx.cut_ns, end - tls_window_start);
  sb_fmt(&b, "W\t%u\t%" PRIu64 "\t%" PRIu64 "\n", (unsigned)corr, tls_window_start, end);
  emit(&b);
  free(b.p);
  if (mx.done >= mx.budget) atomic_store(&mx.on, 0);
  pthread_mutex_unlock(&mx.mu);
  if (!atomic_load(&detached) && !atomic_load(&many_launchers)) cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

/* Ends the measuring before CUPTI detaches (release: the range profiler is
 * disabled) or the process exits. */
static void metrics_end(int release) {
  if (!mx.env) return;
  atomic_store(&mx.on, 0);
  if (pthread_mutex_trylock(&mx.mu) != 0) {
    /* a launch is being measured on another thread (a detach or an exit
     * beside it, against deepprof_cupti_detach's advice): its exit
     * callback may never come, so nothing waits for it */
    note("metrics_stopped", "a launch was being measured when the measuring ended: the range profiler left enabled");
    return;
  }
  if (!mx.ended && mx.config) {
    char v[32];
    snprintf(v, sizeof v, "%u", mx.done);
    note("metrics_done", v);
    pthread_mutex_lock(&mx.tmu);
    uint32_t left = mx.left;
    pthread_mutex_unlock(&mx.tmu);
    if (left > 0) {
      snprintf(v, sizeof v, "%u", left);
      note("metrics_left", v);
    }
  }
  mx.ended = 1;
  if (release) metrics_disable();
  if (release && mx.host) {
    CUpti_Profiler_Host_Deinitialize_Params hd = {CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
    hd.pHostObject = mx.host;
    cuptiProfilerHostDeinitialize(&hd);
    mx.host = NULL;
  }
  pthread_mutex_unlock(&mx.mu);
}
#else
static void metrics_enter(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData *cb) {
  (void)domain, (void)cbid, (void)cb, (void)launch_dims, (void)launches_kernel, (void)metrics_count;
}
static void metrics_exit(void) { tls_measuring = 0, tls_window_start = 0; }
static void metrics_end(int release) { (void)release; }
#endif

/* ---- API calls that launch work ----------------------------------------- */

/* Whether a runtime/driver function launches a kernel or starts a copy or a
 * set: the calls whose A records are written. */
static int launches_work(const char *name) {
  static const char *prefixes[] = {"cudaLaunch", "cudaGraphLaunch", "cudaMemcpy", "cudaMemset",
                                   "cuLaunch",   "cuGraphLaunch",   "cuMemcpy",   "cuMemset"};
  if (!name || strstr(name, "HostFunc")) return 0;
  for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
    if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0) return 1;
  return 0;
}

/* Depth of traced runtime calls open on this thread: a driver call made
 * inside one (cudaLaunchKernel calls cuLaunchKernel, with the same
 * correlation id) is not written, so each launch has one A record, the call
 * the program made. Driver calls made directly (cuBLAS's cuLaunchKernelEx,
 * Triton's cuLaunchKernel) are written. */
static __thread int tls_runtime_depth;

/* The launch path does no formatting, takes no lock and makes no system
 * call: at the call's exit the callback copies the record's few fields into
 * its thread's ring, and the flusher thread (woken when a ring is a quarter
 * full, and every second) writes the rings out as A lines. A ring that is
 * full (the flusher behind) is written out by its own thread. */
typedef struct {
  uint64_t start, end;
  const char *function; /* CUPTI's name of the function, valid while the process lives */
  uint32_t correlation;
  uint32_t cbid;
  int runtime;
} api_rec;

#define RING_CAP 8192u /* records per thread, a power of two */
#define RING_WAKE (RING_CAP / 4)

typedef struct ring {
  _Atomic uint64_t head; /* the next slot its thread fills */
  _Atomic uint64_t tail; /* the next slot to write out; moved with mu held */
  pthread_mutex_t mu;    /* held by whoever writes the ring out */
  uint32_t tid;
  struct ring *next;
  api_rec rec[RING_CAP];
} ring;

static ring *_Atomic rings; /* every recording thread's ring, newest first; never freed */
static __thread ring *tls_ring;
static __thread sbuf tls_drain;

/* Appends one A line for r, launched on thread tid, to b. */
static void api_line(sbuf *b, const api_rec *r, uint32_t tid) {
  sb_fmt(b, "A\t%" PRIu64 "\t%" PRIu64 "\t%u\t%u\t%s\t%u", r->start, r->end, tid,
         (unsigned)r->correlation, r->runtime ? "runtime" : "driver", (unsigned)r->cbid);
  sb_field(b, r->function ? r->function : "");
  sb_put(b, "\n", 1);
}

/* Writes the records of r not yet written to the output. */
static void drain_ring(ring *r) {
  sbuf *b = &tls_drain;
  pthread_mutex_lock(&r->mu);
  uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
  uint64_t h = atomic_load_explicit(&r->head, memory_order_acquire);
  uint64_t n = 0;
  b->len = 0;
  for (; t < h; t++) {
    api_line(b, &r->rec[t & (RING_CAP - 1)], r->tid);
    if (++n == 512) {
      emit_lines(b, n);
      b->len = 0;
      n = 0;
    }
  }
  if (n > 0) emit_lines(b, n);
  atomic_store_explicit(&r->tail, h, memory_order_release);
  pthread_mutex_unlock(&r->mu);
}

static void drain_rings(void) {
  for (ring *r = atomic_load_explicit(&rings, memory_order_acquire); r; r = r->next) drain_ring(r);
}

/* This thread's ring, made at its first record; NULL when out of memory. */
static ring *thread_ring(void) {
  if (tls_ring) return tls_ring;
  ring *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  pthread_mutex_init(&r->mu, NULL);
  r->tid = thread_id();
  r->next = atomic_load_explicit(&rings, memory_order_relaxed);
  while (!atomic_compare_exchange_weak_explicit(&rings, &r->next, r, memory_order_release,
                                                memory_order_relaxed))
    ;
  tls_ring = r;
  return r;
}

static void api_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                         const CUpti_CallbackData *cb) {
  int runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
  if (cb->callbackSite == CUPTI_API_ENTER) {
    if (runtime)
      tls_runtime_depth++;
    else if (tls_runtime_depth > 0)
      return;
    if (atomic_load_explicit(&mx.on, memory_order_relaxed) && (!runtime || tls_runtime_depth == 1))
      metrics_enter(domain, cbid, cb);
    if (cb->correlationData) *cb->correlationData = now_ns();
    return;
  }
  if (runtime) {
    if (tls_runtime_depth > 0) tls_runtime_depth--;
  } else if (tls_runtime_depth > 0) {
    return;
  }
  uint64_t end = now_ns();
  if (tls_measuring && tls_runtime_depth == 0) metrics_exit();
  api_rec a = {cb->correlationData ? *cb->correlationData : end, end, cb->functionName,
               cb->correlationId, cbid, runtime};
  ring *r = thread_ring();
  if (!r) { /* no ring: the line is written at once */
    sbuf *b = &tls_drain;
    b->len = 0;
    api_line(b, &a, thread_id());
    emit(b);
    return;
  }
  uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
  if (h - atomic_load_explicit(&r->tail, memory_order_acquire) >= RING_CAP) drain_ring(r);
  r->rec[h & (RING_CAP - 1)] = a;
  atomic_store_explicit(&r->head, h + 1, memory_order_release);
  int counted = atomic_fetch_add(&unflushed, 1) + 1 == FLUSH_RECORDS;
  if (((h + 1) & (RING_WAKE - 1)) == 0 || counted) pthread_cond_signal(&wake_cv);
}

/* ---- NVTX ----------------------------------------------------------------- */

static void domain_field(sbuf *b, nvtxDomainHandle_t d) {
  if (!d) {
    sb_field(b, ""); /* the default domain */
    return;
  }
  if (map_field(&domains, (uintptr_t)d, b)) return;
  char v[40];
  snprintf(v, sizeof v, "unknown-%p", (void *)d); /* created before recording began */
  sb_field(b, v);
}

static void message_field(sbuf *b, const nvtxEventAttributes_t *a) {
  if (!a) {
    sb_field(b, "");
    return;
  }
  switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
      sb_field(b, a->message.ascii);
      return;
    case NVTX_MESSAGE_TYPE_UNICODE: {
      char *s = utf8_from_wide(a->message.unicode);
      sb_field(b, s);
      free(s);
      return;
    }
    case NVTX_MESSAGE_TYPE_REGISTERED:
      if (!map_field(&strings, (uintptr_t)a->message.registered, b)) sb_field(b, "");
      return;
    default:
      sb_field(b, "");
  }
}

/* A range name's hash, for range_pushed: of its text, its wide text or its
 * registered string's handle. */
static uint64_t text_hash(const char *s) { return s ? fnv(FNV_BASIS, s, strlen(s)) : 0; }
static uint64_t wide_hash(const wchar_t *w) { return w ? fnv(FNV_BASIS, w, wcslen(w) * sizeof *w) : 0; }
static uint64_t attr_hash(const nvtxEventAttributes_t *a) {
  if (!a) return 0;
  switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
      return text_hash(a->message.ascii);
    case NVTX_MESSAGE_TYPE_UNICODE:
      return wide_hash(a->message.unicode);
    case NVTX_MESSAGE_TYPE_REGISTERED:
      return fnv(FNV_BASIS, &a->message.registered, sizeof a->message.registered);
    default:
      return 0;
  }
}

static void wide_field(sbuf *b, const wchar_t *w) {
  char *s = utf8_from_wide(w);
  sb_field(b, s);
  free(s);
}

/* N kind ts tid id domain name: the name comes from one of text, wide, attr. */
static sbuf *nvtx_line(const char *kind, uint64_t ts, uint64_t id, nvtxDomainHandle_t d) {
  sbuf *b = line_start("N");
  sb_field(b, kind);
  sb_fmt(b, "\t%" PRIu64 "\t%u\t%" PRIu64, ts, thread_id(), id);
  domain_field(b, d);
  return b;
}

static uint64_t range_id(const CUpti_NvtxData *nd) {
  return nd->functionReturnValue ? (uint64_t)(*(const nvtxRangeId_t *)nd->functionReturnValue) : 0;
}

static void nvtx_callback(CUpti_CallbackId cbid, const CUpti_NvtxData *nd) {
  const void *p = nd->functionParams;
  uint64_t ts = now_ns();
  sbuf *b = NULL;
  switch (cbid) {
    /* push / pop */
    case CUPTI_CBID_NVTX_nvtxRangePushA:
      b = nvtx_line("push", ts, 0, NULL);
      sb_field(b, ((const nvtxRangePushA_params *)p)->message);
      range_pushed(NULL, text_hash(((const nvtxRangePushA_params *)p)->message));
      break;
    case CUPTI_CBID_NVTX_nvtxRangePushW:
      b = nvtx_line("push", ts, 0, NULL);
      wide_field(b, ((const nvtxRangePushW_params *)p)->message);
      range_pushed(NULL, wide_hash(((const nvtxRangePushW_params *)p)->message));
      break;
    case CUPTI_CBID_NVTX_nvtxRangePushEx:
      b = nvtx_line("push", ts, 0, NULL);
      message_field(b, ((const nvtxRangePushEx_params *)p)->eventAttrib);
      range_pushed(NULL, attr_hash(((const nvtxRangePushEx_params *)p)->eventAttrib));
      break;
    case CUPTI_CBID_NVTX_nvtxDomainRangePushEx: {
      const nvtxDomainRangePushEx_params *dp = p;
      b = nvtx_line("push", ts, 0, dp->domain);
      message_field(b, dp->core.eventAttrib);
      range_pushed(dp->domain, fnv(attr_hash(dp->core.eventAttrib), &dp->domain, sizeof dp->domain));
      break;
    }
    case CUPTI_CBID_NVTX_nvtxRangePop:
      b = nvtx_line("pop", ts, 0, NULL);
      sb_field(b, "");
      range_popped(NULL);
      break;
    case CUPTI_CBID_NVTX_nvtxDomainRangePop:
      b = nvtx_line("pop", ts, 0, ((const nvtxDomainRangePop_params *)p)->domain);
      sb_field(b, "");
      range_popped(((const nvtxDomainRangePop_params *)p)->domain);
      break;
    /* start / end */
    case CUPTI_CBID_NVTX_nvtxRangeStartA:
      b = nvtx_line("start", ts, range_id(nd), NULL);
      sb_field(b, ((const nvtxRangeStartA_params *)p)->message);
      break;
    case CUPTI_CBID_NVTX_nvtxRangeStartW:
      b = nvtx_line("start", ts, range_id(nd), NULL);
      wide_field(b, ((const nvtxRangeStartW_params *)p)->message);
      break;
    case CUPTI_CBID_NVTX_nvtxRangeStartEx:
      b = nvtx_line("start", ts, range_id(nd), NULL);
      message_field(b, ((const nvtxRangeStartEx_params *)p)->eventAttrib);
      break;
    case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx: {
      const nvtxDomainRangeStartEx_params *dp = p;
      b = nvtx_line("start", ts, range_id(nd), dp->domain);
      message_field(b, dp->core.eventAttrib);
      break;
    }
    case CUPTI_CBID_NVTX_nvtxRangeEnd:
      b = nvtx_line("end", ts, (uint64_t)((const nvtxRangeEnd_params *)p)->id, NULL);
      sb_field(b, "");
      break;
    case CUPTI_CBID_NVTX_nvtxDomainRangeEnd: {
      const nvtxDomainRangeEnd_params *dp = p;
      b = nvtx_line("end", ts, (uint64_t)dp->core.id, dp->domain);
      sb_field(b, "");
      break;
    }
    /* marks */
    case CUPTI_CBID_NVTX_nvtxMarkA:
      b = nvtx_line("mark", ts, 0, NULL);
      sb_field(b, ((const nvtxMarkA_params *)p)->message);
      break;
    case CUPTI_CBID_NVTX_nvtxMarkW:
      b = nvtx_line("mark", ts, 0, NULL);
      wide_field(b, ((const nvtxMarkW_params *)p)->message);
      break;
    case CUPTI_CBID_NVTX_nvtxMarkEx:
      b = nvtx_line("mark", ts, 0, NULL);
      message_field(b, ((const nvtxMarkEx_params *)p)->eventAttrib);
      break;
    case CUPTI_CBID_NVTX_nvtxDomainMarkEx: {
      const nvtxDomainMarkEx_params *dp = p;
      b = nvtx_line("mark", ts, 0, dp->domain);
      message_field(b, dp->core.eventAttrib);
      break;
    }
    /* names: domains and registered strings */
    case CUPTI_CBID_NVTX_nvtxDomainCreateA:
      if (nd->functionReturnValue)
        map_put(&domains, (uintptr_t)(*(const nvtxDomainHandle_t *)nd->functionReturnValue),
                ((const nvtxDomainCreateA_params *)p)->name);
      return;
    case CUPTI_CBID_NVTX_nvtxDomainCreateW:
      if (nd->functionReturnValue) {
        /* the parameter is the name as wchar_t* (NVTX's signature) */
        char *s = utf8_from_wide(*(const wchar_t *const *)p);
        map_put(&domains, (uintptr_t)(*(const nvtxDomainHandle_t *)nd->functionReturnValue), s);
        free(s);
      }
      return;
    case CUPTI_CBID_NVTX_nvtxDomainRegisterStringA:
      if (nd->functionReturnValue)
        map_put(&strings, (uintptr_t)(*(const nvtxStringHandle_t *)nd->functionReturnValue),
                ((const nvtxDomainRegisterStringA_params *)p)->string);
      return;
    case CUPTI_CBID_NVTX_nvtxDomainRegisterStringW:
      if (nd->functionReturnValue) {
        const nvtxDomainRegisterStringW_params *rp = p;
        char *s = utf8_from_wide((const wchar_t *)(const void *)rp->string);
        map_put(&strings, (uintptr_t)(*(const nvtxStringHandle_t *)nd->functionReturnValue), s);
        free(s);
      }
      return;
    default:
      return;
  }
  line_end(b);
}

static void CUPTIAPI on_callback(void *user, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                 const void *data) {
  (void)user;
  if (out.fd < 0) return;
  if (domain == CUPTI_CB_DOMAIN_NVTX)
    nvtx_callback(cbid, (const CUpti_NvtxData *)data);
  else if (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API)
    api_callback(domain, cbid, (const CUpti_CallbackData *)data);
}

/* ---- NVTX domains left out -------------------------------------------------
 *
 * XLA (JAX, TensorFlow) annotates every thunk it runs in its own NVTX domain,
 * "TSL", once a tool is attached to NVTX; recording those ranges through
 * CUPTI made a jitted decode step of ~40 kernels ~25x slower on an H200
 * (0.50 ms a step alone, 12.3 ms recorded; 54,318 N records in one short
 * run). The domains named in DEEPPROF_CUPTI_SKIP_DOMAINS (comma-separated,
 * blanks around a name ignored; "TSL" when the variable is unset, none when
 * it is empty) are therefore left out before they reach CUPTI.
 *
 * Each library built with the nvtx3 headers is an NVTX instance of its own
 * and calls InitializeInjectionNvtx2 at its own first NVTX call. There, once
 * CUPTI's InitializeInjectionNvtx2 has filled the instance's function
 * tables, the slots of its CORE2 module (the domain API: nvtxTypes.h's
 * NvtxCallbackIdCore2) that CUPTI filled get the wrappers below, and CUPTI's
 * functions are kept in cupti_core2. nvtxDomainCreateA/W call CUPTI's and
 * remember the handle of a left-out name; push, pop, start, end, mark and
 * string registration in a left-out domain return at once what NVTX itself
 * returns with no tool attached (nvtxImplCore.h), and otherwise call
 * CUPTI's; nvtxDomainDestroy forgets the handle. The default domain's
 * functions (the CORE module) are not touched. Where the CORE2 table is
 * missing or short, or CUPTI left nvtxDomainCreateA unfilled, or its
 * functions differ from those of an instance taken over before, the
 * instance is left as CUPTI made it and a note says why. */

#define SKIP_MAX 16 /* left-out names, and their handles */

static pthread_mutex_t skip_mu = PTHREAD_MUTEX_INITIALIZER; /* held to write what follows; wrappers read unlocked */
static int skip_parsed;                                     /* skip_names is set */
static int skip_noted;                                      /* the note of what is left out is written */
static char *skip_names[SKIP_MAX];
static int skip_nnames;
static int skip_from_env; /* DEEPPROF_CUPTI_SKIP_DOMAINS is set */
static int skip_more;     /* it names more than SKIP_MAX */

/* Handles of left-out domains: [0, skip_nhandles) is read without a lock on
 * every call; 0 is the place of a destroyed one. Written under skip_mu. */
static _Atomic(uintptr_t) skip_handles[SKIP_MAX];
static atomic_int skip_nhandles;

/* CUPTI's CORE2 functions, by NvtxCallbackIdCore2: each set once, before
 * any table holds its wrapper. */
static NvtxFunctionPointer cupti_core2[NVTX_CBID_CORE2_SIZE];

/* Whether d is a left-out domain: lock-free, over at most SKIP_MAX entries
 * (in practice one). NULL, the default domain, never is. */
static inline int skipped(nvtxDomainHandle_t d) {
  uintptr_t k = (uintptr_t)d;
  if (!k) return 0;
  int n = atomic_load_explicit(&skip_nhandles, memory_order_acquire);
  for (int i = 0; i < n; i++)
    if (atomic_load_explicit(&skip_handles[i], memory_order_relaxed) == k) return 1;
  return 0;
}

static int skip_name(const char *name) {
  if (!name) return 0;
  for (int i = 0; i < skip_nnames; i++)
    if (strcmp(name, skip_names[i]) == 0) return 1;
  return 0;
}

static void skip_handle_add(nvtxDomainHandle_t d) {
  uintptr_t k = (uintptr_t)d;
  if (!k) return;
  pthread_mutex_lock(&skip_mu);
  int n = atomic_load_explicit(&skip_nhandles, memory_order_relaxed), hole = -1;
  for (int i = 0; i < n; i++) {
    uintptr_t h = atomic_load_explicit(&skip_handles[i], memory_order_relaxed);
    if (h == k) {
      pthread_mutex_unlock(&skip_mu);
      return;
    }
    if (!h && hole < 0) hole = i;
  }
  int full = 0;
  if (hole >= 0) {
    atomic_store_explicit(&skip_handles[hole], k, memory_order_release);
  } else if (n < SKIP_MAX) {
    atomic_store_explicit(&skip_handles[n], k, memory_order_relaxed);
    atomic_store_explicit(&skip_nhandles, n + 1, memory_order_release);
  } else {
    full = 1;
  }
  pthread_mutex_unlock(&skip_mu);
  if (full) note("nvtx_skip", "more than 16 left-out domain handles: the later ones are recorded");
}

static void skip_handle_forget(nvtxDomainHandle_t d) {
  uintptr_t k = (uintptr_t)d;
  if (!k || !atomic_load_explicit(&skip_nhandles, memory_order_acquire)) return;
  pthread_mutex_lock(&skip_mu);
  int n = atomic_load_explicit(&skip_nhandles, memory_order_relaxed);
  for (int i = 0; i < n; i++)
    if (atomic_load_explicit(&skip_handles[i], memory_order_relaxed) == k)
      atomic_store_explicit(&skip_handles[i], 0, memory_order_release);
  pthread_mutex_unlock(&skip_mu);
}

/* CUPTI's function in CORE2 slot id, as type t; NULL only in the instant an
 * instance is being taken over on another thread, where the call is then
 * treated as a left-out one. */
#define CUPTI_CORE2(t, id) ((t)cupti_core2[NVTX_CBID_CORE2_##id])

static nvtxDomainHandle_t NVTX_API skip_domain_create_a(const char *name) {
  nvtxDomainCreateA_impl_fntype f = CUPTI_CORE2(nvtxDomainCreateA_impl_fntype, DomainCreateA);
  nvtxDomainHandle_t d = f ? f(name) : (nvtxDomainHandle_t)0;
  if (d && skip_name(name)) skip_handle_add(d);
  return d;
}

static nvtxDomainHandle_t NVTX_API skip_domain_create_w(const wchar_t *name) {
  nvtxDomainCreateW_impl_fntype f = CUPTI_CORE2(nvtxDomainCreateW_impl_fntype, DomainCreateW);
  nvtxDomainHandle_t d = f ? f(name) : (nvtxDomainHandle_t)0;
  if (d && name) {
    char *s = utf8_from_wide(name);
    if (skip_name(s)) skip_handle_add(d);
    free(s);
  }
  return d;
}

static void NVTX_API skip_domain_destroy(nvtxDomainHandle_t d) {
  nvtxDomainDestroy_impl_fntype f = CUPTI_CORE2(nvtxDomainDestroy_impl_fntype, DomainDestroy);
  skip_handle_forget(d); /* before: CUPTI may give the handle to the next domain created */
  if (f) f(d);
}

static int NVTX_API skip_range_push(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
  nvtxDomainRangePushEx_impl_fntype f = CUPTI_CORE2(nvtxDomainRangePushEx_impl_fntype, DomainRangePushEx);
  if (skipped(d) || !f) return NVTX_NO_PUSH_POP_TRACKING;
  return f(d, a);
}

static int NVTX_API skip_range_pop(nvtxDomainHandle_t d) {
  nvtxDomainRangePop_impl_fntype f = CUPTI_CORE2(nvtxDomainRangePop_impl_fntype, DomainRangePop);
  if (skipped(d) || !f) return NVTX_NO_PUSH_POP_TRACKING;
  return f(d);
}

static nvtxRangeId_t NVTX_API skip_range_start(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
  nvtxDomainRangeStartEx_impl_fntype f = CUPTI_CORE2(nvtxDomainRangeStartEx_impl_fntype, DomainRangeStartEx);
  if (skipped(d) || !f) return (nvtxRangeId_t)0;
  return f(d, a);
}

static void NVTX_API skip_range_end(nvtxDomainHandle_t d, nvtxRangeId_t id) {
  nvtxDomainRangeEnd_impl_fntype f = CUPTI_CORE2(nvtxDomainRangeEnd_impl_fntype, DomainRangeEnd);
  if (skipped(d) || !f) return;
  f(d, id);
}

static void NVTX_API skip_mark(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
  nvtxDomainMarkEx_impl_fntype f = CUPTI_CORE2(nvtxDomainMarkEx_impl_fntype, DomainMarkEx);
  if (skipped(d) || !f) return;
  f(d, a);
}

static nvtxStringHandle_t NVTX_API skip_register_a(nvtxDomainHandle_t d, const char *s) {
  nvtxDomainRegisterStringA_impl_fntype f = CUPTI_CORE2(nvtxDomainRegisterStringA_impl_fntype, DomainRegisterStringA);
  if (skipped(d) || !f) return (nvtxStringHandle_t)0;
  return f(d, s);
}

static nvtxStringHandle_t NVTX_API skip_register_w(nvtxDomainHandle_t d, const wchar_t *s) {
  nvtxDomainRegisterStringW_impl_fntype f = CUPTI_CORE2(nvtxDomainRegisterStringW_impl_fntype, DomainRegisterStringW);
  if (skipped(d) || !f) return (nvtxStringHandle_t)0;
  return f(d, s);
}

/* Each wrapper has the exact type of its slot (nvtxTypes.h). */
#define SKIP_SLOT_TYPE(fn, t) \
  _Static_assert(__builtin_types_compatible_p(__typeof__(&fn), t), #fn " is not a " #t)
SKIP_SLOT_TYPE(skip_mark, nvtxDomainMarkEx_impl_fntype);
SKIP_SLOT_TYPE(skip_range_start, nvtxDomainRangeStartEx_impl_fntype);
SKIP_SLOT_TYPE(skip_range_end, nvtxDomainRangeEnd_impl_fntype);
SKIP_SLOT_TYPE(skip_range_push, nvtxDomainRangePushEx_impl_fntype);
SKIP_SLOT_TYPE(skip_range_pop, nvtxDomainRangePop_impl_fntype);
SKIP_SLOT_TYPE(skip_register_a, nvtxDomainRegisterStringA_impl_fntype);
SKIP_SLOT_TYPE(skip_register_w, nvtxDomainRegisterStringW_impl_fntype);
SKIP_SLOT_TYPE(skip_domain_create_a, nvtxDomainCreateA_impl_fntype);
SKIP_SLOT_TYPE(skip_domain_create_w, nvtxDomainCreateW_impl_fntype);
SKIP_SLOT_TYPE(skip_domain_destroy, nvtxDomainDestroy_impl_fntype);

/* The CORE2 slots taken over, each with its wrapper. */
static const struct {
  int id;
  NvtxFunctionPointer wrapper;
} skip_slots[] = {
    {NVTX_CBID_CORE2_DomainCreateA, (NvtxFunctionPointer)skip_domain_create_a},
    {NVTX_CBID_CORE2_DomainCreateW, (NvtxFunctionPointer)skip_domain_create_w},
    {NVTX_CBID_CORE2_DomainDestroy, (NvtxFunctionPointer)skip_domain_destroy},
    {NVTX_CBID_CORE2_DomainRangePushEx, (NvtxFunctionPointer)skip_range_push},
    {NVTX_CBID_CORE2_DomainRangePop, (NvtxFunctionPointer)skip_range_pop},
    {NVTX_CBID_CORE2_DomainRangeStartEx, (NvtxFunctionPointer)skip_range_start},
    {NVTX_CBID_CORE2_DomainRangeEnd, (NvtxFunctionPointer)skip_range_end},
    {NVTX_CBID_CORE2_DomainMarkEx, (NvtxFunctionPointer)skip_mark},
    {NVTX_CBID_CORE2_DomainRegisterStringA, (NvtxFunctionPointer)skip_register_a},
    {NVTX_CBID_CORE2_DomainRegisterStringW, (NvtxFunctionPointer)skip_register_w},
};
#define SKIP_SLOTS (sizeof skip_slots / sizeof skip_slots[0])

/* One NVTX instance's CORE2 table, and what its taken-over slots held. */
typedef struct {
  NvtxFunctionTable table; /* table[id]: the address of slot id's function pointer */
  unsigned int size;       /* ids below it are valid */
  NvtxFunctionPointer held[SKIP_SLOTS];
} core2_view;

/* Reads the CORE2 table of the NVTX instance get_export_table belongs to;
 * returns NULL or why it cannot. */
static const char *core2_read(const void *(*get_export_table)(uint32_t), core2_view *v) {
  const NvtxExportTableCallbacks *cb =
      get_export_table ? (const NvtxExportTableCallbacks *)get_export_table(NVTX_ETID_CALLBACKS) : NULL;
  if (!cb) return "NVTX has no callbacks export table";
  if (cb->struct_size < offsetof(NvtxExportTableCallbacks, GetModuleFunctionTable) + sizeof cb->GetModuleFunctionTable ||
      !cb->GetModuleFunctionTable)
    return "NVTX's callbacks export table has no GetModuleFunctionTable";
  v->table = NULL;
  v->size = 0;
  if (!cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &v->table, &v->size) || !v->table)
    return "NVTX has no CORE2 function table";
  if (v->size <= NVTX_CBID_CORE2_DomainCreateA) return "NVTX's CORE2 function table is too short";
  for (size_t i = 0; i < SKIP_SLOTS; i++) {
    int id = skip_slots[i].id;
    NvtxFunctionPointer *slot = (unsigned int)id < v->size ? v->table[id] : NULL;
    v->held[i] = slot ? *slot : NULL;
  }
  return NULL;
}

/* Parses DEEPPROF_CUPTI_SKIP_DOMAINS once; called with skip_mu held. */
static void skip_parse(void) {
  if (skip_parsed) return;
  skip_parsed = 1;
  const char *p = getenv("DEEPPROF_CUPTI_SKIP_DOMAINS");
  skip_from_env = p != NULL;
  if (!p) p = "TSL";
  while (*p) {
    const char *end = strchr(p, ',');
    if (!end) end = p + strlen(p);
    const char *a = p, *b = end;
    while (a < b && (*a == ' ' || *a == '\t')) a++;
    while (b > a && (b[-1] == ' ' || b[-1] == '\t')) b--;
    if (b > a && skip_nnames == SKIP_MAX) {
      skip_more = 1;
    } else if (b > a) {
      char *s = strndup(a, (size_t)(b - a));
      if (s) skip_names[skip_nnames++] = s;
    }
    p = *end ? end + 1 : end;
  }
}

/* Whether any domain is to be left out (the first call parses the list, and
 * notes when none is). */
static int skip_wanted(void) {
  pthread_mutex_lock(&skip_mu);
  skip_parse();
  int n = skip_nnames, first = !skip_noted;
  if (!n) skip_noted = 1;
  pthread_mutex_unlock(&skip_mu);
  if (!n && first) note("nvtx_skip", "no domain left out: DEEPPROF_CUPTI_SKIP_DOMAINS names none");
  return n > 0;
}

/* Takes over the CORE2 slots CUPTI filled in the instance whose table read
 * `before` before CUPTI's InitializeInjectionNvtx2 ran (or could not be read:
 * why_before says why). Runs inside NVTX's initialization of that instance:
 * its other threads wait for it, or call CUPTI's functions directly. */
static void skip_take_over(const void *(*get_export_table)(uint32_t), const core2_view *before,
                           const char *why_before) {
  core2_view now;
  char v[512];
  const char *why = why_before ? why_before : core2_read(get_export_table, &now);
  if (!why && now.table != before->table) why = "NVTX's CORE2 function table moved";
  size_t taken = 0;
  if (!why) {
    pthread_mutex_lock(&skip_mu);
    int take[SKIP_SLOTS] = {0}, create = 0;
    for (size_t i = 0; i < SKIP_SLOTS && !why; i++) {
      NvtxFunctionPointer f = now.held[i];
      /* a slot CUPTI left as it was still holds NVTX's own initializer, which
       * NVTX makes a no-op once this returns: it is not taken */
      take[i] = f && f != before->held[i] && f != skip_slots[i].wrapper;
      if (take[i] && cupti_core2[skip_slots[i].id] && cupti_core2[skip_slots[i].id] != f)
        why = "CUPTI's NVTX functions differ from those of an NVTX instance taken over before";
      if (skip_slots[i].id == NVTX_CBID_CORE2_DomainCreateA) create = take[i];
    }
    if (!why && !create) why = "CUPTI did not fill nvtxDomainCreateA";
    if (!why) {
      for (size_t i = 0; i < SKIP_SLOTS; i++)
        if (take[i]) cupti_core2[skip_slots[i].id] = now.held[i];
      atomic_thread_fence(memory_order_release); /* CUPTI's functions before the wrappers */
      for (size_t i = 0; i < SKIP_SLOTS; i++)
        if (take[i]) {
          *now.table[skip_slots[i].id] = skip_slots[i].wrapper;
          taken++;
        }
    }
    sbuf b = {0};
    int first = !why && !skip_noted;
    if (first) {
      skip_noted = 1;
      for (int i = 0; i < skip_nnames; i++) {
        if (i) sb_str(&b, ",");
        sb_str(&b, skip_names[i]);
      }
      if (skip_from_env)
        sb_fmt(&b, " left out (DEEPPROF_CUPTI_SKIP_DOMAINS%s)", skip_more ? "; names past the 16th ignored" : "");
      else
        sb_str(&b, " left out (the default, DEEPPROF_CUPTI_SKIP_DOMAINS unset): XLA annotates every thunk in its "
                   "domain TSL when a tool is attached, and recording them cost a step ~25x its time");
      sb_fmt(&b, "; %zu NVTX domain functions wrapped", taken);
    }
    pthread_mutex_unlock(&skip_mu);
    if (first) {
      note("nvtx_skip", b.p);
      free(b.p);
      return;
    }
  }
  if (why) {
    snprintf(v, sizeof v, "no domain left out in this NVTX instance: %s; NVTX left as CUPTI set it", why);
    note("nvtx_skip", v);
  }
}

/* ---- setup and teardown --------------------------------------------------- */

static pthread_once_t once = PTHREAD_ONCE_INIT;
static CUpti_SubscriberHandle subscriber;
static int nvtx_injected; /* NVTX called InitializeInjectionNvtx2 */

static const char *cupti_error(CUptiResult r) {
  const char *s = NULL;
  if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s) s = "unknown CUPTI error";
  return s;
}

#define CUPTI_TRY(call, what)                                  \
  do {                                                         \
    CUptiResult r_ = (call);                                   \
    if (r_ != CUPTI_SUCCESS) {                                 \
      char v_[256];                                            \
      snprintf(v_, sizeof v_, "%s: %s", what, cupti_error(r_)); \
      note("cupti_error", v_);                                 \
      fprintf(stderr, "deepprof-cupti: %s\n", v_);             \
    }                                                          \
  } while (0)

static int enable_launch_callbacks(CUpti_CallbackDomain domain, uint32_t size) {
  int n = 0;
  for (uint32_t cbid = 1; cbid < size; cbid++) {
    const char *name = NULL;
    if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !launches_work(name)) continue;
    if (cuptiEnableCallback(1, subscriber, domain, cbid) == CUPTI_SUCCESS) n++;
  }
  return n;
}

static void finish(void);

/* Held by the flusher around its CUPTI flush, and by finish(): once finish
 * has run, the flusher never calls into CUPTI again (the process is exiting). */
static pthread_mutex_t flush_mu = PTHREAD_MUTEX_INITIALIZER;

/* Set once deepprof_cupti_detach has detached CUPTI from the process: from
 * then on nothing calls into CUPTI (a call would attach it again). */
static atomic_int detached;

/* Every second, FLUSH_MIN_MS after the last time once FLUSH_RECORDS launch
 * calls wait, and FLUSH_HURRY_MS after it once a loop's new kernel hurries
 * it (metrics_count), ask CUPTI for the buffers whose records are all complete
 * (cuptiActivityFlushPeriod alone returns only full buffers, so a killed
 * process would lose most kernels); then, and whenever a thread's ring is a
 * quarter full, write the rings out; then write our line buffer out. */
static void *flusher(void *arg) {
  (void)arg;
  uint64_t last = mono_ms(); /* the last CUPTI flush */
  for (;;) {
    pthread_mutex_lock(&wake_mu);
    /* due: a period after the last flush, FLUSH_MIN_MS after it once
     * FLUSH_RECORDS launch calls wait, FLUSH_HURRY_MS once hurried */
    uint64_t due = last + FLUSH_PERIOD_MS;
    if (atomic_load(&unflushed) >= FLUSH_RECORDS) due = last + FLUSH_MIN_MS;
    if (atomic_load(&hurry)) due = last + FLUSH_HURRY_MS;
    uint64_t now = mono_ms();
    if (now < due) {
      struct timespec until;
      clock_gettime(CLOCK_REALTIME, &until);
      uint64_t ns = (uint64_t)until.tv_nsec + (due - now) * 1000000ull;
      until.tv_sec += (time_t)(ns / 1000000000ull);
      until.tv_nsec = (long)(ns % 1000000000ull);
      pthread_cond_timedwait(&wake_cv, &wake_mu, &until);
    }
    pthread_mutex_unlock(&wake_mu);
    now = mono_ms();
    int flush = now >= last + FLUSH_PERIOD_MS ||
                (now >= last + FLUSH_MIN_MS && atomic_load(&unflushed) >= FLUSH_RECORDS) ||
                (now >= last + FLUSH_HURRY_MS && atomic_load(&hurry));
    pthread_mutex_lock(&flush_mu);
    int done = out.closed || out.fd < 0;
    if (!done && flush) {
      atomic_store(&unflushed, 0);
      atomic_store(&hurry, 0);
      if (!atomic_load(&detached)) cuptiActivityFlushAll(0);
      last = now;
    }
    if (!done) {
      drain_done();
      drain_rings();
      if (flush) metrics_choose();
    }
    pthread_mutex_unlock(&flush_mu);
    pthread_mutex_lock(&out.mu);
    done = done || out.closed || out.fd < 0;
    if (!done && out.len > 0) flush_locked();
    pthread_mutex_unlock(&out.mu);
    if (done) return NULL;
  }
}

/* In a child forked from a recording process: record nothing (its pid has no
 * file of its own, and the parent's buffer is not the child's to write). */
static void after_fork_child(void) {
  pthread_mutex_init(&out.mu, NULL);
  /* a forked child measures nothing: its parent's profiler state is not its own */
  pthread_mutex_init(&mx.mu, NULL);
  pthread_mutex_init(&mx.tmu, NULL);
  atomic_store(&mx.on, 0);
  if (out.fd >= 0) close(out.fd);
  out.fd = -1;
  out.len = 0;
}

static int header(void) {
  sbuf b = {0};
  uint32_t api = 0;
  int driver = 0;
  cuptiGetVersion(&api);
  void *cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (cuda) {
    int (*get)(int *) = (int (*)(int *))dlsym(cuda, "cuDriverGetVersion");
    if (get) get(&driver);
    cu_device_get = (cu_device_get_fn)dlsym(cuda, "cuDeviceGet");
    cu_device_uuid = (cu_device_uuid_fn)dlsym(cuda, "cuDeviceGetUuid_v2");
    if (!cu_device_uuid) cu_device_uuid = (cu_device_uuid_fn)dlsym(cuda, "cuDeviceGetUuid");
  }
  char exe[PATH_MAX + 1];
  ssize_t n = readlink("/proc/self/exe", exe, PATH_MAX);
  exe[n > 0 ? n : 0] = 0;
  sb_str(&b, "#" DP_FORMAT);
  sb_fmt(&b, "\tpid=%d\tppid=%d\tcupti_api=%u\tcuda_driver=%d\tstart_ns=%" PRIu64, (int)getpid(),
         (int)getppid(), api, driver, now_ns());
  sb_str(&b, "\texe=");
  sb_escaped(&b, exe);
  /* Who this process is in a run of several: the machine, and what the
   * launcher numbers (torchrun's GROUP_RANK is the node, RANK and LOCAL_RANK
   * the process; DEEPPROF_NODE names the node where no launcher does). */
  char host[256] = "";
  if (gethostname(host, sizeof host - 1) == 0 && host[0]) {
    sb_str(&b, "\thost=");
    sb_escaped(&b, host);
  }
  const char *node = getenv("DEEPPROF_NODE");
  if (!node || !*node) node = getenv("GROUP_RANK");
  const char *ids[][2] = {{"node", node}, {"rank", getenv("RANK")}, {"local_rank", getenv("LOCAL_RANK")}};
  for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
    if (!ids[i][1] || !*ids[i][1]) continue;
    sb_fmt(&b, "\t%s=", ids[i][0]);
    sb_escaped(&b, ids[i][1]);
  }
  sb_put(&b, "\n", 1);
  pthread_mutex_lock(&out.mu);
  memcpy(out.buf, b.p, b.len < OUT_BUF_SIZE ? b.len : OUT_BUF_SIZE);
  out.len = b.len < OUT_BUF_SIZE ? b.len : OUT_BUF_SIZE;
  flush_locked();
  pthread_mutex_unlock(&out.mu);
  free(b.p);
  return 0;
}

static void init(void) {
  const char *dir = getenv("DEEPPROF_CUPTI_DIR");
  if (!dir || !*dir) {
    fprintf(stderr, "deepprof-cupti: DEEPPROF_CUPTI_DIR is not set; recording nothing\n");
    return;
  }
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/cupti-%d.tsv", dir, (int)getpid());
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    fprintf(stderr, "deepprof-cupti: %s: %s; recording nothing\n", path, strerror(errno));
    return;
  }
  out.buf = malloc(OUT_BUF_SIZE);
  if (!out.buf) {
    close(fd);
    return;
  }
  out.fd = fd;
  out.pid = getpid();
  header();
  cxa_demangle = (cxa_demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
  if (!cxa_demangle) {
    void *cxx = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
    if (cxx) cxa_demangle = (cxa_demangle_fn)dlsym(cxx, "__cxa_demangle");
  }
  if (!cxa_demangle) note("demangle", "disabled: __cxa_demangle not found");

  cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
  CUPTI_TRY(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed),
            "cuptiActivityRegisterCallbacks");
  CUPTI_TRY(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "enable CONCURRENT_KERNEL");
  CUPTI_TRY(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY), "enable MEMCPY");
  CUPTI_TRY(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY2), "enable MEMCPY2");
  CUPTI_TRY(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET), "enable MEMSET");
  CUPTI_TRY(cuptiActivityFlushPeriod(FLUSH_PERIOD_MS), "cuptiActivityFlushPeriod");

  CUptiResult r = cuptiSubscribe(&subscriber, (CUpti_CallbackFunc)on_callback, NULL);
  if (r != CUPTI_SUCCESS) {
    char v[256];
    snprintf(v, sizeof v, "disabled: cuptiSubscribe: %s", cupti_error(r));
    note("api", v);
    note("nvtx", v);
  } else {
    int n = enable_launch_callbacks(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE);
    n += enable_launch_callbacks(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE);
    char v[64];
    snprintf(v, sizeof v, "%d launch, copy and set calls traced", n);
    note("api", v);
    metrics_parse();
    r = cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_NVTX);
    if (r != CUPTI_SUCCESS) {
      char w[256];
      snprintf(w, sizeof w, "disabled: cuptiEnableDomain(NVTX): %s", cupti_error(r));
      note("nvtx", w);
    }
  }
  pthread_atfork(NULL, NULL, after_fork_child);
  atexit(finish);
  pthread_t t;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  if (pthread_create(&t, &attr, flusher, NULL) != 0) note("flusher", "not started");
  pthread_attr_destroy(&attr);
}

static void finish(void) {
  if (out.fd < 0 || out.pid != getpid()) return;
  metrics_end(0);
  pthread_mutex_lock(&flush_mu);
  if (!atomic_load(&detached)) cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  drain_done();
  drain_rings();
  pthread_mutex_lock(&out.mu);
  if (out.fd >= 0 && !out.closed) {
    char line[96];
    int n = snprintf(line, sizeof line, "E\t%" PRIu64 "\t%" PRIu64 "\n", out.records, out.dropped);
    if (out.len + (size_t)n > OUT_BUF_SIZE) flush_locked();
    memcpy(out.buf + out.len, line, (size_t)n);
    out.len += (size_t)n;
    flush_locked();
    out.closed = 1;
    close(out.fd);
    out.fd = -1;
  }
  pthread_mutex_unlock(&out.mu);
  pthread_mutex_unlock(&flush_mu);
}

/* ---- pause and resume: the workload's own overhead measurement ---------
 *
 * A workload that measures what the library costs it (deepprof's default
 * one, under DEEPPROF_PHASE=cupti) alternates repeats with recording on and
 * off in one process, as torch.profiler's own overhead is measured: a
 * comparison between processes carries the machine's process-to-process
 * spread, which on the GPU machines measured is larger than the library's
 * cost. It finds these with dlopen(RTLD_NOLOAD) on CUDA_INJECTION64_PATH.
 * Paused, CUPTI stays subscribed but records nothing: no activity kind, no
 * callback. Both return 1 when they changed the state, 0 otherwise (the
 * library is not recording in this process, or it already was in that
 * state); call them between synchronized repeats, with no NVTX range open. */
static atomic_int paused;

/* deepprof_cupti_recording returns 1 when the library records this process
 * (paused or not), 0 otherwise, and changes nothing: a workload asks it
 * before pausing, so that its records hold no pause it did not need (the
 * deep pass counts a kernel's launches up to the first pause). */
DP_EXPORT int deepprof_cupti_recording(void) {
  return out.fd >= 0 && out.pid == getpid() && subscriber && !atomic_load(&detached);
}

/* record_nothing turns every activity kind and callback domain the library
 * records off: CUPTI stays subscribed (pause) until detached. */
static void record_nothing(void) {
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMCPY);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMCPY2);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMSET);
  cuptiEnableDomain(0, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
  cuptiEnableDomain(0, subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
  cuptiEnableDomain(0, subscriber, CUPTI_CB_DOMAIN_NVTX);
}

DP_EXPORT int deepprof_cupti_pause(void) {
  pthread_mutex_lock(&flush_mu); /* not beside a detach */
  if (!deepprof_cupti_recording() || atomic_exchange(&paused, 1)) {
    pthread_mutex_unlock(&flush_mu);
    return 0;
  }
  record_nothing();
  uint64_t at = now_ns();
  pthread_mutex_unlock(&flush_mu);
  char v[64];
  snprintf(v, sizeof v, "paused %" PRIu64, at);
  note("recording", v);
  return 1;
}

DP_EXPORT int deepprof_cupti_resume(void) {
  pthread_mutex_lock(&flush_mu); /* not beside a detach */
  if (!deepprof_cupti_recording() || !atomic_exchange(&paused, 0)) {
    pthread_mutex_unlock(&flush_mu);
    return 0;
  }
  CUPTI_TRY(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "enable CONCURRENT_KERNEL");
  CUPTI_TRY(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY), "enable MEMCPY");
  CUPTI_TRY(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY2), "enable MEMCPY2");
  CUPTI_TRY(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET), "enable MEMSET");
  enable_launch_callbacks(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE);
  enable_launch_callbacks(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE);
  CUPTI_TRY(cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_NVTX), "cuptiEnableDomain(NVTX)");
  uint64_t at = now_ns();
  pthread_mutex_unlock(&flush_mu);
  char v[64];
  snprintf(v, sizeof v, "resumed %" PRIu64, at);
  note("recording", v);
  return 1;
}

/* deepprof_cupti_detach ends the recording for the rest of the process:
 * every record made so far is written, then CUPTI is detached from the
 * process (cuptiUnsubscribe, cuptiFinalize), so that what runs after it runs
 * with no profiler attached: no activity, no callback. A workload that
 * times itself (deepprof's default one) runs its program-alone repeats
 * after it in the same process, instead of a second run of the program.
 * The file then ends with the note "recording detached <ns>" or "recording
 * detach failed: ..." and, at exit, its E line. Returns 1 when CUPTI was
 * detached, 0 otherwise (not recording here, already detached, or CUPTI
 * refused); call it between synchronized repeats, with no NVTX range
 * open, from one thread while no other makes CUDA calls (CUPTI's advice
 * for cuptiFinalize). Its timestamp is taken before CUPTI detaches: any
 * CUPTI call afterwards would attach it again. */
DP_EXPORT int deepprof_cupti_detach(void) {
  pthread_mutex_lock(&flush_mu);
  if (!deepprof_cupti_recording()) {
    pthread_mutex_unlock(&flush_mu);
    return 0;
  }
  record_nothing();
  metrics_end(1);
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  drain_done();
  drain_rings();
  uint64_t at = now_ns();
  CUptiResult r = cuptiUnsubscribe(subscriber);
  if (r == CUPTI_SUCCESS) r = cuptiFinalize();
  atomic_store(&detached, 1);
  /* A buffer CUPTI gave back while it finalized (none is expected: the
   * forced flush above came after every kind was turned off) is written
   * now, the one CUPTI call after the detach. */
  pthread_mutex_lock(&done_mu);
  int late = done_head != NULL;
  pthread_mutex_unlock(&done_mu);
  if (late) drain_done();
  pthread_mutex_unlock(&flush_mu);
  char v[256];
  if (r == CUPTI_SUCCESS)
    snprintf(v, sizeof v, "detached %" PRIu64, at);
  else
    snprintf(v, sizeof v, "detach failed: %s", cupti_error(r));
  note("recording", v);
  return r == CUPTI_SUCCESS;
}

/* Called by the CUDA driver during cuInit when CUDA_INJECTION64_PATH names
 * this library. */
DP_EXPORT int InitializeInjection(void) {
  pthread_once(&once, init);
  const char *p = getenv("NVTX_INJECTION64_PATH");
  if (!nvtx_injected && out.fd >= 0 && (!p || !*p)) note("nvtx", "disabled: NVTX_INJECTION64_PATH is not set");
  return 1;
}

typedef int (*nvtx_init_fn)(const void *(*)(uint32_t));

/* Called by NVTX at its first call when NVTX_INJECTION64_PATH names this
 * library (once per NVTX instance): start recording (so ranges opened before
 * cuInit are seen), let CUPTI's NVTX support fill NVTX's function tables,
 * then wrap the domain functions CUPTI installed (NVTX domains left out,
 * above). */
DP_EXPORT int InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t)) {
  nvtx_injected = 1;
  pthread_once(&once, init);
  /* the libcupti this library was linked with, already loaded */
  void *cupti = NULL;
  Dl_info info;
  if (dladdr((void *)cuptiGetVersion, &info) && info.dli_fname)
    cupti = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  nvtx_init_fn next = cupti ? (nvtx_init_fn)dlsym(cupti, "InitializeInjectionNvtx2") : NULL;
  if (!next || (void *)next == (void *)InitializeInjectionNvtx2) {
    note("nvtx", "disabled: libcupti's InitializeInjectionNvtx2 not found");
    return 0;
  }
  /* the domains left out: the CORE2 table as it is before CUPTI fills it */
  core2_view before = {0};
  int skip = skip_wanted();
  const char *why = skip ? core2_read(get_export_table, &before) : NULL;
  int ok = next(get_export_table);
  note("nvtx", ok ? "enabled: NVTX_INJECTION64_PATH is this library, forwarding to CUPTI"
                  : "disabled: CUPTI's InitializeInjectionNvtx2 failed");
  if (ok && skip) skip_take_over(get_export_table, &before, why);
  return ok;
}
