#!/usr/bin/env python3
"""Write man(3) pages for the MPIX functions of the patch-set.

    gen-man-pages.py MPICH_TREE API_DIR

MPICH makes its man pages with doctext, which is not packaged for Debian; the
release tarball ships them prebuilt in man/man3, and `make install` installs
everything found there. The component declares its functions in
API_DIR/<dir>_api.txt (ch4_netmod_rma/api/; API_DIR relative to MPICH_TREE or
absolute), from which maint/gen_binding_c.py (patch 0001) generates the
bindings into src/binding/c/<dir>/. This reads the /*@ ... @*/ documentation
block that the generator writes into each of those bindings (from the entry's
.desc, parameter descriptions, Notes and .seealso) and writes
MPICH_TREE/man/man3/<name>.3 for every function an API file declares; it fails
when one of them has no generated binding. MPICH's own MPIX_ functions keep
their prebuilt pages.
"""

import glob
import os
import re
import sys

SECTIONS = {"Input Parameters:": "INPUT PARAMETERS",
            "Output Parameters:": "OUTPUT PARAMETERS",
            "Input/Output Parameters:": "INPUT/OUTPUT PARAMETERS",
            "Notes:": "NOTES"}

ERRORS_TEXT = ("All MPI routines return an error value; before the value is returned, "
               "the current MPI error handler is called (for this routine the window's, "
               "see MPI_Win_set_errhandler). By default it aborts the MPI job.")


def escape(text):
    text = text.replace("\\", "\\\\")
    return re.sub(r"^([.'])", r"\\&\1", text)


def parse_doc(source):
    """Returns (name, description, prototype, [(section, lines)], errors, seealso)."""
    block = re.search(r"/\*@\n(.*?)@\*/", source, re.S)
    if not block:
        return None
    lines = block.group(1).splitlines()
    name, _, desc = re.split(r"(\s+-\s*|$)", lines[0].strip(), maxsplit=1)
    proto = re.search(r"^int %s\((.*?)\)\s*$" % re.escape(name), source, re.M | re.S)
    prototype = "int %s(%s)" % (name, " ".join(proto.group(1).split())) if proto else ""
    sections, errors, seealso, current = [], [], "", None
    for line in lines[1:]:
        stripped = line.strip()
        if stripped in SECTIONS:
            current = (SECTIONS[stripped], [])
            sections.append(current)
        elif stripped.startswith(".seealso:"):
            seealso = stripped[len(".seealso:"):].strip()
        elif stripped.startswith(".N MPI_ERR") or stripped == ".N MPI_SUCCESS":
            errors.append(stripped[3:])
        elif stripped.startswith(".N "):
            current = None      # doctext's shared boilerplate (ThreadSafe, Fortran, ...)
        elif current is not None:
            current[1].append(line.rstrip())
    return name, desc.strip(), prototype, sections, errors, seealso


def render(doc, date):
    name, desc, prototype, sections, errors, seealso = doc
    out = ['.TH %s 3 "%s" "mpich-nbrma" "MPI"' % (name, date), ".SH NAME",
           "%s \\- %s" % (name, escape(desc)), ".SH SYNOPSIS", ".nf",
           "#include <mpi.h>", "", escape(prototype), ".fi"]
    for title, body in sections:
        out.append(".SH " + title)
        if "PARAMETERS" in title:
            for line in body:
                # doctext marks the first, middle and last parameter with + . -
                m = re.match(r"[+.-]\s*(\S+)\s+-\s+(.*)", line.strip())
                if m:
                    out += [".TP", ".B " + m.group(1), escape(m.group(2))]
        else:
            paragraph = []
            for line in body + [""]:
                if line.strip():
                    paragraph.append(escape(line.strip()))
                elif paragraph:
                    out += [".PP"] + paragraph
                    paragraph = []
    out += [".SH ERRORS", ERRORS_TEXT]
    # classes the Notes promise (e.g. MPI_ERR_RMA_SYNC) are listed too
    for title, body in sections:
        for err in re.findall(r"MPI_ERR_[A-Z_]+", " ".join(body)):
            if err not in errors:
                errors.append(err)
    for err in errors:
        out += [".TP", ".B " + err]
    if seealso:
        out += [".SH SEE ALSO", escape(seealso.replace(" ", ", "))]
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    tree, api_dir = sys.argv[1], os.path.join(sys.argv[1], sys.argv[2])
    date = os.environ.get("NBRMA_MAN_DATE", "2026")
    mandir = os.path.join(tree, "man", "man3")
    os.makedirs(mandir, exist_ok=True)
    api_files = sorted(glob.glob(os.path.join(api_dir, "*_api.txt")))
    if not api_files:
        sys.exit("gen-man-pages: no *_api.txt in %s" % api_dir)
    written, missing = 0, []
    for api in api_files:
        # the file name names the folder of the bindings, as in maint/local_python/mpi_api.py
        folder = os.path.basename(api)[:-len("_api.txt")]
        names = set(re.findall(r"^(MPIX?_\w+):", open(api).read(), re.M))
        for path in sorted(glob.glob(os.path.join(tree, "src", "binding", "c", folder, "*.c"))):
            doc = parse_doc(open(path).read())
            if not doc or doc[0] not in names:
                continue
            with open(os.path.join(mandir, doc[0] + ".3"), "w") as f:
                f.write(render(doc, date))
            names.discard(doc[0])
            written += 1
        missing += sorted(names)
    if missing:
        sys.exit("gen-man-pages: no generated binding for %s" % " ".join(missing))
    print("gen-man-pages: %d page(s) in %s" % (written, mandir))


if __name__ == "__main__":
    main()
