package config

import "strings"

// Prefix is the prefix of every setting's variable.
const Prefix = "SWARM_LEASE_DEPLOY_"

// FileSuffix turns a setting's variable into the variable naming a file that holds its value.
const FileSuffix = "_FILE"

// Kind is how a setting's text is read.
type Kind int

const (
	// Text is any text.
	Text Kind = iota
	// Secret is text that never appears in output, logs, errors or process arguments; it has
	// no flag.
	Secret
	// Number is a whole number of at least 1.
	Number
	// Switch is true or false (1/0, yes/no, on/off accepted too).
	Switch
)

// Setting is one setting of the deployer.
type Setting struct {
	// Key is the setting's name in lower case with underscores, e.g. portainer_url.
	Key string
	// Kind says how its text is read.
	Kind Kind
	// Default is the value when no layer sets it ("" means unset).
	Default string
	// Usage says what it is, for the flag's help and .env.example.
	Usage string
}

// Variable is the setting's environment variable, e.g. SWARM_LEASE_DEPLOY_PORTAINER_URL.
func (s Setting) Variable() string { return Prefix + strings.ToUpper(s.Key) }

// FileVariable is the variable naming a file that holds the value.
func (s Setting) FileVariable() string { return s.Variable() + FileSuffix }

// Flag is the setting's flag name (without dashes), or "" for a secret: a secret on a
// command line would be visible to every user of the machine in the process list.
func (s Setting) Flag() string {
	if s.Kind == Secret {
		return ""
	}
	return strings.ReplaceAll(s.Key, "_", "-")
}

// Settings are all the deployer's settings.
var Settings = []Setting{
	{Key: "portainer_url", Usage: "Portainer's address, e.g. https://portainer.example.com:9443"},
	{Key: "portainer_api_key", Kind: Secret, Usage: "a Portainer API key (ptr_…; preferred over username and password)"},
	{Key: "portainer_username", Usage: "a Portainer user, when no API key is set"},
	{Key: "portainer_password", Kind: Secret, Usage: "that user's password"},
	{Key: "portainer_ca_file", Usage: "a PEM file of the CA that signed Portainer's certificate"},
	{Key: "portainer_insecure_skip_verify", Kind: Switch, Default: "false", Usage: "do not verify Portainer's TLS certificate (only for a throwaway test server)"},
	{Key: "endpoint", Usage: "the Portainer environment (endpoint) of the Swarm: its id or its name"},
	{Key: "stack_name", Default: "lfp-demo", Usage: "the Portainer stack's name"},
	{Key: "registry", Default: "docker.io", Usage: "the image registry (HOST[:PORT]); docker.io is Docker Hub"},
	{Key: "image_namespace", Usage: "the registry namespace (user or organisation) of the images"},
	{Key: "image_tag", Usage: "the image tag to push, or with --no-push-images the published tag to deploy (default: a tag from the commit and time)"},
	{Key: "registry_username", Usage: "the registry user that pushes (default: the machine's Docker credentials)"},
	{Key: "registry_token", Kind: Secret, Usage: "that user's access token or password"},
	{Key: "lease_ttl_ms", Kind: Number, Default: "5000", Usage: "the controllers' lease TTL in milliseconds"},
	{Key: "replicas", Kind: Number, Default: "3", Usage: "the number of controller replicas"},
	{Key: "endpoint_mode", Default: "vip", Usage: "the services' endpoint mode: vip, or dnsrr on engines without IPVS"},
	{Key: "demo_port", Kind: Number, Default: "8088", Usage: "the demo page's published port"},
	{Key: "demo_port_mode", Default: "ingress", Usage: "how the port is published: ingress, or host (which dnsrr needs)"},
	{Key: "docker_socket", Default: "/var/run/docker.sock", Usage: "the Docker socket on the Swarm's managers, which the controllers mount"},
}

// setting finds a setting by key.
func setting(key string) (Setting, bool) {
	for _, s := range Settings {
		if s.Key == key {
			return s, true
		}
	}
	return Setting{}, false
}
