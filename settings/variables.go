package settings

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/knadh/koanf/providers/env/v2"
)

// variable is one PREFIX_* variable of the environment or of a .env file.
type variable struct {
	name, value string
	src         Source
}

// Environment is the layer of the process environment that environ returns (nil:
// os.Environ), read by koanf's env provider: PREFIX_KEY gives key its value, and
// PREFIX_KEY_FILE the content of the file it names (ReadValueFile; a relative path is relative
// to the working directory). Other PREFIX_* variables are kept for Warnings, but Reserved ones.
// The errors are a *ConflictError for a setting given by both variables, and a
// *ValueFileError for a file that gives no value, all of them joined.
func (s *Schema) Environment(environ func() []string) (Layer, error) {
	values, err := env.Provider("", env.Opt{Prefix: s.Prefix + "_", EnvironFunc: environ}).Read()
	if err != nil {
		return NewLayer(), err
	}
	vars := make([]variable, 0, len(values))
	for name, value := range values {
		vars = append(vars, variable{name: name, value: fmt.Sprint(value), src: Source{Kind: FromEnv, Name: name}})
	}
	return s.layer(vars, "")
}

// DotEnv is the layer of the .env file at path, read by ReadFile's rule with the limit
// MaxDotEnvFile and parsed by ParseDotEnv: its PREFIX_* lines, as Environment reads the
// environment's; a _FILE's relative path is relative to the .env file's directory. Lines of
// other variables are ignored. A file ReadFile refuses is its *FileError, a line that is not an
// assignment a *SyntaxError; then the layer is empty.
func (s *Schema) DotEnv(path string) (Layer, error) {
	data, err := ReadFile(path, MaxDotEnvFile)
	if err != nil {
		return NewLayer(), err
	}
	// Parsed from the bytes read: reading the file again could read something else.
	assignments, err := ParseDotEnv(path, data)
	if err != nil {
		return NewLayer(), err
	}
	var vars []variable
	for _, a := range assignments {
		if strings.HasPrefix(a.Name, s.Prefix+"_") {
			vars = append(vars, variable{name: a.Name, value: a.Value, src: Source{Kind: FromDotEnv, Name: a.Name, File: path, Line: a.Line}})
		}
	}
	return s.layer(vars, filepath.Dir(path))
}

// layer sorts one place's variables into the settings they set, reading the files of the
// _FILE ones (relative to dir when it is not ""), and keeps the unknown ones.
func (s *Schema) layer(vars []variable, dir string) (Layer, error) {
	out := NewLayer()
	direct, viaFile := map[string]variable{}, map[string]variable{}
	keys := map[string]string{}
	for _, st := range s.Settings {
		keys[s.Variable(st.Key)], keys[s.FileVariable(st.Key)] = st.Key, st.Key
	}
	for _, v := range vars { // a later one (a .env file's later line) replaces an earlier one
		if s.EmptyIsUnset && v.value == "" {
			continue
		}
		key, ok := keys[v.name]
		switch {
		case ok && v.name == s.Variable(key):
			direct[key] = v
		case ok:
			viaFile[key] = v
		case !s.reserved(strings.TrimPrefix(v.name, s.Prefix+"_")):
			out.unknown = append(out.unknown, v.src)
		}
	}
	var errs []error
	for _, st := range s.Settings { // in the settings' order, so that errors come in a stable order
		v, isDirect := direct[st.Key]
		f, isFile := viaFile[st.Key]
		switch {
		case isDirect && isFile:
			errs = append(errs, &ConflictError{Key: st.Key, Variable: v.name, FileVariable: f.name, Value: v.src, File: f.src})
		case isDirect:
			out.Set(st.Key, v.value, v.src)
		case isFile:
			path := f.value
			if dir != "" && !filepath.IsAbs(path) {
				path = filepath.Join(dir, path)
			}
			value, err := ReadValueFile(path)
			if err != nil {
				errs = append(errs, &ValueFileError{Key: st.Key, Variable: f.name, Source: f.src, Path: path, Err: err})
				continue
			}
			src := f.src
			src.ValueFile = path
			out.Set(st.Key, value, src)
		}
	}
	return out, errors.Join(errs...)
}
