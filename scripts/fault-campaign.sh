#!/usr/bin/env bash
# The fault campaign on a real three-manager Swarm (faults/, docs/reliability.md). Needs root,
# dockerd, docker, ip, nsenter and unshare; the cluster lives under /tmp/lfp-faults and in
# network namespaces lfpf<pid>-*, and is removed afterwards (a killed run's leftovers are swept
# by the next one).
#
#   scripts/fault-campaign.sh            # every scenario once (the CI variant, a few minutes)
#   scripts/fault-campaign.sh -long      # ≥ 10,000 lease operations, randomized fault timing
#   FAULTS_SEED=N scripts/fault-campaign.sh -long   # replay a long run's seed
#   scripts/fault-campaign.sh -run TestFrozenHolder # one scenario
#   scripts/fault-campaign.sh -run TestContainerFaults -ttl 30s   # at another lease TTL
#   scripts/fault-campaign.sh -etcd      # the etcd campaign's scenarios (root, ip, nsenter, etcd)
#   scripts/fault-campaign.sh -etcd -long   # the etcd campaign, ≥ 10,000 lease operations
set -euo pipefail
cd "$(dirname "$0")/../faults"

if [ "$(id -u)" != 0 ]; then
  echo "fault-campaign.sh: must run as root (network namespaces, dockerd)" >&2
  exit 2
fi
timeout=20m
run=.
etcd=0
args=()
for arg in "$@"; do
  if [ "$arg" = -etcd ]; then etcd=1; else args+=("$arg"); fi
done
for arg in "$@"; do
  if [ "$arg" = -long ]; then
    timeout=3h; run='^TestLongCampaign$'
    if [ "$etcd" = 1 ]; then run='^TestEtcdLongCampaign$'; fi
  elif [ "$etcd" = 1 ] && [ "$run" = . ]; then
    run='^TestEtcdFaults$'
  fi
done
if [ "$etcd" = 1 ] && [ "$run" = . ]; then run='^TestEtcdFaults$'; fi
exec go test -count=1 -v -timeout "$timeout" -run "$run" . "${args[@]}"
