/* A loaded library's thread-local variable that its dynamic symbol table
 * does not list (a C++ `static thread_local` or one in an anonymous
 * namespace), found by name and size in the file's .symtab — unstripped
 * libraries keep it, as debuggers rely on — and located per thread through
 * dlinfo's TLS block, the same block the library's own code reaches through
 * __tls_get_addr. Used once per process (the search) and once per thread
 * (the address), never on a launch. */
#include "fastpath/torch/tlsvar.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Bounds-checked: the file is whatever the loader mapped, stripped or odd. */
static int symtab_find(const unsigned char *f, size_t n, const char *name, size_t size, uint64_t *value)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)f;
    if (n < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff > n ||
        eh->e_shnum > (n - eh->e_shoff) / sizeof(Elf64_Shdr))
        return -1;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(f + eh->e_shoff);
    size_t want = strlen(name) + 1;
    for (unsigned i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_entsize != sizeof(Elf64_Sym) || sh[i].sh_link >= eh->e_shnum)
            continue;
        const Elf64_Shdr *st = &sh[sh[i].sh_link];
        if (sh[i].sh_offset > n || sh[i].sh_size > n - sh[i].sh_offset || st->sh_offset > n ||
            st->sh_size > n - st->sh_offset)
            continue;
        const Elf64_Sym *sym = (const Elf64_Sym *)(f + sh[i].sh_offset);
        const char *str = (const char *)(f + st->sh_offset);
        for (size_t j = 0; j < sh[i].sh_size / sizeof *sym; j++) {
            if (ELF64_ST_TYPE(sym[j].st_info) != STT_TLS || sym[j].st_size != size || sym[j].st_name >= st->sh_size ||
                st->sh_size - sym[j].st_name < want || memcmp(str + sym[j].st_name, name, want) != 0)
                continue;
            *value = sym[j].st_value; /* in a shared object: the offset in its TLS block */
            return 0;
        }
    }
    return -1;
}

int trlat_tls_var_find(void *handle, const char *name, size_t size, struct trlat_tls_var *v)
{
    struct link_map *lm = NULL;
    size_t modid = 0;
    v->handle = NULL;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0 || !lm || !lm->l_name || !*lm->l_name ||
        dlinfo(handle, RTLD_DI_TLS_MODID, &modid) != 0 || !modid)
        return -1;
    int fd = open(lm->l_name, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat sb;
    void *m = fstat(fd, &sb) == 0 && sb.st_size > 0 ? mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0)
                                                    : MAP_FAILED;
    close(fd);
    if (m == MAP_FAILED)
        return -1;
    uint64_t off = 0;
    int r = symtab_find(m, (size_t)sb.st_size, name, size, &off);
    munmap(m, (size_t)sb.st_size);
    if (r)
        return -1;
    v->handle = handle;
    v->offset = off;
    return 0;
}

void *trlat_tls_var_addr(const struct trlat_tls_var *v)
{
    void *block = NULL;
    if (!v->handle || dlinfo(v->handle, RTLD_DI_TLS_DATA, &block) != 0 || !block)
        return NULL; /* not allocated on this thread yet: the library's code has not touched it */
    return (char *)block + v->offset;
}
