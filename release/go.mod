module github.com/regbo/lfp-swarm-lease/release

go 1.26.0

require (
	github.com/Masterminds/semver/v3 v3.5.0
	github.com/google/go-containerregistry v0.22.1
	github.com/regbo/lfp-swarm-lease/deployer v0.1.0
	github.com/regbo/lfp-swarm-lease/images v0.1.0
	github.com/regbo/lfp-swarm-lease/lease v0.1.0
	github.com/spf13/cobra v1.10.2
	golang.org/x/mod v0.41.0
)

require (
	github.com/agnivade/levenshtein v1.2.2 // indirect
	github.com/go-viper/mapstructure/v2 v2.4.0 // indirect
	github.com/knadh/koanf/maps v0.1.2 // indirect
	github.com/knadh/koanf/providers/env/v2 v2.0.2 // indirect
	github.com/knadh/koanf/providers/posflag v1.0.2 // indirect
	github.com/knadh/koanf/v2 v2.4.1 // indirect
	github.com/mitchellh/copystructure v1.2.0 // indirect
	github.com/mitchellh/reflectwalk v1.0.2 // indirect
	github.com/regbo/lfp-swarm-lease/settings v0.1.0 // indirect
)

require (
	github.com/anishathalye/porcupine v1.3.1 // indirect
	github.com/docker/cli v29.7.2+incompatible // indirect
	github.com/docker/docker-credential-helpers v0.9.3 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/klauspost/compress v1.20.1 // indirect
	github.com/opencontainers/go-digest v1.0.0 // indirect
	github.com/opencontainers/image-spec v1.1.1 // indirect
	github.com/regbo/lfp-swarm-lease/timing v0.1.0 // indirect
	github.com/sirupsen/logrus v1.10.1 // indirect
	github.com/spf13/pflag v1.0.10 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
)
