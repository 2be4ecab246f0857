/* The current device and stream as torch's own C++ library answers them,
 * without a Python call. Triton reads both on every launch through
 * torch.cuda.current_device() and torch._C._cuda_getCurrentRawStream(dev);
 * those wrap c10::cuda::GetDevice (cudaGetDevice, an error code, no throw)
 * and c10::cuda::getCurrentCUDAStream(dev).stream(), which trlat calls the
 * same way (both exported by libc10_cuda.so, the API torch's C++ extensions
 * use). getCurrentCUDAStream can only throw before torch's stream pools
 * exist or for a device index out of range: it is used only after the
 * Python path gave the same answers on this thread, for the device
 * GetDevice just returned. Any doubt: the Python calls. Which functions
 * Triton's driver calls is checked by identity with torch._C's (guards.c);
 * one patched in by a program that agrees at first and later answers
 * differently would not be noticed. */
#include "fastpath/fp_py.h"
#include "interpose/log.h"
#include "interpose/real.h"

#include <dlfcn.h>

struct c10_stream { /* c10::cuda::CUDAStream: a trivially copyable c10::Stream */
    int8_t device_type, device_index;
    int64_t id;
};

static struct {
    int state; /* 0 unresolved, 1 usable, -1 not */
    int (*get_device)(int8_t *);
    struct c10_stream (*current_stream)(int8_t);
    void *(*raw)(const struct c10_stream *);
} T;

/* Per thread: both paths agreed here once (see the comment above). */
static _Thread_local int agreed __attribute__((tls_model("initial-exec")));

static void resolve(void)
{
    T.state = -1;
    void *h = dlopen("libc10_cuda.so", RTLD_NOLOAD | RTLD_LAZY);
    if (!h)
        return;
    /* glibc's dlsym: trlat's own exported dlsym is for the program */
    T.get_device = (int (*)(int8_t *))trlat_real_dlsym(h, "_ZN3c104cuda9GetDeviceEPa");
    T.current_stream = (struct c10_stream(*)(int8_t))trlat_real_dlsym(h, "_ZN3c104cuda20getCurrentCUDAStreamEa");
    T.raw = (void *(*)(const struct c10_stream *))trlat_real_dlsym(h, "_ZNK3c104cuda10CUDAStream6streamEv");
    dlclose(h); /* RTLD_NOLOAD: torch keeps it loaded */
    if (T.get_device && T.current_stream && T.raw)
        T.state = 1;
}

static int c10_read(int *device, uint64_t *stream)
{
    if (!T.state)
        resolve();
    int8_t d;
    if (T.state < 0 || T.get_device(&d) != 0 || d < 0)
        return -1;
    struct c10_stream s = T.current_stream(d);
    *device = d;
    *stream = (uint64_t)(uintptr_t)T.raw(&s);
    return 0;
}

int fp_torch_device_stream(int usable, int *device, uint64_t *stream)
{
    return usable && agreed ? c10_read(device, stream) : -1;
}

void fp_torch_device_stream_check(int usable, int device, uint64_t stream)
{
    if (agreed || !usable || T.state < 0)
        return;
    int d;
    uint64_t s;
    if (c10_read(&d, &s) == 0 && d == device && s == stream) {
        agreed = 1;
        static int said;
        if (fp_conf.debug && !said++)
            trlat_log("fast path: the current device and stream are read through torch's C++ library (libc10_cuda)");
    } else if (T.state > 0) {
        T.state = -1; /* torch's C++ fails or answers differently: the Python calls from now on */
        if (fp_conf.debug)
            trlat_log("fast path: torch's C++ current device/stream disagree with its Python calls; using those");
    }
}
