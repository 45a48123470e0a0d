package config

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/knadh/koanf/parsers/dotenv"
	"github.com/knadh/koanf/providers/env"
	"github.com/knadh/koanf/providers/posflag"
	"github.com/knadh/koanf/v2"
	"github.com/spf13/pflag"

	"github.com/regbo/lfp-swarm-lease/settings"
)

// maxEnvFile bounds the .env file: a few dozen settings take some KiB, and a path at a log or a
// disk image must fail, not fill memory. A _FILE's bound is settings.MaxValueFile, the CLI's
// too.
const maxEnvFile = 1 << 20

// value is a setting's text and where it came from.
type value struct {
	text   string
	source string
}

// layer is one source's settings by key.
type layer map[string]value

// flagLayer is the flags the user set; unchanged flags (their defaults) are left to weaker
// layers.
func flagLayer(fs *pflag.FlagSet) (layer, error) {
	out := layer{}
	if fs == nil {
		return out, nil
	}
	byFlag := map[string]string{}
	for _, s := range Settings {
		if s.Flag() != "" {
			byFlag[s.Flag()] = s.Key
		}
	}
	k := koanf.New(".")
	// Without a koanf instance, posflag keeps only the flags that were changed.
	err := k.Load(posflag.ProviderWithFlag(fs, ".", nil, func(f *pflag.Flag) (string, any) {
		return byFlag[f.Name], f.Value.String()
	}), nil)
	if err != nil {
		return nil, fmt.Errorf("config: read the flags: %w", err)
	}
	for key, text := range k.All() {
		s, _ := setting(key)
		out[key] = value{text: fmt.Sprint(text), source: "flag --" + s.Flag()}
	}
	return out, nil
}

// variable is one SWARM_LEASE_DEPLOY_* variable of the environment or the .env file.
type variable struct {
	text string
	// where is "variable NAME" or ".env line N (NAME)".
	where string
}

// processVariables are the process environment's SWARM_LEASE_DEPLOY_* variables.
func processVariables() (map[string]variable, error) {
	k := koanf.New(".")
	// The key is the whole variable name: _FILE forms and unknown names are sorted out later.
	if err := k.Load(env.ProviderWithValue(Prefix, ".", func(name, text string) (string, any) {
		return name, text
	}), nil); err != nil {
		return nil, fmt.Errorf("config: read the environment: %w", err)
	}
	out := map[string]variable{}
	for name, text := range k.All() {
		out[name] = variable{text: fmt.Sprint(text), where: "variable " + name}
	}
	return out, nil
}

// dotEnvVariables are the SWARM_LEASE_DEPLOY_* variables of the .env file at path; errors
// name the file by via: "--env-file", or ".env" for the repository's.
func dotEnvVariables(path, via string) (map[string]variable, error) {
	data, err := settings.ReadFile(path, maxEnvFile)
	var refused *settings.FileError
	if errors.As(err, &refused) { // every error of ReadFile is one
		return nil, refusedFile(via, "", refused)
	}
	// Parsed from the bytes read: reading the file again could read something else.
	parsed, err := dotenv.Parser().Unmarshal(data)
	if err != nil {
		return nil, fmt.Errorf("config: the env file %s is not KEY=VALUE lines: %w: fix it after .env.example", path, err)
	}
	out := map[string]variable{}
	for name, text := range parsed {
		if strings.HasPrefix(name, Prefix) {
			out[name] = variable{text: fmt.Sprint(text), where: fmt.Sprintf("%s line %d (%s)", path, lineOf(data, name), name)}
		}
	}
	return out, nil
}

// lineOf is the line of data that assigns name (1-based; 0 if not found): the dotenv parser
// returns values only, and an error that names the line is quicker to fix.
func lineOf(data []byte, name string) int {
	re := regexp.MustCompile(`^\s*(export\s+)?` + regexp.QuoteMeta(name) + `\s*[=:]`)
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		if re.MatchString(sc.Text()) {
			return n
		}
	}
	return 0
}

// splitVariables sorts one source's variables into its values and its _FILE values (two
// layers, the values stronger), and warns about unknown names. dir resolves relative _FILE
// paths. Empty variables count as unset, so that a copy of .env.example with blank lines sets
// nothing.
func splitVariables(vars map[string]variable, dir string) (values, files layer, warnings []string, err error) {
	values, files = layer{}, layer{}
	for name, v := range vars {
		if v.text == "" {
			continue
		}
		s, isFile, ok := byVariable(name)
		if !ok {
			warnings = append(warnings, unknownWarning(name, v.where))
			continue
		}
		if !isFile {
			values[s.Key] = value{text: v.text, source: v.where}
			continue
		}
		path := v.text
		if !filepath.IsAbs(path) && dir != "" {
			path = filepath.Join(dir, path)
		}
		text, err := readSecretFile(s, path, v.where)
		if err != nil {
			return nil, nil, nil, err
		}
		files[s.Key] = value{text: text, source: "file " + path + " named by " + v.where}
	}
	for key, v := range values {
		if f, both := files[key]; both {
			s, _ := setting(key)
			return nil, nil, nil, &Error{
				Variable: s.Variable() + " and " + s.FileVariable(),
				Source:   v.source + " and " + strings.TrimPrefix(f.source, "file "),
				Problem:  "both are set, so which one is meant is unknown",
				Fix:      "keep one of them",
			}
		}
	}
	return values, files, warnings, nil
}

// byVariable finds the setting a variable names, and whether it is the _FILE form.
func byVariable(name string) (s Setting, isFile, ok bool) {
	for _, s := range Settings {
		switch name {
		case s.Variable():
			return s, false, true
		case s.FileVariable():
			return s, true, true
		}
	}
	return Setting{}, false, false
}

// readSecretFile reads a _FILE's value: the file's text without one trailing newline, which
// editors and `echo` add.
func readSecretFile(s Setting, path, where string) (string, error) {
	data, err := settings.ReadFile(path, settings.MaxValueFile)
	var refused *settings.FileError
	if errors.As(err, &refused) { // every error of ReadFile is one
		return "", refusedFile(s.FileVariable(), where, refused)
	}
	text := strings.TrimSuffix(strings.TrimSuffix(string(data), "\n"), "\r")
	if text == "" {
		return "", &Error{Variable: s.FileVariable(), Source: where, Problem: fmt.Sprintf("the file %s is empty", path), Fix: "write the value into it, or unset the variable"}
	}
	return text, nil
}

// refusedFile is the *Error of a file that name (a variable or a flag) names and that
// settings.ReadFile refused: a directory, a pipe, a device, a file over the limit, a missing or
// unreadable one. It says what the file is, never what it holds.
func refusedFile(name, where string, refused *settings.FileError) *Error {
	return &Error{Variable: name, Source: where, Problem: "the file " + refused.Path + " " + refused.Problem, Fix: refused.Fix}
}
