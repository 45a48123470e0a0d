package config

import "github.com/regbo/lfp-swarm-lease/settings"

// Source says where a setting's value came from: the settings kernel's provenance, e.g. "flag
// --ttl-ms", "environment variable SWARM_LEASE_TTL_MS", "file /run/secrets/ttl named by
// SWARM_LEASE_TTL_MS_FILE", "container label swarm-lease.ttl_ms", "default: the hostname".
type Source = settings.Source

// SourceKind is the layer a value came from.
type SourceKind = settings.SourceKind

// The layers of the CLI, lowest precedence first.
const (
	FromDefault = settings.FromDefault
	FromLabel   = settings.FromLabel
	FromEnv     = settings.FromEnv
	FromFlag    = settings.FromFlag
)
