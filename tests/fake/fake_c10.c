/* A stand-in for the three functions of torch's libc10_cuda.so that the
 * fast path calls (fastpath/torch/torchcuda.c), under their C++ names, and for
 * the per-thread target device GetDevice answers first (a local TLS symbol
 * under torch's name, found only in this file's .symtab). The stand-in
 * torch (tests/fastpath/torch) loads it when FAKE_C10_LIB names it and
 * keeps its current device and streams in step with its Python ones:
 * set_device makes the device's context current in the fake driver (as
 * cudaSetDevice does) or, deferred, only sets the target device (as torch
 * does for a device without a context). FAKE_C10_SKEW=1 makes the stream
 * answer differ from Python's; FAKE_C10_RUNTIME_DEVICE=1 makes GetDevice
 * answer the device last set instead of the current context's (a runtime
 * whose device is not the context's). */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>

#define EXPORT __attribute__((visibility("default")))

struct c10_stream {
    int8_t device_type, device_index;
    int64_t id;
};

static __thread int8_t target_device __asm__("_ZN3c104cudaL17targetDeviceIndexE") = -1;
static int device;
static uint64_t streams[16];
unsigned long long fake_c10_calls EXPORT;        /* getCurrentCUDAStream: every read */
unsigned long long fake_c10_device_calls EXPORT; /* GetDevice */

/* the fake driver, loaded before (by the stand-in Triton, or trlat) */
static void *driver_sym(const char *name)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_LAZY);
    void *f = h ? dlsym(h, name) : NULL;
    if (h)
        dlclose(h);
    return f;
}

EXPORT void fake_c10_set_device(int d, int deferred)
{
    if (deferred) {
        target_device = (int8_t)d;
        return;
    }
    target_device = -1;
    device = d;
    void (*set)(int) = (void (*)(int))driver_sym("fake_cuda_set_context_device");
    if (set)
        set(d);
}

EXPORT void fake_c10_set_stream(int d, unsigned long long s)
{
    if (d >= 0 && d < 16)
        streams[d] = s;
}

/* cudaGetDevice: the current context's device */
static int runtime_device(void)
{
    int (*ctx_device)(int *) = (int (*)(int *))driver_sym("cuCtxGetDevice");
    const char *e = getenv("FAKE_C10_RUNTIME_DEVICE");
    int d;
    if ((e && *e == '1') || !ctx_device || ctx_device(&d) != 0)
        return device;
    return d;
}

/* c10::cuda::GetDevice(signed char*) -> cudaError_t */
EXPORT int c10_get_device(int8_t *d) __asm__("_ZN3c104cuda9GetDeviceEPa");
int c10_get_device(int8_t *d)
{
    fake_c10_device_calls++;
    *d = target_device >= 0 ? target_device : (int8_t)runtime_device();
    return 0;
}

/* c10::cuda::getCurrentCUDAStream(signed char) -> CUDAStream (by value) */
EXPORT struct c10_stream c10_current_stream(int8_t d) __asm__("_ZN3c104cuda20getCurrentCUDAStreamEa");
struct c10_stream c10_current_stream(int8_t d)
{
    fake_c10_calls++;
    struct c10_stream s = {1, d, (int64_t)streams[d & 15]};
    return s;
}

/* c10::cuda::CUDAStream::stream() const -> cudaStream_t */
EXPORT void *c10_stream_raw(const struct c10_stream *s) __asm__("_ZNK3c104cuda10CUDAStream6streamEv");
void *c10_stream_raw(const struct c10_stream *s)
{
    const char *skew = getenv("FAKE_C10_SKEW");
    return (void *)(uintptr_t)((uint64_t)s->id + (skew && *skew == '1'));
}
