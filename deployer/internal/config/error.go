package config

import (
	"errors"
	"fmt"

	"github.com/regbo/lfp-swarm-lease/settings"
)

// Error is a setting that is missing, malformed or contradictory. The deployer exits 2 on
// one, before it changes anything.
type Error struct {
	// Variable is the setting's variable (or both variables, for a value and its _FILE), or,
	// for the .env file, --env-file or .env.
	Variable string
	// Source is where the value came from, e.g. "flag --replicas" or ".env line 4"; "" when
	// the setting is missing.
	Source string
	// Problem says what is wrong.
	Problem string
	// Fix says what to do.
	Fix string
}

// Error reads "config: SWARM_LEASE_DEPLOY_REPLICAS (from .env line 4): "x" is not a whole
// number: use 1 or more".
func (e *Error) Error() string {
	s := "config: " + e.Variable
	if e.Source != "" {
		s += " (from " + e.Source + ")"
	}
	return fmt.Sprintf("%s: %s: %s", s, e.Problem, e.Fix)
}

// fromKernel turns the settings kernel's errors (joined or not) into *Errors, joined; envFile
// names the .env file (--env-file or .env) in the errors of the file itself. Any other error is
// kept.
func fromKernel(err error, envFile string) error {
	if err == nil {
		return nil
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		var errs []error
		for _, e := range joined.Unwrap() {
			errs = append(errs, fromKernel(e, envFile))
		}
		return errors.Join(errs...)
	}
	var (
		value    *settings.ValueError
		conflict *settings.ConflictError
		file     *settings.ValueFileError
		syntax   *settings.SyntaxError
		refused  *settings.FileError
	)
	switch {
	case errors.As(err, &value):
		s, _ := schema.Lookup(value.Key)
		if value.Kind == settings.Switch {
			return &Error{Variable: variable(s.Key), Source: describe(value.Source), Problem: fmt.Sprintf("%q is not true or false", value.Text), Fix: "set true or false"}
		}
		return notANumber(s, value.Text, value.Source)
	case errors.As(err, &conflict):
		return &Error{
			Variable: conflict.Variable + " and " + conflict.FileVariable,
			Source:   describe(conflict.Value) + " and " + describe(conflict.File),
			Problem:  "both are set, so which one is meant is unknown",
			Fix:      "keep one of them",
		}
	case errors.As(err, &file):
		if errors.As(file.Err, &refused) {
			return refusedFile(file.Variable, describe(file.Source), refused)
		}
		return &Error{Variable: file.Variable, Source: describe(file.Source), Problem: fmt.Sprintf("the file %s is empty", file.Path), Fix: "write the value into it, or unset the variable"}
	case errors.As(err, &syntax):
		return &Error{Variable: envFile, Source: fmt.Sprintf("%s line %d", syntax.Path, syntax.Line), Problem: syntax.Problem, Fix: "write NAME=VALUE lines as .env.example does; in a quoted value, a '\\' goes before a quote that is part of it"}
	case errors.As(err, &refused):
		return refusedFile(envFile, "", refused)
	}
	return err
}

// notANumber is the *Error of a Number setting whose text is not a whole number of at least 1.
func notANumber(s settings.Setting, text string, src settings.Source) *Error {
	return &Error{Variable: variable(s.Key), Source: describe(src), Problem: fmt.Sprintf("%q is not a whole number of at least 1", text), Fix: "set a number such as " + s.Default}
}

// refusedFile is the *Error of a file that name (a variable or a flag) names and that
// settings.ReadFile refused: a directory, a pipe, a device, a file over the limit, a missing or
// unreadable one. It says what the file is, never what it holds.
func refusedFile(name, where string, refused *settings.FileError) *Error {
	return &Error{Variable: name, Source: where, Problem: "the file " + refused.Path + " " + refused.Problem, Fix: refused.Fix}
}
