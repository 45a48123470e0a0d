package config

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"

	"github.com/regbo/lfp-swarm-lease/settings"
)

// invalid is an *Error for the setting key's current value.
func (c *Config) invalid(key, problem, fix string) error {
	return &Error{Variable: variable(key), Source: c.Source(key), Problem: problem, Fix: fix}
}

// missing is an *Error for an unset setting.
func missing(key, why string) error {
	s, _ := schema.Lookup(key)
	how := "set it in .env or the environment"
	if flag := flagName(s); flag != "" {
		how += ", or pass --" + flag
	} else {
		how += " (or " + schema.FileVariable(key) + " to a file holding it)"
	}
	return &Error{Variable: variable(key), Problem: "not set; " + why, Fix: how}
}

// stackName is a name Portainer keeps as given: it lower-cases a stack's name and drops other
// characters, and a name it changed would not find its own record again.
var stackName = regexp.MustCompile(`^[a-z0-9][-_a-z0-9]*$`)

// validate checks what every command needs, whatever it does: the stack's settings. Every
// problem is reported, not only the first.
func (c *Config) validate() error {
	var errs []error
	numbers := true
	for _, s := range schema.Settings {
		if n, _ := strconv.ParseInt(c.values.Text(s.Key), 10, 64); s.Kind == settings.Number && n < 1 {
			errs, numbers = append(errs, notANumber(s, c.values.Text(s.Key), c.values.Source(s.Key))), false
		}
	}
	if !stackName.MatchString(c.StackName) {
		errs = append(errs, c.invalid("stack_name", fmt.Sprintf("%q is not a stack name Portainer keeps as it is", c.StackName), "use lower-case letters, digits, - and _, starting with a letter or digit"))
	}
	if !slices.Contains([]string{"vip", "dnsrr"}, c.EndpointMode) {
		errs = append(errs, c.invalid("endpoint_mode", fmt.Sprintf("%q is not an endpoint mode", c.EndpointMode), "use vip or dnsrr"))
	}
	if numbers {
		errs = append(errs, c.checkLeaseTiming())
	}
	if c.DemoPort > 65535 {
		errs = append(errs, c.invalid("demo_port", fmt.Sprintf("%d is not a TCP port", c.DemoPort), "use a port from 1 to 65535, such as 8088"))
	}
	switch {
	case !slices.Contains([]string{"ingress", "host"}, c.DemoPortMode):
		errs = append(errs, c.invalid("demo_port_mode", fmt.Sprintf("%q is not a port mode", c.DemoPortMode), "use ingress or host"))
	case c.EndpointMode == "dnsrr" && c.DemoPortMode == "ingress":
		errs = append(errs, c.invalid("demo_port_mode", "ingress publishing needs endpoint_mode vip, and endpoint_mode is dnsrr", "set SWARM_LEASE_DEPLOY_DEMO_PORT_MODE=host, or use endpoint_mode vip"))
	}
	return errors.Join(errs...)
}
