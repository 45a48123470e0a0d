package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/knadh/koanf/providers/env/v2"
	"github.com/knadh/koanf/providers/posflag"
	"github.com/knadh/koanf/v2"
	"github.com/spf13/pflag"

	"github.com/regbo/lfp-swarm-lease/settings"
)

// A layer is what one koanf provider gave: typed values by setting key, and where each came
// from. Load merges the layers in precedence order.
type layer struct {
	values  map[string]any
	sources map[string]Source
}

func newLayer() layer { return layer{values: map[string]any{}, sources: map[string]Source{}} }

// set records one raw value; typed turns the whole numbers into int64 afterwards.
func (l layer) set(key string, value any, src Source) {
	l.values[key], l.sources[key] = value, src
}

// read loads a provider's map into the layer, every key with the source src(key) names.
func (l layer) read(p koanf.Provider, src func(key string) Source) error {
	values, err := p.Read()
	if err != nil {
		return err
	}
	for key, value := range values {
		l.set(key, value, src(key))
	}
	return nil
}

// settingVariables maps each setting's variable under prefix to its key, and suffix appended
// to each name (the _FILE variants) to the same key.
func settingVariables(prefix, suffix string) map[string]string {
	keys := map[string]string{}
	for _, s := range Settings {
		keys[EnvName(prefix, s.Key)+suffix] = s.Key
	}
	return keys
}

// envProvider is koanf's environment provider narrowed to the settings' variables (suffix "")
// or their _FILE variants (suffix "_FILE"), keyed by setting; other variables are dropped.
func envProvider(prefix, suffix string, environ func() []string) *env.Env {
	keys := settingVariables(prefix, suffix)
	return env.Provider(".", env.Opt{Prefix: prefix + "_", EnvironFunc: environ,
		TransformFunc: func(name, value string) (string, any) { return keys[name], value }})
}

// loadEnv is the environment layer: PREFIX_KEY directly, or the content of the file that
// PREFIX_KEY_FILE names (a mounted secret), its trailing newline trimmed. Setting both is an
// error that names both; so is a file that settings.ReadFile refuses (not a regular file, over
// 64 KiB, unreadable) or that is empty, naming the variable, the file and what to do.
func loadEnv(prefix string, environ func() []string) (layer, error) {
	out := newLayer()
	if err := out.read(envProvider(prefix, "", environ), func(key string) Source {
		return Source{Kind: FromEnv, Name: EnvName(prefix, key)}
	}); err != nil {
		return out, err
	}
	paths, err := envProvider(prefix, "_FILE", environ).Read()
	if err != nil {
		return out, err
	}
	var errs []error
	for _, s := range Settings { // in the settings' order, so that errors come in a stable order
		path, ok := paths[s.Key].(string)
		if !ok {
			continue
		}
		name, via := EnvName(prefix, s.Key), EnvName(prefix, s.Key)+"_FILE"
		if _, direct := out.values[s.Key]; direct {
			errs = append(errs, fmt.Errorf("both %s and %s are set: keep one", name, via))
			continue
		}
		data, err := settings.ReadFile(path, settings.MaxValueFile)
		var refused *settings.FileError
		if errors.As(err, &refused) { // every error of ReadFile is one
			errs = append(errs, fmt.Errorf("%s (named by %s) %s: %s", path, via, refused.Problem, refused.Fix))
			continue
		}
		value := strings.TrimRight(string(data), "\r\n")
		if value == "" {
			errs = append(errs, fmt.Errorf("%s (named by %s) is empty: write the value of %s into it, or unset %s", path, via, s.Key, via))
			continue
		}
		out.set(s.Key, value, Source{Kind: FromEnv, Name: path, Via: via})
	}
	return out, errors.Join(errs...)
}

// loadFlags is the flag layer: the settings' flags the user gave, read through koanf's pflag
// provider with their types (the numbers as int64), and where each came from. Unchanged flags
// are left out, so that lower layers still apply.
func loadFlags(fs *pflag.FlagSet) (layer, error) {
	out := newLayer()
	if fs == nil {
		return out, nil
	}
	keys := map[string]string{} // flag name → setting key
	for _, s := range Settings {
		keys[FlagName(s.Key)] = s.Key
	}
	err := out.read(posflag.ProviderWithFlag(fs, ".", nil, func(f *pflag.Flag) (string, any) {
		key, ok := keys[f.Name]
		if !ok || !f.Changed {
			return "", nil // not a setting (--once, --json, …), or not given
		}
		return key, posflag.FlagVal(fs, f)
	}), func(key string) Source { return Source{Kind: FromFlag, Name: FlagName(key)} })
	return out, err
}

// labelProvider is a koanf.Provider over the current Swarm task's container labels: the Swarm
// labels give the namespace and identity; labels named lower(prefix).key give any setting.
type labelProvider struct {
	prefix string
	task   Task
	// label is filled by Read: the label each key came from.
	label map[string]string
}

// Read returns the settings the labels set, by key.
func (p *labelProvider) Read() (map[string]any, error) {
	values := map[string]any{}
	p.label = map[string]string{}
	set := func(key, value, label string) {
		if value != "" {
			values[key], p.label[key] = value, label
		}
	}
	set(KeyNamespace, p.task.ServiceName, "com.docker.swarm.service.name")
	set(KeyHolderID, p.task.NodeID, "com.docker.swarm.node.id")
	set(KeyNodeID, p.task.NodeID, "com.docker.swarm.node.id")
	set(KeyTaskID, p.task.TaskID, "com.docker.swarm.task.id")
	for _, s := range Settings {
		label := LabelName(p.prefix, s.Key)
		if v, ok := p.task.Labels[label]; ok {
			set(s.Key, v, label)
		}
	}
	return values, nil
}

// ReadBytes is not supported: the labels are a map already.
func (p *labelProvider) ReadBytes() ([]byte, error) {
	return nil, errors.New("config: the label provider has no bytes, only values")
}

// loadLabels is the label layer of task.
func loadLabels(prefix string, task Task) layer {
	out := newLayer()
	p := &labelProvider{prefix: prefix, task: task}
	_ = out.read(p, func(key string) Source { return Source{Kind: FromLabel, Name: p.label[key]} }) // Read never fails
	return out
}

// typed turns the whole-number settings of a layer from text into int64 — the type their
// flags have — so that every layer gives the same types. A value that is not a whole number is
// reported with its source. An empty value of a setting without a default means that default
// (max_connections=, renew_interval_ms=) and is dropped.
func (l layer) typed() error {
	var errs []error
	for _, s := range Settings {
		text, ok := l.values[s.Key].(string)
		if !ok || !wholeNumbers[s.Key] {
			continue
		}
		text = strings.TrimSpace(text)
		if text == "" && s.Default == "" {
			delete(l.values, s.Key)
			delete(l.sources, s.Key)
			continue
		}
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			errs = append(errs, fmt.Errorf("invalid %s %q (from %s): want a whole number", s.Key, text, l.sources[s.Key]))
			continue
		}
		l.values[s.Key] = n
	}
	return errors.Join(errs...)
}
