/* For the attacks that call a C library function without naming it: walk
 * the C library's dynamic symbol table (found through dl_iterate_phdr) for
 * the function's address. No name of the function is in the object, so no
 * check of its symbols can see the call: only the run's system-call filter
 * stands in the way. */
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

struct attack_lookup {
    const char *name;
    void *addr;
};

static int attack_lookup_in(struct dl_phdr_info *info, size_t size, void *data)
{
    struct attack_lookup *want = data;
    (void)size;
    if (!strstr(info->dlpi_name, "libc.so")) return 0;
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    uintptr_t symtab = 0, strtab = 0;
    for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
        if (dyn->d_tag == DT_SYMTAB) symtab = dyn->d_un.d_ptr;
        if (dyn->d_tag == DT_STRTAB) strtab = dyn->d_un.d_ptr;
    }
    if (!symtab || !strtab) return 0;
    if (symtab < info->dlpi_addr) symtab += info->dlpi_addr; /* not relocated in place */
    if (strtab < info->dlpi_addr) strtab += info->dlpi_addr;
    const ElfW(Sym) *sym = (const ElfW(Sym) *)symtab;
    size_t n = (strtab - symtab) / sizeof *sym; /* .dynstr follows .dynsym */
    for (size_t i = 0; i < n; i++)
        if (sym[i].st_value && strcmp((const char *)strtab + sym[i].st_name, want->name) == 0) {
            want->addr = (void *)(info->dlpi_addr + sym[i].st_value);
            return 1;
        }
    return 0;
}

static void *attack_libc_function(const char *name)
{
    struct attack_lookup want = {name, NULL};
    dl_iterate_phdr(attack_lookup_in, &want);
    return want.addr;
}
