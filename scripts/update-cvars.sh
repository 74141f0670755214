#!/bin/sh
# Regenerate MPICH's CVAR sources when the component's CVAR blocks changed.
#
#   update-cvars.sh MPICH_TREE
#
# MPICH declares its control variables (CVARs) in "=== BEGIN_MPI_T_CVAR_INFO_BLOCK
# ===" comments; maint/extractcvars collects them into src/include/mpir_cvars.h
# (declarations), src/util/mpir_cvars.c (registration with MPI_T, reading of
# MPIR_CVAR_<NAME>, MPIR_PARAM_<NAME> and MPICH_<NAME> from the environment)
# and README.envvar, as autogen.sh does for a release. The component declares
# its CVARs the same way, so once it is copied into the tree this runs
# extractcvars over MPICH's CVAR directories (those of maint/cvardirs.in: the
# shipped maint/cvardirs names the release machine's paths).
#
# prepare-mpich.sh runs it for a new tree, `make` (mpich-build) before every
# MPICH make. The component's blocks are remembered in MPICH_TREE/.nbrma-cvars:
# when they are unchanged nothing is done, and a generated file whose content
# did not change keeps its time stamp, so MPICH's make rebuilds only what a
# change needs (a changed mpir_cvars.h: nearly everything).
set -eu

die() { echo "update-cvars: $*" >&2; exit 1; }

tree=${1:?usage: update-cvars.sh MPICH_TREE}
cd "$tree"
component=src/mpid/ch4/netmod/ucx/ch4_netmod_rma
stamp=.nbrma-cvars
outputs="src/include/mpir_cvars.h src/util/mpir_cvars.c README.envvar"
[ -d "$component" ] || die "$tree has no $component (run sync-component.sh first)"

# The component's CVAR blocks with the names of their files (the files that
# extractcvars reads: *.c, *.h, *.i, *.cpp, ... and cvars.txt).
blocks=$(mktemp)
trap 'rm -f "$blocks"' EXIT
grep -rl --include='*.[Cchi]' --include='*.[Cchi]pp' --include=cvars.txt \
    BEGIN_MPI_T_CVAR_INFO_BLOCK "$component" | LC_ALL=C sort | while read -r f; do
    echo "== $f"
    sed -n '/BEGIN_MPI_T_CVAR_INFO_BLOCK/,/END_MPI_T_CVAR_INFO_BLOCK/p' "$f"
done > "$blocks"
if [ -f "$stamp" ] && cmp -s "$blocks" "$stamp"; then
    exit 0
fi

echo "update-cvars: extracting the CVARs (the component's changed)"
for f in $outputs; do
    [ ! -f "$f" ] || cp -p "$f" "$f.nbrma-old"
done
# A fixed date in the generated files' "on:" line, so that unchanged content
# compares equal; the shipped files' own date when the caller sets none.
: "${SOURCE_DATE_EPOCH:=$(stat -c %Y maint/extractcvars.in)}"
export SOURCE_DATE_EPOCH
# maint/extractcvars finds YAML::Tiny in maint/local_perl through an absolute
# path of the release machine, hence -I.
if ! log=$(perl -I maint/local_perl/lib ./maint/extractcvars \
        --dirs="$(sed 's|@abs_srcdir@/\.\./||g' maint/cvardirs.in)" \
        --header=src/include/mpir_cvars.h --c-file=src/util/mpir_cvars.c \
        --readme-file=README.envvar 2>&1); then
    for f in $outputs; do
        [ ! -f "$f.nbrma-old" ] || mv "$f.nbrma-old" "$f"
    done
    echo "$log" >&2
    die "maint/extractcvars failed; the CVAR sources are unchanged"
fi
[ -z "$log" ] || echo "$log" >&2      # e.g. a category that no block declares
changed=
for f in $outputs; do
    if [ -f "$f.nbrma-old" ] && cmp -s "$f" "$f.nbrma-old"; then
        mv "$f.nbrma-old" "$f"          # unchanged: the old time stamp stays
    else
        rm -f "$f.nbrma-old"
        changed="$changed $f"
    fi
done
cat "$blocks" > "$stamp"
[ -z "$changed" ] || echo "update-cvars: updated$changed"
