/* Native call sites (TRLAT_STACKS=1): interpose/native_site.c. */
#ifndef TRLAT_NATIVE_SITE_H
#define TRLAT_NATIVE_SITE_H

#include <stdint.h>

/* The site of a launch whose wrapper returns to ret_addr: the first frame
 * outside libtrlat and libcuda, as an address (0 for none). */
uint64_t trlat_native_site(void *ret_addr);

#endif
