module github.com/regbo/lfp-swarm-lease/deployer

go 1.26.0

require (
	github.com/Masterminds/semver/v3 v3.5.0
	github.com/google/go-containerregistry v0.22.1
	github.com/regbo/lfp-swarm-lease/images v0.1.0
	github.com/regbo/lfp-swarm-lease/lease v0.1.0
	github.com/spf13/cobra v1.10.2
	golang.org/x/mod v0.31.0
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/pflag v1.0.10 // indirect
)
