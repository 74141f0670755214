#!/bin/sh
# Obtain the pristine MPICH 4.0.2 release and print the path of a verified tarball or tree.
#
#   get-mpich.sh CACHE_DIR [USER_SOURCE]
#
# USER_SOURCE may be a tarball (.tar.gz/.tar.bz2/.tar.xz) or an unpacked tree; it is
# checked to be MPICH 4.0.2 and printed as is. Without it, the Debian source package's
# upstream tarball (mpich_4.0.2.orig.tar.xz) is fetched once into CACHE_DIR with
# `apt-get source --download-only` and its SHA-256 is checked, so that rebuilds never
# download again. A deb-src entry for the configured mirror is added when none exists
# (that needs root; everyone else passes USER_SOURCE).
set -eu

MPICH_VERSION=4.0.2
# SHA-256 of Debian's mpich_4.0.2.orig.tar.xz (bookworm, also listed in mpich_4.0.2-3.dsc)
DEBIAN_ORIG_SHA256=b27039f964afeb6b8a3e009c56b441cbe368c26d6d6476ad3bb7190996875860
ORIG=mpich_${MPICH_VERSION}.orig.tar.xz

die() { echo "get-mpich: $*" >&2; exit 1; }

cache_dir=${1:?usage: get-mpich.sh CACHE_DIR [USER_SOURCE]}
user_src=${2:-}

check_version_in_tree() {
    v=$(sed -n 's/^m4_define(\[MPICH_VERSION_m4\],\[\(.*\)\])dnl.*/\1/p' "$1/maint/version.m4" 2>/dev/null || true)
    [ "$v" = "$MPICH_VERSION" ] || die "$1 is not an MPICH $MPICH_VERSION tree (maint/version.m4 says '${v:-nothing}')"
}

if [ -n "$user_src" ]; then
    [ -e "$user_src" ] || die "no such file or directory: $user_src"
    if [ -d "$user_src" ]; then
        check_version_in_tree "$user_src"
    else
        case "$user_src" in
            *.tar.gz|*.tgz|*.tar.bz2|*.tar.xz) ;;
            *) die "$user_src: expected a .tar.gz, .tar.bz2 or .tar.xz tarball or a directory" ;;
        esac
        tar tf "$user_src" 2>/dev/null | grep -q "^mpich-$MPICH_VERSION/maint/version.m4$" ||
            die "$user_src does not contain mpich-$MPICH_VERSION/"
    fi
    (cd "$(dirname "$user_src")" && echo "$(pwd)/$(basename "$user_src")")
    exit 0
fi

mkdir -p "$cache_dir"
tarball="$cache_dir/$ORIG"
if [ ! -f "$tarball" ]; then
    command -v apt-get >/dev/null || die "no apt-get here: pass an MPICH $MPICH_VERSION tarball or tree (--with-mpich-src=PATH)"
    if ! grep -rqs '^Types:.*deb-src\|^deb-src ' /etc/apt/sources.list /etc/apt/sources.list.d/; then
        [ "$(id -u)" = 0 ] || die "no deb-src entry and not root: pass --with-mpich-src=PATH"
        # Reuse the mirror and signing key already configured for binary packages.
        src=/etc/apt/sources.list.d/debian.sources
        if [ -f "$src" ]; then
            awk 'BEGIN{RS=""; ORS="\n\n"} /Suites:[^\n]*bookworm( |$|\n)/ && !/security/ {sub(/Types: deb/, "Types: deb-src"); print; exit}' \
                "$src" > /etc/apt/sources.list.d/mpich-nbrma-src.sources
        else
            grep -h '^deb ' /etc/apt/sources.list | grep -v security | head -n 1 | sed 's/^deb /deb-src /' \
                > /etc/apt/sources.list.d/mpich-nbrma-src.list
        fi
        apt-get update -q >&2
    fi
    tmp=$(mktemp -d "$cache_dir/dl.XXXXXX")
    (cd "$tmp" && apt-get source -q --download-only mpich >&2) ||
        die "apt-get source mpich failed (run 'apt-get update' or pass --with-mpich-src=PATH)"
    [ -f "$tmp/$ORIG" ] || die "the Debian source package did not provide $ORIG"
    mv "$tmp/$ORIG" "$tarball.part"
    rm -rf "$tmp"
    sum=$(sha256sum "$tarball.part" | cut -d' ' -f1)
    if [ "$sum" != "$DEBIAN_ORIG_SHA256" ]; then
        rm -f "$tarball.part"
        die "SHA-256 mismatch for $ORIG: got $sum, expected $DEBIAN_ORIG_SHA256"
    fi
    mv "$tarball.part" "$tarball"
fi
sum=$(sha256sum "$tarball" | cut -d' ' -f1)
[ "$sum" = "$DEBIAN_ORIG_SHA256" ] || die "cached $tarball is corrupt (SHA-256 $sum): delete it and retry"
echo "$tarball"
