module github.com/regbo/lfp-swarm-lease/settings

go 1.26.0
