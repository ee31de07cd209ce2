package ncu

import (
	"fmt"
	"strings"

	"github.com/llm-perf-opt/deepprof/internal/model"
)

// DefaultDomain is how ncu writes the default domain in its stack column.
const DefaultDomain = "<default domain>"

// ncuAttrs is the number of ':'-separated fields after a range's name in an
// ncu stack entry: PL_Type, PL_Value, CLR_Type, Color, Msg_Type, Msg (the
// column's header: thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg).
const ncuAttrs = 6

// ParseStackEntry reads one quoted entry of ncu's push/pop stack column
// (without its quotes): Domain:Name:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg.
// The domain is what precedes the first ':' (DefaultDomain is the default
// domain, Range.Domain ""). The name may hold ':' (and '@', '/', quotes,
// spaces), and so may the message, so the name is found in one of the two
// shapes ncu writes (H200, ncu 2025.3.1; fixtures/ncu/h200-cccl-library-domain):
//
//   - message type none: the message is "none" and the name is everything
//     before the last six fields:
//     "<default domain>:inner:with:colons:none:none:none:none:none:none" is
//     range "inner:with:colons";
//   - any other message type (a registered string, as CUB pushes in domain
//     CCCL): the message is the name again, after the message type:
//     "CCCL:cub::DeviceScan::InclusiveScan:none:none:none:none:REGISTERED:cub::DeviceScan::InclusiveScan"
//     is range "cub::DeviceScan::InclusiveScan" of domain "CCCL", as NVIDIA's
//     ncu_report module names it.
//
// Payload, colour and message-type fields never become part of a name: an
// entry in neither shape is an error.
func ParseStackEntry(entry string) (model.Range, error) {
	domain, rest, ok := strings.Cut(entry, ":")
	if !ok {
		return model.Range{}, fmt.Errorf("range %q has no domain:name:attributes form", entry)
	}
	if domain == DefaultDomain {
		domain = ""
	}
	if name, ok := repeatedMessage(rest); ok {
		return model.Range{Domain: domain, Name: name}, nil
	}
	if !strings.HasSuffix(rest, ":none:none") {
		return model.Range{}, fmt.Errorf("range %q: its message is neither none nor its name repeated, so where the name ends is unknown", entry)
	}
	end := len(rest)
	for range ncuAttrs {
		j := strings.LastIndexByte(rest[:end], ':')
		if j < 0 {
			return model.Range{}, fmt.Errorf("range %q has fewer than %d attributes after its name", entry, ncuAttrs)
		}
		end = j
	}
	return model.Range{Domain: domain, Name: rest[:end]}, nil
}

// repeatedMessage finds the name in rest = name:PL_Type:PL_Value:CLR_Type:
// Color:Msg_Type:name, where Msg_Type is not "none" and the four fields and
// Msg_Type hold no ':'. At most one split fits: a longer name would leave
// more than four ':' between the two copies.
func repeatedMessage(rest string) (string, bool) {
	for i := 0; i < len(rest); i++ {
		if rest[i] != ':' {
			continue
		}
		name, tail := rest[:i], rest[i+1:]
		if len(tail) <= len(name) || !strings.HasSuffix(tail, ":"+name) {
			continue
		}
		attrs := tail[:len(tail)-len(name)-1]
		if strings.Count(attrs, ":") != ncuAttrs-2 {
			continue
		}
		if mt := attrs[strings.LastIndexByte(attrs, ':')+1:]; mt == "" || mt == "none" {
			continue
		}
		return name, true
	}
	return "", false
}

// ncuQuantifiers are the characters ncu's NVTX filter syntax gives a
// meaning: '/' between push/pop levels, '[' and ']' for the bottom and top of
// the stack, '+' and '*' for one or any number of levels between two names,
// '@' after a domain name, ',' between start/end ranges. A name that holds
// one needs a '\' before it (Nsight Compute CLI docs, "NVTX Filtering").
const ncuQuantifiers = `@,[]/*+`

// EscapeName writes one domain or range name for an ncu NVTX filter
// expression: each quantifier character gets a '\' before it, and a '\' in
// the name is written as four (our reading of the docs' rule; only the
// escaped '@' has been checked against a real ncu). Spaces and quotes need
// nothing: the expression is one argv element, never seen by a shell.
func EscapeName(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r == '\\':
			b.WriteString(`\\\\`)
		case strings.ContainsRune(ncuQuantifiers, r):
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// IncludeExpr builds an --nvtx-include (or --nvtx-exclude) expression that
// matches launches inside the push/pop ranges levels, outermost first, each
// directly inside the one before: the levels joined by '/', with a trailing
// '/' (which makes even a single name a push/pop range, not a start/end
// one); a named domain is written once, before the ranges, as "Domain@".
// Names are escaped with EscapeName, so a default-domain range literally
// named "LLM@decode_all" becomes `LLM\@decode_all/`, which ncu matched on the
// H200, where "LLM@decode_all/" read LLM as a domain and matched nothing
// (fixtures/logs/ncu-escaped-at-sign-match.txt,
// ncu-no-kernels-profiled-domain-syntax.txt). NVTX keeps one push/pop stack
// per domain ("Each domain maintains its own nvtxRangePush and nvtxRangePop
// stack", NVTX API reference, nvtxDomainCreateA), so levels of different
// domains are an error, and so are no levels.
func IncludeExpr(levels []model.Range) (string, error) {
	if len(levels) == 0 {
		return "", fmt.Errorf("NVTX filter: no range")
	}
	var b strings.Builder
	d := levels[0].Domain
	if d != "" {
		b.WriteString(EscapeName(d))
		b.WriteByte('@')
	}
	for _, l := range levels {
		if l.Domain != d {
			return "", fmt.Errorf("NVTX filter %s: its levels are in %s and %s, and ncu matches the ranges of one domain in one expression (each NVTX domain has its own push/pop stack)",
				model.Path(levels), domainName(d), domainName(l.Domain))
		}
		if l.Name == "" {
			return "", fmt.Errorf("NVTX filter %s: a level has no range name", model.Path(levels))
		}
		b.WriteString(EscapeName(l.Name))
		b.WriteByte('/')
	}
	return b.String(), nil
}

func domainName(d string) string {
	if d == "" {
		return "the default domain"
	}
	return fmt.Sprintf("domain %q", d)
}

// Include turns one configured range path into an ncu --nvtx-include (or
// --nvtx-exclude) expression: model.Configured, then IncludeExpr.
func Include(path, domain string) (string, error) {
	levels, err := model.Configured(path, domain)
	if err != nil {
		return "", err
	}
	return IncludeExpr(levels)
}
