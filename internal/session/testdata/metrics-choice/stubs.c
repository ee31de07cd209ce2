/* SYNTHETIC stubs of the CUPTI functions deepprof_cupti.c calls, for
 * choice_test.c: each succeeds and does nothing; the timestamp is the
 * realtime clock. No header: the names link, the types are the
 * library's. */
#include <stdint.h>
#include <time.h>

int cuptiGetTimestamp(uint64_t *t) {
  struct timespec s;
  clock_gettime(CLOCK_REALTIME, &s);
  *t = (uint64_t)s.tv_sec * 1000000000ull + (uint64_t)s.tv_nsec;
  return 0;
}

int cuptiActivityDisable() { return 0; }
int cuptiActivityEnable() { return 0; }
int cuptiActivityFlushAll() { return 0; }
int cuptiActivityFlushPeriod() { return 0; }
int cuptiActivityGetNextRecord() { return 0; }
int cuptiActivityGetNumDroppedRecords() { return 0; }
int cuptiActivityRegisterCallbacks() { return 0; }
int cuptiDeviceGetChipName() { return 0; }
int cuptiEnableCallback() { return 0; }
int cuptiEnableDomain() { return 0; }
int cuptiFinalize() { return 0; }
int cuptiGetCallbackName() { return 0; }
int cuptiGetDeviceId() { return 0; }
int cuptiGetResultString() { return 0; }
int cuptiGetVersion() { return 0; }
int cuptiProfilerGetCounterAvailability() { return 0; }
int cuptiProfilerHostConfigAddMetrics() { return 0; }
int cuptiProfilerHostDeinitialize() { return 0; }
int cuptiProfilerHostEvaluateToGpuValues() { return 0; }
int cuptiProfilerHostGetConfigImage() { return 0; }
int cuptiProfilerHostGetConfigImageSize() { return 0; }
int cuptiProfilerHostGetNumOfPasses() { return 0; }
int cuptiProfilerHostInitialize() { return 0; }
int cuptiProfilerInitialize() { return 0; }
int cuptiRangeProfilerCounterDataImageInitialize() { return 0; }
int cuptiRangeProfilerDecodeData() { return 0; }
int cuptiRangeProfilerDisable() { return 0; }
int cuptiRangeProfilerEnable() { return 0; }
int cuptiRangeProfilerGetCounterDataInfo() { return 0; }
int cuptiRangeProfilerGetCounterDataSize() { return 0; }
int cuptiRangeProfilerSetConfig() { return 0; }
int cuptiRangeProfilerStart() { return 0; }
int cuptiRangeProfilerStop() { return 0; }
int cuptiSetThreadIdType() { return 0; }
int cuptiSubscribe() { return 0; }
int cuptiUnsubscribe() { return 0; }
