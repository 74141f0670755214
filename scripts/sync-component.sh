#!/bin/sh
# Copy the component into an MPICH tree, touching only files whose content
# changed, so that MPICH's make rebuilds just what depends on them.
#
#   sync-component.sh COMPONENT_DIR DEST_DIR
set -eu
from=${1:?usage: sync-component.sh COMPONENT_DIR DEST_DIR}
to=${2:?usage: sync-component.sh COMPONENT_DIR DEST_DIR}
mkdir -p "$to"
to=$(cd "$to" && pwd)   # absolute: the copying below runs inside $from
changed=0
cd "$from"
for f in $(find . -type f ! -name '*.o' ! -name '*.lo' ! -path '*/.*' | sort); do
    if ! cmp -s "$f" "$to/$f"; then
        mkdir -p "$to/$(dirname "$f")"
        cp "$f" "$to/$f"
        changed=$((changed + 1))
    fi
done
# Sources deleted from the component disappear from the tree too (build
# products such as .deps/, .libs/, *.lo stay for make to manage).
(cd "$to" && find . -type f ! -name '*.o' ! -name '*.lo' ! -name '*.la' ! -path '*/.*' | sort) | while read -r f; do
    [ -e "$f" ] || rm -f "$to/$f"
done
[ "$changed" = 0 ] || echo "sync-component: $changed file(s) updated in $to"
