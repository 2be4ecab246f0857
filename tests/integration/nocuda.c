/* A program that never loads libcuda but looks cuLaunchKernel up in the
 * global scope (where only trlat defines it): trlat must not load libcuda,
 * and its symbol must fail cleanly. Prints whether libcuda got mapped. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef int (*lk_t)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **,
                    void **);

static int libcuda_mapped(void)
{
    FILE *m = fopen("/proc/self/maps", "r");
    char line[1024];
    int found = 0;
    while (m && fgets(line, sizeof line, m))
        found |= strstr(line, "libcuda") != NULL;
    if (m)
        fclose(m);
    return found;
}

int main(void)
{
    lk_t lk = (lk_t)dlsym(RTLD_DEFAULT, "cuLaunchKernel");
    int rc = lk ? lk(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL) : -1;
    printf("found=%d rc=%d libcuda_mapped=%d\n", lk != NULL, rc, libcuda_mapped());
    return 0;
}
