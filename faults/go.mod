module github.com/regbo/lfp-swarm-lease/faults

go 1.26.0

replace github.com/regbo/lfp-swarm-lease/lease => ../lease
