# Spack package of mpich-nbrma: MPICH 4.0.2 (ch4:ucx) with the nonblocking-RMA
# patch-set. Built with Spack 0.23 (builtin package layout), offline, from a
# local mirror; README.md, "Release tarball and Spack", gives the commands.
import os

from spack.package import *

try:  # Spack >= 1.0 (package API v2): build systems live in spack_repo.builtin
    from spack_repo.builtin.build_systems.autotools import AutotoolsPackage
except ImportError:  # older Spack: `from spack.package import *` provides it
    pass


class MpichNbrma(AutotoolsPackage):
    """MPICH 4.0.2 (CH4, UCX netmod) with the mpich-nbrma patch-set: nonblocking
    RMA synchronization (the MPIX_Win_i* calls), deferred epochs, the reorder
    info keys, memory-handle windows and the Quo Vadis window extensions.

    The release tarball (`make dist`) holds the patches, the component and the
    build scripts; the pristine MPICH 4.0.2 tarball is a resource handed to its
    configure with --with-mpich-src, so the build fetches nothing itself."""

    homepage = "https://github.com/mpich-nbrma/mpich-nbrma"
    # `make dist` writes this file; a local mirror serves it (README.md)
    url = "https://github.com/mpich-nbrma/mpich-nbrma/releases/download/v0.1.0/mpich-nbrma-0.1.0.tar.gz"

    # A tarball made by `make dist` has its own checksum: put it here
    # (sha256sum) or install with --no-checksum, which turns off the check of
    # the MPICH resource too (README.md).
    version("0.1.0")

    # The pristine MPICH the patch-set is written against (the tarball and
    # checksum of Spack's builtin mpich@4.0.2), kept packed: the project's
    # scripts/get-mpich.sh unpacks it.
    resource(
        name="mpich",
        url="https://www.mpich.org/static/downloads/4.0.2/mpich-4.0.2.tar.gz",
        sha256="5a42f1a889d4a2d996c26e48cbf9c595cbf4316c6814f7c181e3320d21dedd42",
        expand=False,
        placement="mpich-tarball",
        when="@0.1.0 mpich-source=mpich.org",
    )
    # The same release as Debian ships it (recompressed: its own checksum, the
    # one scripts/get-mpich.sh checks outside Spack), for machines that have it
    resource(
        name="mpich",
        url="https://deb.debian.org/debian/pool/main/m/mpich/mpich_4.0.2.orig.tar.xz",
        sha256="b27039f964afeb6b8a3e009c56b441cbe368c26d6d6476ad3bb7190996875860",
        expand=False,
        placement="mpich-tarball",
        when="@0.1.0 mpich-source=debian",
    )
    variant("mpich-source", default="mpich.org", values=("mpich.org", "debian"), multi=False,
            description="where the pristine MPICH 4.0.2 tarball comes from")

    variant("fast", default="O2", values=("O0", "O1", "O2", "O3"), multi=False,
            description="MPICH's --enable-fast level")

    provides("mpi@:4.0")

    depends_on("ucx@1.13:")
    depends_on("hwloc@2:")
    # prepare-mpich.sh: patch, MPICH's binding generator (python), its error
    # message extractor (perl), autoreconf -fi of the patched tree
    depends_on("patch", type="build")
    depends_on("python@3:", type="build")
    depends_on("perl", type="build")
    depends_on("m4", type="build")
    depends_on("autoconf@2.69:", type="build")
    depends_on("automake@1.15:", type="build")
    depends_on("libtool@2.4.4:", type="build")
    # only the unit tests of `make check` need GoogleTest
    depends_on("googletest", type="test")

    filter_compiler_wrappers("mpicc", "mpicxx", relative_root="bin")

    @property
    def mpich_tarball(self):
        d = join_path(self.stage.source_path, "mpich-tarball")
        (tarball,) = [join_path(d, f) for f in os.listdir(d)]
        return tarball

    def mpich_configure_line(self):
        spec = self.spec
        # the project's lean line (configure.ac) with Spack's UCX and hwloc
        return " ".join([
            "--with-device=ch4:ucx",
            "--with-ucx={0}".format(spec["ucx"].prefix),
            "--with-hwloc={0}".format(spec["hwloc"].prefix),
            "--with-datatype-engine=dataloop",
            "--disable-static",
            "--disable-fortran",
            "--disable-cxx",
            "--disable-romio",
            "--enable-fast={0}".format(spec.variants["fast"].value),
            "--enable-wrapper-rpath=yes",
        ])

    def configure_args(self):
        return [
            "--with-mpich-src={0}".format(self.mpich_tarball),
            "--with-mpich-configure={0}".format(self.mpich_configure_line()),
            "--with-mpich-cache={0}".format(join_path(self.stage.path, "mpich-cache")),
            "--with-vanilla-prefix={0}".format(join_path(self.stage.path, "vanilla")),
            # MPICH is compiled with $CC/$CXX, Spack's compiler wrappers; ccache
            # would be called in front of them for nothing
            "--disable-ccache",
        ]

    def check(self):
        # the MPI integration tests (the whole `make check` needs root for its
        # two-host namespaces): spack install --test=root mpich-nbrma
        make("check-mpi")

    @property
    def libs(self):
        return find_libraries(["libmpi"], root=self.prefix, shared=True, recursive=True)

    # what an MPI provider offers its dependents, as the builtin mpich does
    def setup_run_environment(self, env):
        env.set("MPICC", join_path(self.prefix.bin, "mpicc"))
        env.set("MPICXX", join_path(self.prefix.bin, "mpicxx"))

    def setup_dependent_build_environment(self, env, dependent_spec):
        self.setup_run_environment(env)
        env.set("MPICH_CC", spack_cc)
        env.set("MPICH_CXX", spack_cxx)

    def setup_dependent_package(self, module, dependent_spec):
        self.spec.mpicc = join_path(self.prefix.bin, "mpicc")
        self.spec.mpicxx = join_path(self.prefix.bin, "mpicxx")
        self.spec.mpicxx_shared_libs = [join_path(self.prefix.lib, "libmpi.so")]

    def test_mpichversion(self):
        """the installed MPICH names the patch-set"""
        out = which(self.prefix.bin.mpichversion)(output=str, error=str)
        assert "mpich-nbrma" in out and "ch4:ucx" in out
