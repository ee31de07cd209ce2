package main

// Go's runtime reads GOMEMLIMIT while it starts, before any Go code runs,
// and ends a process whose value it cannot parse with a stack trace. A C
// constructor runs earlier still (the C library calls it before the Go
// runtime's entry, deepprof being linked externally for NVML), so this one
// checks the variable with the runtime's own grammar and ends deepprof with
// one line and exit status 2, a bad command line's, instead.
//
// The grammar is runtime.parseByteCount's (go doc runtime/debug
// SetMemoryLimit): unset, empty or "off"; or a byte count, digits with an
// optional sign, then nothing, "B", "KiB", "MiB", "GiB" or "TiB"; not
// negative, within an int64. A value the runtime takes, deepprof takes.

/*
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// deepprof_parseint is strconv.ParseInt(s[0:n], 10, 64), as the runtime
// has it: an optional '+' or '-', then at least one digit, within an int64.
static int deepprof_parseint(const char *s, size_t n, int64_t *out) {
	int neg = 0;
	if (n > 0 && (s[0] == '+' || s[0] == '-')) {
		neg = s[0] == '-';
		s++;
		n--;
	}
	if (n == 0) {
		return 0;
	}
	uint64_t un = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c < '0' || c > '9') {
			return 0;
		}
		if (un > UINT64_MAX / 10) {
			return 0;
		}
		un *= 10;
		uint64_t un1 = un + (uint64_t)(c - '0');
		if (un1 < un) {
			return 0;
		}
		un = un1;
	}
	if (!neg && un > (uint64_t)INT64_MAX) {
		return 0;
	}
	if (neg && un > (uint64_t)INT64_MAX + 1) {
		return 0;
	}
	*out = neg ? (int64_t)(0 - un) : (int64_t)un;
	return 1;
}

// deepprof_valid_gomemlimit says whether the runtime starts with
// GOMEMLIMIT=s (runtime.readGOMEMLIMIT, then parseByteCount).
static int deepprof_valid_gomemlimit(const char *s) {
	if (s == NULL || s[0] == 0 || strcmp(s, "off") == 0) {
		return 1;
	}
	size_t n = strlen(s);
	int64_t v;
	char last = s[n - 1];
	if (last >= '0' && last <= '9') {
		return deepprof_parseint(s, n, &v) && v >= 0;
	}
	if (last != 'B' || n < 2) {
		return 0;
	}
	char c = s[n - 2];
	if (c >= '0' && c <= '9') {
		return deepprof_parseint(s, n - 1, &v) && v >= 0;
	}
	if (c != 'i' || n < 4) {
		return 0;
	}
	int power;
	switch (s[n - 3]) {
	case 'K': power = 1; break;
	case 'M': power = 2; break;
	case 'G': power = 3; break;
	case 'T': power = 4; break;
	default: return 0;
	}
	uint64_t m = 1;
	for (int i = 0; i < power; i++) {
		m *= 1024;
	}
	if (!deepprof_parseint(s, n - 3, &v) || v < 0) {
		return 0;
	}
	uint64_t un = (uint64_t)v;
	if (un > UINT64_MAX / m) {
		return 0;
	}
	return un * m <= (uint64_t)INT64_MAX;
}

// deepprof_check_gomemlimit ends the process, before the Go runtime
// starts, on a GOMEMLIMIT the runtime would stop on: one line naming the
// variable, its value (a byte that is not printable ASCII as \xNN, the
// first 64 bytes), what it takes, and exit status 2.
__attribute__((constructor)) static void deepprof_check_gomemlimit(void) {
	const char *s = getenv("GOMEMLIMIT");
	if (deepprof_valid_gomemlimit(s)) {
		return;
	}
	static const char hex[] = "0123456789abcdef";
	char buf[512];
	size_t w = 0;
	const char *head = "deepprof: GOMEMLIMIT=\"";
	memcpy(buf, head, strlen(head));
	w = strlen(head);
	size_t i;
	for (i = 0; s[i] != 0 && i < 64; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
			buf[w++] = '\\';
			buf[w++] = 'x';
			buf[w++] = hex[c >> 4];
			buf[w++] = hex[c & 15];
		} else {
			buf[w++] = (char)c;
		}
	}
	if (s[i] != 0) {
		memcpy(buf + w, "...", 3);
		w += 3;
	}
	const char *tail = "\": not a memory limit: give a byte count with an optional B, KiB, MiB, GiB or TiB "
		"(such as 4GiB), or off\n";
	memcpy(buf + w, tail, strlen(tail));
	w += strlen(tail);
	ssize_t r = write(2, buf, w);
	(void)r;
	_exit(2);
}
*/
import "C"

import "unsafe"

// validGOMEMLIMIT is the constructor's check, for its tests.
func validGOMEMLIMIT(s string) bool {
	cs := C.CString(s)
	defer C.free(unsafe.Pointer(cs))
	return C.deepprof_valid_gomemlimit(cs) != 0
}
