module github.com/regbo/lfp-swarm-lease/timing

go 1.26.0
