#!/bin/sh
# Two hosts on one machine: network namespaces nbrma-h1 and nbrma-h2 joined by
# a veth pair (10.77.0.1 and 10.77.0.2), each process tree also in a pid,
# UTS and mount namespace of its "host", so that ranks on different hosts
# share nothing an off-node peer would not: no common loopback, no pids to
# read with process_vm_readv (the component's cross-memory probe fails, as
# it must), their own host names. UCX is restricted to tcp (UCX_TLS=tcp,self),
# what ranks on an Ethernet cluster without RDMA use; shared memory between
# hosts is thus never used, and every off-node path (emulated RMA, active
# messages for every protocol message, tcp wire-up and finalize) runs.
#
#   two-hosts.sh up                    create the namespaces (root: ip netns)
#   two-hosts.sh down                  remove them
#   two-hosts.sh mpiexec PREFIX ARGS   mpiexec of PREFIX on host 1, ranks
#                                      placed round-robin on both hosts
#   two-hosts.sh launch HOST COMMAND   COMMAND on HOST (hydra's launcher,
#                                      through two-hosts-launcher)
#   two-hosts.sh check PREFIX TESTDIR [NAME ...]
#                                      up, the MPI tests of TESTDIR across
#                                      both hosts (run-mpi-tests.sh), down
#
# `make check-2hosts` runs `check` on the installed patched MPICH.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
ns1=nbrma-h1
ns2=nbrma-h2
ip1=10.77.0.1
ip2=10.77.0.2

# COMMAND inside host N's namespaces, with that host's name
in_host() {
    host_ns=$1
    shift
    exec ip netns exec "$host_ns" unshare --uts --pid --fork --kill-child --mount-proc \
        sh -c 'hostname "$0" && exec "$@"' "$host_ns" "$@"
}

case "${1:-}" in
    up)
        "$0" down 2>/dev/null || true
        ip netns add $ns1
        ip netns add $ns2
        ip link add nbrma-v1 type veth peer name nbrma-v2
        ip link set nbrma-v1 netns $ns1
        ip link set nbrma-v2 netns $ns2
        ip -n $ns1 addr add $ip1/24 dev nbrma-v1
        ip -n $ns2 addr add $ip2/24 dev nbrma-v2
        for ns in $ns1 $ns2; do
            ip -n $ns link set lo up
        done
        ip -n $ns1 link set nbrma-v1 up
        ip -n $ns2 link set nbrma-v2 up
        echo "two-hosts: $ns1 ($ip1) and $ns2 ($ip2) are up"
        ;;
    down)
        ip netns del $ns1 2>/dev/null || true
        ip netns del $ns2 2>/dev/null || true
        ;;
    launch)
        # hydra calls: launch HOST "COMMAND" (its rsh launcher's arguments)
        host=$2
        shift 2
        case "$host" in
            $ip1) ns=$ns1 ;;
            $ip2) ns=$ns2 ;;
            *) echo "two-hosts: unknown host $host" >&2; exit 1 ;;
        esac
        in_host $ns sh -c "$*"
        ;;
    mpiexec)
        prefix=$2
        shift 2
        # host 1's proxy is forked by mpiexec, host 2's started by the
        # launcher in host 2's namespaces (nested in host 1's pid namespace,
        # so that killing mpiexec's host kills them too)
        in_host $ns1 env UCX_TLS=tcp,self "$prefix/bin/mpiexec" -launcher rsh \
            -launcher-exec "$here/two-hosts-launcher" -localhost $ip1 -hosts $ip1,$ip2 "$@"
        ;;
    check)
        prefix=$2
        tests=$3
        shift 3
        if [ "$(id -u)" != 0 ] || ! command -v ip > /dev/null || ! command -v unshare > /dev/null; then
            echo "two-hosts: needs root, ip (iproute2) and unshare: skipped"
            exit 0
        fi
        "$0" up
        trap '"$0" down' EXIT
        # the tests expect no mailbox peers (no shared memory over tcp) and
        # leave out the runs whose point needs shared memory
        NBRMA_MPIEXEC="$here/two-hosts.sh mpiexec $prefix" MPICH_PREFIX="$prefix" \
            NBRMA_TEST_NO_SHARED_MEMORY=1 NBRMA_SKIP_LIST="$tests/not-across-hosts.txt" \
            sh "$here/run-mpi-tests.sh" "$tests" "$@"
        ;;
    *)
        sed -n '2,22p' "$0" >&2
        exit 2
        ;;
esac
