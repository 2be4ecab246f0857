/* A native call site's text, at report time: "lib.so!symbol+0xoff". The
 * symbol comes from the object's full symbol table (.symtab, read from its
 * file: static and hidden functions of an extension or a launcher have
 * names there that dladdr, which sees exported symbols only, misses), else
 * from dladdr; C++ names are demangled when the process has libstdc++'s
 * __cxa_demangle. Without any name: "lib.so+0xoff" from the object's base. */
#include "interpose/real.h"
#include "report/demangle.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct sym {
    char name[256];
    uintptr_t addr; /* run-time address of the symbol's start */
};

/* The function symbol of file (loaded at bias) that contains pc. */
static int symtab_lookup(const char *file, uintptr_t bias, uintptr_t pc, struct sym *out)
{
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    void *map = MAP_FAILED;
    if (fstat(fd, &st) == 0 && (size_t)st.st_size >= sizeof(Elf64_Ehdr))
        map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return -1;
    size_t size = (size_t)st.st_size;
    const unsigned char *base = map;
    const Elf64_Ehdr *eh = map;
    int found = -1;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shoff == 0 ||
        eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > size)
        goto out;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(base + eh->e_shoff);
    uint64_t target = pc - bias, best = 0;
    for (int pass = 0; pass < 2 && found < 0; pass++) { /* .symtab, then .dynsym */
        for (unsigned s = 0; s < eh->e_shnum; s++) {
            if (sh[s].sh_type != (pass ? SHT_DYNSYM : SHT_SYMTAB) || sh[s].sh_link >= eh->e_shnum)
                continue;
            const Elf64_Shdr *strs = &sh[sh[s].sh_link];
            if (sh[s].sh_offset + sh[s].sh_size > size || strs->sh_offset + strs->sh_size > size)
                continue;
            const Elf64_Sym *sym = (const Elf64_Sym *)(base + sh[s].sh_offset);
            size_t n = sh[s].sh_size / sizeof *sym;
            for (size_t i = 0; i < n; i++) {
                if (ELF64_ST_TYPE(sym[i].st_info) != STT_FUNC || !sym[i].st_value || sym[i].st_name >= strs->sh_size)
                    continue;
                uint64_t lo = sym[i].st_value, hi = lo + (sym[i].st_size ? sym[i].st_size : 1);
                if (target < lo || target >= hi || (found >= 0 && lo < best))
                    continue;
                const char *name = (const char *)base + strs->sh_offset + sym[i].st_name;
                snprintf(out->name, sizeof out->name, "%.*s", (int)strnlen(name, strs->sh_size - sym[i].st_name), name);
                out->addr = (uintptr_t)lo + bias;
                best = lo;
                found = 0;
            }
        }
    }
out:
    munmap(map, size);
    return found;
}

/* name, demangled in place when it is a C++ name (truncated to len). */
static void demangle(char *name, size_t len)
{
    char *d = trlat_demangle(name);
    if (d)
        snprintf(name, len, "%s", d);
    free(d);
}

const char *trlat_native_site_text(uint64_t id, char *buf, size_t len)
{
    uintptr_t pc = (uintptr_t)id;
    Dl_info info;
    struct link_map *lm = NULL;
    if (!dladdr1((void *)(pc - 1), &info, (void **)&lm, RTLD_DL_LINKMAP) || !info.dli_fname) {
        snprintf(buf, len, "0x%llx", (unsigned long long)id);
        return buf;
    }
    const char *lib = strrchr(info.dli_fname, '/');
    lib = lib ? lib + 1 : info.dli_fname;
    if (!*lib)
        lib = program_invocation_short_name; /* the main program's entry has no name */
    struct sym s;
    /* pc - 1: a return address may sit just past its function's end. */
    const char *file = info.dli_fname[0] ? info.dli_fname : "/proc/self/exe";
    if (lm && symtab_lookup(file, (uintptr_t)lm->l_addr, pc - 1, &s) == 0) {
        demangle(s.name, sizeof s.name);
        snprintf(buf, len, "%s!%s+0x%lx", lib, s.name, (unsigned long)(pc - s.addr));
    } else if (info.dli_sname && info.dli_saddr) {
        snprintf(s.name, sizeof s.name, "%s", info.dli_sname);
        demangle(s.name, sizeof s.name);
        snprintf(buf, len, "%s!%s+0x%lx", lib, s.name, (unsigned long)(pc - (uintptr_t)info.dli_saddr));
    } else {
        snprintf(buf, len, "%s+0x%lx", lib, (unsigned long)(pc - (uintptr_t)info.dli_fbase));
    }
    return buf;
}
