package ncu

import (
	"regexp"
	"strings"
	"sync"
)

// SpellingKey is what two tools' spellings of one demangled kernel name
// have in common: Nsight Compute's demangler and the C++ runtime's
// (__cxa_demangle, which the CUPTI library and nsys use) write one kernel
// differently, so a name from the CUPTI timeline is not found as it is among
// the deep pass's. Seen on the recorded runs (H100, PyTorch 2.11):
//
//	CUPTI: void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)
//	ncu:   void at::vectorized_elementwise_kernel<8, at::CUDAFunctor_add<c10::BFloat16>, std::array<char *, 3>>(int, T2, T3)
//	CUPTI: scale_kernel(float*, float, int)          ncu: scale_kernel(float *, float, int)
//	CUPTI: (anonymous namespace)::f, {lambda()#3}    ncu: <unnamed>::f, [lambda() (instance 3)]
//
// The key drops what differs and keeps what tells kernels apart, the
// function and its template arguments: namespace and class qualifiers
// ("at::native::"), parameter lists but a lambda's (ncu writes template
// parameters, "T2", where the runtime writes types), "void " and "const", integer literal
// suffixes ("3ul"), false/true as 0/1, an integer's cast to its enum type
// ("(cute::SM90::GMMA::Major)0": ncu writes "0"), an empty last template
// argument (ncu writes an empty parameter pack "<a, >"), and every space; the two spellings of
// an anonymous namespace and of a lambda become one. Two kernels whose
// names differ only in what it drops (k<a::Foo> and k<b::Foo>) get one key:
// MatchSpellings leaves such a key unmatched when it sees both, and would
// match the one it sees to the other's spelling otherwise.
func SpellingKey(demangled string) string {
	if len(demangled) > maxKeptName {
		return spellingKey(demangled)
	}
	keys.Lock()
	k, ok := keys.m[demangled]
	keys.Unlock()
	if ok {
		return k
	}
	k = spellingKey(demangled)
	keys.Lock()
	if len(keys.m) >= maxKeptKeys || keys.m == nil {
		keys.m = make(map[string]string)
	}
	// A copy: the caller's string may be part of a larger buffer.
	keys.m[strings.Clone(demangled)] = k
	keys.Unlock()
	return k
}

// keys keeps SpellingKey's answers (its regular expressions run through
// each name several times): a rebuild asks for every kernel name of its
// table more than once, and a process that rebuilds runs again and again
// (the test API) asks for the same names. At most maxKeptKeys names of at
// most maxKeptName bytes are kept, with their keys (at most about 128 MB),
// all forgotten when it is full.
var keys struct {
	sync.Mutex
	m map[string]string
}

const (
	maxKeptKeys = 1 << 14
	maxKeptName = 4 << 10
)

func spellingKey(demangled string) string {
	s := strings.ReplaceAll(demangled, "(anonymous namespace)", "<unnamed>")
	s = cxxLambda.ReplaceAllString(s, "[lambda($1) (instance $2)]")
	// Words first (they need the spaces that end them), then the spaces,
	// then the qualifiers ("at ::f" is "at::f").
	s = literalSuffix.ReplaceAllString(s, "$1")
	s = wordFalse.ReplaceAllString(s, "${1}0")
	s = wordTrue.ReplaceAllString(s, "${1}1")
	s = wordVoidConst.ReplaceAllString(s, "$1")
	s = strings.ReplaceAll(s, " ", "")
	for {
		t := qualifier.ReplaceAllString(s, "$1")
		if t == s {
			break
		}
		s = t
	}
	s = castLiteral.ReplaceAllString(s, "$1")
	s = strings.ReplaceAll(s, ",>", ">")
	return stripParams(s)
}

var (
	// {lambda(float)#1} -> [lambda(float) (instance 1)]
	cxxLambda = regexp.MustCompile(`\{lambda\(([^{}]*?)\)#(\d+)\}`)
	// a namespace or class qualifier, not after a word or '>' (which would
	// make it a member of a template's instance, kept whole by the loop's
	// next rounds); RE2 has no lookbehind, so the character before is
	// captured and put back.
	qualifier     = regexp.MustCompile(`(^|[^\w>])(?:[A-Za-z_]\w*|<unnamed>)::`)
	literalSuffix = regexp.MustCompile(`\b(\d+)(?:[uU][lL]{0,2}|[lL]{1,2}[uU]?)\b`)
	wordFalse     = regexp.MustCompile(`(^|\W)false\b`)
	wordTrue      = regexp.MustCompile(`(^|\W)true\b`)
	wordVoidConst = regexp.MustCompile(`(^|\W)(?:void|const)\b`)
	// an integer template argument of an enum or integer type written as a
	// cast, "(cute::SM90::GMMA::Major)0" (the runtime; ncu writes "0"),
	// once the qualifiers are gone: "(Major)0"
	castLiteral = regexp.MustCompile(`\([A-Za-z_]\w*\)(-?\d)`)
)

// stripParams replaces each parameter list (a "(...)" right after a name
// or a template's '>') by "()", except a lambda's: both tools write its
// parameters' types ("[lambda(float) (instance 1)]"), which tell a float
// kernel from a double one.
func stripParams(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '(' && i > 0 && (isWord(s[i-1]) || s[i-1] == '>') && !strings.HasSuffix(s[:i], "[lambda") {
			depth, j := 0, i
			for ; j < len(s); j++ {
				if s[j] == '(' {
					depth++
				} else if s[j] == ')' {
					if depth--; depth == 0 {
						break
					}
				}
			}
			b.WriteString("()")
			i = j
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func isWord(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// MatchSpellings maps each of names (one tool's spelling, the kernel table's)
// to the key of have (the other's, the deep pass's) that names the same
// kernel: the same string, else the one name of have with its SpellingKey
// when no other of names has that key too. Names with no match are left
// out.
func MatchSpellings(names, have []string) map[string]string {
	exact := make(map[string]bool, len(have))
	byKey := map[string][]string{}
	for _, h := range have {
		exact[h] = true
		k := SpellingKey(h)
		byKey[k] = append(byKey[k], h)
	}
	nameKeys := make([]string, len(names))
	perKey := make(map[string]int, len(names))
	for i, n := range names {
		nameKeys[i] = SpellingKey(n)
		perKey[nameKeys[i]]++
	}
	out := map[string]string{}
	for i, n := range names {
		if exact[n] {
			out[n] = n
			continue
		}
		k := nameKeys[i]
		if hs := byKey[k]; len(hs) == 1 && perKey[k] == 1 {
			out[n] = hs[0]
		}
	}
	return out
}
