package wire

// Clients send request bodies like {"leader_token":"…","ttl_seconds":30}: one object of known
// fields, each once, whose strings are printable ASCII without escapes. decodePlain reads such
// a body in one pass over its bytes, without jsontext's machinery (a third of the cost of a fast
// request's decoding). What it takes is a subset of JSON in which duplicate names, escapes,
// invalid UTF-8 and unpaired surrogates cannot occur, so jsontext would read it alike; it takes
// nothing else — another field, another value, whitespace JSON does not allow, anything odd —
// and leaves that to jsontext (DecodeFast), which decodes it exactly or refuses it.

// decodePlain decodes data into v if data is a plain body, and reports whether it did.
func decodePlain(data []byte, v FieldDecoder) bool {
	v.Reset()
	fields := v.Fields()
	i, ok := plainByte(data, skipSpace(data, 0), '{')
	if !ok {
		return false
	}
	if i = skipSpace(data, i); i < len(data) && data[i] == '}' {
		return skipSpace(data, i+1) == len(data)
	}
	var seen uint8 // the fields read, by their bit (FieldDecoder: at most eight)
	for {
		name, j, ok := plainString(data, i)
		if !ok {
			return false
		}
		f := fieldIndex(fields, string(name)) // compared, not kept: no allocation
		if f < 0 || seen&(1<<f) != 0 {
			return false
		}
		seen |= 1 << f
		if i, ok = plainByte(data, skipSpace(data, j), ':'); !ok {
			return false
		}
		if i = skipSpace(data, i); i == len(data) {
			return false
		}
		switch c := data[i]; {
		case c == '"':
			s, j, ok := plainString(data, i)
			if !ok || !v.SetField(f, '"', string(s)) {
				return false
			}
			i = j
		case c == 'n':
			if len(data)-i < len("null") || string(data[i:i+len("null")]) != "null" {
				return false
			}
			i += len("null")
		case c == '-' || '0' <= c && c <= '9':
			j := numberEnd(data, i)
			if j < 0 || !v.SetField(f, '0', string(data[i:j])) {
				return false
			}
			i = j
		default:
			return false
		}
		if i = skipSpace(data, i); i == len(data) {
			return false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return skipSpace(data, i+1) == len(data)
		default:
			return false
		}
	}
}

// skipSpace returns the index of the first byte at or after i that is not JSON whitespace.
func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// plainByte: data[i] is c; it returns the index after it.
func plainByte(data []byte, i int, c byte) (int, bool) {
	if i < len(data) && data[i] == c {
		return i + 1, true
	}
	return i, false
}

// plainString reads the string that starts at data[i] if it is plain: printable ASCII without
// a backslash. It returns its contents and the index after its closing quote.
func plainString(data []byte, i int) (s []byte, next int, ok bool) {
	if i >= len(data) || data[i] != '"' {
		return nil, i, false
	}
	for j := i + 1; j < len(data); j++ {
		switch c := data[j]; {
		case c == '"':
			return data[i+1 : j], j + 1, true
		case c < 0x20 || c >= 0x7f || c == '\\':
			return nil, j, false
		}
	}
	return nil, len(data), false
}

// numberEnd returns the index after the JSON number that starts at data[i], or -1 if none does
// (JSON's grammar: no leading zeros, '+', bare '.', hexadecimal or underscores).
func numberEnd(data []byte, i int) int {
	digits := func(j int) int { // the index after the digits from j; -1 if none
		k := j
		for k < len(data) && '0' <= data[k] && data[k] <= '9' {
			k++
		}
		if k == j {
			return -1
		}
		return k
	}
	if i < len(data) && data[i] == '-' {
		i++
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	default:
		if i = digits(i); i < 0 {
			return -1
		}
	}
	if i < len(data) && data[i] == '.' {
		if i = digits(i + 1); i < 0 {
			return -1
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i = digits(i); i < 0 {
			return -1
		}
	}
	return i
}
