#!/bin/sh
# Make a patched MPICH source tree from a pristine one.
#
#   prepare-mpich.sh SOURCE DEST REPO_DIR [--vanilla]
#
# SOURCE is a verified tarball or tree (see get-mpich.sh). DEST is created anew:
# the pristine tree is unpacked, patches/*.patch are applied in order with
# `patch -p1` (the first one that does not apply stops everything, by name),
# ch4_netmod_rma/ is copied to src/mpid/ch4/netmod/ucx/ch4_netmod_rma/, the C
# bindings (MPICH's and, through patch 0001, the component's api/*_api.txt), the
# man pages of the component's MPIX_ functions, the CVAR sources (MPICH's and
# the component's CVAR blocks), error messages and autotools files are
# regenerated. With --vanilla only the unpacking is done, for side-by-side
# builds of unmodified MPICH.
set -eu

die() { echo "prepare-mpich: $*" >&2; exit 1; }

src=${1:?usage: prepare-mpich.sh SOURCE DEST REPO_DIR [--vanilla]}
dest=${2:?usage: prepare-mpich.sh SOURCE DEST REPO_DIR [--vanilla]}
repo=${3:?usage: prepare-mpich.sh SOURCE DEST REPO_DIR [--vanilla]}
vanilla=no
[ "${4:-}" = "--vanilla" ] && vanilla=yes

here=$(cd "$(dirname "$0")" && pwd)
work="$dest.tmp"
rm -rf "$work"
mkdir -p "$work"

if [ -d "$src" ]; then
    # cp -a keeps the time stamps that keep configure/Makefile.in newer than their inputs
    (cd "$src" && tar cf - .) | (cd "$work" && tar xf -)
else
    tar xf "$src" -C "$work" --strip-components=1
fi

if [ "$vanilla" = no ]; then
    for p in "$repo"/patches/[0-9]*.patch; do
        [ -f "$p" ] || continue
        echo "prepare-mpich: applying $(basename "$p")"
        if ! out=$(cd "$work" && patch -p1 --batch --forward < "$p" 2>&1); then
            echo "$out" >&2
            die "patch $(basename "$p") does not apply to the pristine MPICH tree"
        fi
    done
    "$here/sync-component.sh" "$repo/ch4_netmod_rma" "$work/src/mpid/ch4/netmod/ucx/ch4_netmod_rma"
    (
        cd "$work"
        echo "prepare-mpich: regenerating the C bindings"
        python3 maint/gen_binding_c.py > gen_binding_c.log 2>&1 || { cat gen_binding_c.log >&2; exit 1; }
        # man pages of the component's MPIX_ functions (installed by MPICH's make install)
        python3 "$here/gen-man-pages.py" . src/mpid/ch4/netmod/ucx/ch4_netmod_rma/api || exit 1
        # src/include/mpir_cvars.h, src/util/mpir_cvars.c with the component's CVARs
        "$here/update-cvars.sh" . || exit 1
        echo "prepare-mpich: regenerating src/mpi/errhan/defmsg.h"
        rm -f .err unusederr.txt
        ./maint/extracterrmsgs -careful=unusederr.txt -skip=src/util/multichannel/mpi.c \
            $(cat maint/errmsgdirs) > .tmp 2> .err
        # it reports a comment it cannot parse (a "/*" inside a "//" comment,
        # say) on standard output, into the generated file
        if [ -s .err ] || grep -q '^Unterminated comment' .tmp; then
            cat .err >&2; grep -A1 '^Unterminated comment' .tmp >&2; exit 1
        fi
        mv .tmp src/mpi/errhan/defmsg.h
        echo "prepare-mpich: autoreconf -fi (about half a minute)"
        autoreconf -fi > autoreconf.log 2>&1 || { tail -n 40 autoreconf.log >&2; exit 1; }
    ) || die "regenerating the patched tree failed"
fi

rm -rf "$dest"
mv "$work" "$dest"
echo "prepare-mpich: $dest is ready"
