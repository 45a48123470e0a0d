module github.com/regbo/lfp-swarm-lease/clients/go

go 1.26.0
