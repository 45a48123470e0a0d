package wire

// The decoder's parts, for the tests that compare them with real request bodies (package
// wire_test, which may import the APIs that import wire).
var (
	CheckJSON    = checkJSON
	DecodeTokens = decodeTokens
	DecodePlain  = decodePlain
)
