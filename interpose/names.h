/* CUfunction / CUkernel handle -> kernel name, filled from the calls that
 * produce handles (cuModuleGetFunction, cuLibraryGetKernel,
 * cuKernelGetFunction). Lookups are lock-free; inserts (rare, at module
 * load) take a mutex. Names are copied and never freed. */
#ifndef TRLAT_NAMES_H
#define TRLAT_NAMES_H

void trlat_names_add(void *handle, const char *name);
/* The registered name, or NULL. */
const char *trlat_names_get(void *handle);
/* The registered name, else asks the driver (cuFuncGetName, cuKernelGetName)
 * once and remembers its answer; NULL if nobody knows. Not for the launch
 * path: called when a thread first launches a handle. */
const char *trlat_name_of(void *handle);
void trlat_names_reset(void);

#endif
