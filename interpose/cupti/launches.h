/* The driver's launch functions trlat asks CUPTI to call back on. A CUDA
 * runtime launch calls one of them (with the runtime call's correlation
 * id), so runtime callbacks are not needed; functions a process never calls
 * cost nothing. tests/gpu/cupti_min.c subscribes to the same list, so the
 * benchmark's minimal client pays for what trlat pays. Include after
 * <cupti.h>. */
#ifndef TRLAT_CUPTI_LAUNCHES_H
#define TRLAT_CUPTI_LAUNCHES_H

static const CUpti_CallbackId trlat_cupti_driver_launches[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernelMultiDevice,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync};
#define TRLAT_CUPTI_NLAUNCHES (sizeof trlat_cupti_driver_launches / sizeof trlat_cupti_driver_launches[0])

#endif
