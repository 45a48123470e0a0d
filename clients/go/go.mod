module github.com/regbo/lfp-swarm-lease/clients/go

go 1.26.0

require github.com/regbo/lfp-swarm-lease/timing v0.1.0
