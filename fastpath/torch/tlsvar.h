/* A loaded library's unexported thread-local variable (fastpath/torch/tlsvar.c). */
#ifndef TRLAT_TLSVAR_H
#define TRLAT_TLSVAR_H

#include <stddef.h>
#include <stdint.h>

struct trlat_tls_var {
    void *handle;    /* the library's dlopen handle, kept open */
    uint64_t offset; /* the variable's offset in the library's TLS block */
};

/* Finds the TLS symbol `name` of `size` bytes in the .symtab of the file
 * `handle` was loaded from: 0, or -1 (no such symbol, stripped, no TLS). */
int trlat_tls_var_find(void *handle, const char *name, size_t size, struct trlat_tls_var *v);

/* The calling thread's instance, or NULL while the library has not
 * allocated its TLS block on this thread. */
void *trlat_tls_var_addr(const struct trlat_tls_var *v);

#endif
