/* NVTX ranges around fake-driver launches, for test_regions.sh:
 * `nvtxprog`. NVTX's own header-only loader (nvtx3, from the CUDA
 * toolkit) finds the tool through NVTX_INJECTION64_PATH, as in any
 * program that pushes ranges. */
#include <cuda.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>

static void launch(CUfunction f, int n)
{
    for (int i = 0; i < n; i++)
        cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
}

int main(void)
{
    CUfunction f;
    if (cuModuleGetFunction(&f, (CUmodule)0x1000, "nvtx_kernel"))
        return 3;
    launch(f, 2); /* before any range */
    int d1 = nvtxRangePushA("outer");
    launch(f, 5);
    int d2 = nvtxRangePushA("inner");
    launch(f, 3);
    nvtxRangePop();
    launch(f, 1); /* outer again */
    nvtxRangePop();
    nvtxEventAttributes_t a = {0};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "pushed_ex";
    nvtxRangePushEx(&a);
    launch(f, 4);
    int d3 = nvtxRangePop();
    launch(f, 6); /* after every range */
    printf("depths %d %d %d\n", d1, d2, d3);
    return 0;
}
