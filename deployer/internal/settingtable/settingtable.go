// Package settingtable is the deployer's table of settings: their names, kinds, defaults and
// help, and the prefix of their variables. It is a leaf: config reads the settings by it, and
// childenv keeps the settings' variables from the processes the deployer starts (git, go
// build) by its prefix, without depending on config and what config depends on (the Portainer
// client).
package settingtable

import "github.com/regbo/lfp-swarm-lease/settings"

// Prefix is the prefix of every setting's variable, with its '_': SWARM_LEASE_DEPLOY_<NAME>.
const Prefix = "SWARM_LEASE_DEPLOY_"

// Schema is the deployer's settings for the settings kernel. An empty variable counts as not
// set, so that a copy of .env.example with blank lines sets nothing. A Number of the deployer
// is at least 1 (config checks it); a Secret has no flag.
var Schema = &settings.Schema{Prefix: "SWARM_LEASE_DEPLOY", EmptyIsUnset: true, Settings: []settings.Setting{
	{Key: "portainer_url", Help: "Portainer's address, e.g. https://portainer.example.com:9443"},
	{Key: "portainer_api_key", Kind: settings.Secret, Help: "a Portainer API key (ptr_…; preferred over username and password)"},
	{Key: "portainer_username", Help: "a Portainer user, when no API key is set"},
	{Key: "portainer_password", Kind: settings.Secret, Help: "that user's password"},
	{Key: "portainer_ca_file", Help: "a PEM file of the CA that signed Portainer's certificate"},
	{Key: "portainer_insecure_skip_verify", Kind: settings.Switch, Default: "false", Help: "do not verify Portainer's TLS certificate (only for a throwaway test server)"},
	{Key: "endpoint", Help: "the Portainer environment (endpoint) of the Swarm: its id or its name"},
	{Key: "stack_name", Default: "lfp-demo", Help: "the Portainer stack's name"},
	{Key: "registry", Default: "docker.io", Help: "the image registry (HOST[:PORT]); docker.io is Docker Hub"},
	{Key: "image_namespace", Help: "the registry namespace (user or organisation) of the images"},
	{Key: "image_tag", Help: "the image tag to push, or with --no-push-images the published tag to deploy (default: a tag from the commit and time)"},
	{Key: "registry_username", Help: "the registry user that pushes (default: the machine's Docker credentials)"},
	{Key: "registry_token", Kind: settings.Secret, Help: "that user's access token or password"},
	{Key: "lease_ttl_ms", Kind: settings.Number, Default: "5000", Help: "the controllers' lease TTL in milliseconds"},
	{Key: "replicas", Kind: settings.Number, Default: "3", Help: "the number of controller replicas"},
	{Key: "endpoint_mode", Default: "vip", Help: "the services' endpoint mode: vip, or dnsrr on engines without IPVS"},
	{Key: "demo_port", Kind: settings.Number, Default: "8088", Help: "the demo page's published port"},
	{Key: "demo_port_mode", Default: "ingress", Help: "how the port is published: ingress, or host (which dnsrr needs)"},
	{Key: "docker_socket", Default: "/var/run/docker.sock", Help: "the Docker socket on the Swarm's managers, which the controllers mount"},
}}
