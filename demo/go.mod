module github.com/regbo/lfp-swarm-lease/demo

go 1.26.0
