/* The current device and stream as torch's own C++ library answers them,
 * without a Python call. Triton reads both on every launch through
 * torch.cuda.current_device() and torch._C._cuda_getCurrentRawStream(dev);
 * those wrap c10::cuda::GetDevice (an error code, no throw) and
 * c10::cuda::getCurrentCUDAStream(dev).stream(), which trlat calls the same
 * way (both exported by libc10_cuda.so, the API torch's C++ extensions
 * use). getCurrentCUDAStream can only throw before torch's stream pools
 * exist or for a device index out of range: it is used only after the
 * Python path gave the same answers on this thread, for the device
 * GetDevice just returned. Any doubt: the Python calls. Which functions
 * Triton's driver calls is checked by identity with torch._C's (guards.c);
 * one patched in by a program that agrees at first and later answers
 * differently would not be noticed.
 *
 * GetDevice itself (torch 2.x) answers the thread's target device when one
 * is set (torch.cuda.set_device on a device with no context yet defers the
 * switch), else cudaGetDevice — the device of the current context when one
 * is current (the runtime uses the context current to the thread). Of its
 * ~45 ns on the GPU machine, cudaGetDevice takes ~42 and the driver's
 * cuCtxGetDevice ~12: trlat reads the target device (a thread_local of
 * libc10_cuda's that only its .symtab names: fastpath/torch/tlsvar.c) and the
 * context's device itself, and checks that composition against GetDevice
 * on each thread's first read and every 256th after; a difference, or no
 * such symbol, leaves GetDevice in charge for good. */
#include "fastpath/fp_py.h"
#include "fastpath/torch/tlsvar.h"
#include "interpose/log.h"
#include "interpose/real.h"

#include <cuda.h>
#include <dlfcn.h>

struct c10_stream { /* c10::cuda::CUDAStream: a trivially copyable c10::Stream */
    int8_t device_type, device_index;
    int64_t id;
};

#define TARGET_SYMBOL "_ZN3c104cudaL17targetDeviceIndexE" /* c10::cuda::targetDeviceIndex, an int8_t */

static struct {
    int state; /* 0 unresolved, 1 usable, -1 not */
    int (*get_device)(int8_t *);
    struct c10_stream (*current_stream)(int8_t);
    void *(*raw)(const struct c10_stream *);
    int ctx_state; /* the composition above: 1 usable, -1 not */
    struct trlat_tls_var target;
    CUresult (*ctx_device)(CUdevice *); /* CUDA_ERROR_INVALID_CONTEXT when none is current */
} T;

/* Per thread: both paths agreed here once (see the comment above). */
static _Thread_local int agreed __attribute__((tls_model("initial-exec")));
/* Per thread: c10's target device, reads since the last check, and tries
 * at its address (dlinfo: not on every launch of a thread where it fails). */
static _Thread_local const volatile int8_t *target __attribute__((tls_model("initial-exec")));
static _Thread_local unsigned reads __attribute__((tls_model("initial-exec")));
static _Thread_local unsigned char target_tries __attribute__((tls_model("initial-exec")));

static void resolve(void)
{
    T.state = T.ctx_state = -1;
    void *h = dlopen("libc10_cuda.so", RTLD_NOLOAD | RTLD_LAZY);
    if (!h)
        return;
    /* glibc's dlsym: trlat's own exported dlsym is for the program */
    T.get_device = (int (*)(int8_t *))trlat_real_dlsym(h, "_ZN3c104cuda9GetDeviceEPa");
    T.current_stream = (struct c10_stream(*)(int8_t))trlat_real_dlsym(h, "_ZN3c104cuda20getCurrentCUDAStreamEa");
    T.raw = (void *(*)(const struct c10_stream *))trlat_real_dlsym(h, "_ZNK3c104cuda10CUDAStream6streamEv");
    if (T.get_device && T.current_stream && T.raw)
        T.state = 1;
    T.ctx_device = (CUresult(*)(CUdevice *))trlat_libcuda_sym("cuCtxGetDevice");
    if (T.state > 0 && T.ctx_device && trlat_tls_var_find(h, TARGET_SYMBOL, 1, &T.target) == 0)
        T.ctx_state = 1; /* the handle stays open with the variable */
    else
        dlclose(h); /* RTLD_NOLOAD: torch keeps it loaded */
    if (fp_conf.debug && T.state > 0 && T.ctx_state < 0)
        trlat_log_debug("fast path: no c10 target-device symbol in libc10_cuda's .symtab: the device is read "
                        "through GetDevice");
}

/* GetDevice's answer from the target device and the current context's
 * device, or -1 where that composition does not answer (GetDevice does). */
static int context_device(int8_t *d, int *ctx)
{
    const volatile int8_t *t = target;
    if (!t) {
        if (target_tries >= 8)
            return -1;
        target_tries++;
        if (!(t = target = trlat_tls_var_addr(&T.target)))
            return -1; /* no TLS block on this thread yet: GetDevice, called instead, makes it */
    }
    if (*t >= 0) {
        *d = *t;
        return 0;
    }
    CUdevice dev = -1;
    if (T.ctx_device(&dev) != CUDA_SUCCESS || dev < 0 || dev > 127)
        return -1;
    *d = (int8_t)dev;
    *ctx = 1; /* cuCtxGetDevice fails where no context is current */
    return 0;
}

static int c10_read(int *device, uint64_t *stream, int *ctx)
{
    if (!T.state)
        resolve();
    if (T.state < 0)
        return -1;
    int8_t d = -1, g;
    int composed = T.ctx_state > 0 && context_device(&d, ctx) == 0;
    if (!composed || (++reads & 255) == 0) {
        if (T.get_device(&g) != 0 || g < 0)
            return -1;
        if (composed && d != g) {
            T.ctx_state = -1;
            *ctx = 0;
            if (fp_conf.debug)
                trlat_log_debug(
                    "fast path: the current context's device differs from torch's GetDevice; using GetDevice");
        }
        d = g;
    }
    struct c10_stream s = T.current_stream(d);
    *device = d;
    *stream = (uint64_t)(uintptr_t)T.raw(&s);
    return 0;
}

int fp_torch_device_stream(int usable, int *device, uint64_t *stream, int *ctx)
{
    *ctx = 0;
    return usable && agreed ? c10_read(device, stream, ctx) : -1;
}

void fp_torch_device_stream_check(int usable, int device, uint64_t stream)
{
    if (agreed || !usable || T.state < 0)
        return;
    int d;
    uint64_t s;
    reads = 255; /* the first read checks the composition against GetDevice */
    int ctx;
    if (c10_read(&d, &s, &ctx) == 0 && d == device && s == stream) {
        agreed = 1;
        static int said;
        if (fp_conf.debug && !said++)
            trlat_log_debug(
                "fast path: the current device and stream are read through torch's C++ library (libc10_cuda%s)",
                T.ctx_state > 0 ? "; the device from its target device and the current context" : "");
    } else if (T.state > 0) {
        T.state = -1; /* torch's C++ fails or answers differently: the Python calls from now on */
        if (fp_conf.debug)
            trlat_log_debug("fast path: torch's C++ current device/stream disagree with its Python calls; using those");
    }
}
