package timeline

// chunks collects values in fixed-size blocks, so that collecting n values
// allocates about n, not the several times n that growing one slice by
// append does; all makes the one slice of exactly n.
type chunks[T any] struct {
	full []([]T)
	cur  []T
	n    int
}

const chunkLen = 1 << 13

func (c *chunks[T]) add(v T) {
	if len(c.cur) == cap(c.cur) {
		if c.cur != nil {
			c.full = append(c.full, c.cur)
		}
		c.cur = make([]T, 0, chunkLen)
	}
	c.cur = append(c.cur, v)
	c.n++
}

// all is every value added, in order, and empties c.
func (c *chunks[T]) all() []T {
	out := make([]T, 0, c.n)
	for _, b := range c.full {
		out = append(out, b...)
	}
	out = append(out, c.cur...)
	*c = chunks[T]{}
	return out
}
