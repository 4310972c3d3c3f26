package layout

// MergeFirst appends the first n distinct ordinals of a and b, both in
// increasing order.
func MergeFirst(dst, a, b []uint32, n int) []uint32 {
	for len(dst) < n && (len(a) > 0 || len(b) > 0) {
		var next uint32
		switch {
		case len(b) == 0 || (len(a) > 0 && a[0] < b[0]):
			next, a = a[0], a[1:]
		case len(a) == 0 || b[0] < a[0]:
			next, b = b[0], b[1:]
		default:
			next, a, b = a[0], a[1:], b[1:]
		}
		dst = append(dst, next)
	}
	return dst
}
