package synth

import (
	"strconv"
	"strings"
)

// HostileMangled is a SYNTHETIC mangled C++ name of about 10·levels bytes
// whose demangled name doubles with each level: f(B, A<B,B>,
// A<A<B,B>,A<B,B>>, ...), each level naming the one before twice by a
// back reference. Twenty levels are 223 bytes and demangle to 13 MB.
func HostileMangled(levels int) string {
	s := "_Z1f1B1AIS_S_E"
	for k := 2; k <= levels; k++ {
		i := strings.ToUpper(strconv.FormatInt(int64(k-1), 36))
		s += "S0_IS" + i + "_S" + i + "_E"
	}
	return s
}
