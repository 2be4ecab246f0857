// C++ exceptions thrown and caught in a process that preloads trlat and
// launches: trlat must not take over the unwinder (libunwind's _Unwind_*).
#include <cstdio>
#include <stdexcept>
#include <string>
#include <cuda.h>
#undef cuLaunchKernel

extern "C" CUresult cuLaunchKernel(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                   CUstream, void **, void **);

static int depth(int n)
{
    if (n == 0)
        throw std::runtime_error("deep " + std::to_string(n));
    return depth(n - 1) + 1;
}

int main()
{
    CUfunction f;
    cuModuleGetFunction(&f, (CUmodule)0x1000, "_Z10cxx_kernelPfi"); // a mangled name, as PyTorch's kernels have
    int caught = 0;
    for (int i = 0; i < 1000; i++) {
        try {
            cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr);
            depth(20);
        } catch (const std::runtime_error &e) {
            caught++;
        }
    }
    std::printf("caught %d\n", caught);
    return caught == 1000 ? 0 : 1;
}
