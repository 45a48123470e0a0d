package config

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/regbo/lfp-swarm-lease/settings"
)

// Loader loads a Config. Zero fields fall back to the process's own environment and files.
type Loader struct {
	// EnvPrefix is the variable prefix ("" = DefaultEnvPrefix).
	EnvPrefix string
	// Flags holds the typed flags; only flags the user set count.
	Flags *pflag.FlagSet
	// Environ returns the environment (default os.Environ).
	Environ func() []string
	// Discover finds the current Swarm task; nil disables discovery. It is called only when
	// the store is swarm or the namespace or holder ID is missing.
	Discover func(ctx context.Context) (Task, error)
	// NoHolderID: the command never contends, so a missing holder ID needs no discovery.
	NoHolderID bool
	// NamespaceOptional: the command works without an election (serve without a namespace
	// serves only the elections API), so failed discovery is not an error.
	NamespaceOptional bool
	// StoreDefault replaces the store setting's default (serve: the embedded file store).
	StoreDefault string
	// Remote: the command contends through an elections server when the server setting is
	// set (run); then it needs no Docker access, and discovery never runs.
	Remote bool
	// Hostname, when set, is the holder ID's default outside a Swarm task (no discovered node
	// ID and none configured), so that a missing holder ID is never a reason to discover; nil
	// keeps discovery the only source. Through an elections server (Remote, server set) it is
	// reduced to the candidate id's alphabet: [A-Za-z0-9._:@-], at most 64 characters.
	Hostname func() string
	// Warn receives warnings that do not stop the command, such as an unknown variable under
	// the prefix (nil: dropped).
	Warn func(string)
}

// FlagName returns the flag of a key.
func FlagName(key string) string { return settings.FlagName(key) }

// EnvName returns the variable of a key under prefix.
func EnvName(prefix, key string) string { return schema(prefix).Variable(key) }

// LabelName returns the container label of a key under prefix, e.g. swarm-lease.ttl_ms.
func LabelName(prefix, key string) string { return schema(prefix).Label(key) }

// Keys of the settings that --help groups apart from a command's own flags.
var (
	// ElectionKeys name the election and this contender, and tune the lease.
	ElectionKeys = []string{KeyNamespace, KeyHolderID, KeyNodeID, KeyTaskID, KeyTTLMillis, KeyMaxCASRetries, KeyMaxClockSkewMs}
	// StoreKeys choose the store and connect to it.
	StoreKeys = []string{KeyStore, KeyEtcdCAFile, KeyEtcdCertFile, KeyEtcdKeyFile, KeyEtcdUsername, KeyEtcdPassword,
		KeyEtcdDialTimeoutMs, KeyEtcdRequestTimeoutMs}
)

// FlagGroup is the annotation of a flag that --help lists with the others of its group, in
// one line: "etcd" for the etcd store's connection.
const FlagGroup = "lfp-swarm-lease/group"

// RegisterFlags adds one flag per setting to fs, but for secrets: a command line shows in the
// process list. Each flag's help names its variable and default, and the flags of the store
// connection are annotated as the etcd group (FlagGroup). Defaults are not set on the flags: a flag counts only when
// given, so that lower layers can still apply.
func RegisterFlags(fs *pflag.FlagSet, keys ...string) {
	for _, s := range Settings {
		if len(keys) > 0 && !slices.Contains(keys, s.Key) || s.Kind == settings.Secret {
			continue
		}
		help := flagUsage(s, s.Default)
		name := FlagName(s.Key)
		if s.Kind == settings.Number {
			fs.Int64(name, 0, help)
		} else {
			fs.String(name, "", help)
		}
		if slices.Contains(StoreKeys, s.Key) && s.Key != KeyStore {
			_ = fs.SetAnnotation(name, FlagGroup, []string{"etcd"})
		}
	}
}

// SetFlagDefault shows, in the help of key's flag in fs, the default text a command uses
// instead of the setting's (serve's store).
func SetFlagDefault(fs *pflag.FlagSet, key, text string) {
	for _, s := range Settings {
		if f := fs.Lookup(FlagName(key)); f != nil && s.Key == key {
			f.Usage = flagUsage(s, text)
		}
	}
}

// flagUsage is a setting's flag help: its help, then its variable and its default — the
// default's text, else the one the help ends with ("… (default: a third of the TTL)").
func flagUsage(s Setting, defaultText string) string {
	help := s.Help
	if i := strings.LastIndex(help, " (default: "); i >= 0 && strings.HasSuffix(help, ")") {
		if defaultText == "" {
			defaultText = help[i+len(" (default: ") : len(help)-1]
		}
		help = help[:i]
	}
	help += " (" + EnvName(DefaultEnvPrefix, s.Key)
	if defaultText != "" {
		help += "; default " + defaultText
	}
	return help + ")"
}

// Load reads every layer, validates the result, and reports the first problems found, each
// naming the setting and where its value came from.
func (l Loader) Load(ctx context.Context) (*Config, error) {
	prefix := cmp.Or(l.EnvPrefix, DefaultEnvPrefix)
	if !validPrefix(prefix) {
		return nil, fmt.Errorf("invalid --env-prefix %q: use letters, digits and '_', starting with a letter", prefix)
	}
	environ := l.Environ
	if environ == nil {
		environ = os.Environ
	}
	s := schema(prefix)

	defaults := s.Defaults()
	if l.StoreDefault != "" {
		defaults.Set(KeyStore, l.StoreDefault, Source{Kind: FromDefault})
	}
	env, err := s.Environment(environ)
	if l.Warn != nil {
		for _, w := range s.Warnings(env) {
			l.Warn(w)
		}
	}
	if err != nil {
		return nil, err
	}
	flags, err := s.Flags(l.Flags)
	if err != nil {
		return nil, err
	}
	if err := refuseSecrets(s, flags); err != nil {
		return nil, err
	}

	// Discovery only when it can matter: the Swarm store wants task metadata anyway, and any
	// store needs a namespace and a holder ID. (A value of the wrong kind is reported below.)
	upper, _ := s.Merge(defaults, env, flags)
	var task *Task
	labelLayer := settings.NewLayer()
	needNamespace := upper.Text(KeyNamespace) == ""
	// Without a hostname default, a missing holder ID can only come from the task.
	needHolder := !l.NoHolderID && upper.Text(KeyHolderID) == "" && l.Hostname == nil
	remote := l.Remote && upper.Text(KeyServer) != ""
	if l.Discover != nil && !remote && (upper.Text(KeyStore) == string(StoreSwarm) || needNamespace || needHolder) {
		t, err := l.Discover(ctx)
		switch {
		case err == nil:
			task = &t
			labelLayer = labels(s, t)
			if err := refuseSecrets(s, labelLayer); err != nil {
				return nil, err
			}
		case (needHolder || needNamespace) && !l.NamespaceOptional:
			return nil, discoveryFailed(prefix, needNamespace, needHolder, err)
		}
	}
	if l.Hostname != nil && !l.NoHolderID {
		// Below every other layer: a task's node ID, a variable or a flag wins. Through an
		// elections server the holder ID is the candidate id, of a smaller alphabet.
		h := l.Hostname()
		if remote {
			h = candidateFromHostname(h)
		}
		if h != "" {
			defaults.Set(KeyHolderID, h, Source{Kind: FromDefault, Name: "the hostname"})
		}
	}

	// Every layer's values are read by their kind; a value that is not a whole number is
	// dropped with an error, so that it is reported once, with its source.
	values, typeErr := s.Merge(defaults, labelLayer, env, flags)
	c, err := build(prefix, values, task)
	return c, errors.Join(typeErr, err)
}

// discoveryFailed is the error of a command that lacks a namespace or holder ID which no Swarm
// task could give: the missing settings and how to set them first, then why discovery failed —
// on another store than swarm that failure is no cause of its own.
func discoveryFailed(prefix string, namespace, holder bool, err error) error {
	var missing, set []string
	if namespace {
		missing, set = append(missing, "namespace"), append(set, "--"+FlagName(KeyNamespace)+" or "+EnvName(prefix, KeyNamespace))
	}
	if holder {
		missing, set = append(missing, "holder ID"), append(set, "--"+FlagName(KeyHolderID)+" or "+EnvName(prefix, KeyHolderID))
	}
	return &discoveryError{err: err, msg: fmt.Sprintf("no %s: set %s (discovered only in a Swarm task with the Docker socket mounted; here: %v)",
		strings.Join(missing, " and no "), strings.Join(set, ", and "), err)}
}

// discoveryError is ErrDiscovery with its message and the discovery's error.
type discoveryError struct {
	msg string
	err error
}

func (e *discoveryError) Error() string        { return e.msg }
func (e *discoveryError) Unwrap() error        { return e.err }
func (e *discoveryError) Is(target error) bool { return target == ErrDiscovery }

func validPrefix(p string) bool {
	for i, r := range p {
		switch {
		case r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case (r >= '0' && r <= '9' || r == '_') && i > 0:
		default:
			return false
		}
	}
	return p != ""
}

// refuseSecrets refuses a secret that a flag or a container label gives: a command line shows
// in the process list, a label to anyone who may inspect the container. The value is never
// quoted; the error says where to put it instead.
func refuseSecrets(s *settings.Schema, l settings.Layer) error {
	var errs []error
	for _, st := range s.Settings {
		if src, set := l.Source(st.Key); set && st.Kind == settings.Secret {
			errs = append(errs, secretRefused(s, st.Key, src.String()))
		}
	}
	return errors.Join(errs...)
}

// secretRefused is the error of a secret given where it would show: where, e.g. "flag
// --etcd-password".
func secretRefused(s *settings.Schema, key, where string) error {
	return fmt.Errorf("%s is refused: %s is a secret, read only from %s (naming a file that holds it, such as a mounted secret) or %s; a flag would show it to every user in the process list, a label to whoever may inspect the container",
		where, key, s.FileVariable(key), s.Variable(key))
}

// SecretFlag explains a flag parser's error about a flag that is a secret's name (pflag:
// "unknown flag: --etcd-password"): such a setting has no flag. It returns nil for any other
// error. The flag's value is in no parser error, so none is quoted.
func SecretFlag(prefix string, err error) error {
	prefix = cmp.Or(prefix, DefaultEnvPrefix)
	rest, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return nil
	}
	name, _, _ := strings.Cut(rest, "=")
	s := schema(prefix)
	for _, st := range s.Settings {
		if st.Kind == settings.Secret && FlagName(st.Key) == name {
			return secretRefused(s, st.Key, "flag --"+name)
		}
	}
	return nil
}

// SecretVariables are the variables that can carry a secret under prefix — each secret's
// variable and its _FILE variant — which run keeps from its command's environment: the
// command has no business with run's store credentials, and its environment is readable in
// /proc by whoever may read the command's.
func SecretVariables(prefix string) []string {
	s := schema(prefix)
	var out []string
	for _, st := range s.Settings {
		if st.Kind == settings.Secret {
			out = append(out, s.Variable(st.Key), s.FileVariable(st.Key))
		}
	}
	return out
}
