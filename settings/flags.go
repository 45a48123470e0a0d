package settings

import (
	"github.com/knadh/koanf/providers/posflag"
	"github.com/spf13/pflag"
)

// Flags is the layer of the flags of fs that the user gave, read by koanf's pflag provider with
// their flag types (a whole number as the int or int64 of its flag, a switch as a bool): the
// flag FlagName(key) sets key. Flags left at their defaults are not in it, so that weaker
// layers still apply; flags that are no setting (--dry-run, --json, …) are ignored. fs may be
// nil.
func (s *Schema) Flags(fs *pflag.FlagSet) (Layer, error) {
	out := NewLayer()
	if fs == nil {
		return out, nil
	}
	keys := map[string]string{}
	for _, st := range s.Settings {
		keys[FlagName(st.Key)] = st.Key
	}
	// Without a koanf instance, the provider keeps only the flags the user changed.
	values, err := posflag.ProviderWithFlag(fs, ".", nil, func(f *pflag.Flag) (string, any) {
		return keys[f.Name], posflag.FlagVal(fs, f)
	}).Read()
	if err != nil {
		return out, err
	}
	for key, value := range values {
		out.Set(key, value, Source{Kind: FromFlag, Name: FlagName(key)})
	}
	return out, nil
}
