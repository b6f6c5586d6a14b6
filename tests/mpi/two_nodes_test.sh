#!/usr/bin/env bash
# Two nodes on one machine: two network namespaces joined by a veth pair, each with its own
# address, play two hosts; OpenMPI's TCP transport runs between them and the launch agent enters
# a namespace instead of ssh-ing. The data-parallel suite then runs as 2 nodes x 1 rank: it
# checks the distributed weights against single-process training, so passing here and under
# `mpirun -np 2` on one node shows both layouts train alike.
# Usage: two_nodes_test.sh MPI_TESTS_BINARY. Exit 77 (skipped) where namespaces are not allowed.
set -uo pipefail
binary=${1:?usage: two_nodes_test.sh MPI_TESTS_BINARY}
here=$(cd "$(dirname "$0")" && pwd)
suffix=$$
node_a=cnn-a-$suffix node_b=cnn-b-$suffix
address_a=10.213.$((suffix % 250)).1 address_b=10.213.$((suffix % 250)).2

cleanup() { ip netns del "$node_a" 2>/dev/null; ip netns del "$node_b" 2>/dev/null; rm -f "$hostfile"; }
hostfile=$(mktemp)
trap cleanup EXIT

if ! ip netns add "$node_a" 2>/dev/null; then
  echo "SKIPPED: network namespaces are not permitted here (ip netns add failed)"
  exit 77
fi
ip netns add "$node_b" || exit 1
ip link add "veth-a$suffix" type veth peer name "veth-b$suffix" || exit 1
ip link set "veth-a$suffix" netns "$node_a" && ip link set "veth-b$suffix" netns "$node_b" || exit 1
ip -n "$node_a" addr add "$address_a/24" dev "veth-a$suffix"
ip -n "$node_b" addr add "$address_b/24" dev "veth-b$suffix"
for node in "$node_a" "$node_b"; do
  ip -n "$node" link set lo up
done
ip -n "$node_a" link set "veth-a$suffix" up
ip -n "$node_b" link set "veth-b$suffix" up

printf '%s slots=1\n%s slots=1\n' "$address_a" "$address_b" > "$hostfile"
export NETNS_HOSTS="$address_a=$node_a,$address_b=$node_b"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# mpirun itself runs on node a; both ranks start through the agent, one per node.
ip netns exec "$node_a" timeout 240 mpirun -np 2 --hostfile "$hostfile" --map-by ppr:1:node \
  --mca plm_rsh_agent "$here/netns_agent.sh" --mca plm_rsh_no_tree_spawn 1 \
  --mca oob_tcp_if_include "$address_a/24" --mca btl self,tcp --mca btl_tcp_if_include "$address_a/24" \
  -x NETNS_HOSTS -x PATH --bind-to none \
  "$binary" --gtest_filter='*DataParallel*' --gtest_color=no
