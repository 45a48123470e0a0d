package config

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainer"
	"github.com/regbo/lfp-swarm-lease/settings"
)

// maxCAFile bounds the CA bundle, as the Portainer client does: the system's whole bundle is
// some 200 KiB.
const maxCAFile = 1 << 20

// ValidatePortainer checks the settings that reach Portainer — its address, its TLS settings,
// the credentials and the stack's place — before the client is built, so that each problem is
// named as the user spells the setting (the client's own checks speak of its Go options). Every
// problem is reported, not only the first; a value that may hold a credential (the URL) is
// never quoted.
func (c *Config) ValidatePortainer() error {
	var errs []error
	urlOK := false
	switch {
	case c.PortainerURL == "":
		errs = append(errs, missing("portainer_url", "it is Portainer's address"))
	case !strings.HasPrefix(c.PortainerURL, "https://") && !strings.HasPrefix(c.PortainerURL, "http://"):
		// The value is not quoted: a URL such as user:password@host would print a password.
		errs = append(errs, c.invalid("portainer_url", "the value does not start with https:// or http://", "use https://HOST:9443 (or http://HOST:9000)"))
	default:
		err := c.checkURL()
		errs, urlOK = append(errs, err), err == nil
	}
	errs = append(errs, c.checkTLS(urlOK))
	if c.PortainerAPIKey == "" && c.PortainerUsername == "" {
		errs = append(errs, missing("portainer_api_key", "Portainer needs an API key (preferred) or a username and password"))
	} else if c.PortainerAPIKey == "" && c.PortainerPassword == "" {
		errs = append(errs, missing("portainer_password", "a username without a password cannot log in"))
	}
	if c.Endpoint == "" {
		errs = append(errs, missing("endpoint", "it is the Portainer environment that runs the Swarm (its id or name)"))
	}
	if c.StackName == "" {
		errs = append(errs, missing("stack_name", "it is the Portainer stack's name"))
	}
	return errors.Join(errs...)
}

// checkURL checks an http(s) Portainer URL as the client will: Portainer's base address, the
// client appending /api, without credentials.
func (c *Config) checkURL() error {
	const fix = "give Portainer's base address, e.g. https://portainer.example.com:9443 (the deployer appends /api)"
	u, err := url.Parse(c.PortainerURL)
	switch {
	case err != nil:
		// url.Parse's error quotes the whole URL, credentials included.
		return c.invalid("portainer_url", "the value is not a URL", fix)
	case u.User != nil:
		return c.invalid("portainer_url", "the URL carries a user or password (user:password@)",
			"remove them, and give the credentials in "+variable("portainer_api_key")+" (or "+variable("portainer_username")+" and "+variable("portainer_password")+"), or their _FILE variables")
	case u.Host == "":
		return c.invalid("portainer_url", "the URL has no host", fix)
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return c.invalid("portainer_url", "the URL has a query or a fragment", fix)
	case strings.HasSuffix(strings.TrimRight(u.Path, "/"), "/api"):
		return c.invalid("portainer_url", "the URL ends in /api, the path of Portainer's API", fix)
	}
	return nil
}

// checkTLS checks the CA file and the switch that turns verification off: they contradict each
// other, apply to https only (urlOK: the URL is a valid one), and the CA file must hold a PEM
// certificate. The file is read by settings.ReadFile's rule, as the client reads it again.
func (c *Config) checkTLS(urlOK bool) error {
	ca, insecure := "portainer_ca_file", "portainer_insecure_skip_verify"
	switch {
	case c.PortainerCAFile != "" && c.PortainerInsecureSkipVerify:
		return &Error{Variable: variable(ca) + " and " + variable(insecure), Source: c.Source(ca) + " and " + c.Source(insecure),
			Problem: "both are set, and they contradict each other: one verifies Portainer's certificate with that CA, the other does not verify it",
			Fix:     "keep one of them (" + variable(insecure) + " only for a throwaway test server)"}
	case c.PortainerCAFile == "" && !c.PortainerInsecureSkipVerify:
		return nil
	case urlOK && strings.HasPrefix(c.PortainerURL, "http://"):
		key := ca
		if c.PortainerCAFile == "" {
			key = insecure
		}
		return c.invalid(key, fmt.Sprintf("it applies to https, and %s (from %s) is http://", variable("portainer_url"), c.Source("portainer_url")),
			"use https:// in "+variable("portainer_url")+", or unset "+variable(key))
	case c.PortainerCAFile == "":
		return nil
	}
	pem, err := settings.ReadFile(c.PortainerCAFile, maxCAFile)
	var refused *settings.FileError
	if errors.As(err, &refused) { // every error of ReadFile is one
		return refusedFile(variable(ca), c.Source(ca), refused)
	}
	if !x509.NewCertPool().AppendCertsFromPEM(pem) {
		return c.invalid(ca, "the file "+c.PortainerCAFile+" holds no PEM certificate", "give the PEM bundle of the CA that signs Portainer's certificate")
	}
	return nil
}

// PortainerOptions are the Portainer client's options. With an API key set, the username and
// password are not passed: Portainer refuses a request that carries both kinds of credentials,
// and the key is the preferred one.
func (c *Config) PortainerOptions() portainer.Options {
	o := portainer.Options{URL: c.PortainerURL, CAFile: c.PortainerCAFile, InsecureSkipVerify: c.PortainerInsecureSkipVerify}
	if c.PortainerAPIKey != "" {
		o.APIKey = c.PortainerAPIKey
	} else {
		o.Username, o.Password = c.PortainerUsername, c.PortainerPassword
	}
	return o
}
