package settings

import (
	"errors"
	"maps"
)

// Layer is what one place gave — the defaults, a task's labels, a .env file, the environment,
// the flags: a value and its source per setting key. It is a koanf.Provider, which Merge loads.
// Values are kept as given (text, or a flag's typed value); Merge reads them by their kind.
type Layer struct {
	values  map[string]any
	sources map[string]Source
	// unknown are the variables under the prefix that are no setting, for Warnings.
	unknown []Source
}

// NewLayer returns an empty layer, for values a program sets itself (Set).
func NewLayer() Layer { return Layer{values: map[string]any{}, sources: map[string]Source{}} }

// Set gives key the value from src.
func (l Layer) Set(key string, value any, src Source) { l.values[key], l.sources[key] = value, src }

// Source returns where the layer's value of key came from, and whether it has one.
func (l Layer) Source(key string) (Source, bool) {
	src, ok := l.sources[key]
	return src, ok
}

// Read returns the layer's values by key (koanf.Provider).
func (l Layer) Read() (map[string]any, error) { return maps.Clone(l.values), nil }

// ReadBytes is not supported: a layer has values, not bytes (koanf.Provider).
func (l Layer) ReadBytes() ([]byte, error) {
	return nil, errors.New("settings: a layer has values, not bytes")
}

// Defaults is the layer of the settings' defaults.
func (s *Schema) Defaults() Layer {
	l := NewLayer()
	for _, st := range s.Settings {
		if st.Default != "" {
			l.Set(st.Key, st.Default, Source{Kind: FromDefault})
		}
	}
	return l
}

// Labels is the layer of a container's labels: the label lower(prefix).key (Label) sets key.
func (s *Schema) Labels(labels map[string]string) Layer {
	l := NewLayer()
	for _, st := range s.Settings {
		name := s.Label(st.Key)
		if v, ok := labels[name]; ok && v != "" {
			l.Set(st.Key, v, Source{Kind: FromLabel, Name: name})
		}
	}
	return l
}
