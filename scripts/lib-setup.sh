# Shared by the README's two commands (build-and-demo.sh, check.sh): install what
# the build needs, generate and run the top-level configure in a build
# directory, build and install the patched MPICH. Sourced, not run.
#
# Environment: NBRMA_BUILD_DIR (default: _build in the repository),
# NBRMA_CONFIGURE_ARGS (extra arguments for ./configure, e.g. --prefix=...,
# --with-mpich-src=PATH), NBRMA_JOBS (default: the number of cores).

nbrma_repo=$(cd "$(dirname "$0")/.." && pwd)
nbrma_build=${NBRMA_BUILD_DIR:-$nbrma_repo/_build}
# a relative NBRMA_BUILD_DIR is taken from where the command was started
case $nbrma_build in /*) ;; *) nbrma_build=$(pwd)/$nbrma_build ;; esac
nbrma_jobs=${NBRMA_JOBS:-$(nproc 2>/dev/null || echo 2)}

NBRMA_DEBIAN_PACKAGES="gcc g++ make autoconf automake libtool patch xz-utils python3
  pkg-config ccache libucx-dev ucx-utils libhwloc-dev googletest libgtest-dev iproute2"

nbrma_say() { printf '\n=== %s\n' "$*"; }

nbrma_install_deps() {
    missing=
    for p in $NBRMA_DEBIAN_PACKAGES; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
            missing="$missing $p"
    done
    [ -n "$missing" ] || return 0
    if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
        echo "missing Debian packages:$missing (install them, or make sure their equivalents are present)" >&2
        return 0
    fi
    nbrma_say "installing Debian packages:$missing"
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing
}

nbrma_configure() {
    cd "$nbrma_repo"
    if [ ! -x configure ] || [ configure.ac -nt configure ] || [ Makefile.am -nt Makefile.in ]; then
        nbrma_say "autoreconf -fi (top level)"
        autoreconf -fi
    fi
    mkdir -p "$nbrma_build"
    cd "$nbrma_build"
    if [ ! -f Makefile ] || [ "$nbrma_repo/configure" -nt config.status ]; then
        nbrma_say "configure ${NBRMA_CONFIGURE_ARGS:-}"
        # shellcheck disable=SC2086
        "$nbrma_repo/configure" ${NBRMA_CONFIGURE_ARGS:-}
    fi
}

nbrma_build_and_install() {
    cd "$nbrma_build"
    nbrma_say "building the patched MPICH 4.0.2 (first time: about 6 minutes on 2 cores)"
    make -j"$nbrma_jobs"
    make -j"$nbrma_jobs" install
}

nbrma_setup() {
    set -eu
    nbrma_install_deps
    nbrma_configure
    nbrma_build_and_install
}
