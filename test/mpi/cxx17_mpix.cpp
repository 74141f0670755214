/*
 * mpicxx: the wrapper that patch 0032 installs compiles a C++17 program that
 * uses the patch-set's MPIX calls, and the program runs. RAII owns the
 * window; each rank puts its values (std::array, structured bindings, a
 * lambda) into its slot at every other rank inside MPIX_Win_ilock_all /
 * MPIX_Win_iflush_all / MPIX_Win_iunlock_all, and every target checks what
 * arrived. The header is C and is included as C++ as applications do.
 */
#include "nbrma_test.h"

#include <array>
#include <numeric>
#include <optional>
#include <vector>

#if __cplusplus < 201703L
#error "mpicxx did not compile as C++17"
#endif

namespace {

constexpr int kPerRank = 16;

class Window {
  public:
    Window(MPI_Aint bytes, MPI_Comm comm)
    {
        CHECK_MPI(MPI_Win_allocate(bytes, sizeof(long), MPI_INFO_NULL, comm, &base_, &win_));
    }
    ~Window() { MPI_Win_free(&win_); }
    Window(const Window &) = delete;
    Window &operator=(const Window &) = delete;
    MPI_Win get() const { return win_; }
    long *base() const { return base_; }

  private:
    long *base_ = nullptr;
    MPI_Win win_ = MPI_WIN_NULL;
};

void wait_for(MPI_Request req, const char *what)
{
    wait_or_abort(&req, 60.0, what);
}

long value_of(int origin, int i) { return origin * 1000L + i + 1; }

}  // namespace

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, nprocs = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    {
        Window win(static_cast<MPI_Aint>(nprocs) * kPerRank * sizeof(long), MPI_COMM_WORLD);
        std::fill(win.base(), win.base() + nprocs * kPerRank, 0L);
        MPI_Barrier(MPI_COMM_WORLD);

        std::array<long, kPerRank> mine{};
        for (int i = 0; i < kPerRank; i++)
            mine[i] = value_of(rank, i);
        MPI_Request req;
        CHECK_MPI(MPIX_Win_ilock_all(0, win.get(), &req));
        wait_for(req, "MPIX_Win_ilock_all");
        auto put_to = [&](int target) {
            CHECK_MPI(MPI_Put(mine.data(), kPerRank, MPI_LONG, target,
                              static_cast<MPI_Aint>(rank) * kPerRank, kPerRank, MPI_LONG,
                              win.get()));
        };
        for (int t = 0; t < nprocs; t++)
            if (t != rank)
                put_to(t);
        CHECK_MPI(MPIX_Win_iflush_all(win.get(), &req));
        wait_for(req, "MPIX_Win_iflush_all");
        CHECK_MPI(MPIX_Win_iunlock_all(win.get(), &req));
        wait_for(req, "MPIX_Win_iunlock_all");
        MPI_Barrier(MPI_COMM_WORLD);

        std::optional<int> first_wrong;
        for (int o = 0; o < nprocs && !first_wrong; o++) {
            if (o == rank)
                continue;
            const long *slot = win.base() + o * kPerRank;
            std::vector<long> want(kPerRank);
            std::iota(want.begin(), want.end(), value_of(o, 0));
            if (!std::equal(want.begin(), want.end(), slot))
                first_wrong = o;
        }
        CHECK(!first_wrong, "the values from rank %d did not arrive", first_wrong.value_or(-1));
    }
    return report_and_finalize();
}
