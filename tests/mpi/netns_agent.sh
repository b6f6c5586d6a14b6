#!/usr/bin/env bash
# OpenMPI launch agent (plm_rsh_agent) for the two-node test: instead of ssh-ing to a host, run
# the command inside the network namespace that plays that host. Called as: AGENT HOST COMMAND...
# The host is an address; the namespace holding it is found in NETNS_HOSTS ("addr=ns,addr=ns").
set -euo pipefail
host=$1
shift
for pair in ${NETNS_HOSTS//,/ }; do
  if [ "${pair%%=*}" = "$host" ]; then
    exec ip netns exec "${pair#*=}" /bin/sh -c "$*"
  fi
done
echo "netns_agent: no namespace plays host '$host'" >&2
exit 1
