# Sourced (POSIX sh) by side-by-side-common.sh and run-epochs-bench.sh: the
# flags every run of Debian's Open MPI 4.1.4 here needs besides the rank count.
#
# Debian's /etc/openmpi/openmpi-mca-params.conf excludes pml ucx and osc ucx
# ("pml = ^ucx", "osc = ^ucx,pt2pt"), and Open MPI 4.1's UCX components only
# accept Mellanox devices by default (opal_common_ucx_tls/devices). So the runs
# give "--mca pml ucx --mca osc ucx --mca opal_common_ucx_tls any --mca
# opal_common_ucx_devices any"; with "--mca osc ucx" no other osc component is
# even opened, so a window that gets created is an osc/ucx window. Processes
# are bound as BIND says (default none: MPICH's hydra does not bind either).
OMPI_FLAGS="--allow-run-as-root --oversubscribe --bind-to ${BIND:-none}
  --mca pml ucx --mca osc ucx --mca opal_common_ucx_tls any --mca opal_common_ucx_devices any"
