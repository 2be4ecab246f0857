/* A stand-in for the three functions of torch's libc10_cuda.so that the
 * fast path calls (fastpath/torchcuda.c), under their C++ names. The
 * stand-in torch (tests/fastpath/torch) loads it when FAKE_C10_LIB names it
 * and keeps its current device and streams in step with its Python ones;
 * FAKE_C10_SKEW=1 makes the stream answer differ from Python's. */
#include <stdint.h>
#include <stdlib.h>

#define EXPORT __attribute__((visibility("default")))

struct c10_stream {
    int8_t device_type, device_index;
    int64_t id;
};

static int device;
static uint64_t streams[16];
unsigned long long fake_c10_calls EXPORT;

EXPORT void fake_c10_set_device(int d)
{
    device = d;
}

EXPORT void fake_c10_set_stream(int d, unsigned long long s)
{
    if (d >= 0 && d < 16)
        streams[d] = s;
}

/* c10::cuda::GetDevice(signed char*) -> cudaError_t */
EXPORT int c10_get_device(int8_t *d) __asm__("_ZN3c104cuda9GetDeviceEPa");
int c10_get_device(int8_t *d)
{
    fake_c10_calls++;
    *d = (int8_t)device;
    return 0;
}

/* c10::cuda::getCurrentCUDAStream(signed char) -> CUDAStream (by value) */
EXPORT struct c10_stream c10_current_stream(int8_t d) __asm__("_ZN3c104cuda20getCurrentCUDAStreamEa");
struct c10_stream c10_current_stream(int8_t d)
{
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
