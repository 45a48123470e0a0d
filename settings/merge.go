package settings

import (
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/knadh/koanf/v2"
)

// Values are the merged settings: each key's value from the strongest layer that set it, of
// its setting's kind, and where it came from.
type Values struct {
	k       *koanf.Koanf
	sources map[string]Source
}

// Merge merges layers, weakest first, with koanf: a later layer's value of a key replaces an
// earlier one's. Each layer's values are read by their setting's kind first — a Number as an
// int64, a Switch as a bool — and one that is not of its kind is left out and reported as a
// *ValueError naming its source, all of them joined; the Values are complete but for those.
// The layers are not changed.
func (s *Schema) Merge(layers ...Layer) (*Values, error) {
	v := &Values{k: koanf.New("."), sources: map[string]Source{}}
	var errs []error
	for _, l := range layers {
		typed, err := s.typed(l)
		errs = append(errs, err)
		if err := v.k.Load(typed, nil); err != nil {
			return nil, err
		}
		maps.Copy(v.sources, typed.sources)
	}
	return v, errors.Join(errs...)
}

// typed is a copy of l with every value read by its setting's kind. An empty Number without a
// default is left out: "" means not set.
func (s *Schema) typed(l Layer) (Layer, error) {
	out := NewLayer()
	var errs []error
	for _, st := range s.Settings {
		value, ok := l.values[st.Key]
		if !ok {
			continue
		}
		src := l.sources[st.Key]
		text, isText := value.(string)
		switch {
		case st.Kind == Number && isText:
			text = strings.TrimSpace(text)
			if text == "" && st.Default == "" {
				continue
			}
			n, err := strconv.ParseInt(text, 10, 64)
			if err != nil {
				errs = append(errs, &ValueError{Key: st.Key, Kind: Number, Text: text, Source: src})
				continue
			}
			value = n
		case st.Kind == Switch && isText:
			b, ok := parseSwitch(text)
			if !ok {
				errs = append(errs, &ValueError{Key: st.Key, Kind: Switch, Text: text, Source: src})
				continue
			}
			value = b
		case st.Kind == Number:
			n, ok := wholeNumber(value)
			if !ok {
				errs = append(errs, &ValueError{Key: st.Key, Kind: Number, Text: fmt.Sprint(value), Source: src})
				continue
			}
			value = n
		case st.Kind == Switch:
			if _, ok := value.(bool); !ok {
				errs = append(errs, &ValueError{Key: st.Key, Kind: Switch, Text: fmt.Sprint(value), Source: src})
				continue
			}
		case !isText:
			value = fmt.Sprint(value)
		}
		out.Set(st.Key, value, src)
	}
	return out, errors.Join(errs...)
}

// parseSwitch reads true/false, 1/0, yes/no, on/off in any case, blanks around allowed.
func parseSwitch(text string) (value, ok bool) {
	switch strings.ToLower(strings.TrimSpace(text)) {
	case "true", "1", "yes", "on":
		return true, true
	case "false", "0", "no", "off":
		return false, true
	}
	return false, false
}

// wholeNumber is a flag's whole number as an int64.
func wholeNumber(value any) (int64, bool) {
	switch n := value.(type) {
	case int:
		return int64(n), true
	case int64:
		return n, true
	case int32:
		return int64(n), true
	}
	return 0, false
}

// Source returns where key's value came from (the zero Source, a FromDefault, when no layer
// set it).
func (v *Values) Source(key string) Source { return v.sources[key] }

// IsSet says whether a layer set key.
func (v *Values) IsSet(key string) bool { return v.k.Exists(key) }

// Text returns key's value as text ("" when no layer set it).
func (v *Values) Text(key string) string { return v.k.String(key) }

// Unmarshal decodes the values into out, a pointer to a struct whose fields carry the keys in
// `koanf:"key"` tags, with koanf's decoder: an int64 goes into any integer field, text into any
// string type (a redacting Secret type included), and a pointer field stays nil when no layer
// set its key.
func (v *Values) Unmarshal(out any) error {
	return v.k.UnmarshalWithConf("", out, koanf.UnmarshalConf{Tag: "koanf"})
}
