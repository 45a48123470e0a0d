package wire

// Output is the answer of a huma operation whose body is never cached.
type Output[T any] struct {
	CacheControl string `header:"Cache-Control"`
	Body         T
}

// NoStore is body answered with Cache-Control: no-store: every answer of the API is about state
// that changes.
func NoStore[T any](body T) *Output[T] {
	return &Output[T]{CacheControl: "no-store", Body: body}
}
