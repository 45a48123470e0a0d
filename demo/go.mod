module github.com/regbo/lfp-swarm-lease/demo

go 1.26.0

require (
	github.com/google/go-containerregistry v0.22.1
	github.com/regbo/lfp-swarm-lease/clients/go v0.1.0
	github.com/regbo/lfp-swarm-lease/images v0.1.0
	github.com/regbo/lfp-swarm-lease/lease v0.1.0
	github.com/regbo/lfp-swarm-lease/server v0.1.0
)

require github.com/regbo/lfp-swarm-lease/timing v0.1.0 // indirect
