# Sourced by the side-by-side scripts (run-side-by-side.sh, run-rma-mt.sh,
# run-osu-sweep.sh, run-bench-all.sh):
# what they share about the three MPIs they compare -- where each is, how a
# benchmark is built and launched with it, and the header of a results
# directory. The caller sets SCRIPT_NAME and, where it wants other than the
# defaults below, the variables in the first block; OUTDIR and ROUNDS before
# write_info.
#
#   VANILLA_PREFIX  vanilla MPICH install         [BUILD/vanilla]
#   PATCHED_PREFIX  patched MPICH install         [BUILD/install]
#   MPIS            which MPIs                    ["vanilla patched openmpi"]
#   BENCH_DIR       where benchmarks are built    [BUILD/bench-build]
#   TIMEOUT         seconds per run               [120]
#   BIND            none or core: process binding, the same for every MPI [none]
#                   (Open MPI binds to cores by default, MPICH's hydra does not)
#   OMPI_MPICC, OMPI_MPICXX, OMPI_MPIRUN  [/usr/bin/{mpicc,mpicxx,mpirun}.openmpi]
#   REBUILD=1       rebuild benchmarks even if built already (otherwise they are
#                   rebuilt when the MPI library is newer than the binaries)
#
# BUILD is the build directory of the checkout these scripts are in: _build
# beside osu_extensions/ (where the README's two commands and `make vanilla`
# install), or NBRMA_BUILD_DIR as for those commands (a relative one is taken
# from the current directory). So a clone anywhere finds its own installs.
#
# Open MPI's flags (OMPI_FLAGS, without the rank count) and why they are what
# they are: openmpi-flags.sh.

side_by_side_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NBRMA_ROOT=$(cd "$side_by_side_dir/.." && pwd)
NBRMA_BUILD=${NBRMA_BUILD_DIR:-$NBRMA_ROOT/_build}
case $NBRMA_BUILD in /*) ;; *) NBRMA_BUILD=$PWD/$NBRMA_BUILD ;; esac
VANILLA_PREFIX=${VANILLA_PREFIX:-$NBRMA_BUILD/vanilla}
PATCHED_PREFIX=${PATCHED_PREFIX:-$NBRMA_BUILD/install}
MPIS=${MPIS:-vanilla patched openmpi}
BENCH_DIR=${BENCH_DIR:-$NBRMA_BUILD/bench-build}
TIMEOUT=${TIMEOUT:-120}
BIND=${BIND:-none}
OMPI_MPICC=${OMPI_MPICC:-/usr/bin/mpicc.openmpi}
OMPI_MPICXX=${OMPI_MPICXX:-/usr/bin/mpicxx.openmpi}
OMPI_MPIRUN=${OMPI_MPIRUN:-/usr/bin/mpirun.openmpi}
REBUILD=${REBUILD:-0}

# shellcheck source=openmpi-flags.sh
. "$side_by_side_dir/openmpi-flags.sh"

# The MPIs of round r (one per line), rotated so that none is always first.
mpis_of_round() {
    local r=$1 m
    # shellcheck disable=SC2086  # MPIS is a list
    set -- $MPIS
    r=$((r % $#))
    while [ "$r" -gt 0 ]; do
        m=$1
        shift
        set -- "$@" "$m"
        r=$((r - 1))
    done
    for m in "$@"; do echo "$m"; done
}

die() { echo "${SCRIPT_NAME:-side-by-side}: $*" >&2; exit 1; }
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }

# --- per-MPI tools -----------------------------------------------------------

prefix_of() {
    case $1 in
    vanilla) echo "$VANILLA_PREFIX" ;;
    patched) echo "$PATCHED_PREFIX" ;;
    *) echo "" ;;
    esac
}

mpicc_of() {
    case $1 in
    openmpi) echo "$OMPI_MPICC" ;;
    *) echo "$(prefix_of "$1")/bin/mpicc" ;;
    esac
}

# OSU links its programs with $CXX; MPICH built with --disable-cxx has no
# mpicxx, and mpicc links the (C-only) OSU objects just as well.
mpicxx_of() {
    case $1 in
    openmpi) echo "$OMPI_MPICXX" ;;
    *) if [ -x "$(prefix_of "$1")/bin/mpicxx" ]; then echo "$(prefix_of "$1")/bin/mpicxx"
       else mpicc_of "$1"; fi ;;
    esac
}

# The library file whose change means "rebuild the benchmarks".
libmpi_of() {
    case $1 in
    openmpi) readlink -f "$("$OMPI_MPICC" --showme:libdirs | awk '{print $1}')/libmpi.so" ;;
    *) readlink -f "$(prefix_of "$1")/lib/libmpi.so" ;;
    esac
}

# launch MPI ARGS...: NP ranks (default 2) of ARGS under the MPI's own
# launcher, with a time limit.
launch() {
    local mpi=$1 prefix
    shift
    case $mpi in
    openmpi)
        # shellcheck disable=SC2086
        env -u LD_LIBRARY_PATH timeout -k 10 "$TIMEOUT" "$OMPI_MPIRUN" $OMPI_FLAGS -np "${NP:-2}" "$@" ;;
    *)
        prefix=$(prefix_of "$mpi")
        env LD_LIBRARY_PATH="$prefix/lib" timeout -k 10 "$TIMEOUT" \
            "$prefix/bin/mpiexec" -n "${NP:-2}" -bind-to "$BIND" "$@" ;;
    esac
}

# --- builds --------------------------------------------------------------------

# needs_build BINARY MPI: true if BINARY is missing or older than the MPI library.
needs_build() {
    [ "$REBUILD" = 1 ] || [ ! -x "$1" ] || [ "$(libmpi_of "$2")" -nt "$1" ]
}

# ensure_configure SRC NAME: SRC has a configure script (autoreconf -fi once,
# logged to $BENCH_DIR/NAME-autoreconf.log): release tarballs ship one, git
# trees do not.
ensure_configure() {
    [ -x "$1/configure" ] && return 0
    mkdir -p "$BENCH_DIR" || die "cannot make $BENCH_DIR"
    (cd "$1" && autoreconf -fi) > "$BENCH_DIR/$2-autoreconf.log" 2>&1 ||
        die "autoreconf in $1 failed (see $BENCH_DIR/$2-autoreconf.log)"
}

# build_osu MPI: OSU's one-sided benchmarks from $OSU_SRC, configured with the
# MPI's compiler wrappers, in $BENCH_DIR/osu-MPI (c/mpi/one-sided/osu_*).
build_osu() {
    local mpi=$1 dir
    dir=$BENCH_DIR/osu-$mpi
    needs_build "$dir/c/mpi/one-sided/osu_put_latency" "$mpi" || return 0
    log "building OSU one-sided benchmarks for $mpi in $dir"
    ensure_configure "$OSU_SRC" osu
    # built beside the old one, which runs elsewhere may still be using
    rm -rf "$dir.new"
    mkdir -p "$dir.new" || die "cannot make $dir.new"
    (cd "$dir.new" &&
        "$OSU_SRC/configure" CC="$(mpicc_of "$mpi")" CXX="$(mpicxx_of "$mpi")" > configure.log 2>&1 &&
        make -C c/mpi/one-sided -j2 > make.log 2>&1) ||
        die "OSU build for $mpi failed (see $dir.new/configure.log, $dir.new/make.log)"
    { rm -rf "$dir" && mv "$dir.new" "$dir"; } || die "cannot move $dir.new to $dir"
}

build_rmamt() {
    local mpi=$1 dir cc
    dir=$BENCH_DIR/rmamt-$mpi
    needs_build "$dir/src/rmamt_bw" "$mpi" || return 0
    log "building RMA-MT for $mpi in $dir"
    ensure_configure "$RMAMT_SRC" rmamt
    cc=$(mpicc_of "$mpi")
    rm -rf "$dir"
    mkdir -p "$dir" || die "cannot make $dir"
    # RMA-MT's configure takes any "mpicc" in PATH unless MPICC is given.
    (cd "$dir" &&
        "$RMAMT_SRC/configure" MPICC="$cc" CC="$cc" > configure.log 2>&1 &&
        make -j2 > make.log 2>&1) ||
        die "RMA-MT build for $mpi failed (see $dir/configure.log, $dir/make.log)"
}

# Every MPI in MPIS is known and has its compiler wrapper.
check_mpis() {
    for mpi in $MPIS; do
        case $mpi in
        vanilla|patched|openmpi) ;;
        *) die "unknown MPI '$mpi' in MPIS (vanilla, patched, openmpi)" ;;
        esac
        [ -x "$(mpicc_of "$mpi")" ] || die "$mpi: no $(mpicc_of "$mpi") (leave it out with MPIS=...)"
    done
}

# OUTDIR/info.txt: the date, the machine, the commit and each MPI's version and
# library (warn_changed_libraries compares against it at the end).
write_info() {
    {
        echo "date: $(date)"
        echo "host: $(uname -n), $(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg)"
        echo "patch-set commit: $(git -C "$side_by_side_dir/.." rev-parse --short HEAD 2>/dev/null) (uncommitted changes not shown)"
        echo "rounds: $ROUNDS, MPIs: $MPIS, binding: $BIND, timeout: $TIMEOUT s"
        for mpi in $MPIS; do
            case $mpi in
            openmpi) echo "openmpi: $("$OMPI_MPIRUN" --version 2>&1 | head -1), flags: $(echo "$OMPI_FLAGS" | tr -s '\n ' '  ')" ;;
            *) echo "$mpi: $(prefix_of "$mpi"): $(env LD_LIBRARY_PATH="$(prefix_of "$mpi")/lib" \
                    "$(prefix_of "$mpi")/bin/mpichversion" 2>/dev/null | grep -E 'Version|Custom' | tr -s '\t ' ' ' | paste -sd ';')" ;;
            esac
        done
        echo "UCX: $(ucx_info -v 2>/dev/null | head -1 | sed "s/^# *//")"
        for mpi in $MPIS; do
            echo "$mpi library: $(libmpi_of "$mpi"), modified $(stat -c %y "$(libmpi_of "$mpi")")"
        done
    } > "$OUTDIR/info.txt"
    cat "$OUTDIR/info.txt" >&2
}

# A library that changed during the rounds (a re-install) mixes two builds.
warn_changed_libraries() {
    for mpi in $MPIS; do
        grep -qF "$mpi library: $(libmpi_of "$mpi"), modified $(stat -c %y "$(libmpi_of "$mpi")")" "$OUTDIR/info.txt" ||
            echo "WARNING: $mpi's library changed during the run: $(libmpi_of "$mpi")" | tee -a "$OUTDIR/info.txt" >&2
    done
}
